package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// catGraph concatenates int8 tensors of the shapes in along axis (one
// quantization, so the values are copied).
func catGraph(axis int, out []int, in ...[]int) *graph.Graph {
	g := graph.New("cat", "tflite")
	q := &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}
	var names []string
	for i, s := range in {
		n := fmt.Sprintf("x%d", i)
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Int8, Shape: s, Quant: q})
		names = append(names, n)
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: out, Quant: q})
	g.AddNode(&graph.Node{Name: "y", Op: graph.Concat, Inputs: names, Outputs: []string{"y"}, Attrs: &graph.ConcatAttrs{Axis: axis}})
	g.Inputs, g.Outputs = names, []string{"y"}
	return g
}

// wantRunCopies compiles g with o and fails the test unless its C calls
// gen_copy_s8 exactly where copies says it should.
func wantRunCopies(t *testing.T, g *graph.Graph, name string, o Options, copies bool) {
	t.Helper()
	s, err := CompileGraph(g, name, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := cContains(s.Files, "gen_copy_s8(&"); got != copies {
		t.Errorf("%s: run copies in the C: %v, want %v", name, got, copies)
	}
}

// An int8 concatenation moves each run that is contiguous in its input and
// in the output with one gen_copy_s8 (memcpy) where the run is 8 bytes or
// longer: along channels, 16-byte runs; along rows, each input whole; runs
// of 3 channels keep the element loop. Bit-exact against the reference
// interpreter on the M4 and the M55 (whose schedules take the copies as
// they are), and a 16×16 channel concatenation of two 16-channel maps
// takes at most a third of the instructions the element loop took on the
// M4 (36,109 in session 55).
func TestConcatCopiesRuns56(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		axis     int
		out      []int
		in       [][]int
		copies   bool
		maxM4Ins int64
	}{
		{3, []int{1, 16, 16, 32}, [][]int{{1, 16, 16, 16}, {1, 16, 16, 16}}, true, 36109 / 3},
		{1, []int{1, 12, 5, 8}, [][]int{{1, 4, 5, 8}, {1, 8, 5, 8}}, true, 0},
		{2, []int{1, 3, 9, 8}, [][]int{{1, 3, 4, 8}, {1, 3, 5, 8}}, true, 0},
		{3, []int{1, 4, 4, 7}, [][]int{{1, 4, 4, 3}, {1, 4, 4, 4}}, false, 0},
	} {
		name := fmt.Sprintf("axis%d-%v", c.axis, c.out)
		t.Run(name, func(t *testing.T) {
			for _, board := range []string{"mps2-an386", "mps3-an547"} {
				b := qemuBoard(t, board)
				g := func() *graph.Graph { return catGraph(c.axis, c.out, c.in...) }
				o := Options{Board: b, Version: "test"}
				wantRunCopies(t, g(), name+" on "+board, o, c.copies)
				ins := checkedRun(t, g(), name, o, 2, 56)
				if board == "mps2-an386" && c.maxM4Ins > 0 && ins > c.maxM4Ins {
					t.Errorf("%s: %d instructions on the M4, want at most %d", name, ins, c.maxM4Ins)
				}
				t.Logf("%s on %s: %d instructions", name, board, ins)
			}
		})
	}
}

// An int8 reshape that copies (here from the caller's input to the
// caller's output, which share no storage) moves its bytes with one
// gen_copy_s8, bit-exact on the M4.
func TestReshapeCopiesRun56(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	g := func() *graph.Graph {
		g := graph.New("rs", "tflite")
		q := &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}
		g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 6, 5, 8}, Quant: q})
		g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, 240}, Quant: q})
		g.AddNode(&graph.Node{Name: "y", Op: graph.Reshape, Inputs: []string{"x"}, Outputs: []string{"y"}})
		g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
		return g
	}
	o := Options{Board: b, Version: "test"}
	s, err := CompileGraph(g(), "rs", o)
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, "gen_copy_s8(&") {
		t.Error("the reshape's copy is not one gen_copy_s8")
	}
	ins := checkedRun(t, g(), "rs", o, 2, 56)
	t.Logf("240-byte reshape copy: %d instructions", ins)
}

