package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/runner"
)

// oneErrorLine checks the CLI contract for an error: the exit code, one
// line "mcugen: ..." on stderr, and the phrases it must hold.
func oneErrorLine(t *testing.T, what string, code int, stderr string, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d (stderr %q)", what, code, wantCode, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "mcugen: ") {
		t.Errorf("%s: stderr %q is not one mcugen: line", what, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q does not say %q", what, stderr, w)
		}
	}
}

// A --vectors path that does not exist, is a file, or is a directory without
// input_NNN.npy is an error naming it, before any build: a typo must not
// switch the reference comparison off while the job stays green. A missing
// path, a file or a directory it cannot use exits 1, as a missing model
// does (and --tuning's, --boards', --baseline's and --merge's since session
// 42, which exited 2 as kong's usage errors).
func TestTestVectorsPath(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("no vectors here"), 0o644)
	missing := filepath.Join(dir, "nonexist")
	code, stdout, stderr := mcugen(t, "test", model, "--board", "host", "--vectors", missing)
	oneErrorLine(t, "missing --vectors", code, stderr, 1, "--vectors", missing)
	if stdout != "" {
		t.Errorf("missing --vectors: stdout %q: nothing may run", stdout)
	}
	code, _, stderr = mcugen(t, "test", model, "--board", "host", "--vectors", model)
	oneErrorLine(t, "--vectors FILE", code, stderr, 1, "--vectors", model, "not a directory")
	code, stdout, stderr = mcugen(t, "test", model, "--board", "host", "--vectors", empty, "--json")
	oneErrorLine(t, "--vectors without vectors", code, stderr, 1, "--vectors "+empty, "input_NNN.npy")
	if stdout != "" {
		t.Errorf("--vectors without vectors: stdout %q: nothing may run", stdout)
	}
}

// test picks the reference vectors beside a float model by the input the
// vectors are given for: with --calib mcugen quantizes the model, and the
// float vectors (quantized with mcugen's own input scale) drive it, never
// vectors_int8, which belong to TFLite's int8 model. AD has 32 float
// vectors; with --random 0 the 3 extreme vectors come on top: 35 cases.
func TestTestPicksVectorsByInputType(t *testing.T) {
	m := sharedModels(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	ad := filepath.Join(m, "ad", "ad01_fp32.tflite")
	calib := filepath.Join(m, "ad", "calib")
	code, out, errs := mcugen(t, "test", ad, "--board", "host", "--calib", calib, "--random", "0", "--json")
	var rep struct{ Cases, Passed, Failed int }
	json.Unmarshal([]byte(out), &rep)
	if code != 0 || rep.Cases != 35 || rep.Passed != 35 {
		t.Errorf("test ad01_fp32 --calib: exit %d, %d cases, %d passed (want 35 of 35)\n%s%s", code, rep.Cases, rep.Passed, clip(out), errs)
	}
	// The float model's expected outputs are not the quantized build's:
	// none is compared, and the report does not claim a match with them.
	if strings.Contains(out, "match_expected") {
		t.Errorf("test ad01_fp32 --calib reports match_expected though it compared no expected output:\n%s", clip(out))
	}

	// Only vectors_int8 beside the float model: one warning line that names
	// what is there, and the random and extreme vectors still run.
	dir := t.TempDir()
	os.Symlink(ad, filepath.Join(dir, "ad01_fp32.tflite"))
	os.Symlink(filepath.Join(m, "ad", "vectors_int8"), filepath.Join(dir, "vectors_int8"))
	code, out, errs = mcugen(t, "test", filepath.Join(dir, "ad01_fp32.tflite"), "--board", "host", "--calib", calib, "--random", "1", "--json")
	rep.Cases, rep.Passed = 0, 0
	json.Unmarshal([]byte(out), &rep)
	if code != 0 || rep.Cases != 4 || rep.Passed != 4 {
		t.Errorf("only vectors_int8: exit %d, %d cases, %d passed (want 4 of 4)\n%s%s", code, rep.Cases, rep.Passed, clip(out), errs)
	}
	if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "mcugen: warning:") || !strings.Contains(errs, "vectors_int8 holds int8") || !strings.Contains(errs, "float32 input") {
		t.Errorf("only vectors_int8: stderr %q: want one warning that vectors_int8 holds int8 and the input is float32", errs)
	}
}

