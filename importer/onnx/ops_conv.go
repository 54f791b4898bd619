package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Converters of the layout-sensitive compute ops: Conv, Gemm, MatMul,
// pools, ReduceMean, BatchNormalization, and the 1-D lift.

// spatial holds the resolved 2-D window geometry of a conv or pool.
type spatial struct {
	kernel, stride, dil [2]int
	pad                 graph.Padding
	out                 [2]int
}

func (c *nodeCtx) window(in [2]int, kernel [2]int, ceil bool) (*spatial, error) {
	s := &spatial{kernel: kernel, stride: [2]int{1, 1}, dil: [2]int{1, 1}}
	if v, ok := c.ints("strides"); ok {
		if len(v) != 2 {
			return nil, fmt.Errorf("strides %v: want 2 values", v)
		}
		s.stride = [2]int{v[0], v[1]}
	}
	if v, ok := c.ints("dilations"); ok {
		if len(v) != 2 {
			return nil, fmt.Errorf("dilations %v: want 2 values", v)
		}
		s.dil = [2]int{v[0], v[1]}
	}
	for i := 0; i < 2; i++ {
		if s.stride[i] < 1 || s.dil[i] < 1 || kernel[i] < 1 {
			return nil, fmt.Errorf("kernel %v, strides %v, dilations %v must be positive", kernel, s.stride, s.dil)
		}
	}
	// Bounded before any arithmetic: (k-1)*d + 1 and in + pads stay far
	// from overflowing (a hostile dilation times a kernel must not wrap
	// into a plausible window).
	if err := checkRange("kernel", kernel[:], 1, maxElements); err != nil {
		return nil, err
	}
	if err := checkRange("strides", s.stride[:], 1, maxWindow); err != nil {
		return nil, err
	}
	if err := checkRange("dilations", s.dil[:], 1, maxWindow); err != nil {
		return nil, err
	}
	var pb, pe [2]int
	if v, ok := c.ints("pads"); ok {
		if len(v) != 4 {
			return nil, fmt.Errorf("pads %v: want 4 values", v)
		}
		pb, pe = [2]int{v[0], v[1]}, [2]int{v[2], v[3]}
		for _, p := range v {
			if p < 0 {
				return nil, unsupportedf("negative pads %v", v)
			}
		}
		if err := checkRange("pads", v, 0, maxWindow); err != nil {
			return nil, err
		}
	}
	ap := c.str("auto_pad", "NOTSET")
	for i := 0; i < 2; i++ {
		ek := (kernel[i]-1)*s.dil[i] + 1
		switch ap {
		case "NOTSET", "":
		case "VALID":
			pb[i], pe[i] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			o := (in[i] + s.stride[i] - 1) / s.stride[i]
			total := max(0, (o-1)*s.stride[i]+ek-in[i])
			if ap == "SAME_UPPER" {
				pb[i] = total / 2
			} else {
				pb[i] = total - total/2
			}
			pe[i] = total - pb[i]
		default:
			return nil, fmt.Errorf("auto_pad %q", ap)
		}
		span := in[i] + pb[i] + pe[i] - ek
		if span < 0 {
			if ek == kernel[i] {
				return nil, fmt.Errorf("kernel %d larger than padded input %d", kernel[i], in[i]+pb[i]+pe[i])
			}
			return nil, fmt.Errorf("kernel %d (dilated %d) larger than padded input %d", kernel[i], ek, in[i]+pb[i]+pe[i])
		}
		o := span/s.stride[i] + 1
		if ceil && ap != "SAME_UPPER" && ap != "SAME_LOWER" {
			o = (span+s.stride[i]-1)/s.stride[i] + 1
			if (o-1)*s.stride[i] >= in[i]+pb[i] {
				o--
			}
			if extra := (o-1)*s.stride[i] + ek - (in[i] + pb[i] + pe[i]); extra > 0 {
				pe[i] += extra
			}
		}
		s.out[i] = o
	}
	s.pad = graph.Padding{Top: pb[0], Left: pb[1], Bottom: pe[0], Right: pe[1]}
	return s, nil
}

