package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
)

// tempNpy writes d to name in a test's temporary directory and returns its path.
func tempNpy(t *testing.T, name string, d *graph.Data) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := writeNpy(p, d); err != nil {
		t.Fatal(err)
	}
	return p
}

// A float input far outside the range the calibration gave the int8 input
// saturates: run says so (data scaled 0..255 where the calibration saw
// about -1..1 matched the reference and meant nothing), and keeps quiet for
// data inside it.
func TestRunWarnsSaturatedInput(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	big := &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 16, 16}, F: make([]float32, 768)}
	for i := range big.F {
		big.F[i] = 1000 + float32(i%7)
	}
	in := tempNpy(t, "big.npy", big)
	code, _, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", in)
	want := "mcugen: warning: " + in + `: input "image": 768 of its 768 values (100.0%) lie outside [`
	if code != 0 || !strings.Contains(errs, want) || !strings.Contains(errs, "and saturate: is the data scaled as the calibration data was?") {
		t.Errorf("exit %d, stderr %q; want a line starting %q", code, errs, want)
	}
	zero := tempNpy(t, "zero.npy", &graph.Data{DType: graph.Float32, Shape: []int{1, 3, 16, 16}, F: make([]float32, 768)})
	code, _, errs = mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", zero)
	if code != 0 || strings.Contains(errs, "saturate") {
		t.Errorf("zeros: exit %d, stderr %q", code, errs)
	}
}

// eval -o and run --out refuse, before any work, a directory where an
// output's file would replace one of the --input files (robustness
// journey: an input named as the output was overwritten in silence).
func TestOutputsSpareInputs(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	// mlp.onnx's output is Sigmoid_7_out0: an input file of that name.
	in := filepath.Join(dir, "Sigmoid_7_out0.npy")
	if err := writeNpy(in, graph.NewData(graph.Float32, []int{1, 64})); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(in)
	for _, args := range [][]string{
		{"eval", model, "--input", in, "-o", dir},
		{"run", model, "--board", "host", "--input", "features=" + in, "--out", dir},
	} {
		code, _, errs := mcugen(t, args...)
		oneErrorLine(t, args[0], code, errs, 2, "the output Sigmoid_7_out0.npy would replace the input file "+in, "name another directory")
		if after, _ := os.ReadFile(in); string(after) != string(before) {
			t.Fatalf("%s replaced its input", args[0])
		}
	}
	// Another directory is fine.
	if code, _, errs := mcugen(t, "eval", model, "--input", in, "-o", filepath.Join(dir, "out")); code != 0 {
		t.Errorf("eval to another directory: exit %d: %s", code, errs)
	}
}

// run, test and bench refuse a --target the host's gcc cannot build before
// building (robustness journey: neon on x86-64 ended in gcc's
// "arm_neon.h: No such file" under a deleted temporary path); compile
// still writes it, for another compiler.
func TestHostTargetRunnable(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, cmd := range []string{"run", "bench"} {
		code, _, errs := mcugen(t, cmd, model, "--board", "host", "--target", "mve")
		oneErrorLine(t, cmd, code, errs, 2, "--target mve: the host's gcc ("+runtime.GOARCH+") cannot build it", "--board mps3-an547")
	}
	code, _, errs := mcugen(t, "test", model, "--board", "host", "--target", "dsp", "--random", "1")
	if code != 1 || !strings.Contains(errs, "--target dsp: the host's gcc") {
		t.Errorf("test: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := mcugen(t, "compile", model, "--board", "host", "--target", "mve", "-o", filepath.Join(t.TempDir(), "c")); code != 0 {
		t.Errorf("compile: exit %d: %s", code, errs)
	}
}

// A structural defect in a model with a dynamic dimension does not get the
// "bind them with --shape" hint (robustness journey: a tensor used before
// it is defined sent the user to --shape); a size error still does.
func TestShapeHintOnlyForSizes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, build func(b *onnx.Builder)) string {
		b := onnx.NewBuilder("m", 13, 1)
		build(b)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Model().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dangling := write("dangling.onnx", func(b *onnx.Builder) {
		x := b.Input("x", graph.Float32, -1, 4)
		g := b.Model().Graph
		g.Nodes = append(g.Nodes, &onnx.Node{Name: "add0", OpType: "Add", Input: []string{x, "ghost"}, Output: []string{"y"}})
		b.Output("y", graph.Float32)
	})
	code, _, errs := mcugen(t, "inspect", dangling)
	if code != 1 || !strings.Contains(errs, `dimension "N" (axis 0) set to 1`) || !strings.Contains(errs, `input "ghost" is not defined before use`) || strings.Contains(errs, "bind them with --shape") {
		t.Errorf("dangling: exit %d, stderr %q", code, errs)
	}
}

