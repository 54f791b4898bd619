package main

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
)

type benchCmd struct {
	Models []string `arg:"" help:"Model files." type:"path"`
	Shape  []string `help:"Bind a dynamic input dimension (repeatable)." placeholder:"NAME=DIMS" sep:"none"`
	compileFlags
	runFlags
	JSON   bool `name:"json" help:"Print one JSON object."`
	Cycles bool `help:"Also estimate Cortex-M4 cycles (an estimate, not a measurement) from the instruction mix, counted by a QEMU plugin in a second run; Cortex-M4 boards only."`
	Layers bool `help:"Also count each layer's instructions, in a second run with the model's layer hook reading the counter between layers (its overhead taken off)."`
	// Baseline and MaxIncrease gate a change on its cost: every figure bench
	// measures is exact, so the default allows no growth at all.
	Baseline    string  `help:"An earlier bench --json report: show each case's change against it and fail (exit 1) if instructions, arena, flash, RAM or the measured stack grew more than --max-increase." type:"path" placeholder:"FILE"`
	MaxIncrease float64 `help:"With --baseline: growth allowed per figure, in percent (0: none; the figures are exact, so there is no noise to allow for)." default:"0" placeholder:"PCT"`
}

// compilerTag is benchResult.Compiler for --cc: empty for the default gcc,
// so reports from before --cc read the same.
func compilerTag(cc string) string {
	if cc == runner.CompilerGCC {
		return ""
	}
	return cc
}

type benchResult struct {
	Model string `json:"model"`
	// ModelSHA256 is the model file's hash, so a report and a baseline say
	// which file they measured (a CI user journey asked).
	ModelSHA256 string `json:"model_sha256,omitempty"`
	Board       string `json:"board"`
	Target      string `json:"target"`
	// Compiler is "clang" for a --cc clang build (empty: the board's gcc).
	Compiler     string  `json:"compiler,omitempty"`
	Instructions int64   `json:"instructions"`
	MACs         int64   `json:"macs"`
	MACsPerInstr float64 `json:"macs_per_instruction"`
	ArenaBytes   int     `json:"arena_bytes"`
	FlashBytes   int     `json:"flash_bytes"`
	RAMBytes     int     `json:"ram_bytes"`
	// StackBytes is the stack the inference took (the painted stack's high-water
	// mark under the emulator), -1 where the board's platform cannot tell or
	// the case stopped early, as the sizes are then (README.md; the field
	// was left out, the sizes 0: session 50 review).
	StackBytes     int64 `json:"stack_bytes"`
	MatchReference bool  `json:"match_reference"`
	// MeasuredOn is the QEMU board of the same core the build ran on, for
	// a board without an emulator (emulatedTwin).
	MeasuredOn string `json:"measured_on,omitempty"`
	// Error is why this model could not be benchmarked on this board (the
	// other cases still run).
	Error string `json:"error,omitempty"`
	// FlashBudget and RAMBudget are --flash-budget and --ram-budget, when given.
	FlashBudget int64 `json:"flash_budget,omitempty"`
	RAMBudget   int64 `json:"ram_budget,omitempty"`
	// Tuning is the --tuning records file and TunedKernels how many of the
	// model's kernels took knobs from it (a CI job comparing runs sees
	// whether the records applied).
	Tuning       string `json:"tuning,omitempty"`
	TunedKernels int    `json:"tuned_kernels,omitempty"`
	// TunedDefaults is how many of those took the defaults: their records'
	// searches found nothing faster (tune.Overrides).
	TunedDefaults int `json:"tuned_defaults,omitempty"`
	// Anchor is TFLite Micro + CMSIS-NN's instruction count for this model
	// and board measured in the same QEMU (../shared/anchors.md), when known.
	Anchor int64 `json:"tflm_cmsis_nn_instructions,omitempty"`
	// M4CyclesEstimate is the Cortex-M4 cycle ESTIMATE (--cycles): the exact
	// instruction mix weighted by the Cortex-M4 TRM's instruction timings
	// (runner.CortexM4); M4Classes splits it by timing class.
	M4CyclesEstimate int64          `json:"m4_cycles_estimate,omitempty"`
	M4Classes        []m4ClassEntry `json:"m4_cycles_estimate_classes,omitempty"`
	// Layers is the per-layer profile (--layers); EntryInstructions is the
	// whole-run count minus the layers' (the entry function's checks and calls,
	// give or take a few instructions of hook overhead, so it can be negative).
	Layers            []layerEntry `json:"layers,omitempty"`
	EntryInstructions int64        `json:"rest_instructions,omitempty"`
	// Baseline is this case's figures in --baseline (absent: not in it);
	// Regressions are the figures that grew past --max-increase.
	Baseline *baselineMetrics `json:"baseline,omitempty"`
	// BaselineError is the baseline's error for this case, where it
	// holds the case as one it could not measure.
	BaselineError string       `json:"baseline_error,omitempty"`
	Regressions   []regression `json:"regressions,omitempty"`
}

