package pipeline

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// ONNX Runtime's QOperator format (com.microsoft QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
// QLinearAveragePool, QLinearConcat, QLinearSoftmax, QGemm) was refused as
// unsupported ops. Each is its float operator between DequantizeLinear and
// QuantizeLinear (ONNX Runtime's contrib operator docs); the importer writes
// them so, and they fold to the int8 kernels.

// msModel starts a model with x quantized by QuantizeLinear(xs, xz).
func msModel(name string, shape []int, xs float64, xzdt graph.DType, xz float64) (*onnx.Builder, string) {
	bl := onnx.NewBuilder(name, 13, 1)
	bl.Model().OpsetImport = append(bl.Model().OpsetImport, onnx.OpsetID{Domain: "com.microsoft", Version: 1})
	x := bl.Input("x", graph.Float32, shape...)
	q := bl.Node("QuantizeLinear", []string{x, bl.Scalar(name+"_xs", graph.Float32, xs), bl.Scalar(name+"_xz", xzdt, xz)})
	return bl, q
}

// msInts returns a maker of integer initializers of pseudo-random values
// (-127..127; int32 ones 37 times that), from seed.
func msInts(bl *onnx.Builder, seed uint64) func(name string, dt graph.DType, shape ...int) string {
	return func(name string, dt graph.DType, shape ...int) string {
		d := graph.NewData(dt, shape)
		for i := range d.I {
			seed = seed*6364136223846793005 + 1442695040888963407
			d.I[i] = int64(seed>>33)%255 - 127
			if dt == graph.Int32 {
				d.I[i] *= 37
			}
		}
		return bl.Init(name, d)
	}
}

// msNode adds a com.microsoft node.
func msNode(bl *onnx.Builder, op string, ins []string, attrs ...*onnx.Attribute) string {
	out := bl.Node(op, ins, attrs...)
	g := bl.Model().Graph
	g.Nodes[len(g.Nodes)-1].Domain = "com.microsoft"
	return out
}

// msOut dequantizes y with (s, z) as the float output.
func msOut(bl *onnx.Builder, y string, s float64, zdt graph.DType, z float64) {
	bl.Output(bl.Node("DequantizeLinear", []string{y, bl.Scalar(y+"_s", graph.Float32, s), bl.Scalar(y+"_z", zdt, z)}), graph.Float32)
}

// msFold imports bl's model and folds it (FoldQDQ).
func msFold(t *testing.T, bl *onnx.Builder) (g, f *graph.Graph) {
	t.Helper()
	g, err := onnx.Import(bl.Model().Graph.Name, bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if f, err = FoldQDQ(g); err != nil {
		t.Fatalf("fold: %v", err)
	}
	return g, f
}

// msAllInt fails where a node of f other than a Quantize or Dequantize (or
// an op of allowFloat) computes in float.
func msAllInt(t *testing.T, f *graph.Graph, allowFloat ...graph.Op) {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Op == graph.Quantize || n.Op == graph.Dequantize || slices.Contains(allowFloat, n.Op) {
			continue
		}
		for _, o := range n.Outputs {
			if dt := f.Tensors[o].DType; dt == graph.Float32 {
				t.Errorf("node %s (%s) still computes in float", n.Name, n.Op)
			}
		}
	}
}

// msRun imports and folds bl's model, checks that only the input's
// Quantize and the output's Dequantize compute in float, and returns the
// interpreter's output for x (and, outside -short, checks the C for the
// host gives the same). Ops in allowFloat (no int8 form in TFLite) may stay
// in float.
func msRun(t *testing.T, bl *onnx.Builder, x *graph.Data, allowFloat ...graph.Op) *graph.Data {
	t.Helper()
	g, f := msFold(t, bl)
	msAllInt(t, f, allowFloat...)
	out, err := interp.Run(f, map[string]*graph.Data{"x": x})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	y := out[f.Outputs[0]]
	if !testing.Short() {
		b, err := LoadBoard("host", "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := CompileGraph(g, "msq", Options{Board: b, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := s.Execute([]map[string]*graph.Data{{"x": x}}, t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !ex.AllMatch() || !sameFloats(ex.Outputs[0][0].F, y.F) {
			t.Errorf("the C gives %v, the interpreter %v", ex.Outputs[0][0].F, y.F)
		}
	}
	return y
}

func sameFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func wantFloats(t *testing.T, what string, got *graph.Data, want ...float64) {
	t.Helper()
	if got == nil || len(got.F) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i, w := range want {
		if math.Abs(float64(got.F[i])-w) > 1e-6*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: got %v, want %v", what, got.F, want)
			return
		}
	}
}

// TestMicrosoftQOps works each operator by hand (no value within a tenth of
// a step of a rounding tie, where ONNX Runtime's float and TFLite's fixed
// point could round apart).
func TestMicrosoftQOps(t *testing.T) {
	t.Parallel()
	i8, u8 := graph.Int8, graph.UInt8
	f := func(shape []int, v ...float32) *graph.Data {
		return &graph.Data{DType: graph.Float32, Shape: shape, F: v}
	}
	q8 := func(bl *onnx.Builder, name string, dt graph.DType, shape []int, v ...int64) string {
		return bl.Init(name, &graph.Data{DType: dt, Shape: shape, I: v})
	}

	t.Run("QLinearAdd", func(t *testing.T) {
		// A = x/0.5 = 10, 20, -5 → 5, 10, -2.5; B = (5, -6, 3) − 2 at 0.25 →
		// 0.75, -2, 0.25; sums 5.75, 8, -2.25 at scale 1 → 6, 8, -2.
		bl, a := msModel("add", []int{1, 3}, 0.5, i8, 0)
		b := q8(bl, "b", i8, []int{3}, 5, -6, 3)
		c := msNode(bl, "QLinearAdd", []string{a, bl.Scalar("as", graph.Float32, 0.5), bl.Scalar("az", i8, 0),
			b, bl.Scalar("bs", graph.Float32, 0.25), bl.Scalar("bz", i8, 2), bl.Scalar("cs", graph.Float32, 1), bl.Scalar("cz", i8, -3)})
		msOut(bl, c, 1, i8, -3)
		wantFloats(t, "add", msRun(t, bl, f([]int{1, 3}, 5, 10, -2.5)), 6, 8, -2)
	})
	t.Run("QLinearMul uint8", func(t *testing.T) {
		// A = 1, -0.5, 2 at (0.1, 128); B = (130, 120, 140) − 128 at 0.5 =
		// 1, -4, 6; products 1, 2, 12 at (0.2, 100) → 105, 110, 160.
		bl, a := msModel("mul", []int{1, 3}, 0.1, u8, 128)
		b := q8(bl, "b", u8, []int{3}, 130, 120, 140)
		c := msNode(bl, "QLinearMul", []string{a, bl.Scalar("as", graph.Float32, 0.1), bl.Scalar("az", u8, 128),
			b, bl.Scalar("bs", graph.Float32, 0.5), bl.Scalar("bz", u8, 128), bl.Scalar("cs", graph.Float32, 0.2), bl.Scalar("cz", u8, 100)})
		msOut(bl, c, 0.2, u8, 100)
		wantFloats(t, "mul", msRun(t, bl, f([]int{1, 3}, 1, -0.5, 2)), 1, 2, 12)
	})
	t.Run("QLinearSigmoid", func(t *testing.T) {
		// σ(0, 1, -1)·256 = 128, 187.15, 68.85 → q − 128 = 0, 59, -59.
		bl, x := msModel("sig", []int{1, 3}, 0.1, i8, 0)
		y := msNode(bl, "QLinearSigmoid", []string{x, bl.Scalar("xs", graph.Float32, 0.1), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 1.0/256), bl.Scalar("yz", i8, -128)})
		msOut(bl, y, 1.0/256, i8, -128)
		wantFloats(t, "sigmoid", msRun(t, bl, f([]int{1, 3}, 0, 1, -1)), 0.5, 187.0/256, 69.0/256)
	})
	t.Run("QLinearLeakyRelu", func(t *testing.T) {
		// 1, -1, -0.3 with alpha 0.2: 1, -0.2, -0.06 at 0.05 → 20, -4, -1.2 → -1.
		bl, x := msModel("leaky", []int{1, 3}, 0.1, i8, 0)
		y := msNode(bl, "QLinearLeakyRelu", []string{x, bl.Scalar("xs", graph.Float32, 0.1), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 0.05), bl.Scalar("yz", i8, 0)}, onnx.FloatAttr("alpha", 0.2))
		msOut(bl, y, 0.05, i8, 0)
		wantFloats(t, "leaky", msRun(t, bl, f([]int{1, 3}, 1, -1, -0.3)), 1, -0.2, -0.05)
	})
	t.Run("QLinearGlobalAveragePool", func(t *testing.T) {
		// Channel means 2.75 and -2.75 at 0.3: ±9.17 → ±9 → ±2.7.
		bl, x := msModel("gap", []int{1, 2, 2, 2}, 1, i8, 0)
		y := msNode(bl, "QLinearGlobalAveragePool", []string{x, bl.Scalar("xs", graph.Float32, 1), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 0.3), bl.Scalar("yz", i8, 0)})
		msOut(bl, y, 0.3, i8, 0)
		wantFloats(t, "gap", msRun(t, bl, f([]int{1, 2, 2, 2}, 1, 2, 3, 5, -4, -4, -3, 0)), 9*float64(float32(0.3)), -9*float64(float32(0.3)))
	})
	t.Run("QLinearAveragePool", func(t *testing.T) {
		// Means 7/3 and 17/3 at the input's scale (an int8 pool keeps it;
		// another output scale leaves the pool in float, with a warning):
		// 2.33 → 2, 5.67 → 6.
		bl, x := msModel("avg", []int{1, 1, 1, 6}, 1, i8, 0)
		y := msNode(bl, "QLinearAveragePool", []string{x, bl.Scalar("xs", graph.Float32, 1), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 1), bl.Scalar("yz", i8, 0)},
			onnx.IntsAttr("kernel_shape", 1, 3), onnx.IntsAttr("strides", 1, 3), onnx.IntAttr("channels_last", 0))
		msOut(bl, y, 1, i8, 0)
		wantFloats(t, "avgpool", msRun(t, bl, f([]int{1, 1, 1, 6}, 1, 2, 4, 3, 5, 9)), 2, 6)
	})
	t.Run("QLinearConcat", func(t *testing.T) {
		// 1, 0.5 (at 0.25) and 2, -3 (at 1) requantized to 0.3: 3.33, 1.67,
		// 6.67, -10 → 3, 2, 7, -10.
		bl, a := msModel("cat", []int{1, 2}, 0.25, i8, 0)
		x2 := bl.Input("x2", graph.Float32, 1, 2)
		b := bl.Node("QuantizeLinear", []string{x2, bl.Scalar("x2s", graph.Float32, 1), bl.Scalar("x2z", i8, 0)})
		y := msNode(bl, "QLinearConcat", []string{bl.Scalar("ys", graph.Float32, 0.3), bl.Scalar("yz", i8, 0),
			a, bl.Scalar("as", graph.Float32, 0.25), bl.Scalar("az", i8, 0), b, "x2s", "x2z"}, onnx.IntAttr("axis", 1))
		msOut(bl, y, 0.3, i8, 0)
		_, fg := msFold(t, bl)
		out, err := interp.Run(fg, map[string]*graph.Data{"x": f([]int{1, 2}, 1, 0.5), "x2": f([]int{1, 2}, 2, -3)})
		if err != nil {
			t.Fatal(err)
		}
		s := float64(float32(0.3))
		wantFloats(t, "concat", out[fg.Outputs[0]], 3*s, 2*s, 7*s, -10*s)
	})
	t.Run("QLinearSoftmax", func(t *testing.T) {
		// softmax(0, 0.5, 1)·256 = 47.70, 78.64, 129.66 → 48, 79, 130.
		bl, x := msModel("softmax", []int{1, 3}, 0.5, i8, 0)
		y := msNode(bl, "QLinearSoftmax", []string{x, bl.Scalar("xs", graph.Float32, 0.5), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 1.0/256), bl.Scalar("yz", i8, -128)}, onnx.IntAttr("opset", 11))
		msOut(bl, y, 1.0/256, i8, -128)
		wantFloats(t, "softmax", msRun(t, bl, f([]int{1, 3}, 0, 0.5, 1)), 48.0/256, 79.0/256, 130.0/256)
	})
	reduce := func(opset int64) *onnx.Builder {
		// Row means 3 and 1/3 at 0.25: 12 and 1.33 → 1.
		bl, x := msModel("mean", []int{1, 2, 3}, 1, i8, 0)
		bl.Model().OpsetImport[0].Version = opset
		y := msNode(bl, "QLinearReduceMean", []string{x, bl.Scalar("xs", graph.Float32, 1), bl.Scalar("xz", i8, 0),
			bl.Scalar("ys", graph.Float32, 0.25), bl.Scalar("yz", i8, 0)}, onnx.IntsAttr("axes", 2), onnx.IntAttr("keepdims", 1))
		msOut(bl, y, 0.25, i8, 0)
		return bl
	}
	for _, opset := range []int64{13, 18} {
		t.Run("QLinearReduceMean opset "+string(rune('0'+opset/10))+string(rune('0'+opset%10)), func(t *testing.T) {
			wantFloats(t, "mean", msRun(t, reduce(opset), f([]int{1, 2, 3}, 1, 2, 6, -4, 0, 5)), 3, 0.25)
		})
	}
	t.Run("QLinearWhere", func(t *testing.T) {
		// where(1 0 1, x = 1, 2, 3, y = -1, -2, -3) = 1, -2, 3 at 0.5
		// (Where has no int8 form: it computes in float between its
		// Dequantizes and Quantize, with a warning).
		bl, x := msModel("where", []int{1, 3}, 0.5, i8, 0)
		c := bl.Init("c", &graph.Data{DType: graph.Bool, Shape: []int{3}, I: []int64{1, 0, 1}})
		y := q8(bl, "y", i8, []int{3}, -2, -4, -6)
		z := msNode(bl, "QLinearWhere", []string{c, x, "where_xs", "where_xz", y, bl.Scalar("ys", graph.Float32, 0.5), bl.Scalar("yz", i8, 0),
			bl.Scalar("zs", graph.Float32, 0.5), bl.Scalar("zz", i8, 0)})
		msOut(bl, z, 0.5, i8, 0)
		wantFloats(t, "where", msRun(t, bl, f([]int{1, 3}, 1, 2, 3), graph.Where), 1, -2, 3)
	})
	gemm := func(withY bool) *onnx.Builder {
		// A = 1, 2; B (transB) rows 0.5, -0.25 and 0.25, 0.75; C = 4, -7 at
		// 0.5·0.25: 0.5, -0.875. Y = 0 + 0.5 = 0.5 and 1.75 − 0.875 = 0.875;
		// at 0.1: 5 and 8.75 → 9.
		bl, a := msModel("gemm", []int{1, 2}, 0.5, i8, 0)
		b := q8(bl, "b", i8, []int{2, 2}, 2, -1, 1, 3)
		c := bl.Init("c", &graph.Data{DType: graph.Int32, Shape: []int{2}, I: []int64{4, -7}})
		ins := []string{a, bl.Scalar("as", graph.Float32, 0.5), bl.Scalar("az", i8, 0), b, bl.Scalar("bs", graph.Float32, 0.25), bl.Scalar("bz", i8, 0), c}
		if withY {
			ins = append(ins, bl.Scalar("ys", graph.Float32, 0.1), bl.Scalar("yz", i8, 0))
		}
		y := msNode(bl, "QGemm", ins, onnx.IntAttr("transB", 1))
		if withY {
			msOut(bl, y, 0.1, i8, 0)
		} else {
			bl.Output(y, graph.Float32)
		}
		return bl
	}
	t.Run("QGemm", func(t *testing.T) {
		wantFloats(t, "qgemm", msRun(t, gemm(true), f([]int{1, 2}, 1, 2)), 5*float64(float32(0.1)), 9*float64(float32(0.1)))
	})
	t.Run("QGemm float output", func(t *testing.T) {
		_, fg := msFold(t, gemm(false))
		out, err := interp.Run(fg, map[string]*graph.Data{"x": f([]int{1, 2}, 1, 2)})
		if err != nil {
			t.Fatal(err)
		}
		wantFloats(t, "qgemm float", out[fg.Outputs[0]], 0.5, 0.875)
	})
}

