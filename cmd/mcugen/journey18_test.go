package main

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// test --vectors pairs input_NNN.npy with output_NNN.npy by file name only: in a
// directory named input_dir it used to look for output_dir/input_NNN.npy, so a wrong
// expected output beside the input was never read and the case passed (user-journey
// finding). An expected output of another shape or dtype is an error naming the file,
// not a mismatch.
func TestVectorsExpectedOutputBesideInput(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	dir := filepath.Join(t.TempDir(), "input_dir")
	os.Mkdir(dir, 0o755)
	in := graph.NewData(graph.Int8, []int{1, 16})
	for i := range in.I {
		in.I[i] = int64(i*9 - 70)
	}
	mustWriteNpy(t, filepath.Join(dir, "input_000.npy"), in)
	// The interpreter's output passes; one value off, it is a mismatch.
	ev := filepath.Join(t.TempDir(), "e")
	if code, _, errs := mcugen(t, "eval", model, "--input", filepath.Join(dir, "input_000.npy"), "--out", ev); code != 0 {
		t.Fatalf("eval: %s", errs)
	}
	b, err := os.ReadFile(filepath.Join(ev, "act1_fc.npy"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "output_000.npy"), b, 0o644)
	if code, stdout, errs := mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0"); code != 0 {
		t.Fatalf("the right expected output: exit %d\n%s%s", code, stdout, errs)
	}
	wrong, err := readNpy(filepath.Join(ev, "act1_fc.npy"))
	if err != nil {
		t.Fatal(err)
	}
	wrong.I[3] ^= 1
	mustWriteNpy(t, filepath.Join(dir, "output_000.npy"), wrong)
	code, stdout, errs := mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0")
	// The table names the vector (it was only in --json's failed_vectors).
	if code != 1 || !strings.Contains(stdout, "MISMATCH") || !strings.Contains(stdout, "): input_000.npy; first, input_000.npy: output act1_fc[3] is ") {
		t.Fatalf("a wrong expected output beside the input: exit %d\n%s%s", code, stdout, errs)
	}
	short := graph.NewData(graph.Int8, []int{1, 4})
	mustWriteNpy(t, filepath.Join(dir, "output_000.npy"), short)
	code, stdout, _ = mcugen(t, "test", model, "--board", "host", "--vectors", dir, "--random", "0")
	want := filepath.Join(dir, "output_000.npy") + `: holds int8 [1 4], output "act1_fc" is int8 [1 8]`
	if code != 1 || !strings.Contains(stdout, want) {
		t.Fatalf("an expected output of another shape: exit %d, want %q in\n%s", code, want, stdout)
	}
}

func mustWriteNpy(t *testing.T, path string, d *graph.Data) {
	t.Helper()
	if err := writeNpy(path, d); err != nil {
		t.Fatal(err)
	}
}

// --weights-section names a section of the weights' own: ".data" made the linker script
// put every initialised variable of the program in flash, and names with quotes or of
// .bss failed later in the assembler or gcc (user-journey finding). Each is a usage
// error naming the flag; a name of its own compiles.
func TestWeightsSectionName(t *testing.T) {
	model := "../../testdata/tflite/cnn_int8.tflite"
	for ws, want := range map[string]string{
		".data":              `weights section ".data": .data is the linker script's own`,
		".bss.w":             `weights section ".bss.w": .bss is the linker script's own`,
		".text":              `weights section ".text": .text is the linker script's own`,
		".mcugen.weights.ad": `weights section ".mcugen.weights.ad": .mcugen.* is mcugen's own (.mcugen.weights.* is where the weights go without --weights-section`,
		".mcugen_arena":      `weights section ".mcugen_arena": .mcugen_arena is the linker script's own`,
		`x"y`:                `weights section "x\"y": a section name is letters, digits`,
		"a b":                `weights section "a b": a section name is letters, digits`,
		"9weights":           `weights section "9weights": a section name is letters`,
		"KEEP":               `weights section "KEEP": KEEP is a linker script keyword`,
		"COMMON":             `weights section "COMMON": COMMON is a linker script keyword`,
		// Session 50 review: names a vendor's script takes by wildcard, or
		// the tools by prefix.
		".bss_model":  `weights section ".bss_model": a name starting .bss: a linker script's *(.bss*) puts it in .bss, which start-up zeroes`,
		".data_model": `weights section ".data_model": a name starting .data: a linker script's *(.data*) copies it into RAM`,
		".sbss":       `weights section ".sbss": a name starting .sbss: a linker script's *(.sbss*)`,
		".symtab":     `weights section ".symtab": .symtab is the ELF symbol table`,
		".debug_info": `weights section ".debug_info": a name starting .debug: debug information, not loaded`,
	} {
		code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--weights-section", ws, "-o", filepath.Join(t.TempDir(), "o"))
		oneErrorLine(t, "--weights-section "+ws, code, errs, 2, "--weights-section: "+want)
	}
	// Names that only start like an ELF table's or a note's build and run
	// (the session 50 prefixes refused them at first: review).
	for _, ws := range []string{".model_weights", ".symmetric_w", ".notebook", ".structured", ".release_weights"} {
		if code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--weights-section", ws, "-o", filepath.Join(t.TempDir(), "o")); code != 0 {
			t.Errorf("--weights-section %s: exit %d: %s", ws, code, errs)
		}
	}
}

