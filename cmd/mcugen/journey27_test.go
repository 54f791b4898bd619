package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Tensors named with C++ keywords and <iso646.h>'s alternative tokens get
// C names that C++ and C with <iso646.h> accept: the header compiles under
// g++ -pedantic -Werror (user-journey finding: struct fields named "new",
// "and" and "not" broke every C++ file including the header, an Arduino
// sketch's among them).
func TestHeaderCompilesAsCPlusPlus(t *testing.T) {
	for _, tool := range []string{"gcc", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian package %s)", tool, map[string]string{"gcc": "gcc", "g++": "g++"}[tool])
		}
	}
	b := onnx.NewBuilder("keywords", 13, 3)
	x := b.Input("new", graph.Float32, 1, 8)
	y := b.Input("and", graph.Float32, 1, 8)
	b.Node("Add", []string{x, y})
	b.Model().Graph.Nodes[0].Output[0] = "class"
	b.Output("class", graph.Float32, 1, 8)
	dir := t.TempDir()
	model := filepath.Join(dir, "keywords.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, errs := mcugen(t, "compile", model, "--board", "host", "--prefix", "kw", "-o", out); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, errs)
	}
	h, err := os.ReadFile(filepath.Join(out, "kw.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"new_", "and_", "class_"} {
		if !strings.Contains(string(h), "*"+f+";") {
			t.Errorf("the header has no field %s:\n%s", f, h)
		}
	}
	cpp := filepath.Join(dir, "use.cpp")
	src := "#include \"kw.h\"\nint use(kw_inputs *in, kw_outputs *out) { return kw_run(in, out); }\n"
	if err := os.WriteFile(cpp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", out, "-c", cpp, "-o", filepath.Join(dir, "use.o")).CombinedOutput(); err != nil {
		t.Errorf("g++: %v\n%s", err, b)
	}
	if b, err := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-include", "iso646.h", "-c", filepath.Join(out, "kw.c"), "-o", filepath.Join(dir, "kw.o")).CombinedOutput(); err != nil {
		t.Errorf("gcc with <iso646.h>: %v\n%s", err, b)
	}
}

// test --junit through a pipe or a symbolic link writes through it and
// leaves it in place (user-journey finding: the stale-report removal at
// the start deleted them, /dev/stdout's link included when run as root,
// and the pipe's reader got nothing).
func TestJUnitPathsKept(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	dir := t.TempDir()
	real := filepath.Join(dir, "real.xml")
	// An earlier report (a file of another kind is refused: journey 30).
	if err := os.WriteFile(real, []byte("<?xml version=\"1.0\"?>\n<!-- a stale report -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink("real.xml", link); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, "test", model, "--board", "host", "--random", "1", "--junit", link); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "<testsuite") {
		t.Errorf("the link's target holds %q", b)
	}
	fifo := filepath.Join(dir, "pipe.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if code, _, errs := mcugen(t, "test", model, "--board", "host", "--random", "1", "--junit", fifo); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, "<testsuite") {
			t.Errorf("the pipe carried %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the pipe's reader got nothing")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v", err)
	}
	// A regular file left by an earlier run is replaced.
	if code, _, errs := mcugen(t, "test", model, "--board", "host", "--random", "1", "--junit", real); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, err := os.Lstat(real); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the report is not a regular file: %v", err)
	}
}

