package main

import (
	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
)

// quantFlags ask for INT8 quantization of a float model on the way.
type quantFlags struct {
	Calib       string `help:"Calibration directory (.npy per input per sample, or one stacked .npy per input); quantizes a float model to int8." type:"path" placeholder:"DIR"`
	CalibRandom int    `help:"Quantize with N random calibration inputs instead of real data." placeholder:"N"`
	Quantize    string `help:"Quantize a float model: int8." enum:",int8" default:""`
	Method      string `help:"Activation range method: minmax, percentile, entropy, mse (default: percentile)." placeholder:"M"`
}

// compileFlags are the options of compile, shared by run, test, bench and tune.
type compileFlags struct {
	quantFlags
	Board          string `help:"Target board (see mcugen boards)." default:"host"`
	Boards         string `help:"A Starlark board file adding boards to the catalog." type:"existingfile" placeholder:"FILE"`
	Prefix         string `help:"C name prefix of the generated API (default: from the model file name; tvmgen_default gives microTVM's names)."`
	Arena          string `help:"static: the arena is a buffer in the generated code; external: <prefix>_run takes a void *arena." default:"static" enum:"static,external"`
	IO             string `name:"io" help:"Where inputs/outputs live: separate (the caller's buffers) or in-arena." default:"separate" enum:"separate,in-arena"`
	WeightsSection string `help:"Put the weights in this linker section." placeholder:"NAME"`
	Target         string `help:"Schedule set (default: from the board's features): generic, dsp, mve, neon."`
	Tuning         string `help:"Tuning records (from mcugen tune) whose knobs apply to the kernels they match." type:"existingfile" placeholder:"FILE"`
}

func (q *quantFlags) options(e *env, m *modelFlags) (pipeline.Options, error) {
	shapes, err := parseShapes(m.Shape)
	if err != nil {
		return pipeline.Options{}, err
	}
	return pipeline.Options{Shapes: shapes, Warn: e.warn, Calib: q.Calib, CalibRandom: q.CalibRandom,
		Quantize: q.Quantize, Method: q.Method, Version: version}, nil
}

func (c *compileFlags) options(e *env, m *modelFlags) (pipeline.Options, *boards.Catalog, error) {
	opt, err := c.quantFlags.options(e, m)
	if err != nil {
		return opt, nil, err
	}
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return opt, nil, err
	}
	if opt.Board, err = cat.Get(c.Board); err != nil {
		return opt, nil, err
	}
	opt.Prefix, opt.ArenaExternal, opt.IOInArena = c.Prefix, c.Arena == "external", c.IO == "in-arena"
	opt.WeightsSection, opt.Target, opt.Tuning = c.WeightsSection, c.Target, c.Tuning
	return opt, cat, nil
}