// A QDQ model's QuantizeLinear rounds ties to even, as ONNX Runtime runs it,
// also once mcugen folds it into the int8 graph (API journey: folding made
// it half away from zero). x → Q(0.5, 0) → DQ → Relu → Q(0.5, 0) → DQ:
// by hand, 0.25, 0.75, 1.25, -0.25 are 0.5, 1.5, 2.5, -0.5 steps, which
// round to 0, 2, 2, 0 (half away from zero: 1, 2, 3, -1), so y is
// 0, 1, 1, 0 (half away: 0.5, 1, 1.5, 0).
func TestQDQInputRoundsHalfToEven(t *testing.T) {
	dir := t.TempDir()
	b := onnx.NewBuilder("ties", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	s := b.Scalar("s", graph.Float32, 0.5)
	z := b.Scalar("z", graph.Int8, 0)
	q := b.Node("QuantizeLinear", []string{x, s, z})
	r := b.Node("Relu", []string{b.Node("DequantizeLinear", []string{q, s, z})})
	q2 := b.Node("QuantizeLinear", []string{r, s, z})
	g := b.Model().Graph
	g.Nodes = append(g.Nodes, &onnx.Node{Name: "out", OpType: "DequantizeLinear", Input: []string{q2, s, z}, Output: []string{"y"}})
	b.Output("y", graph.Float32)
	model := filepath.Join(dir, "ties.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "x.npy")
	if err := writeNpy(in, &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{0.25, 0.75, 1.25, -0.25}}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"eval", model, "--input", in, "-o", filepath.Join(dir, "eval")},
		{"run", model, "--board", "host", "--input", in, "--out", filepath.Join(dir, "run")}} {
		code, _, errs := mcugen(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
		f, err := os.Open(filepath.Join(dir, args[0], "y.npy"))
		if err != nil {
			t.Fatal(err)
		}
		y, err := npy.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := []float32{0, 1, 1, 0}; fmt.Sprint(y.F) != fmt.Sprint(want) {
			t.Errorf("%s: y = %v, want %v", args[0], y.F, want)
		}
	}
}

// boards --show says where the weights and the arena go on a board whose
// regions list only code and data (docs journey: it said "holds code" and
// "holds data", and nothing of the defaults).
func TestBoardsShowDefaultRoles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "acme.star")
	src := `board(
    name = "acme-m4",
    inherits = "cortex-m4f",
    memory = [
        region(name = "FLASH", origin = 0x08000000, length = 1048576, holds = ["code"]),
        region(name = "RAM", origin = 0x20000000, length = 131072, holds = ["data"]),
    ],
)
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mcugen(t, "boards", "--boards", file, "--show", "acme-m4")
	if code != 0 || !strings.Contains(out, "holds code, weights (by default)") || !strings.Contains(out, "holds data, arena (by default)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A prefix over 63 characters is a usage error with a shorter one offered
// (robustness journey: 5,000 characters failed at the file's creation);
// -o through a link to nothing yet makes the directory where it points
// (it ended in a raw rename error).
func TestLongPrefixAndDanglingOut(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	long := strings.Repeat("a", 64)
	code, _, errs := mcugen(t, "compile", model, "--prefix", long, "-o", filepath.Join(dir, "x"))
	oneErrorLine(t, "--prefix", code, errs, 2, "is 64 characters long; at most 63", `"`+strings.Repeat("a", 57)+`" would do`)
	if code, _, errs := mcugen(t, "compile", model, "--prefix", strings.Repeat("b", 63), "-o", filepath.Join(dir, "y")); code != 0 {
		t.Errorf("63 characters: exit %d: %s", code, errs)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, "compile", model, "-o", link); code != 0 {
		t.Fatalf("dangling -o: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "target", "mlp.h")); err != nil {
		t.Errorf("not written where the link points: %v", err)
	}
}

// A tensor name with a control character is quoted where it is printed on
// a line of its own; others are printed as they are.
func TestShownNames(t *testing.T) {
	for in, want := range map[string]string{"a\nb\x1b[31m": `"a\nb\x1b[31m"`, "x:0": "x:0", "é/y": "é/y"} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %s, want %s", in, got, want)
		}
	}
}

// A QEMU machine a board file names and QEMU lacks is reported as the
// board's, with its file and line (robustness journey: the error named
// the model and "printed no harness output").
func TestUnknownQEMUMachine(t *testing.T) {
	needQEMU(t)
	file := filepath.Join(t.TempDir(), "z.star")
	if err := os.WriteFile(file, []byte("board(\n    name = \"z\",\n    inherits = \"mps2-an386\",\n    qemu = qemu(machine = \"nosuchmachine\"),\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, _, errs := mcugen(t, "run", model, "--boards", file, "--board", "z")
	oneErrorLine(t, "run", code, errs, 1, "board z ("+file+":1): qemu-system-arm has no machine \"nosuchmachine\"")
}

// test --json counts vectors and model/board cases apart (CI journey: an
// errored case counted as a failed vector): one good model and one that
// cannot be read give 4 vectors, all passed, and 2 cases, 1 with an error.
func TestTestJSONUnits(t *testing.T) {
	good, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	bad := filepath.Join(t.TempDir(), "bad.tflite")
	if err := os.WriteFile(bad, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := mcugen(t, "test", good, bad, "--board", "host", "--random", "1", "--json")
	var rep struct {
		Vectors         int `json:"vectors"`
		VectorsPassed   int `json:"vectors_passed"`
		VectorsFailed   int `json:"vectors_failed"`
		ModelBoardCases int `json:"model_board_cases"`
		CasesWithErrors int `json:"cases_with_errors"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	// --random 1 runs one random vector and the three extremes.
	if rep.Vectors != 4 || rep.VectorsPassed != 4 || rep.VectorsFailed != 0 || rep.ModelBoardCases != 2 || rep.CasesWithErrors != 1 {
		t.Errorf("summary %+v", rep)
	}
}

