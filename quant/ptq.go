package quant

import (
	"github.com/mcugen/mcugen/graph"
)

// PTQ is the one-call post-training quantization: it calibrates g on calib,
// quantizes it with opt, corrects the biases on calib (unless
// opt.NoBiasCorrection) and evaluates the result against g on calib. Pass
// other samples to Evaluate for a held-out report.
func PTQ(g *graph.Graph, calib []map[string]*graph.Data, opt Options, copt CalibOptions) (*graph.Graph, *Report, error) {
	st, err := Calibrate(g, calib, copt)
	if err != nil {
		return nil, nil, err
	}
	q, err := Quantize(g, st, opt)
	if err != nil {
		return nil, nil, err
	}
	if !opt.NoBiasCorrection {
		if err := CorrectBias(g, q, calib); err != nil {
			return nil, nil, err
		}
	}
	r, err := Evaluate(g, q, calib)
	if err != nil {
		return nil, nil, err
	}
	r.Method = string(opt.method())
	return q, r, nil
}
