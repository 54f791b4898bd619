package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
)

// The RP2040's Cortex-M0+ has no QEMU machine; bench and test run its
// code (ARMv6-M, built with -mcpu=cortex-m0plus) on mps2-an385, whose
// Cortex-M3 executes ARMv6-M code unchanged (they refused: no QEMU board
// has its core). The twin's ELF is ARMv6-M and every instruction in it is
// one the M0+ has (the 16-bit Thumb set and the six 32-bit ones), its
// count is not the M3 build's, it is bit-exact, and no TFLite Micro figure
// measured on the M3 is set beside it.
func TestRP2040RunsItsOwnCodeOnTheM3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ad/ad01_int8.tflite")
	keep := t.TempDir()
	code, out, errs := mcugen(t, "bench", model, "--board", "rp2040,mps2-an385", "--json", "--keep", keep)
	if code != 0 || !strings.Contains(errs, "board rp2040 has no emulator: running its cortex-m0plus code on mps2-an385 (cortex-m3, which executes that code unchanged)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var r struct {
		Results []struct {
			Board        string `json:"board"`
			MeasuredOn   string `json:"measured_on"`
			Instructions int64  `json:"instructions"`
			Anchor       int64  `json:"tflm_cmsis_nn_instructions"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	pico, m3 := r.Results[0], r.Results[1]
	if pico.Board != "rp2040" || pico.MeasuredOn != "mps2-an385" || pico.Instructions <= m3.Instructions || m3.Instructions <= 0 {
		t.Errorf("results %+v: the M0+ code (no MLA, no SMLAD, 8 low registers) should take more instructions than the M3's", r.Results)
	}
	if pico.Anchor != 0 || m3.Anchor == 0 {
		t.Errorf("TFLite Micro anchors %d (rp2040) and %d (mps2-an385): the M3's figure belongs to the M3 alone", pico.Anchor, m3.Anchor)
	}
	elfs, _ := filepath.Glob(filepath.Join(keep, "*rp2040*", "build", "firmware.elf"))
	if len(elfs) != 1 {
		t.Fatalf("firmware of the rp2040 build: %v", elfs)
	}
	attrs, err := exec.Command("arm-none-eabi-readelf", "-A", elfs[0]).Output()
	if err != nil || !strings.Contains(string(attrs), "Tag_CPU_arch: v6S-M") {
		t.Errorf("readelf -A: %v\n%s", err, attrs)
	}
	dis, err := exec.Command("arm-none-eabi-objdump", "-d", "--section=.text", elfs[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	// "addr:\tXXXX XXXX \tmnemonic": a 32-bit Thumb encoding has two halfwords.
	wide := regexp.MustCompile(`(?m)^\s*[0-9a-f]+:\s+[0-9a-f]{4} [0-9a-f]{4} \s*\t(\S+)`)
	v6m32 := map[string]bool{"bl": true, "dmb": true, "dsb": true, "isb": true, "mrs": true, "msr": true}
	n := 0
	for _, m := range wide.FindAllStringSubmatch(string(dis), -1) {
		if !v6m32[m[1]] {
			t.Errorf("a 32-bit %s in the M0+ build: not an ARMv6-M instruction", m[1])
		}
		n++
	}
	if n == 0 || !strings.Contains(string(dis), "muls") {
		t.Errorf("the disassembly has %d 32-bit instructions and no muls: not the model's code?", n)
	}
	code, out, errs = mcugen(t, "test", model, "--board", "rp2040", "--random", "2")
	if code != 0 || !strings.Contains(out, "bit-exact") || !strings.Contains(errs, "cortex-m0plus code on mps2-an385") {
		t.Errorf("test on rp2040: exit %d\n%s\n%s", code, out, errs)
	}
}

// compile said a model fit a board whose flash its constants fit when its
// code did not, and the project's link failed (user-journey finding: a
// transformer on an nRF52840, 993 KB of constants and 234 KB of code in
// 1 MiB). Where the constants fit and the code estimate does not, the
// emitted C is compiled with the board's compiler and measured. AD's
// generic C takes 560,268 B of text (558,752 B of it constants) for the
// Cortex-M3: a 560,000 B flash is refused with the measured figures and no
// output; 570,000 B, short by the estimate (5 kernels: 14,336 B), fits.
func TestCompileMeasuresCodeThatMightNotFit(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the model's C")
	}
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		t.Skip("arm-none-eabi-gcc not found: install gcc-arm-none-eabi")
	}
	model := filepath.Join(sharedModels(t), "ad/ad01_int8.tflite")
	dir := t.TempDir()
	star := filepath.Join(dir, "tight.star")
	const boardsFile = `
board(
    name = "tight-%d",
    description = "a Cortex-M3 with little flash",
    inherits = "cortex-m3",
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = %d, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 65536, holds = ["data", "arena"]),
    ],
)
`
	if err := os.WriteFile(star, []byte(fmt.Sprintf(boardsFile, 560000, 560000)+fmt.Sprintf(boardsFile, 570000, 570000)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, errs := mcugen(t, "compile", model, "--boards", star, "--board", "tight-560000", "-o", out)
	oneErrorLine(t, "560,000 B", code, errs, 1, "does not fit on tight-560000", "measured with the board's compiler", "region FLASH has 560,000 B")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused compile left %s (%v)", out, err)
	}
	code, stdout, errs := mcugen(t, "compile", model, "--boards", star, "--board", "tight-570000", "-o", out)
	if code != 0 || errs != "" {
		t.Errorf("570,000 B: exit %d\n%s\n%s", code, stdout, errs)
	}
	// The estimate short of the code: KWS's M0+ C (about 57 KB since
	// session 48's shared kernels; 71 KB before, on 68,608 B) where the
	// estimate allows 38,960 B of constants and 16,384 B of code in 57,344
	// B. Within twice the estimate of the end, the code is measured
	// (review finding: compile passed and the project's link failed).
	pico := filepath.Join(dir, "pico56.star")
	if err := os.WriteFile(pico, []byte(`board(
    name = "pico56",
    inherits = "rp2040",
    memory = [
        region(name = "FLASH", origin = 0x10000000, length = 57344, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 264 * KiB, holds = ["data", "arena"]),
    ],
)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	kws := filepath.Join(sharedModels(t), "kws/kws_ref_model.tflite")
	code, _, errs = mcugen(t, "compile", kws, "--boards", pico, "--board", "pico56", "-o", filepath.Join(dir, "kws"))
	oneErrorLine(t, "KWS on 57,344 B", code, errs, 1, "does not fit on pico56", "measured with the board's compiler", "constants 38,960 B")
}

