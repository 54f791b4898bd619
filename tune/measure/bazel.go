package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bazelbuild/buildtools/build"

	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// The largest candidate or result file read (a few hundred bytes each),
// and the largest file copied into a Bazel workspace (the model, the
// mcugen binary, calibration files).
const (
	maxResultBytes = 16 << 20
	maxCopyBytes   = 4 << 30
)

// Candidate is one measurement as a file: the input of
// `mcugen tune MODEL --board B --measure CANDIDATE --result RESULT`.
type Candidate struct {
	Kernel string `json:"kernel"`
	Target string `json:"target"`
	Core   string `json:"core"`
	// Compiler is "clang" for a tune --cc clang batch (Record.Compiler).
	Compiler string     `json:"compiler,omitempty"`
	Knobs    tune.Knobs `json:"knobs"`
	Default  bool       `json:"default"` // the schedule's default knobs
	Space    int        `json:"space"`
}

// toolCore is the candidate's core and compiler as Config.Core holds them.
func (c *Candidate) toolCore() string { return tune.ToolCore(c.Core, c.Compiler) }

// shownCore names a Config.Core in messages: "cortex-m4 with clang".
func shownCore(tc string) string {
	core, compiler := tune.SplitToolCore(tc)
	if core == "" {
		core = "the host's default core"
	}
	if compiler != "" {
		return core + " with " + compiler
	}
	return core
}

// Result is the output of one measurement.
type Result struct {
	Candidate
	Board        string  `json:"board"`
	Instructions int64   `json:"instructions"`
	Error        string  `json:"error,omitempty"`
	Seconds      float64 `json:"seconds"`
}

// MeasureCandidateFile measures the candidate in file cand on the compiled
// model s and writes a Result to out. A candidate that fails to build, runs
// wrong or hangs is a Result with Error set, not an error: only a candidate
// that does not belong to the model is.
func MeasureCandidateFile(s *pipeline.State, cfg Config, cand, out string) error {
	// A device or FIFO named as the candidate is refused, not read
	// forever (adversarial journey: --measure /dev/zero grew to 1.4 GB).
	data, err := fileio.ReadRegular(cand, maxResultBytes)
	if err != nil {
		return fmt.Errorf("candidate %s: %w", cand, err)
	}
	var c Candidate
	if err := json.Unmarshal(data, &c); err != nil || c.Kernel == "" || c.Knobs == nil {
		return fmt.Errorf("candidate %s: not a tuning candidate file", cand)
	}
	kernels, err := Kernels(s, cfg.Opt)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(kernels, func(k *Kernel) bool { return k.Signature == c.Kernel })
	if i < 0 {
		return fmt.Errorf("candidate %s: kernel %q is not in this model (or has no knobs)", cand, c.Kernel)
	}
	if c.Target != s.Module.Target || c.toolCore() != cfg.Core {
		return fmt.Errorf("candidate %s: made for %s on %s, this build is %s on %s", cand, c.Target, shownCore(c.toolCore()), s.Module.Target, shownCore(cfg.Core))
	}
	if _, bad := tune.CheckOp(kernels[i].knobTarget(c.Target), kernels[i].Op, kernels[i].Defaults, c.Knobs); len(bad) > 0 {
		return fmt.Errorf("candidate %s: %s, which tune does not try for kernel %q", cand, strings.Join(bad, ", "), c.Kernel)
	}
	// Inside cfg.WorkDir where the caller gives one (mcugen removes that on
	// an interrupt), else in the system's temporary directory.
	dir, err := os.MkdirTemp(cfg.WorkDir, "mcugen-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	m := Measure(kernels[i], c.Knobs, cfg.Opt, dir, cfg.Timeout)
	r := Result{Candidate: c, Board: cfg.recordBoard(), Instructions: m.Instructions, Seconds: m.Wall.Seconds()}
	if m.Err != nil {
		r.Error = oneLine(m.Err.Error())
	}
	return writeJSON(out, r)
}

// BazelInputs is what the generated commands need besides the model and
// a candidate to build what tune built: the board as the user named it
// (its QEMU twin, if any, is found again from it, so a soft-float board is
// built with its own flags and not the twin's), the other mcugen flags that
// change the build, and the files those flags name, copied into the
// directory under the names the flags use (a board file, a calibration
// directory).
type BazelInputs struct {
	Board string
	Flags []string
	Files map[string]string // name in the Bazel directory → source file or directory
}

// ErrAllRecorded is WriteBazel's answer when every kernel of the model has
// its record: it writes nothing.
var ErrAllRecorded = errors.New("every kernel has its record")

// ErrNoKernels is WriteBazel's answer for a model with no kernel that has
// schedule knobs: nothing to tune, nothing written.
var ErrNoKernels = errors.New("no kernel with schedule knobs")

// WriteBazel writes, into dir, one candidate file per measurement still to
// make (kernels already in cfg.Out's records are left out; each kernel's
// candidates are what its search proposes with no measurements yet: all of
// a small space, else the defaults and a sample), the model, a copy of this
// mcugen binary, in's files, a measure.sh wrapper and a BUILD.bazel with
// one sh_test per candidate, written with buildtools. It returns the number
// of targets.
// bazelArg is a as a test's args entry: Bazel substitutes $ (Make
// variables) and splits the entry as a Bourne shell would, so a value with
// a space or a $ ("my model$x.tflite") is single-quoted and its $ doubled
// (review finding: it split, or failed on an undefined variable).
func bazelArg(a string) string {
	if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/=:,+@%", r))
	}) {
		return a
	}
	q := "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	return strings.ReplaceAll(q, "$", "$$")
}

