package quant

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// u8Builder builds random TFLite-style uint8 graphs: every activation and
// weight uint8 at a random zero point, int32 biases.
type u8Builder struct {
	g *graph.Graph
	r *rand.Rand
	n int
}

func (b *u8Builder) q() *graph.Quant {
	return &graph.Quant{Scale: []float32{0.01 + b.r.Float32()*0.1}, ZeroPoint: []int32{int32(b.r.IntN(256))}}
}

func (b *u8Builder) act(shape []int, q *graph.Quant) string {
	b.n++
	name := fmt.Sprintf("t%d", b.n)
	b.g.AddTensor(&graph.Tensor{Name: name, DType: graph.UInt8, Shape: shape, Quant: q})
	return name
}

func (b *u8Builder) node(op graph.Op, attrs any, out string, ins ...string) {
	b.g.AddNode(&graph.Node{Name: out + "_" + string(op), Op: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs})
}

// conv adds a k×k convolution (depthwise with dw) of x, shape [1,H,W,C].
func (b *u8Builder) conv(x string, k int, dw bool, cout int) string {
	s := b.g.Tensors[x].Shape
	cin := s[3]
	group, wc := 1, cin
	if dw {
		group, wc, cout = cin, 1, cin
	}
	w := graph.NewData(graph.UInt8, []int{cout, k, k, wc})
	for i := range w.I {
		w.I[i] = int64(b.r.IntN(256))
	}
	wq := &graph.Quant{Scale: []float32{0.002 + b.r.Float32()*0.01}, ZeroPoint: []int32{int32(b.r.IntN(256))}}
	bias := graph.NewData(graph.Int32, []int{cout})
	for i := range bias.I {
		bias.I[i] = int64(b.r.IntN(4001) - 2000)
	}
	b.n++
	wn, bn := fmt.Sprintf("w%d", b.n), fmt.Sprintf("b%d", b.n)
	b.g.AddTensor(&graph.Tensor{Name: wn, DType: graph.UInt8, Shape: w.Shape, Quant: wq, Data: w})
	b.g.AddTensor(&graph.Tensor{Name: bn, DType: graph.Int32, Shape: bias.Shape, Data: bias})
	p := k / 2
	y := b.act([]int{1, s[1], s[2], cout}, b.q())
	acts := []graph.Activation{graph.ActNone, graph.ActRelu, graph.ActRelu6}
	b.node(graph.Conv2D, &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: p, Left: p, Bottom: p, Right: p}, Group: group, Act: acts[b.r.IntN(3)]}, y, x, wn, bn)
	return y
}

