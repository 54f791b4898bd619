package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A convolution whose ring of widened input rows is past the stack the
// board leaves a kernel (15,360 B on mps2-an386) takes the dsp target's
// im2col form, not the generic C: it went to the next target at about 2.8
// times the instructions (review finding: a 3×3 32→32 layer 80 pixels
// wide, and a 1-D layer of 128 channels over 64 frames). Each runs
// bit-exact against the reference interpreter, in under half the generic
// target's instructions for the same layer (which it took before).
func TestWideRowsKeepTheDSPForm53(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"conv3x3-w80", func() *graph.Graph { return tirtest.ConvK(8, 80, 32, 32, 3, 1, graph.ActRelu, -128) }},
		{"conv1d-c128-t64", func() *graph.Graph { return tirtest.ConvRect(1, 64, 128, 64, 1, 3, graph.ActNone, 5) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			atMostOfGeneric(t, b, c.g, c.name, 2, 0.5)
		})
	}
}

// withPadNode writes a convolution's padding out as a Pad node before it
// (value: the input's zero point), as Keras' ZeroPadding2D exports to
// TFLite.
func withPadNode(g *graph.Graph) *graph.Graph {
	conv := g.Nodes[0]
	a := *conv.Attrs.(*graph.Conv2DAttrs)
	x := g.Tensors[conv.Inputs[0]]
	p := a.Pad
	g.AddTensor(&graph.Tensor{Name: "xp", DType: x.DType, Shape: []int{1, x.Shape[1] + p.Top + p.Bottom, x.Shape[2] + p.Left + p.Right, x.Shape[3]}, Quant: x.Quant})
	pad := &graph.Node{Name: "pad", Op: graph.Pad, Inputs: []string{x.Name}, Outputs: []string{"xp"},
		Attrs: &graph.PadAttrs{Mode: "constant", Value: float64(x.Quant.ZeroPoint[0]), Pads: []int{0, p.Top, p.Left, 0, 0, p.Bottom, p.Right, 0}}}
	a.Pad = graph.Padding{}
	conv.Attrs, conv.Inputs[0] = &a, "xp"
	g.Nodes = append([]*graph.Node{pad}, g.Nodes...)
	return g
}

// A Pad that is a convolution's padding written out (TFLite's PAD before
// a stride-2 depthwise layer of MobileNet) folds into the convolution: the
// firmware runs bit-exact with the graph's, in the instructions and arena
// of the same layer with the padding as its own (review finding: PAD plus
// depthwise 24×24×96 took 875,913 instructions against 341,461, and the
// Pad's copy doubled MobileNetV2's arena).
func TestPadFoldsIntoConv53(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"depthwise-s2", func() *graph.Graph { return tirtest.Conv3x3Size(24, 24, 32, 32, 2, graph.ActRelu6, -128) }},
		{"conv3x3", func() *graph.Graph { return tirtest.ConvK(10, 12, 8, 16, 3, 1, graph.ActRelu, -128) }},
		{"depthwise-s2-top-left", func() *graph.Graph {
			// Padding above and left only: the output keeps its 12×12.
			g := tirtest.Conv3x3Size(24, 24, 32, 32, 2, graph.ActRelu6, -128)
			a := *g.Nodes[0].Attrs.(*graph.Conv2DAttrs)
			a.Pad = graph.Padding{Top: 1, Left: 1}
			g.Nodes[0].Attrs = &a
			return g
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Board: b, Version: "test"}
			own := checkedRun(t, c.g(), c.name, o, 1, 53)
			s, err := CompileGraph(withPadNode(c.g()), c.name+"-pad", o)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range s.Graph.Nodes {
				if n.Op == graph.Pad {
					t.Errorf("%s: the Pad node %q stayed", c.name, n.Name)
				}
			}
			ref, err := CompileGraph(c.g(), c.name, o)
			if err != nil {
				t.Fatal(err)
			}
			if s.Plan.ArenaBytes != ref.Plan.ArenaBytes {
				t.Errorf("%s: arena %d B with the Pad, %d B with the padding the convolution's own", c.name, s.Plan.ArenaBytes, ref.Plan.ArenaBytes)
			}
			padded := checkedRun(t, withPadNode(c.g()), c.name+"-pad", o, 3, 53)
			t.Logf("%s on mps2-an386: %d instructions with the Pad node, %d with the padding the convolution's own", c.name, padded, own)
			if float64(padded) > 1.01*float64(own) {
				t.Errorf("%s: %d instructions with the Pad node, %d without", c.name, padded, own)
			}
		})
	}
}

