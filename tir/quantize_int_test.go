package tir_test

import (
	"math"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tir"
)

// requantCase is one integer -> integer QUANTIZE: input type, scale and
// zero point, output type, scale and zero point.
type requantCase struct {
	name   string
	xt, yt graph.DType
	sx, sy float32
	zx, zy int32
}

var requantCases = []requantCase{
	// int16 -> int8, a ratio below 1 and one above (5: saturates).
	{"s16_s8_down", graph.Int16, graph.Int8, 1.0 / 4096, 0.05, -7, 5},
	{"s16_s8_up", graph.Int16, graph.Int8, 0.5, 0.1, 100, -3},
	// int32 -> int16: x - zx of an extreme int32 wraps, as in TFLite.
	{"s32_s16_down", graph.Int32, graph.Int16, 1e-4, 0.25, 12345, -21},
	{"s32_s16_up", graph.Int32, graph.Int16, 3, 0.7, -77, 11},
	{"s32_s16_zp_min", graph.Int32, graph.Int16, 0.001, 0.3, math.MinInt32, 0},
	// int16 -> int32: ratio 200, and 2^20, whose left shift wraps and
	// whose sum with a large output zero point wraps.
	{"s16_s32_up", graph.Int16, graph.Int32, 0.02, 0.0001, -5, 1000},
	{"s16_s32_huge", graph.Int16, graph.Int32, 1, 1.0 / (1 << 20), 3, 1 << 30},
	{"s16_s32_down", graph.Int16, graph.Int32, 0.001, 0.3, 17, -123456},
	// int16 -> int16: below 1 (with the double rounding worked below) and above.
	{"s16_s16_double_round", graph.Int16, graph.Int16, 0.25, 1, -2, 9},
	{"s16_s16_up", graph.Int16, graph.Int16, 0.0007, 0.00021, 0, -4},
	{"s16_s16_same", graph.Int16, graph.Int16, 0.01, 0.01, 3, -3},
	// int32 -> int8 and int32 -> int32.
	{"s32_s8", graph.Int32, graph.Int8, 1e-5, 0.02, -400000, 7},
	{"s32_s32", graph.Int32, graph.Int32, 0.6, 0.2, 1 << 30, -(1 << 30)},
}