func need4(x *value, what string) error {
	switch len(x.shape) {
	case 4:
		return nil
	case 3:
		return unsupportedf("1-D %s (input rank 3); only 2-D is supported", what)
	case 5:
		return unsupportedf("3-D %s (input rank 5); only 2-D is supported", what)
	}
	return unsupportedf("%s of a rank-%d input", what, len(x.shape))
}

// convGeometry resolves Conv-like attributes for x [N,C,H,W] and w [M,C/G,KH,KW].
func (c *nodeCtx) convGeometry(x, w *value) (*spatial, int, error) {
	if err := need4(x, "convolution"); err != nil {
		return nil, 0, err
	}
	if len(w.shape) != 4 {
		return nil, 0, fmt.Errorf("weights of shape %v", w.shape)
	}
	if k, ok := c.ints("kernel_shape"); ok && (len(k) != 2 || k[0] != w.shape[2] || k[1] != w.shape[3]) {
		return nil, 0, fmt.Errorf("kernel_shape %v disagrees with weights %v", k, w.shape)
	}
	group := int(c.int("group", 1))
	if group < 1 || x.shape[1]%group != 0 || w.shape[0]%group != 0 || x.shape[1]/group != w.shape[1] {
		return nil, 0, fmt.Errorf("group %d does not fit input %v and weights %v", group, x.shape, w.shape)
	}
	s, err := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{w.shape[2], w.shape[3]}, false)
	return s, group, err
}

func convConv(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("Conv on %s", x.dt)
	}
	s, group, err := c.convGeometry(x, w)
	if err != nil {
		return err
	}
	ins := []string{im.get(x, nhwc), im.get(w, nhwc), ""}
	if b := c.in(2); b != nil {
		if len(b.shape) != 1 || b.shape[0] != w.shape[0] {
			return fmt.Errorf("bias of shape %v for %d output channels", b.shape, w.shape[0])
		}
		ins[2] = im.get(b, asIs)
	}
	attrs := &graph.Conv2DAttrs{Stride: s.stride, Dilation: s.dil, Pad: s.pad, Group: group}
	im.foldPad(x, ins, &attrs.Pad)
	c.emit1(graph.Conv2D, ins, attrs, x.dt, []int{x.shape[0], w.shape[0], s.out[0], s.out[1]}, nhwc)
	return nil
}

// foldPad folds a zero Pad of H and W that only this conv reads into the
// conv's own padding: ins[0] becomes the Pad's input and the Pad node goes.
func (im *importer) foldPad(x *value, ins []string, pad *graph.Padding) {
	p := x.prod
	if p == nil || p.Op != graph.Pad || x.pending != 1 || x.primary != nhwc || ins[0] != p.Outputs[0] {
		return
	}
	a, ok := p.Attrs.(*graph.PadAttrs)
	if !ok || a.Mode != "constant" || a.Value != 0 || len(a.Pads) != 8 {
		return
	}
	// NHWC pads: [N, H, W, C] before, then after.
	if a.Pads[0] != 0 || a.Pads[3] != 0 || a.Pads[4] != 0 || a.Pads[7] != 0 {
		return
	}
	pad.Top += a.Pads[1]
	pad.Left += a.Pads[2]
	pad.Bottom += a.Pads[5]
	pad.Right += a.Pads[6]
	ins[0] = p.Inputs[0]
	im.g.Nodes = slices.DeleteFunc(im.g.Nodes, func(n *graph.Node) bool { return n == p })
}

// constMatrixT returns the [N,K] transpose of a constant [K,N] matrix.
func constMatrixT(d *graph.Data) *graph.Data { return transposeData(d, []int{1, 0}) }