// A 1-D convolution (KH = 1) gathers its window into a column of K int16
// per pixel; three-pixel blocks are its default only where their LDM asm
// reaches the third pixel's row (4K + 8(u−1) <= 1020 bytes): a review's
// 1×10 32→32 layer took the blocks' C form at 0.95 MACs an instruction,
// 1.29 in pairs. There the default takes fewer instructions than three-pixel
// blocks (the default it had), and both run bit-exact.
func TestOneDGatherBlocks53(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name   string
		kw, ci int
	}{{"1x10-32", 10, 32}, {"1x8-40", 8, 40}} {
		t.Run(c.name, func(t *testing.T) {
			defaultTakesFewer(t, b, func() *graph.Graph { return tirtest.ConvRect(1, 48, c.ci, 32, 1, c.kw, graph.ActRelu, -128) },
				map[string]int{}, map[string]int{"block_px": 3}, "default blocks", "three-pixel blocks")
		})
	}
}

// maxPoolGraph is an int8 max pool k×k at stride s over h×w×c (input and
// output zero point -7), with activation act.
func maxPoolGraph(h, w, c, k, s int, pad graph.Padding, act graph.Activation) *graph.Graph {
	g := graph.New("maxpool", "tflite")
	q := &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-7}}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int8, Shape: []int{1, h, w, c}, Quant: q})
	oh, ow := (h+pad.Top+pad.Bottom-k)/s+1, (w+pad.Left+pad.Right-k)/s+1
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: []int{1, oh, ow, c}, Quant: q})
	g.AddNode(&graph.Node{Name: "pool", Op: graph.MaxPool2D, Inputs: []string{"x"}, Outputs: []string{"y"},
		Attrs: &graph.PoolAttrs{Kernel: [2]int{k, k}, Stride: [2]int{s, s}, Dilation: [2]int{1, 1}, Pad: pad, Act: act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// An int8 max pool takes four channels a step on the DSP (SSUB8 and SEL in
// the bytes of a word): it was scalar C at 16 to 30 instructions an output
// (review finding). Each case runs bit-exact (random and extreme inputs)
// in at most half the generic target's instructions; channel counts not a
// multiple of four take a scalar tail, and padded windows keep the generic
// form.
func TestMaxPoolSIMD53(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name  string
		g     func() *graph.Graph
		ratio float64 // instructions at most this times the generic target's
	}{
		{"2x2-c16", func() *graph.Graph { return maxPoolGraph(24, 24, 16, 2, 2, graph.Padding{}, graph.ActNone) }, 0.5},
		{"2x2-c20-relu6", func() *graph.Graph { return maxPoolGraph(12, 12, 20, 2, 2, graph.Padding{}, graph.ActRelu6) }, 0.5},
		{"3x3-s1-c8", func() *graph.Graph { return maxPoolGraph(10, 10, 8, 3, 1, graph.Padding{}, graph.ActRelu) }, 0.5},
		{"2x2-c6", func() *graph.Graph { return maxPoolGraph(12, 12, 6, 2, 2, graph.Padding{}, graph.ActNone) }, 0.8},
		{"3x3-same", func() *graph.Graph {
			return maxPoolGraph(9, 9, 8, 3, 2, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActNone)
		}, 1.05},
	} {
		t.Run(c.name, func(t *testing.T) {
			atMostOfGeneric(t, b, c.g, c.name, 3, c.ratio)
			if c.ratio < 1 {
				// The helper's C form (no asm), and an unoptimised build.
				checkGraphUnderQEMUFlags(t, b, c.g(), c.name+"-c", "", nil, []string{"-DMCUGEN_NO_ASM"}, 3, 53, "dsp_maxpool_s8(")
				checkGraphUnderQEMUFlags(t, b, c.g(), c.name+"-O0", "", nil, []string{"-O0"}, 2, 53, "dsp_maxpool_s8(")
			}
		})
	}
	// Helium and NEON: sixteen channels a vector.
	for _, bn := range []string{"mps3-an547", "aarch64-linux"} {
		vb := qemuBoard(t, bn)
		for _, c := range []struct {
			name string
			g    func() *graph.Graph
		}{
			{"2x2-c16", func() *graph.Graph { return maxPoolGraph(24, 24, 16, 2, 2, graph.Padding{}, graph.ActNone) }},
			{"3x3-c20-relu6", func() *graph.Graph { return maxPoolGraph(12, 12, 20, 3, 1, graph.Padding{}, graph.ActRelu6) }},
			{"2x2-c6", func() *graph.Graph { return maxPoolGraph(12, 12, 6, 2, 2, graph.Padding{}, graph.ActNone) }},
			{"2x2-c12", func() *graph.Graph { return maxPoolGraph(12, 12, 12, 2, 2, graph.Padding{}, graph.ActRelu) }},
		} {
			t.Run(bn+"-"+c.name, func(t *testing.T) {
				ratio := 0.5
				if bn == "aarch64-linux" && c.name == "2x2-c6" {
					ratio = 1 // under a NEON vector: the loops, as the generic target
				}
				atMostOfGeneric(t, vb, c.g, c.name, 3, ratio)
			})
		}
	}
}

// A fused RELU_N1_TO_1 (or ReLU6) over an output scale under 2^-31 puts
// its bounds beyond int32: they saturate (no clamp on that side of the int8
// range), the same on every build machine, and the firmware matches the
// reference interpreter (review finding: the reference held 2,147,483,520
// in an int8 output, the C clamped every value to 0 or 127 depending on
// the machine mcugen ran on).
func TestTinyScaleActivation53(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	host, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		act  graph.Activation
		zp   int32
	}{{"n1to1-z-128", graph.ActReluN1To1, -128}, {"n1to1-z0", graph.ActReluN1To1, 0}, {"relu6-z127", graph.ActRelu6, 127}} {
		for _, board := range []*boards.Board{b, host} {
			g := tirtest.Conv1x1(3, 3, 8, 8, c.act, c.zp)
			g.Tensors["y"].Quant.Scale = []float32{1e-10}
			checkedRun(t, g, c.name+"-"+board.Name, Options{Board: board, Version: "test"}, 3, 53)
		}
	}
}

// A 3×3 depthwise layer whose planar ring (three rows of every channel's
// planes) is past the kernel stack runs the planar form in slices of its
// channels, each over a ring of its own: it took the shared helper at 1.6
// times the instructions (review finding: 64 channels 40 wide; every
// stride-1 depthwise layer of MobileNetV2 1.0 at 96×96). Bit-exact, in
// place and not, in under 0.7 times the helper's instructions.
func TestDepthwisePlanarSlices53(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name         string
		h, w, ch, st int
	}{{"c64-w40", 12, 40, 64, 1}, {"c192-w12", 12, 12, 192, 1}, {"c96-w48-s2", 9, 48, 96, 2}} {
		t.Run(c.name, func(t *testing.T) {
			g := func() *graph.Graph { return tirtest.Conv3x3Size(c.h, c.w, c.ch, c.ch, c.st, graph.ActRelu6, -128) }
			o := Options{Board: b, Version: "test"}
			sliced := checkedRun(t, g(), c.name, o, 2, 53)
			// The inputs and outputs in the arena: the plan runs it in place.
			if s, err := CompileGraph(g(), c.name, Options{Board: b, Version: "test", IOInArena: true, ArenaExternal: true}); err != nil || !s.Plan.InPlace["conv"] {
				t.Fatalf("%s: not planned in place (%v)", c.name, err)
			}
			checkGraphUnderQEMUOpts(t, b, g(), c.name+"-inplace", Options{}, 2, 53, "dsp_dwp3")
			o.Knobs = map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 0}}
			helper := checkedRun(t, g(), c.name+"-helper", o, 1, 53)
			t.Logf("%s on mps2-an386: %d instructions in slices, %d with the shared helper", c.name, sliced, helper)
			if c.st == 1 && float64(sliced) > 0.7*float64(helper) || float64(sliced) >= float64(helper) {
				t.Errorf("%s: %d instructions in slices, the shared helper %d", c.name, sliced, helper)
			}
		})
	}
	// 68 = 4·17 channels at stride 2 would run seventeen slices of four,
	// 0.65% over the shared helper (review finding): it keeps the helper.
	g := func() *graph.Graph { return tirtest.Conv3x3Size(9, 48, 68, 68, 2, graph.ActRelu6, -128) }
	o := Options{Board: b, Version: "test"}
	got := checkedRun(t, g(), "c68-s2", o, 1, 53)
	o.Knobs = map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 0}}
	if helper := checkedRun(t, g(), "c68-s2-helper", o, 1, 53); got > helper {
		t.Errorf("68 channels at stride 2: %d instructions, the shared helper %d", got, helper)
	}
}

