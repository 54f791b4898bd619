package onnx

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// More ops with no canonical counterpart, composed of canonical ops in
// ONNX layout: GatherND, OneHot, Einsum, DynamicQuantizeLinear, CastLike.

func init() {
	converters["GatherND"] = convGatherND
	converters["OneHot"] = convOneHot
	converters["Einsum"] = convEinsum
	converters["DynamicQuantizeLinear"] = convDynamicQuantize
	converters["CastLike"] = convCastLike
	// OneHot's depth fixes the output shape; its values are the two
	// outputs' constants.
	paramSlots["OneHot"] = []int{1, 2}
}

// step applies op to vals in ONNX layout, folded with the reference
// interpreter when every input is constant. out >= 0 makes the result the
// node's output out; out < 0 an intermediate named after suffix. Data
// movement keeps its input's per-tensor quantization.
func (c *nodeCtx) step(out int, suffix string, op graph.Op, attrs any, dt graph.DType, shape []int, vals ...*value) (*value, error) {
	d, ok, err := foldConst(op, attrs, dt, shape, vals)
	if err != nil {
		return nil, err
	}
	if ok {
		if !slices.Equal(d.Shape, shape) {
			d = reshapeData(d, shape)
		}
		if out >= 0 {
			if err := c.setConst(out, d); err != nil {
				return nil, err
			}
		}
		return constValue(c.out(0)+"_"+suffix, d), nil
	}
	im := c.im
	ins := make([]string, len(vals))
	for i, v := range vals {
		if op == graph.Reshape {
			ins[i] = im.memOrder(v)
		} else {
			ins[i] = im.get(v, asIs)
		}
	}
	var t *graph.Tensor
	var v *value
	if out >= 0 {
		t, v = c.newOut(out, dt, shape, asIs)
	} else {
		t = im.newTensor(c.out(0)+"_"+suffix, dt, shape)
		v = &value{name: t.Name, dt: dt, shape: slices.Clone(shape)}
		v.tensors[asIs] = t.Name
	}
	if in := im.g.Tensors[ins[0]]; in != nil && in.DType == dt && in.Quant != nil && len(in.Quant.Scale) == 1 {
		switch op {
		case graph.Reshape, graph.Transpose, graph.Slice, graph.Gather:
			q := *in.Quant
			t.Quant = &q
		}
	}
	v.prod = im.emit(op, ins, attrs, t)
	return v, nil
}

// scalarOf is a rank-0 constant of type dt holding v.
func scalarOf(dt graph.DType, v float64) *graph.Data {
	d := graph.NewData(dt, []int{})
	if dt == graph.Float32 {
		d.F[0] = float32(v)
	} else {
		d.I[0] = int64(v)
	}
	return d
}

// intsOf is a constant of type dt and the given shape holding v.
func intsOf(dt graph.DType, shape []int, v []int) *graph.Data {
	d := graph.NewData(dt, shape)
	for i, x := range v {
		if dt == graph.Float32 {
			d.F[i] = float32(x)
		} else {
			d.I[i] = int64(x)
		}
	}
	return d
}

func ones(n int) []int { return slices.Repeat([]int{1}, n) }

