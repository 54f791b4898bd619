package pipeline

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// mobileNetU8 is a TF1-style uint8 MobileNet block: every activation and
// weight uint8 at zero points away from 0 and 128, convolution 3×3 →
// depthwise 3×3 → pointwise → global average pool → 1×1 logits → softmax.
func mobileNetU8() *graph.Graph {
	r := rand.New(rand.NewPCG(61, 1))
	g := graph.New("mnu8", "tflite")
	n := 0
	act := func(shape []int, scale float32, zp int32) string {
		n++
		name := "a" + string(rune('a'+n))
		g.AddTensor(&graph.Tensor{Name: name, DType: graph.UInt8, Shape: shape, Quant: &graph.Quant{Scale: []float32{scale}, ZeroPoint: []int32{zp}}})
		return name
	}
	conv := func(x string, k, cout int, dw bool, y string) {
		cin := g.Tensors[x].Shape[3]
		group, wc := 1, cin
		if dw {
			group, wc = cin, 1
		}
		w := graph.NewData(graph.UInt8, []int{cout, k, k, wc})
		for i := range w.I {
			w.I[i] = int64(r.IntN(256))
		}
		b := graph.NewData(graph.Int32, []int{cout})
		for i := range b.I {
			b.I[i] = int64(r.IntN(20001) - 10000)
		}
		g.AddTensor(&graph.Tensor{Name: y + "_w", DType: graph.UInt8, Shape: w.Shape, Quant: &graph.Quant{Scale: []float32{0.004}, ZeroPoint: []int32{int32(100 + r.IntN(60))}}, Data: w})
		g.AddTensor(&graph.Tensor{Name: y + "_b", DType: graph.Int32, Shape: b.Shape, Data: b})
		p := k / 2
		g.AddNode(&graph.Node{Name: y, Op: graph.Conv2D, Inputs: []string{x, y + "_w", y + "_b"}, Outputs: []string{y},
			Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: p, Left: p, Bottom: p, Right: p}, Group: group, Act: graph.ActRelu6}})
	}
	x := act([]int{1, 12, 12, 3}, 1.0/128, 128)
	c0 := act([]int{1, 12, 12, 8}, 6.0/255, 0)
	conv(x, 3, 8, false, c0)
	dw := act([]int{1, 12, 12, 8}, 6.0/255, 0)
	conv(c0, 3, 8, true, dw)
	pw := act([]int{1, 12, 12, 16}, 6.0/255, 0)
	conv(dw, 1, 16, false, pw)
	pool := act([]int{1, 1, 1, 16}, 6.0/255, 0)
	g.AddNode(&graph.Node{Name: "pool", Op: graph.AvgPool2D, Inputs: []string{pw}, Outputs: []string{pool}, Attrs: &graph.PoolAttrs{Kernel: [2]int{12, 12}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}})
	logits := act([]int{1, 1, 1, 10}, 0.08, 70)
	conv(pool, 1, 10, false, logits)
	g.Nodes[len(g.Nodes)-1].Attrs.(*graph.Conv2DAttrs).Act = graph.ActNone
	flat := act([]int{1, 10}, 0.08, 70)
	g.AddNode(&graph.Node{Name: "flat", Op: graph.Reshape, Inputs: []string{logits}, Outputs: []string{flat}})
	probs := act([]int{1, 10}, 1.0/256, 0)
	g.AddNode(&graph.Node{Name: "softmax", Op: graph.Softmax, Inputs: []string{flat}, Outputs: []string{probs}, Attrs: &graph.SoftmaxAttrs{Axis: -1, Beta: 1}})
	g.Inputs, g.Outputs = []string{x}, []string{probs, pw}
	return g
}

