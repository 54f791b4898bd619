package onnx_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/pipeline"
)

// sanitizedHostRun imports m, compiles it to C for the host under
// AddressSanitizer and UndefinedBehaviorSanitizer (-pedantic -Werror), runs
// the feeds and fails where the C differs from graph/interp. It skips in
// -short and where gcc is missing.
func sanitizedHostRun(t *testing.T, m *onnx.Model, name string, feeds []map[string]*graph.Data, timeout time.Duration) *pipeline.Execution {
	t.Helper()
	if testing.Short() {
		t.Skip("sanitizer build: not in -short")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	g, err := onnx.Import("m", m, onnx.Options{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	b, err := pipeline.LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := pipeline.CompileGraph(g, name, pipeline.Options{Board: b, Version: "test",
		CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-pedantic", "-Werror"}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Execute(feeds, t.TempDir(), timeout)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("the C differs from graph/interp: C %v, reference %v", x.Outputs[0], x.Reference[0])
	}
	return x
}
