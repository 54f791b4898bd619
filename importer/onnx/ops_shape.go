package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Converters of data-movement ops: Reshape and friends, Transpose, Concat,
// Pad, Slice, Split, Resize.

func convReshapeLike(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	var out []int
	switch c.n.OpType {
	case "Flatten":
		axis := int(c.int("axis", 1))
		if axis < 0 {
			axis += r
		}
		if axis < 0 || axis > r {
			return fmt.Errorf("axis %d out of range for rank %d", c.int("axis", 1), r)
		}
		out = []int{graph.NumElements(x.shape[:axis]), graph.NumElements(x.shape[axis:])}
	case "Reshape":
		var spec []int
		if im.opset < 5 {
			spec, _ = c.ints("shape")
		} else {
			d, err := c.constIn(1, "Reshape shape")
			if err != nil {
				return err
			}
			if d == nil {
				return fmt.Errorf("no shape input")
			}
			spec = d.Ints()
		}
		allowZero := c.int("allowzero", 0) != 0
		infer := -1
		known := 1
		out = make([]int, len(spec))
		for i, s := range spec {
			switch {
			case s == -1 && infer < 0:
				infer = i
				continue
			case s == 0 && !allowZero:
				if i >= r {
					return fmt.Errorf("shape %v copies dimension %d of a rank-%d input", spec, i, r)
				}
				s = x.shape[i]
			case s < 0:
				return fmt.Errorf("bad shape %v", spec)
			}
			// Checked before the product is formed, so it cannot wrap.
			if s > maxElements || known > 0 && s > maxElements/known {
				return fmt.Errorf("bad shape %v: more than %d elements", spec, maxElements)
			}
			out[i] = s
			known *= s
		}
		total := graph.NumElements(x.shape)
		if infer >= 0 {
			if known == 0 || total%known != 0 {
				return fmt.Errorf("cannot reshape %v to %v", x.shape, spec)
			}
			out[infer] = total / known
		}
	case "Squeeze", "Unsqueeze":
		var axes []int
		var ok bool
		if im.opset >= 13 {
			d, err := c.constIn(1, c.n.OpType+" axes")
			if err != nil {
				return err
			}
			if d != nil {
				axes, ok = d.Ints(), true
			}
		} else {
			axes, ok = c.ints("axes")
		}
		if c.n.OpType == "Squeeze" {
			drop := make([]bool, r)
			for _, a := range axes {
				n, err := normAxis(a, r)
				if err != nil {
					return err
				}
				if x.shape[n] != 1 {
					return fmt.Errorf("cannot squeeze axis %d of shape %v", a, x.shape)
				}
				drop[n] = true
			}
			for i, d := range x.shape {
				if !drop[i] && (ok || d != 1) {
					out = append(out, d)
				}
			}
			out = append([]int{}, out...)
		} else {
			if !ok {
				return fmt.Errorf("Unsqueeze without axes")
			}
			nr := r + len(axes)
			ins := make([]bool, nr)
			for _, a := range axes {
				n, err := normAxis(a, nr)
				if err != nil {
					return err
				}
				if ins[n] {
					return fmt.Errorf("axis %d repeated", a)
				}
				ins[n] = true
			}
			j := 0
			out = make([]int, nr)
			for i := range out {
				if ins[i] {
					out[i] = 1
				} else {
					out[i] = x.shape[j]
					j++
				}
			}
		}
	}
	if graph.NumElements(out) != graph.NumElements(x.shape) {
		return fmt.Errorf("cannot reshape %v to %v", x.shape, out)
	}
	if x.c != nil {
		return c.setConst(0, reshapeData(x.c, out))
	}
	c.emit1(graph.Reshape, []string{im.memOrder(x)}, nil, x.dt, out, asIs)
	return nil
}

