package onnx

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// 3-D convolution and pooling (ONNX Conv, MaxPool and AveragePool of a
// rank-5 input [N,C,D,H,W]) are lowered at import into the graph's 2-D ops,
// float32 only. The input is moved to NDHWC [N,D,H,W,C] (a Transpose; none
// when it comes from another lowered 3-D op, whose own NDHWC result is read
// instead).
//
// Conv: D is padded with zeros (pads, auto_pad) and the Kd depth taps are
// Kd strided depth slices of it, [N,Do,H,W,C] each (slice kd starts at
// kd·dilation_d and steps by stride_d). They are concatenated into the
// channels, tap-major within each group ([M,G,C/G] pieces joined on their
// last axis), so one grouped 2-D convolution over [N·Do,H,W,Kd·C] with the
// weights W[o, c, kd, kh, kw] at input channel kd·C/G + c of group g does
// the whole 3-D sum, the bias added once; H and W keep their own pads,
// strides, dilations and auto_pad.
//
// Pools: a box window is separable. MaxPool is the max over D of the 2-D
// max over H and W; AveragePool divides by the count of a window's elements
// inside the input (or the padded input), which is the product of the
// counts along D and along H×W, so it is the 2-D average over D of the 2-D
// average over H and W. Both run as two 2-D pools: over H and W of
// [N·D,H,W,C], then over D of [N,D,Ho·Wo,C] with a D×1 window (ceil_mode,
// pads and auto_pad along D carried over). The 2-D pools' own checks apply
// per stage (a ceil_mode that changes an axis's output size is refused with
// count_include_pad, as in 2-D).
//
// The result is moved back to [N,Co,Do,Ho,Wo] by a Transpose from NDHWC.

func init() {
	converters["Conv"] = lift3D(converters["Conv"], conv3D)
	converters["MaxPool"] = lift3D(converters["MaxPool"], pool3D(graph.MaxPool2D))
	converters["AveragePool"] = lift3D(converters["AveragePool"], pool3D(graph.AvgPool2D))
	for _, op := range []string{"QLinearConv", "ConvInteger"} {
		converters[op] = lift3D(converters[op], refuse3D)
	}
}

// maxDepthTaps bounds the depth taps of a lowered 3-D convolution: each is
// a Slice of the input and a piece of the Concat feeding the 2-D conv.
const maxDepthTaps = 256

var (
	toNDHWC   = []int{0, 2, 3, 4, 1}
	fromNDHWC = []int{0, 4, 1, 2, 3}
)

// lift3D runs lower on a node whose first input has rank 5 and conv (the
// 2-D converter, with its 1-D lift) on every other.
func lift3D(conv, lower converter) converter {
	return func(im *importer, c *nodeCtx) error {
		if x := c.in(0); x != nil && len(x.shape) == 5 {
			return lower(im, c)
		}
		return conv(im, c)
	}
}

func refuse3D(_ *importer, c *nodeCtx) error {
	return unsupportedf("3-D %s (input rank 5): only a float32 Conv is lowered to 2-D; quantized and integer 3-D convolutions are not supported (dequantize the model's 3-D layers)", c.n.OpType)
}

// freshVal returns a name for a value the lowering makes up: neither an
// ONNX value nor a graph tensor.
func (im *importer) freshVal(base string) string {
	for i := 0; ; i++ {
		n := base
		if i > 0 {
			n = fmt.Sprintf("%s_%d", base, i)
		}
		_, isVal := im.vals[n]
		_, isTensor := im.g.Tensors[n]
		if !isVal && !isTensor && im.uses[n] == 0 {
			return n
		}
	}
}

// ndhwc returns x [N,C,D,H,W] as an NDHWC tensor [N,D,H,W,C]: the tensor a
// lowered 3-D op transposed x from, else a Transpose of x. A Transpose that
// only this node reads goes (as foldPad's Pad): consecutive 3-D ops pass
// NDHWC tensors with no move between them.
func (im *importer) ndhwc(x *value) string {
	if p := x.prod; x.c == nil && x.lazy == nil && p != nil && p.Op == graph.Transpose && len(p.Outputs) == 1 && len(p.Inputs) == 1 &&
		x.tensors[asIs] != "" && p.Outputs[0] == x.tensors[asIs] {
		if a, ok := p.Attrs.(*graph.TransposeAttrs); ok && slices.Equal(a.Perm, fromNDHWC) {
			if x.pending == 1 {
				im.g.Nodes = slices.DeleteFunc(im.g.Nodes, func(n *graph.Node) bool { return n == p })
				x.prod = nil
			}
			return p.Inputs[0]
		}
	}
	return im.transpose(im.get(x, asIs), toNDHWC, x.name+"_ndhwc")
}

