// Package pipeline strings mcugen's stages together in one ordered pass
// table (import → fold QDQ → quantize → plan → lower → emit), the way the
// CLI's compile, run, test, bench and tune commands use them. Each pass is a
// small function over State; any stage's IR can be printed by name.
package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/emitc"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/quant"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tune"
)

// Options are the compile options shared by compile, run, test, bench and tune.
type Options struct {
	Shapes map[string][]int
	Warn   func(string)

	// keepUint8 builds a uint8 model's layers as they are (the retry when
	// their int8 form does not fit: shiftLayers).
	keepUint8 bool

	// Quantization of float models: Calib is a calibration directory,
	// CalibRandom a number of random samples; Quantize "int8" asks for it.
	Calib       string
	CalibRandom int
	Quantize    string
	Method      string
	// Float names nodes kept in float32 when quantizing (--float: names,
	// globs or quantize report rows; quant.FloatNodes).
	Float []string
	// BeforeCalibrate, if set, checks the float graph before calibration
	// starts (quantize --eval's held-out files: a wrong one is said
	// before the calibration's time, not after).
	BeforeCalibrate func(g *graph.Graph) error

	Board *boards.Board
	// Target overrides the schedule set chosen from the board's features.
	Target string

	Prefix        string
	ArenaExternal bool
	IOInArena     bool
	// Int8IO gives a QDQ model int8 inputs and outputs (quant.IntIO): its
	// input QuantizeLinear and output DequantizeLinear are left to the
	// caller, as a model mcugen quantizes has them.
	Int8IO         bool
	WeightsSection string
	// PlainWeights keeps the weights and the arena out of any linker section (for builds
	// that do not use mcugen's linker script: Zephyr, Arduino, Bazel).
	PlainWeights  bool
	PlanAlgorithm string
	Align         int
	// NoInPlace keeps every convolution out of place (element-wise ops may
	// still run in place): more arena, and the kernels the target picks when
	// it is free to (tests use it to reach the out-of-place forms).
	NoInPlace bool

	Version string

	// CFlags are extra compiler flags for firmware builds (e.g. sanitizers on host).
	CFlags []string
	// Compiler builds the firmware: runner.CompilerGCC (the default, when
	// empty) or runner.CompilerClang.
	Compiler string

	// Tuning is a tuning records file (mcugen tune) whose knobs apply to
	// the kernels they match; Knobs are extra overrides by kernel name or
	// op, as tir.Target.WithKnobs takes them.
	Tuning string
	Knobs  map[string]map[string]int
	// KeepInt8 are kernels whose weights stay int8 (knob weights = 8)
	// whatever Knobs and the records say: a QEMU stand-in running a
	// board's build takes the board's fit pass's choice this way (as knobs,
	// a record asking for int16 weights or Winograd won over it).
	KeepInt8 []string
	// KeepInt4 are kernels whose weights are packed int4 (knob weights =
	// 4; fully connected layers whose weights are all in [−8, 7], others
	// keep int8), as the fit pass (LeanWeights.Int4) chose them on the board.
	KeepInt4 []string

	// FlashBudget and RAMBudget are the user's limits, in bytes, on what
	// the model may take of the chip (--flash-budget, --ram-budget; 0 is
	// none): flash for its code and weights (fitweights.go), RAM for its
	// arena and state buffers (checkFits). They apply on every board, and
	// on a bare-metal board together with its memory regions: the tighter
	// limit binds.
	FlashBudget, RAMBudget int64

	// StrictFloat makes Execute compare float outputs element by element
	// (Compare: 1e-5 of each value) instead of by the output's scale
	// (CompareModel): the rule for one operator's outputs, which the
	// op-level tests keep.
	StrictFloat bool

	// ResetState makes Execute start every vector of a model with state
	// from the initial state (<prefix>_reset() before each run, and a new
	// reference session), as a caller that resets between sequences does;
	// without it the state runs on from vector to vector.
	ResetState bool
}

// State is what the passes read and write.
type State struct {
	Opt       Options
	ModelPath string
	Graph     *graph.Graph
	// Float is the float graph a quantized Graph was made from (nil when
	// the model was integer already).
	Float *graph.Graph
	// MACs are the model's multiply-accumulates as imported (the plan pass
	// removes unused channels from Graph, which then counts fewer).
	MACs int64
	// UnusedChannels is how many channels the plan pass removed from
	// chains whose consumer reads them with all-zero weights.
	UnusedChannels int
	pruned         bool // the plan pass has removed them (it runs once more if lowering re-plans)
	QuantReport    *quant.Report
	Plan           *memplan.Plan
	// notInPlace are nodes the plan must not run in place (their kernels
	// could not; see lowerPass).
	notInPlace map[string]bool
	// deferredFit is the plan's fit error while layers run in place whose
	// kernels may not take the in-place form on the board's stack: the
	// lowering decides, and the error of the plan it settles on is the one
	// to give (review finding: "1 B short" for an arena in place that the
	// stack could not hold, then 9,216 B short with the byte added).
	deferredFit error
	// shiftedU8 is set when foldQDQPass made a uint8 model's layers int8
	// (shiftLayers); a build that then does not fit is retried without.
	shiftedU8 bool
	Module    *tir.Module
	Files     map[string][]byte
	Report    *emitc.Report
	// Tuned is how many kernels took knobs from tuning records.
	Tuned int
	// TunedDefaults is how many of those matched a record whose search
	// found nothing faster than its defaults: they keep this version's
	// defaults (tune.Overrides).
	TunedDefaults int
	// Lean is set when the fit pass kept kernels' weights int8 so that
	// the constants fit the board's flash (fitweights.go).
	Lean     *LeanWeights
	leanFrom int64 // the constants' bytes before it did
	// records are Options.Tuning as read once (the fit pass applies them
	// again as it keeps kernels int8), with the notes reading them gave.
	records     *tune.Records
	recordsRead []string
	// codeUnsure is set by the fit pass when the constants fit a region
	// that holds code too but its code estimate does not: checkCode
	// measures the emitted C.
	codeUnsure *codeCheck
	// codeMeasured is the model's code and constants as checkCode
	// measured them (0: not measured).
	codeMeasured int64
}

// Pass is one named stage.
type Pass struct {
	Name string
	Run  func(*State) error
}

// Passes is the pipeline, in order.
var Passes = []Pass{
	{"import", importPass},
	{"fold-qdq", foldQDQPass},
	{"quantize", quantizePass},
	{"plan", planPass},
	{"lower", lowerPass},
	{"emit", emitPass},
	{"fit-code", checkCode},
}

// Stages names what `inspect --ir` can print, and the pass that makes it.
var Stages = map[string]string{"graph": "import", "quant": "quantize", "plan": "plan", "tir": "lower", "c": "emit"}

// emits reports whether RunUntil(…, last) runs the emit pass.
func emits(last string) bool {
	for _, p := range Passes {
		if p.Name == "emit" {
			return true
		}
		if p.Name == last {
			return false
		}
	}
	return false
}

// Compile runs every pass.
func Compile(model string, opt Options) (*State, error) { return RunUntil(model, opt, "") }

// RunUntil runs the passes up to and including the named one ("" = all).
func RunUntil(model string, opt Options, last string) (*State, error) {
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	if opt.Prefix == "" {
		var renamed string
		// Said only where C is written (quantize and plan said it too).
		if opt.Prefix, renamed = defaultPrefix(model); renamed != "" && emits(last) {
			opt.Warn(fmt.Sprintf("%s: the C prefix is %s, %s (--prefix names another)", model, opt.Prefix, renamed))
		}
	}
	return runTwice(opt, func(o Options) *State { return &State{Opt: o, ModelPath: model} }, last, false)
}

