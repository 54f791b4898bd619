package measure

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tune"
)

// Config says what to tune and how.
type Config struct {
	Opt pipeline.Options // compile options; Opt.Board is the board measured on
	// FitBoard is the board the records are for, when Opt.Board is a QEMU
	// stand-in for it (MeasureBoardOn): its flash, not the stand-in's,
	// decides which kernels keep int8 weights in the whole-model builds.
	FitBoard *boards.Board
	Core     string        // records' core and compiler (tune.ToolCore; default Opt.Board.TuningCore() and Opt.Compiler)
	Trials   int           // measurement budget per kernel (default DefaultTrials)
	Jobs     int           // parallel measurements (default runtime.NumCPU())
	Out      string        // records file, read first and written as kernels finish
	Resume   bool          // continue the measurements of an interrupted run
	Timeout  time.Duration // per QEMU run
	WorkDir  string        // scratch directory for the builds
	// Progress receives a one-line progress display (\r-rewritten); nil for none.
	Progress io.Writer
	// Lines receives a line as each kernel finishes (where stderr is not a
	// terminal: a CI log shows the run is alive); nil for none.
	Lines io.Writer
	// Measured, if set, is called once every kernel's measurements are
	// recorded and the journal removed (the whole-model checks follow).
	Measured func()
	// Locked, if set, is called once the records' lock is held (a run
	// interrupted before waited for another and measured nothing).
	Locked func()
	// ReadOnly, if set, is why the records file cannot be written: the
	// run goes on without its lock only if every kernel has its record
	// and no journal waits (it writes nothing), and fails with it
	// otherwise.
	ReadOnly error
	Note     func(string)
	Version  string

	stopAfter int // tests: stop after this many measurements, as if interrupted
}

var errInterrupted = errors.New("tuning interrupted")

// DefaultTrials is the per-kernel measurement budget.
const DefaultTrials = 16

// KernelResult is what tuning one kernel gave.
type KernelResult struct {
	Kernel       string     `json:"kernel"`
	Op           string     `json:"op"`
	Nodes        int        `json:"nodes"`
	Knobs        tune.Knobs `json:"knobs"`
	Instructions int64      `json:"instructions"`
	Default      int64      `json:"default_instructions"`
	Trials       int        `json:"trials"`
	Failed       int        `json:"failed"`
	Space        int        `json:"space"`
	Search       string     `json:"search"`
	Skipped      bool       `json:"skipped,omitempty"` // known from the records already
	// Reverted says why the kernel's best knobs went back to its defaults
	// after it was measured ("the whole model", "flash"); its Knobs and
	// Instructions are then the defaults' (tuning journey: the table and
	// --json showed the discarded choice).
	Reverted string `json:"reverted,omitempty"`
}

// Report is the outcome of a tuning run.
type Report struct {
	Kernels []KernelResult `json:"best"`
	// Trials counts the measurements this run made (resumed ones not included).
	Trials  int `json:"trials"`
	Resumed int `json:"resumed_trials"`
	Failed  int `json:"failed_trials"`
	// Copies counts candidates whose generated code was a measured
	// candidate's: their count is that one's, without a run.
	Copies  int `json:"copied_trials"`
	Skipped int `json:"skipped_kernels"`
	// Unmeasured counts kernels whose every candidate failed (no record).
	Unmeasured int `json:"unmeasured_kernels"`
	// ModelHits of ModelJudged kernels: the cost model's top pick was the best.
	ModelHits   int     `json:"model_hits"`
	ModelJudged int     `json:"model_judged"`
	Seconds     float64 `json:"seconds"`
	// MeasureSeconds is the mean wall time of one measurement (build + run).
	MeasureSeconds float64 `json:"seconds_per_measurement"`
	// ModelUntuned and ModelTuned are the whole model's instructions per
	// inference without and with the records (tuned is never the larger);
	// absent when the run measured nothing (every kernel from the records:
	// no whole-model run either).
	ModelUntuned int64 `json:"model_untuned_instructions,omitempty"`
	ModelTuned   int64 `json:"model_tuned_instructions,omitempty"`
	// Compiler is "clang" for a tune --cc clang run (empty: the board's gcc).
	Compiler string `json:"compiler,omitempty"`
}

