package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/quant"
)

// A float model that overflows to infinity on the calibration data gave
// the int8 model an SQNR of NaN, and NaN < 20 is false: no warning (review
// finding). NaN is low, and the line says where it comes from; 25 dB still
// says nothing.
func TestLowSQNRWarnsOnNaN47(t *testing.T) {
	for _, c := range []struct {
		db   float64
		want string
	}{
		{math.NaN(), `int8 output SQNR NaN dB against the float model on the calibration data; the first layer below 20 dB is "exp" (Math, NaN dB) (NaN: the float model gives NaN or infinities on these inputs)`},
		{25, ""},
	} {
		var got []string
		rep := &quant.Report{Samples: 4, OutputSQNRdB: c.db, Layers: []quant.LayerReport{{Name: "exp", Op: "Math", SQNRdB: c.db}}}
		warnLowSQNR(Options{Calib: "calib", Warn: func(s string) { got = append(got, s) }}, rep)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%v dB: warned %q", c.db, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%v dB: warned %q, want it to start %q", c.db, got, c.want)
		}
	}
}

// The NaN note is for NaN figures, not for a layer whose name holds "NaN"
// (diff review: the message text was searched).
func TestLowSQNRNaNNoteOnlyForNaN47(t *testing.T) {
	var got []string
	rep := &quant.Report{Samples: 4, OutputSQNRdB: 12, Layers: []quant.LayerReport{{Name: "NaNGuard", Op: "Mul", SQNRdB: 12}}}
	warnLowSQNR(Options{Calib: "calib", Warn: func(s string) { got = append(got, s) }}, rep)
	if len(got) != 1 || !strings.Contains(got[0], `"NaNGuard" (Mul, 12.0 dB)`) || strings.Contains(got[0], "(NaN:") {
		t.Errorf("warned %q, want the layer named and no NaN note", got)
	}
}