// split3D derives, from a 3-D node's window attributes, those of a 2-D node
// over H and W (depth false) or over D as the height of a D×1 window (depth
// true). group, auto_pad, ceil_mode and count_include_pad are kept;
// storage_order is dropped (the Indices output is refused).
func split3D(n *Node, depth bool) ([]*Attribute, error) {
	var out []*Attribute
	for _, a := range n.Attribute {
		b := *a
		v := a.Ints
		switch a.Name {
		case "kernel_shape", "strides", "dilations":
			if len(v) != 3 {
				return nil, fmt.Errorf("%s %v: want 3 values for a 3-D input", a.Name, v)
			}
			if err := checkRange64(a.Name, v, 1); err != nil {
				return nil, err
			}
			if depth {
				b.Ints = []int64{v[0], 1}
			} else {
				b.Ints = []int64{v[1], v[2]}
			}
		case "pads":
			if len(v) != 6 {
				return nil, fmt.Errorf("pads %v: want 6 values for a 3-D input", v)
			}
			if slices.ContainsFunc(v, func(p int64) bool { return p < 0 }) {
				return nil, unsupportedf("negative pads %v", v)
			}
			if err := checkRange64("pads", v, 0); err != nil {
				return nil, err
			}
			if depth {
				b.Ints = []int64{v[0], 0, v[3], 0}
			} else {
				b.Ints = []int64{v[1], v[2], v[4], v[5]}
			}
		case "storage_order":
			continue
		case "group":
			if depth {
				continue
			}
		}
		out = append(out, &b)
	}
	return out, nil
}

// checkRange64 is checkRange on attribute values, [lo, maxWindow], before
// they are converted to int.
func checkRange64(name string, v []int64, lo int64) error {
	for _, x := range v {
		if x < lo || x > maxWindow {
			return fmt.Errorf("%s %v: each must be in [%d, %d]", name, v, lo, maxWindow)
		}
	}
	return nil
}

// sub2D converts a made-up 2-D node of the lowering (inputs ins, one
// output, attributes attrs) with a 2-D converter, in the context of the
// ONNX node being lowered, and returns its output value.
func (im *importer) sub2D(c *nodeCtx, conv converter, ins []string, attrs []*Attribute) (*value, error) {
	out := im.freshVal(c.out(0) + "_2d")
	n := &Node{Name: c.n.Name, OpType: c.n.OpType, Domain: c.n.Domain, Input: ins, Output: []string{out}, Attribute: attrs}
	// The 2-D node is the lowering's main node: named after the ONNX node.
	im.aux--
	err := convertCtx(im, n, conv)
	im.aux++
	y := im.vals[out]
	delete(im.vals, out)
	if err != nil {
		return nil, err
	}
	if y == nil || y.tensors[nhwc] == "" || len(y.shape) != 4 {
		return nil, fmt.Errorf("the 2-D %s of the lowering made no NHWC output", c.n.OpType)
	}
	return y, nil
}

// window3D resolves the geometry of a split 3-D window (split3D's
// attributes) over input sizes in, kernel k.
func (c *nodeCtx) window3D(attrs []*Attribute, in, k [2]int, ceil bool) (*spatial, error) {
	w := &nodeCtx{im: c.im, n: &Node{Name: c.n.Name, OpType: c.n.OpType, Attribute: attrs}}
	sp, err := w.window(in, k, ceil)
	if c.bad == nil {
		c.bad = w.bad // an attribute of the wrong type, read for the split window
	}
	return sp, err
}

// view4 records tensor t (NHWC [n,h,w,ch]) as a made-up 4-D value
// [n,ch,h,w] and returns its name; the caller forgets it (delete) once
// converted.
func (im *importer) view4(t string, base string) string {
	ts := im.g.Tensors[t].Shape
	name := im.freshVal(base)
	v := &value{name: name, dt: im.g.Tensors[t].DType, shape: []int{ts[0], ts[3], ts[1], ts[2]}, primary: nhwc}
	v.tensors[nhwc] = t
	im.vals[name] = v
	return name
}