func convTranspose(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	perm, ok := c.ints("perm")
	if !ok {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if len(perm) != r {
		return fmt.Errorf("perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	for i, p := range perm {
		if p < 0 {
			p += r
			perm[i] = p
		}
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("bad perm %v", perm)
		}
		seen[p] = true
	}
	out := permuteShape(x.shape, perm)
	if x.c != nil {
		return c.setConst(0, transposeData(x.c, perm))
	}
	src := im.get(x, actLayout(x))
	gp := perm // from the source tensor's layout to the output's ONNX layout
	if actLayout(x) == nhwc {
		gp = make([]int, r)
		for i, p := range perm {
			gp[i] = nhwcAxis(p)
		}
	}
	name := c.out(0)
	if name == "" {
		return nil
	}
	// The output is made lazily in whichever layout its readers want, each
	// straight from the source: a model that transposes NHWC to NCHW around
	// its convs (tf2onnx) then needs no Transpose at all.
	v := &value{name: name, dt: x.dt, shape: out}
	var toN []int
	if r == 4 {
		toN = make([]int, 4)
		for i := range toN {
			toN[i] = gp[toNHWC[i]]
		}
		if graph.IsIdentityPerm(toN) {
			v.primary = nhwc
		}
	}
	v.lazy = func(l layout) string {
		p, base := gp, name
		if l == nhwc {
			p, base = toN, name+"_nhwc"
		}
		if graph.IsIdentityPerm(p) {
			return src
		}
		return im.transpose(src, p, base)
	}
	im.vals[name] = v
	return nil
}

func convConcat(im *importer, c *nodeCtx) error {
	var vs []*value
	for i := 0; i < c.nIn(); i++ {
		if v := c.in(i); v != nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return fmt.Errorf("no inputs")
	}
	r := len(vs[0].shape)
	if c.attr("axis") == nil && im.opset >= 4 {
		return fmt.Errorf("no axis attribute")
	}
	axis := int(c.int("axis", 1))
	axis, err := normAxis(axis, r)
	if err != nil {
		return err
	}
	out := slices.Clone(vs[0].shape)
	out[axis] = 0
	allConst := true
	var ds []*graph.Data
	for _, v := range vs {
		if len(v.shape) != r || v.dt != vs[0].dt {
			return fmt.Errorf("inputs of shapes %v and %v (%s, %s)", vs[0].shape, v.shape, vs[0].dt, v.dt)
		}
		for i := range v.shape {
			if i != axis && v.shape[i] != out[i] {
				return fmt.Errorf("inputs of shapes %v and %v", vs[0].shape, v.shape)
			}
		}
		out[axis] += v.shape[axis]
		allConst = allConst && v.c != nil
		ds = append(ds, v.c)
	}
	if err := checkShape(out); err != nil {
		return fmt.Errorf("output %w", err)
	}
	if allConst {
		return c.setConst(0, concatData(ds, axis, out))
	}
	l := pickLayout(r, vs...)
	ga := axis
	if l == nhwc {
		ga = nhwcAxis(axis)
	}
	var ins []string
	for _, v := range vs {
		ins = append(ins, im.get(v, l))
	}
	c.emit1(graph.Concat, ins, &graph.ConcatAttrs{Axis: ga}, vs[0].dt, out, l)
	return nil
}

func convPad(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	mode := c.str("mode", "constant")
	if mode != "constant" && mode != "reflect" && mode != "edge" {
		return unsupportedf("Pad mode %q", mode)
	}
	var pads []int
	var val float64
	if im.opset < 11 {
		var ok bool
		if pads, ok = c.ints("pads"); !ok {
			pads, _ = c.ints("paddings")
		}
		val = float64(c.float("value", 0))
	} else {
		d, err := c.constIn(1, "Pad pads")
		if err != nil {
			return err
		}
		if d == nil {
			return fmt.Errorf("no pads input")
		}
		pads = d.Ints()
		if v, err := c.constIn(2, "Pad value"); err != nil {
			return err
		} else if v != nil && v.Len() > 0 {
			val = v.Float(0)
		}
		if ax, err := c.constIn(3, "Pad axes"); err != nil {
			return err
		} else if ax != nil {
			axes := ax.Ints()
			if len(pads) != 2*len(axes) {
				return fmt.Errorf("%d pads for %d axes", len(pads), len(axes))
			}
			full := make([]int, 2*r)
			for i, a := range axes {
				n, err := normAxis(a, r)
				if err != nil {
					return err
				}
				full[n], full[n+r] = pads[i], pads[i+len(axes)]
			}
			pads = full
		}
	}
	if len(pads) != 2*r {
		return fmt.Errorf("%d pads for rank %d", len(pads), r)
	}
	out := slices.Clone(x.shape)
	for i := 0; i < r; i++ {
		if pads[i] < 0 || pads[i+r] < 0 {
			return unsupportedf("negative pads %v", pads)
		}
		if pads[i] > maxElements || pads[i+r] > maxElements {
			return fmt.Errorf("pads %v: each must be at most %d", pads, maxElements)
		}
		if mode == "reflect" && (pads[i] >= x.shape[i] || pads[i+r] >= x.shape[i]) && (pads[i] > 0 || pads[i+r] > 0) {
			return unsupportedf("reflect pads %v larger than the input %v", pads, x.shape)
		}
		out[i] += pads[i] + pads[i+r]
	}
	if err := checkShape(out); err != nil {
		return fmt.Errorf("padded %w", err)
	}
	l := actLayout(x)
	gp := pads
	if l == nhwc {
		gp = make([]int, 2*r)
		for i := 0; i < r; i++ {
			gp[i], gp[i+r] = pads[toNHWC[i]], pads[toNHWC[i]+r]
		}
	}
	c.emit1(graph.Pad, []string{im.get(x, l)}, &graph.PadAttrs{Pads: gp, Value: val, Mode: mode}, x.dt, out, l)
	return nil
}

func convSlice(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	var starts, ends, axes, steps []int
	if im.opset < 10 {
		starts, _ = c.ints("starts")
		ends, _ = c.ints("ends")
		axes, _ = c.ints("axes")
	} else {
		get := func(i int) ([]int, error) {
			d, err := c.constIn(i, "Slice parameter")
			if err != nil || d == nil {
				return nil, err
			}
			return d.Ints(), nil
		}
		if starts, err = get(1); err != nil {
			return err
		}
		if ends, err = get(2); err != nil {
			return err
		}
		if axes, err = get(3); err != nil {
			return err
		}
		if steps, err = get(4); err != nil {
			return err
		}
	}
	if len(starts) != len(ends) || (axes != nil && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return fmt.Errorf("starts %v, ends %v, axes %v, steps %v differ in length", starts, ends, axes, steps)
	}
	begin, end, stride := make([]int, r), slices.Clone(x.shape), make([]int, r)
	for i := range stride {
		stride[i] = 1
	}
	done := make([]bool, r)
	for i := range starts {
		a := i
		if axes != nil {
			if a, err = normAxis(axes[i], r); err != nil {
				return err
			}
		}
		if done[a] {
			return fmt.Errorf("axis %d sliced twice", a)
		}
		done[a] = true
		st := 1
		if steps != nil {
			st = steps[i]
		}
		if st == 0 {
			return fmt.Errorf("step 0")
		}
		dim := x.shape[a]
		// A step past the whole axis takes its first element only, as a
		// step of dim does (and keeps the arithmetic below from wrapping).
		st = max(-max(dim, 1), min(max(dim, 1), st))
		b, e := starts[i], ends[i]
		if b < 0 {
			b += dim
		}
		if e < 0 {
			e += dim
		}
		if st > 0 {
			b, e = max(0, min(dim, b)), max(0, min(dim, e))
		} else {
			b, e = max(0, min(dim-1, b)), max(-1, min(dim-1, e))
		}
		begin[a], end[a], stride[a] = b, e, st
	}
	out := make([]int, r)
	for i := range out {
		n := 0
		if stride[i] > 0 && end[i] > begin[i] {
			n = (end[i]-begin[i]-1)/stride[i] + 1
		} else if stride[i] < 0 && end[i] < begin[i] {
			n = (begin[i]-end[i]-1)/-stride[i] + 1
		}
		out[i] = n
	}
	if x.c != nil {
		return c.setConst(0, sliceData(x.c, begin, stride, out))
	}
	if graph.NumElements(out) == 0 {
		return unsupportedf("empty slice")
	}
	l := actLayout(x)
	if l == nhwc {
		begin, end, stride = permuteShape(begin, toNHWC), permuteShape(end, toNHWC), permuteShape(stride, toNHWC)
	}
	c.emit1(graph.Slice, []string{im.get(x, l)}, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, x.dt, out, l)
	return nil
}

func convSplit(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.shape)
	axis, err := normAxis(int(c.int("axis", 0)), r)
	if err != nil {
		return err
	}
	nOut := len(c.n.Output)
	var sizes []int
	if im.opset >= 13 {
		d, err := c.constIn(1, "Split sizes")
		if err != nil {
			return err
		}
		if d != nil {
			sizes = d.Ints()
		}
	} else {
		sizes, _ = c.ints("split")
	}
	dim := x.shape[axis]
	if sizes == nil {
		ns := int(c.int("num_outputs", int64(nOut)))
		if ns <= 0 {
			return fmt.Errorf("no outputs")
		}
		// Checked before the sizes are made: num_outputs comes from the
		// file and may be anything.
		if ns != nOut {
			return fmt.Errorf("num_outputs %d, but the node lists %d outputs", ns, nOut)
		}
		if ns > max(dim, 1) {
			return fmt.Errorf("num_outputs %d for axis %d of size %d", ns, axis, dim)
		}
		chunk := (dim + ns - 1) / ns
		for i := 0; i < ns; i++ {
			sizes = append(sizes, max(0, min(chunk, dim-i*chunk)))
		}
	}
	if len(sizes) != nOut {
		return fmt.Errorf("%d split sizes for %d outputs", len(sizes), nOut)
	}
	// The sizes cover the axis exactly (ONNX: they sum to its length); a
	// split leaving a tail was taken before (user-journey finding).
	total := 0
	for _, s := range sizes {
		if s < 0 {
			return fmt.Errorf("bad split %v", sizes)
		}
		if s > dim-total {
			return fmt.Errorf("split %v exceeds dimension %d", sizes, dim)
		}
		total += s
	}
	if total != dim {
		return fmt.Errorf("split %v sums to %d, but axis %d has %d", sizes, total, axis, dim)
	}
	start := 0
	for i, s := range sizes {
		out := slices.Clone(x.shape)
		out[axis] = s
		begin, end, stride := make([]int, r), slices.Clone(x.shape), make([]int, r)
		for j := range stride {
			stride[j] = 1
		}
		begin[axis], end[axis] = start, start+s
		start += s
		if start > dim {
			return fmt.Errorf("split %v exceeds dimension %d", sizes, dim)
		}
		if x.c != nil {
			if err := c.setConst(i, sliceData(x.c, begin, stride, out)); err != nil {
				return err
			}
			continue
		}
		if c.out(i) == "" {
			continue
		}
		if s == 0 {
			return unsupportedf("empty split")
		}
		l := actLayout(x)
		if l == nhwc {
			begin, end, stride = permuteShape(begin, toNHWC), permuteShape(end, toNHWC), permuteShape(stride, toNHWC)
		}
		t, v := c.newOut(i, x.dt, out, l)
		v.prod = im.emit(graph.Slice, []string{im.get(x, l)}, &graph.SliceAttrs{Begin: begin, End: end, Stride: stride}, t)
	}
	return nil
}

