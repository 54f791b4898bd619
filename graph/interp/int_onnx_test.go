package interp

import (
	"fmt"
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// qt is a test tensor: a value with optional quantization; const tensors
// become graph constants, the first non-constant is the graph input.
type qt struct {
	d     *graph.Data
	q     *graph.Quant
	input bool
}

func qd(dt graph.DType, shape []int, v ...int64) *graph.Data {
	return &graph.Data{DType: dt, Shape: shape, I: v}
}

func pq(scale float32, zp int32) *graph.Quant {
	return &graph.Quant{Scale: []float32{scale}, ZeroPoint: []int32{zp}}
}

// runInt builds a one-node graph and runs it; the output tensor has dtype
// odt, shape oshape and quantization oq (nil for a raw int32 accumulator).
func runInt(t *testing.T, op graph.Op, attrs any, odt graph.DType, oshape []int, oq *graph.Quant, ins ...qt) *graph.Data {
	t.Helper()
	g := graph.New("t", "test")
	n := &graph.Node{Name: "n", Op: op, Attrs: attrs, Outputs: []string{"y"}}
	feed := map[string]*graph.Data{}
	for i, in := range ins {
		name := fmt.Sprintf("x%d", i)
		tt := &graph.Tensor{Name: name, DType: in.d.DType, Shape: in.d.Shape, Quant: in.q}
		if in.input {
			g.Inputs = append(g.Inputs, name)
			feed[name] = in.d
		} else {
			tt.Data = in.d
		}
		g.AddTensor(tt)
		n.Inputs = append(n.Inputs, name)
	}
	g.AddTensor(&graph.Tensor{Name: "y", DType: odt, Shape: oshape, Quant: oq})
	g.Outputs = []string{"y"}
	g.AddNode(n)
	out, err := Run(g, feed)
	if err != nil {
		t.Fatal(err)
	}
	return out["y"]
}

func wantInts(t *testing.T, got *graph.Data, want ...int64) {
	t.Helper()
	if fmt.Sprint(got.I) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got.I, want)
	}
}

// ConvInteger: uint8 x (zp 2) and w (zp 3), raw int32 accumulator:
// (5-2)(4-3) + (2-2)(9-3) + (1-2)(3-3) + (6-2)(0-3) = 3 + 0 + 0 - 12 = -9.
func TestConvIntegerRawAccumulator(t *testing.T) {
	y := runInt(t, graph.Conv2D, &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1},
		graph.Int32, []int{1, 1, 1, 1}, nil,
		qt{d: qd(graph.UInt8, []int{1, 2, 2, 1}, 5, 2, 1, 6), q: pq(1, 2), input: true},
		qt{d: qd(graph.UInt8, []int{1, 2, 2, 1}, 4, 9, 3, 0), q: pq(1, 3)})
	wantInts(t, y, -9)
}

// MatMulInteger with a per-column zero point on B (axis 1: [0, 2]) and A zp 1:
// A-1 = [[0,1],[2,3]], B-zb = [[1,0],[3,2]] -> [[3,2],[11,6]].
func TestMatMulIntegerPerColumnZeroPoint(t *testing.T) {
	y := runInt(t, graph.BatchMatMul, &graph.BatchMatMulAttrs{}, graph.Int32, []int{2, 2}, nil,
		qt{d: qd(graph.UInt8, []int{2, 2}, 1, 2, 3, 4), q: pq(1, 1), input: true},
		qt{d: qd(graph.UInt8, []int{2, 2}, 1, 2, 3, 4), q: &graph.Quant{Scale: []float32{1, 1}, ZeroPoint: []int32{0, 2}, Axis: 1}})
	wantInts(t, y, 3, 2, 11, 6)
}

// QLinearConv semantics (RequantFloat): multiplier 0.5*0.25/0.25 = 0.5,
// round half to even: acc (15-10)*(129-128) = 5 -> 2.5 -> 2; acc 3 -> 1.5 -> 2;
// plus y_zp 5. TFLite's fixed point rounds 2.5 to 3 instead.
func TestQLinearConvFloatRequant(t *testing.T) {
	attrs := &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1, Requant: graph.RequantFloat}
	run := func() *graph.Data {
		return runInt(t, graph.Conv2D, attrs, graph.UInt8, []int{1, 1, 2, 1}, pq(0.25, 5),
			qt{d: qd(graph.UInt8, []int{1, 1, 2, 1}, 15, 13), q: pq(0.5, 10), input: true},
			qt{d: qd(graph.UInt8, []int{1, 1, 1, 1}, 129), q: pq(0.25, 128)})
	}
	wantInts(t, run(), 7, 7)
	attrs.Requant = graph.RequantFixedPoint
	wantInts(t, run(), 8, 7)
}