// randomU8Graph is a chain of uint8 layers over an 8×8×4 input, with a
// second graph output in the middle and a classifier head.
func randomU8Graph(seed uint64) *graph.Graph {
	b := &u8Builder{g: graph.New(fmt.Sprintf("u8_%d", seed), "tflite"), r: rand.New(rand.NewPCG(seed, 61))}
	x := b.act([]int{1, 8, 8, 4}, b.q())
	b.g.Inputs = []string{x}
	cur := x
	var mid string
	for i := 0; i < 3+b.r.IntN(4); i++ {
		switch b.r.IntN(8) {
		case 0, 1:
			cur = b.conv(cur, 1+2*b.r.IntN(2), false, 4+4*b.r.IntN(2))
		case 2:
			cur = b.conv(cur, 3, true, 0)
		case 3: // a residual Add or Mul of the layer's input and a conv of it
			op := []graph.Op{graph.Add, graph.Mul, graph.Sub}[b.r.IntN(3)]
			c := b.conv(cur, 1, false, b.g.Tensors[cur].Shape[3])
			y := b.act(slices.Clone(b.g.Tensors[cur].Shape), b.q())
			b.node(op, &graph.BinaryAttrs{}, y, cur, c)
			cur = y
		case 4: // max or average pool 2x2 stride 1, "same"
			op := []graph.Op{graph.MaxPool2D, graph.AvgPool2D}[b.r.IntN(2)]
			y := b.act(slices.Clone(b.g.Tensors[cur].Shape), b.g.Tensors[cur].Quant)
			b.node(op, &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Bottom: 1, Right: 1}}, y, cur)
			cur = y
		case 5: // a concatenation with itself along channels
			s := slices.Clone(b.g.Tensors[cur].Shape)
			s[3] *= 2
			y := b.act(s, b.g.Tensors[cur].Quant)
			b.node(graph.Concat, &graph.ConcatAttrs{Axis: 3}, y, cur, cur)
			cur = y
		case 6: // a uint8 logistic (a reader the shift leaves uint8)
			y := b.act(slices.Clone(b.g.Tensors[cur].Shape), &graph.Quant{Scale: []float32{1.0 / 256}, ZeroPoint: []int32{0}})
			b.node(graph.Sigmoid, nil, y, cur)
			cur = y
		case 7:
			if mid == "" {
				mid = cur
			}
		}
	}
	// Head: flatten, fully connected to 10, softmax.
	s := b.g.Tensors[cur].Shape
	flat := b.act([]int{1, s[1] * s[2] * s[3]}, b.g.Tensors[cur].Quant)
	b.node(graph.Reshape, nil, flat, cur)
	w := graph.NewData(graph.UInt8, []int{10, s[1] * s[2] * s[3]})
	for i := range w.I {
		w.I[i] = int64(b.r.IntN(256))
	}
	b.g.AddTensor(&graph.Tensor{Name: "fc_w", DType: graph.UInt8, Shape: w.Shape, Quant: &graph.Quant{Scale: []float32{0.001}, ZeroPoint: []int32{int32(b.r.IntN(256))}}, Data: w})
	logits := b.act([]int{1, 10}, b.q())
	b.node(graph.FullyConnected, &graph.FullyConnectedAttrs{}, logits, flat, "fc_w")
	probs := b.act([]int{1, 10}, &graph.Quant{Scale: []float32{1.0 / 256}, ZeroPoint: []int32{0}})
	b.node(graph.Softmax, &graph.SoftmaxAttrs{Axis: -1, Beta: 1}, probs, logits)
	b.g.Outputs = []string{probs, logits}
	if mid != "" && mid != x {
		b.g.Outputs = append(b.g.Outputs, mid)
	}
	if b.r.IntN(2) == 0 {
		// Readers the shift lets read int8: the class index and the
		// dequantized probabilities.
		b.g.AddTensor(&graph.Tensor{Name: "class", DType: graph.Int32, Shape: []int{1}})
		b.node(graph.ArgMax, &graph.ArgAttrs{Axis: 1}, "class", logits)
		b.g.AddTensor(&graph.Tensor{Name: "real", DType: graph.Float32, Shape: []int{1, 10}})
		b.node(graph.Dequantize, nil, "real", probs)
		b.g.Outputs = append(b.g.Outputs, "class", "real")
	}
	return b.g
}

// The shifted graph computes what the uint8 graph does, output for output,
// in the reference interpreter (TFLite's uint8 kernels on the original,
// the int8 ones on the shift) over random graphs and inputs; its inputs
// and outputs keep their names and uint8 type, and no convolution or fully
// connected layer is left with uint8 weights.
func TestShiftUint8LayersExact61(t *testing.T) {
	seen := map[graph.Op]int{}
	for seed := uint64(0); seed < 150; seed++ {
		g := randomU8Graph(seed)
		if err := graph.Validate(g); err != nil {
			t.Fatalf("seed %d: the test's graph: %v", seed, err)
		}
		f := ShiftUint8Layers(g)
		if err := graph.Validate(f); err != nil {
			t.Fatalf("seed %d: shifted graph invalid: %v", seed, err)
		}
		if !slices.Equal(f.Inputs, g.Inputs) || !slices.Equal(f.Outputs, g.Outputs) {
			t.Fatalf("seed %d: inputs/outputs %v %v, want %v %v", seed, f.Inputs, f.Outputs, g.Inputs, g.Outputs)
		}
		for _, name := range append(slices.Clone(f.Inputs), f.Outputs...) {
			if g.Tensors[name].DType != graph.UInt8 {
				continue
			}
			if f.Tensors[name].DType != graph.UInt8 || !f.Tensors[name].Quant.Equal(g.Tensors[name].Quant) {
				t.Fatalf("seed %d: edge %s is %s %v, want uint8 %v", seed, name, f.Tensors[name].DType, f.Tensors[name].Quant, g.Tensors[name].Quant)
			}
		}
		for _, n := range f.Nodes {
			if n.Op == graph.Conv2D || n.Op == graph.FullyConnected {
				if f.Tensors[n.Inputs[0]].DType != graph.Int8 || f.Tensors[n.Inputs[1]].DType != graph.Int8 || f.Tensors[n.Outputs[0]].DType != graph.Int8 {
					t.Fatalf("seed %d: %s still reads or writes uint8", seed, n.Name)
				}
			}
			if (n.Op == graph.ArgMax || n.Op == graph.Dequantize) && f.Tensors[n.Inputs[0]].DType != graph.Int8 {
				t.Fatalf("seed %d: %s reads %s, not the int8 tensor", seed, n.Name, f.Tensors[n.Inputs[0]].DType)
			}
			seen[n.Op]++
		}
		r := rand.New(rand.NewPCG(seed, 7))
		for v := 0; v < 3; v++ {
			in := graph.NewData(graph.UInt8, g.Tensors[g.Inputs[0]].Shape)
			for i := range in.I {
				in.I[i] = int64(r.IntN(256))
			}
			if v == 0 {
				for i := range in.I {
					in.I[i] = int64([]int{0, 255}[i%2]) // the range's ends
				}
			}
			want, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: in})
			if err != nil {
				t.Fatalf("seed %d: uint8 graph: %v", seed, err)
			}
			got, err := interp.Run(f, map[string]*graph.Data{g.Inputs[0]: in})
			if err != nil {
				t.Fatalf("seed %d: shifted graph: %v", seed, err)
			}
			for _, o := range g.Outputs {
				if !slices.Equal(got[o].I, want[o].I) || !slices.Equal(got[o].F, want[o].F) {
					t.Fatalf("seed %d, vector %d: output %s\n got %v\nwant %v", seed, v, o, got[o].I, want[o].I)
				}
			}
		}
	}
	// The random graphs reach every kind of layer the shift handles and
	// the requantizations around those it does not.
	for _, op := range []graph.Op{graph.Conv2D, graph.FullyConnected, graph.Add, graph.Mul, graph.Sub, graph.MaxPool2D, graph.AvgPool2D, graph.Concat, graph.Sigmoid, graph.Softmax, graph.Reshape, graph.Quantize, graph.ArgMax, graph.Dequantize} {
		if seen[op] == 0 {
			t.Errorf("no graph had a %s", op)
		}
	}
}

