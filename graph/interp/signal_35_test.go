package interp

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// run35 runs one node of op on the inputs ins (name → data, in order),
// its output of type dt, and returns the output's values (ints, or floats
// as float64).
func run35(t *testing.T, op graph.Op, attrs any, dt graph.DType, ins ...*graph.Data) []float64 {
	t.Helper()
	g := graph.New("s35", "tflite")
	feed := map[string]*graph.Data{}
	var names []string
	for i, d := range ins {
		name := string(rune('a' + i))
		g.AddTensor(&graph.Tensor{Name: name, DType: d.DType, Shape: d.Shape})
		g.Inputs = append(g.Inputs, name)
		names = append(names, name)
		feed[name] = d
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: dt})
	g.AddNode(&graph.Node{Name: "y", Op: op, Attrs: attrs, Inputs: names, Outputs: []string{"y"}})
	g.Outputs = []string{"y"}
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	res, err := Run(g, feed)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for i := range res["y"].Len() {
		out = append(out, res["y"].Float(i))
	}
	return out
}

func ints35(dt graph.DType, shape []int, v ...int64) *graph.Data {
	d := graph.NewData(dt, shape)
	copy(d.I, v)
	return d
}

// TestSignalStream35HandWorked: the streaming ops' arithmetic on examples
// worked by hand from TFLite Micro's kernels.
func TestSignalStream35HandWorked(t *testing.T) {
	fl := func(v ...float64) []float64 { return v }
	// Framer, frame 3, step 2, no prefill: capacity 4, a window of 4 + 2·2
	// samples (state 9 8 7 6, input 1 2 3 4). From count 0 the first step
	// leaves 2 samples (not a frame), the second 4: the frame is the 3
	// oldest of those 4, the input's 1 2 3; 2 samples stay.
	framer := func(p graph.SignalStreamPart) *graph.SignalFramerAttrs {
		return &graph.SignalFramerAttrs{FrameSize: 3, FrameStep: 2, Frames: 2, Part: p}
	}
	w := ints35(graph.Int16, []int{8}, 9, 8, 7, 6, 1, 2, 3, 4)
	c0 := ints35(graph.Int32, []int{1}, 0)
	c2 := ints35(graph.Int32, []int{1}, 2)
	// Stacker, 2 channels, left 1, right 0, step 1: the first frame (count
	// −1) is written twice and the stack is full at once.
	stacker := func(p graph.SignalStreamPart) *graph.SignalStackerAttrs {
		return &graph.SignalStackerAttrs{Channels: 2, Left: 1, Right: 0, Step: 1, Part: p}
	}
	sw := ints35(graph.Int16, []int{4}, 5, 6, 7, 8)
	frame := ints35(graph.Int16, []int{2}, 1, -1)
	first := ints35(graph.Int32, []int{1}, -1)
	// OverlapAdd, step 2 on frames [1 2 3] and [4 5 6] with the buffer
	// 10 20 30: 11 22 33 gives 11 22 and leaves 33 0 0; 37 5 6 gives 37 5
	// and leaves 6 0 0. In int16 32767 + 1 stays 32767.
	ov := func(p graph.SignalStreamPart) *graph.SignalOverlapAddAttrs {
		return &graph.SignalOverlapAddAttrs{FrameStep: 2, Part: p}
	}
	fr := ints35(graph.Int16, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	buf := ints35(graph.Int16, []int{3}, 10, 20, 30)
	sat := ints35(graph.Int16, []int{3}, 32767, -32768, 30)
	frF := graph.NewData(graph.Float32, []int{2, 3})
	copy(frF.F, []float32{0.5, 0.25, 1, -1, 2, 3})
	bufF := graph.NewData(graph.Float32, []int{3})
	copy(bufF.F, []float32{1, 2, 4})
	for _, c := range []struct {
		name  string
		op    graph.Op
		attrs any
		dt    graph.DType
		ins   []*graph.Data
		want  []float64
	}{
		{"framer frames", graph.SignalFramer, framer(graph.StreamOutput), graph.Int16, []*graph.Data{w, c0}, fl(0, 0, 0, 1, 2, 3)},
		{"framer flag", graph.SignalFramer, framer(graph.StreamValid), graph.Bool, []*graph.Data{c0}, fl(0)},
		{"framer count", graph.SignalFramer, framer(graph.StreamCount), graph.Int32, []*graph.Data{c0}, fl(2)},
		// From count 2 both frames are complete: 4 samples end at the
		// first step (7 6 1 2: frame 7 6 1), then 1 2 3 4 (frame 1 2 3).
		{"framer steady", graph.SignalFramer, framer(graph.StreamOutput), graph.Int16, []*graph.Data{w, c2}, fl(7, 6, 1, 1, 2, 3)},
		{"framer steady flag", graph.SignalFramer, framer(graph.StreamValid), graph.Bool, []*graph.Data{c2}, fl(1)},
		{"stacker window", graph.SignalStacker, stacker(graph.StreamWindow), graph.Int16, []*graph.Data{sw, frame, first}, fl(1, -1, 1, -1)},
		{"stacker window later", graph.SignalStacker, stacker(graph.StreamWindow), graph.Int16, []*graph.Data{sw, frame, c0}, fl(7, 8, 1, -1)},
		{"stacker stack", graph.SignalStacker, stacker(graph.StreamOutput), graph.Int16, []*graph.Data{sw, first}, fl(5, 6, 7, 8)},
		{"stacker count", graph.SignalStacker, stacker(graph.StreamCount), graph.Int32, []*graph.Data{first}, fl(1)},
		{"stacker not full", graph.SignalStacker, stacker(graph.StreamOutput), graph.Int16, []*graph.Data{sw, c0}, fl(0, 0, 0, 0)},
		{"stacker not full flag", graph.SignalStacker, stacker(graph.StreamValid), graph.Bool, []*graph.Data{c0}, fl(0)},
		{"overlap", graph.SignalOverlapAdd, ov(graph.StreamOutput), graph.Int16, []*graph.Data{fr, buf}, fl(11, 22, 37, 5)},
		{"overlap buffer", graph.SignalOverlapAdd, ov(graph.StreamWindow), graph.Int16, []*graph.Data{fr, buf}, fl(6, 0, 0)},
		{"overlap saturates", graph.SignalOverlapAdd, ov(graph.StreamOutput), graph.Int16, []*graph.Data{fr, sat}, fl(32767, -32766, 37, 5)},
		{"overlap no buffer", graph.SignalOverlapAdd, ov(graph.StreamWindow), graph.Int16, []*graph.Data{fr}, fl(6, 0, 0)},
		{"overlap float", graph.SignalOverlapAdd, ov(graph.StreamOutput), graph.Float32, []*graph.Data{frF, bufF}, fl(1.5, 2.25, 4, 2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := run35(t, c.op, c.attrs, c.dt, c.ins...); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
