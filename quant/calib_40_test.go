package quant

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
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
}