func convGemm(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if len(a.shape) != 2 || len(b.shape) != 2 {
		return fmt.Errorf("Gemm of shapes %v and %v: want matrices", a.shape, b.shape)
	}
	if a.dt != graph.Float32 || b.dt != graph.Float32 {
		return unsupportedf("Gemm on %s", a.dt)
	}
	alpha, beta := c.float("alpha", 1), c.float("beta", 1)
	if !finite(alpha) || !finite(beta) {
		return fmt.Errorf("Gemm alpha=%v, beta=%v: both must be finite", alpha, beta)
	}
	transA, transB := c.int("transA", 0) != 0, c.int("transB", 0) != 0
	m, k := a.shape[0], a.shape[1]
	if transA {
		m, k = k, m
	}
	kb, n := b.shape[0], b.shape[1]
	if transB {
		kb, n = n, kb
	}
	if kb != k {
		return fmt.Errorf("Gemm inner dimensions %d and %d differ", k, kb)
	}
	cv := c.in(2)
	if cv != nil && cv.dt != graph.Float32 {
		return fmt.Errorf("Gemm's C is %s: ONNX wants the type of A and B (float32)", cv.dt)
	}
	if cv != nil {
		if _, err := broadcastShapes([]int{m, n}, cv.shape); err != nil || len(cv.shape) > 2 {
			return fmt.Errorf("C of shape %v does not broadcast to [%d,%d]", cv.shape, m, n)
		}
	}
	out := []int{m, n}
	if b.c != nil {
		w := b.c
		if !transB {
			w = constMatrixT(w)
		}
		if alpha != 1 {
			w = w.Clone()
			for i := range w.F {
				w.F[i] *= alpha
			}
		}
		ain := im.get(a, asIs)
		if transA {
			ain = im.transpose(ain, []int{1, 0}, a.name+"_T")
		}
		ins := []string{ain, im.g.AddConst(im.g.UniqueName(b.name+"_fc"), w).Name, ""}
		biasFolded := false
		if cv != nil && cv.c != nil && beta != 0 && (graph.NumElements(cv.shape) == n || graph.NumElements(cv.shape) == 1) && (len(cv.shape) < 2 || cv.shape[0] == 1) {
			bias := graph.NewData(graph.Float32, []int{n})
			for j := 0; j < n; j++ {
				bias.F[j] = beta * cv.c.F[min(j, cv.c.Len()-1)]
			}
			ins[2] = im.g.AddConst(im.g.UniqueName(cv.name+"_bias"), bias).Name
			biasFolded = true
		}
		if cv == nil || beta == 0 || biasFolded {
			c.emit1(graph.FullyConnected, ins, &graph.FullyConnectedAttrs{}, graph.Float32, out, asIs)
			return nil
		}
		t := im.newTensor(c.out(0)+"_ab", graph.Float32, out)
		im.emit(graph.FullyConnected, ins, &graph.FullyConnectedAttrs{}, t)
		return c.gemmAddC(t.Name, cv, beta, out)
	}
	t := im.newTensor(c.out(0)+"_ab", graph.Float32, out)
	im.emit(graph.BatchMatMul, []string{im.get(a, asIs), im.get(b, asIs)}, &graph.BatchMatMulAttrs{AdjX: transA, AdjY: transB}, t)
	cur := t.Name
	if alpha != 1 {
		if cv == nil || beta == 0 {
			c.emit1(graph.Mul, []string{cur, im.g.AddConst(im.g.UniqueName(c.out(0)+"_alpha"), scalarF(alpha)).Name}, &graph.BinaryAttrs{}, graph.Float32, out, asIs)
			return nil
		}
		s := im.newTensor(c.out(0)+"_alpha_ab", graph.Float32, out)
		im.emit(graph.Mul, []string{cur, im.g.AddConst(im.g.UniqueName(c.out(0)+"_alpha"), scalarF(alpha)).Name}, &graph.BinaryAttrs{}, s)
		cur = s.Name
	}
	if cv == nil || beta == 0 {
		c.emit1(graph.Reshape, []string{cur}, nil, graph.Float32, out, asIs)
		return nil
	}
	return c.gemmAddC(cur, cv, beta, out)
}

