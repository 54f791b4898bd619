package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
)

type testCmd struct {
	Models []string `arg:"" help:"Model files." type:"path"`
	Shape  []string `help:"Bind a dynamic input dimension (repeatable)." placeholder:"NAME=DIMS" sep:"none"`
	compileFlags
	runFlags
	Random  int    `help:"Random input vectors per model, plus the extreme ones (all min, all max, alternating)." default:"10"`
	Vectors string `help:"Directory of input_NNN.npy (input_NNN_K.npy for input K of several) and expected output_NNN.npy (output_NNN_K.npy for output K of several) vectors; MODELDIR/vectors* is used when present." type:"path" placeholder:"DIR"`
	JSON    bool   `name:"json" help:"Print one JSON object."`
	Reset   bool   `help:"Start every vector from the model's initial state (for a model with state, such as a recurrent layer or a variable: <prefix>_reset() before each run, as an application that resets between sequences does); without it the state runs on from one vector to the next."`
	cases   int    // models × boards, for --keep's directories
	cat     *boards.Catalog
	JUnit   string `name:"junit" help:"Also write a JUnit XML report here (one test case per model and board), for CI systems' test views; written whether the cases pass or not (a run stopped by an error writes that error; an interrupted one, none)." type:"outfile" placeholder:"FILE"`

	wroteJUnit bool
	afterCase  func() // a test's hook, after each case
}

type testResult struct {
	Model string `json:"model"`
	// ModelSHA256 is the model file's hash when the case ran, so a report
	// says which file it tested.
	ModelSHA256 string `json:"model_sha256,omitempty"`
	Board       string `json:"board"`
	// MeasuredOn is the QEMU board that ran a board without an emulator
	// (bench's field; user-journey finding: test did not say).
	MeasuredOn string `json:"measured_on,omitempty"`
	// Compiler is "clang" for a --cc clang build (empty: the board's gcc).
	Compiler     string `json:"compiler,omitempty"`
	Vectors      int    `json:"vectors"`
	Passed       int    `json:"passed"`
	Failed       int    `json:"failed"`
	Instructions int64  `json:"instructions"`
	// StackBytes is the most stack a vector's inference took (bench's
	// figure), -1 where the platform cannot tell or the case stopped early
	// (as README.md says; it was left out: session 50 review).
	StackBytes     int64 `json:"stack_bytes"`
	MatchReference bool  `json:"match_reference"`
	MatchExpected  *bool `json:"match_expected,omitempty"`
	// Float is true where some output is a float: compared within 1e-5
	// of the output tensor's scale (pipeline.CompareModel), not bit for bit.
	Float bool   `json:"float,omitempty"`
	Error string `json:"error,omitempty"`
	// FailedVectors names the vectors that mismatched: input_NNN.npy,
	// "random N" or one of the extremes.
	FailedVectors []string `json:"failed_vectors,omitempty"`
	// Mismatches says, for each failed vector, where its outputs differ
	// from what they were compared with (the first of several differing
	// outputs): a CI log must tell one step off at a tie from a wrong
	// result (review finding: only the vectors were named).
	Mismatches []mismatch `json:"mismatches,omitempty"`
	// Tuning is the --tuning records file and TunedKernels how many of the
	// build's kernels took knobs from it (bench's fields).
	Tuning       string `json:"tuning,omitempty"`
	TunedKernels int    `json:"tuned_kernels,omitempty"`
	// TunedDefaults is how many of those took the defaults (bench's).
	TunedDefaults int `json:"tuned_defaults,omitempty"`
	// seconds is the case's wall time, for the JUnit report only.
	seconds float64
}

func (c *testCmd) Run(e *env) error {
	if c.JUnit != "" {
		if err := checkReplace("--junit", c.JUnit, "a JUnit XML report", c.Models, looksXML); err != nil {
			return err
		}
		// A report left by an earlier run must not stand for this one.
		// Only a regular file is removed: /dev/stdout, a pipe or a
		// symbolic link is written through at the end (user-journey
		// finding: run as root, the removal replaced /dev/stdout's link
		// with a regular file holding the report).
		if fi, err := os.Lstat(c.JUnit); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(c.JUnit); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("--junit %s: %w", c.JUnit, unwrapPath(err))
			}
		}
	}
	err := c.run(e)
	if err != nil && c.JUnit != "" && !c.wroteJUnit {
		// The run stopped before its cases: one error case says why.
		r := testResult{Model: strings.Join(c.Models, ", "), Board: c.Board, Instructions: -1, StackBytes: -1, Error: err.Error()}
		if len(c.Models) == 1 {
			r.Model = c.Models[0]
		}
		if perr := makeParent("--junit", c.JUnit); perr == nil {
			if werr := writeJUnit(c.JUnit, []testResult{r}); werr != nil {
				e.warn(werr.Error())
			}
		}
	}
	return err
}