// bazelHeader starts the BUILD.bazel WriteBazel writes: a directory whose
// BUILD file starts otherwise is not one it wrote.
const bazelHeader = "# Generated by `mcugen tune --bazel`"

// checkBazelDir refuses a directory that holds something while its
// BUILD.bazel is not one WriteBazel wrote: writing there would replace the
// user's BUILD file and delete a candidates/ of theirs (review finding).
func checkBazelDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil // new (or for the write to report)
	}
	b, err := os.ReadFile(filepath.Join(dir, "BUILD.bazel"))
	if err == nil && bytes.HasPrefix(b, []byte(bazelHeader)) {
		return nil
	}
	what := "no BUILD.bazel written by mcugen tune --bazel"
	if err == nil {
		what = "a BUILD.bazel mcugen did not write"
	}
	return fmt.Errorf("--bazel %s: holds files (%s, …) and %s; writing the targets there would replace them: name a new or empty directory", dir, entries[0].Name(), what)
}

func WriteBazel(s *pipeline.State, cfg Config, model, dir string, in BazelInputs) (int, error) {
	if cfg.Trials <= 0 {
		cfg.Trials = DefaultTrials
	}
	recs, notes, err := tune.Load(cfg.Out)
	if err != nil {
		return 0, err
	}
	for _, n := range notes {
		cfg.Note(n)
	}
	kernels, err := Kernels(s, cfg.Opt)
	if err != nil {
		return 0, err
	}
	if len(kernels) == 0 {
		return 0, ErrNoKernels
	}
	// Nothing to measure: the directory is left as it is (it got an empty
	// BUILD file and an 18 MB copy of mcugen: tuning journey finding).
	if !slices.ContainsFunc(kernels, func(k *Kernel) bool { return recs.Get(k.Signature, s.Module.Target, cfg.Core, k.Defaults) == nil }) {
		return 0, ErrAllRecorded
	}
	if err := checkBazelDir(dir); err != nil {
		return 0, err
	}
	// The BUILD file first says the directory is being written, and the
	// real one replaces it last: an interrupted run left candidates and
	// no BUILD file, which the next run refused as not its own, or an old
	// batch's BUILD file over half its candidates (tune review). Now the
	// next run takes the directory over, and bazel stops with this line.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	if err := fileio.WriteAtomic(filepath.Join(dir, "BUILD.bazel"), []byte(bazelHeader+": incomplete.\n"+
		"fail(\"mcugen tune --bazel stopped before it finished writing this directory: run the same command again\")\n")); err != nil {
		return 0, err
	}
	// A directory written before holds that run's candidates: they go, so
	// the BUILD file and the candidates on disk stay one set.
	if err := os.RemoveAll(filepath.Join(dir, "candidates")); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "candidates"), 0o755); err != nil {
		return 0, err
	}
	// A label takes letters, digits and ._- safely (a space or a $ in
	// the model's name made the BUILD file fail: review finding).
	modelBase := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r)) {
			return r
		}
		return '_'
	}, filepath.Base(model))
	// Runs of replaced characters as one: "my model (1).tflite" became
	// my_model__1_.tflite, whose C prefix every measurement then warned
	// about (a "__"; tune review).
	for strings.Contains(modelBase, "__") {
		modelBase = strings.ReplaceAll(modelBase, "__", "_")
	}
	if ext := filepath.Ext(modelBase); strings.HasSuffix(strings.TrimSuffix(modelBase, ext), "_") && len(modelBase) > len(ext)+1 {
		modelBase = strings.TrimSuffix(strings.TrimSuffix(modelBase, ext), "_") + ext
	}
	// A leading '-' would make the copy's name a flag on measure.sh's
	// command line (review finding: ./-m.tflite gave "unknown flag -m" in
	// every target).
	if strings.HasPrefix(modelBase, "-") {
		modelBase = "_" + strings.TrimLeft(modelBase, "-")
	}
	if err := copyFile(model, filepath.Join(dir, modelBase), 0o644); err != nil {
		return 0, err
	}
	if exe, err := os.Executable(); err == nil {
		if err := copyFile(exe, filepath.Join(dir, "mcugen"), 0o755); err != nil {
			return 0, err
		}
	}
	// The script runs from its own directory, so the paths it is given are
	// the package's whether the BUILD file is a repository's root or a
	// package inside one.
	script := "#!/bin/sh\n# One mcugen tuning measurement: build one candidate, run it under QEMU, count, compare.\n" +
		"# usage: measure.sh MODEL CANDIDATE [mcugen flags...]; the result goes to the test's outputs.\nset -eu\n" +
		"out=${TEST_UNDECLARED_OUTPUTS_DIR:-$PWD}\ncd \"$(dirname \"$0\")\"\n" +
		"model=$1; cand=$2; shift 2\nexec ./mcugen tune \"$model\" --measure \"$cand\" --result \"$out/result.json\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "measure.sh"), []byte(script), 0o755); err != nil {
		return 0, err
	}
	board := in.Board
	if board == "" {
		board = cfg.Opt.Board.Name
	}
	flags := append([]string{"--board", board, "--target", s.Module.Target, "--timeout", cfg.Timeout.String()}, in.Flags...)
	exports := []string{modelBase, "mcugen", "measure.sh"}
	var globs []string
	names := make([]string, 0, len(in.Files))
	for name := range in.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		src := in.Files[name]
		st, err := os.Stat(src)
		if err != nil {
			return 0, err
		}
		if st.IsDir() {
			// The last batch's copy goes first: the targets glob the
			// whole directory, so its files would join this batch's (a
			// review finding: old and new calibration samples together).
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return 0, err
			}
			if err := copyDir(src, filepath.Join(dir, name)); err != nil {
				return 0, err
			}
			globs = append(globs, name+"/**")
			continue
		}
		if err := copyFile(src, filepath.Join(dir, name), 0o644); err != nil {
			return 0, err
		}
		exports = append(exports, name)
	}
	f := &build.File{Type: build.TypeBuild}
	// sh_test from rules_shell: Bazel 9 has no native one (Bazel 7 and 8
	// take the load too).
	f.Stmt = append(f.Stmt, &build.LoadStmt{Module: &build.StringExpr{Value: "@rules_shell//shell:sh_test.bzl"},
		From: []*build.Ident{{Name: "sh_test"}}, To: []*build.Ident{{Name: "sh_test"}}, ForceCompact: true})
	f.Stmt = append(f.Stmt, &build.CallExpr{X: &build.Ident{Name: "exports_files"},
		List: []build.Expr{strList(exports)}})
	// Bazel's timeout, above mcugen's own for the QEMU run plus the build,
	// so a slow candidate ends as mcugen's failed measurement (a result
	// with its error, the test passing) and not as Bazel's timeout.
	timeout := "eternal"
	if need := cfg.Timeout.Seconds() + 30; need > 3600 && cfg.Note != nil {
		// Bazel's longest per-target timeout is eternal's hour (a review
		// finding: --timeout 2h wrote it, and Bazel would kill first).
		cfg.Note(fmt.Sprintf("--timeout %s: a run and its build can take longer than Bazel's longest test timeout (eternal, 3600 s): give bazel test --test_timeout=%d", cfg.Timeout, int(math.Ceil(need))))
	}
	for _, t := range []struct {
		name string
		secs float64
	}{{"short", 60}, {"moderate", 300}, {"long", 900}} {
		if cfg.Timeout.Seconds()+30 <= t.secs {
			timeout = t.name
			break
		}
	}
	n, copies := 0, 0
	target := s.Module.Target
	for ki, k := range kernels {
		if recs.Get(k.Signature, target, cfg.Core, k.Defaults) != nil {
			continue
		}
		srch := tune.NewSearch(k.Space, k.Defaults, cfg.Trials, seedOf(k.Signature))
		// Copies cost a compile here, no run: many more are let through.
		srch.CopyAllowance = 16
		seen := map[string]bool{}
		ci := -1
		for {
			// One at a time: a candidate whose code is an earlier one's
			// (the defaults come first) would measure the same program, so
			// it is left out and, as a copy, frees its place in the budget
			// for another (review finding: the batch came out short).
			next := srch.Next(1)
			if len(next) == 0 {
				break
			}
			knobs := next[0]
			if st, err := compileCandidate(k, knobs, cfg.Opt); err == nil {
				key := codeKey(st)
				if seen[key] {
					copies++
					srch.ReportCopy(knobs, 0, false)
					continue
				}
				seen[key] = true
			}
			ci++
			name := fmt.Sprintf("k%03d_c%03d", ki, ci)
			core, compiler := tune.SplitToolCore(cfg.Core)
			c := Candidate{Kernel: k.Signature, Target: target, Core: core, Compiler: compiler, Knobs: knobs,
				Default: k.Space.Index(knobs) == k.Space.Index(k.Defaults), Space: k.Space.Size()}
			file := "candidates/" + name + ".json"
			if err := writeJSON(filepath.Join(dir, file), c); err != nil {
				return 0, err
			}
			call := &build.CallExpr{X: &build.Ident{Name: "sh_test"}}
			r := build.NewRule(call)
			r.SetAttr("name", &build.StringExpr{Value: name})
			r.SetAttr("srcs", strList([]string{"measure.sh"}))
			args := append([]string{modelBase, file}, flags...)
			for i, a := range args {
				args[i] = bazelArg(a)
			}
			r.SetAttr("args", strList(args))
			var data build.Expr = strList(append(slices.Clone(exports[:2]), append(exports[3:], file)...))
			if len(globs) > 0 {
				data = &build.BinaryExpr{X: data, Op: "+", Y: &build.CallExpr{X: &build.Ident{Name: "glob"}, List: []build.Expr{strList(globs)}}}
			}
			r.SetAttr("data", data)
			r.SetAttr("size", &build.StringExpr{Value: "small"})
			r.SetAttr("timeout", &build.StringExpr{Value: timeout})
			r.SetAttr("tags", strList([]string{"mcugen-tune", "requires-qemu"}))
			f.Stmt = append(f.Stmt, call)
			n++
		}
	}
	if copies > 0 && cfg.Note != nil {
		cfg.Note(fmt.Sprintf("%d candidate(s) left out: their knobs generate the code of another candidate", copies))
	}
	out := append([]byte(bazelHeader+": one test per tuning measurement.\n"+
		"# Run here (Bazel 7 or later): bazel test //... --nozip_undeclared_test_outputs; then, from where\n"+
		"# mcugen tune --bazel ran: mcugen tune MODEL --merge DIR/bazel-testlogs -o RECORDS (docs/TUNING.md).\n"), build.Format(f)...)
	// The directory is a Bazel module of its own, so `bazel test //...`
	// runs in it as it is; to make it a package of an existing repository,
	// delete this file. A MODULE.bazel of the user's own is kept; one an
	// earlier run wrote is brought up to date.
	module := filepath.Join(dir, "MODULE.bazel")
	old, err := os.ReadFile(module)
	if err != nil && !os.IsNotExist(err) {
		// Not left as it was without a word: the BUILD file now needs
		// its rules_shell dependency (review finding).
		return 0, err
	}
	if os.IsNotExist(err) || bytes.HasPrefix(old, []byte(moduleHead)) {
		if err := os.WriteFile(module, []byte(moduleHead+moduleBody), 0o644); err != nil {
			return 0, err
		}
	} else if !bytes.Contains(old, []byte("rules_shell")) && cfg.Note != nil {
		// Kept, but the BUILD file's sh_test needs it (tuning journey
		// finding: the build would fail later, without a word here).
		cfg.Note(fmt.Sprintf("%s: kept as it is, but it has no rules_shell dependency, which the sh_test targets load: add bazel_dep(name = \"rules_shell\", version = \"0.6.1\")", module))
	}
	if err := fileio.WriteAtomic(filepath.Join(dir, "BUILD.bazel"), out); err != nil {
		return 0, err
	}
	return n, nil
}

