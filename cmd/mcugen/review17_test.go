package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Zephyr and Arduino projects build with their own linker scripts: the
// model's C names no section, neither for the weights nor (review finding:
// every Arm board was refused) for the static arena.
func TestZephyrArduinoProjectsOnArmBoards(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, c := range []struct{ board, kind string }{
		{"nrf52840dk", "zephyr"}, {"nucleo-f746zg", "zephyr"}, {"microbit", "zephyr"}, {"nucleo-f746zg", "arduino"}, {"portenta-h7", "arduino"},
	} {
		dir := filepath.Join(t.TempDir(), "p")
		code, _, stderr := mcugen(t, "compile", model, "--board", c.board, "--project", c.kind, "-o", dir)
		if code != 0 {
			t.Errorf("%s on %s: exit %d, %s", c.kind, c.board, code, stderr)
			continue
		}
		var src []byte
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, "cnn_int8.c") {
				src, _ = os.ReadFile(p)
			}
			return nil
		})
		if len(src) == 0 || strings.Contains(string(src), "section(") {
			t.Errorf("%s on %s: model source %d B, names a section: %v", c.kind, c.board, len(src), strings.Contains(string(src), "section("))
		}
	}
}

// An unknown board anywhere in test's or bench's --board list is refused
// before anything is built (it used to fail last, as one failed case).
func TestBoardListCheckedFirst(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	for _, cmd := range []string{"test", "bench"} {
		keep := filepath.Join(t.TempDir(), "k")
		code, out, stderr := mcugen(t, cmd, mlp, "--board", "host,nope", "--keep", keep)
		if code != 2 || out != "" || !strings.HasPrefix(stderr, `mcugen: boards: unknown board "nope"`) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", cmd, code, out, stderr)
		}
		if _, err := os.Stat(keep); err == nil {
			t.Errorf("%s: built something in %s first", cmd, keep)
		}
	}
}