func (c *testCmd) run(e *env) error {
	if err := checkVectorCount("--random", c.Random); err != nil {
		return err
	}
	if err := checkPath("--vectors", c.Vectors, true); err != nil {
		return err
	}
	if c.Vectors != "" {
		if ins, _ := filepath.Glob(filepath.Join(c.Vectors, "input_*.npy")); len(ins) == 0 {
			return fmt.Errorf("--vectors %s: no input_NNN.npy files there (a vectors directory holds input_000.npy, input_001.npy, ... and optionally the expected output_000.npy, ...)", c.Vectors)
		}
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
	var err error
	if c.cat, err = c.checkBoards(); err != nil {
		return err
	}
	var report struct {
		Cases  int `json:"cases"`
		Passed int `json:"passed"`
		Failed int `json:"failed"`
		// Errors counts the model/board cases that stopped with an error
		// before their vectors ran (each is also one of cases and failed,
		// which otherwise count vectors: user-journey finding, the units
		// were mixed without a word).
		Errors int `json:"errors"`
		// The same in one unit each (CI journey: cases counted vectors
		// and errored model/board cases at once, failed mismatches and
		// errors): vectors run and how many matched or did not, and the
		// model/board cases (the JUnit report's test cases) and how many
		// stopped with an error.
		Vectors         int          `json:"vectors"`
		VectorsPassed   int          `json:"vectors_passed"`
		VectorsFailed   int          `json:"vectors_failed"`
		ModelBoardCases int          `json:"model_board_cases"`
		CasesWithErrors int          `json:"cases_with_errors"`
		Results         []testResult `json:"results"`
	}
	boardList := boardNames(c.Board)
	c.Models = uniquePaths(c.Models)
	total, k := len(c.Models)*len(boardList), 0
	c.cases = total
	for _, model := range c.Models {
		sum := "" // the file's hash before its first case
		for _, board := range boardList {
			k++
			if total > 1 {
				e.progress(fmt.Sprintf("testing %s on %s (%d of %d)", filepath.Base(model), strings.TrimSpace(board), k, total))
			}
			start := time.Now()
			before := fileSHA256(model)
			if sum == "" {
				sum = before
			}
			r := c.one(e, model, strings.TrimSpace(board))
			r.seconds = time.Since(start).Seconds()
			// Each board compiles the file afresh: a file replaced during
			// the run was tested as two models under one name (user-journey
			// finding). A case that may have seen another file fails.
			if after := fileSHA256(model); sum != "" && (before != sum || after != sum) && r.Error == "" {
				r.Error = fmt.Sprintf("%s changed while it was tested (sha256 %.12s... when the run started, %.12s... after this case): run again", model, sum, after)
				r.Passed, r.Failed = 0, r.Vectors
			}
			r.ModelSHA256 = before
			if c.afterCase != nil {
				c.afterCase()
			}
			report.Results = append(report.Results, r)
			report.Cases += r.Vectors
			report.Passed += r.Passed
			report.Failed += r.Failed
			report.ModelBoardCases++
			if r.Error == "" {
				report.Vectors += r.Vectors
				report.VectorsPassed += r.Passed
				report.VectorsFailed += r.Failed
			} else {
				report.CasesWithErrors++
			}
			if r.Error != "" && r.Vectors == 0 {
				report.Cases++
				report.Failed++
				report.Errors++
			}
		}
	}
	e.progress("")
	if c.JUnit != "" {
		if err := makeParent("--junit", c.JUnit); err != nil {
			return err
		}
		if err := writeJUnit(c.JUnit, report.Results); err != nil {
			c.wroteJUnit = true // it cannot be written: no second try with the error
			return err
		}
		c.wroteJUnit = true
	}
	if c.JSON {
		if err := e.printJSON(report); err != nil {
			return err
		}
	} else {
		mw, bw := 28, 14 // column widths: the longest model and board names
		names := shortNames(c.Models)
		for _, r := range report.Results {
			mw, bw = max(mw, len(names[r.Model])), max(bw, len(r.Board))
		}
		fmt.Fprintf(e.stdout, "%-*s %-*s %8s %8s %14s  %s\n", mw, "model", bw, "board", "vectors", "passed", "instructions", "result")
		for _, r := range report.Results {
			verdict := "bit-exact"
			if r.Float {
				verdict = "matches (float, within 1e-5)"
			}
			switch {
			case r.Error != "":
				verdict = "ERROR: " + r.Error
			case r.Failed > 0 && r.MatchReference && r.MatchExpected != nil && !*r.MatchExpected:
				verdict = "MISMATCH with the vectors' output_NNN.npy (the reference interpreter agrees with the firmware)"
			case r.Failed > 0:
				verdict = "MISMATCH"
			}
			if r.Error == "" && len(r.FailedVectors) > 0 {
				// Which ones (user-journey finding: only --json said).
				verdict += ": " + listSome(r.FailedVectors, 5)
				if len(r.Mismatches) > 0 {
					// And where the first differs (review finding).
					verdict += "; first, " + r.Mismatches[0].String()
				}
			}
			fmt.Fprintf(e.stdout, "%-*s %-*s %8d %8d %14s  %s\n", mw, names[r.Model], bw, r.Board, r.Vectors, r.Passed, countString(r.Instructions), verdict)
		}
		printTuned(e, report.Results, names, func(r testResult) (string, string, string, int, int) {
			return r.Model, r.Board, r.Tuning, r.TunedKernels, r.TunedDefaults
		})
	}
	// Vectors and the model/board cases that never ran are counted apart (the
	// JSON's cases, passed and failed count each such case as one failure).
	vectors, failedVec, broken := 0, 0, 0
	firstBroken := ""
	for _, r := range report.Results {
		vectors += r.Vectors
		failedVec += r.Failed
		if r.Error != "" && r.Vectors == 0 {
			if broken == 0 {
				firstBroken = r.Error
				if !strings.HasPrefix(firstBroken, r.Model) {
					firstBroken = r.Model + ": " + firstBroken
				}
				firstBroken = "on " + r.Board + ", " + firstBroken
			}
			broken++
		}
	}
	var summary, failures []string
	if failedVec > 0 {
		failures = append(failures, fmt.Sprintf("%d of %d vectors failed", failedVec, vectors))
		summary = append(summary, failures[0])
	} else {
		summary = append(summary, fmt.Sprintf("%d of %d vectors passed", vectors, vectors))
	}
	if broken > 0 {
		// The first case's reason on stderr too: a CI log that keeps
		// only stderr said nothing of why (adversarial journey).
		why := "the first " + firstBroken + "; the table says why for each"
		if c.JSON {
			why = "the first " + firstBroken + "; each result's \"error\" says why"
		}
		failures = append(failures, fmt.Sprintf("%d of %d model/board cases stopped with an error before their vectors were checked (%s)", broken, len(report.Results), why))
		summary = append(summary, failures[len(failures)-1])
	}
	if !c.JSON {
		fmt.Fprintf(e.stdout, "%s\n", strings.Join(summary, "; "))
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

// fileSHA256 is a file's SHA-256 in hex, or "" when it cannot be read.
func fileSHA256(path string) string {
	b, err := fileio.ReadRegular(path, importer.MaxModelBytes)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (c *testCmd) one(e *env, model, board string) testResult {
	r := testResult{Model: model, Board: board, Instructions: -1, StackBytes: -1, Compiler: compilerTag(c.CC)}
	fail := func(err error) testResult { r.Error = oneLine(err.Error()); return r }
	flags := c.compileFlags
	flags.Board = board
	opt, _, err := flags.options(e, &modelFlags{Model: model, Shape: c.Shape})
	if err == nil {
		opt.Compiler = c.CC
		err = hostBuilds(opt.Target, opt.Board)
	}
	if err != nil {
		return fail(err)
	}
	opt.ResetState = c.Reset
	s, err := compileModel(model, opt)
	if err != nil {
		return fail(err)
	}
	if c.Reset && s.Graph.StateBytes() == 0 {
		e.warn(fmt.Sprintf("%s: the model keeps no state: --reset changes nothing", model))
	}
	vecs, expected, labels, err := c.loadVectors(e, s, model)
	if err != nil {
		return fail(err)
	}
	vecs = append(vecs, pipeline.RandomInputs(s.Graph, c.Random, 7)...)
	for k := 0; k < c.Random; k++ {
		labels = append(labels, fmt.Sprintf("random %d", k))
	}
	vecs = append(vecs, pipeline.ExtremeInputs(s.Graph)...)
	labels = append(labels, "all minimum", "all maximum", "alternating minimum and maximum")
	dir, done, err := c.caseDir(c.caseName(model, board, c.cases))
	if err != nil {
		return fail(err)
	}
	defer done()
	run, err := emulatedTwin(e, s, c.cat)
	if err != nil {
		return fail(err)
	}
	if run != s {
		r.MeasuredOn = run.Opt.Board.Name
	}
	x, err := execute(e, run, vecs, dir, c.Timeout)
	if err != nil {
		return fail(err)
	}
	r.Vectors, r.Instructions, r.MatchReference = len(vecs), x.Instructions(), x.AllMatch()
	if run.Tuned > 0 {
		r.Tuning, r.TunedKernels, r.TunedDefaults = c.Tuning, run.Tuned, run.TunedDefaults
	}
	r.StackBytes = measuredStack(x.StackBytes())
	for _, o := range s.Graph.UserOutputs() {
		r.Float = r.Float || s.Graph.Tensors[o].DType == graph.Float32
	}
	exp, compared := true, 0
	outNames := s.Graph.UserOutputs()
	for v, m := range x.Match {
		var mm *mismatch
		if !m && v < len(x.Reference) {
			mm = firstMismatch(outNames, x.Outputs[v], x.Reference[v], "the reference interpreter")
		}
		if v < len(expected) && expected[v] != nil {
			compared++
			for i, want := range expected[v] {
				if ok, _ := pipeline.CompareModel(x.Outputs[v][i], want); !ok {
					m, exp = false, false
					if mm == nil {
						mm = firstMismatch(outNames, x.Outputs[v], expected[v], "output_NNN.npy")
					}
				}
			}
		}
		if m {
			r.Passed++
		} else {
			r.Failed++
			if v < len(labels) {
				r.FailedVectors = append(r.FailedVectors, labels[v])
				if mm != nil {
					mm.Vector = labels[v]
					if mm.Against == "output_NNN.npy" {
						if rest, ok := strings.CutPrefix(labels[v], "input_"); ok {
							mm.Against = "output_" + rest
						}
					}
					r.Mismatches = append(r.Mismatches, *mm)
				}
			}
		}
	}
	if compared > 0 {
		// Only where some vector came with its output_NNN.npy.
		r.MatchExpected = &exp
	}
	return r
}

// loadVectors reads input_NNN.npy (and output_NNN.npy when present) from
// --vectors or from a vectors* directory beside the model whose element type
// suits the model's input: the input the vectors are given for, which for a
// float model that mcugen quantizes is the float model's (the vectors are
// then quantized with mcugen's own input scale, as run --input does).
func (c *testCmd) loadVectors(e *env, s *pipeline.State, model string) ([]map[string]*graph.Data, [][]*graph.Data, []string, error) {
	src := s.Graph
	if s.Float != nil {
		src = s.Float
	}
	dir := c.Vectors
	if dir == "" && len(src.UserInputs()) == 1 {
		want := src.Tensors[src.UserInputs()[0]].DType
		var others []string
		for _, cand := range []string{"vectors", "vectors_int8", "vectors_float"} {
			d := filepath.Join(filepath.Dir(model), cand)
			first := filepath.Join(d, "input_000.npy")
			if !fileExists(first) {
				continue
			}
			if v, err := readNpy(first); err == nil && v.DType == want {
				dir = d
				break
			}
			got := "an unreadable input_000.npy"
			if h, err := npyHeader(first); err == nil {
				got = h.DType
			}
			others = append(others, fmt.Sprintf("%s holds %s", cand, got))
		}
		if dir == "" && len(others) > 0 {
			e.warn(fmt.Sprintf("%s: no reference vectors beside it fit its %s input (%s): testing random vectors only (--vectors DIR names others)",
				model, want, strings.Join(others, ", ")))
		}
	}
	if dir == "" {
		return nil, nil, nil, nil
	}
	ins, _ := filepath.Glob(filepath.Join(dir, "input_*.npy"))
	sort.Strings(ins)
	groups, err := inputGroups(dir, ins, s.Graph.UserInputs())
	if err != nil {
		return nil, nil, nil, err
	}
	var vecs []map[string]*graph.Data
	var expected [][]*graph.Data
	var labels []string
	outs := s.Graph.UserOutputs()
	// Expected outputs with no input beside them say a vector went
	// missing; for a model mcugen quantizes they cannot be checked exactly.
	outFiles, _ := filepath.Glob(filepath.Join(dir, "output_*.npy"))
	var orphans, strays []string
	for _, o := range outFiles {
		base := strings.TrimPrefix(filepath.Base(o), "output_")
		if len(outs) > 1 {
			if i := strings.LastIndexByte(base, '_'); i > 0 {
				// output_NNN_K.npy for output K: a K past the last output
				// would go unread (review finding: output_000_7.npy beside
				// a two-output model's files passed in silence).
				if k, err := strconv.Atoi(strings.TrimSuffix(base[i+1:], ".npy")); err != nil || k < 0 || k >= len(outs) {
					strays = append(strays, filepath.Base(o))
				}
				base = base[:i] + ".npy"
			}
		}
		first := "input_" + base
		if len(s.Graph.UserInputs()) > 1 {
			first = "input_" + strings.TrimSuffix(base, ".npy") + "_0.npy"
		}
		if !fileExists(filepath.Join(dir, first)) {
			orphans = append(orphans, filepath.Base(o))
		}
	}
	if len(strays) > 0 && s.Float == nil {
		return nil, nil, nil, fmt.Errorf("%s: %s: the model has %d outputs, so an expected output is output_NNN_K.npy with K from 0 to %d; rename or remove it",
			dir, strings.Join(strays, ", "), len(outs), len(outs)-1)
	}
	switch {
	case len(orphans) > 0 && (s.Float != nil || len(s.Graph.UserInputs()) == 0):
		// Not compared in any case (a model mcugen quantizes, below), or
		// a model without inputs, whose vectors have no input files.
		e.warnOnce(fmt.Sprintf("%s: %s with no input file of the same number: not checked (%s)", dir, plural(len(orphans), "expected output"), strings.Join(orphans, ", ")))
	case len(orphans) > 0:
		// An error, not a warning: a test that passes while an expected
		// output it was given went unchecked is a false green in CI
		// (review: input_000_0.npy beside output_000.npy for a one-input
		// model passed "4 of 4", the JUnit report green).
		layout := "input_NNN.npy"
		if len(s.Graph.UserInputs()) > 1 {
			layout = "input_NNN_K.npy (K the input's position)"
		}
		return nil, nil, nil, fmt.Errorf("%s: %s with no input file of the same number (%s): it cannot be checked; name each vector's input %s, or remove the output",
			dir, plural(len(orphans), "expected output"), strings.Join(orphans, ", "), layout)
	}
	if s.Float != nil && len(outFiles) > len(orphans) {
		// Once, not once per board (a user journey).
		e.warnOnce(fmt.Sprintf("%s: the expected outputs are not compared: mcugen quantized the model, so its outputs approximate the float model's (mcugen quantize reports by how much); the firmware is checked against the reference interpreter", dir))
	}
	for _, grp := range groups {
		vec, err := bindCompiled(s, grp.args, e.warnOnce)
		if err != nil {
			return nil, nil, nil, err
		}
		labels = append(labels, grp.label)
		vecs = append(vecs, vec)
		// The expected output beside it: input_NNN.npy -> output_NNN.npy in the same
		// directory (the file name only: a directory named input_x is not renamed).
		// A model of several outputs has output_NNN_K.npy for output K.
		outFile := filepath.Join(dir, "output_"+grp.number+".npy")
		var want []*graph.Data
		var missing, found []string
		for k, name := range outs {
			f := outFile
			if len(outs) > 1 {
				f = strings.TrimSuffix(outFile, ".npy") + fmt.Sprintf("_%d.npy", k)
			}
			b, err := fileio.ReadRegular(f, importer.MaxModelBytes)
			if errors.Is(err, fs.ErrNotExist) || s.Float != nil {
				missing = append(missing, filepath.Base(f))
				continue
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", f, unwrapPath(err))
			}
			d, err := npy.Read(bytes.NewReader(b))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", f, err)
			}
			t := s.Graph.Tensors[name]
			// The shape too, as --input files are checked (size-1
			// dimensions aside; review finding: a [3 4] file passed for a
			// [1 12] output).
			if d.DType != t.DType || d.Len() != t.NumElements() || !importer.SameShapeButOnes(d.Shape, t.Shape) {
				return nil, nil, nil, fmt.Errorf("%s: holds %s %v, output %q is %s %v", f, d.DType, d.Shape, name, t.DType, t.Shape)
			}
			d.Shape = t.Shape
			want = append(want, d)
			found = append(found, filepath.Base(f))
		}
		if len(missing) > 0 {
			if len(found) > 0 && s.Float == nil {
				e.warn(fmt.Sprintf("%s: %s missing: %s not checked either", dir, strings.Join(missing, ", "), strings.Join(found, ", ")))
			}
			want = nil
		}
		if len(outs) > 1 && want == nil && s.Float == nil && fileExists(outFile) {
			return nil, nil, nil, fmt.Errorf("%s: the model has %d outputs: name their expected values %s_0.npy to _%d.npy", outFile, len(outs), strings.TrimSuffix(filepath.Base(outFile), ".npy"), len(outs)-1)
		}
		expected = append(expected, want)
	}
	return vecs, expected, labels, nil
}

// vectorGroup is one vector's input files: input_NNN.npy for a model of
// one input, input_NNN_K.npy for input K of several.
type vectorGroup struct {
	number, label string
	args          []string // for bindCompiled: FILE, or NAME=FILE per input
}

func inputGroups(dir string, files []string, inputs []string) ([]vectorGroup, error) {
	var out []vectorGroup
	if len(inputs) <= 1 {
		// input_NNN.npy, or input_NNN_0.npy as a model of several names
		// its first input; input_NNN_K.npy for another K names an input
		// the model does not have (review: beside input_000.npy it was
		// taken as a vector of its own and refused for its shape).
		seen := map[string]string{}
		for _, f := range files {
			n := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "input_"), ".npy")
			if i := strings.LastIndexByte(n, '_'); i > 0 && allDigits(n[:i]) && allDigits(n[i+1:]) {
				if n[i+1:] != "0" {
					what := "one input"
					if len(inputs) == 1 {
						what += " (" + inputs[0] + ")"
					}
					return nil, fmt.Errorf("%s: names input %s of a vector, and the model has %s: name its vectors input_NNN.npy", f, n[i+1:], what)
				}
				n = n[:i]
			}
			if other, ok := seen[n]; ok {
				return nil, fmt.Errorf("%s: vector %s has two files for its input: %s and %s", dir, n, filepath.Base(other), filepath.Base(f))
			}
			seen[n] = f
			out = append(out, vectorGroup{number: n, label: filepath.Base(f), args: []string{f}})
		}
		return out, nil
	}
	byNumber := map[string][]string{}
	for _, f := range files {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "input_"), ".npy")
		i := strings.LastIndexByte(base, '_')
		digits := base[i+1:]
		k, err := strconv.Atoi(digits)
		if i <= 0 || err != nil || k < 0 || k >= len(inputs) || !allDigits(digits) || len(digits) > 1 && digits[0] == '0' {
			return nil, fmt.Errorf("%s: a model of %d inputs takes input_NNN_K.npy, K from 0 to %d for its inputs in order (%s)", f, len(inputs), len(inputs)-1, strings.Join(inputs, ", "))
		}
		n := base[:i]
		if byNumber[n] == nil {
			byNumber[n] = make([]string, len(inputs))
		}
		if byNumber[n][k] != "" {
			return nil, fmt.Errorf("%s: vector %s has two files for input %d: %s and %s", dir, n, k, filepath.Base(byNumber[n][k]), filepath.Base(f))
		}
		byNumber[n][k] = f
	}
	numbers := make([]string, 0, len(byNumber))
	for n := range byNumber {
		numbers = append(numbers, n)
	}
	sort.Strings(numbers)
	for _, n := range numbers {
		g := vectorGroup{number: n, label: "input_" + n}
		for k, f := range byNumber[n] {
			if f == "" {
				return nil, fmt.Errorf("%s: vector %s has no input_%s_%d.npy for input %q", dir, n, n, k, inputs[k])
			}
			g.args = append(g.args, inputs[k]+"="+f)
		}
		out = append(out, g)
	}
	return out, nil
}

