package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// TestCase is one ONNX backend-test directory (model.onnx and
// test_data_set_0/{input,output}_N.pb) imported: the graph with its
// parameter inputs bound as constants, the remaining inputs by name, and the
// expected outputs in the order of Graph.Outputs.
type TestCase struct {
	Ops    []string // the model's ONNX op types, in node order
	Graph  *graph.Graph
	Inputs map[string]*graph.Data
	Want   []*graph.Data
}

// SkipError says why a test case is outside what mcugen handles (an
// unsupported op, data type or feature), as opposed to a defect.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return e.Reason }

// Short is the reason with "node NAME (Op): why" shortened to "Op: why",
// so that reports can group the cases by it.
func (e *SkipError) Short() string {
	msg := e.Reason
	if i := strings.Index(msg, "): "); i >= 0 && strings.HasPrefix(msg, "node ") {
		if j := strings.Index(msg, "("); j >= 0 && j < i {
			msg = msg[j+1:i] + ": " + msg[i+3:]
		}
	}
	return msg
}

// LoadTestCase reads and imports the backend test in dir. An error is a
// *SkipError when the case needs something mcugen does not support; Ops is
// filled in whenever the model decodes.
// wrongExpected are backend tests whose expected outputs are wrong in the
// release of the test data Debian ships (ONNX 1.12); LoadTestCase skips
// them with the reason.
var wrongExpected = map[string]string{
	"test_hannwindow":               "expected outputs computed with pi = 3.1415 (the window op is checked against hand-worked values in TestWindows)",
	"test_hannwindow_symmetric":     "expected outputs computed with pi = 3.1415",
	"test_hammingwindow":            "expected outputs computed with pi = 3.1415",
	"test_hammingwindow_symmetric":  "expected outputs computed with pi = 3.1415",
	"test_blackmanwindow":           "expected outputs computed with pi = 3.1415",
	"test_blackmanwindow_symmetric": "expected outputs computed with pi = 3.1415",
}

func LoadTestCase(dir string) (*TestCase, error) {
	tc := &TestCase{}
	if why, ok := wrongExpected[filepath.Base(dir)]; ok {
		return tc, &SkipError{Reason: "wrong expected outputs: " + why}
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return tc, err
	}
	m, err := Unmarshal(b)
	if err != nil {
		return tc, fmt.Errorf("decode: %w", err)
	}
	if m.Graph == nil {
		return tc, fmt.Errorf("model has no graph")
	}
	for _, n := range m.Graph.Nodes {
		tc.Ops = append(tc.Ops, n.OpType)
	}
	inits := map[string]bool{}
	for _, t := range m.Graph.Initializer {
		inits[t.Name] = true
	}
	var inNames []string
	for _, vi := range m.Graph.Input {
		if vi.Type == nil || vi.Type.NotTensor {
			return tc, &SkipError{"sequence, map or optional input"}
		}
		if !inits[vi.Name] {
			inNames = append(inNames, vi.Name)
		}
	}
	data := filepath.Join(dir, "test_data_set_0")
	inputs := map[string]*graph.Data{}
	for i, nm := range inNames {
		d, err := readPB(filepath.Join(data, fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return tc, fmt.Errorf("input %d: %w", i, err)
		}
		inputs[nm] = d
	}
	opts := Options{Shapes: map[string][]int{}, Consts: map[string]*graph.Data{}}
	for _, p := range ParamInputs(m) {
		if d, ok := inputs[p]; ok {
			opts.Consts[p] = d
			delete(inputs, p)
		}
	}
	for nm, d := range inputs {
		opts.Shapes[nm] = d.Shape
	}
	g, err := Import(filepath.Base(dir), m, opts)
	if err != nil {
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			return tc, &SkipError{ue.Msg}
		}
		return tc, fmt.Errorf("import: %w", err)
	}
	tc.Graph, tc.Inputs = g, inputs
	for i := range g.Outputs {
		d, err := readPB(filepath.Join(data, fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return tc, fmt.Errorf("output %d: %w", i, err)
		}
		tc.Want = append(tc.Want, d)
	}
	return tc, nil
}

func readPB(path string) (*graph.Data, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, d, err := ReadTensorProto(raw)
	if err != nil {
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			return nil, &SkipError{ue.Msg}
		}
		return nil, err
	}
	return d, nil
}
