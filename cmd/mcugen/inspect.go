package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
)

type inspectCmd struct {
	modelFlags
	compileFlags
	IR   string `help:"Print the IR of one stage instead of the summary: graph, quant, plan, tir or c." enum:",graph,quant,plan,tir,c" default:"" placeholder:"STAGE"`
	JSON bool   `name:"json" help:"Print one JSON object."`
}

type tensorInfo struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	// Scale and ZeroPoint are null for a float tensor: DESIGN.md lists
	// them among the fields every input and output has.
	Scale     []float32 `json:"scale"`
	ZeroPoint []int32   `json:"zero_point"`
}

type inspectReport struct {
	Model   string       `json:"model"`
	Format  string       `json:"format"`
	Inputs  []tensorInfo `json:"inputs"`
	Outputs []tensorInfo `json:"outputs"`
	// States are the tensors carried from one inference to the next.
	States       []tensorInfo   `json:"states,omitempty"`
	Ops          map[string]int `json:"ops"`
	Nodes        int            `json:"nodes"`
	MACs         int64          `json:"macs"`
	WeightsBytes int64          `json:"weights_bytes"`
	// Dead output channels: all-zero weights (pruned or collapsed in
	// training); the compiled kernels skip them.
	DeadChannels int   `json:"dead_channels"`
	DeadLayers   int   `json:"dead_channel_layers"`
	DeadMACs     int64 `json:"dead_channel_macs"`
	// Lowers says whether mcugen lowers every node for the board (--board,
	// default host) to its loops; LowerError is why not. A model whose
	// reference interpreter runs may still hold a form the code generator
	// refuses (int16 LEAKY_RELU: user journey, inspect said nothing).
	Lowers     bool   `json:"lowers"`
	LowerError string `json:"lower_error,omitempty"`
}

func describe(g *graph.Graph, names []string) []tensorInfo {
	out := make([]tensorInfo, 0, len(names))
	for _, n := range names {
		t := g.Tensors[n]
		ti := tensorInfo{Name: n, Shape: t.Shape, DType: t.DType.String()}
		if t.Shape == nil {
			ti.Shape = []int{}
		}
		if t.Quant != nil {
			ti.Scale, ti.ZeroPoint = t.Quant.Scale, t.Quant.ZeroPoint
		}
		out = append(out, ti)
	}
	return out
}

func (c *inspectCmd) Run(e *env) error {
	if c.IR != "" {
		opt, _, err := c.compileFlags.options(e, &c.modelFlags)
		if err != nil {
			return err
		}
		s, err := pipeline.RunUntil(c.Model, opt, pipeline.Stages[c.IR])
		if err != nil {
			return err
		}
		if c.IR == "quant" && opt.Calib == "" && opt.CalibRandom == 0 && opt.Quantize == "" && floatModel(s) {
			// The quant stage of a float model without calibration is
			// the float graph (review finding: printed without a word).
			e.warn(fmt.Sprintf("%s: --ir quant of a float model without --calib DIR or --calib-random N: nothing is quantized, the graph below is the float one", c.Model))
		}
		text, err := s.Dump(c.IR)
		if err != nil {
			return err
		}
		if c.JSON {
			// The one JSON object every reporting command prints: the dump is its text.
			return e.printJSON(struct {
				Model string `json:"model"`
				Stage string `json:"stage"`
				Text  string `json:"text"`
			}{c.Model, c.IR, text})
		}
		fmt.Fprint(e.stdout, text)
		return nil
	}
	// The compile flags are checked here too (an unknown --board or
	// --target passed unremarked: user-journey finding), though only
	// quantization changes the summary.
	opt, _, err := c.compileFlags.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	g, err := c.load(e)
	if err != nil {
		return err
	}
	if c.Calib != "" || c.calibRandom() > 0 || c.Quantize != "" || c.Int8IO {
		// With quantization flags (or --int8-io on a QDQ model) the
		// summary is of the model as compile would quantize it (its int8
		// inputs and outputs, their scales); they were silently ignored.
		s, err := pipeline.RunUntil(c.Model, opt, "quantize")
		if err != nil {
			return err
		}
		g = s.Graph
	}
	r := inspectReport{
		Model: c.Model, Format: g.Format,
		Inputs: describe(g, g.UserInputs()), Outputs: describe(g, g.UserOutputs()),
		Ops: graph.OpCounts(g), Nodes: len(g.Nodes),
		MACs: graph.TotalMACs(g), WeightsBytes: graph.WeightBytes(g),
	}
	for _, st := range g.States {
		r.States = append(r.States, describe(g, []string{st.In})...)
	}
	for _, n := range g.Nodes {
		dead := graph.DeadChannels(g, n)
		k := 0
		for _, d := range dead {
			if d {
				k++
			}
		}
		if k > 0 {
			r.DeadChannels += k
			r.DeadLayers++
			r.DeadMACs += graph.MACs(g, n) * int64(k) / int64(len(dead))
		}
	}
	quiet := opt
	quiet.Warn = func(string) {}
	if _, err := pipeline.RunUntil(c.Model, quiet, "lower"); err != nil {
		r.LowerError = oneLine(err.Error())
	} else {
		r.Lowers = true
	}
	if c.JSON {
		return e.printJSON(r)
	}
	w := e.stdout
	fmt.Fprintf(w, "model    %s (%s)\n", c.Model, g.Format)
	for _, t := range r.Inputs {
		fmt.Fprintf(w, "input    %s: %s\n", shown(t.Name), g.Tensors[t.Name].TypeString())
	}
	for _, t := range r.Outputs {
		fmt.Fprintf(w, "output   %s: %s\n", shown(t.Name), g.Tensors[t.Name].TypeString())
	}
	for _, t := range r.States {
		fmt.Fprintf(w, "state    %s: %s (carried from one inference to the next)\n", shown(t.Name), g.Tensors[t.Name].TypeString())
	}
	fmt.Fprintf(w, "nodes    %d\nMACs     %s\nweights  %s bytes (the model's constants; compile reports what its C stores, with int16-widened weights and tables)\n", r.Nodes, comma(r.MACs), comma(r.WeightsBytes))
	if r.DeadChannels > 0 {
		fmt.Fprintf(w, "dead     %s output channels with all-zero weights in %d layers: %s MACs that need not run\n",
			comma(int64(r.DeadChannels)), r.DeadLayers, comma(r.DeadMACs))
	}
	fmt.Fprintf(w, "ops\n")
	ops := make([]string, 0, len(r.Ops))
	for op := range r.Ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	width := 16 // the counts in one column, past the longest name (SignalFilterBankSqrt)
	for _, op := range ops {
		width = max(width, len(op))
	}
	for _, op := range ops {
		fmt.Fprintf(w, "  %-*s %d\n", width, op, r.Ops[op])
	}
	if !r.Lowers {
		board := "host"
		if opt.Board != nil {
			board = opt.Board.Name
		}
		fmt.Fprintf(w, "compile  refused for board %s: %s\n", board, r.LowerError)
	}
	return nil
}

// comma formats n with thousands separators.
func comma(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// floatModel reports whether the model at its quant stage holds no
// quantized tensor (a QDQ model's float inputs do not make it one).
func floatModel(s *pipeline.State) bool {
	for _, t := range s.Graph.Tensors {
		if t.Quant != nil {
			return false
		}
	}
	return true
}