type layerEntry struct {
	Kernel       string `json:"kernel"`
	Op           string `json:"op"`
	Node         string `json:"node"`
	MACs         int64  `json:"macs"`
	Instructions int64  `json:"instructions"`
}

type m4ClassEntry struct {
	Class        string `json:"class"`
	Instructions int64  `json:"instructions"`
	Cycles       int64  `json:"cycles_estimate"`
}

// m4Estimate runs the built firmware again with the instruction-mix plugin and
// returns its Cortex-M4 cycle estimate for the first vector.
func m4Estimate(fw *runner.Firmware, instructions int64, timeout time.Duration) (*runner.M4Estimate, error) {
	if err := runner.EnableMix(fw); err != nil {
		return nil, err
	}
	res, err := runner.Run(fw, timeout)
	if err != nil {
		return nil, err
	}
	v := res.Vectors[0]
	if v.M4 == nil || v.Instructions != instructions {
		return nil, fmt.Errorf("the instruction-mix run counted %d instructions, the plain run %d", v.Instructions, instructions)
	}
	return v.M4, nil
}

func (c *benchCmd) Run(e *env) error {
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
	cat, err := c.checkBoards()
	if err != nil {
		return err
	}
	var baseline *benchBaseline
	if c.Baseline != "" {
		if !(c.MaxIncrease >= 0) || math.IsInf(c.MaxIncrease, 1) {
			// NaN would pass every comparison, so no growth would fail.
			return usageError{fmt.Errorf("--max-increase %g: must be a number, 0 or more", c.MaxIncrease)}
		}
		if err := checkPath("--baseline", c.Baseline, false); err != nil {
			return err
		}
		var err error
		if baseline, err = loadBaseline(c.Baseline); err != nil {
			return err
		}
		baseline.compiler = compilerTag(c.CC)
	} else if c.MaxIncrease != 0 {
		return usageError{fmt.Errorf("--max-increase needs --baseline (the report to compare with)")}
	}
	var report struct {
		Results []benchResult `json:"results"`
		// The --baseline file and how many figures grew past --max-increase.
		BaselineFile string `json:"baseline_file,omitempty"`
		Regressions  int    `json:"regressions,omitempty"`
	}
	c.Models = uniquePaths(c.Models)
	boardList := boardNames(c.Board)
	if c.Cycles {
		for _, name := range boardList {
			// A Cortex-M4 board without an emulator runs on its QEMU twin,
			// which gives the estimate (nucleo-l4r5zi was warned it would get
			// none, then got one: user-journey finding).
			if b, err := cat.Get(name); err == nil && boards.CoreOf(b.CPU) != "cortex-m4" {
				e.warn(fmt.Sprintf("--cycles: the cycle estimate is for Cortex-M4 boards; %s (%s) gets none", b.Name, cmp.Or(b.CPU, "native")))
			}
		}
	}
	total, k := len(c.Models)*len(boardList), 0
	var firstErr, firstFail error // the first failure, described and as it came
	// failCase records a case that could not be measured (one case that
	// cannot build does not cost the others; with --json it is still in the
	// one JSON object), or returns err to stop with when it is the only
	// case of a text report.
	failCase := func(model, board, target string, err error) error {
		if total == 1 && !c.JSON {
			return err
		}
		if firstErr == nil {
			where, msg := board, oneLine(err.Error())
			if !strings.Contains(msg, model) {
				where += ", " + model
			}
			firstErr = fmt.Errorf("the first on %s: %s", where, msg)
			firstFail = err
		}
		report.Results = append(report.Results, benchResult{Model: model, Board: board, Target: target, Instructions: -1, ArenaBytes: -1, FlashBytes: -1, RAMBytes: -1, StackBytes: -1, Error: oneLine(err.Error())})
		return nil
	}
	for _, model := range c.Models {
		for _, board := range boardList {
			flags := c.compileFlags
			flags.Board = strings.TrimSpace(board)
			if k++; total > 1 {
				e.progress(fmt.Sprintf("measuring %s on %s (%d of %d)", filepath.Base(model), flags.Board, k, total))
			}
			opt, _, err := flags.options(e, &modelFlags{Model: model, Shape: c.Shape})
			if err != nil {
				return err
			}
			opt.Compiler = c.CC
			// A case of its own, as test has it: the other boards are
			// still measured (review).
			if err := hostBuilds(opt.Target, opt.Board); err != nil {
				if err := failCase(model, flags.Board, opt.Target, err); err != nil {
					return err
				}
				continue
			}
			s, err := compileModel(model, opt)
			if err != nil {
				if err := failCase(model, flags.Board, "", err); err != nil {
					return err
				}
				continue
			}
			run, err := emulatedTwin(e, s, cat)
			if err != nil {
				if err := failCase(model, flags.Board, s.Report.Target, err); err != nil {
					return err
				}
				continue
			}
			dir, done, err := c.caseDir(c.caseName(model, flags.Board, total))
			if err != nil {
				return err
			}
			vecs := pipeline.RandomInputs(s.Graph, 1, 3)
			x, err := run.Execute(vecs, dir, c.Timeout)
			if err == nil && !x.AllMatch() {
				// The figures of a build that does not compute the model
				// are no benchmark, and no baseline (user-journey finding:
				// a miscompiled build exited 0 and passed --baseline).
				err = fmt.Errorf("outputs differ from the reference interpreter (%s): its figures are not reported", diffText(x.MaxAbsDiff, vecs))
			}
			var est *runner.M4Estimate
			if err == nil && c.Cycles && boards.CoreOf(x.Firmware.Board.CPU) == "cortex-m4" {
				est, err = m4Estimate(x.Firmware, x.Instructions(), c.Timeout)
			}
			var layers []pipeline.LayerCount
			if err == nil && c.Layers {
				var lx *pipeline.Execution
				if lx, err = run.ExecuteLayers(pipeline.RandomInputs(s.Graph, 1, 3), filepath.Join(dir, "layers"), c.Timeout); err == nil {
					layers = lx.Layers
				}
			}
			done()
			if err != nil {
				if err := failCase(model, flags.Board, s.Report.Target, fmt.Errorf("%s on %s: %w", model, flags.Board, err)); err != nil {
					return err
				}
				continue
			}
			r := benchResult{Model: model, ModelSHA256: fileSHA256(model), Board: flags.Board, Target: s.Report.Target, Instructions: x.Instructions(),
				MACs: s.MACs, ArenaBytes: s.Report.ArenaBytes, FlashBytes: x.Firmware.FlashBytes(),
				RAMBytes: x.Firmware.RAMBytes(), StackBytes: measuredStack(x.StackBytes()), MatchReference: x.AllMatch(), FlashBudget: opt.FlashBudget, RAMBudget: opt.RAMBudget,
				Tuning: opt.Tuning, TunedKernels: s.Tuned, TunedDefaults: s.TunedDefaults, Compiler: compilerTag(c.CC)}
			if run != s {
				r.MeasuredOn = run.Opt.Board.Name
			}
			// Little room left on the board's stack for the application's
			// own calls (an overflow is an error; this is the warning before).
			if have := int64(run.Opt.Board.StackBytes); have > 0 && r.StackBytes*10 > have*9 {
				e.warn(fmt.Sprintf("%s on %s: the inference took %s B of the board's %s B stack (stack_bytes): under 10%% left for the application's own calls",
					filepath.Base(model), flags.Board, comma(r.StackBytes), comma(have)))
			}
			if r.Instructions > 0 {
				r.MACsPerInstr = float64(r.MACs) / float64(r.Instructions)
			}
			if ab, err := cat.Get(cmp.Or(r.MeasuredOn, r.Board)); !s.Module.Float && err == nil && ab.CPU == run.Opt.Board.CPU {
				// TFLite Micro's figures are for its own int8 files, on
				// the QEMU board's own core (not a twin running another
				// core's code there, as rp2040's M0+ code on the M3).
				r.Anchor = anchorFor(r.ModelSHA256, ab.Name)
			}
			if est != nil {
				r.M4CyclesEstimate = est.Cycles
				for _, cc := range est.Classes {
					r.M4Classes = append(r.M4Classes, m4ClassEntry{Class: cc.Class, Instructions: cc.Instructions, Cycles: cc.Cycles})
				}
			}
			var sum int64
			for _, l := range layers {
				r.Layers = append(r.Layers, layerEntry{Kernel: l.Kernel, Op: l.Op, Node: l.Node, MACs: l.MACs, Instructions: l.Instructions})
				sum += l.Instructions
			}
			if len(layers) > 0 && r.Instructions >= 0 {
				r.EntryInstructions = r.Instructions - sum
			}
			report.Results = append(report.Results, r)
		}
	}
	failed := 0
	for _, r := range report.Results {
		if r.Error != "" {
			failed++
		}
	}
	e.progress("")
	var regressions []regression
	var noMatch error
	if baseline != nil {
		report.BaselineFile = c.Baseline
		for i := range report.Results {
			if report.Results[i].Error == "" {
				regressions = append(regressions, baseline.compare(&report.Results[i], c.MaxIncrease)...)
			} else {
				baseline.markErrored(report.Results[i].Model, report.Results[i].Board)
			}
		}
		report.Regressions = len(regressions)
		if gone := baseline.unmeasured(); len(gone) > 0 && !baseline.matchedAny() {
			// Nothing to hold the run to: a baseline of another board or other models
			// would otherwise pass every run.
			var there []string // this run's cases the baseline holds as errors
			for _, r := range report.Results {
				if r.BaselineError != "" {
					there = append(there, fmt.Sprintf("%s on %s (%s)", displayPath(r.Model), r.Board, r.BaselineError))
				}
			}
			if len(there) > 0 {
				noMatch = fmt.Errorf("--baseline %s: no case of this run is measured in it: it holds %s as an error, nothing to compare with (it also holds %s)", c.Baseline, strings.Join(there, ", "), strings.Join(gone, ", "))
			} else {
				noMatch = fmt.Errorf("--baseline %s: no case of this run is in it (it holds %s)%s", c.Baseline, strings.Join(gone, ", "), baseline.compilerNote())
			}
		} else if len(gone) > 0 {
			e.warn(fmt.Sprintf("--baseline %s: not in this run: %s", c.Baseline, strings.Join(gone, ", ")))
		}
	}
	var failure error
	switch {
	case failed == 1 && len(report.Results) == 1:
		failure = firstFail
	case failed > 0:
		// Which, and why, on stderr too (robustness journey: the line
		// named neither; test's does).
		failure = fmt.Errorf("%d of %d benchmarks failed (%v)", failed, len(report.Results), firstErr)
	case noMatch != nil:
		failure = noMatch
	case len(regressions) == 1:
		failure = fmt.Errorf("against --baseline %s: %s", c.Baseline, regressions[0])
	case len(regressions) > 1 && c.JSON:
		failure = fmt.Errorf("%d figures grew against --baseline %s (the JSON's results hold each one's baseline)", len(regressions), c.Baseline)
	case len(regressions) > 1:
		failure = fmt.Errorf("%d figures grew against --baseline %s (the REGRESSION lines above)", len(regressions), c.Baseline)
	}
	if c.JSON {
		if err := e.printJSON(report); err != nil {
			return err
		}
		return failure
	}
	cyclesHead := ""
	if c.Cycles {
		cyclesHead = fmt.Sprintf(" %16s", "M4 cycles (est.)")
	}
	mw, bw := 26, 12 // column widths: the longest model and board names
	var paths []string
	for _, r := range report.Results {
		paths = append(paths, r.Model)
	}
	names := shortNames(paths)
	for _, r := range report.Results {
		mw, bw = max(mw, len(names[r.Model])), max(bw, len(r.Board))
	}
	// With --baseline the anchor column is padded and the change follows it.
	aw, baseHead := 0, ""
	if baseline != nil {
		aw, baseHead = 30, "  vs baseline"
	}
	tw := 8 // the target column: dsp/clang and generic/clang are wider
	for _, r := range report.Results {
		tw = max(tw, len(r.Target)+len(r.Compiler)+1)
	}
	fmt.Fprintf(e.stdout, "%-*s %-*s %-*s %13s%s %11s %9s %9s %9s %9s %9s  %-*s%s\n", mw, "model", bw, "board", tw, "target", "instructions", cyclesHead, "MACs", "MACs/ins", "arena B", "stack B", "flash B", "RAM B", aw, "TFLM+CMSIS-NN", baseHead)
	for _, r := range report.Results {
		anchor := "-"
		if r.Anchor > 0 {
			anchor = fmt.Sprintf("%s (mcugen %.2fx)", comma(r.Anchor), float64(r.Instructions)/float64(r.Anchor))
		}
		cycles := ""
		if c.Cycles {
			cycles = fmt.Sprintf(" %16s", "-")
			if r.M4CyclesEstimate > 0 {
				cycles = fmt.Sprintf(" %16s", "~"+comma(r.M4CyclesEstimate))
			}
		}
		if r.Error != "" {
			fmt.Fprintf(e.stdout, "%-*s %-*s ERROR: %s\n", mw, names[r.Model], bw, r.Board, r.Error)
			continue
		}
		rate := "-" // no instruction count on this board
		if r.Instructions > 0 {
			rate = fmt.Sprintf("%.3f", r.MACsPerInstr)
		}
		change := ""
		if baseline != nil {
			change = "  " + r.change()
		}
		stack := "-" // not measured on this platform
		if r.StackBytes > 0 {
			stack = comma(r.StackBytes)
		}
		target := r.Target
		if r.Compiler != "" {
			target += "/" + r.Compiler // dsp/clang
		}
		fmt.Fprintf(e.stdout, "%-*s %-*s %-*s %13s%s %11s %9s %9s %9s %9s %9s  %-*s%s\n", mw, names[r.Model], bw, r.Board, tw, target,
			countString(r.Instructions), cycles, comma(r.MACs), rate, comma(int64(r.ArenaBytes)), stack, comma(int64(r.FlashBytes)), comma(int64(r.RAMBytes)), aw, anchor, change)
	}
	// One line per regression on stdout, however many there are, so a log
	// filter on either stream sees them.
	for _, g := range regressions {
		fmt.Fprintf(e.stdout, "REGRESSION %s\n", g)
	}
	printTuned(e, report.Results, names, func(r benchResult) (string, string, string, int, int) {
		return r.Model, r.Board, r.Tuning, r.TunedKernels, r.TunedDefaults
	})
	for _, r := range report.Results {
		if len(r.Layers) > 0 {
			printLayers(e, r)
		}
	}
	if c.Cycles {
		fmt.Fprintf(e.stdout, "M4 cycles (est.) is an estimate, not a measurement: the exact instruction mix weighted by the Cortex-M4 TRM's timings (zero wait states, branch refill P=%d, divide %d cycles); Cortex-M4 boards only.\n", runner.CortexM4.P, runner.CortexM4.Div)
	}
	return failure
}

