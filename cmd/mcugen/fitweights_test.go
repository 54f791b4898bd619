package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// compile on a 512 KiB Cortex-M4 from a user board file: AD's int16
// weights (535 KB) do not fit, so its largest layer keeps int8 weights;
// the text report says so in one line and the JSON report carries it. On
// 256 KiB the one-line FitError comes before anything is written.
func TestCompileKeepsWeightsInt8ToFit(t *testing.T) {
	dir := sharedModels(t)
	tmp := t.TempDir()
	boards, _ := filepath.Abs("../../testdata/boards/small_flash.star") // Cortex-M4F parts with 512 and 256 KiB of flash
	model := filepath.Join(dir, "ad/ad01_int8.tflite")
	code, out, errs := mcugen(t, "compile", model, "--boards", boards, "--board", "m4-512k", "-o", filepath.Join(tmp, "a"))
	if code != 0 || strings.Count(out, "kept int8 to fit flash") != 1 || !strings.Contains(out, "weights: 1 layer kept int8 to fit flash (") {
		t.Fatalf("compile: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = mcugen(t, "compile", model, "--boards", boards, "--board", "m4-512k", "-o", filepath.Join(tmp, "b"), "--json")
	var r struct {
		WeightsBytes int `json:"weights_bytes"`
		Int8         *struct {
			Kernels    []string `json:"kernels"`
			SavedBytes int64    `json:"saved_bytes"`
			ConstBytes int64    `json:"const_bytes"`
			FlashBytes int64    `json:"flash_bytes"`
		} `json:"int8_weights"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Int8 == nil {
		t.Fatalf("compile --json: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	if len(r.Int8.Kernels) != 1 || r.Int8.SavedBytes <= 0 || r.Int8.ConstBytes != int64(r.WeightsBytes) || r.Int8.FlashBytes != 512*1024 {
		t.Errorf("int8_weights %+v, weights_bytes %d", *r.Int8, r.WeightsBytes)
	}
	// Room to spare: no such line, no such field.
	code, out, _ = mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(tmp, "c"), "--json")
	if code != 0 || strings.Contains(out, "int8_weights") {
		t.Errorf("4 MiB: exit %d\n%s", code, out)
	}
	code, _, errs = mcugen(t, "compile", model, "--boards", boards, "--board", "m4-256k", "-o", filepath.Join(tmp, "d"))
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "does not fit on m4-256k: needs") {
		t.Errorf("256 KiB: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(tmp, "d")); !os.IsNotExist(err) {
		t.Errorf("256 KiB: the output directory was written")
	}
}

// A user board that inherits host (the way docs/ARCHITECTURE.md adds an
// AVR board) has its memory regions checked like a bare-metal board's:
// VWW's 36,864 B arena on an 8 KiB SRAM was compiled with only a warning
// (user-journey finding). cnn_int8.tflite's arena is 256 B and its
// constants 3,320 B; an AVR copies the constants into SRAM too, so 3 KiB
// holds the arena but not both, and 4 KiB holds both.
func TestHostBoardRegionsAreChecked(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	tmp := t.TempDir()
	board := func(name, fqbn string, sram int) string {
		f := filepath.Join(tmp, name+".star")
		src := `board(
    name = "` + name + `",
    inherits = "host",
    arduino = "` + fqbn + `",
    memory = [
        region(name = "FLASH", origin = 0, length = 256 * KiB, holds = ["code", "weights"]),
        region(name = "SRAM", origin = 0x800200, length = ` + strconv.Itoa(sram) + `, holds = ["data", "arena"]),
    ],
)
`
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name, fqbn string
		sram       int
		want       string // "" compiles
	}{
		{"tiny", "vendor:samd:tiny", 200, "does not fit on tiny: needs 256 B for activations (the arena); region SRAM has 200 B (56 B short)"},
		{"arm", "vendor:samd:arm", 3072, ""},
		{"avr3k", "arduino:avr:mega:cpu=atmega2560", 3072, "does not fit on avr3k: needs 3,576 B for activations (the arena, 256 B) and the weights avr-gcc copies into SRAM (3,320 B); region SRAM has 3,072 B (504 B short)"},
		{"avr4k", "arduino:avr:mega:cpu=atmega2560", 4096, ""},
	} {
		out := filepath.Join(tmp, c.name)
		code, _, errs := mcugen(t, "compile", model, "--boards", board(c.name, c.fqbn, c.sram), "--board", c.name, "-o", out)
		if c.want == "" {
			if code != 0 {
				t.Errorf("%s: exit %d: %s", c.name, code, errs)
			}
			continue
		}
		oneErrorLine(t, c.name, code, errs, 1, c.want)
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: the output directory was written", c.name)
		}
	}
}
