package onnx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Nodes out of order import in an order where each comes after its
// inputs' writers (onnx2c's test_nodes_out_of_order and its Pad, Slice and
// Resize tests put the Constant after its reader: "not defined before
// use", user journey). y = Add(t, t) written before t = Relu(x): for
// x = (-1, 2), y = (0, 4). A cycle and an input no node writes are still
// refused, each with its reason.
func TestNodesOutOfOrder(t *testing.T) {
	bl := onnx.NewBuilder("ooo", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 2)
	r := bl.Node("Relu", []string{x})
	y := bl.Node("Add", []string{r, r})
	bl.Output(y, graph.Float32)
	nodes := bl.Model().Graph.Nodes
	nodes[0], nodes[1] = nodes[1], nodes[0]
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 2}, -1, 2)})
	checkData(t, "Add(Relu(x)) written backwards", got[0], graph.Float32, []int{1, 2}, []float64{0, 4})

	bl = onnx.NewBuilder("cycle", 13, 1)
	x = bl.Input("x", graph.Float32, 1, 2)
	a := bl.Node("Add", []string{x, "b"})
	bl.Model().Graph.Nodes = append(bl.Model().Graph.Nodes, &onnx.Node{Name: "nb", OpType: "Relu", Input: []string{a}, Output: []string{"b"}})
	bl.Output(a, graph.Float32)
	if _, err := onnx.Import("cycle", bl.Model(), onnx.Options{}); err == nil || !strings.Contains(err.Error(), "the nodes form a cycle") {
		t.Errorf("a cycle: %v", err)
	}

	bl = onnx.NewBuilder("undefined", 13, 1)
	x = bl.Input("x", graph.Float32, 1, 2)
	bl.Output(bl.Node("Add", []string{x, "nowhere"}), graph.Float32)
	if _, err := onnx.Import("undefined", bl.Model(), onnx.Options{}); err == nil || !strings.Contains(err.Error(), `input "nowhere" is not defined before use`) {
		t.Errorf("an undefined input: %v", err)
	}
}

// A model of com.microsoft operators alone has no ai.onnx opset import and
// needs none: the refusal names the operator mcugen does not take, where
// it blamed the missing import (onnx2c's QLinearAdd and QLinearMul tests).
func TestOtherDomainOnlyModel(t *testing.T) {
	bl := onnx.NewBuilder("qadd", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 2)
	bl.Output(bl.Node("QLinearAdd", []string{x, x}), graph.Float32)
	m := bl.Model()
	m.OpsetImport = []onnx.OpsetID{{Domain: "com.microsoft", Version: 1}}
	m.Graph.Nodes[0].Domain = "com.microsoft"
	_, err := onnx.Import("qadd", m, onnx.Options{})
	if err == nil || !strings.Contains(err.Error(), "com.microsoft::QLinearAdd") || strings.Contains(err.Error(), "opset import") {
		t.Errorf("import: %v", err)
	}
	// A standard operator still needs the ai.onnx import.
	m.Graph.Nodes[0].Domain, m.Graph.Nodes[0].OpType = "", "Add"
	if _, err := onnx.Import("add", m, onnx.Options{}); err == nil || !strings.Contains(err.Error(), "no ai.onnx opset import") {
		t.Errorf("a standard node without the import: %v", err)
	}
}

// Opset 22 (ONNX 1.17's default) changed only types (bfloat16): a model of
// it imports and runs as opset 21's. Opset 23 is refused, naming the range.
// MatMul of x (1×2) by w = ((1, 2), (3, 4)): (1·1 + 2·3, 1·2 + 2·4) = (7, 10).
func TestOpset22(t *testing.T) {
	bl := onnx.NewBuilder("mm", 22, 1)
	x := bl.Input("x", graph.Float32, 1, 2)
	w := bl.Init("w", f32([]int{2, 2}, 1, 2, 3, 4))
	bl.Output(bl.Node("MatMul", []string{x, w}), graph.Float32)
	got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{1, 2}, 1, 2)})
	checkData(t, "MatMul at opset 22", got[0], graph.Float32, []int{1, 2}, []float64{7, 10})
	bl.Model().OpsetImport[0].Version = 23
	if _, err := onnx.Import("mm23", bl.Model(), onnx.Options{}); err == nil || !strings.Contains(err.Error(), "opset 23 (supported: 1 to 22)") {
		t.Errorf("opset 23: %v", err)
	}
}

// MatMul takes numpy's 1-D operands: a vector on the left is a row, on the
// right a column, and the axis each adds is dropped (onnx2c's MatMul
// tests). With v = (1, 2) and m = ((1, 2), (3, 4)): v·m = (7, 10),
// m·v = (5, 11), v·v = 5, with each operand constant or an input.
func TestMatMulVectors(t *testing.T) {
	vec := f32([]int{2}, 1, 2)
	mat := f32([]int{2, 2}, 1, 2, 3, 4)
	for _, c := range []struct {
		name  string
		a, b  *graph.Data
		shape []int
		want  []float64
	}{
		{"vec-mat", vec, mat, []int{2}, []float64{7, 10}},
		{"mat-vec", mat, vec, []int{2}, []float64{5, 11}},
		{"vec-vec", vec, vec, []int{}, []float64{5}},
	} {
		for _, constB := range []bool{false, true} {
			bl := onnx.NewBuilder("mm", 13, 1)
			a := bl.Input("a", graph.Float32, c.a.Shape...)
			in := map[string]*graph.Data{"a": c.a}
			var b string
			if constB {
				b = bl.Init("b", c.b)
			} else {
				b = bl.Input("b", graph.Float32, c.b.Shape...)
				in["b"] = c.b
			}
			bl.Output(bl.Node("MatMul", []string{a, b}), graph.Float32)
			got := runOne(t, bl, in)
			checkData(t, fmt.Sprintf("%s (constant b %v)", c.name, constB), got[0], graph.Float32, c.shape, c.want)
		}
	}
}
