package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// plan on a board the model does not fit still prints the plan (it is the
// answer to "how much RAM?"), then the one-line fit error, exit 1
// (user-journey finding: only the error was printed).
func TestPlanThatDoesNotFitIsShown(t *testing.T) {
	dir := sharedModels(t)
	model := filepath.Join(dir, "vww/vww_96_int8.tflite")
	code, out, errs := mcugen(t, "plan", model, "--board", "microbit")
	oneErrorLine(t, "plan on microbit", code, errs, 1, "does not fit on microbit")
	// compile's arena: the in-place forms' arrays do not fit the
	// micro:bit's 2 KiB stack (36,864 B in place).
	if !strings.Contains(out, "arena 46,080 B") {
		t.Errorf("no plan printed:\n%s", out)
	}
	code, out, _ = mcugen(t, "plan", model, "--board", "microbit", "--json")
	if code != 1 || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"arena_bytes": 46080`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

// --quantize on a float model that only moves data says so, not that it
// is "already an integer model" (user-journey finding); an int8 model is
// "already quantized", and so is a QDQ model, float inputs and all (a
// session-23 journey: mcugen quantize's own output was said to only move
// float data).
func TestQuantizeDataMovementWarning(t *testing.T) {
	for model, want := range map[string]string{
		"../../testdata/tflite/op_float_transpose.tflite": "only moves float data (no arithmetic to quantize); --calib/--quantize ignored",
		"../../testdata/tflite/op_int8_reshape.tflite":    "is already quantized; --calib/--quantize ignored",
		"../../testdata/onnx/qdq_conv.onnx":               "is already quantized; --calib/--quantize ignored",
	} {
		code, _, errs := mcugen(t, "compile", model, "--quantize", "int8", "-o", filepath.Join(t.TempDir(), "o"))
		if code != 0 || strings.Count(errs, "warning:") != 1 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q", model, code, errs)
		}
	}
	// quantize says the same of a float model that only moves data (it
	// said "already quantized (an integer model)": user-journey finding).
	model, _ := filepath.Abs("../../testdata/tflite/op_float_transpose.tflite")
	code, _, errs := mcugen(t, "quantize", model, "--calib-random", "4", "-o", filepath.Join(t.TempDir(), "q.onnx"))
	oneErrorLine(t, "quantize of a Transpose", code, errs, 1, "only moves float data (no arithmetic to quantize): compile it as it is")
}

// A --shape naming no input is the one error line: the importer's
// warnings about the dimensions it fixed wait for the model to load, and a
// model that fails drops them (user-journey finding: two warnings, then
// the error).
func TestShapeErrorAlone(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8_dynamic_batch.tflite")
	code, _, errs := mcugen(t, "compile", model, "--shape", "nosuch=1,4", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "--shape nosuch", code, errs, 1, `--shape nosuch: the model has no input named "nosuch"`)
}

// run on a model mcugen quantizes takes a float32 input file (quantized
// for the int8 input) or an int8 one holding the raw values (it was
// refused: "wants float32", user-journey finding); another type is
// refused with a line saying both.
func TestRunQuantizedTakesInt8Input(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/mlp.onnx")
	dir := t.TempDir()
	files := map[graph.DType]string{}
	for _, dt := range []graph.DType{graph.Float32, graph.Int8, graph.Int16} {
		d := graph.NewData(dt, []int{1, 64})
		for i := range 64 {
			if dt == graph.Float32 {
				d.F[i] = float32(i%7) / 7
			} else {
				d.I[i] = int64(i%11 - 5)
			}
		}
		files[dt] = filepath.Join(dir, dt.String()+".npy")
		if err := writeNpy(files[dt], d); err != nil {
			t.Fatal(err)
		}
	}
	for _, dt := range []graph.DType{graph.Float32, graph.Int8} {
		code, out, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", files[dt])
		if code != 0 || !strings.Contains(out, "bit-exact") {
			t.Errorf("%s input: exit %d\n%s\n%s", dt, code, out, errs)
		}
	}
	code, _, errs := mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", files[graph.Int16])
	_, errLine, _ := strings.Cut(errs, "better ranges\n") // after the random-calibration warning
	oneErrorLine(t, "int16 input", code, errLine, 1, "holds int16", "a float32 file is quantized for its int8 input, an int8 file must hold the input's raw values")
	// A shape (or a directory) is not a question of type: no note on the
	// types taken (session-23 journey finding).
	short := filepath.Join(dir, "short.npy")
	if err := writeNpy(short, graph.NewData(graph.Float32, []int{1, 63})); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{short, dir} {
		code, _, errs = mcugen(t, "run", model, "--calib-random", "4", "--board", "host", "--input", in)
		_, errLine, _ = strings.Cut(errs, "better ranges\n")
		oneErrorLine(t, in, code, errLine, 1, in)
		if strings.Contains(errLine, "mcugen quantized the model") {
			t.Errorf("%s: %s", in, errLine)
		}
	}
}

// bench and test on a board without an emulator run the same build on the
// QEMU board of its core, as tune measures, and say so (they refused:
// "has no emulator", user-journey finding). AD on nrf52840dk (Cortex-M4)
// runs on mps2-an386: its count is mps2-an386's own, and the JSON names
// the board it ran on.
func TestBenchOnABoardWithoutEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ad/ad01_int8.tflite")
	code, out, errs := mcugen(t, "bench", model, "--board", "nrf52840dk,mps2-an386", "--json")
	if code != 0 || !strings.Contains(errs, "board nrf52840dk has no emulator: running on mps2-an386 (same core, cortex-m4)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Results []struct {
			Board        string `json:"board"`
			MeasuredOn   string `json:"measured_on"`
			Instructions int64  `json:"instructions"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	nrf, mps := r.Results[0], r.Results[1]
	if nrf.Board != "nrf52840dk" || nrf.MeasuredOn != "mps2-an386" || mps.MeasuredOn != "" || nrf.Instructions != mps.Instructions || nrf.Instructions <= 0 {
		t.Errorf("results %+v", r.Results)
	}
	code, out, errs = mcugen(t, "test", model, "--board", "nucleo-l4r5zi", "--random", "1")
	if code != 0 || !strings.Contains(out, "bit-exact") || !strings.Contains(errs, "running on mps2-an386") {
		t.Errorf("test on nucleo-l4r5zi: exit %d\n%s\n%s", code, out, errs)
	}
	// test's JSON and JUnit say which QEMU board ran it, as bench's JSON.
	junit := filepath.Join(t.TempDir(), "r.xml")
	code, out, errs = mcugen(t, "test", model, "--board", "nucleo-l4r5zi", "--random", "1", "--json", "--junit", junit)
	x, _ := os.ReadFile(junit)
	if code != 0 || !strings.Contains(out, `"measured_on": "mps2-an386"`) || !strings.Contains(string(x), "run on: mps2-an386 (the board has no emulator)") {
		t.Errorf("test --json --junit on nucleo-l4r5zi: exit %d\n%s\n%s\n%s", code, out, errs, x)
	}
}