// requantGraph is x (c.xt, shape) -> QUANTIZE -> y (c.yt).
func requantGraph(c requantCase, shape []int) *graph.Graph {
	g := graph.New("requant_"+c.name, "tflite")
	g.AddTensor(&graph.Tensor{Name: "x", DType: c.xt, Shape: shape,
		Quant: &graph.Quant{Scale: []float32{c.sx}, ZeroPoint: []int32{c.zx}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: c.yt, Shape: shape,
		Quant: &graph.Quant{Scale: []float32{c.sy}, ZeroPoint: []int32{c.zy}}})
	g.AddNode(&graph.Node{Name: "tensor_1", Op: graph.Quantize, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// requantInput is the input's extremes, its zero point and neighbours, 0,
// and random values over its whole range.
func requantInput(r *rand.Rand, c requantCase, n int) *graph.Data {
	lo, hi := c.xt.Range()
	d := graph.NewData(c.xt, []int{n})
	fixed := []int64{lo, hi, lo + 1, hi - 1, 0, 1, -1, int64(c.zx), int64(c.zx) + 1, int64(c.zx) - 1}
	for i := range d.I {
		if i < len(fixed) {
			d.I[i] = max(lo, min(hi, fixed[i]))
			continue
		}
		d.I[i] = lo + r.Int63n(hi-lo+1)
	}
	return d
}

func lowerRequant(t *testing.T, g *graph.Graph, target tir.Target) *tir.Module {
	t.Helper()
	m, err := lowerPlanned(t, g, target)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lowerPlanned plans g (in-place forms allowed) and lowers it for target.
func lowerPlanned(t *testing.T, g *graph.Graph, target tir.Target) (*tir.Module, error) {
	t.Helper()
	opt := memplan.DefaultOptions()
	opt.InPlaceOK = tir.InPlaceOK
	plan, err := memplan.Build(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tir.Lower(g, plan, target)
}

// matchesInterpOnTargets lowers g (input "x", output "y") for the generic,
// dsp and mve targets and runs each module in the TIR interpreter on every
// input of ins: bit-exact with graph/interp.
func matchesInterpOnTargets(t *testing.T, g *graph.Graph, ins []*graph.Data) {
	t.Helper()
	feeds := make([]map[string]*graph.Data, len(ins))
	for i, x := range ins {
		feeds[i] = map[string]*graph.Data{"x": x}
	}
	feedsMatchInterpOnTargets(t, g, feeds)
}

// feedsMatchInterpOnTargets is matchesInterpOnTargets for any inputs: each
// feed's output "y" on the generic, dsp and mve targets is graph/interp's.
func feedsMatchInterpOnTargets(t *testing.T, g *graph.Graph, feeds []map[string]*graph.Data) {
	t.Helper()
	for _, name := range []string{"generic", "dsp", "mve"} {
		target, err := tir.TargetByName(name)
		if err != nil {
			t.Fatal(err)
		}
		m := lowerRequant(t, g, target)
		for v, in := range feeds {
			want, err := interp.Run(g, in)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			got, err := tir.RunModule(m, in)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := same(want["y"], got["y"]); err != nil {
				t.Fatalf("%s, feed %d: %v", name, v, err)
			}
		}
	}
}

// TestQuantizeIntMatchesInterp lowers int16 and int32 QUANTIZE (TFLite's
// requantization between integer types) and runs the module in the TIR
// interpreter: bit-exact with graph/interp on the input's extremes, its
// zero point and random values, on the generic, dsp and mve targets.
func TestQuantizeIntMatchesInterp(t *testing.T) {
	const n = 200
	for _, c := range requantCases {
		t.Run(c.name, func(t *testing.T) {
			g := requantGraph(c, []int{n})
			r := rand.New(rand.NewSource(int64(len(c.name))))
			matchesInterpOnTargets(t, g, []*graph.Data{requantInput(r, c, n), requantInput(r, c, n)})
		})
	}
}

// TestQuantizeIntHandWorked checks values worked by hand against both
// graph/interp and the lowered TIR.
func TestQuantizeIntHandWorked(t *testing.T) {
	run := func(c requantCase, xs []int64) ([]int64, []int64) {
		g := requantGraph(c, []int{len(xs)})
		x := graph.NewData(c.xt, []int{len(xs)})
		copy(x.I, xs)
		in := map[string]*graph.Data{"x": x}
		want, err := interp.Run(g, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tir.RunModule(lowerRequant(t, g, *tir.Generic), in)
		if err != nil {
			t.Fatal(err)
		}
		return want["y"].I, got["y"].I
	}
	check := func(what string, ref, got, hand []int64) {
		t.Helper()
		for i := range hand {
			if ref[i] != hand[i] || got[i] != hand[i] {
				t.Errorf("%s[%d]: interp %d, TIR %d, by hand %d", what, i, ref[i], got[i], hand[i])
			}
		}
	}
	// int16 -> int8, s_in / s_out = 0.5 / 0.1 = 5 = 0.625 · 2^3:
	// multiplier round(0.625 · 2^31) = 1342177280, shift 3. x = 103:
	// (103 − 100) << 3 = 24, SRDHM(24, m) = round(24 · 0.625) = 15, + zy
	// (−3) = 12. x = 200: 100 · 5 − 3 = 497, clamped to 127. x = −32768:
	// −32868 · 5 − 3, clamped to −128.
	ref, got := run(requantCases[1], []int64{103, 200, -32768, 100})
	check("s16_s8_up", ref, got, []int64{12, 127, -128, -3})
	// int16 -> int16, 0.25 / 1 = 0.5 · 2^-1: multiplier 2^30, shift −1.
	// x = 3: d = 3 − (−2) = 5, SRDHM(5, 2^30) = round(2.5) = 3, then
	// RoundingDivideByPOT(3, 1) = round(1.5) = 2: TFLite's double rounding
	// gives 2 where 5 · 0.25 = 1.25 rounds to 1. y = 2 + 9 = 11.
	ref, got = run(requantCases[8], []int64{3})
	check("s16_s16_double_round", ref, got, []int64{11})
	// int32 -> int16 with zx = 12345: x = −2^31 gives d = −2^31 − 12345,
	// which wraps to 2^31 − 12345 in TFLite's int32 arithmetic (and in
	// graph/interp's): a large positive value, clamped to 32767.
	ref, got = run(requantCases[2], []int64{math.MinInt32})
	check("s32_s16_down", ref, got, []int64{32767})
}

// TestQuantizeIntRefused: an output type TFLite does not take, and a
// scale ratio whose left shift C cannot do.
func TestQuantizeIntRefused(t *testing.T) {
	for _, c := range []struct {
		c    requantCase
		want string
	}{
		{requantCase{"s16_u8", graph.Int16, graph.UInt8, 0.1, 0.1, 0, 0}, "not supported"},
		{requantCase{"s16_s32_ratio", graph.Int16, graph.Int32, 1e6, 1e-6, 0, 0}, "2^31 or more"},
	} {
		g := requantGraph(c.c, []int{4})
		plan, err := memplan.Build(g, memplan.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = tir.Lower(g, plan, *tir.Generic)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.c.name, err, c.want)
		}
	}
}

// TestQuantizeIntHostC compiles each case to C for the host with
// AddressSanitizer and UndefinedBehaviorSanitizer (-pedantic -Werror), runs
// it on the same inputs and compares with graph/interp.
func TestQuantizeIntHostC(t *testing.T) {
	const n = 64
	for _, c := range requantCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(len(c.name))))
			vecs := []map[string]*graph.Data{{"x": requantInput(r, c, n)}, {"x": requantInput(r, c, n)}}
			sanitizedHostMatches(t, requantGraph(c, []int{n}), "requant_"+c.name, vecs)
		})
	}
}

// sanitizedHostMatches compiles g to C for the host with AddressSanitizer
// and UndefinedBehaviorSanitizer (-pedantic -Werror), runs vecs and checks
// every output against graph/interp's. Not in -short, nor without gcc.
func sanitizedHostMatches(t *testing.T, g *graph.Graph, name string, vecs []map[string]*graph.Data) {
	t.Helper()
	sanitizedHostStateMatches(t, g, name, "", vecs)
}

// sanitizedHostStateMatches is sanitizedHostMatches for a target's schedules
// ("" the host's own; "dsp" runs its helpers' plain C), returning the
// compiled state.
func sanitizedHostStateMatches(t *testing.T, g *graph.Graph, name, target string, vecs []map[string]*graph.Data) *pipeline.State {
	t.Helper()
	if testing.Short() {
		t.Skip("sanitizer builds: not in -short")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	b, err := pipeline.LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pipeline.CompileGraph(g, name, pipeline.Options{Board: b, Target: target, ArenaExternal: true, IOInArena: true,
		Version: "test", CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-pedantic", "-Werror"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Execute(vecs, t.TempDir(), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for v, ok := range x.Match {
		if !ok {
			t.Errorf("vector %d differs from graph/interp: C %v, reference %v", v, x.Outputs[v][0], x.Reference[v][0])
		}
	}
	return s
}