// A hand-worked case: a 1×1 convolution of one uint8 pixel (2, 3) at zero
// point 2 with weights (4, 1) at zero point 3 and bias 5 is
// (2−2)(4−3) + (3−2)(1−3) + 5 = 3; at multiplier 1 (scales 1, 1, 1) and
// output zero point 100 it writes 103. The shifted graph holds the input as
// int8 (−126, −125) at −126, the weights (−124, −127) at −125, and writes
// −25 at −28, which the output's requantization makes 103 again.
func TestShiftUint8LayersWorked61(t *testing.T) {
	g := graph.New("worked", "tflite")
	q := func(z int32) *graph.Quant { return &graph.Quant{Scale: []float32{1}, ZeroPoint: []int32{z}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.UInt8, Shape: []int{1, 1, 1, 2}, Quant: q(2)})
	w := graph.NewData(graph.UInt8, []int{1, 1, 1, 2})
	w.I[0], w.I[1] = 4, 1
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.UInt8, Shape: w.Shape, Quant: q(3), Data: w})
	bias := graph.NewData(graph.Int32, []int{1})
	bias.I[0] = 5
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int32, Shape: []int{1}, Data: bias})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.UInt8, Shape: []int{1, 1, 1, 1}, Quant: q(100)})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Group: 1}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	f := ShiftUint8Layers(g)
	var conv *graph.Node
	for _, n := range f.Nodes {
		if n.Op == graph.Conv2D {
			conv = n
		}
	}
	if len(f.Nodes) != 3 || conv == nil || f.Nodes[1] != conv {
		t.Fatalf("want requantize, conv, requantize; got %d nodes", len(f.Nodes))
	}
	xs, ws, ys := f.Tensors[conv.Inputs[0]], f.Tensors[conv.Inputs[1]], f.Tensors[conv.Outputs[0]]
	if xs.DType != graph.Int8 || xs.Quant.ZeroPoint[0] != -126 || ws.Quant.ZeroPoint[0] != -125 || !slices.Equal(ws.Data.I, []int64{-124, -127}) || ys.Quant.ZeroPoint[0] != -28 {
		t.Fatalf("shifted conv reads %s at %v, weights %v at %v, writes at %v", xs.DType, xs.Quant.ZeroPoint, ws.Data.I, ws.Quant.ZeroPoint, ys.Quant.ZeroPoint)
	}
	in := graph.NewData(graph.UInt8, []int{1, 1, 1, 2})
	in.I[0], in.I[1] = 2, 3
	s, err := interp.NewSession(f).RunAll(map[string]*graph.Data{"x": in})
	if err != nil {
		t.Fatal(err)
	}
	if s[conv.Outputs[0]].I[0] != -25 || s["y"].I[0] != 103 {
		t.Errorf("conv writes %d, y = %d: want -25 and 103", s[conv.Outputs[0]].I[0], s["y"].I[0])
	}
}