// runTwice runs the passes on the State fresh makes, and again on a new one
// with the uint8 layers kept as they are where the first build's int8 form
// of them does not fit (retryUint8), which it returns if that one fits (or,
// failing too, needs less). The warnings of the build returned are said,
// not the other's.
func runTwice(opt Options, fresh func(Options) *State, last string, noImport bool) (*State, error) {
	var said []string
	first := opt
	first.Warn = func(m string) { said = append(said, m) }
	s := fresh(first)
	err := s.run(last, noImport)
	if fit := s.retryUint8(err); fit != nil {
		var again []string
		second := opt
		second.keepUint8 = true
		second.Warn = func(m string) { again = append(again, m) }
		t := fresh(second)
		err2 := t.run(last, noImport)
		var fit2 *FitError
		if err2 == nil {
			opt.Warn(fmt.Sprintf("%s: its uint8 layers stay uint8, which runs them in the generic C (a MobileNet's take 3.7 times the instructions on the M4): as int8 layers it does not fit (%v)", t.ModelPath, fit))
		}
		// Where neither fits, the error that asks for less (review: the
		// uint8 layers' 98,304 B of arena said where the int8 form's
		// 81,920 fitted a larger budget).
		if err2 == nil || errors.As(err2, &fit2) && fit2.Budget == fit.Budget && fit2.Region == fit.Region && fit2.Need < fit.Need {
			for _, m := range again {
				opt.Warn(m)
			}
			t.Opt.Warn = opt.Warn
			return t, err2
		}
	}
	for _, m := range said {
		opt.Warn(m)
	}
	s.Opt.Warn = opt.Warn
	return s, err
}

// run runs the passes up to and including last ("" = all), without the
// import pass with noImport (s.Graph is given).
func (s *State) run(last string, noImport bool) error {
	for _, p := range Passes {
		if p.Name == "import" && noImport {
			continue
		}
		if err := p.Run(s); err != nil {
			return err
		}
		if p.Name == last {
			break
		}
	}
	if s.deferredFit != nil {
		// Stopped before the lowering that would settle it.
		return s.deferredFit
	}
	return nil
}

// retryUint8 reports a build that does not fit the board after its uint8
// layers were made int8: their int8 copies of the model's uint8 inputs and
// outputs are arena that the uint8 layers, reading and writing the caller's
// buffers, did not need (review: a uint8 conv and pool on the micro:bit,
// 4,608 → 11,520 B), and their int16 weights flash. runTwice builds it
// again as it is. It returns the error's FitError, nil for any other
// outcome.
func (s *State) retryUint8(err error) *FitError {
	var fit *FitError
	if s.shiftedU8 && errors.As(err, &fit) {
		return fit
	}
	return nil
}

// Dump prints the IR of a stage (see Stages).
func (s *State) Dump(stage string) (string, error) {
	switch stage {
	case "graph", "quant":
		return graph.Print(s.Graph), nil
	case "plan":
		return s.Plan.Table(), nil
	case "tir":
		return s.Module.String(), nil
	case "c":
		names := make([]string, 0, len(s.Files))
		for n := range s.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "// ---- %s ----\n%s\n", n, s.Files[n])
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown IR stage %q (want graph, quant, plan, tir or c)", stage)
}

// DefaultPrefix derives a C prefix from a model file name.
func DefaultPrefix(model string) string {
	p, _ := defaultPrefix(model)
	return p
}