// Grouped conv (2 groups of 1 channel each), per-channel weight zero points
// [1, -1]: out c0 = x0*(w0-1) = 3*(3-1) = 6, c1 = x1*(w1+1) = 2*(4+1) = 10.
func TestGroupedConvPerChannelZeroPoint(t *testing.T) {
	y := runInt(t, graph.Conv2D, &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 2},
		graph.Int32, []int{1, 1, 1, 2}, nil,
		qt{d: qd(graph.Int8, []int{1, 1, 1, 2}, 3, 2), q: pq(1, 0), input: true},
		qt{d: qd(graph.Int8, []int{2, 1, 1, 1}, 3, 4), q: &graph.Quant{Scale: []float32{1, 1}, ZeroPoint: []int32{1, -1}}})
	wantInts(t, y, 6, 10)
}

// QLinearMatMul on int8 with RequantFloat: scales 0.1*0.2/0.05 = 0.4 (float32);
// [1,2]x[[5],[10]] = 25 -> 10.0 -> 10, +1.
func TestQLinearMatMul(t *testing.T) {
	y := runInt(t, graph.BatchMatMul, &graph.BatchMatMulAttrs{Requant: graph.RequantFloat}, graph.Int8, []int{1, 1}, pq(0.05, 1),
		qt{d: qd(graph.Int8, []int{1, 2}, 1, 2), q: pq(0.1, 0), input: true},
		qt{d: qd(graph.Int8, []int{2, 1}, 5, 10), q: pq(0.2, 0)})
	wantInts(t, y, 11)
}

// Quantize with ONNX rounding (half to even) against TFLite's (half away).
func TestQuantizeRounding(t *testing.T) {
	g := graph.New("t", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.UInt8, Shape: []int{4}, Quant: pq(1, 10)})
	n := g.AddNode(&graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: &graph.QuantizeAttrs{RoundHalfEven: true}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	x := &graph.Data{DType: graph.Float32, Shape: []int{4}, F: []float32{2.5, -2.5, 3.5, -20}}
	out, err := Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, out["y"], 12, 8, 14, 0)
	n.Attrs = nil
	out, err = Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, out["y"], 13, 7, 14, 0)
}

// TFLite's AffineQuantize divides in float32 (val / static_cast<float>(scale)):
// x = 0x3c8fc504 (0.017549999) over s = 0x3b7f9724 (0.0039) is 4.49999988 exactly,
// which rounds to the float 4.5 (its neighbours are 2^-21 apart), so half away
// gives 5 where a double quotient would give 4; half to even gives 4 either way.
func TestQuantizeFloatQuotient(t *testing.T) {
	s := math.Float32frombits(0x3b7f9724)
	g := graph.New("t", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{2}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{2}, Quant: pq(s, 0)})
	n := g.AddNode(&graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	v := math.Float32frombits(0x3c8fc504)
	x := &graph.Data{DType: graph.Float32, Shape: []int{2}, F: []float32{v, -v}}
	out, err := Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, out["y"], 5, -5)
	n.Attrs = &graph.QuantizeAttrs{RoundHalfEven: true}
	out, err = Run(g, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	wantInts(t, out["y"], 4, -4)
}

// Per-axis dequantize along the last axis.
func TestDequantizePerAxis(t *testing.T) {
	g := graph.New("t", "test")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{2, 2}, Quant: &graph.Quant{Scale: []float32{0.5, 2}, ZeroPoint: []int32{1, -1}, Axis: 1}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{2, 2}})
	g.AddNode(&graph.Node{Name: "dq", Op: graph.Dequantize, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	out, err := Run(g, map[string]*graph.Data{"x": qd(graph.Int8, []int{2, 2}, 3, 3, -1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out["y"].F); got != "[1 8 -1 2]" {
		t.Errorf("got %s, want [1 8 -1 2]", got)
	}
}

// int8 AveragePool with count_include_pad (ONNX; TFLite has none): a padded
// tap is a real 0, the raw zero point 3. Input (raw) 13 23 3 / 3 3 3 /
// 3 3 3, a 3x3 window padded by 1: output (0,0) sums 13+23+3+3 and five
// pads of 3, 57/9 = 6.33 -> 6 (the real average 30/9 scale steps over the
// zero point); (0,2) 23+3+3+3 + 15 = 47 -> 5; the bottom row 12 + 15 = 27
// -> 3. Without the zero point the pads would pull (0,0) to 42/9 -> 5
// (user-journey finding: the C ignored count_include_pad in int8).
func TestIntAvgPoolCountIncludePad(t *testing.T) {
	x := qd(graph.Int8, []int{1, 3, 3, 1}, 13, 23, 3, 3, 3, 3, 3, 3, 3)
	a := &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, CountIncludePad: true}
	got := runInt(t, graph.AvgPool2D, a, graph.Int8, []int{1, 3, 3, 1}, pq(0.1, 3), qt{d: x, q: pq(0.1, 3), input: true})
	wantInts(t, got, 6, 6, 5, 6, 6, 5, 3, 3, 3)
}