// GatherND (batch_dims b, indices [..., k]) is a Gather along the data's
// axes b..b+k-1 flattened into one (with the b batch axes before them):
// index Σ idx[..., j]·stride_j plus the batch offset, negative indices
// counting from the end of their axis. Constant indices fold to the flat
// indices; run-time ones are computed by Mod (the wrap), Mul, Slice and Add.
func convGatherND(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	idx, err := c.need(1)
	if err != nil {
		return err
	}
	if idx.dt != graph.Int64 && idx.dt != graph.Int32 {
		return fmt.Errorf("indices are %s, want int64", idx.dt)
	}
	b := int(c.int("batch_dims", 0))
	r, q := len(x.shape), len(idx.shape)
	if q < 1 {
		return fmt.Errorf("indices are a scalar")
	}
	k := idx.shape[q-1]
	if b < 0 || b >= min(r, q) {
		return fmt.Errorf("batch_dims %d for data of rank %d and indices of rank %d", b, r, q)
	}
	if !slices.Equal(x.shape[:b], idx.shape[:b]) {
		return fmt.Errorf("batch dimensions differ: data %v, indices %v", x.shape, idx.shape)
	}
	if k < 1 || k > r-b {
		return fmt.Errorf("index depth %d for data of rank %d and batch_dims %d", k, r, b)
	}
	lead := slices.Clone(idx.shape[:q-1])
	rest := x.shape[b+k:]
	outShape := append(slices.Clone(lead), rest...)
	if err := checkShape(outShape); err != nil {
		return fmt.Errorf("output %w", err)
	}
	axes := x.shape[b : b+k]
	strides := graph.Strides(axes)
	R := graph.NumElements(axes)
	M := graph.NumElements(lead[b:]) // index rows per batch
	flatShape := append([]int{graph.NumElements(x.shape[:b]) * R}, rest...)
	// The Gather's indices: shaped lead ([1] for a single row, so that
	// the Gather never sees a scalar).
	gshape := lead
	if len(gshape) == 0 {
		gshape = []int{1}
	}
	var fi *value
	if idx.c != nil {
		v := idx.c.Ints()
		d := graph.NewData(graph.Int64, gshape)
		for row := range d.Len() {
			at := (row / M) * R
			for j := range k {
				p := v[row*k+j]
				if p < 0 {
					p += axes[j]
				}
				if p < 0 || p >= axes[j] {
					return fmt.Errorf("index %d out of range for axis %d of size %d", v[row*k+j], b+j, axes[j])
				}
				at += p * strides[j]
			}
			d.I[row] = int64(at)
		}
		fi = constValue(c.out(0)+"_flat_index", d)
	} else {
		// Mod by the axis sizes wraps negative indices (and keeps any
		// index inside its own axis).
		dims := constValue(c.out(0)+"_dims", intsOf(idx.dt, []int{k}, axes))
		w, err := c.step(-1, "wrapped", graph.Mod, nil, idx.dt, idx.shape, idx, dims)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(strides, func(s int) bool { return s != 1 }) {
			st := constValue(c.out(0)+"_strides", intsOf(idx.dt, []int{k}, strides))
			if w, err = c.step(-1, "scaled", graph.Mul, &graph.BinaryAttrs{}, idx.dt, idx.shape, w, st); err != nil {
				return err
			}
		}
		colShape := append(slices.Clone(lead), 1)
		sum := w
		if k > 1 {
			sum = nil
			for j := range k {
				begin, end := make([]int, q), slices.Clone(idx.shape)
				begin[q-1], end[q-1] = j, j+1
				col, err := c.step(-1, "column", graph.Slice, &graph.SliceAttrs{Begin: begin, End: end, Stride: ones(q)}, idx.dt, colShape, w)
				if err != nil {
					return err
				}
				if sum == nil {
					sum = col
				} else if sum, err = c.step(-1, "flat", graph.Add, &graph.BinaryAttrs{}, idx.dt, colShape, sum, col); err != nil {
					return err
				}
			}
		}
		if b > 0 {
			offShape := append(slices.Clone(lead[:b]), ones(len(lead)-b+1)...)
			off := graph.NewData(idx.dt, offShape)
			for i := range off.I {
				off.I[i] = int64(i * R)
			}
			if sum, err = c.step(-1, "batch_offset", graph.Add, &graph.BinaryAttrs{}, idx.dt, colShape, sum, constValue(c.out(0)+"_offsets", off)); err != nil {
				return err
			}
		}
		fi = sum
		if !slices.Equal(sum.shape, gshape) {
			if fi, err = c.step(-1, "flat_index", graph.Reshape, nil, idx.dt, gshape, sum); err != nil {
				return err
			}
		}
	}
	flat := x
	if !slices.Equal(flatShape, x.shape) {
		if flat, err = c.step(-1, "rows", graph.Reshape, nil, x.dt, flatShape, x); err != nil {
			return err
		}
	}
	gout := append(slices.Clone(gshape), rest...)
	if slices.Equal(gout, outShape) {
		_, err = c.step(0, "", graph.Gather, &graph.GatherAttrs{Axis: 0}, x.dt, outShape, flat, fi)
		return err
	}
	g, err := c.step(-1, "gathered", graph.Gather, &graph.GatherAttrs{Axis: 0}, x.dt, gout, flat, fi)
	if err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Reshape, nil, x.dt, outShape, g)
	return err
}