// anchors: TFLite Micro + CMSIS-NN instructions per inference in the same
// QEMU, from ../shared/anchors.md, keyed by the SHA-256 of the MLPerf Tiny
// int8 file TFLite Micro ran: the same network quantized otherwise (a float
// model through --calib, a QDQ file with --int8-io) is another program with
// the same MACs, and had TFLite Micro's figure beside it (review finding).
var anchors = map[string]map[string]int64{
	"aeea436800704fce17b17292e4412630ad856e9d777c044c64ef748a880bd0ae": {"mps2-an386": 7698730, "mps2-an385": 10533584, "mps2-an500": 7644525, "mps2-an505": 7681034, "mps3-an547": 1814598},    // KWS
	"597a384c8c2c8a1276f04702f25013b7838f2f814f1ca7c174d295b73e3d6b7b": {"mps2-an386": 24101517, "mps2-an385": 31958654, "mps2-an500": 24025132, "mps2-an505": 24046355, "mps3-an547": 6557925}, // VWW
	"3c002613d1b2475eb51dd78dfb85a546c8ae658dee71cf6ade43b022fe205415": {"mps2-an386": 29864993, "mps2-an385": 41848694, "mps2-an500": 30027897, "mps2-an505": 29964106, "mps3-an547": 4913079}, // IC
	"87cf24194ef93d1d9b11a591d805526b98008e351655d29883c825c9c106ba24": {"mps2-an386": 582895, "mps2-an385": 955921, "mps2-an500": 583181, "mps2-an505": 583377, "mps3-an547": 149926},          // AD
}

