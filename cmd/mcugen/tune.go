package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
	"github.com/mcugen/mcugen/tune/measure"
)

type tuneCmd struct {
	modelFlags
	compileFlags
	Timeout time.Duration `help:"Kill one measurement's firmware after this long." default:"60s"`
	Trials  int           `help:"Measurements per kernel (spaces no larger are searched exhaustively)." default:"16"`
	Jobs    int           `help:"Parallel measurements (default, or 0: the number of CPUs)."`
	Output  string        `short:"o" aliases:"out" help:"Tuning records file (tuning.json in the working directory by default): read first (known kernels are skipped), written as each kernel finishes." default:"tuning.json" type:"outfile" placeholder:"FILE"`
	Resume  bool          `help:"Continue an interrupted run from its journal (FILE.journal) instead of starting its kernels over."`
	Measure string        `help:"Measure one candidate file (as --bazel writes them) and write its result to --result." type:"path" placeholder:"CANDIDATE"`
	Result  string        `help:"Where --measure writes its result JSON." type:"outfile" placeholder:"FILE"`
	Bazel   string        `help:"Write the candidates as Bazel test targets (BUILD.bazel, one test per measurement) into DIR instead of measuring." type:"path" placeholder:"DIR"`
	Merge   string        `help:"Merge the result files found under DIR (from --bazel tests) into the records file." type:"path" placeholder:"DIR"`
	CC      string        `name:"cc" help:"C compiler the candidates are built with: gcc (the board's) or clang. The records are that compiler's: compile, run, test and bench apply them with the same --cc." enum:"gcc,clang" default:"gcc"`
	JSON    bool          `name:"json" help:"Print one JSON object."`
}

