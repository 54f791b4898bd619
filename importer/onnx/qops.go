package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// qparams are ONNX quantization parameters: a scale and zero point, per
// tensor or along an ONNX axis.
type qparams struct {
	scale []float32
	zp    []int32
	zdt   graph.DType // zero point dtype (Invalid when absent)
	axis  int
}

// quant returns the graph quantization for layout l of a value of rank r.
func (p *qparams) quant(l layout, r int) *graph.Quant {
	q := &graph.Quant{Scale: slices.Clone(p.scale), ZeroPoint: slices.Clone(p.zp)}
	if len(q.ZeroPoint) == 0 {
		q.ZeroPoint = make([]int32, min(len(q.Scale), 1))
		if len(q.Scale) > 1 {
			q.ZeroPoint = make([]int32, len(q.Scale))
		}
	}
	if len(p.scale) > 1 {
		q.Axis = p.axis
		if l == nhwc && r == 4 {
			q.Axis = nhwcAxis(p.axis)
		}
	}
	return q
}

// qparamsAt reads the scale and zero point inputs si, zi of the node for a
// value of shape shape, with the per-axis axis attribute.
func (c *nodeCtx) qparamsAt(si, zi int, shape []int, axisAttr bool, defAxis int) (*qparams, error) {
	s, err := c.constIn(si, "scale")
	if err != nil {
		return nil, err
	}
	if s == nil || s.DType != graph.Float32 || s.Len() == 0 {
		return nil, fmt.Errorf("input %d: scale missing or not float", si)
	}
	z, err := c.constIn(zi, "zero point")
	if err != nil {
		return nil, err
	}
	p := &qparams{scale: slices.Clone(s.F)}
	for _, v := range p.scale {
		if !(v > 0) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("scale %v is not positive and finite", v)
		}
	}
	if z != nil {
		if !z.DType.IsInt() {
			return nil, unsupportedf("zero point of type %s", z.DType)
		}
		if z.Len() != s.Len() {
			return nil, fmt.Errorf("%d scales and %d zero points", s.Len(), z.Len())
		}
		p.zdt = z.DType
		for _, v := range z.I {
			p.zp = append(p.zp, int32(v))
		}
	}
	if len(p.scale) > 1 {
		if c.int("block_size", 0) != 0 {
			return nil, unsupportedf("blocked quantization")
		}
		axis := defAxis
		if axisAttr {
			axis = int(c.int("axis", 1))
		}
		if axis, err = normAxis(axis, len(shape)); err != nil {
			return nil, err
		}
		if shape[axis] != len(p.scale) {
			return nil, fmt.Errorf("%d scales for axis %d of shape %v", len(p.scale), axis, shape)
		}
		p.axis = axis
	}
	return p, nil
}

func quantizable(dt graph.DType) bool {
	return dt == graph.Int8 || dt == graph.UInt8 || dt == graph.Int16
}

func convQuantize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("QuantizeLinear of %s", x.dt)
	}
	p, err := c.qparamsAt(1, 2, x.shape, true, 1)
	if err != nil {
		return err
	}
	dt := p.zdt
	if od := int32(c.int("output_dtype", 0)); od != 0 {
		odt, ok := graphDType(od)
		switch {
		case !ok:
			return unsupportedf("QuantizeLinear to %s", DTypeName(od))
		case dt != graph.Invalid && odt != dt:
			// QuantizeLinear-21: output_dtype "must match" the zero
			// point's type (review finding: int8 was written for uint8).
			return fmt.Errorf("output_dtype %s, but the zero point is %s: ONNX wants them equal", odt, dt)
		}
		dt = odt
	}
	if dt == graph.Invalid {
		dt = graph.UInt8
	}
	if !quantizable(dt) {
		return unsupportedf("QuantizeLinear to %s", dt)
	}
	if x.c != nil {
		out := graph.NewData(dt, x.shape)
		lo, hi := dt.Range()
		q := p.quant(asIs, len(x.shape))
		str := graph.Strides(x.shape)
		for i, f := range x.c.F {
			ch := 0
			if len(p.scale) > 1 {
				ch = i / str[p.axis] % x.shape[p.axis]
			}
			s, z := q.At(ch)
			v := math.RoundToEven(float64(f)/float64(s)) + float64(z)
			out.I[i] = int64(math.Max(float64(lo), math.Min(float64(hi), v)))
		}
		return c.setConst(0, out)
	}
	l := actLayout(x)
	t, v := c.newOut(0, dt, x.shape, l)
	t.Quant = p.quant(l, len(x.shape))
	v.prod = im.emit(graph.Quantize, []string{im.get(x, l)}, &graph.QuantizeAttrs{RoundHalfEven: true}, t)
	return nil
}