// --format mlf packs a model whose API takes an external arena or keeps its inputs and
// outputs in the arena: only the example programs of --project need the default API
// (user-journey finding: a microTVM user's workspace pool was refused). With microTVM's
// prefix the metadata names the module "default", as relay.build's mod_name, and keys
// inputs and outputs by tensor name.
func TestMLFWithAnyAPI(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, flags := range [][]string{{"--arena", "external", "--prefix", "tvmgen_default"}, {"--io", "in-arena"}} {
		out := filepath.Join(t.TempDir(), "o")
		args := append([]string{"compile", model, "--board", "mps2-an386", "--format", "mlf", "-o", out}, flags...)
		code, _, errs := mcugen(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", flags, code, errs)
		}
		tars, _ := filepath.Glob(filepath.Join(out, "*.tar"))
		if len(tars) != 1 {
			t.Fatalf("%v: archives %v", flags, tars)
		}
		meta := string(untar(t, tars[0])["metadata.json"])
		if flags[0] != "--arena" {
			// In-arena I/O is inside the workspace: no I/O bytes beside it.
			if !strings.Contains(meta, `"io_size_bytes": 0`) {
				t.Errorf("in-arena metadata:\n%s", meta)
			}
			continue
		}
		for _, want := range []string{`"default": {`, `"model_name": "default"`, `"input": {`, `"act1_fc": {`} {
			if !strings.Contains(meta, want) {
				t.Errorf("metadata lacks %s:\n%s", want, meta)
			}
		}
	}
	// A project's example still needs the default API, and says so before any work.
	code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--arena", "external", "--project", "make", "-o", filepath.Join(t.TempDir(), "p"))
	oneErrorLine(t, "--project make --arena external", code, errs, 2, "--project make: its example calls the default API; --arena external and --io in-arena change it")
}

func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[strings.TrimPrefix(h.Name, "./")] = b
	}
}

// An output file flag naming a directory is refused before any work: test --junit DIR
// ran the whole test and then failed to rename its report over the directory, printing
// no results (user-journey finding). quantize -o DIR likewise.
func TestOutputFileIsADirectory(t *testing.T) {
	dir := t.TempDir()
	code, stdout, errs := mcugen(t, "test", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "--random", "1", "--junit", dir)
	oneErrorLine(t, "--junit DIR", code, errs, 1, "--junit "+dir+": is a directory; name a file")
	if stdout != "" {
		t.Errorf("--junit DIR ran the test first:\n%s", stdout)
	}
	code, _, errs = mcugen(t, "quantize", "../../testdata/onnx/cnn.onnx", "--calib-random", "2", "-o", dir)
	oneErrorLine(t, "quantize -o DIR", code, errs, 1, "-o "+dir+": is a directory; name a file")
}

// bench --json prints its one JSON object when its only case fails (it printed nothing,
// leaving a CI job an empty baseline file); usage slips exit 2 (user-journey findings).
func TestBenchAndUsageEdges(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "fake.tflite")
	os.WriteFile(bad, []byte("garbage\n"), 0o644)
	code, stdout, errs := mcugen(t, "bench", bad, "--board", "host", "--json")
	var rep struct {
		Results []struct {
			Model string `json:"model"`
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Results) != 1 || !strings.Contains(rep.Results[0].Error, "not a TFLite flatbuffer") {
		t.Errorf("bench --json of a bad model: %v %+v\n%s", err, rep, stdout)
	}
	oneErrorLine(t, "bench --json bad model", code, errs, 1, "not a TFLite flatbuffer")

	model := "../../testdata/tflite/mlp_int8.tflite"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", model, "--max-increase", "5"}, "--max-increase needs --baseline"},
		{[]string{"bench", model, "--board="}, `--board "": a board name is empty`},
		{[]string{"test", model, "--board", "host,"}, `--board "host,": a board name is empty`},
		{[]string{"compile", model, "--board=", "-o", filepath.Join(t.TempDir(), "o")}, `--board "": a board name is empty`},
		{[]string{"run", model, "--timeout", "0"}, "--timeout 0s: must be positive"},
	} {
		code, _, errs := mcugen(t, tc.args...)
		oneErrorLine(t, strings.Join(tc.args, " "), code, errs, 2, tc.want)
	}
}