// The arithmetic of batching, by hand: VWW float's 37 vectors of
// 96·96·3·4 = 110,592 B overflowed the AN386's 4,194,304 B by 765,888 B
// (4,960,192 B needed), so the firmware without vectors takes
// 4,960,192 − 37·110,592 = 868,288 B, and (4,194,304 − 868,288) / 110,592
// = 30.07: 30 vectors fit a build.
func TestVectorsThatFit(t *testing.T) {
	flash := func(needed, available uint64) *runner.FitError {
		return &runner.FitError{Board: "mps2-an386", Model: "vww_96_float", Overflows: []runner.RegionOverflow{
			{Region: "FLASH", Holds: []string{boards.HoldsCode, boards.HoldsWeights}, Needed: needed, Available: available}}}
	}
	if got := vectorsThatFit(flash(4960192, 4194304), 37, 110592); got != 30 {
		t.Errorf("VWW float: %d vectors fit, want 30", got)
	}
	// Without vectors the firmware would need 4,960,192 − 110,592 =
	// 4,849,600 B > 4,194,304: fewer vectors cannot help.
	if got := vectorsThatFit(flash(4960192, 4194304), 1, 110592); got != -1 {
		t.Errorf("firmware too large without vectors: %d, want -1", got)
	}
	// 1,000 B over with one vector of 2,000 B: fits without it, not with it.
	if got := vectorsThatFit(flash(11000, 10000), 1, 2000); got != 0 {
		t.Errorf("one vector too many: %d, want 0", got)
	}
	ram := &runner.FitError{Board: "b", Model: "m", Overflows: []runner.RegionOverflow{
		{Region: "RAM", Holds: []string{boards.HoldsData, boards.HoldsArena}, Needed: 9000, Available: 8000}}}
	if got := vectorsThatFit(ram, 10, 100); got != -1 {
		t.Errorf("RAM overflow: %d, want -1 (the vectors live in flash)", got)
	}
	err := vectorsDoNotFit(flash(4960192, 4194304), 37, 110592, "why")
	want := "vww_96_float with the 37 test vectors (4,091,904 B) does not fit the flash of mps2-an386 (765,888 B short): why"
	if err.Error() != want {
		t.Errorf("message:\n%s\nwant\n%s", err, want)
	}
}