func convDequantize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if !quantizable(x.dt) && x.dt != graph.Int32 {
		return unsupportedf("DequantizeLinear of %s", x.dt)
	}
	p, err := c.qparamsAt(1, 2, x.shape, true, 1)
	if err != nil {
		return err
	}
	if p.zdt != graph.Invalid && p.zdt != x.dt {
		return fmt.Errorf("zero point is %s, input is %s", p.zdt, x.dt)
	}
	if x.dt == graph.Int32 && slices.ContainsFunc(p.zp, func(z int32) bool { return z != 0 }) {
		// DequantizeLinear: "zero-point is usually not used in the case
		// of int32 … it must be 0" (review finding: a zero point of 3 was
		// taken).
		return fmt.Errorf("an int32 input's zero point must be 0")
	}
	name := c.out(0)
	if name == "" {
		return nil
	}
	r := len(x.shape)
	make1 := func(l layout) string {
		src, q := im.get(x, l), p.quant(l, r)
		if x.c == nil && x.dt == graph.Int32 {
			// An integer accumulator (ConvInteger, MatMulInteger) is raw:
			// its producer writes it unscaled. The scale goes on a copy,
			// not on the producer's output, which would make the kernel
			// requantize to it (review finding: DequantizeLinear's scale
			// was cancelled, 5 where 2.5 was due).
			src = im.quantCopy(src, q)
		} else {
			src = im.withQuant(src, q)
		}
		shape := x.shape
		base := name
		if l == nhwc {
			shape, base = permuteShape(shape, toNHWC), name+"_nhwc"
		}
		t := im.newTensor(base, graph.Float32, shape)
		im.emit(graph.Dequantize, []string{src}, nil, t)
		return t.Name
	}
	if x.c != nil {
		// A dequantized constant (QDQ weights, biases) is made in whichever
		// layout its readers want, so weights are never transposed at run time.
		im.vals[name] = &value{name: name, dt: graph.Float32, shape: slices.Clone(x.shape), lazy: make1}
		return nil
	}
	l := actLayout(x)
	v := &value{name: name, dt: graph.Float32, shape: slices.Clone(x.shape), primary: l}
	v.tensors[l] = make1(l)
	im.vals[name] = v
	return nil
}

// intWeights returns the graph tensor of an integer weight input in layout
// l with quantization p (per output channel along axis 0 of the graph tensor).
func (im *importer) intWeights(w *value, l layout, p *graph.Quant) string {
	return im.withQuant(im.get(w, l), p)
}

func outQuantType(p *qparams) graph.DType {
	if p.zdt == graph.Invalid {
		return graph.UInt8
	}
	return p.zdt
}