// ClearBazel empties a batch an earlier tune --bazel wrote into dir, when
// this run has nothing to measure: its candidates go and its BUILD.bazel
// keeps no target, so a later bazel test cannot run the old batch again (a
// review finding: a CI job measured it a second time). It reports whether
// there was such a batch; a directory tune did not write is left alone.
func ClearBazel(dir, why string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "BUILD.bazel"))
	if err != nil || !bytes.HasPrefix(b, []byte(bazelHeader)) {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "candidates")); os.IsNotExist(err) && !bytes.Contains(b, []byte("sh_test(")) {
		return false, nil // emptied already
	}
	if err := os.RemoveAll(filepath.Join(dir, "candidates")); err != nil {
		return false, err
	}
	out := bazelHeader + ": no targets; " + why + ".\n"
	return true, os.WriteFile(filepath.Join(dir, "BUILD.bazel"), []byte(out), 0o644)
}

// moduleHead and moduleBody are the MODULE.bazel WriteBazel writes.
const (
	moduleHead = "# Generated by `mcugen tune --bazel`"
	moduleBody = ": this directory as a module of its own; delete it to use the\n" +
		"# directory as a package of an existing repository (which then needs the rules_shell dependency).\n" +
		"module(name = \"mcugen_tune\")\n\nbazel_dep(name = \"rules_shell\", version = \"0.6.1\")\n"
)