// finish3D writes output 0, [N,C,D,H,W], from the NDHWC tensor t.
func (im *importer) finish3D(c *nodeCtx, t string) {
	ts := im.g.Tensors[t]
	shape := permuteShape(ts.Shape, fromNDHWC)
	out, v := c.newOut(0, ts.DType, shape, asIs)
	op, attrs := graph.Op(graph.Transpose), any(&graph.TransposeAttrs{Perm: slices.Clone(fromNDHWC)})
	if onlyUnitMoves(ts.Shape, fromNDHWC) {
		op, attrs = graph.Reshape, nil
	}
	v.prod = im.emit(op, []string{t}, attrs, out)
}

func conv3D(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("3-D Conv on %s (only float32 3-D convolutions are lowered to 2-D)", x.dt)
	}
	if len(w.shape) != 5 {
		return fmt.Errorf("weights of shape %v for a 3-D input %v: want [M, C/group, kD, kH, kW]", w.shape, x.shape)
	}
	if w.c == nil || w.c.DType != graph.Float32 {
		return unsupportedf("3-D Conv with run-time weights (input %q): the lowering rearranges constant weights", w.name)
	}
	if k, ok := c.ints("kernel_shape"); ok && !slices.Equal(k, w.shape[2:]) {
		return fmt.Errorf("kernel_shape %v disagrees with weights %v", k, w.shape)
	}
	N, C, D, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4]
	M, Cg, Kd, Kh, Kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3], w.shape[4]
	group := c.int("group", 1)
	if group < 1 || group > int64(C) || C%int(group) != 0 || M%int(group) != 0 || C/int(group) != Cg {
		return fmt.Errorf("group %d does not fit input %v and weights %v", group, x.shape, w.shape)
	}
	G := int(group)
	if Kd > maxDepthTaps {
		return unsupportedf("3-D Conv of kernel depth %d: at most %d depth taps are lowered", Kd, maxDepthTaps)
	}
	dattrs, err := split3D(c.n, true)
	if err != nil {
		return err
	}
	hw, err := split3D(c.n, false)
	if err != nil {
		return err
	}
	dg, err := c.window3D(dattrs, [2]int{D, 1}, [2]int{Kd, 1}, false)
	if err != nil {
		return fmt.Errorf("depth axis: %w", err)
	}
	if _, err := c.window3D(hw, [2]int{H, W}, [2]int{Kh, Kw}, false); err != nil {
		return err
	}
	if c.out(0) == "" {
		return nil
	}
	Do, sd, dd := dg.out[0], dg.stride[0], dg.dil[0]
	pb, pe := dg.pad.Top, dg.pad.Bottom
	if err := checkShape([]int{N, Do, H, W, Kd, C}); err != nil {
		return fmt.Errorf("the lowering's depth taps: %w", err)
	}
	if err := checkShape([]int{N, D + pb + pe, H, W, C}); err != nil {
		return fmt.Errorf("the depth-padded input: %w", err)
	}

	im.aux++
	defer func() { im.aux-- }()
	base := c.out(0) + "_3d"
	src := im.ndhwc(x)
	Dp := D + pb + pe
	if pb+pe > 0 {
		p := im.newTensor(base+"_dpad", graph.Float32, []int{N, Dp, H, W, C})
		im.emit(graph.Pad, []string{src}, &graph.PadAttrs{Pads: []int{0, pb, 0, 0, 0, 0, pe, 0, 0, 0}, Mode: "constant"}, p)
		src = p.Name
	}
	// The depth taps: slice kd holds padded depths kd·dd + do·sd, do < Do.
	taps := make([]string, Kd)
	for kd := range taps {
		b := kd * dd
		if b == 0 && sd == 1 && Do == Dp {
			taps[kd] = src
			continue
		}
		t := im.newTensor(fmt.Sprintf("%s_tap%d", base, kd), graph.Float32, []int{N, Do, H, W, C})
		im.emit(graph.Slice, []string{src}, &graph.SliceAttrs{
			Begin: []int{0, b, 0, 0, 0}, End: []int{N, b + (Do-1)*sd + 1, H, W, C}, Stride: []int{1, sd, 1, 1, 1}}, t)
		taps[kd] = t.Name
	}
	col := taps[0]
	if Kd > 1 {
		pieces := make([]string, Kd)
		for kd, t := range taps {
			pieces[kd] = im.reshapeTo(t, []int{N * Do * H * W, G, Cg}, fmt.Sprintf("%s_tap%d_g", base, kd))
		}
		cat := im.newTensor(base+"_taps", graph.Float32, []int{N * Do * H * W, G, Kd * Cg})
		im.emit(graph.Concat, pieces, &graph.ConcatAttrs{Axis: 2}, cat)
		col = cat.Name
	}
	col = im.reshapeTo(col, []int{N * Do, H, W, Kd * C}, base+"_col")

	// W[o, c, kd, kh, kw] at input channel kd·Cg + c of the 2-D weights.
	w2 := graph.NewData(graph.Float32, []int{M, Kd * Cg, Kh, Kw})
	for o := 0; o < M; o++ {
		for ci := 0; ci < Cg; ci++ {
			for kd := 0; kd < Kd; kd++ {
				for k := 0; k < Kh*Kw; k++ {
					w2.F[((o*Kd*Cg+kd*Cg+ci)*Kh*Kw)+k] = w.c.F[(((o*Cg+ci)*Kd+kd)*Kh*Kw)+k]
				}
			}
		}
	}
	if err := im.account(w2); err != nil {
		return err
	}
	wname := im.freshVal(w.name + "_3d")
	im.vals[wname] = &value{name: wname, dt: graph.Float32, shape: slices.Clone(w2.Shape), c: w2}
	defer delete(im.vals, wname)
	xname := im.view4(col, base+"_x")
	defer delete(im.vals, xname)
	ins := []string{xname, wname}
	if len(c.n.Input) > 2 {
		ins = append(ins, c.n.Input[2])
	}
	y, err := im.sub2D(c, convConv, ins, hw)
	if err != nil {
		return err
	}
	ys := y.shape // [N·Do, M, Ho, Wo]
	if err := checkShape([]int{N, M, Do, ys[2], ys[3]}); err != nil {
		return err
	}
	im.finish3D(c, im.reshapeTo(y.tensors[nhwc], []int{N, Do, ys[2], ys[3], M}, base+"_y"))
	return nil
}