type journalLine struct {
	Key          string     `json:"key"`
	Knobs        tune.Knobs `json:"knobs"`
	Instructions int64      `json:"instructions"`
	Err          string     `json:"error,omitempty"`
	// Code is the candidate's codeKey; Copy marks a candidate not run,
	// whose code was a measured one's.
	Code string `json:"code,omitempty"`
	Copy bool   `json:"copy,omitempty"`
}

// JournalPath is where the measurements of an unfinished run are kept.
func JournalPath(out string) string { return out + ".journal" }

type job struct {
	k      *Kernel
	search *tune.Search
	failed int
	done   bool
	// code maps a codeKey to the first knobs that generated it; waiting
	// holds the candidates with the code of one still being measured.
	code    map[string]tune.Knobs
	waiting map[string][]tune.Knobs
}

// recordBoard is the board a record names: the one tuned for (FitBoard),
// not the QEMU twin that measures a board without an emulator, which the
// records named instead (tuning journey finding; --measure too: review).
func (cfg Config) recordBoard() string {
	if cfg.FitBoard != nil {
		return cfg.FitBoard.Name
	}
	return cfg.Opt.Board.Name
}

// newJob is kernel k's search with a budget of trials measurements.
func newJob(k *Kernel, trials int) *job {
	return &job{k: k, search: tune.NewSearch(k.Space, k.Defaults, trials, seedOf(k.Signature)),
		code: map[string]tune.Knobs{}, waiting: map[string][]tune.Knobs{}}
}

