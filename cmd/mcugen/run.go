package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/quant"
)

// runFlags are what run, test and bench share beyond compile's options.
type runFlags struct {
	used    map[string]int // caseName's names so far
	Timeout time.Duration  `help:"Kill the firmware after this long." default:"120s"`
	Keep    string         `help:"Keep the build directory here instead of a temporary one (with several models or boards, a MODEL-BOARD subdirectory each)." type:"path" placeholder:"DIR"`
	CC      string         `name:"cc" help:"C compiler of the firmware: gcc (the board's) or clang (LLVM's, as Keil MDK's armclang and the LLVM Embedded Toolchain for Arm are; Debian package clang), whose objects the board's gcc links." enum:"gcc,clang" default:"gcc"`
}

// Validate refuses a timeout that kills every firmware before it starts (kong calls it
// after parsing; its error is a usage error).
func (r *runFlags) Validate() error {
	if r.Timeout <= 0 {
		return fmt.Errorf("--timeout %v: must be positive (e.g. 30s, 2m)", r.Timeout)
	}
	return nil
}

// workDir is the build directory: --keep, or a temporary one that done
// (and an interrupt) removes.
func (r *runFlags) workDir() (string, func(), error) { return r.caseDir("") }

// caseDir is workDir for one case of several: with --keep, its own
// subdirectory (case names it; "" for the only case).
func (r *runFlags) caseDir(name string) (string, func(), error) {
	if r.Keep != "" {
		dir := r.Keep
		if name != "" {
			dir = filepath.Join(dir, name)
			// The parent holds the cases' directories: marked too, so a
			// later single-case run may build there (a review).
			if err := claimKeepDir(r.Keep); err != nil {
				return "", nil, err
			}
		}
		if err := claimKeepDir(dir); err != nil {
			return "", nil, err
		}
		// Two runs building in one --keep directory took turns at random
		// and one reported the other's count (user-journey finding): they
		// wait for each other now.
		unlock, err := fileio.LockDir(dir, func() {
			fmt.Fprintf(os.Stderr, "mcugen: --keep %s: another mcugen is building there; waiting for it\n", dir)
		})
		if err != nil {
			return "", nil, fmt.Errorf("--keep %s: %w", dir, err)
		}
		return dir, unlock, nil
	}
	return tempWorkDir("mcugen-run-")
}

// caseName names a kept case's directory: the model's file name without
// its extension and the board (with -2, -3, ... when two models share a
// name), or "" when the run has one case.
func (r *runFlags) caseName(model, board string, cases int) string {
	if cases <= 1 {
		return ""
	}
	base := filepath.Base(model)
	name := strings.TrimSuffix(base, filepath.Ext(base)) + "-" + board
	if r.used == nil {
		r.used = map[string]int{}
	}
	r.used[name]++
	if k := r.used[name]; k > 1 {
		name = fmt.Sprintf("%s-%d", name, k)
	}
	return name
}

type runCmd struct {
	modelFlags
	compileFlags
	runFlags
	Input  []string `help:"Input tensor file; NAME=FILE binds by name, a bare FILE by position." placeholder:"[NAME=]FILE" sep:"none"`
	Random int      `help:"Run N random inputs (when no --input is given)." default:"1"`
	Out    string   `short:"o" help:"Write the outputs (of the first vector) here as <output>.npy." type:"path" placeholder:"DIR"`
	JSON   bool     `name:"json" help:"Print one JSON object."`
}

type runReport struct {
	Board string `json:"board"`
	// MeasuredOn is the QEMU board of the same core the build ran on, for
	// a board without an emulator (as bench's).
	MeasuredOn string `json:"measured_on,omitempty"`
	Target     string `json:"target"`
	// Compiler is "clang" for a --cc clang build (empty: the board's gcc).
	Compiler     string `json:"compiler,omitempty"`
	Instructions int64  `json:"instructions"`
	FlashBytes   int    `json:"flash_bytes"`
	RAMBytes     int    `json:"ram_bytes"`
	ArenaBytes   int    `json:"arena_bytes"`
	// StackBytes is the stack the inference took (bench's), -1 where the
	// platform cannot tell.
	StackBytes     int64        `json:"stack_bytes"`
	Vectors        int          `json:"vectors"`
	Outputs        []outputInfo `json:"outputs"`
	MatchReference bool         `json:"match_reference"`
	MaxAbsDiff     jsonFloat    `json:"max_abs_diff"`
	// Tuning is the --tuning records file and TunedKernels how many of the
	// build's kernels took knobs from it (bench's fields).
	Tuning       string `json:"tuning,omitempty"`
	TunedKernels int    `json:"tuned_kernels,omitempty"`
	// TunedDefaults is how many of those took the defaults (bench's).
	TunedDefaults int `json:"tuned_defaults,omitempty"`
}