// TestMicrosoftQOpsRefused: what the expansion cannot take names the node.
func TestMicrosoftQOpsRefused(t *testing.T) {
	i8 := graph.Int8
	for _, c := range []struct {
		name string
		make func() *onnx.Builder
		want string
	}{
		{"channels_last", func() *onnx.Builder {
			bl, x := msModel("gap", []int{1, 2, 2, 2}, 1, i8, 0)
			y := msNode(bl, "QLinearGlobalAveragePool", []string{x, "gap_xs", "gap_xz", bl.Scalar("ys", graph.Float32, 0.3), bl.Scalar("yz", i8, 0)},
				onnx.IntAttr("channels_last", 1))
			msOut(bl, y, 0.3, i8, 0)
			return bl
		}, `node "QLinearGlobalAveragePool_2" (com.microsoft::QLinearGlobalAveragePool): channels_last=1`},
		{"concat inputs", func() *onnx.Builder {
			bl, x := msModel("cat", []int{1, 2}, 1, i8, 0)
			y := msNode(bl, "QLinearConcat", []string{bl.Scalar("ys", graph.Float32, 0.3), bl.Scalar("yz", i8, 0), x, "cat_xs"}, onnx.IntAttr("axis", 1))
			msOut(bl, y, 0.3, i8, 0)
			return bl
		}, "4 inputs; QLinearConcat takes"},
		{"unknown output type", func() *onnx.Builder {
			bl := onnx.NewBuilder("m", 13, 1)
			x := bl.Input("x", graph.Float32, 1, 3)
			q := bl.Node("QuantizeLinear", []string{x, bl.Scalar("s", graph.Float32, 1)})
			y := msNode(bl, "QLinearSigmoid", []string{q, "s", "", bl.Scalar("ys", graph.Float32, 1)})
			bl.Output(bl.Node("DequantizeLinear", []string{y, "ys"}), graph.Float32)
			return bl
		}, "the operands' type is not known"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Import("m", c.make().Model(), onnx.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
				t.Fatalf("got %v, want one line with %q", err, c.want)
			}
		})
	}
}

