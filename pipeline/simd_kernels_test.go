package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// withOutScale sets g's output tensor y to scale s (a small s makes the
// requantization multiplier exceed 1: a left shift).
func withOutScale(g *graph.Graph, s float32) *graph.Graph {
	g.Tensor("y").Quant.Scale = []float32{s}
	return g
}

// addGraph is y = a ± b over shape with activation act: the int8 ADD/SUB
// micro-kernel's operands (input scales 0.05 and 0.08, zero points -3 and 7).
func addGraph(op graph.Op, shape []int, act graph.Activation, yscale float32, yzp int32) *graph.Graph {
	g := graph.New("addsub", "tflite")
	g.AddTensor(&graph.Tensor{Name: "a", DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{0.05}, ZeroPoint: []int32{-3}}})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{0.08}, ZeroPoint: []int32{7}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: shape, Quant: &graph.Quant{Scale: []float32{yscale}, ZeroPoint: []int32{yzp}}})
	g.AddNode(&graph.Node{Name: "op", Op: op, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{Act: act}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	return g
}

// The M55's and the Cortex-A's depthwise and ADD/SUB C (mve on mps3-an547,
// neon on aarch64-linux) runs bit-exact under QEMU in each of its forms: the depthwise 3x3 taps at strides 1 and 2 with the
// sign fix-up (no activation), without it (ReLU at the zero point), with the
// int8-range clamp as a saturating shift or as VMAX/VMIN (ReLU6, a ReLU above
// -128), and with a left shift (a multiplier above 1); ADD and SUB likewise,
// over a length that leaves a predicated tail. (ADD's output multiplier
// exceeds 1 only when every nonzero sum saturates, so its left shift is not
// a case a test can tell apart.) The blocked GEMV under convolutions runs with
// K a multiple of sixteen and with a predicated tail.
func TestSIMDKernelsUnderQEMU(t *testing.T) {
	t.Parallel()
	for _, bt := range []struct{ board, target string }{{"mps3-an547", "mve"}, {"aarch64-linux", "neon"}} {
		t.Run(bt.target, func(t *testing.T) { checkSIMDKernels(t, bt.board, bt.target) })
	}
}

func checkSIMDKernels(t *testing.T, board, target string) {
	b := qemuBoard(t, board)
	dw, add, gemv := target+"_dwconvrq_s8(", target+"_addsub_s8(", target+"_gemvb"
	for _, c := range []struct {
		name string
		g    func() *graph.Graph // a graph per subtest: compiling changes it
		call string
	}{
		{"dw-none", func() *graph.Graph { return tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5) }, dw},
		{"dw-relu-stride2", func() *graph.Graph { return tirtest.Conv3x3(16, 16, 2, graph.ActRelu, -128) }, dw},
		{"dw-relu6", func() *graph.Graph { return tirtest.Conv3x3(8, 8, 1, graph.ActRelu6, -128) }, dw},
		{"dw-relu-zp5", func() *graph.Graph { return tirtest.Conv3x3(8, 8, 1, graph.ActRelu, 5) }, dw},
		{"dw-left", func() *graph.Graph { return withOutScale(tirtest.Conv3x3(8, 8, 1, graph.ActNone, 2), 0.0001) }, dw},
		{"dw-w5", func() *graph.Graph { return tirtest.Conv3x3Size(4, 5, 24, 24, 1, graph.ActRelu, -128) }, dw},
		// Channels not a multiple of eight (pruned layers): a last four
		// channels apart, alone (4), after two steps (20), with a left
		// shift at stride 2 (12).
		{"dw-c4", func() *graph.Graph { return tirtest.Conv3x3(4, 4, 1, graph.ActNone, 5) }, dw},
		{"dw-c20-relu6", func() *graph.Graph { return tirtest.Conv3x3(20, 20, 1, graph.ActRelu6, -128) }, dw},
		{"dw-c12-left-stride2", func() *graph.Graph { return withOutScale(tirtest.Conv3x3(12, 12, 2, graph.ActNone, 2), 0.0001) }, dw},
		// Maps the M55 lays out in planes by default (stride 1, lines of at
		// least eight): rows of 13 (three vectors and a tail of one), 20
		// channels (a byte scatter of eight twice, then four); columns
		// (a 25×5 map, as KWS's), a tail of one, ReLU6's clamp; rows of 8
		// with the input zero point not -128.
		{"dw-rows-w13-c20", func() *graph.Graph { return tirtest.Conv3x3Size(3, 13, 20, 20, 1, graph.ActRelu, -128) }, target + "_dw"},
		{"dw-cols-25x5-relu6", func() *graph.Graph { return tirtest.Conv3x3Size(25, 5, 8, 8, 1, graph.ActRelu6, -128) }, target + "_dw"},
		{"dw-rows-w8-none", func() *graph.Graph { return tirtest.Conv3x3Size(2, 8, 4, 4, 1, graph.ActNone, 5) }, target + "_dw"},
		{"add-relu", func() *graph.Graph { return addGraph(graph.Add, []int{1, 3, 5, 7}, graph.ActRelu, 0.1, -128) }, add},
		{"add-none", func() *graph.Graph { return addGraph(graph.Add, []int{1, 3, 5, 7}, graph.ActNone, 0.1, 3) }, add},
		{"sub-relu6", func() *graph.Graph { return addGraph(graph.Sub, []int{1, 2, 9}, graph.ActRelu6, 0.05, -100) }, add},
		// The blocked GEMV (im2col convolutions, two pixels and one): K = 144
		// (nine full steps of sixteen), and K = 72 (four and a predicated tail).
		{"gemv-k144", func() *graph.Graph { return tirtest.Conv3x3(16, 1, 1, graph.ActRelu, -128) }, gemv},
		{"gemv-k72-tail", func() *graph.Graph { return tirtest.Conv3x3Size(5, 5, 8, 1, 1, graph.ActNone, 3) }, gemv},
		// Pointwise: pixel pairs (an odd count: one single pixel too), K 64
		// and K 40 (two full steps and a tail).
		{"pointwise-k64", func() *graph.Graph { return tirtest.Pointwise(3, 5, 64, 12) }, gemv},
		{"pointwise-k40", func() *graph.Graph { return tirtest.Pointwise(3, 3, 40, 8) }, gemv},
		// On the M55 pointwise pixels go three at a time (gemvb3) above K
		// 16: 10 pixels (three groups and one alone), 8 (two and two alone)
		// with K 24 (a step and a tail), K 32 (two steps, no tail).
		{"pointwise-k64-p10", func() *graph.Graph { return tirtest.Pointwise(2, 5, 64, 8) }, gemv},
		{"pointwise-k24-p8", func() *graph.Graph { return tirtest.Pointwise(2, 4, 24, 12) }, gemv},
		{"pointwise-k32-p6", func() *graph.Graph { return tirtest.Pointwise(2, 3, 32, 8) }, gemv},
		// Reductions up to 16 long take <target>_pwrq_s8 (one VMLADAV, or
		// one SDOT and pairwise adds, per output; four outputs requantized
		// in a vector), pixels two at a time (pwrq2) and an odd last one
		// alone: K 8, an odd count with a full vector of k, a left shift,
		// no activation, a clamp.
		{"small-k8-p10", func() *graph.Graph { return tirtest.Pointwise(2, 5, 8, 4) }, gemv},
		{"small-k16-p9-relu6", func() *graph.Graph { return tirtest.Conv1x1(3, 3, 16, 12, graph.ActRelu6, -128) }, gemv},
		{"small-k5-left", func() *graph.Graph { return withOutScale(tirtest.Conv1x1(1, 3, 5, 8, graph.ActNone, 3), 0.0001) }, gemv},
		{"small-k12-none", func() *graph.Graph { return tirtest.Conv1x1(2, 2, 12, 20, graph.ActNone, 3) }, gemv},
		// Windowed 3×3 convolutions: on the M55 three windows at a time,
		// interleaved in 16-byte chunks (gemvb3i), with padding fills, a
		// last pixel alone (7 columns) and 32 channels (two chunks a tap).
		{"window3-cin32-w7", func() *graph.Graph { return tirtest.Conv3x3Size(4, 7, 32, 1, 1, graph.ActRelu, -128) }, gemv},
		{"window3-cin16-w6-stride2", func() *graph.Graph { return tirtest.Conv3x3Size(6, 12, 16, 1, 2, graph.ActNone, 3) }, gemv},
		// An RGB-like input (Cin 3): each window row is nine bytes, copied
		// whole where it lies inside the image (row_copy_below 16), cell by
		// cell at the padded edges; on the M55 three windows interleaved
		// (gemvb3i), the reduction of 27 run as 32.
		{"rgb-cin3-stride2", func() *graph.Graph { return tirtest.ConvRGB(7, 9, 8, 2, graph.ActRelu, -128) }, gemv},
		{"rgb-cin3-stride1", func() *graph.Graph { return tirtest.ConvRGB(5, 6, 12, 1, graph.ActNone, 3) }, gemv},
		// One input channel, a 5×5 kernel: five-byte window rows that
		// straddle the 16-byte chunks of the three interleaved windows, a
		// reduction of 25 run as 32 (on the M55).
		{"window3-cin1-k5", func() *graph.Graph { return tirtest.ConvK(9, 10, 1, 8, 5, 1, graph.ActRelu, -128) }, gemv},
		// Pointwise layers that grow the channels, in place (on the M55 the
		// plan puts a lone layer with its I/O in the arena over its input,
		// and its pixel groups run backwards): short reductions in pairs
		// (15 pixels: an odd one), three-pixel groups with one left over.
		{"small-k8-p15-inplace", func() *graph.Graph { return tirtest.Pointwise(3, 5, 8, 16) }, gemv},
		{"pointwise-k24-p10-inplace", func() *graph.Graph { return tirtest.Pointwise(2, 5, 24, 40) }, gemv},
	} {
		call := c.call
		if call == target+"_dw" {
			// Lines of eight or more outputs: the lanes schedule on the M55.
			call = map[string]string{"mve": "mve_dwl3_s8(", "neon": "neon_dwconvrq_s8("}[target]
		}
		if target == "mve" && strings.HasPrefix(c.name, "pointwise") {
			call = "mve_gemvb3_s8("
		}
		if target == "mve" && (strings.HasPrefix(c.name, "window3") || strings.HasPrefix(c.name, "rgb")) {
			call = "mve_gemvb3i_s8("
		}
		if strings.HasPrefix(c.name, "small-k") {
			call = target + "_pwrq2_s8("
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// Out of place: a lone depthwise layer with its I/O in the
			// arena would run in place, which on the M55 takes the lanes
			// schedule.
			inPlace := strings.HasSuffix(c.name, "-inplace")
			o := Options{Target: target, NoInPlace: !inPlace}
			if target == "neon" && (c.name == "dw-c4" || c.name == "dw-rows-w8-none") {
				// Under eight channels NEON depthwise layers take the
				// generic loops by default (session 54); knob simd keeps
				// the NEON kernel's four-channel tail tested.
				o.Knobs = map[string]map[string]int{"depthwise_conv2d": {"simd": 1}}
			}
			if target == "mve" && call == add {
				// The M55's ADD/SUB take tables by default (session 55,
				// TestAddLUT55); knob add_lut keeps the vector form of
				// TFLite's three requantizations tested (the form of what the
				// tables' compile-time check refuses).
				o.Knobs = map[string]map[string]int{"add": {"add_lut": 0}, "sub": {"add_lut": 0}}
			}
			checkGraphUnderQEMUOpts(t, b, c.g(), c.name, o, 6, 11, call)
		})
		if target == "mve" && (call == dw || c.call == target+"_dw") {
			// The same depthwise layer with the pixels in the lanes
			// (mve_dwl3_s8, dw_lanes 2: wherever it applies) and in place,
			// the asm and the C forms.
			lanes := map[string]map[string]int{"depthwise_conv2d": {"dw_lanes": 2}}
			t.Run(c.name+"-lanes", func(t *testing.T) {
				checkGraphUnderQEMU(t, b, c.g(), c.name, target, lanes, 6, 11, "mve_dwl3_s8(")
			})
			t.Run(c.name+"-lanes-c", func(t *testing.T) {
				checkGraphUnderQEMUFlags(t, b, c.g(), c.name, target, lanes, []string{"-DMCUGEN_NO_ASM"}, 6, 11, "mve_dwl3_s8(")
			})
		}
		if target == "mve" && strings.HasPrefix(call, "mve_gemvb3") {
			// The C forms beside the three-pixel asm.
			t.Run(c.name+"-c", func(t *testing.T) {
				checkGraphUnderQEMUFlags(t, b, c.g(), c.name, target, nil, []string{"-DMCUGEN_NO_ASM"}, 6, 11, call)
			})
		}
	}
}