// fitInput converts a float input to a quantized model input (as the TFLite
// converter's int8 models expect), so float data can drive a model that
// mcugen quantized itself.
// A NaN or an infinity has no int8 value: refused, as calibration refuses
// it (user-journey finding: a NaN became the zero point in silence).
//
// More than 1% of the values outside the int8 encoding's range gets a warning
// (warn may be nil): they saturate, and data scaled otherwise than the
// calibration data (0..255 for 0..1) gave outputs that matched the reference
// and meant nothing (the session-29 list).
func fitInput(g *graph.Graph, vec map[string]*graph.Data, args []string, warn func(string)) error {
	for _, name := range slices.Sorted(maps.Keys(vec)) {
		d := vec[name]
		t := g.Tensors[name]
		if t != nil && d.DType == graph.Float32 && t.DType.IsInt() && t.Quant != nil {
			s, z := t.Quant.At(0)
			// The values that round to the ends or inside them.
			lo := float64(s) * (-128.5 - float64(z))
			hi := float64(s) * (127.5 - float64(z))
			out := 0
			for i, x := range d.F {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("%sinput %q: element %d is %v, which the int8 input cannot hold (mcugen quantized the model: a float32 file is quantized for it)", inputFile(args, name), name, i, x)
				}
				if float64(x) < lo || float64(x) > hi {
					out++
				}
			}
			if warn != nil && out*100 > len(d.F) {
				warn(fmt.Sprintf("%sinput %q: %d of its %d values (%.1f%%) lie outside [%.4g, %.4g], the range of its int8 encoding (scale %g, zero point %d), and saturate: is the data scaled as the calibration data was?",
					inputFile(args, name), name, out, len(d.F), 100*float64(out)/float64(len(d.F)), float64(s)*float64(-128-z), float64(s)*float64(127-z), s, z))
			}
			vec[name] = quant.QuantizeInput(d, s, z)
			vec[name].DType = t.DType
		}
	}
	return nil
}

// inputFile is "PATH: " for the --input argument that gave input name (one
// file alone, or NAME=PATH), "" when it cannot tell.
func inputFile(args []string, name string) string {
	if len(args) == 1 && !strings.Contains(args[0], "=") {
		return args[0] + ": "
	}
	for _, a := range args {
		if n, p, ok := strings.Cut(a, "="); ok && n == name {
			return p + ": "
		}
	}
	return ""
}

// bindCompiled binds input files for the compiled model s: a quantized
// float model takes the float model's inputs (quantized by fitInput) or,
// failing that, the compiled int8 ones as they are (user-journey finding:
// an int8 file was refused as "wants float32").
func bindCompiled(s *pipeline.State, args []string, warn func(string)) (map[string]*graph.Data, error) {
	if s.Float == nil {
		return bindInputs(s.Graph, args)
	}
	vec, err := bindInputs(s.Float, args)
	if err == nil {
		if err := fitInput(s.Graph, vec, args, warn); err != nil {
			return nil, err
		}
		return vec, nil
	}
	if v, err2 := bindInputs(s.Graph, args); err2 == nil {
		return v, nil
	}
	if !strings.Contains(err.Error(), ": holds ") {
		// Not the file's type (a missing file, a directory, a shape): the
		// note on the types taken would not help (user-journey finding).
		return nil, err
	}
	return nil, fmt.Errorf("%w (mcugen quantized the model: a float32 file is quantized for its int8 input, an int8 file must hold the input's raw values)", err)
}