// --keep with several cases keeps each one's build in MODEL-BOARD (the
// sources of all and the firmware of the last were mixed in one place).
func TestKeepOneDirectoryPerCase(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	keep := filepath.Join(t.TempDir(), "k")
	if code, _, stderr := mcugen(t, "test", mlp, cnn, "--board", "host", "--random", "1", "--keep", keep); code != 0 {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	for _, c := range []string{"mlp_int8-host", "cnn_int8-host"} {
		srcs, _ := filepath.Glob(filepath.Join(keep, c, "model", "*.c"))
		if len(srcs) != 1 || !strings.HasPrefix(filepath.Base(srcs[0]), strings.TrimSuffix(c, "-host")) {
			t.Errorf("%s: sources %v", c, srcs)
		}
	}
	// One case keeps the plain layout.
	one := filepath.Join(t.TempDir(), "one")
	if code, _, stderr := mcugen(t, "test", mlp, "--board", "host", "--random", "1", "--keep", one); code != 0 {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	if srcs, _ := filepath.Glob(filepath.Join(one, "model", "*.c")); len(srcs) != 1 {
		t.Errorf("one case: %v", srcs)
	}
}

// An AVR Arduino board gets a warning that its weights take SRAM (they
// did silently); an Arm Arduino board does not.
func TestAVRWeightsWarning(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	star := filepath.Join(t.TempDir(), "avr.star")
	if err := os.WriteFile(star, []byte(`board(name="mega2560", inherits=["host"], arduino="arduino:avr:mega:cpu=atmega2560")`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := mcugen(t, "compile", cnn, "--boards", star, "--board", "mega2560", "--project", "arduino", "-o", filepath.Join(t.TempDir(), "p"))
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "mega2560 is an AVR board: avr-gcc copies the model's") || !strings.Contains(stderr, "B of weights into SRAM") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = mcugen(t, "compile", cnn, "--board", "nucleo-f746zg", "--project", "arduino", "-o", filepath.Join(t.TempDir(), "q"))
	if code != 0 || strings.Contains(stderr, "AVR") {
		t.Errorf("Arm board: exit %d, stderr %q", code, stderr)
	}
}

// run --json gives a quantized output's scale and zero point (the same as
// inspect's for the model's output), so its .npy can be read alone.
func TestRunJSONOutputQuant(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "run", mlp, "--board", "host", "--json")
	var rep struct {
		Outputs []struct {
			Scale     []float32 `json:"scale"`
			ZeroPoint []int32   `json:"zero_point"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Outputs) != 1 {
		t.Fatalf("exit %d, %v, %s", code, err, stderr)
	}
	var ins struct {
		Outputs []struct {
			Scale     []float32 `json:"scale"`
			ZeroPoint []int32   `json:"zero_point"`
		} `json:"outputs"`
	}
	_, iout, _ := mcugen(t, "inspect", mlp, "--json")
	if err := json.Unmarshal([]byte(iout), &ins); err != nil || len(ins.Outputs) != 1 {
		t.Fatal(err)
	}
	o, w := rep.Outputs[0], ins.Outputs[0]
	if len(o.Scale) != 1 || len(w.Scale) != 1 || o.Scale[0] != w.Scale[0] || len(o.ZeroPoint) != 1 || len(w.ZeroPoint) != 1 || o.ZeroPoint[0] != w.ZeroPoint[0] {
		t.Errorf("run %+v, inspect %+v", o, w)
	}
}

// boards shows the RAM an arena may take: on the H743 the 512 KiB AXI SRAM,
// not the 128 KiB DTCM that holds the stack and data (the STM32H743
// reference manual's memory map).
func TestBoardsArenaRAM(t *testing.T) {
	code, out, _ := mcugen(t, "boards", "--json")
	var rep struct {
		Boards []struct {
			Name     string `json:"name"`
			RAM      uint64 `json:"ram_bytes"`
			ArenaRAM uint64 `json:"arena_ram_bytes"`
		} `json:"boards"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatal(code, err)
	}
	want := map[string][2]uint64{"nucleo-h743zi": {128 << 10, 512 << 10}, "nrf52840dk": {256 << 10, 256 << 10}}
	for _, b := range rep.Boards {
		if w, ok := want[b.Name]; ok && (b.RAM != w[0] || b.ArenaRAM != w[1]) {
			t.Errorf("%s: ram %d, arena ram %d, want %v", b.Name, b.RAM, b.ArenaRAM, w)
		}
	}
}

// inspect with quantization flags summarizes the model as compile would
// quantize it (they were accepted and ignored).
func TestInspectQuantized(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_float.tflite")
	for _, c := range []struct {
		args []string
		want string
	}{{nil, "float32"}, {[]string{"--calib-random", "4"}, "int8"}} {
		args := append([]string{"inspect", cnn, "--json"}, c.args...)
		code, out, stderr := mcugen(t, args...)
		var rep inspectJSON
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Inputs) != 1 || len(rep.Outputs) != 1 {
			t.Fatalf("%v: exit %d, %v, %s", c.args, code, err, stderr)
		}
		if rep.Inputs[0].DType != c.want || rep.Outputs[0].DType != c.want || (c.want == "int8") != (len(rep.Inputs[0].Scale) == 1) {
			t.Errorf("%v: input %+v, output %+v", c.args, rep.Inputs[0], rep.Outputs[0])
		}
	}
}

// A single-valued flag given twice is a usage error (the last one used to
// win silently: "--board host --board mps2-an386" ran on one board);
// --input and --shape repeat.
func TestRepeatedFlag(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "test", mlp, "--board", "host", "--board=mps2-an386")
	if code != 2 || out != "" || stderr != "mcugen: --board is given twice (several boards: --board a,b)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	var c cli
	parser, err := kong.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	if err := repeatedFlag(parser.Model, []string{"run", "m", "--input", "a=x.npy", "--input=b=y.npy", "--shape", "a=1", "--shape", "b=2", "--", "--board", "--board"}); err != nil {
		t.Errorf("repeatable flags: %v", err)
	}
}

// The AVR warning goes by the FQBN's architecture (MiniCore's boards too),
// not Teensy's Arm boards, whose core is also named avr.
func TestAVRWarningByArchitecture(t *testing.T) {
	cnn, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	star := filepath.Join(t.TempDir(), "mini.star")
	if err := os.WriteFile(star, []byte(`board(name="uno-minicore", inherits=["host"], arduino="MiniCore:avr:328")`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--boards", star, "--board", "uno-minicore"}, true},
		{[]string{"--board", "teensy40"}, false},
	} {
		args := append([]string{"compile", cnn, "--project", "arduino", "-o", filepath.Join(t.TempDir(), "p")}, c.args...)
		code, _, stderr := mcugen(t, args...)
		if code != 0 || strings.Contains(stderr, "is an AVR board") != c.warn {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
	}
}

// Two models of one name keep two directories.
func TestKeepSameNameModels(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
		b, _ := os.ReadFile("../../testdata/tflite/mlp_int8.tflite")
		os.WriteFile(filepath.Join(dir, sub, "m.tflite"), b, 0o644)
	}
	keep := filepath.Join(dir, "k")
	if code, _, stderr := mcugen(t, "test", filepath.Join(dir, "a", "m.tflite"), filepath.Join(dir, "b", "m.tflite"), "--board", "host", "--random", "1", "--keep", keep); code != 0 {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	for _, d := range []string{"m-host", "m-host-2"} {
		if srcs, _ := filepath.Glob(filepath.Join(keep, d, "model", "*.c")); len(srcs) != 1 {
			t.Errorf("%s: %v", d, srcs)
		}
	}
}