func pool3D(op graph.Op) converter {
	return func(im *importer, c *nodeCtx) error {
		x, err := c.need(0)
		if err != nil {
			return err
		}
		if c.out(1) != "" {
			return unsupportedf("the Indices output of a 3-D MaxPool (only its first output, the values, is lowered to 2-D pools)")
		}
		if x.dt != graph.Float32 {
			return unsupportedf("3-D %s on %s (only float32 3-D pools are lowered to 2-D)", c.n.OpType, x.dt)
		}
		k, ok := c.ints("kernel_shape")
		if !ok || len(k) != 3 {
			return fmt.Errorf("kernel_shape %v: want 3 values for a 3-D input", k)
		}
		hw, err := split3D(c.n, false)
		if err != nil {
			return err
		}
		dattrs, err := split3D(c.n, true)
		if err != nil {
			return err
		}
		N, C, D, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4]
		ceil := c.int("ceil_mode", 0) != 0
		hs, err := c.window3D(hw, [2]int{H, W}, [2]int{k[1], k[2]}, ceil)
		if err != nil {
			return err
		}
		ds, err := c.window3D(dattrs, [2]int{D, 1}, [2]int{k[0], 1}, ceil)
		if err != nil {
			return fmt.Errorf("depth axis: %w", err)
		}
		if err := checkShape([]int{N, C, ds.out[0], hs.out[0], hs.out[1]}); err != nil {
			return err
		}
		if c.out(0) == "" {
			return nil
		}
		// A stage whose window is one element, stride 1, unpadded, is the
		// identity.
		identity := func(s *spatial) bool {
			return s.kernel == [2]int{1, 1} && s.stride == [2]int{1, 1} && s.pad == graph.Padding{}
		}
		im.aux++
		defer func() { im.aux-- }()
		base := c.out(0) + "_3d"
		conv := convPool(op)
		cur := im.reshapeTo(im.ndhwc(x), []int{N * D, H, W, C}, base+"_hw")
		Ho, Wo := H, W
		if !identity(hs) {
			in := im.view4(cur, base+"_hwx")
			defer delete(im.vals, in)
			y, err := im.sub2D(c, conv, []string{in}, hw)
			if err != nil {
				return err
			}
			cur, Ho, Wo = y.tensors[nhwc], y.shape[2], y.shape[3]
		}
		cur = im.reshapeTo(cur, []int{N, D, Ho * Wo, C}, base+"_d")
		Do := D
		if !identity(ds) {
			in := im.view4(cur, base+"_dx")
			defer delete(im.vals, in)
			y, err := im.sub2D(c, conv, []string{in}, dattrs)
			if err != nil {
				return fmt.Errorf("depth axis: %w", err)
			}
			cur, Do = y.tensors[nhwc], y.shape[2]
		}
		im.finish3D(c, im.reshapeTo(cur, []int{N, Do, Ho, Wo, C}, base+"_y"))
		return nil
	}
}
