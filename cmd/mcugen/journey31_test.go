package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/internal/fileio"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// writeMaxModel writes an int8 MAXIMUM of a [2,3] and a [3] tensor whose
// second input has the scale bs and zero point bz, and whose output has
// scale os (the first input and the output have zero point 2).
func writeMaxModel(t *testing.T, bs float32, bz int64, os_ float32) string {
	t.Helper()
	m := &tg.Model{}
	a := m.AddTensor(tg.Tensor{Name: "a", Type: tg.Int8, Shape: []int32{2, 3}, Scale: []float32{0.05}, ZeroPoint: []int64{2}})
	b := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Int8, Shape: []int32{3}, Scale: []float32{bs}, ZeroPoint: []int64{bz}})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{2, 3}, Scale: []float32{os_}, ZeroPoint: []int64{2}})
	m.AddOp(tg.OpMaximum, &tg.Options{Type: tg.OptMaximumMinimum}, []int32{a, b}, y)
	m.Inputs, m.Outputs = []int32{a, b}, []int32{y}
	p := filepath.Join(t.TempDir(), "max.tflite")
	if err := os.WriteFile(p, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An int8 MAXIMUM whose operands are quantized differently is what TFLite
// runs (its kernel compares the raw values): mcugen compiles it, bit-exact
// with that, and warns that the result is not the larger real value. It
// refused the model (round-3 fuzzer finding). With one quantization there
// is no warning.
func TestMaximumOfMixedQuantizations(t *testing.T) {
	mixed := writeMaxModel(t, 0.02, -7, 0.05)
	code, out, errs := mcugen(t, "test", mixed, "--board", "host", "--random", "2")
	want := `node "y" (Maximum): its inputs and output have different quantizations; TFLite compares the raw integers, and so does mcugen, so the result is not the larger of the real values`
	if code != 0 || !strings.Contains(errs, "mcugen: warning: "+mixed+": "+want) || strings.Count(errs, want) != 1 || !strings.Contains(out, "bit-exact") {
		t.Errorf("test of a mixed-quantization MAXIMUM: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	same := writeMaxModel(t, 0.05, 2, 0.05)
	code, _, errs = mcugen(t, "compile", same, "--board", "host", "-o", filepath.Join(t.TempDir(), "o"))
	if code != 0 || strings.Contains(errs, "warning") {
		t.Errorf("compile of a one-quantization MAXIMUM: exit %d, stderr %s", code, errs)
	}
}

// An int8 average pool whose output scale is one float32 step from its
// input's is what TFLite Micro accepts (its PoolingPrepare allows 1e-6):
// mcugen compiled it only with equal scales. A real difference is still
// refused, naming both quantizations.
func TestPoolScaleTolerance(t *testing.T) {
	write := func(outScale float32) string {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, 4, 4, 3}, Scale: []float32{0.023529412}, ZeroPoint: []int64{-128}})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 2, 2, 3}, Scale: []float32{outScale}, ZeroPoint: []int64{-128}})
		m.AddOp(tg.OpAveragePool2D, tg.Pool2DOptions(tg.Valid, 2, 2, 2, 2, tg.ActNone), []int32{x}, y)
		m.Inputs, m.Outputs = []int32{x}, []int32{y}
		p := filepath.Join(t.TempDir(), "pool.tflite")
		if err := os.WriteFile(p, m.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	near := math.Nextafter32(0.023529412, 1)
	code, out, errs := mcugen(t, "test", write(near), "--board", "host", "--random", "2")
	if code != 0 || !strings.Contains(out, "bit-exact") {
		t.Errorf("pool with scales one step apart: exit %d\n%s%s", code, out, errs)
	}
	far := write(0.0236)
	code, _, errs = mcugen(t, "compile", far, "--board", "host", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "pool with scales 7e-5 apart", code, errs, 1, "int pool needs an output scale within 1e-6 of the input's and equal zero points, as TFLite's pooling kernels do (input scale 0.023529412 zero point -128, output 0.0236 and -128)")
}