// gemmAddC adds beta*C to the Gemm product held in tensor ab.
func (c *nodeCtx) gemmAddC(ab string, cv *value, beta float32, out []int) error {
	im := c.im
	var cn string
	switch {
	case cv.c != nil:
		d := cv.c.Clone()
		for i := range d.F {
			d.F[i] *= beta
		}
		cn = im.g.AddConst(im.g.UniqueName(cv.name+"_beta"), d).Name
	case beta == 1:
		cn = im.get(cv, asIs)
	default:
		t := im.newTensor(cv.name+"_beta", graph.Float32, cv.shape)
		im.emit(graph.Mul, []string{im.get(cv, asIs), im.g.AddConst(im.g.UniqueName(cv.name+"_betac"), scalarF(beta)).Name}, &graph.BinaryAttrs{}, t)
		cn = t.Name
	}
	c.emit1(graph.Add, []string{ab, cn}, &graph.BinaryAttrs{}, graph.Float32, out, asIs)
	return nil
}

// matmulShape is numpy matmul's output shape for ranks >= 2.
func matmulShape(a, b []int) ([]int, error) {
	if len(a) < 2 || len(b) < 2 {
		return nil, unsupportedf("MatMul of a 1-D operand (shapes %v, %v)", a, b)
	}
	if a[len(a)-1] != b[len(b)-2] {
		return nil, fmt.Errorf("MatMul of shapes %v and %v: inner dimensions differ", a, b)
	}
	batch, err := broadcastShapes(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, err
	}
	return append(batch, a[len(a)-2], b[len(b)-1]), nil
}

func convMatMul(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if a.dt != graph.Float32 || b.dt != graph.Float32 {
		return unsupportedf("MatMul on %s", a.dt)
	}
	// numpy's 1-D operands (onnx2c's MatMul tests; exporters write them
	// for a vector times a matrix): a vector a is the row [1, K], a vector b
	// the column [K, 1], and the axis each adds is dropped from the result.
	ash, bsh := a.shape, b.shape
	if len(ash) == 1 {
		ash = []int{1, ash[0]}
	}
	if len(bsh) == 1 {
		bsh = []int{bsh[0], 1}
	}
	full, err := matmulShape(ash, bsh)
	if err != nil {
		return err
	}
	out := slices.Clone(full)
	if len(b.shape) == 1 {
		out = slices.Delete(out, len(out)-1, len(out))
	}
	if len(a.shape) == 1 {
		out = slices.Delete(out, len(full)-2, len(full)-1)
	}
	ain := im.get(a, asIs)
	if len(a.shape) == 1 {
		ain = im.reshapeTo(ain, ash, c.out(0)+"_row")
	}
	op, ins, attrs := graph.BatchMatMul, []string(nil), any(&graph.BatchMatMulAttrs{})
	if b.c != nil && len(bsh) == 2 {
		bd := b.c
		if len(b.shape) == 1 {
			bd = b.c.Clone()
			bd.Shape = bsh
		}
		w := im.g.AddConst(im.g.UniqueName(b.name+"_fc"), constMatrixT(bd))
		op, ins, attrs = graph.FullyConnected, []string{ain, w.Name, ""}, &graph.FullyConnectedAttrs{KeepDims: true}
	} else {
		bin := im.get(b, asIs)
		if len(b.shape) == 1 {
			bin = im.reshapeTo(bin, bsh, c.out(0)+"_col")
		}
		ins = []string{ain, bin}
	}
	if slices.Equal(out, full) {
		c.emit1(op, ins, attrs, graph.Float32, out, asIs)
		return nil
	}
	t := c.tmp(op, ins, attrs, graph.Float32, full, asIs, "mm")
	c.emit1(graph.Reshape, []string{t.name}, nil, graph.Float32, out, asIs)
	return nil
}