// A flash budget below the constants alone is short by the measured code
// and constants, not by them and an estimate of the code (CI journey:
// "28,320 B short" where the constants were 3,744 B over and the code
// measured 2 KB), and the same figure as a budget just above the
// constants gives (review finding: "72 B short" for the constants alone,
// then 45,688 B short with a budget 100 B larger).
func TestFlashBudgetShortByConstants(t *testing.T) {
	m := sharedModels(t)
	ad := filepath.Join(m, "ad", "ad01_int8.tflite")
	dir := t.TempDir()
	code, out, errs := mcugen(t, "compile", ad, "--board", "mps3-an547", "-o", filepath.Join(dir, "ok"), "--json")
	var rep struct {
		WeightsBytes int `json:"weights_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.WeightsBytes == 0 {
		t.Fatalf("exit %d, %v: %s", code, err, errs)
	}
	needs := map[int]string{}
	for _, d := range []int{-100, 100} {
		budget := rep.WeightsBytes + d
		code, _, errs = mcugen(t, "compile", ad, "--board", "mps3-an547", "--flash-budget", fmt.Sprint(budget), "-o", filepath.Join(dir, "no"))
		oneErrorLine(t, fmt.Sprint("budget ", budget), code, errs, 1, "for the model's code and constants (measured with the board's compiler at -O2;", fmt.Sprintf("%s B)", comma(int64(rep.WeightsBytes))))
		var need, short int
		_, after, _ := strings.Cut(errs, "needs ")
		fmt.Sscanf(strings.ReplaceAll(after, ",", ""), "%d", &need)
		_, after, _ = strings.Cut(errs, "B short")
		if i := strings.LastIndex(errs[:len(errs)-len(after)], "("); i >= 0 {
			fmt.Sscanf(strings.ReplaceAll(errs[i+1:], ",", ""), "%d", &short)
		}
		if need <= rep.WeightsBytes || need-budget != short {
			t.Errorf("budget %d: needs %d B, %d B short: want the code on top of the %d B of constants, and the difference", budget, need, short, rep.WeightsBytes)
		}
		needs[d] = fmt.Sprint(need)
	}
	if needs[-100] != needs[100] {
		t.Errorf("budgets 200 B apart need %s and %s B", needs[-100], needs[100])
	}
}

// The baseline column shows a change too small for two decimals as the
// count (CI journey: 18 fewer of 882,851 read -0.00%), and a baseline case
// that this run attempted and could not measure is its error, not a case
// "not in this run".
func TestBaselineSmallChangeAndErrors(t *testing.T) {
	r := benchResult{Instructions: 882833, Baseline: &baselineMetrics{Instructions: 882851}}
	if got := r.change(); got != "-18" {
		t.Errorf("change = %q, want -18", got)
	}
	m := sharedModels(t)
	ad := filepath.Join(m, "ad", "ad01_int8.tflite")
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	base := filepath.Join(t.TempDir(), "base.json")
	code, out, errs := mcugen(t, "bench", ad, mlp, "--board", "host", "--json")
	if code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	// AD's arena is 256 B: a 100 B budget stops it.
	code, _, errs = mcugen(t, "bench", ad, mlp, "--board", "host", "--ram-budget", "100", "--baseline", base)
	if code != 1 || strings.Contains(errs, "not in this run") || !strings.Contains(errs, "1 of 2 benchmarks failed") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// Review findings: -o through a chain of links to nothing is written where
// the last one points, and a loop of links is one clear line; --svg
// /dev/stdout redirected to a file of another kind is written through;
// bench with a host --target it cannot build still measures its other
// boards.
func TestReviewOutputs(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	for _, l := range [][2]string{{"chain1", "chain2"}, {"chain2", "sub/target"}, {"loop1", "loop2"}, {"loop2", "loop1"}} {
		if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := mcugen(t, "compile", model, "-o", filepath.Join(dir, "chain1")); code != 0 {
		t.Fatalf("chain: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "target", "mlp.h")); err != nil {
		t.Errorf("chain: not written where it ends: %v", err)
	}
	code, _, errs := mcugen(t, "compile", model, "-o", filepath.Join(dir, "loop1"))
	oneErrorLine(t, "loop", code, errs, 1, "a loop of symbolic links")

	log := filepath.Join(dir, "log.txt")
	if err := os.WriteFile(log, []byte("earlier lines\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildMcugen(t), "plan", model, "--svg", "/dev/stdout")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = f, &stderr
	err = cmd.Run()
	out := stderr.String()
	f.Close()
	if b, _ := os.ReadFile(log); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--svg /dev/stdout into a log: %v %s", err, out)
	}

	needQEMU(t)
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, stdout, errs := mcugen(t, "bench", cnn, "--board", "host,mps2-an386", "--target", "dsp")
	if code != 1 || !strings.Contains(stdout, "mps2-an386") || !strings.Contains(errs, "1 of 2 benchmarks failed") {
		t.Errorf("bench host and an386 with --target dsp: exit %d\n%s\n%s", code, stdout, errs)
	}
}
