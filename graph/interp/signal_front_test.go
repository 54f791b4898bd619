package interp

import (
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// runSignal runs one signal front end op on the int16 values x (shape
// [len(x)], or shape when given) with the optional int16 window w.
func runSignal(t *testing.T, op graph.Op, attrs any, x, w []int64, shape ...int) []int64 {
	t.Helper()
	if shape == nil {
		shape = []int{len(x)}
	}
	g := tirtest.SignalFront(op, attrs, shape, w)
	if err := graph.InferShapes(g); err != nil {
		t.Fatal(err)
	}
	d := graph.NewData(graph.Int16, shape)
	copy(d.I, x)
	res, err := Run(g, map[string]*graph.Data{"x": d})
	if err != nil {
		t.Fatal(err)
	}
	return res["y"].I
}

// TestSignalFrontEdges: the corners of the arithmetic, each expected value
// from TFLite Micro's kernels (signal/src window.cc, fft_auto_scale.cc with
// max_abs.cc and msb_32.cc as GCC builds them, energy.cc, rfft_int16.cc
// over kissfft v130 with TFLite Micro's patch) on the same inputs.
func TestSignalFrontEdges(t *testing.T) {
	x := []int64{32767, -32768, 1000, -1000}
	w := []int64{32767, 32767, -32768, 16384}
	for _, c := range []struct {
		name  string
		op    graph.Op
		attrs any
		x, w  []int64
		want  []int64
	}{
		// Products saturate at shift 0; shifts round toward −∞.
		{"window shift 0", graph.SignalWindow, &graph.SignalWindowAttrs{Shift: 0}, x, w, []int64{32767, -32768, -32768, -32768}},
		{"window shift 15", graph.SignalWindow, &graph.SignalWindowAttrs{Shift: 15}, x, w, []int64{32766, -32767, -1000, -500}},
		// All zeros: the most significant bit of 0 is 32, no scaling.
		{"scale zeros", graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{Bits: true}, []int64{0, 0, 0}, nil, []int64{0}},
		// −32768's absolute value is −32768 again, which any later value
		// replaces as the maximum: 5 gives 12 bits, and −32768·2^12 wraps to 0.
		{"scale -32768 bits", graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{Bits: true}, []int64{-32768, 5}, nil, []int64{12}},
		{"scale -32768", graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{}, []int64{-32768, 5}, nil, []int64{0, 20480}},
		{"scale small", graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{}, []int64{1, -2, 0}, nil, []int64{8192, -16384, 0}},
		{"scale full", graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{}, []int64{-32767, 100}, nil, []int64{-32767, 100}},
		// (−32768)² + (−32768)² = 2^31, a uint32.
		{"energy", graph.SignalEnergy, &graph.SignalEnergyAttrs{Start: 0, End: 2}, []int64{-32768, -32768, 3, 4}, nil, []int64{2147483648, 25}},
		{"rfft 4", graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: 4}, []int64{32767, -32768, 32767, -32768}, nil, []int64{0, 0, 0, 0, 32764, 0}},
		{"rfft 8", graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: 8}, []int64{-32768, -32768, -32768, -32768, -32768, -32768, -32768, -32768}, nil, []int64{-32762, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		// kissfft's radix 3 (6 points) and radix 5 (10 points).
		{"rfft 6", graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: 6}, []int64{32767, 100, -32768, 7, 0, -5}, nil, []int64{16, 0, 8198, 4713, 8183, -4744, -16, 0}},
		{"rfft 10", graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: 10}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, nil, []int64{5, 0, -1, 1, 0, 1, 0, 0, -1, 0, -1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runSignal(t, c.op, c.attrs, c.x, c.w); !slices.Equal(got, c.want) {
				t.Errorf("got %v, TFLite Micro %v", got, c.want)
			}
		})
	}
}