func (c *tuneCmd) Run(e *env) error {
	if c.Trials <= 0 {
		return usageError{fmt.Errorf("--trials %d: want a positive number of measurements per kernel (default %d)", c.Trials, measure.DefaultTrials)}
	}
	if c.Jobs < 0 {
		return usageError{fmt.Errorf("--jobs %d: want a positive number of parallel measurements (0 or none: the number of CPUs)", c.Jobs)}
	}
	if n := runtime.NumCPU(); c.Jobs > 4*n {
		// 1,000 ran 13 QEMUs on 2 cores at 15 s a measurement (tune
		// review): said, not refused (the counts stay exact).
		e.warn(fmt.Sprintf("--jobs %d: this machine has %d CPUs; more measurements at once than that make each slower and none sooner", c.Jobs, n))
	}
	// One mode a run: --merge beside --bazel wrote the targets and merged
	// nothing, exit 0 (user-journey finding).
	var modes []string
	for _, m := range []struct{ flag, v string }{{"--measure", c.Measure}, {"--bazel", c.Bazel}, {"--merge", c.Merge}} {
		if m.v != "" {
			modes = append(modes, m.flag)
		}
	}
	if len(modes) > 1 {
		return usageError{fmt.Errorf("%s: one of them a run (measure one candidate, write the Bazel targets, or merge their results)", strings.Join(modes, " and "))}
	}
	if c.Resume && len(modes) > 0 {
		return usageError{fmt.Errorf("--resume and %s: --resume continues a run that measures (tune without %s)", modes[0], modes[0])}
	}
	if err := checkPath("--measure", c.Measure, false); err != nil {
		return err
	}
	if err := checkPath("--merge", c.Merge, true); err != nil {
		return err
	}
	if c.Result != "" && c.Measure == "" {
		return usageError{fmt.Errorf("--result %s: it is where --measure writes its result; give --measure CANDIDATE too", c.Result)}
	}
	if c.Timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %v: want a positive duration (default 60s)", c.Timeout)}
	}
	if c.Tuning != "" {
		// It was taken and ignored (tuning journey finding).
		return usageError{fmt.Errorf("--tuning %s: tune reads the records it starts from in -o FILE, and adds to them; --tuning applies records to compile, run, test and bench", c.Tuning)}
	}
	opt, cat, err := c.compileFlags.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	// Check the files to write before the measurements start; their
	// directories are created as compile -o creates its output's.
	var readOnly error // the records file cannot be written
	switch {
	case c.Measure != "":
		if c.Result != "" {
			// As -o: the model, the candidate or a file that is not a
			// result was replaced (review finding: --result model.tflite
			// overwrote the model, exit 0).
			if err := checkReplace("--result", c.Result, "a measurement result (JSON)", []string{c.Model, c.Measure}, looksJSON); err != nil {
				return err
			}
			// Any JSON passed that check: a records file or a package.json
			// named as the result was replaced, exit 0 (tune review).
			if !isResultFile(c.Result) {
				return fmt.Errorf("--result %s: exists and is not a measurement result (a tune --measure output); mcugen replaces only such a file: name another file, or remove it yourself", c.Result)
			}
		}
	case c.Bazel != "":
		if err := checkDirFlag("--bazel", c.Bazel); err != nil {
			return err
		}
	default:
		if st, err := os.Stat(c.Output); err == nil && st.IsDir() {
			return fmt.Errorf("-o %s: is a directory (want the tuning records file)", c.Output)
		} else if err == nil && !st.Mode().IsRegular() {
			// The records are read, rewritten in place and locked beside
			// (review finding: -o /dev/null left /dev/null.lock behind).
			return fmt.Errorf("-o %s: is not a regular file (a device or a pipe): tune reads its records back and rewrites them; name a file", c.Output)
		} else if err == nil && hardLinks(st) > 1 {
			// Two names took two locks, and the rename that writes the
			// records parted them: two runs each kept half (tune review).
			return fmt.Errorf("-o %s: the file has %d hard links; tune writes its records to a new file renamed over this name, which would part them: name one file (a symbolic link is followed)", c.Output, hardLinks(st))
		}
		if c.Output == "-" {
			// It wrote a file named "-" (tune review).
			return usageError{fmt.Errorf("-o -: want the tuning records file's name (tune reads its records back and rewrites them: not standard output)")}
		}
		if err := checkReplace("-o", c.Output, "a tuning records file", []string{c.Model}, looksJSON); errors.Is(err, errCannotWrite) {
			// With every record there, nothing is written (measure.Run
			// fails with this where it would write).
			readOnly = err
		} else if err != nil {
			return err
		}
		// One records file reached by two paths (a link to it, a linked
		// directory) takes one lock and one journal: two runs through
		// different paths took no turns, and the last to write lost the
		// other's records (tuning journey finding).
		p, err := filepath.EvalSymlinks(c.Output)
		if err != nil {
			// Not there yet: where its links lead.
			if p, err = linkEnd(c.Output); err != nil {
				return err
			}
			if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
				p = filepath.Join(dir, filepath.Base(p))
			}
		}
		c.Output = p
	}
	board := opt.Board
	// Refuse a board tune cannot measure on before anything is built.
	var core string
	if opt.Board, core, err = measure.MeasureBoardOn(board, cat); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if opt.Board != board {
		e.warn(twinNote("measuring", board, opt.Board, core))
	}
	if opt.Target == "" {
		opt.Target = pipeline.TargetFor(board)
	}
	opt.Tuning = ""
	opt.Compiler = c.CC
	// The model as the board builds it: its fit pass (the board's flash,
	// not a QEMU stand-in's 4 MiB) decides which kernels keep int8
	// weights, so they are tuned that way (review finding: a 256 KiB
	// board without an emulator was tuned as if its flash were 4 MiB).
	fitOpt := opt
	fitOpt.Board = board
	s, err := compileModel(c.Model, fitOpt)
	if err != nil {
		return err
	}
	cfg := measure.Config{ReadOnly: readOnly, Opt: opt, FitBoard: board, Core: tune.ToolCore(board.TuningCore(), c.CC), Trials: c.Trials, Jobs: c.Jobs, Out: c.Output, Resume: c.Resume,
		Timeout: c.Timeout, Note: e.warn, Version: versionLine()}
	switch {
	case c.Measure != "":
		if c.Result == "" {
			return usageError{fmt.Errorf("--measure needs --result FILE")}
		}
		if err := makeParent("--result", c.Result); err != nil {
			return err
		}
		done, err := workIn(&cfg, "mcugen-measure-")
		if err != nil {
			return err
		}
		defer done()
		return measure.MeasureCandidateFile(s, cfg, c.Measure, c.Result)
	case c.Bazel != "":
		n, err := measure.WriteBazel(s, cfg, c.Model, c.Bazel, c.bazelInputs(board.Name))
		if errors.Is(err, measure.ErrNoKernels) {
			// It said every kernel had its record in a file never written
			// (review finding).
			if c.JSON {
				return e.printJSON(struct {
					Targets int `json:"targets"`
				}{0})
			}
			fmt.Fprintf(e.stdout, "%s: no kernel with schedule knobs on %s (target %s): nothing to tune, %s\n", c.Model, board.Name, opt.Target, bazelLeft(c.Bazel, "the model has no kernel with schedule knobs"))
			return nil
		}
		if errors.Is(err, measure.ErrAllRecorded) {
			if c.JSON {
				return e.printJSON(struct {
					Targets int `json:"targets"`
				}{0})
			}
			fmt.Fprintf(e.stdout, "every kernel of %s has its record in %s: nothing to measure, %s\n", c.Model, c.Output, bazelLeft(c.Bazel, "every kernel has its record"))
			return nil
		}
		if err != nil {
			return err
		}
		if c.JSON {
			return e.printJSON(struct {
				Targets int    `json:"targets"`
				Build   string `json:"build_file"`
			}{n, filepath.Join(c.Bazel, "BUILD.bazel")})
		}
		fmt.Fprintf(e.stdout, "wrote %d measurement targets to %s/BUILD.bazel\n", n, c.Bazel)
		if n > 0 {
			fmt.Fprintf(e.stdout, "run them there (bazel test //... --nozip_undeclared_test_outputs), then here: the same tune command with --merge %s instead of --bazel\n",
				filepath.Join(c.Bazel, "bazel-testlogs"))
		}
		return nil
	case c.Merge != "":
		if err := makeParent("-o", c.Output); err != nil {
			return err
		}
		n, err := measure.Merge(s, cfg, c.Merge)
		if err != nil {
			return err
		}
		if c.JSON {
			return e.printJSON(struct {
				Records int    `json:"records"`
				File    string `json:"records_file"`
			}{n, c.Output})
		}
		fmt.Fprintf(e.stdout, "merged results into %d record(s) in %s\n", n, c.Output)
		return nil
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && e.stderr == os.Stderr {
		cfg.Progress = e.stderr
	} else if !c.JSON {
		// A log, not a terminal: a line per kernel, so CI sees the run
		// is alive (IC's default run is minutes of silence otherwise).
		cfg.Lines = e.stderr
	}
	if err := makeParent("-o", c.Output); err != nil {
		return err
	}
	done, err := workIn(&cfg, "mcugen-tune-")
	if err != nil {
		return err
	}
	defer done()
	// Said when the signal comes: the journal is gone once every kernel is
	// recorded (a signal in the final whole-model check named a journal
	// that no longer existed: user-journey finding).
	var measured, locked atomic.Bool
	cfg.Measured = func() { measured.Store(true) }
	cfg.Locked = func() { locked.Store(true) }
	hint := func() string {
		if !locked.Load() {
			// It named the journal of the run it waited for, which goes
			// when that run finishes (tune review).
			return fmt.Sprintf("stopped while waiting for another mcugen tune writing %s: this run measured nothing", c.Output)
		}
		if measured.Load() {
			return fmt.Sprintf("every kernel's record is in %s; the same command finishes the whole-model checks (the journal %s says which kernels) and measures nothing it holds", c.Output, measure.JournalPath(c.Output))
		}
		return fmt.Sprintf("the measurements so far are in %s: the same command with --resume continues from them", measure.JournalPath(c.Output))
	}
	interruptHint.Store(&hint)
	defer interruptHint.Store(nil)
	rep, err := measure.Run(s, cfg)
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	rep.Compiler = compilerTag(c.CC)
	if rep.Kernels == nil {
		rep.Kernels = []measure.KernelResult{} // "best": [], not null (review finding)
	}
	if c.JSON {
		return e.printJSON(rep)
	}
	if len(rep.Kernels) == 0 {
		// An empty table and "every kernel came from the records" named a
		// file that was never written (tuning journey finding).
		fmt.Fprintf(e.stdout, "%s: no kernel with schedule knobs on %s (target %s): nothing to tune, no records written\n", c.Model, board.Name, opt.Target)
		return nil
	}
	// The kernel column as wide as the longest signature: a fixed 60
	// pushed the rows of MobileNetV2's longer ones out of line (review
	// finding).
	kw := len("kernel")
	for _, k := range rep.Kernels {
		kw = max(kw, len(k.Kernel))
	}
	fmt.Fprintf(e.stdout, "%-*s %5s %6s %12s %12s %7s  %s\n", kw, "kernel", "nodes", "trials", "default", "best", "gain", "knobs")
	var def, best int64
	for _, k := range rep.Kernels {
		tag := ""
		switch {
		case k.Reverted == "flash":
			tag = " (its defaults: the tuned knobs' weights did not fit the flash)"
		case k.Reverted != "":
			tag = " (its defaults: with the tuned knobs the whole model was slower)"
		case k.Skipped:
			tag = " (from records)"
		}
		if k.Default <= 0 {
			// No count for the defaults (a partial --merge batch): no gain to give.
			fmt.Fprintf(e.stdout, "%-*s %5d %6d %12s %12d %7s  %s%s\n", kw, k.Kernel, k.Nodes, k.Trials, "-", k.Instructions, "-", k.Knobs, tag)
		} else {
			// A search that found nothing faster than the defaults: the
			// record's knobs are that mcugen's defaults, and compile
			// applies this version's (tune.Overrides), so the table says
			// so rather than listing values that will not be pinned.
			knobs := fmt.Sprint(k.Knobs)
			if k.Instructions >= k.Default {
				knobs = "defaults"
			}
			fmt.Fprintf(e.stdout, "%-*s %5d %6d %12d %12d %6.1f%%  %s%s\n", kw, k.Kernel, k.Nodes, k.Trials, k.Default, k.Instructions,
				pct(k.Default, k.Instructions), knobs, tag)
		}
		// A kernel without a default count adds its best to both sums.
		d := k.Default
		if d <= 0 {
			d = k.Instructions
		}
		def += d * int64(k.Nodes)
		best += k.Instructions * int64(k.Nodes)
	}
	untuned, tuned := rep.ModelUntuned, rep.ModelTuned
	what, scope := "the whole model", "the whole model"
	if untuned <= 0 {
		// Nothing new was measured, so no whole-model build ran: the sum
		// over the kernels is another figure than a first run's.
		untuned, tuned = def, best
		what, scope = "the kernels (each times its nodes; no whole-model run, nothing new was measured)", "the kernels"
	}
	if rep.Compiler != "" {
		what += ", built with " + rep.Compiler
	}
	if tuned > untuned {
		// Only records from elsewhere (edited, another version) can: a
		// run's own are never slower than the defaults (tuning journey
		// finding: it printed "-14.0% fewer" and exited 0 in silence).
		fmt.Fprintf(e.stdout, "%s: %d instructions untuned, %d tuned (%.1f%% more)\n", what, untuned, tuned, -pct(untuned, tuned))
		e.warn(fmt.Sprintf("%s: its records make %s slower than the defaults (%d against %d instructions): records edited by hand or from another mcugen? remove them to tune again", c.Output, scope, tuned, untuned))
	} else {
		fmt.Fprintf(e.stdout, "%s: %d instructions untuned, %d tuned (%.1f%% fewer)\n", what, untuned, tuned, pct(untuned, tuned))
	}
	judged := costModelLine(rep)
	resumed := ""
	if rep.Resumed > 0 {
		resumed = fmt.Sprintf("; %d taken from the journal", rep.Resumed)
	}
	if rep.Copies > 0 {
		// Knobs that left a kernel's code as it was: counted, not run.
		resumed += fmt.Sprintf("; %d candidate(s) had the code of one measured (not run)", rep.Copies)
	}
	fmt.Fprintf(e.stdout, "%d measurements (%d failed) in %.1f s, %.2f s each%s; %d kernel(s) known from %s; %s\n",
		rep.Trials, rep.Failed, rep.Seconds, rep.MeasureSeconds, resumed, rep.Skipped, c.Output, judged)
	return nil
}