// A --baseline that holds none of the run's cases (taken on another board) fails the
// run: it passed every run as "new" (user-journey finding).
func TestBaselineOfAnotherBoard(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU: not in -short")
	}
	model := "../../testdata/tflite/mlp_int8.tflite"
	base := filepath.Join(t.TempDir(), "base.json")
	code, stdout, errs := mcugen(t, "bench", model, "--board", "host", "--json")
	if code != 0 {
		t.Fatalf("bench --json: %s", errs)
	}
	os.WriteFile(base, []byte(stdout), 0o644)
	code, _, errs = mcugen(t, "bench", model, "--board", "mps2-an386", "--baseline", base)
	oneErrorLine(t, "--baseline of another board", code, errs, 1, "no case of this run is in it (it holds mlp_int8.tflite on host)")
	if code, _, errs = mcugen(t, "bench", model, "--board", "host", "--baseline", base); code != 0 {
		t.Errorf("--baseline of the same case: exit %d: %s", code, errs)
	}
}

// inspect --ir STAGE --json prints one JSON object (it printed the text dump), and
// test's summary counts vectors and cases that never ran apart.
func TestInspectIRJSONAndTestSummary(t *testing.T) {
	model := "../../testdata/tflite/mlp_int8.tflite"
	code, stdout, errs := mcugen(t, "inspect", model, "--ir", "graph", "--json")
	var r struct{ Model, Stage, Text string }
	if err := json.Unmarshal([]byte(stdout), &r); code != 0 || err != nil || r.Stage != "graph" || !strings.Contains(r.Text, "FullyConnected") {
		t.Errorf("inspect --ir graph --json: exit %d, %v, %+v\n%s", code, err, r, errs)
	}
	bad := filepath.Join(t.TempDir(), "fake.tflite")
	os.WriteFile(bad, []byte("garbage\n"), 0o644)
	code, stdout, errs = mcugen(t, "test", model, bad, "--board", "host,host", "--random", "1")
	if !strings.Contains(stdout, "4 of 4 vectors passed; 1 of 2 model/board cases stopped with an error before their vectors were checked (the first on host, "+bad+": ") ||
		!strings.HasSuffix(stdout, "; the table says why for each)\n") || strings.Count(stdout, "mlp_int8.tflite") != 1 {
		t.Errorf("test summary:\n%s", stdout)
	}
	// The first broken case's reason is on stderr too (adversarial
	// journey: a CI log of stderr said only "the table says why").
	oneErrorLine(t, "test with a broken model", code, errs, 1, "1 of 2 model/board cases stopped with an error before their vectors were checked (the first on host, "+bad+": ", "; the table says why for each)")
}

