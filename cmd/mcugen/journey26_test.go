package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Findings of session 26's user journeys that need no emulator.

// run takes its inputs from one source: --random 0 and --random beside
// --input were accepted and ignored.
func TestRunRandomRefused(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--random", "0"}, "--random 0: run needs at least one input"},
		{[]string{"--random", "5", "--input", "x.npy"}, "--random 5 and --input"},
		{[]string{"--random", "0", "--input", "x.npy"}, "--random 0 and --input"},
	} {
		code, _, stderr := mcugen(t, append([]string{"run", model, "--board", "mps2-an386"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("run %v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// tune runs one mode at a time: --merge beside --bazel wrote the targets,
// merged nothing and exited 0.
func TestTuneModesExclusive(t *testing.T) {
	dir := t.TempDir()
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, args := range [][]string{
		{"--merge", dir, "--bazel", filepath.Join(dir, "bz")},
		{"--measure", model, "--result", filepath.Join(dir, "r.json"), "--bazel", filepath.Join(dir, "bz")},
		{"--merge", dir, "--resume"},
	} {
		code, _, stderr := mcugen(t, append([]string{"tune", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "t.json")}, args...)...)
		if code != 2 || !strings.Contains(stderr, " and ") {
			t.Errorf("tune %v: exit %d, stderr %q; want a usage error naming both", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bz")); err == nil {
		t.Error("a refused run wrote the Bazel directory")
	}
}

// The records file is --out as well as --output (compile's and quantize's
// name for their output), and --bazel answers --json with one object.
func TestTuneOutAliasAndBazelJSON(t *testing.T) {
	dir := t.TempDir()
	model := "../../testdata/tflite/mlp_int8.tflite"
	code, stdout, stderr := mcugen(t, "tune", model, "--board", "mps2-an386", "--out", filepath.Join(dir, "t.json"),
		"--bazel", filepath.Join(dir, "bz"), "--trials", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Targets int    `json:"targets"`
		Build   string `json:"build_file"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Targets == 0 || got.Build != filepath.Join(dir, "bz", "BUILD.bazel") {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	// --merge of a directory whose results are all another model's is an
	// error, and writes no records file.
	res := filepath.Join(dir, "res")
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	foreign := `{"kernel": "Conv2D int8 1x9x9x9 #0", "target": "dsp", "core": "cortex-m4", "knobs": {"block_oc": 2}, "instructions": 100}`
	if err := os.WriteFile(filepath.Join(res, "result.json"), []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = mcugen(t, "tune", model, "--board", "mps2-an386", "--merge", res, "-o", filepath.Join(dir, "m.json"))
	if code != 1 || !strings.Contains(stderr, "none of its 1 result(s)") {
		t.Errorf("merge of foreign results: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.json")); err == nil {
		t.Error("an empty records file was written")
	}
}

// Every column of the boards table lines up, however long a board's
// Zephyr name (portenta-h7's pushed the FQBN column out of line).
func TestBoardsTableAligned(t *testing.T) {
	code, stdout, stderr := mcugen(t, "boards")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	col := strings.Index(lines[0], "arduino (fqbn)")
	if col < 0 {
		t.Fatalf("header %q", lines[0])
	}
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("the FQBN column does not start at %d: %q", col, l)
		}
	}
}

// inspect checks the compile flags it takes, as its --ir mode does: an
// unknown board or schedule set passed unremarked.
func TestInspectChecksCompileFlags(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--board", "nosuch"}, 2, `unknown board "nosuch"`},
		{[]string{"--target", "bogus"}, 2, "--target bogus: unknown schedule set"},
	} {
		code, stdout, stderr := mcugen(t, append([]string{"inspect", model}, c.args...)...)
		if code != c.code || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("inspect %v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
}

// Two spellings of one flag are the flag given twice: -o is --out, and
// tune's --out is its --output (run --out d1 -o d2 wrote d2 alone).
func TestFlagSpellingsGivenTwice(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", model, "--board", "host", "--out", "d1", "-o", "d2"}, "--out is given twice"},
		{[]string{"eval", model, "-o", "d1", "--out=d2"}, "--out is given twice"},
		{[]string{"tune", model, "--board", "mps2-an386", "--out", "a.json", "--output", "b.json"}, "--output is given twice"},
		{[]string{"tune", model, "--board", "mps2-an386", "-o", "a.json", "--out", "b.json"}, "--output is given twice"},
	} {
		code, _, stderr := mcugen(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// bench warns when the inference leaves under a tenth of the board's stack:
// IC tuned (Winograd's 9,504 B of tiles) on a board with a 10,600 B stack,
// which compile accepts (arrays plus 1,024 B of frames fit) and the run
// fills to over 90%. test reports the stack in --json and JUnit.
func TestBenchWarnsOfLittleStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs IC under QEMU")
	}
	needQEMU(t)
	ic := filepath.Join(sharedModels(t), "ic", "pretrainedResnet_quant.tflite")
	dir := t.TempDir()
	boardFile := filepath.Join(dir, "b.star")
	if err := os.WriteFile(boardFile, []byte("board(name = \"an386-small-stack\", inherits = \"mps2-an386\", stack_bytes = 10600)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Abs("../../tune/measure/testdata/mlperf_an386.json")
	code, stdout, stderr := mcugen(t, "bench", ic, "--board", "an386-small-stack", "--boards", boardFile, "--tuning", recs, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Results []benchResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("%v: %s", err, stdout)
	}
	st := rep.Results[0].StackBytes
	if st*10 <= 10600*9 || st > 10600 {
		t.Fatalf("stack %d B: the case needs over 90%% of 10,600 B", st)
	}
	if !strings.Contains(stderr, "of the board's 10,600 B stack (stack_bytes): under 10% left") {
		t.Errorf("no warning: %s", stderr)
	}
	code, stdout, stderr = mcugen(t, "test", ic, "--board", "an386-small-stack", "--boards", boardFile, "--tuning", recs, "--random", "0", "--json", "--junit", filepath.Join(dir, "j.xml"))
	if code != 0 || !strings.Contains(stdout, `"stack_bytes": `+strconv.FormatInt(st, 10)) {
		t.Errorf("test --json: exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	if j, _ := os.ReadFile(filepath.Join(dir, "j.xml")); !strings.Contains(string(j), "stack: "+comma(st)+" B") {
		t.Errorf("JUnit: %s", j)
	}
}