func convPool(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if err := need4(x, "pooling"); err != nil {
			return err
		}
		k, ok := c.ints("kernel_shape")
		if !ok || len(k) != 2 {
			return fmt.Errorf("kernel_shape %v: want 2 values", k)
		}
		ceil := c.int("ceil_mode", 0) != 0
		s, err := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{k[0], k[1]}, ceil)
		if err != nil {
			return err
		}
		attrs := &graph.PoolAttrs{Kernel: s.kernel, Stride: s.stride, Dilation: s.dil, Pad: s.pad}
		if x.dt != graph.Float32 && op == graph.AvgPool2D {
			return unsupportedf("AveragePool on %s", x.dt)
		}
		in := im.get(x, nhwc)
		if op == graph.AvgPool2D {
			attrs.CountIncludePad = c.int("count_include_pad", 0) != 0
			if ceil && attrs.CountIncludePad {
				// ceil_mode's last window may run past the end padding;
				// ONNX (as PyTorch) divides it by its taps inside the
				// padded input only. So the pads the model gave become
				// zeros of a Pad, and the pool counts only the taps on
				// that padded input: its zeros count, the overhang does not.
				given, err := c.window([2]int{x.shape[2], x.shape[3]}, [2]int{k[0], k[1]}, false)
				if err != nil {
					return err
				}
				if given.pad != s.pad {
					gp := given.pad
					padded := c.tmp(graph.Pad, []string{in}, &graph.PadAttrs{Pads: []int{0, gp.Top, gp.Left, 0, 0, gp.Bottom, gp.Right, 0}, Mode: "constant"},
						x.dt, []int{x.shape[0], x.shape[1], x.shape[2] + gp.Top + gp.Bottom, x.shape[3] + gp.Left + gp.Right}, nhwc, "padded")
					in = padded.name
					attrs.Pad = graph.Padding{Bottom: s.pad.Bottom - gp.Bottom, Right: s.pad.Right - gp.Right}
					attrs.CountIncludePad = false
				}
			}
		}
		out := []int{x.shape[0], x.shape[1], s.out[0], s.out[1]}
		if op != graph.MaxPool2D || c.out(1) == "" {
			c.emit1(op, []string{in}, attrs, x.dt, out, nhwc)
			return nil
		}
		return maxPoolIndices(im, c, x, s, out)
	}
}

// maxPoolIndices maps a MaxPool with its second output, Indices: the
// values, if used, as a MaxPool2D, and the indices as a MaxPoolIndices of
// the same window (int64, NCHW flat indices in the order storage_order
// names).
func maxPoolIndices(im *importer, c *nodeCtx, x *value, s *spatial, out []int) error {
	if x.dt != graph.Float32 {
		return unsupportedf("MaxPool Indices output on %s (graph.MaxPoolIndices is float32 only: an int8 model's indices would need a second, integer kernel)", x.dt)
	}
	order := c.int("storage_order", 0)
	if order != 0 && order != 1 {
		return fmt.Errorf("storage_order %d: want 0 (row major) or 1 (column major)", order)
	}
	in := im.get(x, nhwc)
	if c.out(0) != "" {
		attrs := &graph.PoolAttrs{Kernel: s.kernel, Stride: s.stride, Dilation: s.dil, Pad: s.pad}
		c.emit1(graph.MaxPool2D, []string{in}, attrs, x.dt, out, nhwc)
	}
	a := &graph.MaxPoolIndicesAttrs{Kernel: s.kernel, Stride: s.stride, Dilation: s.dil, Pad: s.pad, ColumnMajor: order == 1}
	t, v := c.newOut(1, graph.Int64, out, nhwc)
	v.prod = im.emit(graph.MaxPoolIndices, []string{in}, a, t)
	return nil
}

func convGlobalPool(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if err := need4(x, "global pooling"); err != nil {
			return err
		}
		var attrs any = &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true}
		if op == graph.MaxPool2D {
			attrs = &graph.PoolAttrs{Kernel: [2]int{x.shape[2], x.shape[3]}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}
		}
		c.emit1(op, []string{im.get(x, nhwc)}, attrs, x.dt, []int{x.shape[0], x.shape[1], 1, 1}, nhwc)
		return nil
	}
}

var convReduceMean = convReduce("")

// convReduce maps ReduceMean (kind "") to Mean and the other ReduceX to
// Reduce of that kind; axes come from the attribute, or from input 1 where
// the op's opset moved them there (ReduceSum 13, the others 18).
func convReduce(kind graph.ReduceKind) converter {
	return func(im *importer, c *nodeCtx) error { return reduceOp(im, c, kind) }
}

