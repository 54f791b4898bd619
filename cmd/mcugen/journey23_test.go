package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Inputs that are not regular files get one error line each: a model, an
// input tensor, tuning records or calibration data that is /dev/zero (or a
// link to it) was read until memory ran out, and a FIFO blocked forever
// (review findings).
func TestNonRegularInputsRefused(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.onnx")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Skip(err)
	}
	zeroNpy := filepath.Join(dir, "zero.npy")
	os.Symlink("/dev/zero", zeroNpy)
	fifo := filepath.Join(dir, "fifo.onnx")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	calib := filepath.Join(dir, "calib")
	os.Mkdir(calib, 0o755)
	if err := syscall.Mkfifo(filepath.Join(calib, "x.npy"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := "../../testdata/onnx/mlp.onnx"
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", zero}, zero + ": is a device, not a regular file"},
		{[]string{"inspect", fifo}, fifo + ": is a named pipe, not a regular file"},
		{[]string{"compile", model, "--tuning", "/dev/zero", "-o", out}, "tuning records /dev/zero: is a device"},
		{[]string{"eval", model, "--input", zeroNpy, "--out", out}, zeroNpy + ": is a device"},
		{[]string{"quantize", model, "--calib", calib, "-o", filepath.Join(dir, "q.onnx")}, "x.npy: is a named pipe"},
	} {
		code, _, errs := mcugen(t, c.args...)
		oneErrorLine(t, c.args[0], code, errs, 1, c.want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed command left %s", out)
	}
}

// --random and --calib-random past 100,000 are usage errors: the vectors
// are made before the first run, and a billion ran out of memory (review
// finding).
func TestHugeVectorCountsRefused(t *testing.T) {
	model := "../../testdata/onnx/mlp.onnx"
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", model, "--board", "host", "--random", "1000000000"},
		{"test", model, "--board", "host", "--random", "1000000000"},
		{"quantize", model, "--calib-random", "1000000000", "-o", filepath.Join(dir, "q.onnx")},
		{"compile", model, "--calib-random", "1000000000", "-o", filepath.Join(dir, "o")},
	} {
		code, _, errs := mcugen(t, args...)
		oneErrorLine(t, args[0], code, errs, 2, "1000000000: at most 100000 vectors")
	}
}

// A stack_bytes below the call frames alone, for a model whose kernels
// have no local arrays, says so; the message named a kernel "" ("kernel
// 's local arrays": review finding).
func TestTinyStackMessage(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tiny.star")
	src := "board(\n    name = \"tinystack\",\n    inherits = \"mps2-an385\",\n    stack_bytes = 64,\n)\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "compile", "../../testdata/tflite/op_float_add.tflite", "--boards", f, "--board", "tinystack", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "stack_bytes 64", code, errs, 1, "B of call frames")
	if strings.Contains(errs, "kernel 's") {
		t.Errorf("names a blank kernel: %s", errs)
	}
}

// --int8-io gives a QDQ model the int8 inputs and outputs a model mcugen
// quantizes has (user-journey finding: the two routes gave two C APIs, and
// the QDQ one spent about 48 instructions a value quantizing its input),
// with the scale and zero point in the header; it runs bit-exactly. A model
// without QDQ pairs says it is ignored.
func TestInt8IOForQDQ(t *testing.T) {
	model := "../../testdata/onnx/qdq_conv.onnx"
	out := filepath.Join(t.TempDir(), "o")
	code, _, errs := mcugen(t, "compile", model, "--int8-io", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, err := os.ReadFile(filepath.Join(out, "qdq_conv.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`/* input "x": int8 [1 3 8 8]`, "#define QDQ_CONV_X_SCALE 0.02f", "#define QDQ_CONV_X_ZERO_POINT 3", ": int8 [1 4 8 8]"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("the header has no %q:\n%s", want, h)
		}
	}
	if !testing.Short() {
		code, stdout, errs := mcugen(t, "test", model, "--int8-io", "--board", "host", "--random", "3")
		if code != 0 || !strings.Contains(stdout, "bit-exact") {
			t.Errorf("test --int8-io: exit %d\n%s\n%s", code, stdout, errs)
		}
	}
	_, _, errs = mcugen(t, "compile", "../../testdata/onnx/mlp.onnx", "--int8-io", "-o", filepath.Join(t.TempDir(), "m"))
	if !strings.Contains(errs, "--int8-io applies to a QDQ ONNX model") {
		t.Errorf("no word that --int8-io is ignored: %q", errs)
	}
}

// A compile to a new directory that another compile fills meanwhile does
// not replace it without --force: both succeeded, and the later one
// removed the other's output with a warning about a --force nobody gave
// (user-journey finding).
func TestCompileDirAppearedMeanwhile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	err := writeDirAtomic(out, false, func(tmp string) error {
		// The other compile finishes first.
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "other.c"), []byte("x"), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "mine.c"), []byte("y"), 0o644)
	})
	if err == nil || !strings.Contains(err.Error(), "was written by another command while this compile ran") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "other.c")); err != nil {
		t.Errorf("the other compile's output went: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "mine.c")); err == nil {
		t.Errorf("this compile's output replaced it")
	}
	// With --force it replaces, as asked.
	if err := writeDirAtomic(out, true, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "mine.c"), []byte("y"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "mine.c")); err != nil {
		t.Errorf("--force did not replace: %v", err)
	}
}

