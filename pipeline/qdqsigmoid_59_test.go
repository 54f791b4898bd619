package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A QDQ Sigmoid or Tanh whose output parameters TFLite's kernels do not
// take (ONNX Runtime calibrates a sigmoid to scale 1/255; a tanh here at
// 1/100) folds to an int8 table instead of running in float. On the
// Cortex-M4 every one of the 256 input values gives what ONNX's float32
// DequantizeLinear, the function and QuantizeLinear give (computed here),
// and the folded graph has no float node left.
func TestQDQSigmoidTable59(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	const sx, zx = 0.04, -3
	bl := onnx.NewBuilder("sig", 13, 1)
	x := bl.Input("x", graph.Float32, 1, 256)
	dq := bl.Node("DequantizeLinear", []string{bl.Node("QuantizeLinear", []string{x, bl.Scalar("xs", graph.Float32, sx), bl.Scalar("xz", graph.Int8, zx)}),
		bl.Scalar("xs2", graph.Float32, sx), bl.Scalar("xz2", graph.Int8, zx)})
	type out struct {
		op string
		s  float64
		z  float64
		f  func(float64) float64
	}
	outs := []*out{
		{"Sigmoid", 1.0 / 255, -128, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"Tanh", 1.0 / 100, 5, math.Tanh},
	}
	for _, o := range outs {
		ys, yz := bl.Scalar(o.op+"_ys", graph.Float32, o.s), bl.Scalar(o.op+"_yz", graph.Int8, o.z)
		q := bl.Node("QuantizeLinear", []string{bl.Node(o.op, []string{dq}), ys, yz})
		bl.Output(bl.Node("DequantizeLinear", []string{q, ys, yz}), graph.Float32)
	}
	g, err := onnx.Import("sig", bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileGraph(g, "sig", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	maths := 0
	for _, n := range s.Graph.Nodes {
		if n.Op == graph.Sigmoid || n.Op == graph.Tanh {
			t.Errorf("%s stayed %s", n.Name, n.Op)
		}
		if n.Op == graph.Math {
			maths++
		}
	}
	if maths != 2 {
		t.Errorf("%d int8 Math tables, want 2", maths)
	}
	in := graph.NewData(graph.Float32, []int{1, 256})
	for i := range in.F {
		in.F[i] = float32(sx * float64(i-128-zx))
	}
	ex, err := s.Execute([]map[string]*graph.Data{{g.Inputs[0]: in}}, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.AllMatch() {
		t.Error("the firmware differs from the reference interpreter")
	}
	for k, o := range outs {
		got := ex.Outputs[0][k]
		bad := 0
		for i := range 256 {
			// As ONNX's DequantizeLinear and QuantizeLinear compute, in
			// float32: (q − z)·s, the function rounded to float32, then
			// its quotient by the float32 scale rounded half to even.
			q := float64(i - 128)
			x := float32(sx) * float32(q-zx)
			want := math.Max(-128, math.Min(127, math.RoundToEven(float64(float32(o.f(float64(x)))/float32(o.s)))+o.z))
			if g := math.Round(float64(got.F[i])/o.s) + o.z; g != want {
				if bad++; bad <= 3 {
					t.Errorf("%s(%g): %g, want %g", o.op, sx*(q-zx), g, want)
				}
			}
		}
	}
}
