package pipeline

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/quant"
)

// Quantizer review: a Concat of three narrow inputs (about ±0.4) beside a
// wide one (about ±170) zeroed 24 of its 32 output features, and nothing
// warned: the output's pooled SQNR (41.4 dB) is the wide feature's. The
// output's median channel (0 dB) now warns, naming the first low layer.
func TestLowMedianChannelOutputWarns49(t *testing.T) {
	zero, fine := 0.0, 41.2
	rep := &quant.Report{Samples: 16, OutputSQNRdB: 41.4, Outputs: []quant.OutputReport{{Name: "y", SQNRdB: 41.4}},
		Layers: []quant.LayerReport{
			{Name: "MatMul_1", Op: "FullyConnected", Tensor: "a", SQNRdB: 0, ChannelSQNRdB: &zero},
			{Name: "MatMul_4", Op: "FullyConnected", Tensor: "d", SQNRdB: 42.1, ChannelSQNRdB: &fine},
			{Name: "Concat_5", Op: "Concat", Tensor: "y", SQNRdB: 41.4, ChannelSQNRdB: &zero},
		}}
	var warns []string
	warnLowSQNR(Options{Calib: "calib", Warn: func(w string) { warns = append(warns, w) }}, rep)
	if len(warns) != 1 || !strings.Contains(warns[0], `int8 output "y": SQNR 41.4 dB`) || !strings.Contains(warns[0], "but 0.0 dB in its median channel") ||
		!strings.Contains(warns[0], `the first layer below 20 dB is "MatMul_1"`) {
		t.Errorf("warnings %q", warns)
	}
	// A healthy output's median channel: no warning.
	rep.Layers[0].ChannelSQNRdB, rep.Layers[2].ChannelSQNRdB = &fine, &fine
	rep.Layers[0].SQNRdB = 40
	warns = nil
	warnLowSQNR(Options{Calib: "calib", Warn: func(w string) { warns = append(warns, w) }}, rep)
	if len(warns) != 0 {
		t.Errorf("a healthy model warned: %q", warns)
	}
}