// ONNX Gelu (opset 20) was refused as an unsupported op (user-journey
// finding). Both forms, in the C on the host, against the formulas in
// float64: x/2·(1 + erf(x/√2)) and x/2·(1 + tanh(√(2/π)(x + 0.044715x³))),
// within 1e-5 of the larger of the value and 1e-3; quantized, the C holds a
// table and no erf or tanh.
func TestONNXGelu(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C")
	}
	xs := []float32{-4, -1.5, -0.5, -1e-3, 0, 0.3, 1, 3.7}
	ref := map[string]func(float64) float64{
		"none": func(x float64) float64 { return x / 2 * (1 + math.Erf(x/math.Sqrt2)) },
		"tanh": func(x float64) float64 {
			return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		},
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	if err := writeNpy(in, &graph.Data{DType: graph.Float32, Shape: []int{1, len(xs)}, F: xs}); err != nil {
		t.Fatal(err)
	}
	for _, approx := range []string{"none", "tanh"} {
		b := onnx.NewBuilder("gelu_"+approx, 20, 1)
		x := b.Input("x", graph.Float32, 1, len(xs))
		y := b.Node("Gelu", []string{x}, onnx.StringAttr("approximate", approx))
		b.Output(y, graph.Float32, 1, len(xs))
		model := filepath.Join(dir, "gelu_"+approx+".onnx")
		if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out_"+approx)
		code, stdout, errs := mcugen(t, "run", model, "--board", "host", "--input", in, "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", approx, code, stdout, errs)
		}
		f, err := os.Open(filepath.Join(out, y+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := npy.Read(f)
		f.Close()
		if err != nil || len(got.F) != len(xs) {
			t.Fatalf("%s: %v %v", approx, got, err)
		}
		for i, v := range xs {
			want := ref[approx](float64(v))
			if d := math.Abs(float64(got.F[i]) - want); d > 1e-5*math.Max(math.Abs(want), 1e-3) {
				t.Errorf("%s: gelu(%g) = %g, want %g", approx, v, got.F[i], want)
			}
		}
		q := filepath.Join(dir, "q_"+approx)
		if code, _, errs := mcugen(t, "compile", model, "--board", "host", "--calib-random", "4", "-o", q); code != 0 {
			t.Fatalf("%s int8: exit %d: %s", approx, code, errs)
		}
		c, _ := os.ReadFile(filepath.Join(q, "gelu_"+approx+".c"))
		if bytes.Contains(c, []byte("erfcf(")) || bytes.Contains(c, []byte("expf(")) || !bytes.Contains(c, []byte("_table")) {
			t.Errorf("%s int8: the C is not one table", approx)
		}
	}
}

// --shape given a dynamic dimension's name (--shape N=2, as a PyTorch
// export names its batch) was "no input named N" after a warning that the
// dimension was set to 1 (user-journey finding): it is one line naming the
// input that holds it and the --shape that binds it.
func TestShapeNamingADimension(t *testing.T) {
	b := onnx.NewBuilder("dyn", 13, 1)
	x := b.Input("x", graph.Float32, -1, 4)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	model := filepath.Join(t.TempDir(), "dyn.onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, "compile", model, "--shape", "N=2", "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "--shape N=2", code, errs, 1, `--shape N: "N" is a dimension (axis 0) of input "x", not an input: give that input's whole shape, as --shape x=2,4`)
	if code, _, errs := mcugen(t, "compile", model, "--shape", "x=2,4", "-o", filepath.Join(t.TempDir(), "o")); code != 0 || errs != "" {
		t.Errorf("--shape x=2,4: exit %d: %s", code, errs)
	}
}

// bench runs what compile accepts: AD on an RP2040 with 280,000 B of flash
// fits by the measured code (274,116 B) and not by the estimate, and the
// M0+ twin, which re-fitted the board's flash by the estimate, refused it
// with "--flash-budget is 280,000 B", a flag never given (review finding).
func TestTwinRunsWhatCompileAccepts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ad/ad01_int8.tflite")
	star := filepath.Join(t.TempDir(), "pico.star")
	if err := os.WriteFile(star, []byte(`board(
    name = "pico280",
    inherits = "rp2040",
    memory = [
        region(name = "FLASH", origin = 0x10000000, length = 280000, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 264 * KiB, holds = ["data", "arena"]),
    ],
)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, "compile", model, "--boards", star, "--board", "pico280", "-o", filepath.Join(t.TempDir(), "o")); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, errs)
	}
	if code, out, errs := mcugen(t, "test", model, "--boards", star, "--board", "pico280", "--random", "1"); code != 0 || !strings.Contains(out, "bit-exact") {
		t.Errorf("test: exit %d\n%s\n%s", code, out, errs)
	}
}
