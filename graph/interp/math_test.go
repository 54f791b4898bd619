package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int8 Math, worked by hand: x scale 0.05 zero point 10, y scale 0.1 zero
// point -20. x = 30 is 1.0: exp(1) = 2.71828 / 0.1 = 27.18 -> 27 - 20 = 7;
// x = 10 is 0: exp(0) = 1 -> 10 - 20 = -10; x = -128 is -6.9:
// exp(-6.9) = 0.001 -> 0 - 20 = -20; x = 127 is 5.85: exp(5.85) = 347 ->
// 3472 saturates at 127.
func TestMathInt8HandWorked(t *testing.T) {
	y := runInt(t, graph.Math, &graph.MathAttrs{Fn: graph.MathExp}, graph.Int8, []int{4}, pq(0.1, -20),
		qt{d: qd(graph.Int8, []int{4}, 30, 10, -128, 127), q: pq(0.05, 10), input: true})
	wantInts(t, y, 7, -10, -20, 127)
	// Elu alpha 0.5 on x = -10 (-1.0): 0.5 (e^-1 - 1) = -0.31606 / 0.1 = -3.16 -> -3 - 20 = -23.
	y = runInt(t, graph.Math, &graph.MathAttrs{Fn: graph.MathElu, Alpha: 0.5}, graph.Int8, []int{2}, pq(0.1, -20),
		qt{d: qd(graph.Int8, []int{2}, -10, 30), q: pq(0.05, 10), input: true})
	wantInts(t, y, -23, -10)
}

// Float Math against values worked by hand (ONNX's definitions).
func TestMathFloatHandWorked(t *testing.T) {
	x := fd([]int{4}, -1.5, -0.5, 0.5, 2.5)
	cases := []struct {
		a    graph.MathAttrs
		want []float32
	}{
		{graph.MathAttrs{Fn: graph.MathRound}, []float32{-2, -0, 0, 2}}, // half to even
		{graph.MathAttrs{Fn: graph.MathFloor}, []float32{-2, -1, 0, 2}},
		{graph.MathAttrs{Fn: graph.MathCeil}, []float32{-1, -0, 1, 3}},
		{graph.MathAttrs{Fn: graph.MathSign}, []float32{-1, -1, 1, 1}},
		{graph.MathAttrs{Fn: graph.MathSoftsign}, []float32{-0.6, -1.0 / 3, 1.0 / 3, 2.5 / 3.5}},
		{graph.MathAttrs{Fn: graph.MathThresholdedRelu, Alpha: 0.5}, []float32{0, 0, 0, 2.5}},
		{graph.MathAttrs{Fn: graph.MathSquare}, []float32{2.25, 0.25, 0.25, 6.25}},
		{graph.MathAttrs{Fn: graph.MathElu, Alpha: 2}, []float32{float32(2 * (math.Exp(-1.5) - 1)), float32(2 * (math.Exp(-0.5) - 1)), 0.5, 2.5}},
		{graph.MathAttrs{Fn: graph.MathCelu, Alpha: 2}, []float32{float32(2 * (math.Exp(-0.75) - 1)), float32(2 * (math.Exp(-0.25) - 1)), 0.5, 2.5}},
		{graph.MathAttrs{Fn: graph.MathSoftplus}, []float32{float32(math.Log1p(math.Exp(-1.5))), float32(math.Log1p(math.Exp(-0.5))), float32(math.Log1p(math.Exp(0.5))), float32(math.Log1p(math.Exp(2.5)))}},
	}
	for _, c := range cases {
		a := c.a
		closeTo(t, mustRun(t, graph.Math, &a, []int{4}, x).F, c.want)
	}
}