// --vectors for a model of several inputs: input_NNN_K.npy is input K of
// vector NNN (they were refused: "need a single-input model", user-journey
// finding). A two-input Add checks against sums worked here; a wrong
// expected sum fails; a missing input K is one error line.
func TestVectorsForSeveralInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	b := onnx.NewBuilder("add2", 13, 1)
	x, y := b.Input("a", graph.Float32, 1, 4), b.Input("b", graph.Float32, 1, 4)
	b.Output(b.Node("Add", []string{x, y}), graph.Float32)
	dir := t.TempDir()
	model := filepath.Join(dir, "add2.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	vec := filepath.Join(dir, "vec")
	os.Mkdir(vec, 0o755)
	put := func(name string, v ...float32) {
		d := graph.NewData(graph.Float32, []int{1, 4})
		copy(d.F, v)
		if err := writeNpy(filepath.Join(vec, name), d); err != nil {
			t.Fatal(err)
		}
	}
	put("input_000_0.npy", 1, 2, 3, 4)
	put("input_000_1.npy", 10, 20, 30, 40)
	put("output_000.npy", 11, 22, 33, 44)
	put("input_001_0.npy", -1, 0.5, 0, 2)
	put("input_001_1.npy", 1, 0.25, 0, -3)
	put("output_001.npy", 0, 0.75, 0, -1)
	code, out, errs := mcugen(t, "test", model, "--board", "host", "--vectors", vec, "--random", "0", "--json")
	if code != 0 || !strings.Contains(out, `"match_expected": true`) || !strings.Contains(out, `"passed": 5`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	put("output_001.npy", 0, 0.75, 0, 1) // wrong: -3 + 2 is -1
	if code, out, _ = mcugen(t, "test", model, "--board", "host", "--vectors", vec, "--random", "0", "--json"); code != 1 || !strings.Contains(out, `"match_expected": false`) {
		t.Errorf("a wrong expected output: exit %d\n%s", code, out)
	}
	os.Remove(filepath.Join(vec, "input_001_1.npy"))
	code, out, errs = mcugen(t, "test", model, "--board", "host", "--vectors", vec, "--random", "0")
	if code != 1 || !strings.Contains(out+errs, `vector 001 has no input_001_1.npy for input "b"`) {
		t.Errorf("a missing input: exit %d\n%s\n%s", code, out, errs)
	}
}

// A JUnit report that cannot be written is one error line, not a warning
// and then the same error (user-journey finding).
func TestJUnitWriteErrorOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, _, errs := mcugen(t, "test", model, "--board", "host", "--random", "1", "--junit", "/proc/nope.xml")
	oneErrorLine(t, "--junit /proc/nope.xml", code, errs, 1, "--junit /proc/nope.xml:")
}