// Records tuned on aarch64-linux (a board that names no CPU) are kept for
// its toolchain and -march, and compile applies them; they had no core,
// and every command skipped them ("no core") while tune measured again
// (tuning journey finding).
func TestTuneAArch64RecordsApply(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tunes under qemu-aarch64")
	}
	for _, tool := range []struct{ name, pkg string }{{"aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"}, {"qemu-aarch64", "qemu-user"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI: %s missing (Debian package %s)", tool.name, tool.pkg)
			}
			t.Skipf("%s not installed (Debian package %s)", tool.name, tool.pkg)
		}
	}
	recs := filepath.Join(t.TempDir(), "a64.json")
	model := "../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite"
	if _, err := os.Stat(model); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "tune", model, "--board", "aarch64-linux", "--trials", "2", "--jobs", "2", "-o", recs)
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(recs)
	if err != nil || !strings.Contains(string(b), `"core": "aarch64-linux-gnu armv8.2-a+dotprod"`) {
		t.Fatalf("records: %v\n%s", err, b)
	}
	code, out, errs := mcugen(t, "compile", model, "--board", "aarch64-linux", "--tuning", recs, "-o", filepath.Join(t.TempDir(), "o"))
	if code != 0 || errs != "" || !strings.Contains(out, "tuning: 1 of 1 layer(s) take their knobs from "+recs) {
		t.Errorf("compile --tuning: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out, errs = mcugen(t, "tune", model, "--board", "aarch64-linux", "--trials", "2", "-o", recs)
	if code != 0 || !strings.Contains(out, "every kernel came from the records: nothing searched") {
		t.Errorf("tune again: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// tune -o through a link locks, journals and writes the file the link
// leads to: two runs reaching one records file by two paths took separate
// locks, and the last to write lost the other's records (tuning journey).
func TestTuneOutputThroughLinkLocksTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tunes under QEMU")
	}
	needQEMU(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join("cache", "rec.json"), link); err != nil {
		t.Fatal(err)
	}
	model := "../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite"
	// The lock is the one beside the file the link leads to: a run holding
	// it makes tune through the link wait. (The lock file is removed when
	// a run ends, since session 50.)
	unlock, err := fileio.Lock(filepath.Join(dir, "cache", "rec.json.lock"), func() { t.Error("the test's lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(2 * time.Second); unlock() }()
	code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "1", "--jobs", "1", "-o", link)
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "another mcugen tune is writing these records; waiting for it") {
		t.Errorf("tune through the link did not wait for the lock beside the file it leads to: %s", errs)
	}
	for _, l := range []string{filepath.Join(dir, "cache", "rec.json.lock"), link + ".lock"} {
		if _, err := os.Lstat(l); err == nil {
			t.Errorf("%s is left", l)
		}
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cache", "rec.json")); err != nil || !strings.Contains(string(b), `"kernel": "FullyConnected`) {
		t.Errorf("records: %v %s", err, b)
	}
}

// tune takes its records from -o: a --tuning was accepted and ignored
// (tuning journey finding).
func TestTuneRefusesTuningFlag(t *testing.T) {
	recs := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(recs, []byte(`{"format": "mcugen-tuning-records", "version": 2, "records": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "tune", "../../testdata/tflite/cnn_int8.tflite", "--board", "mps2-an386", "--tuning", recs)
	oneErrorLine(t, "tune --tuning", code, errs, 2, "--tuning "+recs+": tune reads the records it starts from in -o FILE")
}

// A model without tunable kernels says so in one line: tune printed an
// empty table and "0 kernel(s) known from FILE", a file it never wrote
// (tuning journey finding).
func TestTuneNothingToTune(t *testing.T) {
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/tflite/op_float_abs.tflite")
	out := filepath.Join(t.TempDir(), "nt.json")
	code, stdout, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "-o", out)
	want := model + ": no kernel with schedule knobs on mps2-an386 (target dsp): nothing to tune, no records written\n"
	if code != 0 || stdout != want || errs != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant stdout %q", code, stdout, errs, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}

// --bazel when the records hold every kernel writes nothing: it wrote a
// directory with no targets and an 18 MB copy of mcugen (tuning journey).
func TestTuneBazelNothingToMeasure(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tunes under QEMU")
	}
	needQEMU(t)
	dir := t.TempDir()
	recs, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "job")
	model, _ := filepath.Abs("../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite")
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "1", "--jobs", "1", "-o", recs); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	code, stdout, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "-o", recs, "--bazel", out)
	want := "every kernel of " + model + " has its record in " + recs + ": nothing to measure, " + out + " left as it was\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant %q", code, stdout, errs, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
	// A batch written there before (for another records file) is emptied,
	// so a bazel test step after this cannot measure it again (a review
	// finding: a CI job ran the old batch a second time).
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "-o", filepath.Join(dir, "other.json"), "--bazel", out); code != 0 {
		t.Fatalf("--bazel into a new directory: exit %d: %s", code, errs)
	}
	if c, _ := filepath.Glob(filepath.Join(out, "candidates", "*.json")); len(c) == 0 {
		t.Fatalf("no candidates written")
	}
	code, stdout, _ = mcugen(t, "tune", model, "--board", "mps2-an386", "-o", recs, "--bazel", out)
	want = "every kernel of " + model + " has its record in " + recs + ": nothing to measure, " + out + "'s earlier batch removed (its BUILD.bazel has no targets: skip bazel test, which finds none)\n"
	build, _ := os.ReadFile(filepath.Join(out, "BUILD.bazel"))
	if _, err := os.Stat(filepath.Join(out, "candidates")); code != 0 || stdout != want || err == nil || strings.Contains(string(build), "sh_test(") {
		t.Errorf("exit %d\nstdout %q\nwant %q\ncandidates still there: %v\nBUILD.bazel:\n%s", code, stdout, want, err == nil, build)
	}
}