// TestSIMDStaticArenaUnderQEMU runs windowed convolutions with the arena a
// static array and the inputs and outputs in it (as mcugen tune measures
// kernels): gcc then knows every address, and under gcc 12, which treats a
// predicated MVE store as a store of the whole vector, dead-store elimination
// dropped window bytes that a later tail store did not touch (a window's
// zero padding, the next pixel's window). The MVE helpers store tails
// through memcpy.
func TestSIMDStaticArenaUnderQEMU(t *testing.T) {
	t.Parallel()
	for _, bt := range []struct{ board, target string }{{"mps3-an547", "mve"}, {"aarch64-linux", "neon"}} {
		b := qemuBoard(t, bt.board)
		for _, c := range []struct {
			name string
			g    *graph.Graph
		}{
			{"rgb-stride2", tirtest.ConvRGB(7, 9, 8, 2, graph.ActRelu, -128)},
			{"rgb-stride1", tirtest.ConvRGB(5, 6, 12, 1, graph.ActNone, 3)},
			{"cin1-k5", tirtest.ConvK(9, 10, 1, 8, 5, 1, graph.ActRelu, -128)},
			{"dw-c20", tirtest.Conv3x3(20, 20, 1, graph.ActRelu6, -128)},
		} {
			t.Run(bt.target+"/"+c.name, func(t *testing.T) {
				s, err := CompileGraph(c.g, c.name, Options{Board: b, Target: bt.target, IOInArena: true, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				x, err := s.Execute(append(RandomInputs(s.Graph, 4, 5), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("outputs differ from the reference interpreter")
				}
			})
		}
	}
}
