// Package backendc holds the ONNX backend suite of the generated C: a
// package of its own, so that it runs beside pipeline's QEMU suites (go test
// runs packages in parallel) under its own timeout.
package backendc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
)

// needTools fails (in CI) or skips (locally) a test whose board's tools are
// missing, naming the package to install.
func needTools(t *testing.T, board string) {
	b, err := pipeline.LoadBoard(board, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range runner.Tools(b) {
		if _, err := runner.LookTool(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %v", err)
			}
			t.Skip(err.Error())
		}
	}
}

const onnxBackendRoot = "/usr/share/libonnx-testdata/data"

// TestONNXBackendC compiles every ONNX backend test that mcugen imports (the
// node tests and the small PyTorch models) to C for the host, builds it with
// AddressSanitizer and UndefinedBehaviorSanitizer, runs it on the test's own
// inputs and compares each output with the test's expected output: float
// within 1e-5 relative (1e-6 absolute near zero), integers exactly. The
// interpreter is checked against the same files in importer/onnx; this is the
// generated code's own check.
func TestONNXBackendC(t *testing.T) {
	if _, err := os.Stat(onnxBackendRoot); err != nil {
		t.Skipf("ONNX backend tests not installed (Debian package libonnx-testdata, %s)", onnxBackendRoot)
	}
	needTools(t, "host")
	b, err := pipeline.LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, sub := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		m, _ := filepath.Glob(filepath.Join(onnxBackendRoot, sub, "*", "model.onnx"))
		for _, p := range m {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	sort.Strings(dirs)
	if only := os.Getenv("ONNX_BACKEND_ONLY"); only != "" {
		// A developer's filter: the cases whose name holds the text.
		dirs = slices.DeleteFunc(dirs, func(d string) bool { return !strings.Contains(filepath.Base(d), only) })
		if len(dirs) == 0 {
			t.Fatalf("ONNX_BACKEND_ONLY=%q matches no case", only)
		}
	}
	if testing.Short() {
		var sub []string
		for i, d := range dirs {
			if i%10 == 0 {
				sub = append(sub, d)
			}
		}
		dirs = sub
	}
	var (
		mu                 sync.Mutex
		pass, skip, failed int
		skips              = map[string]int{}
		perDir             = map[string]int{}
	)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(d)) + "/" + filepath.Base(d)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			why, err := runBackendC(d, b)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failed++
				t.Errorf("%s: %v", name, err)
			case why != "":
				skip++
				skips[why]++
			default:
				pass++
				perDir[filepath.Base(filepath.Dir(d))]++
			}
		}()
	}
	wg.Wait()
	t.Logf("generated C: %d passed, %d failed, %d skipped of %d (passed: node %d, pytorch-converted %d, pytorch-operator %d, simple %d)",
		pass, failed, skip, len(dirs), perDir["node"], perDir["pytorch-converted"], perDir["pytorch-operator"], perDir["simple"])
	keys := make([]string, 0, len(skips))
	for k := range skips {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return skips[keys[i]] > skips[keys[j]] || skips[keys[i]] == skips[keys[j]] && keys[i] < keys[j]
	})
	for _, k := range keys {
		t.Logf("skip %4d  %s", skips[k], k)
	}
	if !testing.Short() && os.Getenv("ONNX_BACKEND_ONLY") == "" && (pass < 843 || perDir["node"] < 724) {
		t.Errorf("only %d backend tests pass in generated C (%d node tests), want at least 843 (724)", pass, perDir["node"])
	}
}

// runBackendC returns a reason when the case is outside what mcugen compiles
// (the importer or the interpreter declines it), or an error when the
// generated C fails it.
func runBackendC(dir string, b *boards.Board) (skip string, err error) {
	tc, err := onnx.LoadTestCase(dir)
	if err != nil {
		var se *onnx.SkipError
		if errors.As(err, &se) {
			return "import: " + truncate(se.Short(), 60), nil
		}
		return "", err
	}
	g := tc.Graph
	if len(g.Inputs) == 0 {
		return "no inputs (constant-folded)", nil
	}
	for _, n := range g.Nodes {
		if !interp.Supported(g, n) {
			return "interp: " + string(n.Op), nil
		}
	}
	s, err := pipeline.CompileGraph(g, filepath.Base(dir)+".onnx", pipeline.Options{Board: b, Version: "test", Prefix: "m",
		CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}})
	if err != nil {
		return "", fmt.Errorf("compile: %v", err)
	}
	tmp, err := os.MkdirTemp("", "onnxc")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	x, err := s.Execute([]map[string]*graph.Data{tc.Inputs}, tmp, time.Minute)
	if err != nil {
		return "", fmt.Errorf("run: %v", err)
	}
	for i := range s.Graph.Outputs {
		if msg := matchExpected(x.Outputs[0][i], tc.Want[i]); msg != "" {
			return "", fmt.Errorf("output %d: %s", i, msg)
		}
	}
	return "", nil
}

// matchExpected compares the C's output with the backend test's file by
// Compare's rule (integers exactly, floats within 1e-5 relative).
func matchExpected(got, want *graph.Data) string {
	if got.Len() != want.Len() {
		return fmt.Sprintf("%d elements, want %d", got.Len(), want.Len())
	}
	w := *want
	if want.DType != got.DType && want.DType != graph.Float32 && got.DType != graph.Float32 {
		w.DType = got.DType // both integer: an int64 file for an int32 or bool output
	}
	if ok, d := pipeline.Compare(got, &w); !ok {
		return fmt.Sprintf("max difference %g (got %v..., want %v...)", d, got.Float(0), want.Float(0))
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