// costModelLine says how the cost model did, or why it judged nothing.
func costModelLine(rep *measure.Report) string {
	if rep.ModelJudged > 0 {
		return fmt.Sprintf("cost model's top pick was the best in %d of %d kernels", rep.ModelHits, rep.ModelJudged)
	}
	searched, annealed := 0, 0
	for _, k := range rep.Kernels {
		if !k.Skipped {
			searched++
			if k.Search == "anneal" {
				annealed++
			}
		}
	}
	switch {
	case searched == 0:
		return "every kernel came from the records: nothing searched"
	case annealed > 0:
		return fmt.Sprintf("the cost model ranked no candidate: %d search(es) ended within their first trials (more --trials lets it)", annealed)
	}
	return "the cost model judged no kernel (each search space was small enough to measure whole)"
}

func pct(def, best int64) float64 {
	if def <= 0 {
		return 0
	}
	return 100 * float64(def-best) / float64(def)
}

// workIn gives cfg's builds a directory that an interrupt removes
// (tempWorkDir); done removes it.
func workIn(cfg *measure.Config, prefix string) (done func(), err error) {
	work, done, err := tempWorkDir(prefix)
	if err != nil {
		return nil, err
	}
	cfg.WorkDir = work
	return done, nil
}

// bazelInputs are the flags (and the files they name) that the generated
// Bazel targets pass to `tune --measure` so that it builds what this
// command built: the board as named here, and every flag that changes the
// build. A board file and a calibration directory are copied next to the
// BUILD file and named by their copies (a remote executor has only its
// inputs).
func (c *tuneCmd) bazelInputs(board string) measure.BazelInputs {
	in := measure.BazelInputs{Board: board, Files: map[string]string{}}
	add := func(flag, v string) { in.Flags = append(in.Flags, flag, v) }
	for _, sh := range c.Shape {
		add("--shape", sh)
	}
	if c.Boards != "" {
		// A Bazel label takes letters, digits and ._- safely: a space
		// or an @ in the file's name would make the BUILD file invalid.
		name := "boards-" + strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-", r)) {
				return r
			}
			return '_'
		}, filepath.Base(c.Boards))
		in.Files[name] = c.Boards
		add("--boards", name)
	}
	if c.Calib != "" {
		in.Files["calib"] = c.Calib
		add("--calib", "calib")
	}
	if n := c.calibRandom(); n != 0 {
		add("--calib-random", fmt.Sprint(n))
	}
	if c.Quantize != "" {
		add("--quantize", c.Quantize)
	}
	if c.Method != "" {
		add("--method", c.Method)
	}
	for _, f := range c.Float {
		add("--float", f)
	}
	if c.Prefix != "" {
		add("--prefix", c.Prefix)
	}
	if c.Arena != "static" {
		add("--arena", c.Arena)
	}
	if c.IO != "separate" {
		add("--io", c.IO)
	}
	if c.Int8IO {
		in.Flags = append(in.Flags, "--int8-io")
	}
	if c.WeightsSection != "" {
		add("--weights-section", c.WeightsSection)
	}
	if c.FlashBudget != 0 {
		add("--flash-budget", fmt.Sprint(int64(c.FlashBudget)))
	}
	if c.RAMBudget != 0 {
		add("--ram-budget", fmt.Sprint(int64(c.RAMBudget)))
	}
	if c.CC != runner.CompilerGCC {
		add("--cc", c.CC)
	}
	return in
}

// bazelLeft says what became of a --bazel directory when there is nothing
// to measure: an earlier batch there is emptied (measure.ClearBazel), so
// a bazel test step after this one runs nothing stale.
func bazelLeft(dir, why string) string {
	cleared, err := measure.ClearBazel(dir, why)
	switch {
	case err != nil:
		return fmt.Sprintf("%s left as it was (emptying its earlier batch: %v)", dir, err)
	case cleared:
		return fmt.Sprintf("%s's earlier batch removed (its BUILD.bazel has no targets: skip bazel test, which finds none)", dir)
	}
	return dir + " left as it was"
}

// isResultFile reports whether the file at path is absent, empty or a
// measurement result that tune --measure wrote (a JSON object naming a
// kernel, a board and a count).
func isResultFile(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || throughDevice(path) {
		return true
	}
	data, err := fileio.ReadRegular(path, 1<<20)
	if err != nil {
		return false
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(data, &r) != nil {
		return false
	}
	for _, k := range []string{"kernel", "board", "instructions", "knobs"} {
		if _, ok := r[k]; !ok {
			return false
		}
	}
	_, isRecords := r["records"]
	return !isRecords
}