// OneHot (indices, depth, values [off, on], axis) is
// Where(indices' == range(depth), on, off): the indices (negative ones
// plus depth) given a new axis of 1 at axis, the range shaped [depth, 1,
// ...] to broadcast along it. Constant inputs fold.
func convOneHot(im *importer, c *nodeCtx) error {
	idx, err := c.need(0)
	if err != nil {
		return err
	}
	if idx.dt == graph.Bool {
		return fmt.Errorf("indices are bool")
	}
	dd, err := c.constIn(1, "OneHot depth")
	if err != nil {
		return err
	}
	if dd == nil || dd.Len() != 1 {
		return fmt.Errorf("depth must be one value")
	}
	fd := dd.Float(0)
	if !(fd >= 1) || fd > maxElements {
		return unsupportedf("OneHot depth %v", fd)
	}
	depth := int(fd)
	vals, err := c.need(2)
	if err != nil {
		return err
	}
	if graph.NumElements(vals.shape) != 2 || len(vals.shape) != 1 {
		return fmt.Errorf("values of shape %v, want [2]", vals.shape)
	}
	ax, err := normAxis(int(c.int("axis", -1)), len(idx.shape)+1)
	if err != nil {
		return err
	}
	want := slices.Insert(slices.Clone(idx.shape), ax, depth)
	if err := checkShape(want); err != nil {
		return fmt.Errorf("output %w", err)
	}
	if idx.dt != graph.Int32 && idx.dt != graph.Int64 {
		// ONNX casts the indices to int64 (floats truncate); narrower
		// integers would also overflow index + depth and the range.
		if idx, err = c.step(-1, "indices_int64", graph.Cast, &graph.CastAttrs{To: graph.Int64}, graph.Int64, idx.shape, idx); err != nil {
			return err
		}
	}
	w := idx
	if lo, _ := idx.dt.Range(); idx.dt == graph.Float32 || lo < 0 {
		zero := constValue(c.out(0)+"_zero", scalarOf(idx.dt, 0))
		neg, err := c.step(-1, "negative", graph.Compare, &graph.CompareAttrs{Kind: "Less"}, graph.Bool, idx.shape, idx, zero)
		if err != nil {
			return err
		}
		up, err := c.step(-1, "plus_depth", graph.Add, &graph.BinaryAttrs{}, idx.dt, idx.shape, idx, constValue(c.out(0)+"_depth", scalarOf(idx.dt, float64(depth))))
		if err != nil {
			return err
		}
		if w, err = c.step(-1, "wrapped", graph.Where, nil, idx.dt, idx.shape, neg, up, idx); err != nil {
			return err
		}
	}
	w, err = c.step(-1, "indices", graph.Reshape, nil, idx.dt, slices.Insert(slices.Clone(idx.shape), ax, 1), w)
	if err != nil {
		return err
	}
	rng := graph.NewData(idx.dt, append([]int{depth}, ones(len(idx.shape)-ax)...))
	for i := range depth {
		if idx.dt == graph.Float32 {
			rng.F[i] = float32(i)
		} else {
			rng.I[i] = int64(i)
		}
	}
	hit, err := c.step(-1, "hit", graph.Compare, &graph.CompareAttrs{Kind: "Equal"}, graph.Bool, want, w, constValue(c.out(0)+"_range", rng))
	if err != nil {
		return err
	}
	var off, on *value
	if vals.c != nil {
		off = constValue(c.out(0)+"_off", reshapeData(sliceData(vals.c, []int{0}, []int{1}, []int{1}), []int{}))
		on = constValue(c.out(0)+"_on", reshapeData(sliceData(vals.c, []int{1}, []int{1}, []int{1}), []int{}))
	} else {
		pick := func(i int, suffix string) (*value, error) {
			return c.step(-1, suffix, graph.Slice, &graph.SliceAttrs{Begin: []int{i}, End: []int{i + 1}, Stride: []int{1}}, vals.dt, []int{1}, vals)
		}
		if off, err = pick(0, "off"); err != nil {
			return err
		}
		if on, err = pick(1, "on"); err != nil {
			return err
		}
	}
	_, err = c.step(0, "", graph.Where, nil, vals.dt, want, hit, on, off)
	return err
}

