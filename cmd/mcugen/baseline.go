package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/internal/fileio"
)

// A bench baseline is an earlier `mcugen bench --json` report. Every metric
// bench measures is exact and repeatable (QEMU's instruction count, the
// planned arena, the linked image's sizes), so a CI job can hold a model
// change to it with no noise allowance at all.

// baselineMetrics are the figures of one case that --baseline compares.
type baselineMetrics struct {
	Instructions int64 `json:"instructions"`
	ArenaBytes   int   `json:"arena_bytes"`
	FlashBytes   int   `json:"flash_bytes"`
	RAMBytes     int   `json:"ram_bytes"`
	// StackBytes is 0 in reports from before bench measured the stack: then
	// it is not compared.
	StackBytes int64 `json:"stack_bytes,omitempty"`
}

// regression is one metric of one case that grew past --max-increase.
type regression struct {
	Metric   string  `json:"metric"`
	Baseline int64   `json:"baseline"`
	Current  int64   `json:"current"`
	Percent  float64 `json:"change_percent"`
	Allowed  float64 `json:"allowed_percent"`
	Model    string  `json:"-"`
	Board    string  `json:"-"`
	// Against is the baseline case's model where it is not Model's path
	// (a moved checkout, matched by its trailing path), and Other says its
	// file's SHA-256 differs from this one's: another model, or a changed one.
	Against string `json:"baseline_model,omitempty"`
	Other   bool   `json:"baseline_model_differs,omitempty"`
}

// benchBaseline is a loaded report, its cases keyed by board and model.
type benchBaseline struct {
	path  string
	cases []benchResult
	used  []bool
	// compiler is this run's (benchResult.Compiler): a case built by
	// another compiler is not the same case.
	compiler string
	// errored marks the cases this run attempted and could not measure:
	// they are its errors, not cases it left out (CI journey).
	errored []bool
	// failed are the baseline's own errors: cases it could not measure,
	// which are no figures to hold a run to, but not absent either.
	failed []benchResult
}

// failedThere is the baseline's error for model on board, or "".
func (bl *benchBaseline) failedThere(model, board string) string {
	if i, ok := findCase(bl.failed, bl.compiler, model, board); ok {
		return bl.failed[i].Error
	}
	return ""
}

// markErrored notes that this run's case of model on board stopped with an
// error.
func (bl *benchBaseline) markErrored(model, board string) {
	if i, ok := bl.find(model, board); ok {
		if bl.errored == nil {
			bl.errored = make([]bool, len(bl.cases))
		}
		bl.errored[i] = true
	}
}

// loadBaseline reads a bench --json report. Anything else (another command's
// JSON, a truncated file, a report of failed cases only) is refused here,
// before any measuring, with the file named.
func loadBaseline(path string) (*benchBaseline, error) {
	// Bounded, and a device or FIFO refused (adversarial journey:
	// --baseline /dev/zero read until memory ran out).
	b, err := fileio.ReadRegular(path, 256<<20)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, unwrapPath(err))
	}
	var report struct {
		Results *[]json.RawMessage `json:"results"`
	}
	notBench := "--baseline %s: not a `mcugen bench --json` report: "
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a BOM an editor added (records files take it too)
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&report); err != nil {
		// Said as JSON, not as Go's types (review: "cannot unmarshal
		// array into Go value of type struct { Results ... }").
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return nil, fmt.Errorf(notBench+"it is a JSON %s, where bench writes an object", path, te.Value)
			}
			return nil, fmt.Errorf(notBench+"its %q is a JSON %s, where bench writes a list", path, te.Field, te.Value)
		}
		return nil, fmt.Errorf(notBench+"%v", path, err)
	}
	// One report: two concatenated, or a report with garbage after it, is
	// not what bench wrote (the records parser refuses them too).
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf(notBench+"data after the JSON object", path)
	}
	if report.Results == nil {
		return nil, fmt.Errorf(notBench+"it has no \"results\" list", path)
	}
	bl := &benchBaseline{path: path}
	for i, raw := range *report.Results {
		// A test or run report has results too: the sizes tell them apart.
		var keys map[string]json.RawMessage
		var r benchResult
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, fmt.Errorf(notBench+"result %d: %v", path, i, err)
		}
		for _, key := range []string{"model", "board", "instructions", "arena_bytes", "flash_bytes", "ram_bytes"} {
			// null read as 0 (flash 0 -> 7,992 a regression) or as no
			// count (the gate off): neither is what bench wrote.
			if v, ok := keys[key]; !ok || string(bytes.TrimSpace(v)) == "null" {
				return nil, fmt.Errorf(notBench+"result %d has no %q", path, i, key)
			}
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			// Said as bench's figures, not as Go's struct fields (a
			// review finding: "cannot unmarshal string into Go struct
			// field benchResult.instructions of type int64").
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				want := "a whole number"
				if te.Type != nil && te.Type.Kind() == reflect.String {
					want = "text"
				}
				return nil, fmt.Errorf(notBench+"result %d: %q is a %s, where bench writes %s", path, i, te.Field, te.Value, want)
			}
			return nil, fmt.Errorf(notBench+"result %d: %v", path, i, err)
		}
		if r.Model == "" || r.Board == "" {
			return nil, fmt.Errorf("--baseline %s: result %d has no model or board", path, i)
		}
		if r.Error != "" {
			bl.failed = append(bl.failed, r) // no figures to hold to
			continue
		}
		if r.ArenaBytes < 0 || r.FlashBytes < 0 || r.RAMBytes < 0 || r.StackBytes < -1 { // stack -1: not measured
			return nil, fmt.Errorf("--baseline %s: result %d (%s on %s) has a negative size", path, i, r.Model, r.Board)
		}
		// bench writes a count, or -1 where the board has no emulator: 0
		// or another negative number would turn the instruction gate off.
		if r.Instructions == 0 || r.Instructions < -1 {
			return nil, fmt.Errorf("--baseline %s: result %d (%s on %s) has instructions %d: want a count, or -1 where the board counts none", path, i, r.Model, r.Board, r.Instructions)
		}
		for _, c := range bl.cases {
			if c.Model == r.Model && c.Board == r.Board {
				return nil, fmt.Errorf("--baseline %s: result %d: %s on %s is there twice", path, i, r.Model, r.Board)
			}
		}
		bl.cases = append(bl.cases, r)
	}
	if len(bl.cases) == 0 {
		return nil, fmt.Errorf("--baseline %s: no measured case in it (every result is an error)", path)
	}
	bl.used = make([]bool, len(bl.cases))
	return bl, nil
}

