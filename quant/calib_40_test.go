package quant

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// Random calibration draws a Gather's indices within the axis it indexes
// (a table of 10 rows, axis 0; and of 3 columns, axis 1, for the second
// input), and other integer inputs over their range as before.
func TestRandomCalibIndices40(t *testing.T) {
	g := graph.New("emb", "test")
	g.AddConst("table", graph.NewData(graph.Float32, []int{10, 3}))
	for _, in := range []string{"ids", "cols", "other"} {
		g.AddTensor(&graph.Tensor{Name: in, DType: graph.Int64, Shape: []int{1, 64}})
	}
	g.AddTensor(&graph.Tensor{Name: "rows", DType: graph.Float32, Shape: []int{1, 64, 3}})
	g.AddTensor(&graph.Tensor{Name: "picked", DType: graph.Float32, Shape: []int{10, 1, 64}})
	g.AddNode(&graph.Node{Name: "g0", Op: graph.Gather, Inputs: []string{"table", "ids"}, Outputs: []string{"rows"}, Attrs: &graph.GatherAttrs{Axis: 0}})
	g.AddNode(&graph.Node{Name: "g1", Op: graph.Gather, Inputs: []string{"table", "cols"}, Outputs: []string{"picked"}, Attrs: &graph.GatherAttrs{Axis: -1}})
	g.Inputs, g.Outputs = []string{"ids", "cols", "other"}, []string{"rows", "picked"}
	max := map[string]int64{}
	for _, s := range RandomCalib(g, 8, 1) {
		for in, d := range s {
			for _, v := range d.I {
				if v < 0 {
					t.Fatalf("%s: index %d below 0", in, v)
				}
				if v > max[in] {
					max[in] = v
				}
			}
		}
	}
	if max["ids"] != 9 || max["cols"] != 2 {
		t.Errorf("largest indices drawn: ids %d (want 9, the table's last row), cols %d (want 2)", max["ids"], max["cols"])
	}
	if max["other"] <= 9 {
		t.Errorf("an input no Gather reads drew at most %d: want its range, as before", max["other"])
	}
	// An int16 index into a table longer than int16 reaches: within both.
	long := graph.New("long", "test")
	long.AddConst("table", graph.NewData(graph.Float32, []int{40000, 1}))
	long.AddTensor(&graph.Tensor{Name: "ids", DType: graph.Int16, Shape: []int{1, 4096}})
	long.AddTensor(&graph.Tensor{Name: "rows", DType: graph.Float32, Shape: []int{1, 4096, 1}})
	long.AddNode(&graph.Node{Name: "g", Op: graph.Gather, Inputs: []string{"table", "ids"}, Outputs: []string{"rows"}, Attrs: &graph.GatherAttrs{}})
	long.Inputs, long.Outputs = []string{"ids"}, []string{"rows"}
	for _, v := range RandomCalib(long, 1, 2)[0]["ids"].I {
		if v < 0 || v > 32767 {
			t.Fatalf("int16 index %d", v)
		}
	}
}

// --int8-io (IntIO) on a QDQ model whose output also feeds later layers
// makes that output int8 too (review finding: it stayed float32, where the
// model quantized in memory has it int8), with the int8 values of the
// model quantized in memory.
func TestIntIOMiddleOutput40(t *testing.T) {
	g := graph.New("midout", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 8}})
	for _, n := range []struct {
		name, in string
		rows     int
	}{{"y", "x", 8}, {"z", "r", 3}} {
		w := graph.NewData(graph.Float32, []int{n.rows, 8})
		for i := range w.F {
			w.F[i] = float32((i*7)%11-5) / 10
		}
		g.AddConst(n.name+"_w", w)
		g.AddTensor(&graph.Tensor{Name: n.name, DType: graph.Float32, Shape: []int{1, n.rows}})
		g.AddNode(&graph.Node{Name: "fc_" + n.name, Op: graph.FullyConnected, Inputs: []string{n.in, n.name + "_w", ""}, Outputs: []string{n.name}, Attrs: &graph.FullyConnectedAttrs{}})
		if n.name == "y" {
			g.AddTensor(&graph.Tensor{Name: "r", DType: graph.Float32, Shape: []int{1, 8}})
			g.AddNode(&graph.Node{Name: "relu", Op: graph.Relu, Inputs: []string{"y"}, Outputs: []string{"r"}})
		}
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{"y", "z"}
	samples := RandomCalib(g, 8, 3)
	q, _, err := PTQ(g, samples, Options{}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io := IntIO(qdqRoundTrip(t, q))
	if err := graph.Validate(io); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"y", "z"} {
		if tt := io.Tensors[o]; tt == nil || tt.DType != graph.Int8 {
			t.Fatalf("output %s: %v, want int8", o, tt)
		}
	}
	xs, xz := io.Tensors["x"].Quant.At(0)
	in := QuantizeData(samples[2]["x"], xs, xz)
	got, err := interp.Run(io, map[string]*graph.Data{"x": in})
	if err != nil {
		t.Fatal(err)
	}
	want, err := interp.Run(q, map[string]*graph.Data{"x": in})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"y", "z"} {
		if !slices.Equal(got[o].I, want[o].I) {
			t.Errorf("output %s: %v, the model quantized in memory gives %v", o, got[o].I, want[o].I)
		}
	}
}