// einsumTerm is one operand's (or the output's) labels: letters, and the
// dimensions an ellipsis stands for as labels 1000, 1001, ...
type einsumTerm []int

const ellipsisLabel = 1000

func labelName(l int) string {
	if l >= ellipsisLabel {
		return fmt.Sprintf("...[%d]", l-ellipsisLabel)
	}
	return string(rune(l))
}

// parseEinsumTerm reads the letters of one term; "..." stands for the
// remaining rank - letters dimensions (ell of them, right-aligned against
// the widest ellipsis, maxEll).
func parseEinsumTerm(s string) (letters []int, ellAt int, err error) {
	ellAt = -1
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			letters = append(letters, int(ch))
		case ch == '.' && strings.HasPrefix(s[i:], "..."):
			if ellAt >= 0 {
				return nil, 0, fmt.Errorf("two ellipses in %q", s)
			}
			ellAt = len(letters)
			i += 2
		default:
			return nil, 0, fmt.Errorf("bad character %q in %q", ch, s)
		}
	}
	return letters, ellAt, nil
}

// parseEinsum returns each operand's labels and the output's.
func parseEinsum(eq string, shapes [][]int) ([]einsumTerm, einsumTerm, error) {
	eq = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, eq)
	lhs, rhs, arrow := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(shapes) {
		return nil, nil, fmt.Errorf("equation %q has %d operands, the node %d inputs", eq, len(parts), len(shapes))
	}
	type parsed struct {
		letters []int
		ellAt   int
	}
	ps := make([]parsed, len(parts))
	maxEll := 0
	for i, p := range parts {
		l, at, err := parseEinsumTerm(p)
		if err != nil {
			return nil, nil, err
		}
		ell := len(shapes[i]) - len(l)
		if at < 0 && ell != 0 || ell < 0 {
			return nil, nil, fmt.Errorf("term %q for an input of rank %d", p, len(shapes[i]))
		}
		ps[i] = parsed{l, at}
		maxEll = max(maxEll, ell)
	}
	expand := func(letters []int, at, ell int) einsumTerm {
		if at < 0 {
			return slices.Clone(letters)
		}
		t := slices.Clone(letters[:at])
		for e := maxEll - ell; e < maxEll; e++ {
			t = append(t, ellipsisLabel+e)
		}
		return append(t, letters[at:]...)
	}
	ins := make([]einsumTerm, len(parts))
	count := map[int]int{}
	for i, p := range ps {
		ins[i] = expand(p.letters, p.ellAt, len(shapes[i])-len(p.letters))
		for _, l := range ins[i] {
			count[l]++
		}
	}
	var out einsumTerm
	if arrow {
		l, at, err := parseEinsumTerm(rhs)
		if err != nil {
			return nil, nil, err
		}
		if at < 0 && maxEll > 0 {
			return nil, nil, fmt.Errorf("the output %q has no ellipsis for the inputs' %d dimensions of one", rhs, maxEll)
		}
		out = expand(l, max(at, 0), maxEll)
		for i, x := range out {
			if count[x] == 0 {
				return nil, nil, fmt.Errorf("output label %s is in no input", labelName(x))
			}
			if slices.Contains(out[:i], x) {
				return nil, nil, fmt.Errorf("output label %s repeats", labelName(x))
			}
		}
	} else {
		for e := range maxEll {
			out = append(out, ellipsisLabel+e)
		}
		var once []int
		for l, n := range count {
			if n == 1 && l < ellipsisLabel {
				once = append(once, l)
			}
		}
		sort.Ints(once)
		out = append(out, once...)
	}
	return ins, out, nil
}