// resizeLowRank runs Resize on an input of rank 1 to 3 as a 2-D resize:
// [N,C,L] on the view [N,C,1,L] as lift1D runs a 1-D conv (audio decoders
// upsample so), [H,W] and [L] on [1,1,H,W] and [1,1,1,L] (onnx2c's "1-D"
// linear Resize tests take [1,5]). The constant scales or sizes gain the
// view's axes as 1s.
func resizeLowRank(im *importer, c *nodeCtx) error {
	x := c.in(0)
	if x == nil || len(x.shape) == 0 || len(x.shape) >= 4 {
		return convResize(im, c)
	}
	r := len(x.shape)
	// from[i] is the input axis of view axis i, -1 for an added one.
	from := []int{-1, -1, -1, -1}
	if r == 3 {
		from = []int{0, 1, -1, 2}
	} else {
		for j := range r {
			from[4-r+j] = j
		}
	}
	n := *c.n
	n.Input = slices.Clone(c.n.Input)
	first := 2 // scales, sizes; input 1 is the roi, which Resize does not read
	if im.opset < 11 {
		first = 1
	}
	for i := first; i < len(n.Input); i++ {
		v := c.in(i)
		if v == nil || v.c == nil || v.c.Len() != r {
			continue
		}
		d := graph.NewData(v.c.DType, []int{4})
		for j, k := range from {
			switch {
			case k < 0 && d.F != nil:
				d.F[j] = 1
			case k < 0:
				d.I[j] = 1
			case d.F != nil:
				d.F[j] = v.c.F[k]
			default:
				d.I[j] = v.c.I[k]
			}
		}
		name := im.g.UniqueName(v.name + "_4d")
		im.vals[name] = &value{name: name, dt: v.dt, shape: []int{4}, c: d}
		n.Input[i] = name
	}
	if r == 3 {
		return convertCtx(im, &n, lift1D(convResize, 0))
	}
	if c.out(0) == "" {
		return convResize(im, c)
	}
	view := make([]int, 4)
	for j, k := range from {
		view[j] = 1
		if k >= 0 {
			view[j] = x.shape[k]
		}
	}
	name := im.g.UniqueName(x.name + "_4d")
	t := im.newTensor(name, x.dt, view)
	src := im.get(x, asIs)
	t.Quant = im.g.Tensors[src].Quant
	im.emit(graph.Reshape, []string{src}, nil, t)
	xv := &value{name: name, dt: x.dt, shape: view}
	xv.tensors[asIs] = t.Name
	im.vals[name] = xv
	n.Input[0] = name
	n.Output = []string{c.out(0) + "_4d"}
	if err := convertCtx(im, &n, convResize); err != nil {
		return err
	}
	y := im.vals[n.Output[0]]
	yt, yv := c.newOut(0, y.dt, slices.Clone(y.shape[4-r:]), asIs)
	ysrc := im.get(y, asIs)
	yt.Quant = im.g.Tensors[ysrc].Quant
	yv.prod = im.emit(graph.Reshape, []string{ysrc}, nil, yt)
	return nil
}