// TestMicrosoftQOpsModelOnBoards: a small residual network as ONNX
// Runtime's quantize_static writes it in the QOperator format (uint8
// activations, QLinearConv, QLinearAdd, QLinearGlobalAveragePool, Flatten,
// QGemm, QLinearSoftmax) folds to int8 kernels only and runs bit-exact
// against the reference interpreter on the M4 (dsp) and the M55 (mve).
func TestMicrosoftQOpsModelOnBoards(t *testing.T) {
	u8, i8 := graph.UInt8, graph.Int8
	bl, x := msModel("qop", []int{1, 3, 8, 8}, 0.02, u8, 128)
	ints := msInts(bl, 44)
	sc := func(name string, v float64) string { return bl.Scalar(name, graph.Float32, v) }
	z8 := func(name string) string { return bl.Scalar(name, u8, 128) }
	conv := func(name, in, inS, inZ string, cin, cout int, outS string) string {
		return bl.Node("QLinearConv", []string{in, inS, inZ, ints(name+"_w", i8, cout, cin, 3, 3), sc(name+"_ws", 0.004), bl.Scalar(name+"_wz", i8, 0),
			outS, z8(name + "_yz"), ints(name+"_b", graph.Int32, cout)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
	}
	c1 := conv("c1", x, "qop_xs", "qop_xz", 3, 8, sc("c1_ys", 0.05))
	c2 := conv("c2", c1, "c1_ys", "c1_yz", 8, 8, sc("c2_ys", 0.06))
	add := msNode(bl, "QLinearAdd", []string{c1, "c1_ys", "c1_yz", c2, "c2_ys", "c2_yz", sc("add_s", 0.08), z8("add_z")})
	gap := msNode(bl, "QLinearGlobalAveragePool", []string{add, "add_s", "add_z", sc("gap_s", 0.03), z8("gap_z")})
	flat := bl.Node("Flatten", []string{gap})
	fc := msNode(bl, "QGemm", []string{flat, "gap_s", "gap_z", ints("fc_w", i8, 4, 8), sc("fc_ws", 0.01), bl.Scalar("fc_wz", i8, 0),
		ints("fc_b", graph.Int32, 4), sc("fc_ys", 0.1), z8("fc_yz")}, onnx.IntAttr("transB", 1))
	sm := msNode(bl, "QLinearSoftmax", []string{fc, "fc_ys", "fc_yz", sc("sm_s", 1.0/256), bl.Scalar("sm_z", u8, 0)}, onnx.IntAttr("opset", 13))
	msOut(bl, sm, 1.0/256, u8, 0)

	g, f := msFold(t, bl)
	msAllInt(t, f)
	for _, board := range []string{"mps2-an386", "mps3-an547"} {
		t.Run(board, func(t *testing.T) {
			s, err := CompileGraph(g, "qop", Options{Board: qemuBoard(t, board), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d instructions", board, runCount(t, s))
		})
	}
}

// TestQOperatorUint8ChainShifted: a QOperator model with no float operator
// between its QuantizeLinear and DequantizeLinear (uint8 QLinearConv, a
// MaxPool on the uint8 values, QLinearConv) ran its layers in uint8, which
// the DSP and Helium kernels do not take (plain C). Its inner activations
// are now int8 at zero point z − 128 (the same values; a max keeps its
// order), and it runs bit-exact on the M4.
func TestQOperatorUint8ChainShifted(t *testing.T) {
	u8, i8 := graph.UInt8, graph.Int8
	bl, x := msModel("chain", []int{1, 4, 8, 8}, 0.02, u8, 128)
	ints := msInts(bl, 7)
	c1 := bl.Node("QLinearConv", []string{x, "chain_xs", "chain_xz", ints("w1", i8, 8, 4, 3, 3), bl.Scalar("w1s", graph.Float32, 0.004), bl.Scalar("w1z", i8, 0),
		bl.Scalar("y1s", graph.Float32, 0.05), bl.Scalar("y1z", u8, 120), ints("b1", graph.Int32, 8)}, onnx.IntsAttr("pads", 1, 1, 1, 1))
	mp := bl.Node("MaxPool", []string{c1}, onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2))
	c2 := bl.Node("QLinearConv", []string{mp, "y1s", "y1z", ints("w2", i8, 8, 8, 1, 1), bl.Scalar("w2s", graph.Float32, 0.004), bl.Scalar("w2z", i8, 0),
		bl.Scalar("y2s", graph.Float32, 0.06), bl.Scalar("y2z", u8, 130), ints("b2", graph.Int32, 8)})
	msOut(bl, c2, 0.06, u8, 130)
	g, f := msFold(t, bl)
	shifted := 0
	for _, n := range f.Nodes {
		if n.Op != graph.Conv2D && n.Op != graph.MaxPool2D {
			continue
		}
		for _, name := range []string{n.Inputs[0], n.Outputs[0]} {
			tt := f.Tensors[name]
			if tt.DType != i8 {
				t.Errorf("%s: %s, want int8", name, tt.DType)
				continue
			}
			shifted++
			if z := tt.Quant.ZeroPoint[0]; z != 0 && z != -8 && z != 2 {
				t.Errorf("%s: zero point %d, want 128, 120 or 130 less 128", name, z)
			}
		}
	}
	if shifted != 6 {
		t.Errorf("%d conv and pool operands int8, want 6", shifted)
	}
	s, err := CompileGraph(g, "chain", Options{Board: qemuBoard(t, "mps2-an386"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mps2-an386: %d instructions", runCount(t, s))
}
