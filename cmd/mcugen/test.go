package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/pipeline"
)

type testCmd struct {
	Models []string `arg:"" help:"Model files." type:"path"`
	Shape  []string `help:"Bind a dynamic input dimension (repeatable)." placeholder:"NAME=DIMS" sep:"none"`
	compileFlags
	runFlags
	Random  int    `help:"Random input vectors per model, plus the extreme ones (all min, all max, alternating)." default:"10"`
	Vectors string `help:"Directory of input_NNN.npy (and expected output_NNN.npy) vectors; MODELDIR/vectors* is used when present." type:"path" placeholder:"DIR"`
	JSON    bool   `name:"json" help:"Print one JSON object."`
}

type testResult struct {
	Model          string `json:"model"`
	Board          string `json:"board"`
	Vectors        int    `json:"vectors"`
	Passed         int    `json:"passed"`
	Failed         int    `json:"failed"`
	Instructions   int64  `json:"instructions"`
	MatchReference bool   `json:"match_reference"`
	MatchExpected  *bool  `json:"match_expected,omitempty"`
	Error          string `json:"error,omitempty"`
}

func (c *testCmd) Run(e *env) error {
	var report struct {
		Cases   int          `json:"cases"`
		Passed  int          `json:"passed"`
		Failed  int          `json:"failed"`
		Results []testResult `json:"results"`
	}
	for _, model := range c.Models {
		for _, board := range strings.Split(c.Board, ",") {
			r := c.one(e, model, strings.TrimSpace(board))
			report.Results = append(report.Results, r)
			report.Cases += r.Vectors
			report.Passed += r.Passed
			report.Failed += r.Failed
			if r.Error != "" && r.Vectors == 0 {
				report.Cases++
				report.Failed++
			}
		}
	}
	if c.JSON {
		if err := e.printJSON(report); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "%-28s %-14s %8s %8s %14s  %s\n", "model", "board", "vectors", "passed", "instructions", "result")
		for _, r := range report.Results {
			verdict := "bit-exact"
			switch {
			case r.Error != "":
				verdict = "ERROR: " + r.Error
			case r.Failed > 0:
				verdict = "MISMATCH"
			}
			fmt.Fprintf(e.stdout, "%-28s %-14s %8d %8d %14s  %s\n", filepath.Base(r.Model), r.Board, r.Vectors, r.Passed, countString(r.Instructions), verdict)
		}
		fmt.Fprintf(e.stdout, "%d passed, %d failed\n", report.Passed, report.Failed)
	}
	if report.Failed > 0 {
		return fmt.Errorf("%d of %d cases failed", report.Failed, report.Cases)
	}
	return nil
}

func (c *testCmd) one(e *env, model, board string) testResult {
	r := testResult{Model: model, Board: board, Instructions: -1}
	fail := func(err error) testResult { r.Error = oneLine(err.Error()); return r }
	flags := c.compileFlags
	flags.Board = board
	opt, _, err := flags.options(e, &modelFlags{Model: model, Shape: c.Shape})
	if err != nil {
		return fail(err)
	}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		return fail(err)
	}
	vecs, expected, err := c.loadVectors(s, model)
	if err != nil {
		return fail(err)
	}
	vecs = append(vecs, pipeline.RandomInputs(s.Graph, c.Random, 7)...)
	vecs = append(vecs, pipeline.ExtremeInputs(s.Graph)...)
	dir, done, err := c.workDir()
	if err != nil {
		return fail(err)
	}
	defer done()
	x, err := s.Execute(vecs, dir, c.Timeout)
	if err != nil {
		return fail(err)
	}
	r.Vectors, r.Instructions, r.MatchReference = len(vecs), x.Instructions(), x.AllMatch()
	exp := true
	for v, m := range x.Match {
		if v < len(expected) && expected[v] != nil {
			for i, want := range expected[v] {
				if ok, _ := pipeline.Compare(x.Outputs[v][i], want); !ok {
					m, exp = false, false
				}
			}
		}
		if m {
			r.Passed++
		} else {
			r.Failed++
		}
	}
	if len(expected) > 0 {
		r.MatchExpected = &exp
	}
	return r
}

// loadVectors reads input_NNN.npy (and output_NNN.npy when present) from
// --vectors or from a vectors* directory beside the model.
func (c *testCmd) loadVectors(s *pipeline.State, model string) ([]map[string]*graph.Data, [][]*graph.Data, error) {
	dir := c.Vectors
	if dir == "" {
		for _, cand := range []string{"vectors", "vectors_int8", "vectors_float"} {
			d := filepath.Join(filepath.Dir(model), cand)
			if fileExists(filepath.Join(d, "input_000.npy")) && vectorsFit(s.Graph, d) {
				dir = d
				break
			}
		}
	}
	if dir == "" {
		return nil, nil, nil
	}
	ins, _ := filepath.Glob(filepath.Join(dir, "input_*.npy"))
	sort.Strings(ins)
	if len(ins) > 0 && len(s.Graph.UserInputs()) != 1 {
		return nil, nil, fmt.Errorf("%s: input_NNN.npy vectors need a single-input model", dir)
	}
	var vecs []map[string]*graph.Data
	var expected [][]*graph.Data
	for _, in := range ins {
		src := s.Graph
		if s.Float != nil {
			src = s.Float
		}
		vec, err := importer.BindInputs(src, []string{in})
		if err != nil {
			return nil, nil, err
		}
		fitInput(s.Graph, vec)
		vecs = append(vecs, vec)
		outFile := strings.Replace(in, "input_", "output_", 1)
		var want []*graph.Data
		if b, err := os.ReadFile(outFile); err == nil && len(s.Graph.UserOutputs()) == 1 && s.Float == nil {
			d, err := npy.Read(bytes.NewReader(b))
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", outFile, err)
			}
			d.Shape = s.Graph.Tensors[s.Graph.UserOutputs()[0]].Shape
			want = append(want, d)
		}
		expected = append(expected, want)
	}
	return vecs, expected, nil
}

// vectorsFit reports whether the first vector's dtype suits the model input.
func vectorsFit(g *graph.Graph, dir string) bool {
	f, err := os.Open(filepath.Join(dir, "input_000.npy"))
	if err != nil || len(g.UserInputs()) != 1 {
		return false
	}
	defer f.Close()
	d, err := npy.Read(f)
	return err == nil && d.DType == g.Tensors[g.UserInputs()[0]].DType
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
