package interp

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestBinaryHandWorked(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		op    graph.Op
		attrs any
		a, b  *graph.Data
		out   []int
		want  []float32
	}{
		{graph.Add, nil, fd([]int{2, 3}, seq(6)...), fd([]int{3}, 10, 20, 30), []int{2, 3}, []float32{11, 22, 33, 14, 25, 36}},
		{graph.Sub, nil, fd([]int{2, 1}, 1, 2), fd([]int{1, 3}, 1, 2, 3), []int{2, 3}, []float32{0, -1, -2, 1, 0, -1}},
		{graph.Mul, nil, fd([]int{}, 2), fd([]int{2, 2}, 1, 2, 3, 4), []int{2, 2}, []float32{2, 4, 6, 8}},
		{graph.Div, nil, fd([]int{2, 2}, 1, 2, 3, 4), fd([]int{1}, 4), []int{2, 2}, []float32{0.25, 0.5, 0.75, 1}},
		{graph.Div, nil, fd([]int{3}, 1, -1, 0), fd([]int{}, 0), []int{3}, []float32{float32(math.Inf(1)), float32(math.Inf(-1)), nan}},
		{graph.Maximum, nil, fd([]int{4}, 1, 5, nan, 2), fd([]int{4}, 3, 4, 0, nan), []int{4}, []float32{3, 5, nan, nan}},
		{graph.Minimum, nil, fd([]int{4}, 1, 5, nan, 2), fd([]int{4}, 3, 4, 0, nan), []int{4}, []float32{1, 4, nan, nan}},
		{graph.Add, &graph.BinaryAttrs{Act: graph.ActRelu6}, fd([]int{4}, -3, 1, 5, 7), fd([]int{1}, 1), []int{4}, []float32{0, 2, 6, 6}},
		{graph.Mul, &graph.BinaryAttrs{Act: graph.ActReluN1To1}, fd([]int{3}, -3, 0.25, 5), fd([]int{1}, 2), []int{3}, []float32{-1, 0.5, 1}},
		{graph.Add, graph.BinaryAttrs{Act: graph.ActRelu}, fd([]int{2}, -3, 1), fd([]int{2}, 1, 1), []int{2}, []float32{0, 2}},
	}
	for _, tc := range tests {
		got := mustRun(t, tc.op, tc.attrs, tc.out, tc.a, tc.b)
		closeTo(t, got.F, tc.want)
	}
}

// TestBinaryBroadcast checks numpy broadcasting against a direct index
// formula: out[i,j,k] = a[i mod A0, j mod A1, k mod A2] + b[...].
func TestBinaryBroadcast(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cases := []struct{ a, b, out []int }{
		{[]int{2, 1, 3}, []int{4, 1}, []int{2, 4, 3}},
		{[]int{1, 4, 1}, []int{2, 1, 3}, []int{2, 4, 3}},
		{[]int{3}, []int{2, 4, 3}, []int{2, 4, 3}},
		{[]int{}, []int{2, 4, 3}, []int{2, 4, 3}},
		{[]int{2, 4, 3}, []int{1, 1, 1}, []int{2, 4, 3}},
		{[]int{2, 4, 3}, []int{2, 4, 3}, []int{2, 4, 3}},
	}
	pad3 := func(s []int) []int {
		for len(s) < 3 {
			s = append([]int{1}, s...)
		}
		return s
	}
	for _, c := range cases {
		a, b := randData(r, c.a...), randData(r, c.b...)
		got := mustRun(t, graph.Sub, nil, c.out, a, b)
		as, bs := pad3(c.a), pad3(c.b)
		var want []float32
		for i := 0; i < c.out[0]; i++ {
			for j := 0; j < c.out[1]; j++ {
				for k := 0; k < c.out[2]; k++ {
					av := a.F[((i%as[0])*as[1]+j%as[1])*as[2]+k%as[2]]
					bv := b.F[((i%bs[0])*bs[1]+j%bs[1])*bs[2]+k%bs[2]]
					want = append(want, av-bv)
				}
			}
		}
		closeTo(t, got.F, want)
	}
	if _, err := runOp(graph.Add, nil, []int{2, 3}, fd([]int{2, 3}, seq(6)...), fd([]int{2}, 1, 2)); err == nil || !strings.Contains(err.Error(), "do not broadcast") {
		t.Fatalf("got %v", err)
	}
	if _, err := runOp(graph.Add, nil, []int{3, 3}, fd([]int{2, 3}, seq(6)...), fd([]int{3}, 1, 2, 3)); err == nil || !strings.Contains(err.Error(), "output shape") {
		t.Fatalf("got %v", err)
	}
}

func TestUnary(t *testing.T) {
	x := fd([]int{7}, -4, -3, -1, 0, 0.5, 3, 10)
	e := func(v float64) float32 { return float32(1 / (1 + math.Exp(-v))) }
	th := func(v float64) float32 { return float32(math.Tanh(v)) }
	tests := []struct {
		op    graph.Op
		attrs any
		want  []float32
	}{
		{graph.Relu, nil, []float32{0, 0, 0, 0, 0.5, 3, 10}},
		{graph.Clip, &graph.ClipAttrs{Min: -1, Max: 6}, []float32{-1, -1, -1, 0, 0.5, 3, 6}},
		{graph.Clip, &graph.ClipAttrs{Min: 2, Max: 1}, []float32{1, 1, 1, 1, 1, 1, 1}},
		{graph.LeakyRelu, &graph.LeakyReluAttrs{Alpha: 0.1}, []float32{-0.4, -0.3, -0.1, 0, 0.5, 3, 10}},
		{graph.LeakyRelu, nil, []float32{-0.04, -0.03, -0.01, 0, 0.5, 3, 10}},
		{graph.Sigmoid, nil, []float32{e(-4), e(-3), e(-1), 0.5, e(0.5), e(3), e(10)}},
		{graph.Tanh, nil, []float32{th(-4), th(-3), th(-1), 0, th(0.5), th(3), th(10)}},
		// x*relu6(x+3)/6
		{graph.HardSwish, nil, []float32{0, 0, -1.0 / 3, 0, 0.5 * 3.5 / 6, 3, 10}},
		// max(0, min(1, 0.2x+0.5))
		{graph.HardSigmoid, nil, []float32{0, 0, 0.3, 0.5, 0.6, 1, 1}},
		{graph.HardSigmoid, &graph.HardSigmoidAttrs{Alpha: 0.5, Beta: 0.25}, []float32{0, 0, 0, 0.25, 0.5, 1, 1}},
	}
	for _, tc := range tests {
		got := mustRun(t, tc.op, tc.attrs, []int{7}, x)
		closeTo(t, got.F, tc.want)
	}
	if _, err := runOp(graph.Clip, nil, []int{7}, x); err == nil {
		t.Fatal("clip without bounds accepted")
	}
	// Sigmoid stays finite and in [0, 1] far out.
	got := mustRun(t, graph.Sigmoid, nil, []int{2}, fd([]int{2}, -1000, 1000))
	closeTo(t, got.F, []float32{0, 1})
}