// find is the baseline case for model on board: the same path if there is
// one, else the one case whose path ends in the most of model's trailing
// components, the file name at least (CI checkouts move: main's
// /ws1/d1/model.tflite is a pull request's /ws2/pr/d1/model.tflite).
func (bl *benchBaseline) find(model, board string) (int, bool) {
	return findCase(bl.cases, bl.compiler, model, board)
}

// findCase is find over cases built by compiler.
func findCase(cases []benchResult, compiler, model, board string) (int, bool) {
	best, bestLen, ties := -1, 0, 0
	for i, r := range cases {
		if r.Board != board || r.Compiler != compiler {
			continue
		}
		if r.Model == model {
			return i, true
		}
		switch n := commonTail(r.Model, model); {
		case n > bestLen:
			best, bestLen, ties = i, n, 1
		case n == bestLen && n > 0:
			ties++
		}
	}
	return best, ties == 1
}

// commonTail counts the trailing path components a and b share.
func commonTail(a, b string) int {
	as := strings.Split(filepath.ToSlash(filepath.Clean(a)), "/")
	bs := strings.Split(filepath.ToSlash(filepath.Clean(b)), "/")
	n := 0
	for n < len(as) && n < len(bs) && as[len(as)-1-n] == bs[len(bs)-1-n] {
		n++
	}
	return n
}

// compare fills r's baseline figures and returns the metrics that grew more
// than allowed percent. Instructions are compared only where both runs
// counted them (boards without an emulator report -1).
func (bl *benchBaseline) compare(r *benchResult, allowed float64) []regression {
	i, ok := bl.find(r.Model, r.Board)
	if !ok {
		r.BaselineError = bl.failedThere(r.Model, r.Board)
		return nil
	}
	bl.used[i] = true
	b := bl.cases[i]
	r.Baseline = &baselineMetrics{Instructions: b.Instructions, ArenaBytes: b.ArenaBytes, FlashBytes: b.FlashBytes, RAMBytes: b.RAMBytes, StackBytes: b.StackBytes}
	var out []regression
	check := func(metric string, base, cur int64) {
		if base < 0 || cur < 0 {
			return
		}
		pct := 0.0
		if base > 0 {
			pct = 100 * float64(cur-base) / float64(base)
		} else if cur > 0 {
			pct = 100
		}
		// Exact integers: with no allowance any growth fails; otherwise
		// growth up to the allowance passes.
		if cur > base && (allowed == 0 || pct > allowed) {
			g := regression{Metric: metric, Baseline: base, Current: cur, Percent: pct, Allowed: allowed, Model: r.Model, Board: r.Board}
			if b.Model != r.Model {
				g.Against = b.Model
				g.Other = b.ModelSHA256 != "" && r.ModelSHA256 != "" && b.ModelSHA256 != r.ModelSHA256
			}
			out = append(out, g)
		}
	}
	if b.Instructions > 0 && r.Instructions > 0 {
		check("instructions", b.Instructions, r.Instructions)
	}
	check("arena_bytes", int64(b.ArenaBytes), int64(r.ArenaBytes))
	check("flash_bytes", int64(b.FlashBytes), int64(r.FlashBytes))
	check("ram_bytes", int64(b.RAMBytes), int64(r.RAMBytes))
	if b.StackBytes > 0 && r.StackBytes > 0 {
		check("stack_bytes", b.StackBytes, r.StackBytes)
	}
	r.Regressions = out
	return out
}