// run --keep DIR reused for another model keeps only that model's C in DIR/model (the
// first model's files stayed beside it), and the build directory holds build.sh and
// run.sh, which redo the build and the run (user-journey finding: nothing said how).
// A model directory mcugen did not write keeps every file.
func TestKeepReused(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "k")
	for _, m := range []string{"mlp_int8", "cnn_int8"} {
		if code, _, errs := mcugen(t, "run", "../../testdata/tflite/"+m+".tflite", "--board", "host", "--keep", keep); code != 0 {
			t.Fatalf("run %s --keep: %s", m, errs)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(keep, "model"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".mcugen-model cnn_int8.c cnn_int8.h" {
		t.Errorf("kept model/ holds %v", names)
	}
	for _, f := range []string{"build.sh", "run.sh"} {
		if st, err := os.Stat(filepath.Join(keep, "build", f)); err != nil || st.Mode()&0o100 == 0 {
			t.Errorf("kept build/%s: %v", f, err)
		}
	}
	// The scripts work from wherever the kept directory goes.
	moved := keep + "-moved"
	if err := os.Rename(keep, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(moved, "build", "firmware.elf")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", filepath.Join(moved, "build", "build.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	if out, err := exec.Command("sh", filepath.Join(moved, "build", "run.sh")).CombinedOutput(); err != nil || !strings.Contains(string(out), "@mcugen end status=0") {
		t.Errorf("run.sh: %v\n%s", err, out)
	}
	// A file the user adds beside a kept build survives the next run (model/
	// and build/ are the build's own). (A
	// directory of the user's own that mcugen never kept a build in is
	// refused: TestKeepRefusesForeignDirectory.)
	mine := filepath.Join(t.TempDir(), "mine")
	if code, _, errs := mcugen(t, "run", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "--keep", mine); code != 0 {
		t.Fatalf("run --keep mine: %s", errs)
	}
	os.WriteFile(filepath.Join(mine, "app.c"), []byte("/* mine */\n"), 0o644)
	if code, _, errs := mcugen(t, "run", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "--keep", mine); code != 0 {
		t.Fatalf("run --keep mine again: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(mine, "app.c")); err != nil {
		t.Error("run --keep removed a file mcugen did not write")
	}
}

// boards --show prints one board's resolved definition: its UART's divider worked from
// the board file's clock and baud (16 MHz / 115200 = 138.9 -> 139), its start-up
// registers in order, and the same as JSON.
func TestBoardsShow(t *testing.T) {
	code, stdout, errs := mcugen(t, "boards", "--show", "nucleo-f746zg")
	for _, want := range []string{"uart         stm32 at 0x40004800, BRR 139 (115200 baud from 16000000 Hz)",
		"init         *0x40023830 = (*0x40023830 & ~0x00000008) | 0x00000008",
		"memory       FLASH    0x08000000       1 MiB  holds code, weights", "qemu         none"} {
		if code != 0 || !strings.Contains(stdout, want+"\n") {
			t.Errorf("boards --show lacks %q:\n%s%s", want, stdout, errs)
		}
	}
	code, stdout, _ = mcugen(t, "boards", "--show", "netduinoplus2", "--json")
	var d struct {
		UART struct {
			Kind string `json:"kind"`
			BRR  int    `json:"brr"`
		} `json:"uart"`
		Counter struct {
			Kind string `json:"kind"`
			Hz   int64  `json:"hz"`
		} `json:"counter"`
		Init []struct{ Addr, Mask, Value uint32 } `json:"init"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); code != 0 || err != nil || d.UART.Kind != "stm32f4" || d.UART.BRR != 139 ||
		d.Counter.Kind != "stm32-tim" || d.Counter.Hz != 1e9 || len(d.Init) != 5 {
		t.Errorf("boards --show --json: %v %+v\n%s", err, d, stdout)
	}
	code, _, errs = mcugen(t, "boards", "--show", "nosuch")
	oneErrorLine(t, "boards --show nosuch", code, errs, 2, `unknown board "nosuch"`)
}

// writeONNX writes a float model of the given nodes, inputs and outputs ([1,4] each).
func writeONNX(t *testing.T, path string, nodes []*onnx.Node, ins, outs []string) {
	t.Helper()
	vi := func(name string) *onnx.ValueInfo {
		tp := &onnx.TypeProto{ElemType: onnx.TFloat, HasShape: true,
			Shape: []onnx.Dim{{Value: 1, HasValue: true}, {Value: 4, HasValue: true}}}
		return &onnx.ValueInfo{Name: name, Type: tp}
	}
	g := &onnx.Graph{Name: "g", Nodes: nodes}
	for _, n := range ins {
		g.Input = append(g.Input, vi(n))
	}
	for _, n := range outs {
		g.Output = append(g.Output, vi(n))
	}
	m := &onnx.Model{IRVersion: 8, ProducerName: "test", OpsetImport: []onnx.OpsetID{{Version: 13}}, Graph: g}
	if err := os.WriteFile(path, m.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A model whose output is its input gets code that writes the output (the entry
// function wrote none: the caller's buffer stayed as it was), and two outputs whose
// names give one file name (y:0, y/0) get two files from eval and run (one overwrote the
// other). Both user-journey findings; the expected values are the input and its
// ReLU and negation, worked by hand.
func TestPassThroughAndOutputFileNames(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass.onnx")
	writeONNX(t, pass, nil, []string{"x"}, []string{"x"})
	two := filepath.Join(dir, "two.onnx")
	writeONNX(t, two, []*onnx.Node{{OpType: "Relu", Input: []string{"x"}, Output: []string{"y:0"}},
		{OpType: "Neg", Input: []string{"x"}, Output: []string{"y/0"}}}, []string{"x"}, []string{"y:0", "y/0"})
	in := graph.NewData(graph.Float32, []int{1, 4})
	copy(in.F, []float32{-1, 2, -3, 4})
	x := filepath.Join(dir, "x.npy")
	mustWriteNpy(t, x, in)
	read := func(p string) []float32 {
		d, err := readNpy(p)
		if err != nil {
			t.Fatal(err)
		}
		return d.F
	}
	out := filepath.Join(dir, "run-pass")
	if code, _, errs := mcugen(t, "run", pass, "--board", "host", "--input", x, "--out", out); code != 0 {
		t.Fatalf("run pass-through: %s", errs)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.npy"))
	if len(files) != 1 || !slices.Equal(read(files[0]), []float32{-1, 2, -3, 4}) {
		t.Errorf("pass-through output %v", files)
	}
	// The same model named .tflite (read as ONNX on another path of the importer).
	misnamed := filepath.Join(dir, "pass.tflite")
	if b, err := os.ReadFile(pass); err != nil || os.WriteFile(misnamed, b, 0o644) != nil {
		t.Fatal(err)
	}
	if code, stdout, errs := mcugen(t, "run", misnamed, "--board", "host", "--input", x); code != 0 || !strings.Contains(stdout, "bit-exact") {
		t.Errorf("pass-through named .tflite: exit %d\n%s%s", code, stdout, errs)
	}
	// An input bound twice is an error naming both files (the last one won).
	code, _, errs := mcugen(t, "eval", two, "--input", "x="+x, "--input", "x="+pass, "--out", filepath.Join(dir, "e"))
	oneErrorLine(t, "--input x twice", code, errs, 1, "--input x="+pass+`: input "x" already has a file (`+x+")")
	code, _, errs = mcugen(t, "eval", two, "--input", x, "--input", x, "--out", filepath.Join(dir, "e"))
	oneErrorLine(t, "two files for one input", code, errs, 1, x+": every input of the model already has a file (x="+x+")")
	for _, cmd := range []string{"eval", "run"} {
		out := filepath.Join(dir, cmd+"-two")
		args := []string{cmd, two, "--input", x, "--out", out}
		if cmd == "run" {
			args = append(args, "--board", "host")
		}
		if code, _, errs := mcugen(t, args...); code != 0 {
			t.Fatalf("%s two outputs: %s", cmd, errs)
		}
		if a, b := read(filepath.Join(out, "y_0.npy")), read(filepath.Join(out, "y_0_1.npy")); !slices.Equal(a, []float32{0, 2, 0, 4}) || !slices.Equal(b, []float32{1, -2, 3, -4}) {
			t.Errorf("%s: y:0 %v, y/0 %v", cmd, a, b)
		}
	}
}

// A compile that fails after making the output's parent directories removes them again:
// an -o within the system's path limit whose temporary sibling
// (.<name>.mcugen-tmp-N) is past it left a chain of 29 empty directories (user-journey
// finding; a review made the test's path one the old code failed on).
func TestFailedCompileLeavesNoDirectories(t *testing.T) {
	root := t.TempDir()
	long := root
	for i := 0; i < 29; i++ {
		long = filepath.Join(long, strings.Repeat("d", 135))
	}
	last := 4080 - len(long) - 1 // -o itself 4,080 bytes: under PATH_MAX (4,096)
	if last < 20 || last > 200 {
		t.Skipf("temporary directory path of %d bytes: no room for the case", len(root))
	}
	long = filepath.Join(long, strings.Repeat("e", last))
	code, _, errs := mcugen(t, "compile", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "-o", long)
	if code != 1 || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %q", code, errs)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a failed compile left %d entries in the output's ancestors", len(entries))
	}
}

// Calibration data that says little about the ranges is warned about: one sample, and an
// input that holds one value in every sample (its range is made up, and the SQNR
// report, measured on the same samples, looked excellent; user-journey finding).
func TestDegenerateCalibrationWarns(t *testing.T) {
	model := "../../testdata/tflite/mlp_float.tflite"
	for _, tc := range []struct {
		n     int
		value float32
		want  string
	}{
		{2, 0, `input "input" holds 0 in every sample: its range is made up`},
		{1, 0.25, "one sample; ranges from a single input rarely hold"},
	} {
		dir := t.TempDir()
		d := graph.NewData(graph.Float32, []int{tc.n, 1, 16})
		for i := range d.F {
			d.F[i] = tc.value
			if tc.value != 0 {
				d.F[i] = tc.value * float32(i%5)
			}
		}
		mustWriteNpy(t, filepath.Join(dir, "input.npy"), d)
		code, _, errs := mcugen(t, "compile", model, "--board", "host", "--calib", dir, "-o", filepath.Join(t.TempDir(), "o"))
		if code != 0 || !strings.Contains(errs, "mcugen: warning: --calib "+dir+": ") || !strings.Contains(errs, tc.want) {
			t.Errorf("%d sample(s) of %g: exit %d, stderr %q", tc.n, tc.value, code, errs)
		}
	}
}