// Vectors that do not fit the board's flash beside the firmware run in
// batches, one build each, and all pass. The board is an AN386 whose flash
// holds cnn_int8's firmware with about four of its 192-byte vectors; test
// --random 7 has ten (the seven and three extreme ones).
func TestTestBatchesVectors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware several times: skipped with -short")
	}
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, out, errs := mcugen(t, "run", model, "--board", "mps2-an386", "--random", "1", "--json")
	var one struct {
		FlashBytes int `json:"flash_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &one); code != 0 || err != nil || one.FlashBytes <= 0 {
		t.Fatalf("run with one vector: exit %d %v\n%s%s", code, err, out, errs)
	}
	flash := (one.FlashBytes + 3*192 + 100) &^ 3
	star := filepath.Join(t.TempDir(), "small.star")
	os.WriteFile(star, []byte(fmt.Sprintf(`board(
    name = "small-flash-m4",
    description = "an AN386 with %d B of flash",
    inherits = ["cortex-m4f", "mps2"],
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = %d, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 4 * MiB, holds = ["data", "arena"]),
    ],
    qemu = qemu(machine = "mps2-an386"),
)
`, flash, flash)), 0o644)
	code, out, errs = mcugen(t, "test", model, "--boards", star, "--board", "small-flash-m4", "--random", "7", "--json")
	var rep struct{ Cases, Passed, Failed int }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Cases != 10 || rep.Passed != 10 {
		t.Errorf("test on a small flash: exit %d, %d cases, %d passed (want 10 of 10): %v\n%s%s", code, rep.Cases, rep.Passed, err, out, errs)
	}
	if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "the 10 test vectors (1,920 B) do not fit small-flash-m4's flash") || !strings.Contains(errs, "firmware builds") {
		t.Errorf("stderr %q: want one warning that the 10 vectors (1,920 B) ran in several builds", errs)
	}
}

// needQEMU skips (under CI=true: fails) when the ARM cross compiler or QEMU
// is missing, naming the Debian package.
func needQEMU(t *testing.T) {
	t.Helper()
	for _, tool := range []struct{ name, pkg string }{{"arm-none-eabi-gcc", "gcc-arm-none-eabi"}, {"qemu-system-arm", "qemu-system-arm"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %s missing (Debian package %s)", tool.name, tool.pkg)
			}
			t.Skipf("%s not installed (Debian package %s)", tool.name, tool.pkg)
		}
	}
}

// npyFloat64 writes a float64 .npy file of the given shape (zeros), as
// numpy.save writes np.zeros(shape).
func npyFloat64(t *testing.T, path string, shape ...int) {
	t.Helper()
	dims := make([]string, len(shape))
	n := 1
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
		n *= d
	}
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", strings.Join(dims, ", "))
	hdr += strings.Repeat(" ", (64-(10+len(hdr)+1)%64)%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(make([]byte, 8*n))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A float64 .npy for an int8 input is reported as float64, the file's own
// type (the reader widens nothing and narrows float64 to float32, which the
// message used to name).
func TestInputFileRealDType(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	f := filepath.Join(t.TempDir(), "x64.npy")
	npyFloat64(t, f, 1, 8, 8, 3)
	code, _, errs := mcugen(t, "eval", model, "--input", f, "--out", t.TempDir())
	oneErrorLine(t, "eval float64 into int8", code, errs, 1, f+": holds float64, input \"input\" wants int8")
	code, _, errs = mcugen(t, "run", model, "--board", "host", "--input", "input="+f)
	oneErrorLine(t, "run float64 into int8", code, errs, 1, f+": holds float64, input \"input\" wants int8")
}

// quantize and tune create the parent directory of their -o file, as
// compile does, and refuse a path they cannot write before any work.
func TestOutputParents(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b", "mlp_int8.onnx")
	code, _, errs := mcugen(t, "quantize", mlp, "--calib-random", "4", "-o", out)
	if code != 0 || !fileExists(out) {
		t.Errorf("quantize -o into a missing directory: exit %d, %s exists: %v; %s", code, out, fileExists(out), errs)
	}
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	code, _, errs = mcugen(t, "quantize", mlp, "--calib-random", "4", "-o", filepath.Join(file, "x.onnx"))
	oneErrorLine(t, "quantize -o under a file", code, errs, 1, "-o "+filepath.Join(file, "x.onnx"), file+" is not a directory")
	// tune checks -o before it measures anything (this would otherwise
	// need QEMU, and fail only when it opened its journal).
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, _, errs = mcugen(t, "tune", cnn, "--board", "mps2-an386", "-o", filepath.Join(file, "r.json"))
	oneErrorLine(t, "tune -o under a file", code, errs, 1, "-o "+filepath.Join(file, "r.json"), file+" is not a directory")
	// --merge writes the records file: into a missing directory too. (Its
	// one result: a candidate tune --bazel wrote, with a count.)
	results, bz := t.TempDir(), filepath.Join(t.TempDir(), "bz")
	if code, _, errs := mcugen(t, "tune", cnn, "--board", "mps2-an386", "--bazel", bz, "--trials", "1"); code != 0 {
		t.Fatalf("tune --bazel: exit %d: %s", code, errs)
	}
	cand, err := os.ReadFile(filepath.Join(bz, "candidates", "k000_c000.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := strings.Replace(string(cand), "{", `{"board": "mps2-an386", "instructions": 100,`, 1)
	if err := os.WriteFile(filepath.Join(results, "result.json"), []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := filepath.Join(dir, "missing", "r.json")
	code, _, errs = mcugen(t, "tune", cnn, "--board", "mps2-an386", "--merge", results, "-o", recs)
	if code != 0 || !fileExists(recs) {
		t.Errorf("tune --merge -o into a missing directory: exit %d, %s exists: %v; %s", code, recs, fileExists(recs), errs)
	}
}

// run --out and --keep naming an existing file: one line naming the flag,
// before any build.
func TestRunDirFlagIsFile(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	file := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, flag := range []string{"--out", "--keep"} {
		code, stdout, errs := mcugen(t, "run", model, "--board", "host", flag, file)
		oneErrorLine(t, "run "+flag+" FILE", code, errs, 1, flag+" "+file+": exists and is not a directory")
		if stdout != "" {
			t.Errorf("run %s FILE: stdout %q: nothing may run", flag, stdout)
		}
	}
	code, _, errs := mcugen(t, "test", model, "--board", "host", "--keep", file)
	oneErrorLine(t, "test --keep FILE", code, errs, 1, "--keep "+file+": exists and is not a directory")
}

// bench --layers never prints a negative instruction count for the rest of
// the entry function, and says why the layers add up to more; where the
// board counts no instructions MACs/ins is "-", not 0.000.
func TestBenchRows(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out}
	printLayers(e, benchResult{Model: "m.tflite", Board: "mps2-an386", Target: "dsp", Instructions: 1000, EntryInstructions: -67,
		Layers: []layerEntry{{Kernel: "conv2d_0_s8", Op: "Conv2D", Node: "n", MACs: 500, Instructions: 1067}}})
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.Contains(l, "rest (entry function, hooks)") {
			continue
		}
		f := strings.Fields(strings.SplitN(l, "hooks)", 2)[1])
		if len(f) == 0 || f[0] != "0" || strings.Contains(l, "-67") || !strings.Contains(l, "67 more than the whole run") {
			t.Errorf("rest row %q: want 0 and that the layers add up to 67 more", l)
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	code, stdout, errs := mcugen(t, "bench", model, "--board", "host")
	if code != 0 {
		t.Fatalf("bench --board host: exit %d %s", code, errs)
	}
	lines := strings.Split(stdout, "\n")
	// model board target instructions MACs MACs/ins ...: the 6th column.
	if f := strings.Fields(lines[1]); len(f) < 6 || f[3] != "n/a" || f[5] != "-" {
		t.Errorf("host row %q: want instructions n/a and MACs/ins -", lines[1])
	}
}

// run's verdict line is grammatical whichever way it goes.
func TestRunVerdict(t *testing.T) {
	for _, c := range []struct {
		match bool
		diff  float64
		want  string
	}{
		{true, 0, "outputs are bit-exact with the reference interpreter"},
		{true, 6e-8, "outputs match the reference interpreter within float rounding (max abs diff 6e-08)"},
		{false, 0.5, "outputs DIFFER from the reference interpreter (max abs diff 0.5)"},
	} {
		if got := "outputs " + verdict(c.match, c.diff, nil); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	mlp, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	code, out, errs := mcugen(t, "run", mlp, "--board", "host", "--random", "3")
	if code != 0 || strings.Contains(out, "outputs matches") || !strings.Contains(out, "\noutputs match the reference") && !strings.Contains(out, "\noutputs are bit-exact") {
		t.Errorf("run mlp.onnx: exit %d\n%s%s", code, out, errs)
	}
}
