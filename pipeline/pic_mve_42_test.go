package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// IC on the M55 (the mve kernels' three-pixel GEMV helpers, whose asm unrolls
// with .rept) builds position-independent and runs bit-exact under QEMU.
// Review finding: at -O2 -fPIC (and -O1, -Os, -fpie) the assembler failed
// with "offset out of range": gcc's size estimate of the asm missed the
// .rept's repeats and the GOT's literal pool went out of a load's reach.
// Under __PIC__ gcc now takes the written-out form clang takes.
func TestPICOnTheM55(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps3-an547")
	model := filepath.Join(sharedDir(t), "ic/pretrainedResnet_quant.tflite")
	for _, flags := range [][]string{{"-O2", "-fPIC"}, {"-Os", "-fpie"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			s, err := Compile(model, Options{Board: b, CFlags: flags, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if !cContains(s.Files, "MVE_GEMV3I_KU1") {
				t.Fatal("the C has no three-pixel GEMV helper: not the case")
			}
			x, err := s.Execute(append(RandomInputs(s.Graph, 2, 42), ExtremeInputs(s.Graph)...), t.TempDir(), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Errorf("outputs differ from the reference interpreter")
			}
			if err := gotInCode(b, x.Firmware.Path, true); err != nil {
				t.Error(err)
			}
		})
	}
}