// Reduce over a 2x3 matrix [[1 -2 3] [-4 5 -6]], worked by hand.
func TestReduceHandWorked(t *testing.T) {
	x := fd([]int{2, 3}, 1, -2, 3, -4, 5, -6)
	cases := []struct {
		k     graph.ReduceKind
		axes  []int
		shape []int
		want  []float32
	}{
		{graph.ReduceSum, []int{1}, []int{2}, []float32{2, -5}},
		{graph.ReduceSum, nil, []int{1, 1}, []float32{-3}},
		{graph.ReduceMax, []int{0}, []int{3}, []float32{1, 5, 3}},
		{graph.ReduceMin, []int{-1}, []int{2}, []float32{-2, -6}},
		{graph.ReduceProd, []int{1}, []int{2}, []float32{-6, 120}},
		{graph.ReduceL1, []int{1}, []int{2}, []float32{6, 15}},
		{graph.ReduceL2, []int{0}, []int{3}, []float32{float32(math.Sqrt(17)), float32(math.Sqrt(29)), float32(math.Sqrt(45))}},
		{graph.ReduceSumSquare, []int{1}, []int{2}, []float32{14, 77}},
		{graph.ReduceLogSumExp, []int{0}, []int{3}, []float32{float32(math.Log(math.E + math.Exp(-4))), float32(math.Log(math.Exp(-2) + math.Exp(5))), float32(math.Log(math.Exp(3) + math.Exp(-6)))}},
	}
	for _, c := range cases {
		closeTo(t, mustRun(t, graph.Reduce, &graph.ReduceAttrs{Kind: c.k, Axes: c.axes}, c.shape, x).F, c.want)
	}
}

// LogSoftmax and Hardmax of [1, 2, 3, 3] (last axis), worked by hand:
// log-sum-exp = 3 + log(1 + 1 + e^-1 + e^-2); Hardmax marks the first 3.
func TestSoftmaxModesHandWorked(t *testing.T) {
	x := fd([]int{1, 4}, 1, 2, 3, 3)
	lse := 3 + math.Log(2+math.Exp(-1)+math.Exp(-2))
	y := mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1, Mode: graph.SoftmaxLog}, []int{1, 4}, x)
	closeTo(t, y.F, []float32{float32(1 - lse), float32(2 - lse), float32(3 - lse), float32(3 - lse)})
	y = mustRun(t, graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1, Mode: graph.SoftmaxHard}, []int{1, 4}, x)
	closeTo(t, y.F, []float32{0, 0, 1, 0})
}

// Compare, Logic and Where, worked by hand; NaN compares false.
func TestCompareLogicWhereHandWorked(t *testing.T) {
	nan := float32(math.NaN())
	a := fd([]int{4}, 1, 2, nan, 4)
	b := fd([]int{1}, 2)
	cases := map[string][]int64{
		"Equal": {0, 1, 0, 0}, "Less": {1, 0, 0, 0}, "Greater": {0, 0, 0, 1},
		"LessOrEqual": {1, 1, 0, 0}, "GreaterOrEqual": {0, 1, 0, 1},
	}
	for k, want := range cases {
		y, err := runOpDT(graph.Compare, &graph.CompareAttrs{Kind: k}, graph.Bool, []int{4}, a, b)
		if err != nil {
			t.Fatal(err)
		}
		wantInts(t, y, want...)
	}
	p := &graph.Data{DType: graph.Bool, Shape: []int{4}, I: []int64{0, 1, 0, 1}}
	q := &graph.Data{DType: graph.Bool, Shape: []int{4}, I: []int64{0, 0, 1, 1}}
	for k, want := range map[string][]int64{"And": {0, 0, 0, 1}, "Or": {0, 1, 1, 1}, "Xor": {0, 1, 1, 0}} {
		y, err := runOpDT(graph.Logic, &graph.LogicAttrs{Kind: k}, graph.Bool, []int{4}, p, q)
		if err != nil {
			t.Fatal(err)
		}
		wantInts(t, y, want...)
	}
	y, err := runOpDT(graph.Logic, &graph.LogicAttrs{Kind: "Not"}, graph.Bool, []int{4}, p)
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, y, 1, 0, 1, 0)
	w, err := runOpDT(graph.Where, nil, graph.Float32, []int{4}, p, a, b)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, w.F, []float32{2, 2, 2, 4})
}

// runOpDT runs a one-node graph whose output has dtype dt.
func runOpDT(op graph.Op, attrs any, dt graph.DType, outShape []int, ins ...*graph.Data) (*graph.Data, error) {
	g := graph.New("t", "test")
	n := &graph.Node{Name: "n", Op: op, Attrs: attrs, Outputs: []string{"y"}}
	feed := map[string]*graph.Data{}
	for i, d := range ins {
		name := fmt.Sprintf("x%d", i)
		g.AddTensor(&graph.Tensor{Name: name, DType: d.DType, Shape: d.Shape})
		g.Inputs = append(g.Inputs, name)
		feed[name] = d
		n.Inputs = append(n.Inputs, name)
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: dt, Shape: outShape})
	g.Outputs = []string{"y"}
	g.AddNode(n)
	out, err := Run(g, feed)
	if err != nil {
		return nil, err
	}
	return out["y"], nil
}