func reduceOp(im *importer, c *nodeCtx, kind graph.ReduceKind) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	axes, ok := c.ints("axes")
	if im.opset >= 18 || kind == graph.ReduceSum && im.opset >= 13 {
		d, err := c.constIn(1, "Reduce axes")
		if err != nil {
			return err
		}
		ok = d != nil && d.Len() > 0
		if ok {
			axes = d.Ints()
		}
	}
	if !ok || len(axes) == 0 {
		if c.int("noop_with_empty_axes", 0) != 0 {
			// Nothing reduced, but a reduction's function of each element
			// still applies (ONNX's clarified spec, and onnxruntime since:
			// x² for SumSquare, |x| for L1 and L2, log x for LogSum; it
			// returned x, a review finding).
			l := actLayout(x)
			in := im.get(x, l)
			switch {
			case kind == graph.ReduceSumSquare:
				c.emit1(graph.Mul, []string{in, in}, &graph.BinaryAttrs{}, x.dt, x.shape, l)
			case (kind == graph.ReduceL1 || kind == graph.ReduceL2) && x.dt == graph.Float32:
				c.emit1(graph.Math, []string{in}, &graph.MathAttrs{Fn: graph.MathAbs}, x.dt, x.shape, l)
			case kind == graph.ReduceLogSum && x.dt == graph.Float32:
				c.emit1(graph.Math, []string{in}, &graph.MathAttrs{Fn: graph.MathLog}, x.dt, x.shape, l)
			case kind == graph.ReduceL1 || kind == graph.ReduceL2 || kind == graph.ReduceLogSum:
				return unsupportedf("Reduce%s of %s with noop_with_empty_axes", kind, x.dt)
			default:
				c.alias(0, x)
			}
			return nil
		}
		axes = nil
		for i := 0; i < r; i++ {
			axes = append(axes, i)
		}
	}
	red := make([]bool, r)
	for _, a := range axes {
		n, err := normAxis(a, r)
		if err != nil {
			return err
		}
		red[n] = true
	}
	keep := c.int("keepdims", 1) != 0
	var out []int
	for i, d := range x.shape {
		if red[i] {
			if keep {
				out = append(out, 1)
			}
		} else {
			out = append(out, d)
		}
	}
	l := actLayout(x)
	outL := l
	if l == nhwc && !keep {
		// The kept NHWC dims must stay in ONNX order for the output to be as-is.
		last := -1
		for _, p := range toNHWC {
			if red[p] {
				continue
			}
			if p < last {
				l = asIs
			}
			last = p
		}
		outL = asIs
	}
	var gaxes []int
	for i := 0; i < r; i++ {
		if red[i] {
			if l == nhwc {
				gaxes = append(gaxes, nhwcAxis(i))
			} else {
				gaxes = append(gaxes, i)
			}
		}
	}
	slices.Sort(gaxes)
	if x.dt != graph.Float32 {
		return unsupportedf("Reduce%s on %s", map[graph.ReduceKind]string{"": "Mean"}[kind]+string(kind), x.dt)
	}
	if kind == "" {
		c.emit1(graph.Mean, []string{im.get(x, l)}, &graph.MeanAttrs{Axes: gaxes, KeepDims: keep}, x.dt, out, outL)
		return nil
	}
	c.emit1(graph.Reduce, []string{im.get(x, l)}, &graph.ReduceAttrs{Kind: kind, Axes: gaxes, KeepDims: keep}, x.dt, out, outL)
	return nil
}

func init() {
	for _, k := range []graph.ReduceKind{graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd,
		graph.ReduceL1, graph.ReduceL2, graph.ReduceLogSum, graph.ReduceLogSumExp, graph.ReduceSumSquare} {
		converters["Reduce"+string(k)] = convReduce(k)
		paramSlots["Reduce"+string(k)] = []int{1}
	}
}

