package tir_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

func randomData(r *rand.Rand, t *graph.Tensor) *graph.Data {
	d := graph.NewData(t.DType, t.Shape)
	for i := range d.F {
		d.F[i] = float32(r.NormFloat64() * 2)
	}
	lo, hi := t.DType.Range()
	if hi-lo > 1<<16 || hi-lo < 0 {
		lo, hi = -1000, 1000 // 32- and 64-bit integers: indices, counts
	}
	for i := range d.I {
		d.I[i] = lo + r.Int63n(hi-lo+1)
	}
	return d
}

// TestOpsMatchReference lowers every op graph, runs the module in the TIR
// interpreter (arena and all) and compares with graph/interp: bit-exact for
// integers, 1e-5 relative for float.
func TestOpsMatchReference(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			g := c.Graph
			opt := memplan.DefaultOptions()
			opt.InPlaceOK = tir.InPlaceOK
			plan, err := memplan.Build(g, opt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tir.Lower(g, plan, *tir.Generic)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewSource(2))
			for trial := 0; trial < 5; trial++ {
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
					t.Fatalf("%v\n%s", err, m)
				}
				for _, name := range g.Outputs {
					if err := same(want[name], got[name]); err != nil {
						t.Fatalf("output %q: %v\n%s", name, err, m)
					}
				}
			}
		})
	}
}

func same(want, got *graph.Data) error {
	if want.Len() != got.Len() {
		return fmt.Errorf("%d elements, want %d", got.Len(), want.Len())
	}
	for i := range want.I {
		if want.I[i] != got.I[i] {
			return fmt.Errorf("[%d] = %d, reference %d", i, got.I[i], want.I[i])
		}
	}
	for i := range want.F {
		w, g := float64(want.F[i]), float64(got.F[i])
		if math.Abs(w-g) > 1e-5*math.Max(1, math.Abs(w)) {
			return fmt.Errorf("[%d] = %g, reference %g", i, g, w)
		}
	}
	return nil
}

// A float FC over banded weights (tirtest's "fully_connected_band") sums
// each output's run only, on every target, and keeps only the runs'
// weights (6 runs of 7 of the 7x40) in flash; TestOpsMatchReference
// checks its values.
func TestBandedFCLowering(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var g *graph.Graph
	for _, c := range cases {
		if c.Name == "fully_connected_band_f32" {
			g = c.Graph
		}
	}
	if g == nil {
		t.Fatal("no fully_connected_band_f32 case")
	}
	for _, tg := range []*tir.Target{tir.Generic, tir.DSP, tir.MVE} {
		plan, err := memplan.Build(g, memplan.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		m, err := tir.Lower(g, plan, *tg)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name, err)
		}
		band := 0
		for _, f := range m.Funcs {
			if f.Op == "fully_connected_band" {
				band++
			}
		}
		if band != 2 {
			t.Errorf("%s: %d banded kernels, want 2", tg.Name, band)
		}
		for _, c := range m.Consts {
			if strings.HasSuffix(c.Name, "_band") && c.Len() != 42 {
				t.Errorf("%s: %s holds %d weights, want the runs' 42", tg.Name, c.Name, c.Len())
			}
			if c.Name == "mel" {
				t.Errorf("%s: the dense weights are still in flash", tg.Name)
			}
		}
	}
}
