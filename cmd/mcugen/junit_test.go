package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
)

// test --junit on the host: one case passes, one mismatches the output_000.npy
// written beside its input (all 100, which mlp_int8's reference does not
// give), one cannot be built (a RAM budget below AD's 256 B arena). The
// report has a suite per model, a case per board, and the counts, failure
// and error of each, as a JUnit reader parses them.
func TestTestJUnit(t *testing.T) {
	m := sharedModels(t)
	ad := filepath.Join(m, "ad", "ad01_int8.tflite")
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	dir := t.TempDir()
	vec := filepath.Join(dir, "vectors")
	if err := os.Mkdir(vec, 0o755); err != nil {
		t.Fatal(err)
	}
	in := graph.NewData(graph.Int8, []int{1, 16})
	out := graph.NewData(graph.Int8, []int{1, 8})
	for i := range out.I {
		out.I[i] = 100
	}
	for name, d := range map[string]*graph.Data{"input_000.npy": in, "output_000.npy": out} {
		f, err := os.Create(filepath.Join(vec, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := npy.Write(f, d); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	report := filepath.Join(dir, "reports", "junit.xml")

	// The mismatch and the error: exit 1, and the report is written anyway.
	code, _, stderr := mcugen(t, "test", mlp, "--board", "host", "--vectors", vec, "--random", "1", "--junit", report)
	if code != 1 {
		t.Fatalf("mismatch: exit %d, %s", code, stderr)
	}
	var rep junitReport
	if err := xml.Unmarshal([]byte(mustRead(t, report)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 1 || rep.Failures != 1 || rep.Errors != 0 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 1 {
		t.Fatalf("report %+v", rep)
	}
	c := rep.Suites[0].Cases[0]
	if c.Name != "host" || c.Classname != "mcugen.mlp_int8_tflite" || c.Failure == nil || c.Error != nil ||
		c.Failure.Message != "1 of 5 vectors mismatch the vectors' output_NNN.npy (the reference interpreter agrees with the firmware)" ||
		!strings.Contains(c.Failure.Body, "\nmismatching vectors: input_000.npy\ninput_000.npy: output act1_fc[") || c.SystemOut == nil ||
		!strings.Contains(c.SystemOut.Body, "\nvectors: 5, passed: 4, failed: 1") {
		t.Errorf("case %+v, failure %+v, out %+v", c, c.Failure, c.SystemOut)
	}

	code, _, stderr = mcugen(t, "test", ad, mlp, "--board", "host", "--random", "1", "--ram-budget", "100", "--junit", report)
	if code != 1 {
		t.Fatalf("error case: exit %d, %s", code, stderr)
	}
	rep = junitReport{}
	if err := xml.Unmarshal([]byte(mustRead(t, report)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 2 || rep.Failures != 0 || rep.Errors != 1 || len(rep.Suites) != 2 || rep.Suites[0].Name != "ad01_int8.tflite" ||
		rep.Suites[0].Errors != 1 || rep.Suites[0].Cases[0].Error == nil || !strings.Contains(rep.Suites[0].Cases[0].Error.Message, "needs 256 B for activations") ||
		rep.Suites[1].Errors != 0 || rep.Suites[1].Cases[0].Failure != nil || rep.Suites[1].Cases[0].Error != nil {
		t.Errorf("report %+v", rep)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "reports", ".mcugen-junit-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// An unwritable place is refused before anything runs.
	code, _, stderr = mcugen(t, "test", mlp, "--board", "host", "--junit", filepath.Join(ad, "x.xml"))
	if code != 1 || !strings.Contains(stderr, "--junit") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bad --junit: exit %d, %q", code, stderr)
	}
}