func convBatchNorm(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if len(c.n.Output) > 1 || c.int("training_mode", 0) != 0 {
		return unsupportedf("BatchNormalization in training mode")
	}
	var p [4]*graph.Data
	for i := range p {
		d, err := c.constIn(i+1, "BatchNormalization parameter")
		if err != nil {
			return err
		}
		if d == nil || d.DType != graph.Float32 {
			return fmt.Errorf("parameter %d is missing or not float", i+1)
		}
		p[i] = d
	}
	if len(x.shape) < 2 || x.dt != graph.Float32 {
		return fmt.Errorf("input of shape %v", x.shape)
	}
	ch := x.shape[1]
	for i, d := range p {
		if d.Len() != ch {
			return fmt.Errorf("parameter %d has %d values for %d channels", i+1, d.Len(), ch)
		}
	}
	eps := float64(c.float("epsilon", 1e-5))
	scale, shift := make([]float32, ch), make([]float32, ch)
	for i := 0; i < ch; i++ {
		s := float64(p[0].F[i]) / math.Sqrt(float64(p[3].F[i])+eps)
		scale[i] = float32(s)
		shift[i] = float32(float64(p[1].F[i]) - float64(p[2].F[i])*s)
	}
	if im.foldIntoProducer(x, scale, shift) {
		c.alias(0, x)
		return nil
	}
	l := actLayout(x)
	if len(x.shape) != 4 {
		l = asIs
	}
	cshape := []int{ch}
	if l == asIs {
		for i := 2; i < len(x.shape); i++ {
			cshape = append(cshape, 1)
		}
	}
	sc := im.g.AddConst(im.g.UniqueName(c.out(0)+"_bn_scale"), &graph.Data{DType: graph.Float32, Shape: cshape, F: scale})
	sh := im.g.AddConst(im.g.UniqueName(c.out(0)+"_bn_shift"), &graph.Data{DType: graph.Float32, Shape: cshape, F: shift})
	ts := x.shape
	if l == nhwc {
		ts = permuteShape(x.shape, toNHWC)
	}
	mid := im.newTensor(c.out(0)+"_bn_mul", graph.Float32, ts)
	im.emit(graph.Mul, []string{im.get(x, l), sc.Name}, &graph.BinaryAttrs{}, mid)
	c.emit1(graph.Add, []string{mid.Name, sh.Name}, &graph.BinaryAttrs{}, graph.Float32, x.shape, l)
	return nil
}

// foldIntoProducer folds y = x*scale[c] + shift[c] into the Conv2D or
// FullyConnected that produced x, when x has no other reader and the
// producer's weights are constant.
func (im *importer) foldIntoProducer(x *value, scale, shift []float32) bool {
	n := x.prod
	if n == nil || x.pending != 1 || (n.Op != graph.Conv2D && n.Op != graph.FullyConnected) {
		return false
	}
	if n.Op == graph.Conv2D && x.primary != nhwc {
		return false
	}
	if n.Op == graph.FullyConnected && len(x.shape) != 2 {
		return false
	}
	w := im.g.Tensors[n.Inputs[1]]
	if w.Data == nil || w.DType != graph.Float32 || w.Quant != nil || w.Shape[0] != len(scale) {
		return false
	}
	var b *graph.Tensor
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b = im.g.Tensors[n.Inputs[2]]
		if b.Data == nil {
			return false
		}
	}
	wd := w.Data.Clone()
	per := wd.Len() / len(scale)
	for o := range scale {
		for i := 0; i < per; i++ {
			wd.F[o*per+i] *= scale[o]
		}
	}
	bd := graph.NewData(graph.Float32, []int{len(scale)})
	for o := range scale {
		var b0 float32
		if b != nil {
			b0 = b.Data.F[o]
		}
		bd.F[o] = b0*scale[o] + shift[o]
	}
	for len(n.Inputs) < 3 {
		n.Inputs = append(n.Inputs, "")
	}
	n.Inputs[1] = im.g.AddConst(im.g.UniqueName(w.Name+"_bn"), wd).Name
	n.Inputs[2] = im.g.AddConst(im.g.UniqueName(n.Name+"_bias_bn"), bd).Name
	return true
}

