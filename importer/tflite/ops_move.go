package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// The data-movement operators: each is a canonical op or an exact
// composition of Slice, Reshape, Transpose, Concat, Pad and Gather, which
// copy stored values. TFLite's kernels copy a quantized tensor's raw values
// too, whatever its output's quantization, so every intermediate tensor
// carries the output's quantization: no step rescales.

const (
	codeDepthToSpace     = 5
	codeEmbeddingLookup  = 7
	codeSpaceToDepth     = 26
	codeGather           = 36
	codeBatchToSpaceND   = 37
	codeSpaceToBatchND   = 38
	codeSplit            = 49
	codeSlice            = 65
	codeTile             = 69
	codeShape            = 77
	codePack             = 83
	codeOneHot           = 85
	codeUnpack           = 88
	codeZerosLike        = 93
	codeFill             = 94
	codeMirrorPad        = 100
	codeSplitV           = 102
	codeReverseV2        = 105
	codeGatherND         = 107
	codeRank             = 110
	codeScatterND        = 122
	codeBroadcastTo      = 130
	codeBroadcastArgs    = 145
	optGather            = 23
	optSpaceToDepth      = 19
	optDepthToSpace      = 94
	optSplit             = 35
	optSplitV            = 79
	optPack              = 59
	optUnpack            = 64
	optMirrorPad         = 77
	optOneHot            = 61
	mirrorPadReflect     = 0
	mirrorPadSymmetric   = 1
	maxMoveElements      = 1 << 26
	maxBlock             = 1 << 16
	maxSplits            = 1 << 16
	maxTileOrBroadcastTo = 1 << 16
	maxFolded            = 1 << 24 // elements of a FILL or ZEROS_LIKE constant
)

func init() {
	register((*opctx).split, codeSplit, codeSplitV)
	register((*opctx).unpack, codeUnpack)
	register((*opctx).pack, codePack)
	register((*opctx).slice, codeSlice)
	register((*opctx).gather, codeGather, codeEmbeddingLookup)
	register((*opctx).gatherND, codeGatherND)
	register((*opctx).scatterND, codeScatterND)
	register((*opctx).spaceDepth, codeSpaceToDepth, codeDepthToSpace)
	register((*opctx).spaceToBatch, codeSpaceToBatchND)
	register((*opctx).batchToSpace, codeBatchToSpaceND)
	register((*opctx).mirrorPad, codeMirrorPad)
	register((*opctx).tile, codeTile, codeBroadcastTo)
	register((*opctx).reverse, codeReverseV2)
	register((*opctx).folded, codeShape, codeRank, codeZerosLike, codeFill, codeBroadcastArgs)
	register((*opctx).oneHot, codeOneHot)
}

// split maps SPLIT (axis, value; num_splits equal parts) and SPLIT_V
// (value, size_splits, axis; one size may be -1) to one Slice per output.
func (c *opctx) split(_ *graph.Node) error {
	xi, axi := 1, 0
	if c.code == codeSplitV {
		xi, axi = 0, 2
	}
	x, err := c.in(xi)
	if err != nil {
		return err
	}
	ax, err := c.axisArg(axi, len(x.Shape))
	if err != nil {
		return err
	}
	dim := x.Shape[ax]
	var sizes []int
	if c.code == codeSplit {
		o, err := c.options(optSplit)
		if err != nil {
			return err
		}
		k := int(o.i32(0, int32(len(c.outs))))
		if k <= 0 || k > maxSplits || dim%k != 0 {
			return c.errorf("%d splits do not divide axis %d of size %d", k, ax, dim)
		}
		for range k {
			sizes = append(sizes, dim/k)
		}
	} else {
		if sizes, err = c.constInts(1, "size_splits"); err != nil {
			return err
		}
		rest, free := dim, -1
		for i, s := range sizes {
			switch {
			case s == -1 && free < 0:
				free = i
			case s < 0 || s > dim:
				return c.errorf("size_splits %v do not fit axis %d of size %d", sizes, ax, dim)
			default:
				rest -= s
			}
		}
		if free >= 0 && rest >= 0 {
			sizes[free] = rest
		} else if rest != 0 {
			return c.errorf("size_splits %v do not add up to axis %d of size %d", sizes, ax, dim)
		}
	}
	if len(sizes) != len(c.outs) {
		return c.errorf("%d parts for %d outputs", len(sizes), len(c.outs))
	}
	at := 0
	for i, s := range sizes {
		out, err := c.out(i)
		if err != nil {
			return err
		}
		if err := c.copyOK(x, out); err != nil {
			return err
		}
		a := fullSlice(x.Shape)
		a.Begin[ax], a.End[ax] = at, at+s
		at += s
		c.emit(graph.Slice, a, []string{x.Name}, out)
	}
	c.done = true
	return nil
}