// A uint8 TFLite model's layers run the int8 kernels (quant.ShiftUint8Layers):
// on the host (sanitized), the M4 and the M55 the firmware agrees bit for bit
// with the reference interpreter run on the uint8 graph as imported, not
// only on the shifted graph it compiles; its convolutions are int8 kernels,
// and its uint8 input and output edges flip the top bit a word at a time.
func TestShiftUint8Layers61(t *testing.T) {
	g := mobileNetU8()
	r := rand.New(rand.NewPCG(61, 2))
	var vecs []map[string]*graph.Data
	for v := 0; v < 3; v++ {
		in := graph.NewData(graph.UInt8, g.Tensors[g.Inputs[0]].Shape)
		for i := range in.I {
			in.I[i] = int64(r.IntN(256))
		}
		vecs = append(vecs, map[string]*graph.Data{g.Inputs[0]: in})
	}
	var want [][]*graph.Data
	for _, vec := range vecs {
		res, err := interp.Run(g, vec)
		if err != nil {
			t.Fatal(err)
		}
		var outs []*graph.Data
		for _, o := range g.Outputs {
			outs = append(outs, res[o])
		}
		want = append(want, outs)
	}
	for _, board := range []string{"host", "mps2-an386", "mps3-an547"} {
		x := runOn60(t, mobileNetU8(), "mnu8", board, vecs)
		for v := range vecs {
			for i, o := range g.Outputs {
				if !slices.Equal(x.Outputs[v][i].I, want[v][i].I) {
					t.Fatalf("%s, vector %d, output %s: firmware %v\nuint8 graph %v", board, v, o, x.Outputs[v][i].I[:10], want[v][i].I[:10])
				}
			}
		}
	}
	s, err := CompileGraph(mobileNetU8(), "mnu8", Options{Board: qemuBoard(t, "mps2-an386"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	convs := convKernels61(s)
	for _, name := range convs {
		if !strings.HasSuffix(name, "_s8") {
			t.Errorf("%s: not an int8 kernel", name)
		}
	}
	// The input's flip and the pointwise output's (a graph output, which
	// the uint8 average pool reads); the pool's and the softmax's
	// requantizations fold into those kernels' stores as ± 128, with no
	// table.
	c := string(s.Files["mnu8.c"])
	flips := strings.Count(c, "gen_flip_s8(&")
	if len(convs) != 4 || flips != 2 || strings.Contains(c, "quantize_table") {
		t.Errorf("%d convolutions, %d top-bit flips, tables %v: want 4 convolutions, flips at the input and the pointwise output, no table", len(convs), flips, strings.Contains(c, "quantize_table"))
	}
}

// convKernels61 names the convolution kernels (depthwise too) of s's module.
func convKernels61(s *State) []string {
	var out []string
	for _, f := range s.Module.Funcs {
		if f.Op == "conv2d" || f.Op == "depthwise_conv2d" {
			out = append(out, f.Name)
		}
	}
	return out
}

// uint8Strided is a uint8 48×48×3 input, a 3×3 stride-2 convolution to 8
// channels and a global average pool: as uint8 layers the convolution
// reads the caller's input, as int8 ones it reads an int8 copy in the
// arena (a review's case: 4,608 → 11,520 B).
func uint8Strided() *graph.Graph {
	r := rand.New(rand.NewPCG(61, 3))
	g := graph.New("u8s2", "tflite")
	q := func(s float32, z int32) *graph.Quant { return &graph.Quant{Scale: []float32{s}, ZeroPoint: []int32{z}} }
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.UInt8, Shape: []int{1, 48, 48, 3}, Quant: q(1.0/128, 128)})
	w := graph.NewData(graph.UInt8, []int{8, 3, 3, 3})
	for i := range w.I {
		w.I[i] = int64(r.IntN(256))
	}
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.UInt8, Shape: w.Shape, Quant: q(0.005, 120), Data: w})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.UInt8, Shape: []int{1, 24, 24, 8}, Quant: q(0.05, 3)})
	g.AddTensor(&graph.Tensor{Name: "p", DType: graph.UInt8, Shape: []int{1, 1, 1, 8}, Quant: q(0.05, 3)})
	g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1}, Group: 1, Act: graph.ActRelu}})
	g.AddNode(&graph.Node{Name: "pool", Op: graph.AvgPool2D, Inputs: []string{"y"}, Outputs: []string{"p"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{24, 24}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"p"}
	return g
}

// Where the int8 form of a uint8 model does not fit (here a RAM budget
// between the two arenas on the M4), compile builds the uint8 layers as
// they are and says so; it still runs bit-exact. On the generic target
// (the M3) the layers stay uint8 without asking: its C runs uint8 as fast,
// and the shift would only add the edges' passes.
func TestShiftUint8Fallbacks61(t *testing.T) {
	convKernel := func(s *State) string {
		if k := convKernels61(s); len(k) == 1 {
			return k[0]
		}
		return ""
	}
	b := qemuBoard(t, "mps2-an386")
	s, err := CompileGraph(uint8Strided(), "u8s2", Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	shifted := int64(s.Module.ArenaBytes)
	if !strings.HasSuffix(convKernel(s), "_s8") {
		t.Fatalf("without a budget the convolution is %s, want the int8 kernel", convKernel(s))
	}
	var warned []string
	o := Options{Board: b, Version: "test", RAMBudget: shifted - 1, Warn: func(m string) { warned = append(warned, m) }}
	s, err = CompileGraph(uint8Strided(), "u8s2", o)
	if err != nil {
		t.Fatalf("under a %d B budget: %v", o.RAMBudget, err)
	}
	if !strings.HasSuffix(convKernel(s), "_u8") || int64(s.Module.ArenaBytes) >= shifted {
		t.Errorf("under the budget: convolution %s, arena %d B (int8 form %d B)", convKernel(s), s.Module.ArenaBytes, shifted)
	}
	// Then the weight zero point's warning, as for any uint8 layer, once:
	// the first build's warnings are not said.
	if len(warned) != 2 || !strings.Contains(warned[0], "uint8 layers stay uint8") || !strings.Contains(warned[1], "zero point") {
		t.Errorf("warnings %q: want one saying the uint8 layers stay uint8, then the weights' zero point", warned)
	}
	kept := int64(s.Module.ArenaBytes)
	// Where neither fits, the error of the build that needs less (here
	// the uint8 one's; review: the larger was said).
	_, err = CompileGraph(uint8Strided(), "u8s2", Options{Board: b, Version: "test", RAMBudget: kept - 1})
	var fit *FitError
	if !errors.As(err, &fit) || fit.Need != kept {
		t.Errorf("under a %d B budget: %v, want the uint8 build's need, %d B", kept-1, err, kept)
	}
	in := graph.NewData(graph.UInt8, []int{1, 48, 48, 3})
	r := rand.New(rand.NewPCG(61, 4))
	for i := range in.I {
		in.I[i] = int64(r.IntN(256))
	}
	want, err := interp.Run(uint8Strided(), map[string]*graph.Data{"x": in})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Execute([]map[string]*graph.Data{{"x": in}}, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Outputs[0][0].I, want["p"].I) {
		t.Errorf("firmware %v, the uint8 graph %v", x.Outputs[0][0].I, want["p"].I)
	}
	s, err = CompileGraph(uint8Strided(), "u8s2", Options{Board: qemuBoard(t, "mps2-an385"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if k := convKernel(s); !strings.HasSuffix(k, "_u8") {
		t.Errorf("on the M3 the convolution is %s, want the uint8 kernel", k)
	}
}

// A uint8 → int8 requantization between zero points 128 apart is a top-bit
// flip, a word at a time where the core loads words at any address (the
// M4: under 1.5 instructions an element, where the table took five) and a
// byte at a time on ARMv6-M, whose gcc called memcpy for each word (review:
// 80,944 instructions for 4,096 elements on the micro:bit, against the
// table's 24,621).
func TestFlipSpeed61(t *testing.T) {
	const n = 4096
	g := graph.New("flip", "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.UInt8, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{0.02}, ZeroPoint: []int32{140}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, n}, Quant: &graph.Quant{Scale: []float32{0.02}, ZeroPoint: []int32{12}}})
	g.AddNode(&graph.Node{Name: "q", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	in := graph.NewData(graph.UInt8, []int{1, n})
	for i := range in.I {
		in.I[i] = int64(i % 256)
	}
	for _, c := range []struct {
		board string
		most  int64
	}{{"mps2-an386", 3 * n / 2}, {"microbit", 7 * n}} {
		x := runOn60(t, g, "flip", c.board, []map[string]*graph.Data{{"x": in}})
		if got := x.Outputs[0][0].I; got[0] != -128 || got[255] != 127 || got[140] != 12 {
			t.Errorf("%s: 0, 255, 140 → %d, %d, %d: want -128, 127, 12", c.board, got[0], got[255], got[140])
		}
		if got := x.Instructions(); got > c.most {
			t.Errorf("%s: %d instructions for %d elements, want at most %d", c.board, got, n, c.most)
		}
	}
}