// lift1D runs a 2-D conv or pool converter on a 1-D (rank-3) node by
// viewing [N,C,L] as [N,C,1,L] and the result back as rank 3.
func lift1D(conv converter, weight int) converter {
	return func(im *importer, c *nodeCtx) error {
		x := c.in(0)
		if x == nil || len(x.shape) != 3 || c.out(0) == "" {
			return conv(im, c)
		}
		n := *c.n
		n.Input = slices.Clone(c.n.Input)
		n.Output = []string{c.out(0) + "_2d"}
		if c.out(1) != "" { // MaxPool's Indices: H = 1 leaves them the 1-D ones
			n.Output = append(n.Output, c.out(1)+"_2d")
		}
		n.Attribute = nil
		for _, a := range c.n.Attribute {
			b := *a
			switch a.Name {
			case "kernel_shape", "strides", "dilations":
				if len(a.Ints) != 1 {
					return fmt.Errorf("%s %v for a 1-D input", a.Name, a.Ints)
				}
				b.Ints = []int64{1, a.Ints[0]}
			case "pads":
				if len(a.Ints) != 2 {
					return fmt.Errorf("pads %v for a 1-D input", a.Ints)
				}
				b.Ints = []int64{0, a.Ints[0], 0, a.Ints[1]}
			case "output_padding":
				if len(a.Ints) != 1 {
					return fmt.Errorf("%s %v for a 1-D input", a.Name, a.Ints)
				}
				b.Ints = []int64{0, a.Ints[0]}
			case "output_shape":
				if len(a.Ints) != 1 {
					return fmt.Errorf("%s %v for a 1-D input", a.Name, a.Ints)
				}
				b.Ints = []int64{1, a.Ints[0]}
			}
			n.Attribute = append(n.Attribute, &b)
		}
		lift := func(i int) {
			v := c.in(i)
			if v == nil || len(v.shape) != 3 {
				return
			}
			s := []int{v.shape[0], v.shape[1], 1, v.shape[2]}
			name := im.g.UniqueName(v.name + "_2d")
			if v.c == nil && v.tensors[nhwc] != "" {
				// An earlier 1-D conv's (or activation's) NHWC tensor is
				// this view's NHWC tensor already.
				nv := &value{name: name, dt: v.dt, shape: s, primary: nhwc, prod: v.prod}
				nv.tensors[nhwc] = v.tensors[nhwc]
				im.vals[name] = nv
				n.Input[i] = name
				return
			}
			if v.c != nil {
				im.vals[name] = &value{name: name, dt: v.dt, shape: s, c: reshapeData(v.c, s)}
			} else {
				t := im.newTensor(name, v.dt, s)
				im.emit(graph.Reshape, []string{im.get(v, asIs)}, nil, t)
				nv := &value{name: name, dt: v.dt, shape: s}
				nv.tensors[asIs] = t.Name
				im.vals[name] = nv
			}
			n.Input[i] = name
		}
		lift(0)
		if weight > 0 {
			lift(weight)
		}
		if err := convertCtx(im, &n, conv); err != nil {
			return err
		}
		if len(n.Output) > 1 {
			ind := im.vals[n.Output[1]]
			t, v := c.newOut(1, ind.dt, []int{ind.shape[0], ind.shape[1], ind.shape[3]}, asIs)
			v.prod = im.emit(graph.Reshape, []string{im.get(ind, asIs)}, nil, t)
		}
		y := im.vals[n.Output[0]]
		out := []int{y.shape[0], y.shape[1], y.shape[3]}
		if y.primary == nhwc && y.tensors[nhwc] != "" && y.c == nil && c.out(0) != "" {
			// The 1-D output keeps the 2-D NHWC tensor [N,1,L,C]: batch
			// norms, biases and activations fold or fuse into the conv,
			// and the next 1-D op reads it as it is.
			v := &value{name: c.out(0), dt: y.dt, shape: out, primary: nhwc, prod: y.prod}
			v.tensors[nhwc] = y.tensors[nhwc]
			v.pending = im.uses[c.out(0)]
			im.vals[c.out(0)] = v
			return nil
		}
		t, v := c.newOut(0, y.dt, out, asIs)
		src := im.get(y, asIs)
		t.Quant = im.g.Tensors[src].Quant
		v.prod = im.emit(graph.Reshape, []string{src}, nil, t)
		return nil
	}
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