// CumSum and Mod, worked by hand.
func TestCumSumModHandWorked(t *testing.T) {
	x := fd([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	cases := []struct {
		a    graph.CumSumAttrs
		want []float32
	}{
		{graph.CumSumAttrs{Axis: 1}, []float32{1, 3, 6, 4, 9, 15}},
		{graph.CumSumAttrs{Axis: 1, Exclusive: true}, []float32{0, 1, 3, 0, 4, 9}},
		{graph.CumSumAttrs{Axis: 1, Reverse: true}, []float32{6, 5, 3, 15, 11, 6}},
		{graph.CumSumAttrs{Axis: 0, Reverse: true, Exclusive: true}, []float32{4, 5, 6, 0, 0, 0}},
	}
	for _, c := range cases {
		a := c.a
		closeTo(t, mustRun(t, graph.CumSum, &a, []int{2, 3}, x).F, c.want)
	}
	// Python's % takes the divisor's sign, C's the dividend's: -7 mod 3 is 2 or -1,
	// 7 mod -3 is -2 or 1; x mod 0 is 0.
	u := &graph.Data{DType: graph.Int32, Shape: []int{4}, I: []int64{-7, 7, 6, 5}}
	v := &graph.Data{DType: graph.Int32, Shape: []int{4}, I: []int64{3, -3, 3, 0}}
	y, err := runOpDT(graph.Mod, nil, graph.Int32, []int{4}, u, v)
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, y, 2, -2, 0, 0)
	y, err = runOpDT(graph.Mod, &graph.ModAttrs{Fmod: true}, graph.Int32, []int{4}, u, v)
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, y, -1, 1, 0, 0)
}

// Gather and GatherElements, worked by hand on [[1,2,3],[4,5,6]]: indices
// count from the end when negative and are clamped into the axis.
func TestGatherHandWorked(t *testing.T) {
	x := fd([]int{2, 3}, 1, 2, 3, 4, 5, 6)
	idx := &graph.Data{DType: graph.Int64, Shape: []int{2}, I: []int64{-1, 7}}
	y, err := runOpDT(graph.Gather, &graph.GatherAttrs{Axis: 1}, graph.Float32, []int{2, 2}, x, idx)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, y.F, []float32{3, 3, 6, 6})
	rows := &graph.Data{DType: graph.Int64, Shape: []int{3}, I: []int64{1, 0, 1}}
	if y, err = runOpDT(graph.Gather, &graph.GatherAttrs{Axis: 0}, graph.Float32, []int{3, 3}, x, rows); err != nil {
		t.Fatal(err)
	}
	closeTo(t, y.F, []float32{4, 5, 6, 1, 2, 3, 4, 5, 6})
	el := &graph.Data{DType: graph.Int64, Shape: []int{2, 2}, I: []int64{0, 1, 1, -2}}
	if y, err = runOpDT(graph.Gather, &graph.GatherAttrs{Axis: 0, Elements: true}, graph.Float32, []int{2, 2}, x, el); err != nil {
		t.Fatal(err)
	}
	closeTo(t, y.F, []float32{1, 5, 4, 2})
}

// LogSumExp of [100, 90, 95, 99] is 100 + log(1 + e^-10 + e^-5 + e^-1);
// Softplus(100) is 100 and Softplus(-100) is e^-100.
func TestLargeInputsHandWorked(t *testing.T) {
	x := fd([]int{1, 4}, 100, 90, 95, 99)
	y := mustRun(t, graph.Reduce, &graph.ReduceAttrs{Kind: graph.ReduceLogSumExp, Axes: []int{1}}, []int{1}, x)
	closeTo(t, y.F, []float32{float32(100 + math.Log(1+math.Exp(-10)+math.Exp(-5)+math.Exp(-1)))})
	y = mustRun(t, graph.Math, &graph.MathAttrs{Fn: graph.MathSoftplus}, []int{2}, fd([]int{2}, 100, -100))
	closeTo(t, y.F, []float32{100, float32(math.Exp(-100))})
}
