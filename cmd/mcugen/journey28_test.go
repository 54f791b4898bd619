package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// writeBuilt writes b's model as DIR/name.onnx.
func writeBuilt(t *testing.T, b *onnx.Builder, name string) string {
	t.Helper()
	model := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	return model
}

// Valid ONNX that mcugen does not take says "not supported", naming the
// node (user-journey findings: a Conv with weights fed at run time said
// "needs an input and constant weights"; a MatMul of a 1-D operand named
// the shapes but not that it was unsupported, and runs since session 33: a
// MaxPool's Indices output stood in for it until session 36, a 3-D MaxPool
// in session 36, a 3-D MaxPool's Indices output since session 37); a Split
// whose sizes leave
// part of the axis out is refused (it compiled, and dropped the tail).
func TestUnsupportedSaysSo(t *testing.T) {
	b := onnx.NewBuilder("convw", 13, 1)
	x, w := b.Input("x", graph.Float32, 1, 2, 5, 5), b.Input("w", graph.Float32, 3, 2, 3, 3)
	b.Output(b.Node("Conv", []string{x, w}), graph.Float32)
	code, _, errs := mcugen(t, "compile", writeBuilt(t, b, "convw"), "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "Conv, weights an input", code, errs, 1, `(Conv2D): not supported: its weights "w" are computed at run time`)

	b = onnx.NewBuilder("mp3", 13, 1)
	x = b.Input("x", graph.Float32, 1, 2, 4, 4, 4)
	mp := b.NodeN("MaxPool", []string{x}, 2, onnx.IntsAttr("kernel_shape", 2, 2, 2))
	b.Output(mp[0], graph.Float32)
	b.Output(mp[1], graph.Int64)
	code, _, errs = mcugen(t, "compile", writeBuilt(t, b, "mp3"), "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "3-D MaxPool Indices", code, errs, 1, `(MaxPool): not supported: the Indices output of a 3-D MaxPool`)

	b = onnx.NewBuilder("split", 13, 1)
	x = b.Input("x", graph.Float32, 1, 6)
	outs := b.NodeN("Split", []string{x, b.Ints("s", 2, 2)}, 2, onnx.IntAttr("axis", 1))
	b.Output(outs[0], graph.Float32)
	b.Output(outs[1], graph.Float32)
	code, _, errs = mcugen(t, "compile", writeBuilt(t, b, "split"), "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "Split [2,2] of 6", code, errs, 1, `(Split): split [2 2] sums to 4, but axis 1 has 6`)
}

// Without gcc's attributes (IAR, TI: emulated by undefining __GNUC__) the
// arena is aligned for 8-byte values, and the unit is still warning-free
// C99 (audit finding: a plain byte array, which arm-none-eabi-gcc aligns
// to 4). The alignment is read from the arena's own section
// (-fdata-sections) of a Cortex-M object.
func TestArenaAlignedWithoutGNUC(t *testing.T) {
	needQEMU(t)
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	dir := t.TempDir()
	if code, _, stderr := mcugen(t, "compile", model, "--board", "host", "--prefix", "m", "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	obj := filepath.Join(dir, "m.o")
	if out, err := exec.Command("arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-U__GNUC__", "-fdata-sections", "-c", filepath.Join(dir, "m.c"), "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("arm-none-eabi-gcc -U__GNUC__: %v\n%s", err, out)
	}
	out, err := exec.Command("arm-none-eabi-readelf", "-S", "-W", obj).Output()
	if err != nil {
		t.Fatalf("arm-none-eabi-readelf: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.Contains(l, ".bss.m_arena") {
			if al, err := strconv.Atoi(f[len(f)-1]); err != nil || al < 8 {
				t.Errorf("the arena's section is aligned to %s bytes, want 8 or more: %s", f[len(f)-1], l)
			}
			return
		}
	}
	t.Errorf("no .bss.m_arena section in the object:\n%s", out)
}

// An MLF archive's linker script places a --weights-section section with
// the weights, as --project make's does (bare-metal journey: it named
// only .mcugen.weights, leaving the section to orphan placement).
func TestMLFLinkerScriptTakesWeightsSection(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	out := filepath.Join(t.TempDir(), "o")
	code, _, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--prefix", "tvmgen_default", "--weights-section", ".my_weights", "--format", "mlf", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ld := string(untar(t, filepath.Join(out, "tvmgen_default.tar"))["runtime/mcugen.ld"])
	if !strings.Contains(ld, "*(.my_weights .my_weights.*)") {
		t.Errorf("the MLF linker script does not place .my_weights:\n%s", ld)
	}
}