// bench of a build whose outputs differ from the reference interpreter (a
// miscompile, simulated by a board flag that corrupts the arena after the
// first layer) fails, and its figures are neither reported nor held to a
// baseline (user-journey finding: it exited 0, and --baseline passed it).
func TestBenchRefusesWrongOutputs(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is not installed (Debian package gcc)")
	}
	dir := t.TempDir()
	star := filepath.Join(dir, "bad.star")
	src := `board(
    name = "host-bad",
    description = "the host, with a flag that corrupts the model's arena",
    inherits = "host",
    cflags = ["-DCNN_INT8_LAYER_HOOK(i)=do{if((i)==1){int q;for(q=0;q<64;q++)cnn_int8_arena[q]^=0x55;}}while(0)"],
)
`
	if err := os.WriteFile(star, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	base := filepath.Join(dir, "base.json")
	code, out, errs := mcugen(t, "bench", model, "--board", "host", "--json")
	if code != 0 {
		t.Fatalf("bench on host: exit %d: %s", code, errs)
	}
	// The good build's report, relabelled as the bad board's baseline.
	if err := os.WriteFile(base, []byte(strings.ReplaceAll(out, `"board": "host"`, `"board": "host-bad"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = mcugen(t, "bench", model, "--boards", star, "--board", "host-bad")
	oneErrorLine(t, "bench on host-bad", code, errs, 1, "outputs differ from the reference interpreter", "host-bad")
	if out != "" {
		t.Errorf("figures printed for a wrong build:\n%s", out)
	}
	code, out, errs = mcugen(t, "bench", model, "--boards", star, "--board", "host-bad", "--baseline", base, "--json")
	if code != 1 || !strings.Contains(out, `"instructions": -1`) || !strings.Contains(out, "outputs differ") {
		t.Errorf("--baseline --json: exit %d, stdout %s, stderr %s", code, out, errs)
	}
}

// QEMU dies with mcugen, even when mcugen is killed by SIGKILL (the OOM
// killer, a CI job's hard timeout), which no handler sees (user-journey
// finding: QEMU, in a process group of its own, ran on as an orphan).
func TestEmulatorDiesWithMcugen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware: skipped with -short")
	}
	tools := linkTools(t, armTools(t)...)
	pidFile := filepath.Join(t.TempDir(), "qemu.pid")
	// A qemu-system-arm that says who it is and hangs.
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexec sleep 300\n"
	if err := os.WriteFile(filepath.Join(tools, "qemu-system-arm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	cmd := exec.Command(self, "run", model, "--board", "mps2-an386", "--random", "1", "--timeout", "5m")
	cmd.Env = append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
		peakRSSEnv+"="+filepath.Join(t.TempDir(), "peak"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(2 * time.Minute); pid == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the emulator never started")
		}
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// Gone, or a zombie waiting for init to reap it.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the emulator (pid %d) outlived mcugen by 10 s", pid)
		}
	}
}

// A JUnit report stays well-formed XML whatever the model's path and the
// error hold: control characters, "]]>", invalid UTF-8 (user-journey
// finding: an escape character in a path, kept raw in the CDATA, made the
// whole report unreadable to CI).
func TestJUnitControlCharacters(t *testing.T) {
	bad := "ok]]>\x1b[31m\xff.tflite"
	b, err := junitXML([]testResult{
		{Model: bad, Board: "host", Vectors: 1, Failed: 1, FailedVectors: []string{"in\x01put.npy"}},
		{Model: bad, Board: "mps2-an386", Error: "cannot read " + bad + ": \x07bell"},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the report is not well-formed: %v\n%s", err, b)
		}
	}
	if !strings.Contains(string(b), "ok]]") || !strings.Contains(string(b), "\uFFFD[31m") {
		t.Errorf("the path is not kept readable:\n%s", b)
	}
}

// --calib given a stacked .npy itself, not its directory, says so (user-
// journey finding: "open ...: not a directory").
func TestCalibFileNotDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "image.npy")
	if err := os.WriteFile(file, []byte("\x93NUMPY"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "quantize", "../../testdata/onnx/mlp.onnx", "--calib", file, "-o", filepath.Join(t.TempDir(), "q.onnx"))
	oneErrorLine(t, "--calib FILE", code, errs, 1, "is a file, not a directory: put it in one")
}

// One calibration sample that alone sets an input's range (a glitch: a
// saturated sensor reading) is named in a warning (user-journey finding:
// top-1 agreement fell from 16/16 to 2/16 and nothing said why); the same
// data without the glitch gets no warning.
func TestCalibOutlierSampleNamed(t *testing.T) {
	dir := t.TempDir()
	calib := filepath.Join(dir, "calib")
	if err := os.Mkdir(calib, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(glitch bool) {
		for s := 0; s < 8; s++ {
			d := graph.NewData(graph.Float32, []int{1, 64})
			for i := range d.F {
				d.F[i] = float32((s*64+i)%17)/8 - 1
			}
			if glitch && s == 5 {
				d.F[3] = 3000
			}
			if err := writeNpy(filepath.Join(calib, fmt.Sprintf("features_%d.npy", s)), d); err != nil {
				t.Fatal(err)
			}
		}
	}
	model := "../../testdata/onnx/mlp.onnx"
	write(true)
	code, _, errs := mcugen(t, "quantize", model, "--calib", calib, "-o", filepath.Join(dir, "q.onnx"))
	// Named by its file (session 41: it was an index to count out).
	if code != 0 || !strings.Contains(errs, `input "features": sample 5, `+filepath.Join(calib, "features_5.npy")+`, reaches |x| = 3000`) {
		t.Errorf("exit %d, stderr %q: want the glitched sample named", code, errs)
	}
	write(false)
	code, _, errs = mcugen(t, "quantize", model, "--calib", calib, "-o", filepath.Join(dir, "q2.onnx"))
	if code != 0 || strings.Contains(errs, "sets the input's int8 range") {
		t.Errorf("exit %d, stderr %q: want no outlier warning for clean data", code, errs)
	}
}

// quantize --eval DIR reports output SQNR and top-1 agreement on held-out
// samples beside the in-sample figures (user-journey finding: checking
// held-out data took a script of 16 eval calls); a held-out set that was
// calibrated on is said to be no held-out set, and a bad held-out file is
// an error naming it, with no model written.
func TestQuantizeEvalHeldOut(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, seed, n int) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < n; s++ {
			x := graph.NewData(graph.Float32, []int{1, 64})
			for i := range x.F {
				x.F[i] = float32(((seed+s)*131+i*29)%41)/20 - 1
			}
			if err := writeNpy(filepath.Join(d, fmt.Sprintf("features_%d.npy", s)), x); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	calib, held := mk("calib", 0, 8), mk("held", 100, 5)
	model := "../../testdata/onnx/mlp.onnx"
	code, out, errs := mcugen(t, "quantize", model, "--calib", calib, "--eval", held, "-o", filepath.Join(dir, "q.onnx"))
	if code != 0 || !strings.Contains(out, "held out ("+held+", 5 samples): output SQNR ") {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errs)
	}
	code, out, _ = mcugen(t, "quantize", model, "--calib", calib, "--eval", held, "-o", filepath.Join(dir, "q.onnx"), "--json")
	var r struct {
		Samples int `json:"samples"`
		HeldOut *struct {
			Samples      int     `json:"samples"`
			OutputSQNRdB float64 `json:"output_sqnr_db"`
			Method       string  `json:"method"`
		} `json:"held_out"`
	}
	// held_out names its method too (it was "").
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Samples != 8 || r.HeldOut == nil || r.HeldOut.Samples != 5 || r.HeldOut.OutputSQNRdB < 10 || r.HeldOut.Method != "percentile" {
		t.Errorf("--json: exit %d, %v, %+v\n%s", code, err, r, out)
	}
	if code, _, errs = mcugen(t, "quantize", model, "--calib", calib, "--eval", calib, "-o", filepath.Join(dir, "q2.onnx")); code != 0 || !strings.Contains(errs, "is the --calib directory: its figures are not held out") {
		t.Errorf("--eval = --calib: exit %d, stderr %q", code, errs)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "features.npy"), []byte("not numpy"), 0o644); err != nil {
		t.Fatal(err)
	}
	q3 := filepath.Join(dir, "q3.onnx")
	code, _, errs = mcugen(t, "quantize", model, "--calib", calib, "--eval", bad, "-o", q3)
	oneErrorLine(t, "--eval bad", code, errs, 1, "--eval", "features.npy")
	if _, err := os.Stat(q3); err == nil {
		t.Errorf("a model was written though --eval failed")
	}
}