// A reduction whose K/4 is a prime (K = 116, 124, 148, ...) is padded with
// zeros to a length the micro-kernel unrolls: one group of four k an
// iteration cost 15-22% (review finding). The layer takes no more
// instructions than the same layer over the padded K (+1% for the zero
// words), and runs bit-exact.
func TestPrimeQuarterKPads53(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		name      string
		g         func(k int) *graph.Graph
		k, padded int
	}{
		{"fc-116", func(k int) *graph.Graph { return fcGraph51(1, k, 128) }, 116, 120},
		{"fc-188", func(k int) *graph.Graph { return fcGraph51(2, k, 64) }, 188, 192},
		{"pointwise-116", func(k int) *graph.Graph { return tirtest.Pointwise(6, 8, k, 32) }, 116, 120},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Board: b, Version: "test"}
			got := checkedRun(t, c.g(c.k), c.name, o, 2, 53)
			ref := checkedRun(t, c.g(c.padded), c.name+"-padded", o, 1, 53)
			t.Logf("%s on mps2-an386: %d instructions, %d over K = %d", c.name, got, ref, c.padded)
			if float64(got) > 1.01*float64(ref) {
				t.Errorf("%s: %d instructions, the layer over K = %d takes %d", c.name, got, c.padded, ref)
			}
		})
	}
}

// atMostOfGeneric runs g on board b with its target's defaults (nRandom
// random inputs and the extreme ones) and with the generic target, both
// bit-exact against the reference interpreter, and fails the test where
// the first takes more than ratio times the generic target's instructions.
func atMostOfGeneric(t *testing.T, b *boards.Board, g func() *graph.Graph, name string, nRandom int, ratio float64) {
	t.Helper()
	o := Options{Board: b, Version: "test"}
	got := checkedRun(t, g(), name, o, nRandom, 53)
	o.Target = "generic"
	gen := checkedRun(t, g(), name+"-generic", o, 1, 53)
	t.Logf("%s on %s: %d instructions, the generic target %d", name, b.Name, got, gen)
	if float64(got) > ratio*float64(gen) {
		t.Errorf("%s on %s: %d instructions, the generic target %d: want at most %.2f times", name, b.Name, got, gen, ratio)
	}
}