func convQLinearConv(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(3)
	if err != nil {
		return err
	}
	if !quantizable(x.dt) || !quantizable(w.dt) {
		return unsupportedf("QLinearConv of %s and %s", x.dt, w.dt)
	}
	s, group, err := c.convGeometry(x, w)
	if err != nil {
		return err
	}
	xp, err := c.qparamsAt(1, 2, x.shape, false, 1)
	if err != nil {
		return err
	}
	if len(xp.scale) != 1 {
		return unsupportedf("per-channel input quantization")
	}
	wp, err := c.qparamsAt(4, 5, w.shape, false, 0)
	if err != nil {
		return err
	}
	if len(wp.scale) > 1 {
		wp.axis = 0
		if len(wp.scale) != w.shape[0] {
			return fmt.Errorf("%d weight scales for %d output channels", len(wp.scale), w.shape[0])
		}
	}
	yp, err := c.qparamsAt(6, 7, nil, false, 0)
	if err != nil {
		return err
	}
	if len(yp.scale) != 1 {
		return unsupportedf("per-channel output quantization")
	}
	wq := wp.quant(asIs, 4)
	wq.Axis = 0
	ins := []string{im.withQuant(im.get(x, nhwc), xp.quant(nhwc, 4)), im.intWeights(w, nhwc, wq), ""}
	if b := c.in(8); b != nil {
		if b.dt != graph.Int32 || len(b.shape) != 1 || b.shape[0] != w.shape[0] {
			return fmt.Errorf("bias of %s %v for %d output channels", b.dt, b.shape, w.shape[0])
		}
		bq := &graph.Quant{Scale: make([]float32, len(wp.scale)), ZeroPoint: make([]int32, len(wp.scale))}
		for i, ws := range wp.scale {
			bq.Scale[i] = xp.scale[0] * ws
		}
		ins[2] = im.withQuant(im.get(b, asIs), bq)
	}
	attrs := &graph.Conv2DAttrs{Stride: s.stride, Dilation: s.dil, Pad: s.pad, Group: group, Requant: graph.RequantFloat}
	_, t := c.emit1(graph.Conv2D, ins, attrs, outQuantType(yp), []int{x.shape[0], w.shape[0], s.out[0], s.out[1]}, nhwc)
	t.Quant = yp.quant(nhwc, 4)
	return nil
}

func convQLinearMatMul(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(3)
	if err != nil {
		return err
	}
	if !quantizable(a.dt) || !quantizable(b.dt) {
		return unsupportedf("QLinearMatMul of %s and %s", a.dt, b.dt)
	}
	out, err := matmulShape(a.shape, b.shape)
	if err != nil {
		return err
	}
	ap, err := c.qparamsAt(1, 2, a.shape, false, len(a.shape)-2)
	if err != nil {
		return err
	}
	bp, err := c.qparamsAt(4, 5, b.shape, false, len(b.shape)-1)
	if err != nil {
		return err
	}
	yp, err := c.qparamsAt(6, 7, nil, false, 0)
	if err != nil {
		return err
	}
	if len(ap.scale) != 1 || len(yp.scale) != 1 {
		return unsupportedf("per-axis quantization of A or Y")
	}
	if len(bp.scale) > 1 && len(bp.scale) != b.shape[len(b.shape)-1] {
		return unsupportedf("per-axis quantization of B along an axis other than the last")
	}
	return c.intMatMul(a, b, ap.quant(asIs, 0), bp, outQuantType(yp), yp.quant(asIs, 0), out, graph.RequantFloat)
}

// intMatMul emits FullyConnected (constant 2-D b) or BatchMatMul on integer
// tensors as the node's output; yq nil means a raw int32 accumulator output.
func (c *nodeCtx) intMatMul(a, b *value, aq *graph.Quant, bp *qparams, ydt graph.DType, yq *graph.Quant, out []int, mode graph.RequantMode) error {
	c.intMatMulTo("", a, b, aq, bp, ydt, yq, out, mode)
	return nil
}