// Einsum of one or two operands without a label repeated inside one
// operand: labels of size 1 against a larger size elsewhere are dropped
// (broadcast), labels in one operand only and not in the output are summed
// out (Reduce Sum), and the rest is a BatchMatMul (a Mul when nothing is
// contracted) of [batch, kept, contracted] by [batch, contracted, kept]
// with Transposes and Reshapes around it.
func convEinsum(im *importer, c *nodeCtx) error {
	n := c.nIn()
	if n < 1 || n > 2 {
		return unsupportedf("Einsum of %d operands (supported: 1 or 2)", n)
	}
	xs := make([]*value, n)
	shapes := make([][]int, n)
	for i := range xs {
		x, err := c.need(i)
		if err != nil {
			return err
		}
		if x.dt != graph.Float32 {
			return unsupportedf("Einsum on %s (supported: float32)", x.dt)
		}
		xs[i], shapes[i] = x, x.shape
	}
	ins, out, err := parseEinsum(c.str("equation", ""), shapes)
	if err != nil {
		return err
	}
	size := map[int]int{}
	for i, t := range ins {
		for j, l := range t {
			if slices.Contains(t[:j], l) {
				return unsupportedf("Einsum %q: label %s repeats in operand %d (a diagonal)", c.str("equation", ""), labelName(l), i)
			}
			d := shapes[i][j]
			if s, ok := size[l]; !ok || s == 1 {
				size[l] = d
			} else if d != s && d != 1 {
				return fmt.Errorf("label %s has sizes %d and %d", labelName(l), s, d)
			}
		}
	}
	// Drop size-1 labels that broadcast against a larger size.
	for i, t := range ins {
		keep, shape := einsumTerm{}, []int{}
		for j, l := range t {
			if shapes[i][j] == 1 && size[l] != 1 {
				continue
			}
			keep = append(keep, l)
			shape = append(shape, shapes[i][j])
		}
		if len(keep) != len(t) {
			if xs[i], err = c.step(-1, fmt.Sprintf("in%d_squeezed", i), graph.Reshape, nil, graph.Float32, shape, xs[i]); err != nil {
				return err
			}
			ins[i] = keep
		}
	}
	dims := func(t einsumTerm) []int {
		s := make([]int, len(t))
		for i, l := range t {
			s[i] = size[l]
		}
		return s
	}
	inOther := func(i, l int) bool {
		for k, t := range ins {
			if k != i && slices.Contains(t, l) {
				return true
			}
		}
		return slices.Contains(out, l)
	}
	// toOut is the permutation from labels have to the output's; it moves
	// data unless only size-1 dimensions move.
	toOut := func(have einsumTerm) (perm []int, moves bool) {
		perm = make([]int, len(out))
		for i, l := range out {
			perm[i] = slices.Index(have, l)
		}
		return perm, !graph.IsIdentityPerm(perm) && !onlyUnitMoves(dims(have), perm)
	}
	if n == 1 {
		// A Reduce Sum over the labels the output drops, then a Transpose
		// when data moves; the last op writes the output.
		x := xs[0]
		var axes []int
		var have einsumTerm
		for j, l := range ins[0] {
			if slices.Contains(out, l) {
				have = append(have, l)
			} else {
				axes = append(axes, j)
			}
		}
		perm, moves := toOut(have)
		if len(axes) > 0 {
			sum := &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: axes}
			if graph.IsIdentityPerm(perm) {
				_, err = c.step(0, "", graph.Reduce, sum, graph.Float32, dims(out), x)
				return err
			}
			if x, err = c.step(-1, "sum", graph.Reduce, sum, graph.Float32, dims(have), x); err != nil {
				return err
			}
		}
		switch {
		case moves:
			_, err = c.step(0, "", graph.Transpose, &graph.TransposeAttrs{Perm: perm}, graph.Float32, dims(out), x)
		case slices.Equal(x.shape, dims(out)):
			c.alias(0, x)
		default:
			_, err = c.step(0, "", graph.Reshape, nil, graph.Float32, dims(out), x)
		}
		return err
	}
	// Sum out what only one operand has and the output does not keep.
	for i, t := range ins {
		var axes []int
		var keep einsumTerm
		for j, l := range t {
			if inOther(i, l) {
				keep = append(keep, l)
			} else {
				axes = append(axes, j)
			}
		}
		if len(axes) == 0 {
			continue
		}
		if xs[i], err = c.step(-1, fmt.Sprintf("in%d_sum", i), graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceSum, Axes: axes}, graph.Float32, dims(keep), xs[i]); err != nil {
			return err
		}
		ins[i] = keep
	}
	a, b := ins[0], ins[1]
	var batch, m, nn, k einsumTerm
	for _, l := range out {
		switch inA, inB := slices.Contains(a, l), slices.Contains(b, l); {
		case inA && inB:
			batch = append(batch, l)
		case inA:
			m = append(m, l)
		default:
			nn = append(nn, l)
		}
	}
	for _, l := range a {
		if slices.Contains(b, l) && !slices.Contains(out, l) {
			k = append(k, l)
		}
	}
	bp, mp, np, kp := graph.NumElements(dims(batch)), graph.NumElements(dims(m)), graph.NumElements(dims(nn)), graph.NumElements(dims(k))
	// arrange moves operand i to the labels want, then reshapes it to flat.
	arrange := func(i int, want einsumTerm, flat []int) (*value, error) {
		perm := make([]int, len(want))
		for j, l := range want {
			perm[j] = slices.Index(ins[i], l)
		}
		v := xs[i]
		if !graph.IsIdentityPerm(perm) {
			op, attrs := graph.Op(graph.Transpose), any(&graph.TransposeAttrs{Perm: perm})
			if onlyUnitMoves(v.shape, perm) {
				op, attrs = graph.Reshape, nil
			}
			var err error
			if v, err = c.step(-1, fmt.Sprintf("in%d_moved", i), op, attrs, graph.Float32, dims(want), v); err != nil {
				return nil, err
			}
		}
		if slices.Equal(v.shape, flat) {
			return v, nil
		}
		return c.step(-1, fmt.Sprintf("in%d_flat", i), graph.Reshape, nil, graph.Float32, flat, v)
	}
	av, err := arrange(0, slices.Concat(batch, m, k), []int{bp, mp, kp})
	if err != nil {
		return err
	}
	bv, err := arrange(1, slices.Concat(batch, k, nn), []int{bp, kp, np})
	if err != nil {
		return err
	}
	// [batch, m, n] becomes the output: the product writes it directly
	// when the shapes agree, else a Reshape or (when data moves) a Transpose.
	have := slices.Concat(batch, m, nn)
	perm, moves := toOut(have)
	flat := []int{bp, mp, np}
	pout, pshape := -1, flat
	if !moves && slices.Equal(flat, dims(out)) {
		pout, pshape = 0, dims(out)
	}
	var prod *value
	if kp == 1 {
		// Nothing to sum: an outer product per batch, by broadcasting.
		prod, err = c.step(pout, "product", graph.Mul, &graph.BinaryAttrs{}, graph.Float32, pshape, av, bv)
	} else {
		prod, err = c.step(pout, "matmul", graph.BatchMatMul, &graph.BatchMatMulAttrs{}, graph.Float32, pshape, av, bv)
	}
	if err != nil || pout == 0 {
		return err
	}
	if !moves {
		_, err = c.step(0, "", graph.Reshape, nil, graph.Float32, dims(out), prod)
		return err
	}
	if !slices.Equal(flat, dims(have)) {
		if prod, err = c.step(-1, "unflat", graph.Reshape, nil, graph.Float32, dims(have), prod); err != nil {
			return err
		}
	}
	_, err = c.step(0, "", graph.Transpose, &graph.TransposeAttrs{Perm: perm}, graph.Float32, dims(out), prod)
	return err
}