// A test --junit run refused for its flags replaces an earlier report with
// one error case (user-journey finding: the last green report stood).
func TestJUnitOnUsageError(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "report.xml")
	for _, args := range [][]string{
		{"--vectors", filepath.Join(dir, "nosuchdir")},
		{"--timeout", "0s"},
		{"--random", "1000000000"},
	} {
		if err := os.WriteFile(junit, []byte(`<testsuites tests="1" failures="0" errors="0"></testsuites>`), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, _ := mcugen(t, append([]string{"test", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "--junit", junit}, args...)...)
		b, _ := os.ReadFile(junit)
		want := 2
		if args[0] == "--vectors" {
			want = 1 // a missing directory is an error, as a missing model (session 42)
		}
		if code != want || !strings.Contains(string(b), `errors="1"`) || !strings.Contains(string(b), "<error") {
			t.Errorf("%v: exit %d, report %s", args, code, b)
		}
	}
}

// test --json counts the model/board cases stopped by an error as "errors"
// (cases, passed and failed count vectors, and each such case as one
// failure), and its stderr summary points at the results' "error", not at
// a table it did not print (user-journey findings).
func TestTestJSONErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	code, out, errs := mcugen(t, "test", "../../testdata/tflite/mlp_int8.tflite", filepath.Join(t.TempDir(), "nosuch.tflite"), "--board", "host", "--random", "1", "--json")
	var r struct {
		Cases, Passed, Failed, Errors int
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || r.Errors != 1 || r.Failed != 1 || r.Passed != 4 || r.Cases != 5 {
		t.Errorf("exit %d, %+v", code, r)
	}
	if !strings.Contains(errs, `each result's "error" says why`) {
		t.Errorf("stderr %q", errs)
	}
}

// test reports each case's model hash, and a model file replaced between
// two boards' cases fails the cases that may have compiled the new file
// (user-journey finding: two models were reported under one name, exit 0).
func TestTestModelChangedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.tflite")
	mlp, _ := os.ReadFile("../../testdata/tflite/mlp_int8.tflite")
	cnn, _ := os.ReadFile("../../testdata/tflite/cnn_int8.tflite")
	if err := os.WriteFile(model, mlp, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mlp)
	c := &testCmd{Models: []string{model}}
	needQEMU(t)
	c.Board, c.Random, c.Timeout, c.JSON = "host,mps2-an385", 1, time.Minute, true
	c.afterCase = func() { os.WriteFile(model, cnn, 0o644) }
	var out, errs bytes.Buffer
	err := c.run(&env{stdout: &out, stderr: &errs})
	var r struct{ Results []testResult }
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil || len(r.Results) != 2 {
		t.Fatalf("%v %v: %s", err, jerr, out.String())
	}
	if r.Results[0].Error != "" || r.Results[0].ModelSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the first case: %+v", r.Results[0])
	}
	if !strings.Contains(r.Results[1].Error, "changed while it was tested") || err == nil {
		t.Errorf("the second case: %+v (run error %v)", r.Results[1], err)
	}
}

// bench of several models on a board without an emulator says once that it
// runs them on the QEMU twin (user-journey finding: once per model).
func TestTwinWarningOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	code, _, errs := mcugen(t, "bench", "../../testdata/tflite/mlp_int8.tflite", "../../testdata/tflite/cnn_int8.tflite", "--board", "nucleo-l4r5zi")
	if code != 0 || strings.Count(errs, "has no emulator") != 1 {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// bench --json names each model file's SHA-256, so a report and a baseline
// say which file they measured (a CI user journey asked).
func TestBenchJSONModelHash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs C")
	}
	model := "../../testdata/tflite/mlp_int8.tflite"
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	code, out, errs := mcugen(t, "bench", model, "--board", "host", "--json")
	var r struct{ Results []benchResult }
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Results) != 1 {
		t.Fatalf("exit %d %v: %s %s", code, err, out, errs)
	}
	if got := r.Results[0].ModelSHA256; got != hex.EncodeToString(sum[:]) {
		t.Errorf("model_sha256 %q", got)
	}
}