// intMatMulTo is intMatMul writing an intermediate named after suffix, or
// the node's output with suffix "".
func (c *nodeCtx) intMatMulTo(suffix string, a, b *value, aq *graph.Quant, bp *qparams, ydt graph.DType, yq *graph.Quant, out []int, mode graph.RequantMode) *value {
	im := c.im
	ain := im.withQuant(im.get(a, asIs), aq)
	bq := bp.quant(asIs, 0)
	emit := func(op graph.Op, ins []string, attrs any) *value {
		if suffix != "" {
			v := c.tmp(op, ins, attrs, ydt, out, asIs, suffix)
			im.g.Tensors[v.name].Quant = yq
			return v
		}
		_, t := c.emit1(op, ins, attrs, ydt, out, asIs)
		t.Quant = yq
		return nil
	}
	if b.c != nil && len(b.shape) == 2 {
		bq.Axis = 0
		w := im.g.AddTensor(&graph.Tensor{Name: im.g.UniqueName(b.name + "_fc"), DType: b.dt, Shape: []int{b.shape[1], b.shape[0]}, Data: constMatrixT(b.c), Quant: bq})
		return emit(graph.FullyConnected, []string{ain, w.Name, ""}, &graph.FullyConnectedAttrs{KeepDims: true, Requant: mode})
	}
	if len(bq.Scale) > 1 {
		bq.Axis = len(b.shape) - 1
	}
	bin := im.withQuant(im.get(b, asIs), bq)
	return emit(graph.BatchMatMul, []string{ain, bin}, &graph.BatchMatMulAttrs{Requant: mode})
}

// matMulIntegerRuntimeZP is MatMulInteger whose A zero point is computed at
// run time (ONNX Runtime's dynamic quantization: DynamicQuantizeLinear's
// zero point feeds it). With B constant,
//
//	sum_k (A[i,k] - za)(B[k,j] - zb[j]) = sum_k A[i,k](B[k,j] - zb[j]) - za * S[j],
//	S[j] = sum_k (B[k,j] - zb[j]),
//
// so the product runs with zero point 0 and za times the constant column
// sums S is subtracted in int32 (wrapping as the spec's int32 output does).
func (c *nodeCtx) matMulIntegerRuntimeZP(a, b, za *value, bp *qparams, out []int) error {
	if za.dt != a.dt {
		return fmt.Errorf("zero point is %s, data is %s", za.dt, a.dt)
	}
	if graph.NumElements(za.shape) != 1 {
		return unsupportedf("per-row zero point of A")
	}
	if b.c == nil {
		return unsupportedf("MatMulInteger with a run-time zero point of A and a non-constant B")
	}
	if len(b.shape) < 2 {
		return unsupportedf("MatMulInteger with a run-time zero point of A and a 1-D B")
	}
	kdim, ndim := b.shape[len(b.shape)-2], b.shape[len(b.shape)-1]
	if kdim == 0 || ndim == 0 {
		return unsupportedf("MatMulInteger of an empty B %v", b.shape)
	}
	sshape := slices.Clone(b.shape)
	sshape[len(sshape)-2] = 1
	sums := graph.NewData(graph.Int32, sshape)
	zb := func(j int) int64 {
		switch len(bp.zp) {
		case 0:
			return 0
		case 1:
			return int64(bp.zp[0])
		}
		return int64(bp.zp[j])
	}
	for m := 0; m < len(sums.I)/ndim; m++ {
		for j := 0; j < ndim; j++ {
			var s int64
			for k := 0; k < kdim; k++ {
				s += b.c.I[(m*kdim+k)*ndim+j] - zb(j)
			}
			sums.I[m*ndim+j] = int64(int32(s))
		}
	}
	zero := &qparams{scale: []float32{1}, zp: []int32{0}}
	prod := c.intMatMulTo("zp0", a, b, zero.quant(asIs, 0), bp, graph.Int32, nil, out, graph.RequantFloat)
	bin := &graph.BinaryAttrs{}
	z32, err := c.step(-1, "zp32", graph.Cast, &graph.CastAttrs{To: graph.Int32}, graph.Int32, za.shape, za)
	if err != nil {
		return err
	}
	corr, err := c.step(-1, "zp_corr", graph.Mul, bin, graph.Int32, sshape, z32, constValue(c.out(0)+"_colsum", sums))
	if err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Sub, bin, graph.Int32, out, prod, corr)
	return err
}