// compilerNote says, when the baseline's cases were built by another
// compiler than this run's (bench --cc), that they are why none matched.
func (bl *benchBaseline) compilerNote() string {
	name := func(c string) string {
		if c == "" {
			return "gcc"
		}
		return c
	}
	others := map[string]bool{}
	for _, r := range bl.cases {
		if r.Compiler != bl.compiler {
			others[name(r.Compiler)] = true
		}
	}
	if len(others) == 0 {
		return ""
	}
	return fmt.Sprintf(": its cases were built by %s, this run's by %s (--cc)", strings.Join(slices.Sorted(maps.Keys(others)), " and "), name(bl.compiler))
}

// matchedAny reports whether any case of the run was found in the baseline.
func (bl *benchBaseline) matchedAny() bool {
	for _, u := range bl.used {
		if u {
			return true
		}
	}
	return false
}

// unmeasured names the baseline's cases that this run did not measure and
// did not try.
func (bl *benchBaseline) unmeasured() []string {
	var out []string
	for i, r := range bl.cases {
		if !bl.used[i] && (bl.errored == nil || !bl.errored[i]) {
			out = append(out, fmt.Sprintf("%s on %s", displayPath(r.Model), r.Board))
		}
	}
	return out
}

// change is the table's "vs baseline" cell: the instruction count's change,
// or what else moved.
func (r *benchResult) change() string {
	b := r.Baseline
	if b == nil && r.BaselineError != "" {
		return "failed there"
	}
	if b == nil {
		return "new"
	}
	if b.Instructions > 0 && r.Instructions > 0 {
		d := r.Instructions - b.Instructions
		s := fmt.Sprintf("%+.2f%%", 100*float64(d)/float64(b.Instructions))
		switch {
		case d == 0:
			s = "="
		case s == "+0.00%" || s == "-0.00%":
			// Too small for two decimals (CI journey: 18 fewer of
			// 882,851 showed as -0.00%): the count itself.
			s = fmt.Sprintf("%+d", d)
		}
		return s + sizeChanges(b, r)
	}
	return "-" + sizeChanges(b, r)
}

// sizeChanges lists the sizes that moved, as " arena +64 B".
func sizeChanges(b *baselineMetrics, r *benchResult) string {
	var parts []string
	for _, m := range []struct {
		name      string
		base, cur int
	}{{"arena", b.ArenaBytes, r.ArenaBytes}, {"stack", int(b.StackBytes), int(r.StackBytes)}, {"flash", b.FlashBytes, r.FlashBytes}, {"RAM", b.RAMBytes, r.RAMBytes}} {
		if m.cur != m.base && (m.name != "stack" || (m.base > 0 && m.cur > 0)) {
			sign := ""
			if m.cur > m.base {
				sign = "+"
			}
			parts = append(parts, fmt.Sprintf("%s %s%s B", m.name, sign, comma(int64(m.cur-m.base))))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (g regression) String() string {
	allowed := "any growth fails"
	if g.Allowed > 0 {
		allowed = fmt.Sprintf("allowed +%g%%", g.Allowed)
	}
	against := ""
	if g.Against != "" {
		// Say which case it was held to: two models of one file name in
		// different directories matched each other, unnamed (user-journey
		// finding).
		against = "; against the baseline's " + g.Against
		if g.Other {
			against += ", whose SHA-256 differs"
		}
	}
	pct := fmt.Sprintf("%+.2f%%", g.Percent)
	if (pct == "+0.00%" || pct == "-0.00%") && g.Percent != 0 {
		// 100 more of 2.5 M read as "+0.00%" (review finding).
		pct = fmt.Sprintf("%+.2g%%", g.Percent)
	}
	return fmt.Sprintf("%s on %s: %s %s -> %s (%s; %s%s)", displayPath(g.Model), g.Board, g.Metric, comma(g.Baseline), comma(g.Current), pct, allowed, against)
}

// displayPath is p relative to the working directory when it lies inside
// it (the path a CI script typed, telling apart two model.tflite), else
// its file name.
func displayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return filepath.Base(p)
}

// shortNames gives each path the fewest trailing components that tell it
// apart from the others (model.tflite alone; d1/model.tflite beside
// d2/model.tflite), for tables and reports.
func shortNames(paths []string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		parts := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
		for n := 1; n <= len(parts); n++ {
			unique := true
			for _, q := range paths {
				if q != p && commonTail(p, q) >= n {
					unique = false
					break
				}
			}
			if unique || n == len(parts) {
				out[p] = strings.Join(parts[len(parts)-n:], "/")
				break
			}
		}
	}
	return out
}
