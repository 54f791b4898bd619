package tir_test

import (
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
)

// signalBankGraphs are one graph per signal filter bank op (uint32 and
// uint64 tensors as int64), with random tables.
func signalBankGraphs(r *rand.Rand) map[string]*graph.Graph {
	vec := func(g *graph.Graph, name string, dt graph.DType, n int) {
		g.AddTensor(&graph.Tensor{Name: name, DType: dt, Shape: []int{n}})
	}
	i16 := func(g *graph.Graph, name string, v []int64) {
		d := graph.NewData(graph.Int16, []int{len(v)})
		copy(d.I, v)
		g.AddConst(name, d)
	}
	one := func(name string, op graph.Op, attrs any, ins []string, outDT graph.DType, n int, build func(g *graph.Graph)) *graph.Graph {
		g := graph.New(name, "test")
		build(g)
		vec(g, "y", outDT, n)
		g.AddNode(&graph.Node{Name: "y", Op: op, Attrs: attrs, Inputs: ins, Outputs: []string{"y"}})
		for _, in := range ins {
			if !g.Tensors[in].IsConst() {
				g.Inputs = append(g.Inputs, in)
			}
		}
		g.Outputs = []string{"y"}
		return g
	}
	gs := map[string]*graph.Graph{}
	// A filter bank of 6 channels over 20 bins, every table random.
	gs["filter_bank"] = one("fb", graph.SignalFilterBank, &graph.SignalFilterBankAttrs{Channels: 6},
		[]string{"x", "w", "u", "fs", "ws", "wd"}, graph.Int64, 6, func(g *graph.Graph) {
			vec(g, "x", graph.Int64, 20)
			fs, ws, wd := make([]int64, 7), make([]int64, 7), make([]int64, 7)
			for i := range fs {
				fs[i] = int64(r.Intn(20))
				wd[i] = int64(r.Intn(min(8, 20-int(fs[i])) + 1))
				ws[i] = int64(r.Intn(30 - int(wd[i]) + 1))
			}
			w, u := make([]int64, 30), make([]int64, 30)
			for i := range w {
				w[i], u[i] = int64(int16(r.Uint32())), int64(r.Intn(4097))
			}
			i16(g, "w", w)
			i16(g, "u", u)
			i16(g, "fs", fs)
			i16(g, "ws", ws)
			i16(g, "wd", wd)
		})
	gs["sqrt"] = one("sqrt", graph.SignalFilterBankSqrt, nil, []string{"x", "s"}, graph.Int64, 9, func(g *graph.Graph) {
		vec(g, "x", graph.Int64, 9)
		g.AddTensor(&graph.Tensor{Name: "s", DType: graph.Int32, Shape: []int{}})
	})
	ss := &graph.SignalSpectralSubtractionAttrs{Smoothing: 409, OneMinusSmoothing: 15975, AlternateSmoothing: 983,
		AlternateOneMinusSmoothing: 15401, MinSignalRemaining: 819, SmoothingBits: 10, SpectralSubtractionBits: 14, Clamping: true}
	for _, op := range []graph.Op{graph.SignalNoiseEstimate, graph.SignalSpectralSubtraction} {
		gs[string(op)] = one(string(op), op, ss, []string{"x", "e"}, graph.Int64, 7, func(g *graph.Graph) {
			vec(g, "x", graph.Int64, 7)
			vec(g, "e", graph.Int64, 7)
		})
	}
	gs["pcan"] = one("pcan", graph.SignalPCAN, &graph.SignalPCANAttrs{SNRShift: 6}, []string{"x", "e", "lut"}, graph.Int64, 8, func(g *graph.Graph) {
		vec(g, "x", graph.Int64, 8)
		vec(g, "e", graph.Int64, 8)
		lut := make([]int64, graph.SignalPCANLUTLen)
		for i := range lut {
			lut[i] = int64(int16(r.Uint32()))
		}
		i16(g, "lut", lut)
	})
	gs["log"] = one("log", graph.SignalFilterBankLog, &graph.SignalFilterBankLogAttrs{CorrectionBits: 3, OutputScale: 64}, []string{"x"}, graph.Int16, 8, func(g *graph.Graph) {
		vec(g, "x", graph.Int64, 8)
	})
	return gs
}

// TestSignalBankLowering lowers each op for the generic, DSP and MVE
// targets (the last two fall back to the generic loops) and runs the module
// in the TIR interpreter on uint32 values of every magnitude: bit-exact
// with graph/interp.
func TestSignalBankLowering(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	gs := signalBankGraphs(r)
	for _, name := range slices.Sorted(maps.Keys(gs)) {
		g := gs[name]
		if err := graph.InferShapes(g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, target := range []*tir.Target{tir.Generic, tir.DSP, tir.MVE} {
			t.Run(name+"/"+target.Name, func(t *testing.T) {
				opt := memplan.DefaultOptions()
				opt.InPlaceOK = tir.InPlaceOK
				plan, err := memplan.Build(g, opt)
				if err != nil {
					t.Fatal(err)
				}
				m, err := tir.Lower(g, plan, *target)
				if err != nil {
					t.Fatal(err)
				}
				for trial := 0; trial < 20; trial++ {
					in := map[string]*graph.Data{}
					for _, n := range g.Inputs {
						tt := g.Tensor(n)
						d := graph.NewData(tt.DType, tt.Shape)
						for i := range d.I {
							d.I[i] = int64(r.Uint32() >> uint(r.Intn(32)))
							if n == "x" && name == "sqrt" {
								d.I[i] = int64(r.Uint64() >> uint(r.Intn(64)))
							}
						}
						if n == "s" {
							d.I[0] = int64(r.Intn(32))
						}
						in[n] = d
					}
					want, err := interp.Run(g, in)
					if err != nil {
						t.Fatal(err)
					}
					got, err := tir.RunModule(m, in)
					if err != nil {
						t.Fatalf("%v\n%s", err, m)
					}
					if err := same(want["y"], got["y"]); err != nil {
						t.Fatalf("trial %d: %v\n%s", trial, err, m)
					}
				}
			})
		}
	}
}