// Run tunes every kernel of the compiled model s that the records in
// cfg.Out do not already hold, writing a record as each kernel finishes.
func Run(s *pipeline.State, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Trials <= 0 {
		cfg.Trials = DefaultTrials
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = runtime.NumCPU()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Note == nil {
		cfg.Note = func(string) {}
	}
	if cfg.Core == "" {
		cfg.Core = tune.ToolCore(cfg.Opt.Board.TuningCore(), cfg.Opt.Compiler)
	}
	if cfg.WorkDir == "" {
		d, err := os.MkdirTemp("", "mcugen-tune-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.WorkDir = d
	}
	waited := false
	unlock := func() {}
	if cfg.ReadOnly == nil {
		var err error
		if unlock, err = lockRecords(cfg.Out, func(n string) { waited = true; cfg.Note(n) }); err != nil {
			return nil, err
		}
	}
	defer unlock()
	if cfg.Locked != nil {
		cfg.Locked()
	}
	recs, notes, err := tune.Load(cfg.Out)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		cfg.Note(n)
	}
	target := s.Module.Target
	kernels, err := Kernels(s, cfg.Opt)
	if err != nil {
		return nil, err
	}
	// This run's kernels, by record key: its lines of the journal.
	known := map[string]bool{}
	for _, k := range kernels {
		known[tune.KeyFor(k.Signature, target, cfg.Core, k.Defaults)] = true
	}
	// A run that waited for another, which then stopped part-way (an
	// interrupted CI job), continues from its journal where it measured
	// this run's kernels: it was deleted as a stale one, and the other's
	// --resume found nothing (tuning journey).
	if waited && !cfg.Resume && len(journalKernels(cfg, kernels, target)) > 0 {
		cfg.Note(fmt.Sprintf("%s: the run this one waited for stopped before it finished; continuing from its measurements", JournalPath(cfg.Out)))
		cfg.Resume = true
	}
	rep := &Report{}
	var jobs []*job
	shorter := 0 // records of a search cut shorter than --trials asks
	// Records of this core tuned on a board with more stack: where a
	// record's form is over this board's, the build keeps the kernel's
	// defaults (pipeline), and so does the report (a review finding: it
	// claimed the record's gain).
	overStack := s.RecordsOverStack(recs)
	for _, k := range kernels {
		if r := recs.Get(k.Signature, target, cfg.Core, k.Defaults); r != nil && overStack[k.Signature] {
			cfg.Note(fmt.Sprintf("%s: the record for %s (tuned on %s) takes more stack than %s leaves its kernels: builds for this board keep its defaults (tune into another records file to search it for this board)",
				cfg.Out, k.Signature, recordBoardName(r), cfg.Opt.Board.Name))
			rep.Skipped++
			rep.Kernels = append(rep.Kernels, KernelResult{Kernel: k.Signature, Op: k.Op, Nodes: len(k.Nodes), Knobs: k.Defaults,
				Instructions: r.Default, Default: r.Default, Trials: r.Trials, Space: r.Space, Search: r.Search, Skipped: true})
			continue
		} else if r != nil {
			// A record whose knobs the kernel cannot take (edited by hand, or from
			// another mcugen) is searched again, not kept.
			if _, bad := tune.CheckOp(k.knobTarget(target), k.Op, k.Defaults, r.Knobs); len(bad) > 0 {
				cfg.Note(fmt.Sprintf("%s: the record for %s has %s: tuning it again", cfg.Out, k.Signature, strings.Join(bad, ", ")))
				jobs = append(jobs, newJob(k, cfg.Trials))
				continue
			}
			rep.Skipped++
			if r.Budget > 0 && r.Budget < cfg.Trials && r.Search == "anneal" {
				shorter++
			}
			rep.Kernels = append(rep.Kernels, KernelResult{Kernel: k.Signature, Op: k.Op, Nodes: len(k.Nodes), Knobs: r.Knobs,
				Instructions: r.Instructions, Default: r.Default, Trials: r.Trials, Space: r.Space, Search: r.Search, Skipped: true})
			continue
		}
		jobs = append(jobs, newJob(k, cfg.Trials))
	}
	if shorter > 0 {
		// A larger --trials searched nothing more, and said nothing
		// (tuning journey finding).
		cfg.Note(fmt.Sprintf("%s: %d kernel(s) have records of a search of fewer trials than --trials %d; they are kept as they are (remove their records to search them further)", cfg.Out, shorter, cfg.Trials))
	}
	if cfg.ReadOnly != nil {
		if _, err := os.Stat(JournalPath(cfg.Out)); len(jobs) > 0 || err == nil {
			return nil, cfg.ReadOnly
		}
	}
	if len(jobs) == 0 {
		// Every kernel has its record. A journal left beside them is a run
		// interrupted in its whole-model checks (the journal goes only after
		// them): its kernels are checked now, so no record that the fit pass
		// overrides or that makes the model slower stays.
		if pending := journalKernels(cfg, kernels, target); len(pending) > 0 {
			// Said without guessing which: a --merge that completed an
			// interrupted run's kernels leaves its journal too (the note
			// said the run stopped in its checks: a review finding).
			cfg.Note(fmt.Sprintf("%s: a run that did not finish (stopped in its whole-model checks, or completed by --merge) left its journal, and the records hold all its kernels: checking its %d kernel(s) in the whole model now", JournalPath(cfg.Out), len(pending)))
			if err := fitTuned(s, cfg, recs, pending, target, rep); err != nil {
				return nil, err
			}
			if err := keepModelNoSlower(s, cfg, recs, pending, target, rep); err != nil {
				return nil, err
			}
		}
		dropJournalOf(JournalPath(cfg.Out), known)
		rep.Seconds = time.Since(start).Seconds()
		return rep, nil
	}
	// The tools first: without them every candidate failed, two warnings
	// each, before the one line that mattered (a review finding).
	if err := runner.CheckTools(cfg.Opt.Board); err != nil {
		return nil, err
	}
	byKey := map[string]*job{}
	for _, j := range jobs {
		byKey[tune.KeyFor(j.k.Signature, target, cfg.Core, j.k.Defaults)] = j
	}
	if err := replayJournal(cfg, byKey, known, rep); err != nil {
		return nil, err
	}
	jf, err := os.OpenFile(JournalPath(cfg.Out), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tuning journal: %w", err)
	}
	defer jf.Close()
	jw := json.NewEncoder(jf)

	type result struct {
		j   *job
		m   Measurement
		key string // the candidate's codeKey ("" when it did not compile)
	}
	results := make(chan result)
	inflight := 0
	var wall time.Duration
	recorded, firstErr := 0, ""
	unmeasured := 0 // kernels whose every candidate failed
	finished := 0   // kernels of this run done, for the per-kernel lines
	finish := func(j *job) error {
		j.done = true
		finished++
		best, n, ok := j.search.Best()
		if !ok {
			unmeasured++
			cfg.Note(fmt.Sprintf("kernel %s: every candidate failed; no record", j.k.Signature))
			if cfg.Lines != nil {
				fmt.Fprintf(cfg.Lines, "tune: kernel %d of %d: %s: every candidate failed\n", finished, len(jobs), j.k.Signature)
			}
			return nil
		}
		recorded++
		core, compiler := tune.SplitToolCore(cfg.Core)
		r := &tune.Record{Kernel: j.k.Signature, Target: target, Core: core, Compiler: compiler, Board: cfg.recordBoard(), Knobs: best,
			// A --resume with a smaller --trials replays more runs than
			// its budget: the search had at least those (it wrote trials
			// 15, budget 3: tune review).
			Instructions: n, Default: j.search.Default(), Trials: j.search.Runs(), Budget: max(cfg.Trials, j.search.Runs()), Space: j.k.Space.Size(),
			Search: j.search.Kind(), Version: cfg.Version}
		recs.Put(r)
		if hit, judged := j.search.ModelHit(); judged {
			rep.ModelJudged++
			if hit {
				rep.ModelHits++
			}
		}
		rep.Kernels = append(rep.Kernels, KernelResult{Kernel: r.Kernel, Op: j.k.Op, Nodes: len(j.k.Nodes), Knobs: best, Instructions: n,
			Default: r.Default, Trials: r.Trials, Failed: j.failed, Space: r.Space, Search: r.Search})
		if cfg.Lines != nil {
			fmt.Fprintf(cfg.Lines, "tune: kernel %d of %d: %s: %s\n", finished, len(jobs), r.Kernel, gainText(n, r.Default))
		}
		return recs.Save(cfg.Out)
	}
	// copied records candidate k of j as having the code of one measured
	// (n instructions, or a failure), without running it.
	copied := func(j *job, k tune.Knobs, n int64, key string) error {
		j.search.ReportCopy(k, n, n > 0)
		rep.Copies++
		line := journalLine{Key: tune.KeyFor(j.k.Signature, target, cfg.Core, j.k.Defaults), Knobs: k, Instructions: n, Code: key, Copy: true}
		if n <= 0 {
			j.failed++
			line.Err = "the same code as a candidate that failed"
		}
		if err := jw.Encode(line); err != nil {
			return fmt.Errorf("tuning journal: %w", err)
		}
		if j.search.Done() && !j.done {
			return finish(j)
		}
		return nil
	}
	// The first kernel that can take a measurement gets it: kernels are
	// tuned in order, the next one starting while the last candidates of
	// the one before are still running.
	next := func() (*job, tune.Knobs) {
		for _, j := range jobs {
			if j.done {
				continue
			}
			if c := j.search.Next(1); len(c) > 0 {
				return j, c[0]
			}
		}
		return nil, nil
	}
	// Kernels whose search the journal already completed.
	for _, j := range jobs {
		if j.search.Done() {
			if err := finish(j); err != nil {
				return nil, err
			}
		}
	}
	for {
		for inflight < cfg.Jobs {
			j, k := next()
			if j == nil {
				break
			}
			// Compiled first: knobs that leave the code as another
			// candidate's make no firmware of their own.
			st, cerr := compileCandidate(j.k, k, cfg.Opt)
			key := ""
			if cerr == nil {
				key = codeKey(st)
				if first, ok := j.code[key]; ok {
					if n, measured := j.search.Measured[j.k.Space.Index(first)]; measured {
						if err := copied(j, k, n, key); err != nil {
							return nil, err
						}
					} else {
						j.waiting[key] = append(j.waiting[key], k)
					}
					continue
				}
				j.code[key] = k
			}
			inflight++
			go func() {
				start := time.Now()
				m := Measurement{Knobs: k, Err: cerr}
				if cerr == nil {
					m.Instructions, m.Err = runCandidate(j.k, st, cfg.Opt, cfg.WorkDir, cfg.Timeout)
				}
				m.Wall = time.Since(start)
				results <- result{j, m, key}
			}()
		}
		if inflight == 0 {
			break
		}
		r := <-results
		inflight--
		rep.Trials++
		wall += r.m.Wall
		line := journalLine{Key: tune.KeyFor(r.j.k.Signature, target, cfg.Core, r.j.k.Defaults), Knobs: r.m.Knobs, Instructions: r.m.Instructions, Code: r.key}
		if r.m.Err != nil {
			rep.Failed++
			r.j.failed++
			line.Err = oneLine(r.m.Err.Error())
			if firstErr == "" {
				firstErr = line.Err
			}
			cfg.Note(fmt.Sprintf("kernel %s knobs %s: %s", r.j.k.Signature, r.m.Knobs, line.Err))
		}
		if err := jw.Encode(line); err != nil {
			return nil, fmt.Errorf("tuning journal: %w", err)
		}
		r.j.search.Report(r.m.Knobs, r.m.Instructions, r.m.Err == nil)
		if w := r.j.waiting[r.key]; r.key != "" && len(w) > 0 {
			delete(r.j.waiting, r.key)
			n := r.m.Instructions
			if r.m.Err != nil {
				n = -1
			}
			for _, k := range w {
				if err := copied(r.j, k, n, r.key); err != nil {
					return nil, err
				}
			}
		}
		if r.j.search.Done() && !r.j.done {
			if err := finish(r.j); err != nil {
				return nil, err
			}
		}
		progress(cfg, jobs, rep, wall)
		if cfg.stopAfter > 0 && rep.Trials >= cfg.stopAfter {
			for inflight > 0 {
				<-results
				inflight--
			}
			return rep, errInterrupted
		}
	}
	for _, j := range jobs {
		if !j.done {
			if err := finish(j); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress)
	}
	jf.Close()
	if cfg.Measured != nil {
		cfg.Measured()
	}
	if recorded == 0 {
		// Nothing to write and nothing learnt: a run whose every
		// measurement failed is an error, not a success with no records.
		dropJournalOf(JournalPath(cfg.Out), known)
		return rep, allFailed(rep, firstErr, cfg.Out)
	}
	rep.Unmeasured = unmeasured
	if unmeasured > 0 {
		// Said once at the end, where a CI log's reader looks (review
		// finding: 4 of 5 KWS kernels failed on the micro:bit, each said
		// among the progress lines, and tune ended as if all was well).
		cfg.Note(fmt.Sprintf("%d of %d kernel(s) could not be measured: every candidate failed (the first error: %s); their builds keep their defaults", unmeasured, finished, firstErr))
	}
	if err := fitTuned(s, cfg, recs, jobs, target, rep); err != nil {
		return nil, err
	}
	if err := keepModelNoSlower(s, cfg, recs, jobs, target, rep); err != nil {
		return nil, err
	}
	// Only now: an interruption in the checks above leaves the journal,
	// and the next run finishes them (journalKernels).
	dropJournalOf(JournalPath(cfg.Out), known)
	rep.Seconds = time.Since(start).Seconds()
	if rep.Trials > 0 {
		rep.MeasureSeconds = wall.Seconds() / float64(rep.Trials)
	}
	return rep, nil
}

// allFailed is the error of a run in which no kernel got a record: every
// measurement failed (first names the first failure this run saw).
func allFailed(rep *Report, first, out string) error {
	n := rep.Trials + rep.Resumed
	msg := fmt.Sprintf("all %d measurement(s) failed; no records written to %s", n, out)
	if first != "" {
		msg += " (first failure: " + first + ")"
	}
	return errors.New(msg)
}

// replayJournal feeds the measurements of an interrupted run back into the
// searches (--resume), or discards this model's (keeping another run's),
// and leaves the journal holding whole lines only, for this run to append
// to.
func replayJournal(cfg Config, byKey map[string]*job, known map[string]bool, rep *Report) error {
	path := JournalPath(cfg.Out)
	lines, bad, err := readJournal(path)
	if errors.Is(err, fs.ErrNotExist) {
		if cfg.Resume {
			// --resume started over in silence (review finding).
			cfg.Note(fmt.Sprintf("--resume: %s: no journal of an interrupted run there; the kernels the records lack are measured from the start", path))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("tuning journal: %w", err)
	}
	// Lines of kernels this model does not have: another run's.
	foreign := func(l journalLine) bool { return !known[l.Key] && byKey[l.Key] == nil }
	other := 0
	for _, l := range lines {
		if foreign(l) {
			other++
		}
	}
	if other > 0 {
		// Another model's, core's or board's interrupted run into the same
		// records file: its measurements stay for its own --resume.
		cfg.Note(fmt.Sprintf("%s: %d measurement(s) of kernels this run does not tune (another model, core or board) are kept for that run's --resume (remove the journal to drop them)", path, other))
	}
	if !cfg.Resume {
		if len(lines)-other > 0 {
			cfg.Note(fmt.Sprintf("%s: an interrupted run's measurements of this model are there; starting over (--resume continues it)", path))
		}
		if err := keepJournal(path, foreign); err != nil {
			return fmt.Errorf("tuning journal: %w", err)
		}
		return nil
	}
	implausible, stale := 0, 0
	for _, l := range lines {
		j := byKey[l.Key]
		if j == nil || j.k.Space.Index(l.Knobs) < 0 {
			continue // another run's, or a kernel finished before the interruption
		}
		if _, seen := j.search.Measured[j.k.Space.Index(l.Knobs)]; seen {
			continue
		}
		// A count no kernel takes, or a measurement of code other than
		// what these knobs generate now (a journal an older mcugen left,
		// or one edited by hand), is measured again: --resume trusted
		// every line (a review finding).
		if l.Err == "" && (l.Instructions <= 0 || l.Instructions > tune.MaxCount) {
			implausible++
			continue
		}
		if st, err := compileCandidate(j.k, l.Knobs, cfg.Opt); (err == nil) != (l.Code != "") || (err == nil && codeKey(st) != l.Code) {
			stale++
			continue
		}
		if l.Copy {
			j.search.ReportCopy(l.Knobs, l.Instructions, l.Err == "")
			rep.Copies++
		} else {
			j.search.Report(l.Knobs, l.Instructions, l.Err == "")
			rep.Resumed++
		}
		if _, have := j.code[l.Code]; l.Code != "" && !have {
			j.code[l.Code] = l.Knobs
		}
		if l.Err != "" {
			j.failed++
		}
	}
	if bad > 0 {
		cfg.Note(fmt.Sprintf("%s: %d damaged line(s) skipped", path, bad))
	}
	if implausible > 0 {
		cfg.Note(fmt.Sprintf("%s: %d measurement(s) with a count no kernel takes (not above 0, or above %g) skipped; measured again", path, implausible, float64(tune.MaxCount)))
	}
	if stale > 0 {
		cfg.Note(fmt.Sprintf("%s: %d measurement(s) of code other than what their knobs generate now (another mcugen's journal?) skipped; measured again", path, stale))
	}
	if bad > 0 {
		if err := keepJournal(path, func(journalLine) bool { return true }); err != nil {
			return fmt.Errorf("tuning journal: %w", err)
		}
	}
	return nil
}

// journalKernels are the kernels of the model that the journal names: the
// kernels an interrupted run tuned (as jobs for fitTuned and
// keepModelNoSlower, which read their signatures and defaults).
func journalKernels(cfg Config, kernels []*Kernel, target string) []*job {
	lines, _, _ := readJournal(JournalPath(cfg.Out))
	keys := map[string]bool{}
	for _, l := range lines {
		keys[l.Key] = true
	}
	var out []*job
	for _, k := range kernels {
		if keys[tune.KeyFor(k.Signature, target, cfg.Core, k.Defaults)] {
			out = append(out, &job{k: k, done: true})
		}
	}
	return out
}

func progress(cfg Config, jobs []*job, rep *Report, wall time.Duration) {
	if cfg.Progress == nil {
		return
	}
	done, total := 0, 0
	var best, def int64
	for _, j := range jobs {
		total += min(cfg.Trials, j.k.Space.Size())
		// An exhaustive search's copies (the code of a point measured
		// before) count, and a finished kernel counts whole: the line
		// stopped at 18/20 (tuning journey finding).
		if j.done {
			done += min(cfg.Trials, j.k.Space.Size())
		} else {
			done += min(j.search.Spent(), cfg.Trials)
		}
		// Kernels whose default is measured: their best against it.
		if _, n, ok := j.search.Best(); ok && j.search.Default() > 0 {
			best += n
			def += j.search.Default()
		}
	}
	cmp := ""
	if def > 0 {
		cmp = fmt.Sprintf(", best %d vs default %d", best, def)
	}
	// Under 80 columns with 8-digit counts (IC's are 7): a longer line
	// wrapped in an 80-column terminal, and each update left a line behind
	// (tuning journey finding).
	fmt.Fprintf(cfg.Progress, "\rtune: %d/%d trials, %.2f s each%s  ",
		done, total, wall.Seconds()/float64(max(rep.Trials, 1)), cmp)
}

// gainText says how best compares with the default count def (0: not
// measured).
func gainText(best, def int64) string {
	if def <= 0 {
		return fmt.Sprintf("best %d instructions (the default not measured)", best)
	}
	return fmt.Sprintf("best %d instructions, default %d (%.1f%% fewer)", best, def, 100*float64(def-best)/float64(def))
}

func seedOf(s string) uint64 {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fitTuned makes the records of this run fit the flash the build has. A
// kernel is measured alone, where its weights always fit; in the model a
// record asking for more flash (Winograd's transformed weights, int16
// weights) can push the constants past the board's flash or the flash
// budget, and then the fit pass keeps the largest kernels int8, which
// turns Winograd off and runs the direct convolution with knobs chosen for
// Winograd (a user journey: IC under a 250 KB budget, one layer 58% slower
// than untuned, the model 0.6% faster where dropping that one record gave
// 10%). So while the fit pass overrides a record of this run, the largest
// such kernel goes back to its default knobs, with a note.
func fitTuned(s *pipeline.State, cfg Config, recs *tune.Records, jobs []*job, target string, rep *Report) error {
	mine := map[string]tune.Knobs{}
	for _, j := range jobs {
		mine[j.k.Signature] = j.k.Defaults
	}
	for {
		ms, err := pipeline.Compile(s.ModelPath, cfg.fitOptions(cfg.Out))
		if err != nil || ms.Lean == nil || ms.Module == nil {
			return nil // keepModelNoSlower compiles it again and says why
		}
		byName := map[string]*graph.Node{}
		for _, n := range ms.Graph.Nodes {
			byName[n.Name] = n
		}
		// This run's record for kernel f, with its defaults, if it asks for
		// other knobs than the defaults and not the fit pass's int8.
		tuned := func(f *tir.PrimFunc) (*tune.Record, tune.Knobs) {
			node, _, _ := strings.Cut(f.Node, " + ")
			n := byName[node]
			if n == nil {
				return nil, nil
			}
			sig := tune.Signature(ms.Graph, n)
			def, ok := mine[sig]
			if !ok {
				return nil, nil
			}
			r := recs.Get(sig, target, cfg.Core, def)
			if r == nil {
				return nil, nil
			}
			if def, ok := mine[r.Kernel]; ok && r.Knobs["weights"] != tune.Lean["weights"] && r.Knobs.String() != def.String() {
				return r, def
			}
			return nil, nil
		}
		funcs := map[string]*tir.PrimFunc{}
		for _, f := range ms.Module.Funcs {
			funcs[f.Name] = f
		}
		// Does the fit pass override one of this run's records?
		forced := ""
		for _, k := range ms.Lean.Kernels {
			if f := funcs[k]; f != nil {
				if r, _ := tuned(f); r != nil {
					forced = k
					break
				}
			}
		}
		if forced == "" {
			return nil
		}
		// Then the record that goes is the one taking the most flash for
		// its choice, an algorithm away from its default (Winograd's
		// weights), largest constants first: the record the fit pass
		// overrides may only be the largest kernel, its knobs costing no
		// flash (review finding). Without such a record, the overridden one.
		var over *tune.Record
		name := forced
		var most int64 = -1
		for _, f := range ms.Module.Funcs {
			r, def := tuned(f)
			if r == nil || !algorithmChanged(target, r.Knobs, def) {
				continue
			}
			var bytes int64
			for _, c := range f.Consts() {
				bytes += int64(c.Len() * c.DType.Size())
			}
			if bytes > most {
				over, name, most = r, f.Name, bytes
			}
		}
		if over == nil {
			over, _ = tuned(funcs[forced])
		}
		if over == nil {
			return nil
		}
		what := "the flash budget"
		if !ms.Lean.Budget {
			what = ms.Opt.Board.Name + "'s flash"
		}
		cfg.Note(fmt.Sprintf("kernel %s (%s): its tuned knobs (%s) need more flash than %s leaves, and the build would keep its weights int8 with them: it keeps its default knobs",
			over.Kernel, name, over.Knobs, what))
		over.Knobs, over.Instructions = mine[over.Kernel].Clone(), over.Default
		for i := range rep.Kernels {
			if rep.Kernels[i].Kernel == over.Kernel {
				rep.Kernels[i].Knobs, rep.Kernels[i].Instructions, rep.Kernels[i].Reverted = over.Knobs.Clone(), over.Default, "flash"
			}
		}
		if err := recs.Save(cfg.Out); err != nil {
			return err
		}
	}
}

// algorithmChanged reports whether knobs set an algorithm knob
// (tir.DeclareAlgorithm: another algorithm, which may take more memory)
// away from its default.
func algorithmChanged(target string, knobs, def tune.Knobs) bool {
	for k, v := range knobs {
		if (tir.IsAlgorithm(target+"."+k) || tir.IsAlgorithm(k)) && v != def[k] {
			return true
		}
	}
	return false
}

// fitOptions are the options of the model built for the board the records
// are for (FitBoard, else the measuring board) with the records in tuning.
func (cfg Config) fitOptions(tuning string) pipeline.Options {
	o := cfg.Opt
	o.Tuning, o.Warn = tuning, func(string) {}
	if cfg.FitBoard != nil {
		o.Board = cfg.FitBoard
	}
	return o
}

// measureOptions are the options of the whole model built on the measuring
// board with the records in tuning, holding the kernels the board's own
// build keeps int8 at int8 weights (the stand-in's flash would take every
// kernel's int16 weights: other code than the board's), as
// cmd/mcugen's emulatedTwin runs a board without an emulator.
func (cfg Config) measureOptions(model, tuning string) (pipeline.Options, error) {
	o := cfg.Opt
	o.Tuning, o.Warn = tuning, func(string) {}
	if cfg.FitBoard == nil || cfg.FitBoard == cfg.Opt.Board {
		return o, nil
	}
	fs, err := pipeline.Compile(model, cfg.fitOptions(tuning))
	if err != nil {
		return o, err
	}
	if fs.Lean == nil || len(fs.Lean.Kernels) == 0 {
		return o, nil
	}
	o.KeepInt8 = slices.Clone(fs.Lean.Kernels)
	o.KeepInt4 = slices.Clone(fs.Lean.Int4)
	return o, nil
}

// keepModelNoSlower measures the whole model with and without the records.
// A kernel measured alone only approximates the kernel inside the model, so
// the tuned model can come out a few instructions slower; then the kernels
// tuned in this run fall back to their default knobs, smallest measured gain
// first, until the tuned model is no slower than the untuned one.
func keepModelNoSlower(s *pipeline.State, cfg Config, recs *tune.Records, jobs []*job, target string, rep *Report) error {
	count := func(tuning string) (int64, error) {
		o, err := cfg.measureOptions(s.ModelPath, tuning)
		if err != nil {
			return 0, err
		}
		ms, err := pipeline.Compile(s.ModelPath, o)
		if err != nil {
			return 0, err
		}
		dir, err := os.MkdirTemp(cfg.WorkDir, "model-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		x, err := ms.Execute(pipeline.RandomInputs(ms.Graph, 1, 5), dir, cfg.Timeout)
		if err != nil {
			return 0, err
		}
		if !x.AllMatch() {
			return 0, fmt.Errorf("the tuned model differs from the reference interpreter")
		}
		return x.Instructions(), nil
	}
	base, err := count("")
	if err != nil {
		return fmt.Errorf("measuring the untuned model: %w", err)
	}
	var tuned []*tune.Record
	for _, j := range jobs {
		if r := recs.Get(j.k.Signature, target, cfg.Core, j.k.Defaults); r != nil && r.Knobs.String() != j.k.Defaults.String() {
			tuned = append(tuned, r)
		}
	}
	sort.Slice(tuned, func(a, b int) bool {
		return tuned[a].Default-tuned[a].Instructions < tuned[b].Default-tuned[b].Instructions
	})
	defaults := map[*tune.Record]tune.Knobs{}
	for _, j := range jobs {
		if r := recs.Get(j.k.Signature, target, cfg.Core, j.k.Defaults); r != nil {
			defaults[r] = j.k.Defaults
		}
	}
	for {
		got, err := count(cfg.Out)
		if err != nil {
			return fmt.Errorf("measuring the tuned model: %w", err)
		}
		rep.ModelUntuned, rep.ModelTuned = base, got
		if got <= base || len(tuned) == 0 {
			return nil
		}
		r := tuned[0]
		tuned = tuned[1:]
		cfg.Note(fmt.Sprintf("the tuned model measured %d > %d instructions untuned: kernel %s goes back to its default knobs", got, base, r.Kernel))
		r.Knobs, r.Instructions = defaults[r].Clone(), r.Default
		for i := range rep.Kernels {
			if rep.Kernels[i].Kernel == r.Kernel {
				rep.Kernels[i].Knobs, rep.Kernels[i].Instructions, rep.Kernels[i].Reverted = r.Knobs.Clone(), r.Default, "the whole model"
			}
		}
		if err := recs.Save(cfg.Out); err != nil {
			return err
		}
	}
}

// recordBoardName is the board a record was tuned on, as a note says it.
func recordBoardName(r *tune.Record) string {
	if r.Board == "" {
		return "another board"
	}
	return r.Board
}