// A re-run asking for more trials than a record's search had says the
// record stays (a larger --trials searched nothing more and said nothing:
// tuning journey finding); the same --trials says nothing.
func TestTuneMoreTrialsNote(t *testing.T) {
	if testing.Short() {
		t.Skip("long: tunes under QEMU")
	}
	needQEMU(t)
	recs := filepath.Join(t.TempDir(), "r.json")
	model := "../../testdata/tflite/op_int8_fully_connected_double_rounding.tflite"
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "--jobs", "1", "-o", recs); code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(recs); err != nil || !strings.Contains(string(b), `"budget": 2`) || !strings.Contains(string(b), `"search": "anneal"`) {
		t.Fatalf("records: %v %s", err, b)
	}
	if code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "2", "-o", recs); code != 0 || errs != "" {
		t.Errorf("same trials: exit %d, stderr %q", code, errs)
	}
	code, _, errs := mcugen(t, "tune", model, "--board", "mps2-an386", "--trials", "9", "-o", recs)
	want := "mcugen: warning: " + recs + ": 1 kernel(s) have records of a search of fewer trials than --trials 9; they are kept as they are (remove their records to search them further)\n"
	if code != 0 || errs != want {
		t.Errorf("more trials: exit %d, stderr %q, want %q", code, errs, want)
	}
}

// writeU8QDQ writes an ONNX Runtime-style QDQ model with uint8 activations
// (which stay float, between uint8 QuantizeLinear/DequantizeLinear pairs):
// two convolutions read one dequantized input, a 3x3 one and a 1x1 one with
// Relu, and an Add joins them.
func writeU8QDQ(t *testing.T, exposeInput bool) string {
	t.Helper()
	b := onnx.NewBuilder("u8qdq", 13, 1)
	x := b.Input("x", graph.Float32, 1, 4, 8, 8)
	u8 := func(name string, v float64) string { return b.Scalar(name, graph.UInt8, v) }
	f32 := func(name string, v float64) string { return b.Scalar(name, graph.Float32, v) }
	var xq string
	qdq := func(in, name string, s, z float64) string {
		q := b.Node("QuantizeLinear", []string{in, f32(name+".s", s), u8(name+".z", z)})
		if xq == "" {
			xq = q
		}
		return b.Node("DequantizeLinear", []string{q, name + ".s", name + ".z"})
	}
	conv := func(in, name string, k int, pads ...int64) string {
		w := graph.NewData(graph.Int8, []int{4, 4, k, k})
		for i := range w.I {
			w.I[i] = int64((i*37+len(name))%255 - 127)
		}
		wdq := b.Node("DequantizeLinear", []string{b.Init(name+".w", w), b.Floats(name+".ws", 0.004, 0.005, 0.003, 0.006), b.Init(name+".wz", graph.NewData(graph.Int8, []int{4}))}, onnx.IntAttr("axis", 0))
		return b.Node("Conv", []string{in, wdq}, onnx.IntsAttr("kernel_shape", int64(k), int64(k)), onnx.IntsAttr("pads", pads...))
	}
	in := qdq(x, "x", 0.0156, 128)
	a := qdq(conv(in, "a", 3, 1, 1, 1, 1), "a", 0.047, 94)
	r := qdq(b.Node("Relu", []string{conv(in, "c", 1, 0, 0, 0, 0)}), "r", 0.0079, 0)
	y := qdq(b.Node("Add", []string{a, r}), "y", 0.046, 89)
	b.Output(y, graph.Float32, 1, 4, 8, 8)
	if exposeInput {
		b.Output(xq, graph.UInt8, 1, 4, 8, 8)
	}
	p := filepath.Join(t.TempDir(), "u8qdq.onnx")
	if err := os.WriteFile(p, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A QDQ model with uint8 activations compiles and matches: it was refused
// ("weights computed at run time": its float convolutions read a
// Dequantize of constant weights), and once that was folded, a Quantize
// and its Dequantize fused two steps early overwrote the input the second
// convolution still had to read (QDQ journey findings; the fusion's own
// check is TestWritesEarlyOverLive in tir).
func TestU8QDQCompilesAndMatches(t *testing.T) {
	model := writeU8QDQ(t, false)
	code, out, errs := mcugen(t, "test", model, "--board", "host", "--random", "3")
	if code != 0 || !strings.Contains(out, "6 of 6 vectors passed") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	// With its quantized input also an output, that input stays uint8 and
	// the convolutions float, reading their dequantized weights.
	exposed := writeU8QDQ(t, true)
	code, out, errs = mcugen(t, "test", exposed, "--board", "host", "--random", "3")
	if code != 0 || !strings.Contains(out, "6 of 6 vectors passed") {
		t.Errorf("input exposed: exit %d\n%s%s", code, out, errs)
	}
	// And its uint8 activations fold to int8 ones of zero point z - 128
	// (they stayed float): the 3x3 convolution's output, uint8 94, is
	// int8 -34.
	code, out, errs = mcugen(t, "inspect", model, "--ir", "quant")
	if code != 0 || strings.Count(out, "= Conv2D(") != 2 || !strings.Contains(out, ": int8[1,8,8,4] q=0.047,-34") || strings.Contains(out, "uint8") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