// defaultPrefix is DefaultPrefix and, when the file name's own prefix
// cannot serve (stdint.tflite: a stdint.h beside the C would hide the
// system's), why it was not taken.
func defaultPrefix(model string) (prefix, renamed string) {
	base := model[strings.LastIndexAny(model, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	p := strings.ToLower(emitc.Ident(base))
	if why := emitc.PrefixProblem(p); why != "" {
		// Named as the file names it: int.tflite is "not int: a
		// keyword", not "not int_" (the identifier Ident made of it).
		if q := strings.TrimRight(p, "_"); q != "" && q != p && emitc.PrefixProblem(q) != "" {
			p, why = q, emitc.PrefixProblem(q)
		}
		for _, verb := range []string{"is ", "ends ", "starts ", "holds "} {
			if strings.HasPrefix(why, verb) { // the sentence's subject
				why = p + " " + why
				break
			}
		}
		return emitc.SafePrefix(p), fmt.Sprintf("not %s: %s", p, why)
	}
	// A name of other letters (modèle.tflite, модель.tflite) spells
	// them as code points: modu00e8le. Said, so the C names are not a
	// surprise.
	if strings.ContainsFunc(base, func(r rune) bool { return r > 127 }) {
		return p, "its file name's non-ASCII letters spelled as their code points (C identifiers are ASCII)"
	}
	return p, ""
}

func importPass(s *State) error {
	o := s.Opt
	g, err := importer.Load(s.ModelPath, importer.Options{Shapes: o.Shapes, Warn: o.Warn, Quantizing: o.Calib != "" || o.CalibRandom > 0 || o.Quantize == "int8"})
	if err != nil {
		return err
	}
	// A float Linear over a sequence comes as MatMul then Add: one
	// FullyConnected with its bias.
	graph.FuseFCBias(g)
	// An attention's K and V transposes write the layout its products read.
	graph.FoldTransposeIntoBatchMatMul(g)
	// Transposes and Reshapes that put every element back (a 1-D
	// convolution's way to NHWC and back) move nothing.
	graph.FoldIdentityMoves(g)
	s.Graph = g
	return nil
}

// foldQDQPass turns a QDQ-form float graph (QuantizeLinear/DequantizeLinear
// around float ops) into the integer graph it describes.
func foldQDQPass(s *State) error {
	if !IsQDQ(s.Graph) {
		s.Graph, _ = FoldQDQ(s.Graph)
		shiftLayers(s)
		if s.Opt.Int8IO && quantizing(s.Opt) && isFloatCompute(s.Graph) {
			// quantizePass, next, gives the model int8 inputs and
			// outputs (session 48 review: the message below said the
			// flag was ignored, as if the build kept float I/O).
			s.Opt.Warn(fmt.Sprintf("%s: --int8-io: a model mcugen quantizes (--quantize) has int8 inputs and outputs already; the flag changes nothing", s.ModelPath))
		} else if s.Opt.Int8IO {
			s.Opt.Warn(fmt.Sprintf("%s: --int8-io applies to a QDQ ONNX model, and this one has no QuantizeLinear/DequantizeLinear pairs to fold; ignored", s.ModelPath))
		}
		warnWeightZeroPoints(s, s.Graph)
		return nil
	}
	g, err := FoldQDQ(s.Graph)
	if err != nil {
		return fmt.Errorf("%s: %w", s.ModelPath, err)
	}
	if s.Opt.Int8IO {
		g = quant.IntIO(g)
	}
	warnFloatLeft(s, g)
	warnWeightZeroPoints(s, g)
	s.Graph = g
	return nil
}

// KernelOptions is o for a graph cut out of a compiled model's (tune's
// kernels): its layers are in the form that build gave them, and uint8
// ones it kept stay uint8 (review: cut out of a build that kept them, each
// shifted alone into three kernels, and tune passed it over).
func (o Options) KernelOptions() Options {
	o.keepUint8 = true
	return o
}

// shiftLayers makes the uint8 layers of a model int8 (quant.ShiftUint8Layers:
// TFLite's uint8 models, from TF1's quantization-aware training) where that
// pays: on the dsp and mve targets, whose SIMD kernels take int8 only (the
// generic C and NEON's kernels run uint8 as fast, and the edges' flips
// were all the shift added there: review, a fully connected 784 → 10 on
// the micro:bit +40%), and where the shifted layers' MACs are at least
// eight times the elements the uint8 edges' flips pass over (review: a one-
// channel 1×1 convolution of 49 pixels, 1,093 → 2,322 instructions on the
// M4).
func shiftLayers(s *State) {
	if s.Opt.keepUint8 || s.Opt.Board == nil {
		return
	}
	if t := s.targetName(); t != "dsp" && t != "mve" {
		return
	}
	f := quant.ShiftUint8Layers(s.Graph)
	// The nodes before the shift (it keeps their names), and those of
	// them that read uint8.
	old, wasU8 := map[string]bool{}, map[string]bool{}
	for _, n := range s.Graph.Nodes {
		old[n.Name] = true
		if len(n.Inputs) > 0 && s.Graph.Tensors[n.Inputs[0]] != nil && s.Graph.Tensors[n.Inputs[0]].DType == graph.UInt8 {
			wasU8[n.Name] = true
		}
	}
	var macs, flipped int64
	for _, n := range f.Nodes {
		switch {
		case (n.Op == graph.Conv2D || n.Op == graph.FullyConnected) && wasU8[n.Name] && f.Tensors[n.Inputs[0]].DType == graph.Int8:
			macs += graph.MACs(f, n)
		case n.Op == graph.Quantize && !old[n.Name]:
			flipped += int64(f.Tensors[n.Outputs[0]].NumElements())
		}
	}
	if macs == 0 || macs < 8*flipped {
		return
	}
	s.Graph, s.shiftedU8 = f, true
}

// warnWeightZeroPoints names the integer layers whose constant weights have
// a zero point other than 0 (ONNX Runtime's uint8 weights, asymmetric by
// default, or int8 ones with a zero point): their kernels subtract it in the
// inner loop, about three times the instructions of symmetric weights on the
// M4 (review: a MobileNet block 496,617 against 138,355), which nothing said.
func warnWeightZeroPoints(s *State, g *graph.Graph) {
	var names []string
	uint8s := 0 // of them with uint8 weights, which the dsp kernels do not take
	for _, n := range g.Nodes {
		switch n.Op {
		case graph.Conv2D, graph.FullyConnected, graph.ConvTranspose2D, graph.BatchMatMul:
		default:
			continue
		}
		if len(n.Inputs) < 2 {
			continue
		}
		w := g.Tensors[n.Inputs[1]]
		if w == nil || !w.IsConst() || w.Quant == nil || w.DType == graph.Float32 {
			continue
		}
		if slices.ContainsFunc(w.Quant.ZeroPoint, func(z int32) bool { return z != 0 }) && (s.targetName() != "dsp" || !tir.DSPFoldsWeightZP(g, n)) {
			names = append(names, fmt.Sprintf("%s (%s)", n.Name, tir.OpLabel(g, n)))
			if w.DType == graph.UInt8 {
				uint8s++
			}
		}
	}
	// The dsp schedules (Cortex-M4, M7, M33) subtract the zero point from
	// the weights when they pack them as int16 words (tir's
	// parseAccNestFold): no cost there, for the layers they take
	// (tir.DSPFoldsWeightZP). The Cortex-M55's MVE kernels take zero point
	// 0 only; those layers run the dsp schedules there (session 52: a
	// 64 → 64 pointwise layer over 25×5 pixels on mps3-an547, 110,602
	// instructions at zero point 0, 489,525 at 9, where the generic C took
	// 1,653,231). The others subtract it in the inner loop (1.7x on
	// mps2-an385).
	if len(names) == 0 {
		return
	}
	how := "quantize the weights symmetric, int8 at zero point 0"
	if g.Format == "onnx" {
		how += " (ONNX Runtime: weight_type=QuantType.QInt8)"
	}
	why := fmt.Sprintf("the %s kernels subtract it in the inner loop: about 2x the instructions on a Cortex-M3; the Cortex-M4/M7/M33 kernels fold it into their weights", s.targetName())
	switch s.targetName() {
	case "dsp":
		why = "the dsp kernels fold it into the int8 weights of convolutions, fully connected layers and depthwise layers over a multiple of four channels; these run the generic C, which subtracts it in its inner loop"
		if uint8s > 0 {
			why += fmt.Sprintf("; %d of them have uint8 weights, which the dsp kernels do not take", uint8s)
		}
	case "mve":
		why = "the Cortex-M55's MVE kernels take weights at zero point 0 only: these layers run the dsp kernels, which fold it into their weights (1.2x to 6x the MVE kernels' instructions), or the generic C where those do not take them (up to 35x)"
		if uint8s > 0 {
			why += fmt.Sprintf("; %d of them have uint8 weights, which the dsp kernels do not take: the generic C", uint8s)
		}
	}
	where := s.ModelPath // and the board: test and bench take several, and the reason is the target's
	if s.Opt.Board != nil {
		where += " on " + s.Opt.Board.Name
	}
	s.Opt.Warn(fmt.Sprintf("%s: %d layer(s) have weights with a zero point other than 0: %s (%s; %s)",
		where, len(names), someNames(names, 6), why, how))
}

// warnFloatLeft names the nodes of a folded QDQ model that still compute in
// float32 (their operands dequantized, their results quantized again): an
// op without an int8 form for its quantization, a pattern folding does not
// take. They cost float's time and memory, which nothing said (review
// finding: QAT exports with float biases ran 4x slower in silence).
func warnFloatLeft(s *State, g *graph.Graph) {
	// Between the two: a node that reads, through float nodes, a
	// Dequantize's output and whose result reaches a Quantize. A float
	// Softmax after the model's last Dequantize is the model's own float
	// tail, not a layer left unfolded (review finding: it was named).
	fromDQ := map[string]bool{} // float tensors computed from a Dequantize
	for _, n := range g.Nodes {
		from := n.Op == graph.Dequantize
		for _, in := range n.Inputs {
			from = from || fromDQ[in]
		}
		if from {
			for _, o := range n.Outputs {
				if t := g.Tensors[o]; t != nil && t.DType == graph.Float32 {
					fromDQ[o] = true
				}
			}
		}
	}
	toQ := map[string]bool{} // float tensors whose values reach a Quantize
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		to := n.Op == graph.Quantize
		for _, o := range n.Outputs {
			to = to || toQ[o]
		}
		if to {
			for _, in := range n.Inputs {
				if t := g.Tensors[in]; t != nil && t.DType == graph.Float32 {
					toQ[in] = true
				}
			}
		}
	}
	var names, kept []string
	for _, n := range g.Nodes {
		switch n.Op {
		case graph.Quantize, graph.Dequantize, graph.Reshape, graph.Transpose:
			continue // the encoding's edges, and moves
		}
		if len(n.Outputs) == 0 || !fromDQ[n.Outputs[0]] || !toQ[n.Outputs[0]] {
			continue
		}
		if g.KeepFloat[n.Name] {
			kept = append(kept, n.Name)
			continue
		}
		names = append(names, fmt.Sprintf("%s (%s)", n.Name, n.Op))
	}
	if len(kept) > 0 {
		s.Opt.Warn(fmt.Sprintf("%s: %d node(s) stay in float32, as mcugen quantize marked them (its --float, or ops it keeps float): %s", s.ModelPath, len(kept), strings.Join(kept, ", ")))
	}
	if len(names) == 0 {
		return
	}
	s.Opt.Warn(fmt.Sprintf("%s: %d node(s) of this QDQ model compute in float32, between a DequantizeLinear and a QuantizeLinear: %s (no int8 form for them as quantized; inspect --ir quant shows the folded graph)",
		s.ModelPath, len(names), someNames(names, 6)))
}

// someNames joins the first n names, and says how many more there are.
func someNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

// IsQDQ reports a QDQ-form float graph: float operators between
// QuantizeLinear/DequantizeLinear pairs, which FoldQDQ folds.
func IsQDQ(g *graph.Graph) bool { return hasOp(g, graph.Dequantize) && isFloatCompute(g) }

// FoldQDQ returns the integer graph a QDQ-form float graph describes, as
// the compiler builds it (the graph `run` and `test` compare the firmware
// with), and any other graph unchanged.
func FoldQDQ(g *graph.Graph) (*graph.Graph, error) {
	if !IsQDQ(g) {
		if g.Format == "onnx" && hasOp(g, graph.Quantize) {
			// uint8 QLinearConv layers with nothing in float between
			// them: int8 at zero point z − 128, the same values, so
			// the int8 kernels take them.
			return quant.ShiftUint8(g), nil
		}
		return g, nil
	}
	f, err := quant.FoldQDQ(g)
	if err != nil {
		return nil, err
	}
	// The QuantizeLinear/DequantizeLinear pairs split the float chains.
	graph.FoldIdentityMoves(f)
	return f, nil
}

// quantizing says whether o asks for post-training quantization.
func quantizing(o Options) bool {
	return o.Calib != "" || o.CalibRandom > 0 || o.Quantize == "int8"
}

func quantizePass(s *State) error {
	o := s.Opt
	if !quantizing(o) {
		return nil
	}
	// A QDQ model (folded by now) is quantized already, whatever float
	// nodes its folding left (review finding: those made --calib fail
	// with quant's "fold it with FoldQDQ").
	if qdq := hasOp(s.Graph, graph.Quantize) || hasOp(s.Graph, graph.Dequantize); qdq || !isFloatCompute(s.Graph) {
		what := NotQuantizable(s.Graph)
		if qdq {
			what = "is already quantized"
		}
		flags := "--calib/--quantize"
		if len(o.Float) > 0 {
			flags = "--calib/--quantize/--float" // review finding: --float went unmentioned
		}
		o.Warn(fmt.Sprintf("%s %s; %s ignored", s.ModelPath, what, flags))
		return nil
	}
	// Checked before calibrating, which takes a while.
	keep, err := quant.FloatNodes(s.Graph, o.Float)
	if err != nil {
		return fmt.Errorf("%s: --float %w", s.ModelPath, err)
	}
	if len(keep) > 0 {
		// Said, as a glob or a cut name can reach more nodes than meant
		// (review finding).
		var names []string
		for _, n := range s.Graph.Nodes {
			if keep[n.Name] {
				names = append(names, n.Name)
			}
		}
		o.Warn(fmt.Sprintf("%s: --float keeps %d node(s) in float32: %s", s.ModelPath, len(keep), someNames(names, 6)))
	}
	if o.BeforeCalibrate != nil {
		if err := o.BeforeCalibrate(s.Graph); err != nil {
			return err
		}
	}
	var samples []map[string]*graph.Data
	switch {
	case o.Calib != "":
		var err error
		var sources []map[string]string
		if samples, sources, err = quant.LoadCalibSources(o.Calib, s.Graph); err != nil {
			return err
		}
		warnDegenerateCalib(o, samples, sources)
	default:
		n := o.CalibRandom
		if n <= 0 {
			n = 16
		}
		// Say what the random data assume: a float input without range
		// hints is drawn from [-1, 1], so its int8 range is that and real
		// values beyond it saturate (user journey: TFLM's hello_world,
		// whose input runs to 2π, gave 0.859 for sin(3) with no other sign).
		o.Warn(fmt.Sprintf("quantizing with %d random calibration inputs, uniform in [-1, 1] for a float input the model gives no range (its int8 range becomes that: real values beyond it are clipped); real data (--calib DIR) gives better ranges", n))
		samples = quant.RandomCalib(s.Graph, n, 1)
	}
	name := o.Method
	if name == "" {
		name = string(quant.DefaultMethod)
	}
	method, err := quant.ParseMethod(name)
	if err != nil {
		return err
	}
	q, rep, err := quant.PTQ(s.Graph, samples, quant.Options{Method: method, Float: keep}, quant.CalibOptions{Progress: quant.ProgressWriter()})
	if err != nil {
		if o.Calib == "" && strings.Contains(err.Error(), "from inputs without NaN") {
			// The random inputs' range, not the model's data (sqrt or
			// log of a negative value).
			err = fmt.Errorf("%w (with random calibration inputs, uniform in [-1, 1]: calibrate with the model's own data, --calib DIR)", err)
		}
		return fmt.Errorf("%s: %w", s.ModelPath, err)
	}
	s.Float, s.Graph, s.QuantReport = s.Graph, q, rep
	warnLowSQNR(o, rep)
	return nil
}

// LowSQNRdB is the output SQNR on the calibration data below which a
// compile from real calibration data warns that int8 loses accuracy.
const LowSQNRdB = 20

// warnLowSQNR says when the int8 model's outputs are far from the float
// model's on the calibration data itself (a transformer's class token lost
// to one LayerNorm scale came out at 10.7 dB, and compile said nothing:
// user-journey finding), naming the first layer below the threshold, where
// the loss starts. Each output is held to it as well as the pooled figure
// (an output quantized to zeros hid behind a larger one's 42.6 dB), and
// random calibration inputs too, which it names (0.0 dB on them passed in
// silence: review finding).
func warnLowSQNR(o Options, rep *quant.Report) {
	if rep == nil || rep.Samples == 0 {
		return
	}
	data := "the calibration data"
	if o.Calib == "" {
		data = "the random calibration inputs"
	}
	// NaN is low too: every comparison with it is false, and a float
	// model overflowing to infinity gave SQNR NaN without a word (review
	// finding).
	nan := false
	low := func(db float64) bool {
		nan = nan || math.IsNaN(db)
		return !(db >= LowSQNRdB)
	}
	var msg string
	switch {
	case low(rep.OutputSQNRdB):
		msg = fmt.Sprintf("int8 output SQNR %.1f dB against the float model on %s", rep.OutputSQNRdB, data)
	default:
		for _, out := range rep.Outputs {
			if low(out.SQNRdB) {
				msg = fmt.Sprintf("int8 output %q: SQNR %.1f dB against the float model on %s (all outputs together: %.1f dB)", out.Name, out.SQNRdB, data, rep.OutputSQNRdB)
				break
			}
		}
		if msg == "" {
			// An output whose SQNR is its wide channels' while its median
			// channel lost its steps (a Concat of a wide input and narrow
			// ones zeroed 24 of 32 features without a word: quantizer
			// review).
			outs := map[string]bool{}
			for _, out := range rep.Outputs {
				outs[out.Name] = true
			}
			for _, l := range rep.Layers {
				if c := l.ChannelSQNRdB; c != nil && outs[l.Tensor] && low(*c) {
					msg = fmt.Sprintf("int8 output %q: SQNR %.1f dB against the float model on %s, but %.1f dB in its median channel (a few wide channels take its int8 scale, as a Concat of differently ranged inputs stores them at one)", l.Tensor, l.SQNRdB, data, *c)
					break
				}
			}
		}
		if msg == "" {
			return
		}
	}
	if rep.Top1Total > 0 {
		msg += fmt.Sprintf(" (top-1 agreement %d/%d)", rep.Top1Agree, rep.Top1Total)
	}
	for _, l := range rep.Layers {
		if low(l.SQNRdB) {
			msg += fmt.Sprintf("; the first layer below %d dB is %q (%s, %.1f dB)", LowSQNRdB, l.Name, l.Op, l.SQNRdB)
			break
		}
		if c := l.ChannelSQNRdB; c != nil && low(*c) {
			// Its SQNR is a wide channel's: the others lost their steps.
			msg += fmt.Sprintf("; the first layer below %d dB is %q (%s, %.1f dB, but %.1f dB in the median channel: a few wide channels take its int8 scale)", LowSQNRdB, l.Name, l.Op, l.SQNRdB, *c)
			break
		}
	}
	if nan {
		msg += " (NaN: the float model gives NaN or infinities on these inputs)"
	}
	o.Warn(msg + ": the int8 model loses accuracy (mcugen quantize prints every layer's SQNR; another --method, or the float model, may do better)")
}

// warnDegenerateCalib warns about calibration data whose ranges mean little:
// one sample, or an input that holds one value in every sample (its range is
// then made up, and the quality report, measured on the same data, looks
// good whatever the real inputs do).
// sources[i][input] names sample i's file (nil: samples by index alone).
func warnDegenerateCalib(o Options, samples []map[string]*graph.Data, sources []map[string]string) {
	if len(samples) == 1 {
		o.Warn(fmt.Sprintf("--calib %s: one sample; ranges from a single input rarely hold for others (a few dozen representative ones are usual)", o.Calib))
	}
	if len(samples) == 0 {
		return
	}
	names := make([]string, 0, len(samples[0]))
	for name := range samples[0] {
		names = append(names, name)
	}
	sort.Strings(names) // one order for the warnings, run after run
	for _, name := range names {
		first, constant := 0.0, true
		seen := false
		for _, smp := range samples {
			d := smp[name]
			for i := 0; i < d.Len() && constant; i++ {
				v := d.Float(i)
				if !seen {
					first, seen = v, true
				} else if v != first {
					constant = false
				}
			}
		}
		if seen && constant {
			o.Warn(fmt.Sprintf("--calib %s: input %q holds %g in every sample: its range is made up, and the quality report, measured on these samples, says nothing about real inputs", o.Calib, name, first))
			continue
		}
		warnOutlierSample(o, samples, sources, name)
	}
}

// warnOutlierSample warns when one calibration sample alone sets an input's
// range: its peak |x| at least 4 times every other sample's and 8 times the
// median sample's. Inputs take the raw min and max whatever the method, so
// one glitched sample (a saturated sensor reading) leaves every other input
// a few of the 256 steps (user-journey finding: top-1 agreement fell from
// 16/16 to 2/16, and nothing named the sample).
func warnOutlierSample(o Options, samples []map[string]*graph.Data, sources []map[string]string, name string) {
	if len(samples) < 4 {
		return
	}
	peaks := make([]float64, len(samples))
	for i, smp := range samples {
		d := smp[name]
		if d == nil || d.DType != graph.Float32 {
			return
		}
		for _, v := range d.F {
			peaks[i] = math.Max(peaks[i], math.Abs(float64(v)))
		}
	}
	top := 0
	for i, p := range peaks {
		if p > peaks[top] {
			top = i
		}
	}
	second := 0.0
	for i, p := range peaks {
		if i != top {
			second = math.Max(second, p)
		}
	}
	sorted := slices.Clone(peaks)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	if peaks[top] >= 4*second && peaks[top] >= 8*median && second > 0 {
		which := fmt.Sprintf("sample %d (from 0, in the files' natural order: x_2 before x_10)", top)
		if top < len(sources) && sources[top][name] != "" {
			// Named by its file (a review finding: the index had to be
			// counted out by hand).
			which = fmt.Sprintf("sample %d, %s,", top, sources[top][name])
		}
		o.Warn(fmt.Sprintf("--calib %s: input %q: %s reaches |x| = %.4g, where no other passes %.4g: that one sample sets the input's int8 range, and every other sample gets at most about %d of its 256 steps; a glitch in the data? (an input's range is its raw min and max, whatever --method)", o.Calib, name, which, peaks[top], second, int(math.Ceil(256*second/peaks[top]))))
	}
}

func planPass(s *State) error {
	// Channels nobody reads leave their chains (an exact removal), then
	// dead output channels go last where the graph allows it (an exact
	// reordering), so every target's schedule can skip them as one tail.
	// (Once: lowering may plan again, and the graph is pruned by then.)
	if !s.pruned {
		foldConstNodes(s.Graph)
		graph.FoldPadIntoConv(s.Graph)
		if b := s.Opt.Board; b == nil || b.StackBytes == 0 || b.StackBytes >= 3*1024 {
			// The dsp forms lay a row out along W (the M55's and the
			// generic loops measured no gain: up to 41% more on the M55).
			// On a stack under 3 KiB the row forms' arrays do not fit,
			// and their fallback took 2.25 times the column form's
			// instructions (a review's 10×1 convolution 8→16 on 1.5 KiB).
			// On the M55 the depthwise layers alone: they run the dsp
			// planar forms there too (tir's knob dw_dsp_1d), which take
			// a row.
			switch s.targetName() {
			case tir.DSP.Name:
				graph.ColumnConvAsRow(s.Graph, 8)
			case tir.MVE.Name:
				graph.ColumnConvAsRow(s.Graph, math.MaxInt)
			}
		}
		graph.FuseDFTPower(s.Graph)
		s.MACs = graph.TotalMACs(s.Graph)
		_, s.UnusedChannels = graph.PruneUnusedChannels(s.Graph)
		graph.MaterializeConstOutputs(s.Graph)
		s.Graph.CopyAliasedOutputs() // the importer's graphs have it; CompileGraph's may not
		s.pruned = true
	}
	graph.PermuteDeadChannels(s.Graph)
	opt := memplan.DefaultOptions()
	if s.Opt.PlanAlgorithm != "" {
		opt.Algorithm = s.Opt.PlanAlgorithm
	}
	if s.Opt.Align > 0 {
		opt.Align = s.Opt.Align
	}
	opt.IOInArena = s.Opt.IOInArena
	ok := tir.InPlaceOKFor(s.targetName(), s.Graph)
	if s.Opt.NoInPlace {
		ok = tir.InPlaceOK
	}
	opt.InPlaceOK = func(n *graph.Node) bool { return !s.notInPlace[n.Name] && ok(n) }
	// Every kernel tir runs in place keeps what it still needs of its input
	// on its own stack (a review finding: VWW's plan reserved 576 B of
	// arena no kernel touched).
	opt.StagedInPlace = true
	p, err := memplan.Build(s.Graph, opt)
	if err != nil {
		return err
	}
	if err := p.Validate(s.Graph); err != nil {
		return fmt.Errorf("memplan produced an invalid plan: %w", err)
	}
	// A convolution runs in place only where that lowers the arena: its
	// in-place kernel can be slower (the M4's planar depthwise at stride 2,
	// the M55's depthwise lanes on small maps, a pointwise layer run
	// backwards), so each one the plan chose is tried without, in the
	// graph's order, and stays out where the arena does not grow.
	for _, n := range s.Graph.Nodes {
		if n.Op != graph.Conv2D || !p.InPlace[n.Name] || s.notInPlace[n.Name] {
			continue
		}
		if s.notInPlace == nil {
			s.notInPlace = map[string]bool{}
		}
		s.notInPlace[n.Name] = true
		q, err := memplan.Build(s.Graph, opt)
		if err == nil && q.Validate(s.Graph) == nil && q.ArenaBytes <= p.ArenaBytes {
			p = q
		} else {
			delete(s.notInPlace, n.Name)
		}
	}
	s.Plan = p
	err = checkFits(s)
	var fe *FitError
	if b := s.Opt.Board; err != nil && errors.As(err, &fe) && len(p.InPlace) > 0 && b != nil && b.BareMetal() && b.StackBytes > 0 {
		s.deferredFit = err
		return nil
	}
	s.deferredFit = nil
	return err
}

// FitError says a model's arena or weights cannot fit a board's memory
// region, or the budget the user gave; compile finds it from the plan,
// before any code is generated.
type FitError struct {
	Model, Board, Region, What string
	Need, Have                 int64
	// Budget is "flash" or "RAM" when the limit that was short is the
	// user's --flash-budget or --ram-budget (Have), not a board region;
	// Board and Region are then empty.
	Budget string
	// Hint, when set, is what may make it fit.
	Hint string
}

func (e *FitError) Error() string {
	hint := ""
	if e.Hint != "" {
		hint = "; " + e.Hint
	}
	if e.Budget != "" {
		return fmt.Sprintf("%s does not fit the %s budget: needs %s B for %s; --%s-budget is %s B (%s B short)%s",
			e.Model, e.Budget, commas(e.Need), e.What, strings.ToLower(e.Budget), commas(e.Have), commas(e.Need-e.Have), hint)
	}
	return fmt.Sprintf("%s does not fit on %s: needs %s B for %s; region %s has %s B (%s B short)%s",
		e.Model, e.Board, commas(e.Need), e.What, e.Region, commas(e.Have), commas(e.Need-e.Have), hint)
}

// limit is what part of a model must fit: a board's region or a budget.
type limit struct {
	region *boards.Region // nil for a budget
	budget string         // "flash" or "RAM" for a budget
	bytes  int64
}

// fitError is the FitError for need bytes of what over l.
func (s *State) fitError(l limit, what string, need int64) error {
	return fmt.Errorf("%s: %w", s.ModelPath, s.newFitError(l, what, need))
}

// newFitError is fitError's FitError, before it is wrapped (the message is
// formatted then).
func (s *State) newFitError(l limit, what string, need int64) *FitError {
	e := &FitError{Model: s.Graph.Name, What: what, Need: need, Have: l.bytes}
	if l.region != nil {
		e.Board, e.Region = s.Opt.Board.Name, l.region.Name
		if w := s.Opt.Board.RegionFor(boards.HoldsWeights); l.region == s.weightsRegion() && w != nil && w != l.region {
			// Why not the board's weights region (review: "region ITCM"
			// for an MPS3 whose weights go to its QSPI surprised).
			e.What += fmt.Sprintf(", which the project's own linker script keeps with the code, not in region %s", w.Name)
		}
	} else {
		e.Budget = l.budget
	}
	return e
}

// weightsFitError is fitError for a limit the weights are part of: where
// the float32 weights are a quarter or more of what it needs, it says how
// to shrink them (a dynamic-range TFLite model's int8 weights are read as
// float32: review, a 275,728 B file needed 1,063,456 B, and the importer's
// note saying why was dropped with the failure).
func (s *State) weightsFitError(l limit, what string, need int64) error {
	e := s.newFitError(l, what, need)
	if f := floatWeightBytes(s.Graph); !quantizing(s.Opt) && 4*f >= need {
		e.Hint = fmt.Sprintf("%s B of them are float32 weights: --calib DIR (or --calib-random N) quantizes the model to int8, a quarter of those bytes", commas(f))
	}
	return fmt.Errorf("%s: %w", s.ModelPath, e)
}

// floatWeightBytes is the bytes of g's float32 constants.
func floatWeightBytes(g *graph.Graph) int64 {
	var n int64
	for _, t := range g.Tensors {
		if t.IsConst() && t.DType == graph.Float32 {
			n += int64(t.Bytes())
		}
	}
	return n
}

// ModelRAM is the RAM the fit check counts for the model: the plan's arena
// and, for a stateful model, the states' static buffers (and their next
// values' with separate I/O).
func (s *State) ModelRAM() int64 {
	need := int64(s.Plan.ArenaBytes)
	if n := int64(s.Graph.StateBytes()); n > 0 {
		if !s.Opt.IOInArena {
			n *= 2
		}
		need += n
	}
	return need
}

// checkFits refuses a model whose arena or weights cannot fit the board's
// memory regions (the linker would say it later, less clearly), or whose
// arena and states exceed the RAM budget. Any board's regions count, not
// only bare-metal ones' (a user's AVR board inherits host's toolchain and
// declares its 8 KiB of SRAM); the stack beside the arena only where
// mcugen's own firmware reserves it. The weights here are the graph's
// int8 bytes, a lower bound: after lowering, fitWeights checks the
// constants in the kernels' own layouts (and the flash budget).
func checkFits(s *State) error {
	b := s.Opt.Board
	bare := b != nil && b.BareMetal()
	need, what := s.ModelRAM(), "activations (the arena)"
	if s.Graph.StateBytes() > 0 {
		what = "activations (the arena) and the model's state"
	}
	// The tighter of the arena's region and the budget; the region on a tie.
	// A region that also holds the stack must hold the board's stack beside
	// the arena (the firmware mcugen builds reserves it there), so its check
	// counts it; the budget is the model's own RAM.
	var lim *limit
	regionNeed, regionWhat := need, what
	if b != nil {
		if r := b.RegionFor(boards.HoldsArena); r != nil {
			lim = &limit{region: r, bytes: int64(r.Length)}
			if bare && b.RegionFor(boards.HoldsData) == r && b.StackBytes > 0 {
				regionNeed += int64(b.StackBytes)
				regionWhat = strings.Replace(regionWhat, "activations (the arena)", fmt.Sprintf("activations (the arena, %s B)", commas(need)), 1) +
					fmt.Sprintf(" and the board's %s B stack", commas(int64(b.StackBytes)))
			}
		}
	}
	if bud := s.Opt.RAMBudget; bud > 0 && (lim == nil || bud < lim.bytes) {
		lim = &limit{budget: "RAM", bytes: bud}
	}
	switch {
	case lim != nil && lim.region != nil && regionNeed > lim.bytes:
		return s.fitError(*lim, regionWhat, regionNeed)
	case lim != nil && lim.region == nil && need > lim.bytes:
		return s.fitError(*lim, what, need)
	}
	// The budget can bind while the region's check (with the stack) fails.
	if lim != nil && lim.region == nil && b != nil {
		if r := b.RegionFor(boards.HoldsArena); r != nil && regionNeed > int64(r.Length) {
			return s.fitError(limit{region: r, bytes: int64(r.Length)}, regionWhat, regionNeed)
		}
	}
	// With separate I/O the inputs and outputs are the caller's buffers,
	// outside the arena: an output must still fit the board's RAM, and an
	// input its RAM or (a constant one) its flash.
	if b != nil && !s.Opt.IOInArena {
		if ram := b.RegionFor(boards.HoldsArena); ram != nil {
			in := ram
			if w := b.RegionFor(boards.HoldsWeights); w != nil && w.Length > ram.Length {
				in = w
			}
			for _, c := range []struct {
				kind  string
				names []string
				reg   *boards.Region
			}{{"output", s.Graph.UserOutputs(), ram}, {"input", s.Graph.UserInputs(), in}} {
				for _, name := range c.names {
					if t := s.Graph.Tensors[name]; t != nil && uint64(t.Bytes()) > c.reg.Length {
						return s.fitError(limit{region: c.reg, bytes: int64(c.reg.Length)}, fmt.Sprintf("its %s %q (the caller's buffer)", c.kind, name), int64(t.Bytes()))
					}
				}
			}
		}
	}
	// The weights' int8 bytes, a lower bound of the lowered constants,
	// against the tighter of the weights region and the flash budget.
	wlim := (*limit)(nil)
	if b != nil {
		if r := s.weightsRegion(); r != nil {
			wlim = &limit{region: r, bytes: int64(r.Length)}
		}
	}
	if bud := s.Opt.FlashBudget; bud > 0 && (wlim == nil || bud < wlim.bytes) {
		wlim = &limit{budget: "flash", bytes: bud}
	}
	if wlim != nil {
		need, what := graph.WeightBytes(s.Graph), "weights"
		// Fully connected weights all in [−8, 7] can be packed int4 on the
		// dsp target (the fit pass's last resort): half their bytes.
		four := int4Bytes(s)
		need -= four
		if wlim.region == nil {
			// The budget covers code too: at least the entry function's
			// share of the estimate the fit pass adds (fitWeights).
			// (int8 at the least; a float model's are float32: a user
			// journey read "int8" for VWW's float weights.)
			kind := "int8"
			if isFloatCompute(s.Graph) {
				kind = "float32"
			}
			if four > 0 {
				kind = fmt.Sprintf("int8, %s B of them counted as packed int4", commas(2*four))
			}
			what = fmt.Sprintf("weights (%s, %s B) and code (at least %s B)", kind, commas(need), commas(codeHeadroomBase))
			need += codeHeadroomBase
		}
		if need > wlim.bytes {
			return s.weightsFitError(*wlim, what, need)
		}
	}
	return nil
}

// weightsRegion is the board region the model's constants go to: the
// weights region under mcugen's linker script; with plain weights (a
// Zephyr, Arduino or Bazel project, linked by another system's script) the
// region of the code, where such scripts put read-only data. (Review:
// mps3-an547's weights region is its 8 MiB QSPI, but Zephyr links the
// board's 512 KiB ITCM as its flash, and compile took an 843 KB model for a
// Zephyr project that could not link.)
func (s *State) weightsRegion() *boards.Region {
	b := s.Opt.Board
	if b == nil {
		return nil
	}
	if s.Opt.PlainWeights && s.Opt.WeightsSection == "" {
		if r := b.RegionFor(boards.HoldsCode); r != nil {
			return r
		}
	}
	return b.RegionFor(boards.HoldsWeights)
}

// BudgetSummary is the line compile prints when the options gave budgets
// ("" when they gave none): each budget and what the model uses of it.
func (s *State) BudgetSummary() string {
	var parts []string
	if b := s.Opt.FlashBudget; b > 0 {
		if s.codeMeasured > 0 {
			parts = append(parts, fmt.Sprintf("flash %s B (code and constants %s B used, measured with the board's compiler)", commas(b), commas(s.codeMeasured)))
		} else {
			code := codeHeadroomBase + codeHeadroomKernel*int64(s.Module.DistinctFuncs())
			parts = append(parts, fmt.Sprintf("flash %s B (weights %s B and code estimated at %s B used)", commas(b), commas(s.Module.ConstBytes()), commas(code)))
		}
	}
	if b := s.Opt.RAMBudget; b > 0 {
		what := "arena"
		if s.Graph.StateBytes() > 0 {
			what = "arena and state"
		}
		part := fmt.Sprintf("RAM %s B (%s %s B used", commas(b), what, commas(s.ModelRAM()))
		if st, _ := s.Module.ScratchBytes(); st > 0 {
			// The kernels' local arrays live on the caller's stack, which
			// the budget does not count (user-journey finding: the line
			// read as if it held the whole need).
			part += fmt.Sprintf("; the kernels' %s B of stack scratch is not counted", commas(int64(st)))
		}
		parts = append(parts, part+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "budget: " + strings.Join(parts, ", ")
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TargetFor picks the schedule set for a board: the most specific one its
// features allow that tir knows, else generic.
func TargetFor(b *boards.Board) string {
	if b == nil {
		return "generic"
	}
	for _, f := range []string{"mve", "neon", "dsp"} {
		if b.HasFeature(f) {
			if _, err := tir.TargetByName(f); err == nil {
				return f
			}
		}
	}
	return "generic"
}

// CheckTarget reports whether schedule set target (as --target names it)
// exists and, on a bare-metal board, can run on the board's core: dsp needs
// the DSP extension, mve Helium, neon NEON. Their C does not assemble
// without them.
func CheckTarget(target string, b *boards.Board) error {
	if target == "" {
		return nil
	}
	if _, err := tir.TargetByName(target); err != nil {
		return fmt.Errorf("--target %s: unknown schedule set (generic, dsp, mve, neon)", target)
	}
	if b == nil || !b.BareMetal() && b.Name == "host" {
		return nil
	}
	need := map[string]string{"dsp": "dsp", "mve": "mve", "neon": "neon"}[target]
	if need != "" && !b.HasFeature(need) {
		core := b.CPU
		if core == "" {
			core = "its compiler's default core" // aarch64-linux, host
		}
		return fmt.Errorf("--target %s needs the %s feature, which %s (%s) lacks; its default is --target %s", target, need, b.Name, core, TargetFor(b))
	}
	return nil
}

// warnRawMinMax warns of each quantized Maximum or Minimum whose inputs and
// output have different quantizations: TFLite compares their raw integers,
// and so does mcugen, so the result is not the larger (smaller) real value.
func warnRawMinMax(s *State) {
	for _, n := range s.Graph.Nodes {
		if n.Op != graph.Maximum && n.Op != graph.Minimum || len(n.Inputs) != 2 {
			continue
		}
		a, b, y := s.Graph.In(n, 0), s.Graph.In(n, 1), s.Graph.Out(n, 0)
		if a == nil || b == nil || y == nil || y.Quant == nil || a.Quant.Equal(y.Quant) && b.Quant.Equal(y.Quant) {
			continue
		}
		s.Opt.Warn(fmt.Sprintf("%s: node %q (%s): its inputs and output have different quantizations; TFLite compares the raw integers, and so does mcugen, so the result is not the %s of the real values",
			s.ModelPath, n.Name, n.Op, map[bool]string{true: "larger", false: "smaller"}[n.Op == graph.Maximum]))
	}
}

// ClangNoVectorize says a clang build of the C needs its loop vectorizer
// off (-mllvm -vectorize-loops=false: -fno-vectorize before an -O2 is
// undone by it): any build for a Helium core. The generic convolution
// rows crash clang 14's loop vectorizer there (a segfault in an in-loop
// reduction for MVE; a review's 5x1 layer under --target generic), and
// the default target runs them too, wherever Helium and the dsp kernels
// both decline a layer (uint8 weights with a zero point: review finding).
// Helium's kernels are intrinsics and lose nothing by it (KWS and AD on
// mps3-an547 took the same instructions with it and without).
func (s *State) ClangNoVectorize() bool {
	return s.Opt.Board != nil && s.Opt.Board.HasFeature("mve")
}

// targetName is the schedule set the build uses.
func (s *State) targetName() string {
	if s.Opt.Target != "" {
		return s.Opt.Target
	}
	return TargetFor(s.Opt.Board)
}

// MaxConstBytes bounds the constant data a model may bring to lowering
// and C generation, which hold several copies of it and print it as text:
// 256 MiB of folded Range outputs took a host compile past 5 GB and Go's
// out-of-memory crash (review). It is far above any microcontroller's
// flash.
const MaxConstBytes = 64 << 20

// checkConstBytes refuses a graph whose constants exceed MaxConstBytes.
func checkConstBytes(s *State) error {
	total := graph.WeightBytes(s.Graph)
	if total <= MaxConstBytes {
		return nil
	}
	biggest, name := int64(0), ""
	for _, t := range s.Graph.Tensors {
		if n := int64(t.Bytes()); t.IsConst() && (n > biggest || n == biggest && t.Name < name) {
			biggest, name = n, t.Name
		}
	}
	return fmt.Errorf("%s: the model's constants take %s B (the largest, %q, %s B); mcugen generates C for at most %d MiB of constants",
		s.ModelPath, commas(total), name, commas(biggest), MaxConstBytes>>20)
}

func lowerPass(s *State) error {
	if err := CheckTarget(s.Opt.Target, s.Opt.Board); err != nil {
		return err
	}
	if err := checkConstBytes(s); err != nil {
		return err
	}
	warnRawMinMax(s)
	t, err := tir.TargetByName(s.targetName())
	if err != nil {
		return err
	}
	base := t
	// The records' notes once, as the last retargeting left them.
	var recordNotes []string
	defer func() {
		for _, n := range recordNotes {
			s.Opt.Warn(n)
		}
	}()
	retarget := func() error {
		var notes []string
		t, notes, err = s.tuneTarget(base)
		recordNotes = notes
		if lim := s.kernelStack(); lim > 0 {
			t.StackBytes = lim // as checkStack counts
		}
		return err
	}
	if err := retarget(); err != nil {
		return err
	}
	planned, first := 0, ""
	if s.Plan != nil {
		planned = s.Plan.ArenaBytes
	}
	explained := false // the fit error below says it all
	defer func() {
		// Say why the arena grew (review finding: a 3 KiB stack took
		// KWS's arena from 8,128 to 16,000 B, and nothing said so).
		if first != "" && s.Plan != nil && s.Plan.ArenaBytes > planned && !explained {
			why := "a tuning record's form, or a shape its in-place form does not cover"
			if b := s.Opt.Board; b != nil && b.BareMetal() && b.StackBytes > 0 {
				why = fmt.Sprintf("its in-place form's local arrays need more stack than the board's %s B leave, or %s", commas(int64(b.StackBytes)), why)
			}
			s.Opt.Warn(fmt.Sprintf("%s: %d layer(s) the plan ran in place run out of place (first: %q; %s): the arena is %s B, where in place it would be %s B",
				s.ModelPath, len(s.notInPlace), first, why, commas(int64(s.Plan.ArenaBytes)), commas(int64(planned))))
		}
	}()
	for {
		m, err := tir.Lower(s.Graph, s.Plan, t)
		var ip *tir.InPlaceError
		if errors.As(err, &ip) && !s.notInPlace[ip.Node] {
			// The plan offered a convolution in place and its kernel did
			// not take an in-place form (a tuning record, a shape the
			// schedule does not cover, the board's stack): plan again
			// without it.
			if s.notInPlace == nil {
				s.notInPlace = map[string]bool{}
			}
			if first == "" {
				first = ip.Node
			}
			s.notInPlace[ip.Node] = true
			if err := planPass(s); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.ModelPath, err)
		}
		s.Module = m
		// The constants as lowered (weights in the kernels' layouts,
		// tables) against the board's flash; int8 weights where int16
		// ones do not fit, then lower again.
		again, err := s.fitWeights(&t)
		if err != nil {
			return err
		}
		if again {
			// The kernels now kept int8 take the records tuned with
			// int8 weights, where there are some (tune.KeyFor).
			if err := retarget(); err != nil {
				return err
			}
			continue
		}
		if s.deferredFit != nil {
			// The plan the lowering kept: its fit, as checkFits words it.
			s.deferredFit = nil
			if err := checkFits(s); err != nil {
				if b := s.Opt.Board; first != "" && s.Plan.ArenaBytes > planned && b != nil && b.StackBytes > 0 {
					explained = true
					return fmt.Errorf("%w; in place the arena would be %s B, but in-place forms need more stack than the board's %s B (stack_bytes) leave (first: %q)",
						err, commas(int64(planned)), commas(int64(b.StackBytes)), first)
				}
				return err
			}
		}
		if err := checkConstRAM(s); err != nil {
			return err
		}
		return checkStack(s)
	}
}

// checkConstRAM refuses a model whose constants and arena cannot share the
// RAM of a board that copies constant data into it (an AVR: avr-gcc puts
// const arrays in .data unless they are PROGMEM, and mcugen's kernels read
// weights as ordinary memory).
func checkConstRAM(s *State) error {
	b := s.Opt.Board
	if b == nil || !b.ConstInRAM() {
		return nil
	}
	r := b.RegionFor(boards.HoldsArena)
	if r == nil {
		return nil
	}
	arena, consts := s.ModelRAM(), s.Module.ConstBytes()
	if need := arena + consts; need > int64(r.Length) {
		what := fmt.Sprintf("activations (the arena, %s B) and the weights avr-gcc copies into SRAM (%s B)", commas(arena), commas(consts))
		return s.weightsFitError(limit{region: r, bytes: int64(r.Length)}, what, need)
	}
	return nil
}

// StackFrames is what checkStack allows, beyond the kernels' local arrays,
// for the frames of the entry function, a kernel and its helpers, and the
// caller's own, in a gcc build.
const StackFrames = 1024

// ClangStackFrames is StackFrames for a clang build on a core with Helium
// (MVE): clang 14's code for the M55 spills more than gcc's (VWW's 12x12x64
// depthwise layer: 1,440 B of frames above its planes, gcc's 184 B). On the
// other cores clang's frames stay within StackFrames.
const ClangStackFrames = 2048

// ClangO0StackFrames is StackFrames for a clang build at -O0 (a board's
// cflags): the generated C asks gcc for -Og in its kernels (#pragma GCC
// optimize), which clang does not take, and unoptimized, every inlined
// helper's locals get their own slots. Measured frames above the local
// arrays, clang 14 -O0 (session 44): on the M4 (dsp) KWS 4,168 B, VWW 4,184,
// IC 10,776, AD 3,284; on the M55 (mve) 392-896; on the M3 (generic) 216-356
// (review finding: an M4 board with a 4 KiB stack passed the check at 3,072
// B of arrays, and the run hung overflowing it).
const ClangO0StackFrames = 12 * 1024

// StackFrames is the frame allowance of the build: StackFrames,
// ClangStackFrames for clang on a core with MVE, ClangO0StackFrames for
// clang at -O0.
func (o Options) StackFrames() int {
	if o.Compiler == runner.CompilerClang && o.Board != nil && o.Board.OptLevel() == "-O0" {
		return ClangO0StackFrames
	}
	if o.Compiler == runner.CompilerClang && o.Board != nil && o.Board.HasFeature("mve") {
		return ClangStackFrames
	}
	return StackFrames
}

// checkStack refuses a build whose largest kernel's local arrays (im2col
// rows, Winograd tiles, depthwise planes) cannot fit the stack the board
// reserves: the firmware would overrun it at run time.
func checkStack(s *State) error {
	b := s.Opt.Board
	if b == nil || !b.BareMetal() || b.StackBytes <= 0 {
		return nil
	}
	need, kernel := s.Module.ScratchBytes()
	frames := s.Opt.StackFrames()
	if need+frames <= b.StackBytes {
		return nil
	}
	of := ""
	switch frames {
	case ClangStackFrames:
		of = " (clang's for Helium)"
	case ClangO0StackFrames:
		of = " (clang's at -O0, unoptimized: build with -O1 or more, or give the board a larger stack)"
	}
	what := fmt.Sprintf("kernel %s's local arrays (%s B) and %s B of frames%s", kernel, commas(int64(need)), commas(int64(frames)), of)
	if kernel == "" || need == 0 {
		// No kernel has local arrays: the frames alone are past a tiny
		// stack_bytes (the message named a kernel "").
		what = fmt.Sprintf("%s B of call frames%s", commas(int64(frames)), of)
	}
	err := &FitError{Model: s.Graph.Name, Board: b.Name, Region: "stack (the board's stack_bytes)",
		What: what, Need: int64(need + frames), Have: int64(b.StackBytes)}
	return fmt.Errorf("%s: %w", s.ModelPath, err)
}

func emitPass(s *State) error {
	o := s.emitOptions()
	files, err := emitc.Emit(s.Module, o)
	if err != nil {
		return err
	}
	s.Files = files
	s.Report = emitc.ReportFor(s.Module, files, o)
	if s.Lean != nil {
		// The kernels kept int8 that the C defines (emitc prints a kernel
		// that repeats an earlier one's C as a call of that one).
		defined := definedFuncs(files, strings.TrimSuffix(s.Report.Entry, "_run")+"_")
		s.Lean.CKernels = nil
		for _, k := range s.Lean.Kernels {
			if defined[k] {
				s.Lean.CKernels = append(s.Lean.CKernels, k)
			}
		}
	}
	return nil
}

// emitOptions are the emitter's options for s's module and board.
func (s *State) emitOptions() emitc.Options {
	section := s.Opt.WeightsSection
	if section == "" && !s.Opt.PlainWeights && s.Opt.Board != nil && s.Opt.Board.BareMetal() {
		// The board's linker script puts this section in its weights region.
		section = crt.WeightsSection
	}
	arena := ""
	if !s.Opt.PlainWeights && s.Opt.Board != nil && s.Opt.Board.BareMetal() {
		// mcugen's linker script puts it in the board's arena region
		// (Zephyr, Arduino and Bazel builds link with their own scripts).
		arena = crt.ModelArenaSection
	}
	return emitc.Options{
		Prefix: s.Opt.Prefix, ArenaExternal: s.Opt.ArenaExternal, IOInArena: s.Opt.IOInArena,
		WeightsSection: section, ArenaSection: arena, Model: baseName(s.ModelPath), Version: s.Opt.Version,
		Target: s.Module.Target, Format: s.Graph.Format,
	}
}

// definedFuncs names the functions the C files define as "void
// <prefix>NAME(", read in one pass over each file.
func definedFuncs(files map[string][]byte, prefix string) map[string]bool {
	out := map[string]bool{}
	def := []byte(" void " + prefix)
	for name, c := range files {
		if !strings.HasSuffix(name, ".c") {
			continue
		}
		for {
			i := bytes.Index(c, def)
			if i < 0 {
				break
			}
			c = c[i+len(def):]
			if j := bytes.IndexByte(c, '('); j > 0 && bytes.IndexByte(c[:j], ' ') < 0 {
				out[string(c[:j])] = true
			}
		}
	}
	return out
}

func baseName(p string) string { return p[strings.LastIndexAny(p, `/\`)+1:] }

func hasOp(g *graph.Graph, op graph.Op) bool {
	for _, n := range g.Nodes {
		if n.Op == op {
			return true
		}
	}
	return false
}

// isFloatCompute reports whether any compute node of g works on float32.
func isFloatCompute(g *graph.Graph) bool {
	for _, n := range g.Nodes {
		switch n.Op {
		case graph.Quantize, graph.Dequantize, graph.Reshape, graph.Transpose:
			continue
		}
		if t := g.In(n, 0); t != nil && t.DType == graph.Float32 {
			return true
		}
	}
	return false
}

// WriteFiles writes files into dir (which must exist).
func WriteFiles(dir string, files map[string][]byte) error {
	for name, b := range files {
		if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return fmt.Errorf("refusing to write %q outside %s", name, dir)
		}
		if err := os.WriteFile(dir+string(os.PathSeparator)+name, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// NotQuantizable says why a graph without float arithmetic has nothing to
// quantize, as "the model …" would go on: a QDQ model (mcugen quantize's
// own output) has float inputs and int8 layers and "is already quantized"
// (user-journey finding: it was called a float model without arithmetic);
// a float model of Transpose and Reshape "only moves float data"; any
// other "is already an integer model".
func NotQuantizable(g *graph.Graph) string {
	for _, t := range g.Tensors {
		if t != nil && t.DType.IsInt() && t.Quant != nil && len(t.Quant.Scale) > 0 && !t.IsConst() {
			return "is already quantized"
		}
	}
	for _, name := range g.Inputs {
		if t := g.Tensors[name]; t != nil && t.DType == graph.Float32 {
			return "only moves float data (no arithmetic to quantize)"
		}
	}
	return "is already an integer model"
}
