package onnx

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// qopSeed is a model of ONNX Runtime's com.microsoft quantized operators
// (FuzzDecode's seed for the rewrite in msqops.go): QuantizeLinear,
// QLinearAdd, QLinearConcat, QGemm with its int32 C, QLinearSoftmax and
// QLinearWhere, then DequantizeLinear.
func qopSeed() []byte {
	b := NewBuilder("qop", 13, 1)
	b.Model().OpsetImport = append(b.Model().OpsetImport, OpsetID{Domain: msDomain, Version: 1})
	ms := func(op string, ins []string, attrs ...*Attribute) string {
		out := b.Node(op, ins, attrs...)
		b.m.Graph.Nodes[len(b.m.Graph.Nodes)-1].Domain = msDomain
		return out
	}
	x := b.Input("x", graph.Float32, 1, 4)
	s, z := b.Scalar("s", graph.Float32, 0.1), b.Scalar("z", graph.Int8, 0)
	q := b.Node("QuantizeLinear", []string{x, s, z})
	w := b.Init("w", &graph.Data{DType: graph.Int8, Shape: []int{4, 4}, I: []int64{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16}})
	c := b.Init("c", &graph.Data{DType: graph.Int32, Shape: []int{4}, I: []int64{10, -20, 30, -40}})
	add := ms("QLinearAdd", []string{q, s, z, q, s, z, s, z})
	cat := ms("QLinearConcat", []string{s, z, q, s, z, add, s, z}, IntAttr("axis", 0))
	gemm := ms("QGemm", []string{cat, s, z, w, s, z, c, s, z}, IntAttr("transB", 1))
	sm := ms("QLinearSoftmax", []string{gemm, s, z, b.Scalar("ys", graph.Float32, 1.0/256), b.Scalar("yz", graph.Int8, -128)}, IntAttr("opset", 13))
	cond := b.Init("cond", &graph.Data{DType: graph.Bool, Shape: []int{4}, I: []int64{1, 0, 0, 1}})
	wh := ms("QLinearWhere", []string{cond, sm, "ys", "yz", sm, "ys", "yz", "ys", "yz"})
	b.Output(b.Node("DequantizeLinear", []string{wh, "ys", "yz"}), graph.Float32)
	return b.Model().Marshal()
}

// TestQOperatorSeedImports: the seed is a valid model (FuzzDecode mutates
// something that imports).
func TestQOperatorSeedImports(t *testing.T) {
	g, err := Decode("qop", qopSeed(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Validate(g); err != nil {
		t.Fatal(err)
	}
}