// An int8 slice moves its runs contiguous in input and output with
// gen_copy_s8 (eight channels of each pixel here; a whole-row slice one run
// per row), and keeps the element loop at a channel stride of 2: bit-exact
// on the M4.
func TestSliceCopiesRuns56(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		begin, end, stride []int
		out                []int
		copies             bool
	}{
		{[]int{0, 2, 1, 4}, []int{1, 6, 6, 12}, []int{1, 1, 1, 1}, []int{1, 4, 5, 8}, true},
		{[]int{0, 1, 0, 0}, []int{1, 7, 8, 16}, []int{1, 2, 1, 1}, []int{1, 3, 8, 16}, true},
		{[]int{0, 0, 0, 0}, []int{1, 8, 8, 16}, []int{1, 1, 1, 2}, []int{1, 8, 8, 8}, false},
	} {
		name := fmt.Sprintf("slice-%v-%v", c.begin, c.stride)
		t.Run(name, func(t *testing.T) {
			g := func() *graph.Graph {
				g := graph.New("sl", "tflite")
				q := &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}
				g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, 8, 8, 16}, Quant: q})
				g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: c.out, Quant: q})
				g.AddNode(&graph.Node{Name: "y", Op: graph.Slice, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: &graph.SliceAttrs{Begin: c.begin, End: c.end, Stride: c.stride}})
				g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
				return g
			}
			o := Options{Board: b, Version: "test"}
			wantRunCopies(t, g(), name, o, c.copies)
			ins := checkedRun(t, g(), name, o, 2, 56)
			t.Logf("%s: %d instructions", name, ins)
		})
	}
}

// An int8 constant Pad fills its output with the padding value (memset)
// and copies the input's runs into the interior: bit-exact on the M4 for
// a spatial pad of a 16-channel map (16-byte runs), a pad of three
// channels (the element loop over the interior) and a channel pad, and at
// most a quarter of the instructions the per-element bounds tests took on
// the first (11,584 in session 55).
func TestPadFillsThenCopies56(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		in   []int
		pads []int
		max  int64
	}{
		{[]int{1, 6, 5, 16}, []int{0, 1, 2, 0, 0, 2, 1, 0}, 11584 / 4},
		{[]int{1, 6, 5, 3}, []int{0, 1, 1, 0, 0, 1, 1, 0}, 0},
		{[]int{1, 4, 4, 8}, []int{0, 0, 0, 2, 0, 0, 0, 6}, 0},
	} {
		name := fmt.Sprintf("pad-%v-%v", c.in, c.pads)
		t.Run(name, func(t *testing.T) {
			out := make([]int, 4)
			for d := range out {
				out[d] = c.in[d] + c.pads[d] + c.pads[d+4]
			}
			g := func() *graph.Graph {
				g := graph.New("pd", "tflite")
				q := &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}
				g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: c.in, Quant: q})
				g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: out, Quant: q})
				g.AddNode(&graph.Node{Name: "y", Op: graph.Pad, Inputs: []string{"x"}, Outputs: []string{"y"},
					Attrs: &graph.PadAttrs{Pads: c.pads, Mode: "constant"}})
				g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
				return g
			}
			o := Options{Board: b, Version: "test"}
			if s, err := CompileGraph(g(), name, o); err != nil {
				t.Fatal(err)
			} else if !cContains(s.Files, "gen_fill_s8(&") {
				t.Errorf("%s: the C does not fill the output first", name)
			}
			ins := checkedRun(t, g(), name, o, 2, 56)
			if c.max > 0 && ins > c.max {
				t.Errorf("%s: %d instructions, want at most %d", name, ins, c.max)
			}
			t.Logf("%s: %d instructions", name, ins)
		})
	}
}

// On ARMv6-M (the micro:bit's Cortex-M0) newlib-nano's memcpy copies byte
// by byte under 16 bytes or unaligned, after a call, so the run copies
// there call it only for aligned runs of 16 bytes or more (core knobs
// copy_min, copy_aligned; a review found 8-byte channel runs 44% slower
// through it): a concatenation of 8-channel maps and one of misaligned
// 33-byte runs keep the element loop, one of 16-channel maps copies and
// takes fewer instructions than its element loop (the knob set past every
// run); all bit-exact.
func TestCopiesOnARMv6M56(t *testing.T) {
	b := qemuBoard(t, "microbit")
	for _, c := range []struct {
		out    []int
		in     [][]int
		copies bool
	}{
		{[]int{1, 8, 8, 16}, [][]int{{1, 8, 8, 8}, {1, 8, 8, 8}}, false},
		{[]int{1, 1, 32, 65}, [][]int{{1, 1, 32, 32}, {1, 1, 32, 33}}, false},
		{[]int{1, 8, 8, 32}, [][]int{{1, 8, 8, 16}, {1, 8, 8, 16}}, true},
	} {
		name := fmt.Sprintf("m0-%v", c.out)
		t.Run(name, func(t *testing.T) {
			g := func() *graph.Graph { return catGraph(3, c.out, c.in...) }
			o := Options{Board: b, Version: "test"}
			wantRunCopies(t, g(), name, o, c.copies)
			ins := checkedRun(t, g(), name, o, 1, 56)
			if c.copies {
				loop := Options{Board: b, Version: "test", Knobs: map[string]map[string]int{"concat": {"copy_min": 1 << 20}}}
				if l := checkedRun(t, g(), name+"-loop", loop, 1, 56); ins >= l {
					t.Errorf("%s: %d instructions with the copies, %d with the element loop", name, ins, l)
				}
			}
		})
	}
}