// A model that fails to load after the importer fixed a dimension keeps
// the warning that says why (review finding: holding the warnings until
// the model loads dropped it); only a --shape naming no input
// (TestShapeErrorAlone) drops them.
func TestImportWarningsBeforeAFailure(t *testing.T) {
	b := onnx.NewBuilder("dyn", 13, 1)
	x := b.Input("x", graph.Float32, -1, 10)
	b.Output(b.Node("Reshape", []string{x, b.Ints("s", 4, 5)}), graph.Float32)
	model := filepath.Join(t.TempDir(), "dyn.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "inspect", model)
	if code != 1 || !strings.Contains(errs, `warning: input "x": dimension "N" (axis 0) set to 1; bind it with --shape x=...`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	// The error line itself says so (session-23 journey: a pool over a
	// time axis bound to 1 failed with nothing linking the two).
	if !strings.Contains(errs, "(the model's dynamic input dimensions were set to 1: bind them with --shape)") {
		t.Errorf("the error does not point at the dimensions: %q", errs)
	}
}

// The same-core twin keeps the real board's fit decisions: AD on a 512 KiB
// Cortex-M4 without an emulator keeps one layer int8 to fit its flash, and
// the build run on mps2-an386 does too, so its count equals the emulated
// 512 KiB board's (review finding: the twin's 4 MiB took int16 weights,
// 198,367 instructions instead of the board's code's).
func TestTwinKeepsTheBoardsFit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ad/ad01_int8.tflite")
	noemu := filepath.Join(t.TempDir(), "noemu.star")
	os.WriteFile(noemu, []byte(`board(
    name = "m4-noemu",
    inherits = "nrf52840dk",
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = 512 * KiB, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 128 * KiB, holds = ["data", "arena"]),
    ],
)
`), 0o644)
	count := func(args ...string) int64 {
		code, out, errs := mcugen(t, append([]string{"bench", model, "--json"}, args...)...)
		var r struct {
			Results []struct {
				Instructions int64 `json:"instructions"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || len(r.Results) != 1 {
			t.Fatalf("bench %v: exit %d %v\n%s\n%s", args, code, err, out, errs)
		}
		return r.Results[0].Instructions
	}
	small, _ := filepath.Abs("../../testdata/boards/small_flash.star")
	if a, b := count("--boards", noemu, "--board", "m4-noemu"), count("--boards", small, "--board", "m4-512k"); a != b {
		t.Errorf("the twin's build: %d instructions, the emulated 512 KiB board's %d", a, b)
	}
}

// An output directory that is a symbolic link is written where it points:
// the link stays, the target gets the new output and keeps its
// permissions (review finding: the link became a directory, the target
// kept the old output and turned 0700).
func TestForceThroughASymlink(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	if code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", real); code != 0 {
		t.Fatal(errs)
	}
	os.Chmod(real, 0o755)
	os.WriteFile(filepath.Join(real, "cnn_int8.c"), []byte("stale\n"), 0o644)
	dropMarkerSums(t, real) // an older compile's output, whose model differs
	os.Symlink(real, link)
	if code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", link, "--force"); code != 0 {
		t.Fatal(errs)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "cnn_int8.c")); string(b) == "stale\n" {
		t.Error("the target still holds the old output")
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o755 {
		t.Errorf("the target's mode is %v, want 0755", st.Mode().Perm())
	}
	// A link to a directory of the user's is refused as the directory
	// itself is (adversarial journey: `-o link --force` emptied it).
	proj, plink := filepath.Join(dir, "proj"), filepath.Join(dir, "plink")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("mine\n"), 0o644)
	os.Symlink(proj, plink)
	code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", plink, "--force")
	oneErrorLine(t, "-o link-to-user-dir --force", code, errs, 1, "holds notes.txt, which this compile does not write")
	if b, err := os.ReadFile(filepath.Join(proj, "notes.txt")); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's directory lost notes.txt: %v", err)
	}
}