// writeJSON writes v indented, with signatures' "->" left readable.
func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func strList(v []string) *build.ListExpr {
	l := &build.ListExpr{}
	for _, s := range v {
		l.List = append(l.List, &build.StringExpr{Value: s})
	}
	return l
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := fileio.ReadRegular(src, maxCopyBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, b, mode)
}

// copyDir copies the regular files of the tree src into dst (a calibration
// directory's .npy files); anything else in it is left out.
//
// A symbolic link is followed, as the root and as a file (a calibration
// set of links to .npy files copied as nothing: review finding); a link
// to a directory below the root is not, so no cycle can loop.
func copyDir(src, dst string) error {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, to, 0o644)
	})
}

// Merge reads every result.json (or *.result.json) under dir (a symbolic
// link to it, as bazel-testlogs is, followed), keeps the best successful
// candidate of each kernel and adds it to the records file cfg.Out
// (existing records stay). A result is checked against the compiled model
// s as tune made the candidates: its kernel must be one of the model's, its
// target and core this build's, its knobs in the kernel's space; anything
// else is skipped with a note. It returns the number of records written; no
// result at all under dir is an error.
func Merge(s *pipeline.State, cfg Config, dir string) (int, error) {
	note, out := cfg.Note, cfg.Out
	kernels, err := Kernels(s, cfg.Opt)
	if err != nil {
		return 0, err
	}
	bySig := map[string]*Kernel{}
	for _, k := range kernels {
		bySig[k.Signature] = k
	}
	target := s.Module.Target
	why := func(r *Result) string {
		k := bySig[r.Kernel]
		switch {
		case k == nil:
			return "its kernel is not in this model (or has no knobs)"
		case r.Target != target || r.toolCore() != cfg.Core:
			return fmt.Sprintf("made for %s on %s, this build is %s on %s", r.Target, shownCore(r.toolCore()), target, shownCore(cfg.Core))
		}
		if _, bad := tune.CheckOp(k.knobTarget(target), k.Op, k.Defaults, r.Knobs); len(bad) > 0 {
			return strings.Join(bad, ", ")
		}
		if tune.KeyFor(r.Kernel, r.Target, r.toolCore(), r.Knobs) != tune.KeyFor(k.Signature, target, cfg.Core, k.Defaults) {
			return fmt.Sprintf("measured with weights=%d, this build's kernel has weights=%d (its flash, or a --flash-budget, differs from the batch's)", r.Knobs["weights"], k.Defaults["weights"])
		}
		return ""
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return 0, err
	}
	found := 0
	type agg struct {
		best, def *Result
		trials    int
	}
	byKey := map[string]*agg{}
	var keys []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(d.Name() == "result.json" || strings.HasSuffix(d.Name(), ".result.json")) {
			return err
		}
		b, err := fileio.ReadRegular(p, maxResultBytes)
		if err != nil {
			// One unreadable file (a dangling link, a pipe) is skipped as a
			// corrupt one is (review finding: it stopped the merge).
			note(fmt.Sprintf("%s: %v; skipped", p, err))
			return nil
		}
		var r Result
		if json.Unmarshal(b, &r) != nil || r.Kernel == "" || r.Knobs == nil {
			note(fmt.Sprintf("%s: not a measurement result; skipped", p))
			return nil
		}
		found++
		if w := why(&r); w != "" {
			note(fmt.Sprintf("%s: %s; skipped", p, w))
			return nil
		}
		key := tune.KeyFor(r.Kernel, r.Target, r.toolCore(), r.Knobs)
		a := byKey[key]
		if a == nil {
			a = &agg{}
			byKey[key] = a
			keys = append(keys, key)
		}
		a.trials++
		if r.Error == "" && (r.Instructions <= 0 || r.Instructions > tune.MaxCount) {
			// Said, not taken as a failed run in silence (tuning journey
			// finding: -7 instructions was only "no successful
			// measurement" in the end).
			note(fmt.Sprintf("%s: %d instructions and no error: not a measurement; skipped", p, r.Instructions))
			return nil
		}
		if r.Error != "" {
			return nil
		}
		if r.Default {
			a.def = &r
		}
		if a.best == nil || r.Instructions < a.best.Instructions {
			a.best = &r
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if found == 0 {
		return 0, fmt.Errorf("--merge %s: no result.json under it (Bazel keeps a test's outputs as result.json only with --nozip_undeclared_test_outputs)", dir)
	}
	// The records' lock, as tune takes it, once the results are read (a
	// wrong --merge directory is said at once, not after waiting): a
	// merge beside a tune run (or another merge) writing the same file
	// lost one of them's records.
	unlock, err := lockRecords(out, note)
	if err != nil {
		return 0, err
	}
	defer unlock()
	recs, notes, err := tune.Load(out)
	if err != nil {
		return 0, err
	}
	for _, n := range notes {
		note(n)
	}
	n, kept := 0, 0
	for _, key := range keys {
		a := byKey[key]
		if a.best == nil {
			note(fmt.Sprintf("kernel %s: no successful measurement", strings.SplitN(key, "|", 2)[0]))
			continue
		}
		if a.def == nil {
			// Without the defaults' count the best of a partial batch can
			// be slower than the defaults, and nothing would say so
			// (review finding: a record 1.5% slower, "0.0% fewer").
			note(fmt.Sprintf("kernel %s: no result for its default knobs (a partial batch? its _c000 target measures them): not recorded, as its best cannot be checked against the defaults; merge again with that result", a.best.Kernel))
			continue
		}
		rec := &tune.Record{Kernel: a.best.Kernel, Target: a.best.Target, Core: a.best.Core, Compiler: a.best.Compiler, Board: a.best.Board, Knobs: a.best.Knobs,
			Instructions: a.best.Instructions, Trials: a.trials, Space: a.best.Space, Search: "batch", Version: cfg.Version}
		if a.def != nil {
			rec.Default = a.def.Instructions
		}
		// A record the file already holds for the kernel (a local tune,
		// another merge) stays where it measured no more instructions
		// than this batch's best (review finding: a 500-instruction record was
		// replaced by a batch's 607 in silence).
		if old := recs.Get(rec.Kernel, rec.Target, tune.ToolCore(rec.Core, rec.Compiler), rec.Knobs); old != nil && old.Instructions > 0 && old.Instructions <= rec.Instructions {
			note(fmt.Sprintf("kernel %s: the record in %s measured %d instructions against this batch's best %d: kept", rec.Kernel, out, old.Instructions, rec.Instructions))
			kept++
			continue
		}
		recs.Put(rec)
		n++
	}
	// A kernel of the model that the batch has no result for, and the file
	// no record of, is said (review finding: it was left untuned in
	// silence, a target that never ran looking like one that measured).
	for _, k := range kernels {
		if byKey[tune.KeyFor(k.Signature, target, cfg.Core, k.Defaults)] == nil && recs.Get(k.Signature, target, cfg.Core, k.Defaults) == nil {
			note(fmt.Sprintf("kernel %s: no result under %s and no record in %s: it keeps its defaults (did its targets run?)", k.Signature, dir, out))
		}
	}
	if n == 0 && kept > 0 {
		return 0, nil // every kernel's record was better already: nothing to write
	}
	if n == 0 {
		// Every result skipped (another model's batch, another board's):
		// an empty records file would pass for a merge (user-journey
		// finding).
		return 0, fmt.Errorf("--merge %s: none of its %d result(s) is a successful measurement of this model's kernels for this build (the notes above say why each was skipped); %s not written", dir, found, out)
	}
	return n, recs.Save(out)
}