func (c *runCmd) Run(e *env) error {
	if err := checkVectorCount("--random", c.Random); err != nil {
		return err
	}
	// run takes one source of inputs (it ignored --random 0, and --random
	// beside --input: user-journey finding).
	if c.Random != 1 && len(c.Input) > 0 {
		return usageError{fmt.Errorf("--random %d and --input: run takes its inputs from one of them (test runs both: the given vectors and random ones)", c.Random)}
	}
	if c.Random < 1 {
		return usageError{fmt.Errorf("--random %d: run needs at least one input", c.Random)}
	}
	opt, _, err := c.compileFlags.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	opt.Compiler = c.CC
	if err := hostBuilds(opt.Target, opt.Board); err != nil {
		return err
	}
	if err := checkDirFlag("--out", c.Out); err != nil {
		return err
	}
	if err := checkDirFlag("--keep", c.Keep); err != nil {
		return err
	}
	if c.Keep != "" {
		// Before anything is built: it was each case's error, after the
		// compile (review finding).
		if err := checkKeepDir(c.Keep); err != nil {
			return err
		}
	}
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return err
	}
	s, err := compileModel(c.Model, opt)
	if err != nil {
		return err
	}
	// A board without an emulator runs on its QEMU twin, as in test and
	// bench (run refused it: user-journey finding).
	if s, err = emulatedTwin(e, s, cat); err != nil {
		return err
	}
	if c.Out != "" {
		if err := checkSparesInputs("--out", outputFiles(c.Out, s.Graph.UserOutputs()), c.Input); err != nil {
			return err
		}
	}
	var vectors []map[string]*graph.Data
	if len(c.Input) > 0 {
		vec, err := bindCompiled(s, c.Input, e.warn)
		if err != nil {
			return err
		}
		vectors = append(vectors, vec)
	} else {
		vectors = pipeline.RandomInputs(s.Graph, c.Random, 1)
	}
	dir, done, err := c.workDir()
	if err != nil {
		return err
	}
	defer done()
	x, err := execute(e, s, vectors, dir, c.Timeout)
	if err != nil {
		// The model's name as bench gives it (user-journey finding: run's
		// "firmware on B did not finish" named no model).
		return fmt.Errorf("%s: %w", c.Model, err)
	}
	r := runReport{Board: opt.Board.Name, Target: s.Report.Target, Compiler: compilerTag(c.CC), Instructions: x.Instructions(),
		FlashBytes: x.Firmware.FlashBytes(), RAMBytes: x.Firmware.RAMBytes(), ArenaBytes: s.Report.ArenaBytes, StackBytes: measuredStack(x.StackBytes()),
		Vectors: len(vectors), MatchReference: x.AllMatch(), MaxAbsDiff: jsonFloat(x.MaxAbsDiff), Tuning: opt.Tuning, TunedKernels: s.Tuned, TunedDefaults: s.TunedDefaults}
	if s.Opt.Board.Name != opt.Board.Name {
		r.MeasuredOn = s.Opt.Board.Name
	}
	files := outputFiles(c.Out, s.Graph.UserOutputs())
	if c.Out != "" {
		if err := writeOutputs(c.Out, files, x.Outputs[0]); err != nil {
			return fmt.Errorf("--out %s: %w", c.Out, err)
		}
	}
	for i, name := range s.Graph.UserOutputs() {
		d := x.Outputs[0][i]
		oi := outputInfo{Name: name, Shape: d.Shape, DType: d.DType.String()}.withQuant(s.Graph.Tensors[name])
		if c.Out != "" {
			oi.File = files[i]
		}
		r.Outputs = append(r.Outputs, oi)
	}
	if c.JSON {
		if err := e.printJSON(r); err != nil {
			return err
		}
	} else {
		board := r.Board
		if r.MeasuredOn != "" {
			board += " on " + r.MeasuredOn
		}
		stack := ""
		if r.StackBytes > 0 {
			stack = ", stack " + comma(r.StackBytes) + " B"
		}
		fmt.Fprintf(e.stdout, "board %s (%s): %d vector(s), %s instructions/inference, flash %s B, RAM %s B, arena %s B%s\n",
			board, strings.TrimSuffix(r.Target+", "+r.Compiler, ", "), r.Vectors, countString(r.Instructions), comma(int64(r.FlashBytes)), comma(int64(r.RAMBytes)), comma(int64(r.ArenaBytes)), stack)
		fmt.Fprintf(e.stdout, "outputs %s\n", verdict(r.MatchReference, float64(r.MaxAbsDiff), vectors))
		if r.TunedKernels > 0 {
			fmt.Fprintf(e.stdout, "tuning: %d of %d layer(s) take their knobs from %s%s\n", r.TunedKernels, len(s.Module.Funcs), r.Tuning, tunedDefaults(r.TunedDefaults))
		}
	}
	if !r.MatchReference {
		return fmt.Errorf("%s on %s: outputs differ from the reference interpreter (%s)", c.Model, r.Board, diffText(float64(r.MaxAbsDiff), vectors))
	}
	return nil
}

// diffText says how far the outputs are from the reference: the largest
// difference, or, where one side has NaN or an infinity and the other does
// not (an input with NaN: the reference passes it on, a kernel's clamp may
// not), that (it said "max abs diff +Inf": user-journey finding).
func diffText(maxAbsDiff float64, vectors []map[string]*graph.Data) string {
	if !math.IsInf(maxAbsDiff, 1) {
		return fmt.Sprintf("max abs diff %g", maxAbsDiff)
	}
	for _, v := range vectors {
		for name, d := range v {
			for i := range d.F {
				if f := float64(d.F[i]); math.IsNaN(f) || math.IsInf(f, 0) {
					return fmt.Sprintf("NaN or Inf on one side where the other has a number: input %s holds %g at element %d, which the reference carries through and the firmware's kernels need not", name, f, i)
				}
			}
		}
	}
	return "NaN or Inf on one side where the other has a number"
}

// verdict completes "outputs ..." for run's summary line.
func verdict(match bool, maxAbsDiff float64, vectors []map[string]*graph.Data) string {
	switch {
	case !match:
		return fmt.Sprintf("DIFFER from the reference interpreter (%s)", diffText(maxAbsDiff, vectors))
	case maxAbsDiff > 0:
		return fmt.Sprintf("match the reference interpreter within float rounding (max abs diff %g)", maxAbsDiff)
	}
	return "are bit-exact with the reference interpreter"
}

func countString(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return comma(n)
}