// allDigits reports a non-empty run of decimal digits.
func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func readNpy(path string) (*graph.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return npy.Read(f)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// listSome joins the first n of names, saying how many more there are.
// mismatch is where one vector's outputs differ from what they were
// compared with: the first differing output, its first differing element,
// the two values there, how many of its elements differ and by how much at
// most.
type mismatch struct {
	Vector     string    `json:"vector"`
	Output     string    `json:"output"`
	Against    string    `json:"against"` // the reference interpreter, or output_NNN.npy
	Index      int       `json:"index"`
	Got        jsonFloat `json:"got"`
	Want       jsonFloat `json:"want"`
	Differ     int       `json:"elements_differ"`
	Elements   int       `json:"elements"`
	MaxAbsDiff jsonFloat `json:"max_abs_diff"`
}

// jsonFloat is a float64 that --json can always print: NaN and the
// infinities, which encoding/json refuses (review finding: a NaN output
// lost the whole report), are the strings "NaN", "Infinity" and
// "-Infinity", as in protobuf's JSON mapping.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	// JSON has no non-finite numbers: strings, as in protobuf's JSON
	// mapping (README).
	switch {
	case math.IsNaN(v):
		return json.Marshal("NaN")
	case math.IsInf(v, 1):
		return json.Marshal("Infinity")
	case math.IsInf(v, -1):
		return json.Marshal("-Infinity")
	}
	return json.Marshal(v)
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64)
		*f = jsonFloat(v)
		return err
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*f = jsonFloat(v)
	return err
}