// zeroPoints reads an optional zero-point input as unit-scale quantization.
func (c *nodeCtx) zeroPoints(i int, dt graph.DType) (*qparams, error) {
	z, err := c.constIn(i, "zero point")
	if err != nil {
		return nil, err
	}
	p := &qparams{scale: []float32{1}, zp: []int32{0}}
	if z != nil && z.Len() > 0 {
		if z.DType != dt {
			return nil, fmt.Errorf("zero point is %s, data is %s", z.DType, dt)
		}
		p.scale, p.zp = make([]float32, z.Len()), make([]int32, z.Len())
		for j, v := range z.I {
			p.scale[j], p.zp[j] = 1, int32(v)
		}
	}
	return p, nil
}

func convConvInteger(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if !quantizable(x.dt) || !quantizable(w.dt) {
		return unsupportedf("ConvInteger of %s and %s", x.dt, w.dt)
	}
	s, group, err := c.convGeometry(x, w)
	if err != nil {
		return err
	}
	if z := c.in(2); z != nil && z.c == nil {
		return c.convIntegerRuntimeZP(x, w, z, s, group)
	}
	xp, err := c.zeroPoints(2, x.dt)
	if err != nil {
		return err
	}
	if len(xp.zp) != 1 {
		return unsupportedf("per-channel input zero point")
	}
	wp, err := c.zeroPoints(3, w.dt)
	if err != nil {
		return err
	}
	if len(wp.zp) > 1 && len(wp.zp) != w.shape[0] {
		return fmt.Errorf("%d weight zero points for %d output channels", len(wp.zp), w.shape[0])
	}
	wq := wp.quant(asIs, 4)
	wq.Axis = 0
	ins := []string{im.withQuant(im.get(x, nhwc), xp.quant(nhwc, 4)), im.intWeights(w, nhwc, wq), ""}
	attrs := &graph.Conv2DAttrs{Stride: s.stride, Dilation: s.dil, Pad: s.pad, Group: group, Requant: graph.RequantFloat}
	c.emit1(graph.Conv2D, ins, attrs, graph.Int32, []int{x.shape[0], w.shape[0], s.out[0], s.out[1]}, nhwc)
	return nil
}

func convMatMulInteger(im *importer, c *nodeCtx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if !quantizable(a.dt) || !quantizable(b.dt) {
		return unsupportedf("MatMulInteger of %s and %s", a.dt, b.dt)
	}
	out, err := matmulShape(a.shape, b.shape)
	if err != nil {
		return err
	}
	bp, err := c.zeroPoints(3, b.dt)
	if err != nil {
		return err
	}
	if len(bp.zp) > 1 && len(bp.zp) != b.shape[len(b.shape)-1] {
		return unsupportedf("zero points of B along an axis other than the last")
	}
	if za := c.in(2); za != nil && za.c == nil {
		return c.matMulIntegerRuntimeZP(a, b, za, bp, out)
	}
	ap, err := c.zeroPoints(2, a.dt)
	if err != nil {
		return err
	}
	if len(ap.zp) != 1 {
		return unsupportedf("per-row zero point of A")
	}
	return c.intMatMul(a, b, ap.quant(asIs, 0), bp, graph.Int32, nil, out, graph.RequantFloat)
}

