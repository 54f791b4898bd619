package memplan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/tflite"
)

var updateSVG = flag.Bool("update-svg", false, "rewrite docs/vww_plan.svg from the VWW plan")

// sharedModels is ../shared/models/mlperf_tiny seen from the repository root.
var sharedModels = filepath.Join("..", "..", "shared", "models", "mlperf_tiny")

type mlperfCase struct {
	name, file string
	// bound is the live-set lower bound in the model's own order, inputs and
	// outputs included, from ../shared/anchors.md.
	bound int
	// greedy is greedy-by-size's arena per anchors.md (TFLite Micro's and
	// microTVM's planner).
	greedy int
	// inPlace is the peak with every in-place rule, worked out by hand from
	// the architecture: KWS's first conv step holds the input (49·10·1 = 490 B,
	// 496 aligned) and its output (25·5·64 = 8,000 B), and every later step is
	// at most 8,000 B plus small tensors; VWW's first conv step holds the input
	// (96·96·3 = 27,648 B) and its output (48·48·8 = 18,432 B), and the
	// largest pointwise step is in place at max(18,432, 48·48·16 = 36,864).
	// IC and AD have no depthwise or pointwise stride-1 layers that set
	// their peaks (0 = stays at the bound).
	inPlace int
}

var mlperfCases = []mlperfCase{
	{"kws", "kws/kws_ref_model.tflite", 16000, 16000, 8496},
	{"vww", "vww/vww_96_int8.tflite", 55296, 64512, 46080},
	{"ic", "ic/pretrainedResnet_quant.tflite", 49152, 49152, 0},
	{"ad", "ad/ad01_int8.tflite", 768, 768, 0},
}

func loadMLPerf(tb testing.TB, c mlperfCase) *graph.Graph {
	tb.Helper()
	if _, err := os.Stat(sharedModels); err != nil {
		tb.Skipf("skipping: the MLPerf Tiny models are not here (%s absent)", sharedModels)
	}
	g, err := tflite.Load(filepath.Join(sharedModels, c.file))
	if err != nil {
		tb.Fatalf("%s: %v", c.name, err)
	}
	return g
}

func TestMLPerfArena(t *testing.T) {
	for _, c := range mlperfCases {
		t.Run(c.name, func(t *testing.T) {
			g := loadMLPerf(t, c)

			// No in-place, the model's order: the bound is the anchor's, and
			// the arena reaches it.
			opt := DefaultOptions()
			opt.InPlace = false
			opt.OrderSearch = false
			p := mustPlan(t, g, opt)
			if p.LowerBoundBytes != c.bound {
				t.Errorf("lower bound %d B, anchors.md says %d B", p.LowerBoundBytes, c.bound)
			}
			if p.ActivationBytes > c.bound || p.ArenaBytes != p.ActivationBytes {
				t.Errorf("arena %d B (activations %d B) above the bound %d B", p.ArenaBytes, p.ActivationBytes, c.bound)
			}
			opt.Algorithm = "greedy-size"
			if q := mustPlan(t, g, opt); q.ArenaBytes != c.greedy {
				t.Errorf("greedy-size arena %d B, anchors.md says %d B", q.ArenaBytes, c.greedy)
			}
			t.Logf("%s: no in-place: arena %d B = bound %d B (greedy-size %d B, %s)", c.name, p.ArenaBytes, c.bound, c.greedy, p.Algorithm)

			// Depthwise (and element-wise) in place only.
			opt = DefaultOptions()
			opt.InPlaceOK = func(n *graph.Node) bool {
				loop, _ := InPlaceLoop(g, n)
				return loop == "elementwise" || loop == "depthwise-channel"
			}
			d := mustPlan(t, g, opt)
			if d.ActivationBytes > c.bound {
				t.Errorf("depthwise in place: activations %d B above the bound %d B", d.ActivationBytes, c.bound)
			}
			t.Logf("%s: depthwise/element-wise in place (%d nodes): activations %d B (%d below the bound), scratch %d B, arena %d B",
				c.name, len(d.InPlace), d.ActivationBytes, c.bound-d.ActivationBytes, d.ScratchBytes, d.ArenaBytes)

			// Every rule (the default).
			a := mustPlan(t, g, DefaultOptions())
			want := c.inPlace
			if want == 0 {
				want = c.bound
			}
			if a.ActivationBytes != want || a.LowerBoundBytes != want {
				t.Errorf("in place: activations %d B, bound %d B; want %d B", a.ActivationBytes, a.LowerBoundBytes, want)
			}
			t.Logf("%s: all in-place rules (%d nodes): activations %d B (%d below the bound), scratch %d B, arena with scratch %d B (%d below), %s",
				c.name, len(a.InPlace), a.ActivationBytes, c.bound-a.ActivationBytes, a.ScratchBytes, a.ArenaBytes, c.bound-a.ArenaBytes, a.Algorithm)

			// Inputs and outputs in the caller's buffers.
			opt = DefaultOptions()
			opt.IOInArena = false
			o := mustPlan(t, g, opt)
			t.Logf("%s: IO outside the arena: arena %d B", c.name, o.ArenaBytes)

			if c.name == "vww" {
				checkSVG(t, a)
			}
		})
	}
}

// checkSVG compares docs/vww_plan.svg with the plan's drawing (-update-svg
// rewrites it), which also shows that the plan is deterministic.
func checkSVG(t *testing.T, p *Plan) {
	path := filepath.Join("..", "docs", "vww_plan.svg")
	svg := p.SVG()
	if *updateSVG {
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no %s yet (run with -update-svg): %v", path, err)
		return
	}
	if !bytes.Equal(old, svg) {
		t.Errorf("%s is stale; rerun go test ./memplan -run MLPerfArena -update-svg", path)
	}
}

// BenchmarkPlanMLPerf times Build on the four models: the default options,
// and every algorithm with in-place off (where VWW's greedy-size layout is
// above the bound, so "best" has to search).
func BenchmarkPlanMLPerf(b *testing.B) {
	for _, c := range mlperfCases {
		b.Run(c.name, func(b *testing.B) {
			g := loadMLPerf(b, c)
			run := func(name string, opt Options) {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						if _, err := Build(g, opt); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			run("default", DefaultOptions())
			for _, algo := range Algorithms {
				opt := DefaultOptions()
				opt.InPlace = false
				opt.Algorithm = algo
				run("noinplace-"+algo, opt)
			}
		})
	}
}