// firstMismatch compares got with want output by output and describes the
// first output that differs (nil when none does, or the shapes are not
// comparable element by element).
func firstMismatch(names []string, got, want []*graph.Data, against string) *mismatch {
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g == nil || w == nil {
			continue
		}
		if ok, _ := pipeline.CompareModel(g, w); ok {
			continue
		}
		m := &mismatch{Against: against, Index: -1, Elements: w.Len()}
		if i < len(names) {
			m.Output = names[i]
		}
		if g.Len() != w.Len() {
			return m
		}
		scale := 0.0 // CompareModel's: floats within 1e-5 of the tensor's largest magnitude
		for j := 0; j < w.Len() && !w.DType.IsInt(); j++ {
			if b := math.Abs(w.Float(j)); !math.IsInf(b, 0) && !math.IsNaN(b) {
				scale = math.Max(scale, b)
			}
		}
		for j := 0; j < g.Len(); j++ {
			a, b := g.Float(j), w.Float(j)
			if a == b || math.IsNaN(a) && math.IsNaN(b) {
				continue
			}
			// CompareModel's rule: an infinity equals only itself (the
			// tolerance of an infinite reference is infinite; session 48
			// review: such outputs were reported as "differs in size").
			if d := math.Abs(a - b); !w.DType.IsInt() && !math.IsNaN(d) && !math.IsInf(d, 0) && d <= 1e-5*math.Max(math.Abs(b), scale)+1e-6 {
				continue // within the float tolerance
			}
			m.Differ++
			if d := math.Abs(a - b); d > float64(m.MaxAbsDiff) || math.IsNaN(d) {
				m.MaxAbsDiff = jsonFloat(d)
			}
			if m.Index < 0 {
				m.Index, m.Got, m.Want = j, jsonFloat(a), jsonFloat(b)
			}
		}
		return m
	}
	return nil
}

// String is the mismatch as the table and JUnit say it.
func (m mismatch) String() string {
	if m.Index < 0 {
		return fmt.Sprintf("%s: output %s differs in size from %s's", m.Vector, m.Output, m.Against)
	}
	return fmt.Sprintf("%s: output %s[%d] is %g where %s has %g (%d of %d elements differ, by at most %g)",
		m.Vector, m.Output, m.Index, m.Got, m.Against, m.Want, m.Differ, m.Elements, m.MaxAbsDiff)
}

func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}