// convIntegerRuntimeZP is ConvInteger whose input zero point za is computed
// at run time (ONNX Runtime's dynamic quantization of a Conv). ONNX
// convolves x − za with zero padding, that is x padded with za; so the
// input is padded with 0 and za is added on the border (za times a
// constant mask of the border, in x's own type: the border holds 0, so
// nothing overflows), the convolution runs without padding at zero point
// 0, and za times each output channel's constant weight sum (less the
// weights' zero points) is subtracted in int32:
//
//	Σ (x_p − za)(w − zw) = Σ x_p (w − zw) − za · S[oc],  S[oc] = Σ (w − zw).
func (c *nodeCtx) convIntegerRuntimeZP(x, w, za *value, s *spatial, group int) error {
	im := c.im
	if za.dt != x.dt {
		return fmt.Errorf("zero point is %s, data is %s", za.dt, x.dt)
	}
	if graph.NumElements(za.shape) != 1 {
		return unsupportedf("per-channel input zero point")
	}
	if w.c == nil {
		return unsupportedf("ConvInteger with a run-time input zero point and non-constant weights")
	}
	wp, err := c.zeroPoints(3, w.dt)
	if err != nil {
		return err
	}
	cout := w.shape[0]
	if cout == 0 || len(w.c.I) == 0 {
		return unsupportedf("ConvInteger of empty weights %v", w.shape)
	}
	if len(wp.zp) > 1 && len(wp.zp) != cout {
		return fmt.Errorf("%d weight zero points for %d output channels", len(wp.zp), cout)
	}
	per := len(w.c.I) / cout
	sums := graph.NewData(graph.Int32, []int{cout})
	for oc := 0; oc < cout; oc++ {
		zw := int64(0)
		if len(wp.zp) > 0 {
			zw = int64(wp.zp[min(oc, len(wp.zp)-1)])
		}
		var t int64
		for _, v := range w.c.I[oc*per : (oc+1)*per] {
			t += v - zw
		}
		sums.I[oc] = int64(int32(t))
	}
	zaName := im.get(za, asIs)
	in := im.get(x, nhwc)
	p := s.pad
	if p != (graph.Padding{}) {
		n, ch, h, wd := x.shape[0], x.shape[1], x.shape[2]+p.Top+p.Bottom, x.shape[3]+p.Left+p.Right
		padded := c.tmp(graph.Pad, []string{in}, &graph.PadAttrs{Pads: []int{0, p.Top, p.Left, 0, 0, p.Bottom, p.Right, 0}, Mode: "constant"}, x.dt, []int{n, ch, h, wd}, nhwc, "zp_padded")
		mask := graph.NewData(x.dt, []int{1, h, wd, 1})
		for y := 0; y < h; y++ {
			for xx := 0; xx < wd; xx++ {
				if y < p.Top || y >= h-p.Bottom || xx < p.Left || xx >= wd-p.Right {
					mask.I[y*wd+xx] = 1
				}
			}
		}
		mt := im.g.AddConst(im.g.UniqueName(c.out(0)+"_zp_border"), mask)
		bin := &graph.BinaryAttrs{}
		border := c.tmp(graph.Mul, []string{zaName, mt.Name}, bin, x.dt, []int{1, h, wd, 1}, asIs, "zp_border_values")
		in = c.tmp(graph.Add, []string{padded.tensors[nhwc], border.tensors[asIs]}, bin, x.dt, []int{n, ch, h, wd}, nhwc, "zp_bordered").tensors[nhwc]
	}
	zero := &qparams{scale: []float32{1}, zp: []int32{0}}
	wq := wp.quant(asIs, 4)
	wq.Axis = 0
	ins := []string{im.withQuant(in, zero.quant(nhwc, 4)), im.intWeights(w, nhwc, wq), ""}
	attrs := &graph.Conv2DAttrs{Stride: s.stride, Dilation: s.dil, Group: group, Requant: graph.RequantFloat}
	out := []int{x.shape[0], cout, s.out[0], s.out[1]}
	conv := c.tmp(graph.Conv2D, ins, attrs, graph.Int32, out, nhwc, "zp0")
	z32 := c.tmp(graph.Cast, []string{zaName}, &graph.CastAttrs{To: graph.Int32}, graph.Int32, za.shape, asIs, "zp32")
	st := im.g.AddConst(im.g.UniqueName(c.out(0)+"_weight_sums"), sums)
	corr := c.tmp(graph.Mul, []string{z32.tensors[asIs], st.Name}, &graph.BinaryAttrs{}, graph.Int32, []int{cout}, asIs, "zp_corr")
	c.emit1(graph.Sub, []string{conv.tensors[nhwc], corr.tensors[asIs]}, &graph.BinaryAttrs{}, graph.Int32, out, nhwc)
	return nil
}
