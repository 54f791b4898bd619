package pipeline

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/quant"
)

// warnLowSQNR holds each output to the threshold, not only the pooled
// figure (a small output at 0 dB beside a large one pooled 42.6 dB), and
// warns on random calibration inputs too, naming them.
func TestWarnLowSQNRPerOutput40(t *testing.T) {
	for _, c := range []struct {
		name  string
		calib string
		rep   quant.Report
		want  string // "" for no warning
	}{
		{"all good", "d", quant.Report{Samples: 4, OutputSQNRdB: 42.6, Outputs: []quant.OutputReport{{Name: "y", SQNRdB: 42.6}, {Name: "c", SQNRdB: 48.4}}}, ""},
		{"one output lost", "d", quant.Report{Samples: 4, OutputSQNRdB: 42.6, Outputs: []quant.OutputReport{{Name: "y", SQNRdB: 42.6}, {Name: "c", SQNRdB: 0}}},
			`int8 output "c": SQNR 0.0 dB against the float model on the calibration data (all outputs together: 42.6 dB)`},
		{"random inputs", "", quant.Report{Samples: 4, OutputSQNRdB: 3}, "int8 output SQNR 3.0 dB against the float model on the random calibration inputs"},
	} {
		var got []string
		warnLowSQNR(Options{Calib: c.calib, Warn: func(s string) { got = append(got, s) }}, &c.rep)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: warned %q", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: warned %q, want %q", c.name, got, c.want)
		}
	}
}
