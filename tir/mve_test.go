package tir_test

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// TestVectorRequantMatchesTFLite: the lane-wise VQRDMULH / VRSHL sequence the
// mve and neon helpers print equals TFLite's MultiplyByQuantizedMultiplier
// (SRDHM + RoundingDivideByPOT), on edge values and random ones.
func TestVectorRequantMatchesTFLite(t *testing.T) {
	edges := []int32{math.MinInt32, math.MinInt32 + 1, -1 << 30, -65536, -3, -2, -1, 0, 1, 2, 3, 65535, 1 << 30, math.MaxInt32 - 1, math.MaxInt32}
	for _, a := range edges {
		for _, b := range edges {
			if got, want := tir.VQRDMULH(a, b), tir.SRDHM(a, b); got != want {
				t.Fatalf("VQRDMULH(%d, %d) = %d, SRDHM %d", a, b, got, want)
			}
		}
	}
	r := rand.New(rand.NewSource(8))
	for i := 0; i < 2000000; i++ {
		a, m := int32(r.Uint32()), int32(r.Uint32())
		if i%2 == 0 {
			a = int32(r.Intn(1<<20) - 1<<19)
			m = int32(1<<30 + r.Intn(1<<30))
		}
		shift := int32(r.Intn(33) - 31)
		if shift > 0 && i%2 == 1 {
			a >>= uint(shift) // TFLite's left shift is meant not to overflow
		}
		if got, want := tir.VectorRequant(a, m, shift), tir.RequantQ(a, m, shift); got != want {
			t.Fatalf("VectorRequant(%d, %d, %d) = %d, TFLite %d", a, m, shift, got, want)
		}
		// Without the sign fix-up the rounding differs only for negative
		// values, which a clamp with lo >= zp maps to lo either way.
		if shift <= 0 {
			zp := int32(r.Intn(256) - 128)
			lo := zp + int32(r.Intn(int(128-zp)))
			clamp := func(v int32) int32 { return min(max(v+zp, lo), 127) }
			noFix := tir.VRSHL(tir.VQRDMULH(a, m), shift)
			if got, want := clamp(noFix), clamp(tir.RequantQ(a, m, shift)); got != want {
				t.Fatalf("no fix-up, lo %d >= zp %d: requant(%d, %d, %d) = %d, TFLite %d", lo, zp, a, m, shift, got, want)
			}
		}
		if got, want := tir.VQRDMULH(a, m), tir.SRDHM(a, m); got != want {
			t.Fatalf("VQRDMULH(%d, %d) = %d, SRDHM %d", a, m, got, want)
		}
	}
}

// TestSIMDTargetsMatchReference: every op graph lowered for dsp, mve and
// neon runs in the TIR interpreter bit-exactly like graph/interp, and the
// int8 conv/FC kernels did take the SIMD schedule.
func TestSIMDTargetsMatchReference(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"dsp", "mve", "neon"} {
		tg, err := tir.TargetByName(target)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(target+"/"+c.Name, func(t *testing.T) {
				m := checkModule(t, c.Graph, tg, 3)
				if !strings.HasSuffix(c.Name, "_s8") || target == "dsp" {
					return
				}
				for _, f := range m.Funcs {
					switch f.Op {
					case "conv2d", "depthwise_conv2d", "fully_connected":
						if f.Knobs["simd"] != 1 {
							t.Logf("%s: %s kept the generic schedule", c.Name, f.Name)
						}
					}
				}
			})
		}
	}
}

func checkModule(t *testing.T, g *graph.Graph, tg tir.Target, trials int) *tir.Module {
	t.Helper()
	opt := memplan.DefaultOptions()
	opt.InPlaceOK = tir.InPlaceOK
	plan, err := memplan.Build(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tir.Lower(g, plan, tg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < trials; trial++ {
		in := map[string]*graph.Data{}
		for _, name := range g.Inputs {
			in[name] = randomData(r, g.Tensor(name))
		}
		want, err := interp.Run(g, in)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		got, err := tir.RunModule(m, in)
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, name := range g.Outputs {
			if err := same(want[name], got[name]); err != nil {
				t.Fatalf("output %q: %v", name, err)
			}
		}
	}
	return m
}

// TestSIMDMLPerf: the MLPerf Tiny int8 models lowered for mve match the
// reference interpreter in the TIR interpreter, and every conv / depthwise /
// FC kernel is tensorized.
func TestSIMDMLPerf(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	dir := "../../shared/models/mlperf_tiny"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/models not present")
	}
	tg, _ := tir.TargetByName("mve")
	for _, m := range []string{"kws/kws_ref_model.tflite", "vww/vww_96_int8.tflite", "ic/pretrainedResnet_quant.tflite", "ad/ad01_int8.tflite"} {
		t.Run(filepath.Dir(m), func(t *testing.T) {
			g, err := tflite.Load(filepath.Join(dir, m))
			if err != nil {
				t.Fatal(err)
			}
			mod := checkModule(t, g, tg, 1)
			for _, f := range mod.Funcs {
				switch f.Op {
				case "conv2d", "depthwise_conv2d", "fully_connected":
					if f.Knobs["simd"] != 1 {
						t.Errorf("%s kept the generic schedule", f.Name)
					}
				}
			}
		})
	}
}

// TestSIMDKnobsKeepResults: the SIMD schedules with non-default knob values
// (each declared value in turn) still match the reference interpreter.
func TestSIMDKnobsKeepResults(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := tir.TargetByName("mve")
	for _, k := range []string{"window", "pixel_window_below", "weight_blocked", "bias_in_gemv", "pixel_pairs", "pixel_pairs_max", "dw_fused", "row_copy_below", "small_k", "small_k_pairs", "dw_lanes"} {
		vals := tir.KnobValues("mve." + k)
		if len(vals) == 0 {
			t.Fatalf("knob mve.%s has no declared values", k)
		}
		for _, v := range vals {
			tg := base
			for _, op := range []string{"conv2d", "depthwise_conv2d", "fully_connected"} {
				tg = tg.WithKnobs(op, map[string]int{k: v})
			}
			for _, c := range cases {
				if !strings.HasSuffix(c.Name, "_s8") {
					continue
				}
				t.Run(c.Name, func(t *testing.T) { checkModule(t, c.Graph, tg, 1) })
			}
		}
	}
}