// DynamicQuantizeLinear (x -> y uint8, y_scale, y_zero_point):
// y_scale = (max(0, max x) - min(0, min x)) / 255,
// y_zero_point = saturate(round_half_even(0 - min / y_scale)),
// y = saturate(round_half_even(x / y_scale) + y_zero_point).
func convDynamicQuantize(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "DynamicQuantizeLinear"); err != nil {
		return err
	}
	f := graph.Float32
	bin := &graph.BinaryAttrs{}
	axes := make([]int, len(x.shape))
	for i := range axes {
		axes[i] = i
	}
	scalar := []int{}
	zero := constValue(c.out(0)+"_zero", scalarF(0))
	lo, err := c.step(-1, "min", graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceMin, Axes: axes}, f, scalar, x)
	if err != nil {
		return err
	}
	hi, err := c.step(-1, "max", graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceMax, Axes: axes}, f, scalar, x)
	if err != nil {
		return err
	}
	if lo, err = c.step(-1, "min_adjusted", graph.Minimum, bin, f, scalar, lo, zero); err != nil {
		return err
	}
	if hi, err = c.step(-1, "max_adjusted", graph.Maximum, bin, f, scalar, hi, zero); err != nil {
		return err
	}
	rng, err := c.step(-1, "range", graph.Sub, bin, f, scalar, hi, lo)
	if err != nil {
		return err
	}
	scale, err := c.step(1, "scale", graph.Div, bin, f, scalar, rng, constValue(c.out(0)+"_qmax", scalarF(255)))
	if err != nil {
		return err
	}
	ms, err := c.step(-1, "min_scaled", graph.Div, bin, f, scalar, lo, scale)
	if err != nil {
		return err
	}
	zp, err := c.step(-1, "zero_point_fp", graph.Sub, bin, f, scalar, zero, ms)
	if err != nil {
		return err
	}
	u8 := &graph.ClipAttrs{Min: 0, Max: 255}
	round := &graph.MathAttrs{Fn: graph.MathRound}
	if zp, err = c.step(-1, "zero_point_clipped", graph.Clip, u8, f, scalar, zp); err != nil {
		return err
	}
	if zp, err = c.step(-1, "zero_point_rounded", graph.Math, round, f, scalar, zp); err != nil {
		return err
	}
	if c.out(2) != "" {
		if _, err := c.step(2, "", graph.Cast, &graph.CastAttrs{To: graph.UInt8}, graph.UInt8, scalar, zp); err != nil {
			return err
		}
	}
	y, err := c.step(-1, "scaled", graph.Div, bin, f, x.shape, x, scale)
	if err != nil {
		return err
	}
	if y, err = c.step(-1, "rounded", graph.Math, round, f, x.shape, y); err != nil {
		return err
	}
	if y, err = c.step(-1, "shifted", graph.Add, bin, f, x.shape, y, zp); err != nil {
		return err
	}
	if y, err = c.step(-1, "clipped", graph.Clip, u8, f, x.shape, y); err != nil {
		return err
	}
	_, err = c.step(0, "", graph.Cast, &graph.CastAttrs{To: graph.UInt8}, graph.UInt8, x.shape, y)
	return err
}

// CastLike is Cast to the second input's element type.
func convCastLike(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	like, err := c.need(1)
	if err != nil {
		return err
	}
	dt := like.dt
	if x.dt == dt {
		c.alias(0, x)
		return nil
	}
	if x.c != nil {
		return c.setConst(0, graph.CastData(x.c, dt))
	}
	xs := im.get(x, asIs)
	if t := im.g.Tensors[xs]; t != nil && t.Quant != nil {
		return unsupportedf("CastLike of a quantized value from %s to %s", x.dt, dt)
	}
	c.emit1(graph.Cast, []string{xs}, &graph.CastAttrs{To: dt}, dt, x.shape, asIs)
	return nil
}