func anchorFor(sha, board string) int64 { return anchors[sha][board] }

// printLayers prints one model's per-layer table: instructions, share of the
// inference, MACs and MACs per instruction.
func printLayers(e *env, r benchResult) {
	fmt.Fprintf(e.stdout, "\n%s on %s (%s), per layer:\n", filepath.Base(r.Model), r.Board, r.Target)
	fmt.Fprintf(e.stdout, "%4s  %-32s %13s %6s %11s %8s  %s\n", "#", "kernel", "instructions", "share", "MACs", "MACs/ins", "node")
	share := func(n int64) string {
		if r.Instructions <= 0 || n < 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(r.Instructions))
	}
	for i, l := range r.Layers {
		rate := "-"
		if l.MACs > 0 && l.Instructions > 0 {
			rate = fmt.Sprintf("%.3f", float64(l.MACs)/float64(l.Instructions))
		}
		macs := "-"
		if l.MACs > 0 {
			macs = comma(l.MACs)
		}
		node := l.Node
		if len(node) > 60 {
			node = node[:57] + "..."
		}
		fmt.Fprintf(e.stdout, "%4d  %-32s %13s %6s %11s %8s  %s\n", i, l.Kernel, countString(l.Instructions), share(l.Instructions), macs, rate, node)
	}
	// The rest can come out below zero: the hook's cost, timed once by the
	// harness and taken off every layer, varies a little with the code
	// around it. The table shows 0 then, and says by how much the layers
	// over-count (--json gives the raw difference).
	rest, note := "n/a", ""
	if r.Instructions >= 0 {
		rest = comma(max(r.EntryInstructions, 0))
		if r.EntryInstructions < 0 {
			note = fmt.Sprintf("  (the layers add up to %s more than the whole run: the hook's cost, taken off each layer, varies by a few instructions)", comma(-r.EntryInstructions))
		}
	}
	fmt.Fprintf(e.stdout, "%4s  %-32s %13s%s\n", "", "rest (entry function, hooks)", rest, note)
}

// printTuned says, under a table of bench or test results, which cases took
// knobs from --tuning records and how many layers did (user-journey
// finding: only compile said so, and bench's JSON), each model by its name
// in the table.
func printTuned[R any](e *env, results []R, names map[string]string, f func(R) (model, board, file string, n, defaults int)) {
	for _, r := range results {
		if model, board, file, n, defaults := f(r); n > 0 {
			fmt.Fprintf(e.stdout, "tuning: %s on %s: %d layer(s) take their knobs from %s%s\n", cmp.Or(names[model], filepath.Base(model)), board, n, file, tunedDefaults(defaults))
		}
	}
}

// measuredStack is a run's stack figure for the reports: the bytes, or -1
// where the platform measures none (the host; a figure of 0 is none too).
func measuredStack(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}
