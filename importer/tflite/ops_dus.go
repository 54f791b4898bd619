package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

const codeDynamicUpdateSlice = 151

func init() { register((*opctx).dynamicUpdateSlice, codeDynamicUpdateSlice) }

// dynamicUpdateSlice maps DYNAMIC_UPDATE_SLICE (operand, update, start
// indices: one int32 or int64 a dimension, usually computed at run time,
// as a streaming model's ring buffer does): the operand with the update
// copied in from the start indices, each first clamped to
// [0, dim − update dim] as TFLite Micro clamps them (in 64 bits). Stored
// values are copied, so operand, update and output must share their
// quantization. It is a Scatter (ND, replace) of every update element at
// the clamped start plus its coordinates: a constant grid of coordinates
// with the clamped start broadcast onto it.
func (c *opctx) dynamicUpdateSlice(n *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	upd, err := c.in(1)
	if err != nil {
		return err
	}
	st, err := c.in(2)
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
	if err := c.copyOK(upd, out); err != nil {
		return err
	}
	r := len(x.Shape)
	if st.DType != graph.Int32 && st.DType != graph.Int64 {
		return c.errorf("start indices are %s, want int32 or int64", st.DType)
	}
	if r == 0 || !slices.Equal(st.Shape, []int{r}) {
		return c.errorf("start indices of shape %v for an operand of rank %d (want [%d])", st.Shape, r, r)
	}
	if len(upd.Shape) != r {
		return c.errorf("update of rank %d for an operand of rank %d", len(upd.Shape), r)
	}
	for i := range r {
		if upd.Shape[i] > x.Shape[i] {
			return c.errorf("update %v larger than the operand %v along dimension %d", upd.Shape, x.Shape, i)
		}
	}
	if !slices.Equal(out.Shape, x.Shape) {
		return c.errorf("output %v is not the operand's shape %v", out.Shape, x.Shape)
	}
	if graph.NumElements(upd.Shape)*r > maxMoveElements {
		return c.errorf("update %v has too many elements", upd.Shape)
	}
	hi := c.temp("start_max", st.DType, []int{r}, nil)
	hi.Data = graph.NewData(st.DType, []int{r})
	for i := range r {
		hi.Data.I[i] = int64(x.Shape[i] - upd.Shape[i])
	}
	bin := &graph.BinaryAttrs{}
	start := c.mathNode(graph.Minimum, bin, []string{st.Name, hi.Name}, "start_clamped_high", st.DType, []int{r}, nil)
	start = c.mathNode(graph.Maximum, bin, []string{start, c.mathScalar("zero", st.DType, 0, nil)}, "start_clamped", st.DType, []int{r}, nil)
	if st.DType != graph.Int32 {
		start = c.mathNode(graph.Cast, &graph.CastAttrs{To: graph.Int32}, []string{start}, "start_int32", graph.Int32, []int{r}, nil)
	}
	ones := make([]int, r+1)
	for i := range ones {
		ones[i] = 1
	}
	ones[r] = r
	start = c.mathNode(graph.Reshape, nil, []string{start}, "start_row", graph.Int32, ones, nil)
	gshape := append(slices.Clone(upd.Shape), r)
	grid := c.temp("coordinates", graph.Int32, gshape, nil)
	grid.Data = graph.NewData(graph.Int32, gshape)
	coord := make([]int, r)
	for e := range graph.NumElements(upd.Shape) {
		for d := range r {
			grid.Data.I[e*r+d] = int64(coord[d])
		}
		for d := r - 1; d >= 0; d-- {
			if coord[d]++; coord[d] < upd.Shape[d] {
				break
			}
			coord[d] = 0
		}
	}
	idx := c.mathNode(graph.Add, bin, []string{grid.Name, start}, "indices", graph.Int32, gshape, nil)
	n.Op, n.Attrs, n.Inputs = graph.Scatter, &graph.ScatterAttrs{ND: true}, []string{x.Name, idx, upd.Name}
	return nil
}
