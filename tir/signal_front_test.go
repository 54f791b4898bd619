package tir_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// signalFrontGraph is one signal front end op on an int16 input of the
// given shape (SignalWindow with a random constant window of w values).
func signalFrontGraph(r *rand.Rand, op graph.Op, attrs any, shape []int, w int) *graph.Graph {
	var window []int64
	if op == graph.SignalWindow {
		window = make([]int64, w)
		for i := range window {
			window[i] = r.Int63n(65536) - 32768
		}
	}
	return tirtest.SignalFront(op, attrs, shape, window)
}

// TestSignalFrontLowering lowers SignalWindow, SignalFftAutoScale,
// SignalRfft (every radix kissfft runs: 2, 3, 4 and 5; frames shorter than
// the FFT; several frames) and SignalEnergy for the generic, DSP and MVE
// targets and runs them in the TIR interpreter (which also refuses any
// int32 overflow): bit-exact with graph/interp (whose agreement with TFLite
// Micro's kernels importer/tflite's tests check) on random, small and
// full-scale inputs.
func TestSignalFrontLowering(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	type c struct {
		op    graph.Op
		attrs any
		shape []int
		w     int
	}
	cases := []c{
		{graph.SignalWindow, &graph.SignalWindowAttrs{Shift: 12}, []int{1, 480}, 480},
		{graph.SignalWindow, &graph.SignalWindowAttrs{Shift: 0}, []int{3, 10}, 5},
		{graph.SignalWindow, &graph.SignalWindowAttrs{Shift: 31}, []int{7}, 7},
		{graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{}, []int{480}, 0},
		{graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{Bits: true}, []int{33}, 0},
		{graph.SignalEnergy, &graph.SignalEnergyAttrs{Start: 5, End: 241}, []int{514}, 0},
		{graph.SignalEnergy, &graph.SignalEnergyAttrs{Start: 3, End: 3}, []int{8}, 0},
	}
	for _, p := range [][2]int{{480, 512}, {4, 4}, {5, 8}, {20, 24}, {60, 60}, {81, 90}, {100, 100}, {250, 250}, {300, 480}} {
		cases = append(cases, c{graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: p[1]}, []int{p[0]}, 0})
	}
	cases = append(cases, c{graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: 16}, []int{2, 3, 10}, 0})
	for _, cs := range cases {
		g := signalFrontGraph(r, cs.op, cs.attrs, cs.shape, cs.w)
		if err := graph.InferShapes(g); err != nil {
			t.Fatal(err)
		}
		for _, target := range []*tir.Target{tir.Generic, tir.DSP, tir.MVE} {
			t.Run(fmt.Sprintf("%s%v/%s", cs.op, cs.shape, target.Name), func(t *testing.T) {
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
				for trial := range 8 {
					x := graph.NewData(graph.Int16, cs.shape)
					for i := range x.I {
						switch trial % 4 {
						case 0:
							x.I[i] = r.Int63n(65536) - 32768
						case 1:
							x.I[i] = r.Int63n(65) - 32
						case 2:
							x.I[i] = []int64{-32768, 32767, 0, -1}[r.Intn(4)]
						}
					}
					in := map[string]*graph.Data{"x": x}
					want, err := interp.Run(g, in)
					if err != nil {
						t.Fatalf("reference: %v", err)
					}
					got, err := tir.RunModule(m, in)
					if err != nil {
						t.Fatalf("%v", err)
					}
					if err := same(want["y"], got["y"]); err != nil {
						t.Fatalf("trial %d: %v", trial, err)
					}
				}
			})
		}
	}
}