// unpack maps UNPACK (num, axis) to a Slice and a Reshape per output.
func (c *opctx) unpack(_ *graph.Node) error {
	o, err := c.options(optUnpack)
	if err != nil {
		return err
	}
	x, err := c.in(0)
	if err != nil {
		return err
	}
	ax, err := c.axis(int(o.i32(1, 0)), len(x.Shape))
	if err != nil {
		return err
	}
	if x.Shape[ax] != len(c.outs) {
		return c.errorf("axis %d of size %d unpacks into %d outputs", ax, x.Shape[ax], len(c.outs))
	}
	for i := range c.outs {
		out, err := c.out(i)
		if err != nil {
			return err
		}
		if err := c.copyOK(x, out); err != nil {
			return err
		}
		a := fullSlice(x.Shape)
		a.Begin[ax], a.End[ax] = i, i+1
		shape := slices.Clone(x.Shape)
		shape[ax] = 1
		part := c.step(graph.Slice, a, []string{x.Name}, "part", x.DType, shape, out.Quant)
		c.emit(graph.Reshape, nil, []string{part.Name}, out)
	}
	c.done = true
	return nil
}

// pack maps PACK (values_count, axis) to a Reshape of each input (a new
// axis of size 1) and a Concat along that axis.
func (c *opctx) pack(n *graph.Node) error {
	o, err := c.options(optPack)
	if err != nil {
		return err
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	// TFLite's Prepare wants values_count inputs, neither more nor fewer.
	if vc := int(o.i32(0, 0)); vc != len(c.ins) {
		return c.errorf("values_count %d with %d inputs: TFLite's PACK wants them equal", vc, len(c.ins))
	}
	var ins []string
	var shape []int
	for i := range c.ins {
		x, err := c.in(i)
		if err != nil {
			return err
		}
		if i == 0 {
			ax, err := c.axis(int(o.i32(1, 0)), len(x.Shape)+1)
			if err != nil {
				return err
			}
			shape = slices.Insert(slices.Clone(x.Shape), ax, 1)
			n.Attrs = &graph.ConcatAttrs{Axis: ax}
		} else if !slices.Equal(x.Shape, c.d.g.Tensors[ins[0]].Shape) {
			return c.errorf("input %d has shape %v, input 0 %v", i, x.Shape, c.d.g.Tensors[ins[0]].Shape)
		}
		ins = append(ins, x.Name)
	}
	if len(ins) == 0 {
		return c.errorf("no inputs")
	}
	for _, name := range ins {
		x := c.d.g.Tensors[name]
		if err := c.copyOK(x, out); err != nil {
			return err
		}
		n.Inputs = append(n.Inputs, c.step(graph.Reshape, nil, []string{name}, "expanded", x.DType, shape, out.Quant).Name)
	}
	n.Op = graph.Concat
	return nil
}

// slice maps SLICE (begin, size; size -1 runs to the end).
func (c *opctx) slice(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	begin, err := c.constInts(1, "begin")
	if err != nil {
		return err
	}
	size, err := c.constInts(2, "size")
	if err != nil {
		return err
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if err := c.copyOK(x, out); err != nil {
		return err
	}
	if len(begin) != len(x.Shape) || len(size) != len(x.Shape) {
		return c.errorf("begin %v and size %v do not fit shape %v", begin, size, x.Shape)
	}
	a := fullSlice(x.Shape)
	for ax, b := range begin {
		e := b + size[ax]
		if size[ax] == -1 {
			e = x.Shape[ax]
		}
		if b < 0 || e < b || e > x.Shape[ax] {
			return c.errorf("begin %v, size %v out of range for shape %v", begin, size, x.Shape)
		}
		a.Begin[ax], a.End[ax] = b, e
	}
	n.Op, n.Attrs, n.Inputs = graph.Slice, a, []string{x.Name}
	return nil
}

// gather maps GATHER (params, indices; axis, batch_dims 0) and
// EMBEDDING_LOOKUP (ids, table: rows of the table).
func (c *opctx) gather(n *graph.Node) error {
	xi, ii, ax := 0, 1, 0
	if c.code == codeEmbeddingLookup {
		xi, ii = 1, 0
	}
	x, err := c.in(xi)
	if err != nil {
		return err
	}
	idx, err := c.in(ii)
	if err != nil {
		return err
	}
	if idx.DType != graph.Int32 && idx.DType != graph.Int64 {
		return c.errorf("indices are %s, want int32 or int64", idx.DType)
	}
	if c.code == codeGather {
		o, err := c.options(optGather)
		if err != nil {
			return err
		}
		if o.i32(1, 0) != 0 {
			return c.errorf("batch_dims %d is not supported (only 0)", o.i32(1, 0))
		}
		if ax, err = c.axis(int(o.i32(0, 0)), len(x.Shape)); err != nil {
			return err
		}
	}
	if len(x.Shape) == 0 {
		return c.errorf("gather from a scalar")
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if out.DType != x.DType {
		return c.errorf("%s table with %s output (hybrid lookup) is not supported", x.DType, out.DType)
	}
	if err := c.copyOK(x, out); err != nil {
		return err
	}
	if idx.IsConst() {
		for _, v := range idx.Data.Ints() {
			if v < 0 || v >= x.Shape[ax] {
				return c.errorf("index %d out of range [0, %d)", v, x.Shape[ax])
			}
		}
	}
	n.Op, n.Attrs, n.Inputs = graph.Gather, &graph.GatherAttrs{Axis: ax}, []string{x.Name, idx.Name}
	return nil
}

// gatherND maps GATHER_ND (params, indices [..., k]): the params' first k
// axes flattened into one, and a Gather along it of the flat index
// Σ idx[..., j]·stride_j (folded when the indices are constant; otherwise
// computed by a Mul and Add per index column).
func (c *opctx) gatherND(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	idx, err := c.in(1)
	if err != nil {
		return err
	}
	if idx.DType != graph.Int32 && idx.DType != graph.Int64 {
		return c.errorf("indices are %s, want int32 or int64", idx.DType)
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if err := c.copyOK(x, out); err != nil {
		return err
	}
	if len(idx.Shape) == 0 {
		return c.errorf("indices are a scalar")
	}
	k := idx.Shape[len(idx.Shape)-1]
	if k < 1 || k > len(x.Shape) {
		return c.errorf("index depth %d for params of rank %d", k, len(x.Shape))
	}
	rows := graph.NumElements(x.Shape[:k])
	flatShape := append([]int{rows}, x.Shape[k:]...)
	flat := c.step(graph.Reshape, nil, []string{x.Name}, "rows", x.DType, flatShape, out.Quant)
	lead := idx.Shape[:len(idx.Shape)-1]
	strides := graph.Strides(x.Shape[:k])
	var fi string
	if idx.IsConst() {
		v := idx.Data.Ints()
		d := graph.NewData(graph.Int32, slices.Clone(lead))
		for r := range d.Len() {
			at := 0
			for j := range k {
				q := v[r*k+j]
				if q < 0 || q >= x.Shape[j] {
					return c.errorf("index %d out of range [0, %d) on axis %d", q, x.Shape[j], j)
				}
				at += q * strides[j]
			}
			d.I[r] = int64(at)
		}
		fi = c.d.g.AddConst(c.d.g.UniqueName(out.Name+"/flat_index"), d).Name
	} else {
		colShape := append(slices.Clone(lead), 1)
		for j := range k {
			a := fullSlice(idx.Shape)
			a.Begin[len(idx.Shape)-1], a.End[len(idx.Shape)-1] = j, j+1
			col := c.step(graph.Slice, a, []string{idx.Name}, "column", idx.DType, colShape, nil).Name
			if strides[j] != 1 {
				s := graph.NewData(idx.DType, nil)
				s.I = []int64{int64(strides[j])}
				sn := c.d.g.AddConst(c.d.g.UniqueName(out.Name+"/stride"), s).Name
				col = c.step(graph.Mul, &graph.BinaryAttrs{}, []string{col, sn}, "scaled", idx.DType, colShape, nil).Name
			}
			if fi == "" {
				fi = col
			} else {
				fi = c.step(graph.Add, &graph.BinaryAttrs{}, []string{fi, col}, "flat", idx.DType, colShape, nil).Name
			}
		}
		fi = c.step(graph.Reshape, nil, []string{fi}, "flat_index", idx.DType, slices.Clone(lead), nil).Name
	}
	n.Op, n.Attrs, n.Inputs = graph.Gather, &graph.GatherAttrs{Axis: 0}, []string{flat.Name, fi}
	return nil
}

// spaceDepth maps SPACE_TO_DEPTH and DEPTH_TO_SPACE (NHWC, block size b):
// a Reshape to six axes, a Transpose of the two inner spatial axes and a
// Reshape back. Depth is ordered (row in block, column in block, channel),
// as TensorFlow's.
func (c *opctx) spaceDepth(n *graph.Node) error {
	opt := map[int32]uint8{codeSpaceToDepth: optSpaceToDepth, codeDepthToSpace: optDepthToSpace}[c.code]
	o, err := c.options(opt)
	if err != nil {
		return err
	}
	x, out, err := c.copyIO()
	if err != nil {
		return err
	}
	b := int(o.i32(0, 0))
	if len(x.Shape) != 4 || b < 1 || b > maxBlock {
		return c.errorf("block size %d on input %v (want NHWC and a positive block)", b, x.Shape)
	}
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	var six, final []int
	if c.code == codeSpaceToDepth {
		if H%b != 0 || W%b != 0 {
			return c.errorf("block %d does not divide %dx%d", b, H, W)
		}
		six, final = []int{N, H / b, b, W / b, b, C}, []int{N, H / b, W / b, b * b * C}
	} else {
		if C%(b*b) != 0 {
			return c.errorf("block %d: %d channels are not a multiple of %d", b, C, b*b)
		}
		six, final = []int{N, H, W, b, b, C / (b * b)}, []int{N, H * b, W * b, C / (b * b)}
	}
	perm := []int{0, 1, 3, 2, 4, 5}
	r := c.step(graph.Reshape, nil, []string{x.Name}, "blocks", x.DType, six, out.Quant)
	tshape := make([]int, 6)
	for i, p := range perm {
		tshape[i] = six[p]
	}
	t := c.step(graph.Transpose, &graph.TransposeAttrs{Perm: perm}, []string{r.Name}, "moved", x.DType, tshape, out.Quant)
	if !slices.Equal(out.Shape, final) {
		return c.errorf("output shape %v, want %v", out.Shape, final)
	}
	n.Op, n.Inputs = graph.Reshape, []string{t.Name}
	return nil
}

// blockArgs reads SPACE_TO_BATCH_ND's and BATCH_TO_SPACE_ND's block shape
// (input 1) and paddings or crops (input 2, [m, 2]) for input x of shape
// [batch, spatial (m axes)..., rest...].
func (c *opctx) blockArgs(x *graph.Tensor, what string) (block, pads []int, err error) {
	if block, err = c.constInts(1, "block_shape"); err != nil {
		return nil, nil, err
	}
	if pads, err = c.constInts(2, what); err != nil {
		return nil, nil, err
	}
	m := len(block)
	if m < 1 || 1+m > len(x.Shape) || len(pads) != 2*m {
		return nil, nil, c.errorf("block_shape %v and %s %v do not fit input %v", block, what, pads, x.Shape)
	}
	for i, b := range block {
		if b < 1 || b > maxBlock || pads[2*i] < 0 || pads[2*i+1] < 0 || pads[2*i] > maxMoveElements || pads[2*i+1] > maxMoveElements {
			return nil, nil, c.errorf("block_shape %v and %s %v out of range", block, what, pads)
		}
	}
	return block, pads, nil
}

// spaceToBatch maps SPACE_TO_BATCH_ND: a Pad (with the zero point for a
// quantized tensor), then a Reshape splitting each spatial axis into
// (size/b, b), a Transpose bringing the block offsets before the batch,
// and a Reshape folding them into it.
func (c *opctx) spaceToBatch(n *graph.Node) error {
	x, out, err := c.copyIO()
	if err != nil {
		return err
	}
	block, pads, err := c.blockArgs(x, "paddings")
	if err != nil {
		return err
	}
	m, r := len(block), len(x.Shape)
	pa := &graph.PadAttrs{Mode: "constant", Pads: make([]int, 2*r)}
	padded := slices.Clone(x.Shape)
	for i := range m {
		pa.Pads[1+i], pa.Pads[r+1+i] = pads[2*i], pads[2*i+1]
		padded[1+i] += pads[2*i] + pads[2*i+1]
		if padded[1+i]%block[i] != 0 {
			return c.errorf("block %d does not divide padded axis %d of size %d", block[i], 1+i, padded[1+i])
		}
	}
	if out.Quant != nil {
		pa.Value = float64(out.Quant.ZeroPoint[0])
	}
	src := x.Name
	if slices.ContainsFunc(pads, func(p int) bool { return p != 0 }) {
		src = c.step(graph.Pad, pa, []string{x.Name}, "padded", x.DType, padded, out.Quant).Name
	}
	// [N, s0/b0, b0, s1/b1, b1, ..., rest] -> [b0, b1, ..., N, s0/b0, s1/b1, ..., rest].
	split := []int{padded[0]}
	for i := range m {
		split = append(split, padded[1+i]/block[i], block[i])
	}
	split = append(split, padded[1+m:]...)
	var perm []int
	for i := range m {
		perm = append(perm, 2+2*i)
	}
	perm = append(perm, 0)
	for i := range m {
		perm = append(perm, 1+2*i)
	}
	for i := 1 + 2*m; i < len(split); i++ {
		perm = append(perm, i)
	}
	return c.blockMove(n, x, out, src, split, perm)
}

// blockMove ends the batch/space rearrangements: Reshape to split, Transpose
// by perm, and (as n) a Reshape to the output's shape.
func (c *opctx) blockMove(n *graph.Node, x, out *graph.Tensor, src string, split, perm []int) error {
	if graph.NumElements(split) != graph.NumElements(out.Shape) || graph.NumElements(split) > maxMoveElements {
		return c.errorf("output shape %v does not hold the %d rearranged elements", out.Shape, graph.NumElements(split))
	}
	r := c.step(graph.Reshape, nil, []string{src}, "blocks", x.DType, split, out.Quant)
	tshape := make([]int, len(perm))
	for i, p := range perm {
		tshape[i] = split[p]
	}
	t := c.step(graph.Transpose, &graph.TransposeAttrs{Perm: perm}, []string{r.Name}, "moved", x.DType, tshape, out.Quant)
	n.Op, n.Inputs = graph.Reshape, []string{t.Name}
	return nil
}

// batchToSpace maps BATCH_TO_SPACE_ND: the inverse rearrangement, then a
// Slice for the crops.
func (c *opctx) batchToSpace(n *graph.Node) error {
	x, out, err := c.copyIO()
	if err != nil {
		return err
	}
	block, crops, err := c.blockArgs(x, "crops")
	if err != nil {
		return err
	}
	m := len(block)
	prod := 1
	for _, b := range block {
		if b > x.Shape[0]/prod {
			return c.errorf("block_shape %v exceeds the batch %d", block, x.Shape[0])
		}
		prod *= b
	}
	if x.Shape[0]%prod != 0 {
		return c.errorf("batch %d is not a multiple of the block size %d", x.Shape[0], prod)
	}
	// [b0, b1, ..., N, s0, s1, ..., rest] -> [N, s0, b0, s1, b1, ..., rest].
	split := slices.Clone(block)
	split = append(split, x.Shape[0]/prod)
	split = append(split, x.Shape[1:]...)
	perm := []int{m}
	for i := range m {
		perm = append(perm, m+1+i, i)
	}
	for i := 2*m + 1; i < len(split); i++ {
		perm = append(perm, i)
	}
	full := []int{x.Shape[0] / prod}
	for i := range m {
		full = append(full, x.Shape[1+i]*block[i])
	}
	full = append(full, x.Shape[1+m:]...)
	cropped := slices.ContainsFunc(crops, func(p int) bool { return p != 0 })
	if !cropped {
		return c.blockMove(n, x, out, x.Name, split, perm)
	}
	spread := c.temp("spread", x.DType, full, out.Quant)
	mid := &graph.Node{}
	if err := c.blockMove(mid, x, spread, x.Name, split, perm); err != nil {
		return err
	}
	mid.Name, mid.Outputs = spread.Name, []string{spread.Name}
	c.d.g.AddNode(mid)
	a := fullSlice(full)
	for i := range m {
		a.Begin[1+i], a.End[1+i] = crops[2*i], full[1+i]-crops[2*i+1]
		if a.End[1+i] < a.Begin[1+i] {
			return c.errorf("crops %v exceed the spatial size %v", crops, full[1:1+m])
		}
	}
	n.Op, n.Attrs, n.Inputs = graph.Slice, a, []string{spread.Name}
	return nil
}

// mirrorPad maps MIRROR_PAD: REFLECT is Pad's "reflect" (the edge is not
// repeated); SYMMETRIC (the edge repeated) is, axis by axis, a Concat of the
// reversed leading slice, the tensor and the reversed trailing slice.
func (c *opctx) mirrorPad(n *graph.Node) error {
	o, err := c.options(optMirrorPad)
	if err != nil {
		return err
	}
	x, out, err := c.copyIO()
	if err != nil {
		return err
	}
	p, err := c.constInts(1, "paddings")
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if len(p) != 2*r {
		return c.errorf("paddings hold %d values, want %d for shape %v", len(p), 2*r, x.Shape)
	}
	mode := o.i8(0, mirrorPadReflect)
	if mode != mirrorPadReflect && mode != mirrorPadSymmetric {
		return c.errorf("mirror pad mode %d is not REFLECT or SYMMETRIC", mode)
	}
	// REFLECT may pad at most size-1, SYMMETRIC at most size.
	limit := 0
	if mode == mirrorPadReflect {
		limit = 1
	}
	for ax := range r {
		if p[2*ax] < 0 || p[2*ax+1] < 0 || p[2*ax] > x.Shape[ax]-limit || p[2*ax+1] > x.Shape[ax]-limit {
			return c.errorf("paddings %v exceed what shape %v can mirror", p, x.Shape)
		}
	}
	if mode == mirrorPadReflect {
		a := &graph.PadAttrs{Mode: "reflect", Pads: make([]int, 2*r)}
		for ax := range r {
			a.Pads[ax], a.Pads[r+ax] = p[2*ax], p[2*ax+1]
		}
		n.Op, n.Attrs, n.Inputs = graph.Pad, a, []string{x.Name}
		return nil
	}
	var axes []int
	for ax := range r {
		if p[2*ax] != 0 || p[2*ax+1] != 0 {
			axes = append(axes, ax)
		}
	}
	if len(axes) == 0 {
		n.Op, n.Inputs = graph.Reshape, []string{x.Name}
		return nil
	}
	cur, shape := x.Name, slices.Clone(x.Shape)
	for i, ax := range axes {
		size, before, after := shape[ax], p[2*ax], p[2*ax+1]
		var parts []string
		if before > 0 {
			a := fullSlice(shape)
			a.Begin[ax], a.End[ax], a.Stride[ax] = before-1, -1, -1
			parts = append(parts, c.step(graph.Slice, a, []string{cur}, "lead", x.DType, withAxis(shape, ax, before), out.Quant).Name)
		}
		parts = append(parts, cur)
		if after > 0 {
			a := fullSlice(shape)
			a.Begin[ax], a.End[ax], a.Stride[ax] = size-1, size-1-after, -1
			parts = append(parts, c.step(graph.Slice, a, []string{cur}, "trail", x.DType, withAxis(shape, ax, after), out.Quant).Name)
		}
		shape = withAxis(shape, ax, size+before+after)
		if i == len(axes)-1 {
			n.Op, n.Attrs, n.Inputs = graph.Concat, &graph.ConcatAttrs{Axis: ax}, parts
			break
		}
		cur = c.step(graph.Concat, &graph.ConcatAttrs{Axis: ax}, parts, "mirrored", x.DType, shape, out.Quant).Name
	}
	return nil
}

// withAxis is shape with axis ax set to v.
func withAxis(shape []int, ax, v int) []int {
	s := slices.Clone(shape)
	s[ax] = v
	return s
}

// tile maps TILE (multiples) and BROADCAST_TO (shape): a Reshape to the
// output's rank where BROADCAST_TO adds leading axes, then per repeated
// axis a Concat of copies.
func (c *opctx) tile(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	arg, err := c.constInts(1, map[int32]string{codeTile: "multiples", codeBroadcastTo: "shape"}[c.code])
	if err != nil {
		return err
	}
	if err := c.copyOK(x, out); err != nil {
		return err
	}
	src, shape := x.Name, slices.Clone(x.Shape)
	reps := make([]int, len(arg))
	if c.code == codeTile {
		if len(arg) != len(shape) {
			return c.errorf("multiples %v do not fit shape %v", arg, shape)
		}
		copy(reps, arg)
	} else {
		if len(arg) < len(shape) {
			return c.errorf("cannot broadcast %v to %v", shape, arg)
		}
		lead := len(arg) - len(shape)
		full := append(slices.Repeat([]int{1}, lead), shape...)
		for i, v := range arg {
			switch {
			case full[i] == v:
				reps[i] = 1
			case full[i] == 1 && v >= 1:
				reps[i] = v
			default:
				return c.errorf("cannot broadcast %v to %v", shape, arg)
			}
		}
		if lead > 0 {
			src = c.step(graph.Reshape, nil, []string{src}, "ranked", x.DType, full, out.Quant).Name
		}
		shape = full
	}
	var todo []int
	for ax, k := range reps {
		if k < 1 || k > maxTileOrBroadcastTo || graph.NumElements(shape)*k > maxMoveElements {
			return c.errorf("repeat %d on axis %d out of range", k, ax)
		}
		if k > 1 {
			todo = append(todo, ax)
		}
		shape[ax] *= k
	}
	if len(todo) == 0 {
		n.Op, n.Inputs = graph.Reshape, []string{src}
		return nil
	}
	cur := c.d.g.Tensors[src].Shape
	for i, ax := range todo {
		copies := slices.Repeat([]string{src}, reps[ax])
		cur = withAxis(cur, ax, cur[ax]*reps[ax])
		if i == len(todo)-1 {
			n.Op, n.Attrs, n.Inputs = graph.Concat, &graph.ConcatAttrs{Axis: ax}, copies
			return nil
		}
		src = c.step(graph.Concat, &graph.ConcatAttrs{Axis: ax}, copies, "tiled", x.DType, cur, out.Quant).Name
	}
	return nil
}

// reverse maps REVERSE_V2 (axes) to a Slice with stride -1 on each axis.
func (c *opctx) reverse(n *graph.Node) error {
	x, _, err := c.copyIO()
	if err != nil {
		return err
	}
	axes, err := c.constInts(1, "axis")
	if err != nil {
		return err
	}
	a := fullSlice(x.Shape)
	for _, v := range axes {
		ax, err := c.axis(v, len(x.Shape))
		if err != nil {
			return err
		}
		a.Begin[ax], a.End[ax], a.Stride[ax] = x.Shape[ax]-1, -1, -1
	}
	n.Op, n.Attrs, n.Inputs = graph.Slice, a, []string{x.Name}
	return nil
}

// folded maps the operators whose output is known at compile time: SHAPE
// and RANK of a tensor (mcugen's shapes are static), ZEROS_LIKE (stored
// zeros, as TFLite writes), FILL of constant dims and value, and
// BROADCAST_ARGS of constant shapes.
func (c *opctx) folded(_ *graph.Node) error {
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if out.NumElements() > maxFolded {
		return c.errorf("output %q of %d elements is too large to fold into a constant (at most %d)", out.Name, out.NumElements(), maxFolded)
	}
	d := graph.NewData(out.DType, slices.Clone(out.Shape))
	switch c.code {
	case codeShape, codeRank:
		x, err := c.in(0)
		if err != nil {
			return err
		}
		if out.DType != graph.Int32 && out.DType != graph.Int64 {
			return c.errorf("output is %s, want int32 or int64", out.DType)
		}
		v := []int64{int64(len(x.Shape))}
		if c.code == codeShape {
			v = make([]int64, len(x.Shape))
			for i, s := range x.Shape {
				v[i] = int64(s)
			}
		}
		if d.Len() != len(v) {
			return c.errorf("output shape %v does not hold %d values", out.Shape, len(v))
		}
		copy(d.I, v)
	case codeZerosLike:
		if _, err := c.in(0); err != nil {
			return err
		}
	case codeBroadcastArgs:
		a, err := c.constInts(0, "shape 0")
		if err != nil {
			return err
		}
		b, err := c.constInts(1, "shape 1")
		if err != nil {
			return err
		}
		if len(b) > len(a) {
			a, b = b, a
		}
		v := make([]int64, len(a))
		for i := range a {
			x, j := a[i], i-(len(a)-len(b))
			if j >= 0 {
				switch y := b[j]; {
				case x == 1:
					x = y
				case y != 1 && y != x:
					return c.errorf("shapes %v and %v do not broadcast", a, b)
				}
			}
			v[i] = int64(x)
		}
		if d.Len() != len(v) || !out.DType.IsInt() {
			return c.errorf("output %v %s does not hold the %d-axis shape", out.Shape, out.DType, len(v))
		}
		copy(d.I, v)
	case codeFill:
		dims, err := c.constInts(0, "dims")
		if err != nil {
			// Dims the graph computes from constants (TF2's converter
			// builds a GRU's zero state as SHAPE, which folds to one,
			// STRIDED_SLICE, PACK, FILL: review finding) come to the
			// output's recorded shape, where it is static. Dims a graph
			// input or state reaches are run-time values and stay refused
			// (review finding: such a FILL became a constant of the
			// recorded shape, its dims dropped).
			t, _ := c.in(0)
			if t == nil || t.IsConst() || !t.DType.IsInt() || len(out.Shape) == 0 || slices.Min(out.Shape) < 1 || !fromConstants(c.d.g, t.Name) {
				return err
			}
			dims = slices.Clone(out.Shape)
		}
		if !slices.Equal(dims, out.Shape) {
			return c.errorf("dims %v, output shape %v", dims, out.Shape)
		}
		v, err := c.in(1)
		if err != nil {
			return err
		}
		if !v.IsConst() || v.Data.Len() != 1 || v.DType != out.DType {
			return c.errorf("the value must be a constant %s scalar", out.DType)
		}
		for i := range d.Len() {
			if d.DType == graph.Float32 {
				d.F[i] = v.Data.F[0]
			} else {
				d.I[i] = v.Data.I[0]
			}
		}
	}
	return c.constOut(0, d)
}

// oneHot maps ONE_HOT (indices, depth, on_value, off_value; axis):
// Where(indices == range(depth), on, off), the indices given a new axis of
// size 1 at axis and the range shaped to broadcast along it. Constant
// indices fold.
func (c *opctx) oneHot(n *graph.Node) error {
	o, err := c.options(optOneHot)
	if err != nil {
		return err
	}
	idx, err := c.in(0)
	if err != nil {
		return err
	}
	if idx.DType != graph.Int32 && idx.DType != graph.Int64 {
		return c.errorf("indices are %s, want int32 or int64", idx.DType)
	}
	depth, err := c.constInts(1, "depth")
	if err != nil {
		return err
	}
	if len(depth) != 1 || depth[0] < 0 || depth[0] > maxTileOrBroadcastTo {
		return c.errorf("depth %v out of range", depth)
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	var onOff [2]*graph.Tensor
	for i := range onOff {
		v, err := c.in(2 + i)
		if err != nil {
			return err
		}
		if !v.IsConst() || v.Data.Len() != 1 || v.DType != out.DType {
			return c.errorf("on_value and off_value must be constant %s scalars", out.DType)
		}
		onOff[i] = v
	}
	ax, err := c.axis(int(o.i32(0, 0)), len(idx.Shape)+1) // the schema's default axis is 0
	if err != nil {
		return err
	}
	want := slices.Insert(slices.Clone(idx.Shape), ax, depth[0])
	if !slices.Equal(want, out.Shape) {
		return c.errorf("output shape %v, want %v", out.Shape, want)
	}
	// The range [depth] shaped [depth, 1, ..., 1] (one 1 per axis after ax).
	rng := graph.NewData(idx.DType, append([]int{depth[0]}, slices.Repeat([]int{1}, len(idx.Shape)-ax)...))
	for i := range rng.I {
		rng.I[i] = int64(i)
	}
	rt := c.d.g.AddConst(c.d.g.UniqueName(out.Name+"/range"), rng)
	bshape := slices.Insert(slices.Clone(idx.Shape), ax, 1)
	xi := c.step(graph.Reshape, nil, []string{idx.Name}, "indices", idx.DType, bshape, nil)
	hit := c.step(graph.Compare, &graph.CompareAttrs{Kind: "Equal"}, []string{xi.Name, rt.Name}, "hit", graph.Bool, want, nil)
	on, off := onOff[0].Name, onOff[1].Name
	if onOff[0].Quant != nil || onOff[1].Quant != nil || out.Quant != nil {
		if !sameQuant(onOff[0].Quant, out.Quant) || !sameQuant(onOff[1].Quant, out.Quant) {
			return c.errorf("on_value, off_value and output quantization differ")
		}
	}
	n.Op, n.Inputs = graph.Where, []string{hit.Name, on, off}
	return nil
}

// scatterND maps SCATTER_ND (indices [..., k], updates, a constant shape):
// zeros of that shape, each update added at its indices (duplicates sum, as
// TFLite's kernel adds them), a Scatter with the reduction "add" over a zero
// constant. A negative index counts from the end, as in ONNX, and an index
// outside its axis skips its update (TFLite calls both an error).
// Quantized updates are refused: TFLite adds the stored values, whatever
// their scale and zero point.
func (c *opctx) scatterND(n *graph.Node) error {
	idx, err := c.in(0)
	if err != nil {
		return err
	}
	upd, err := c.in(1)
	if err != nil {
		return err
	}
	if idx.DType != graph.Int32 && idx.DType != graph.Int64 {
		return c.errorf("indices are %s, want int32 or int64", idx.DType)
	}
	switch {
	case upd.Quant != nil && len(upd.Quant.Scale) > 0:
		return c.errorf("quantized updates (%s): TFLite's SCATTER_ND adds stored values whatever their scale; mcugen supports float32, int32 and int64", upd.DType)
	case upd.DType != graph.Float32 && upd.DType != graph.Int32 && upd.DType != graph.Int64:
		return c.errorf("updates are %s: mcugen supports float32, int32 and int64", upd.DType)
	}
	shape, err := c.constInts(2, "shape")
	if err != nil {
		return err
	}
	out, err := c.out(0)
	if err != nil {
		return err
	}
	if out.DType != upd.DType {
		return c.errorf("output is %s, updates %s", out.DType, upd.DType)
	}
	for _, d := range shape {
		if d < 1 || d > maxMoveElements {
			return c.errorf("output shape %v", shape)
		}
	}
	if graph.NumElements(shape) > maxMoveElements {
		return c.errorf("output shape %v has too many elements", shape)
	}
	a := &graph.ScatterAttrs{ND: true, Reduction: "add"}
	if err := graph.ScatterShapes(a, shape, idx.Shape, upd.Shape); err != nil {
		return c.errorf("%v", err)
	}
	if len(out.Shape) > 0 && !slices.Equal(out.Shape, shape) {
		return c.errorf("output %q has shape %v, the shape input says %v", out.Name, out.Shape, shape)
	}
	zeros := c.d.g.AddConst(c.d.g.UniqueName(out.Name+"/zeros"), graph.NewData(upd.DType, shape))
	n.Op, n.Attrs, n.Inputs = graph.Scatter, a, []string{zeros.Name, idx.Name, upd.Name}
	return nil
}

// copyOK refuses a quantized copy whose input and output quantization
// differ: TFLite's kernels copy the stored values (and its converter never
// writes such a model), so the result would mean something else.
func (c *opctx) copyOK(x, out *graph.Tensor) error {
	if x.DType != out.DType {
		return c.errorf("input %q is %s, output %q %s", x.Name, x.DType, out.Name, out.DType)
	}
	if (x.Quant != nil || out.Quant != nil) && !sameQuant(x.Quant, out.Quant) {
		return c.errorf("input %q and output %q are quantized differently (the operator copies stored values)", x.Name, out.Name)
	}
	return nil
}

// copyIO imports input 0 and output 0 of a data-movement operator, which
// copies stored values: copyOK must hold.
func (c *opctx) copyIO() (x, out *graph.Tensor, err error) {
	if x, err = c.in(0); err != nil {
		return nil, nil, err
	}
	if out, err = c.out(0); err != nil {
		return nil, nil, err
	}
	return x, out, c.copyOK(x, out)
}

// sameQuant reports whether two quantizations store values alike.
func sameQuant(a, b *graph.Quant) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Scale, b.Scale) && slices.Equal(a.ZeroPoint, b.ZeroPoint)
}

// fromConstants reports whether tensor name of g is a constant or comes
// from constants alone through slices, gathers, concatenations, reshapes,
// transposes and casts (a static shape's arithmetic, before the pipeline
// folds it).
func fromConstants(g *graph.Graph, name string) bool {
	prod := g.Producers()
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		t := g.Tensors[n]
		if t == nil || seen[n] {
			return t != nil
		}
		seen[n] = true
		if t.IsConst() {
			return true
		}
		p := prod[n]
		if p == nil || !slices.Contains([]graph.Op{graph.Slice, graph.Gather, graph.Concat, graph.Reshape, graph.Transpose, graph.Cast}, p.Op) {
			return false
		}
		for _, in := range p.Inputs {
			if in != "" && !walk(in) {
				return false
			}
		}
		return true
	}
	return walk(name)
}