func convResize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := need4(x, "Resize"); err != nil {
		return err
	}
	mode := c.str("mode", "nearest")
	coord := c.str("coordinate_transformation_mode", "half_pixel")
	if im.opset < 11 {
		coord = "asymmetric"
	}
	nearest := c.str("nearest_mode", "round_prefer_floor")
	if im.opset < 11 {
		nearest = "floor"
	}
	switch {
	case c.int("antialias", 0) != 0:
		return unsupportedf("Resize antialias")
	case c.attr("axes") != nil:
		return unsupportedf("Resize axes")
	case c.str("keep_aspect_ratio_policy", "stretch") != "stretch":
		return unsupportedf("Resize keep_aspect_ratio_policy")
	}
	gm := map[string]string{"nearest": "nearest", "linear": "bilinear", "cubic": "cubic"}[mode]
	if gm == "" {
		return unsupportedf("Resize mode %q", mode)
	}
	switch coord {
	case "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn":
	default:
		return unsupportedf("Resize coordinate_transformation_mode %q", coord)
	}
	var scales, sizes *graph.Data
	if im.opset < 11 {
		if scales, err = c.constIn(1, "Resize scales"); err != nil {
			return err
		}
	} else {
		if scales, err = c.constIn(2, "Resize scales"); err != nil {
			return err
		}
		if sizes, err = c.constIn(3, "Resize sizes"); err != nil {
			return err
		}
	}
	out := slices.Clone(x.shape)
	var scale [2]float32
	switch {
	case sizes != nil && sizes.Len() > 0:
		if sizes.Len() != 4 {
			return fmt.Errorf("sizes %v for rank 4", sizes.Ints())
		}
		out = sizes.Ints()
	case scales != nil && scales.Len() > 0:
		if scales.Len() != 4 {
			return fmt.Errorf("%d scales for rank 4", scales.Len())
		}
		for i := range out {
			s := scales.Float(i)
			if err := checkScale(s, x.shape[i]); err != nil {
				return err
			}
			out[i] = int(math.Floor(float64(x.shape[i]) * s))
		}
		scale = [2]float32{float32(scales.Float(2)), float32(scales.Float(3))}
	default:
		return fmt.Errorf("neither scales nor sizes given")
	}
	if out[0] != x.shape[0] || out[1] != x.shape[1] {
		return unsupportedf("Resize of the batch or channel axis")
	}
	if out[2] <= 0 || out[3] <= 0 || checkShape(out) != nil {
		return fmt.Errorf("output shape %v: the sizes must be positive, at most %d elements in all", out, maxElements)
	}
	attrs := &graph.ResizeAttrs{Mode: gm, Coord: coord, Nearest: nearest, Scale: scale}
	if gm == "cubic" {
		attrs.CubicA = c.float("cubic_coeff_a", -0.75)
		attrs.ExcludeOutside = c.int("exclude_outside", 0) != 0
	}
	c.emit1(graph.Resize, []string{im.get(x, nhwc)}, attrs, x.dt, out, nhwc)
	return nil
}

// checkScale refuses a resize scale that is not a positive finite number,
// or that makes an axis of n more than maxElements long: a NaN scale gave
// the output shape [1 1 -9223372036854775808 4] (robustness journey).
func checkScale[F float32 | float64](s F, n int) error {
	f := float64(s)
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return fmt.Errorf("scale %v: must be a positive finite number", f)
	}
	if float64(n)*f > maxElements {
		return fmt.Errorf("scale %v: makes an axis of %d more than %d long", f, n, maxElements)
	}
	return nil
}
