package pipeline

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// m0plusOnM3 is mps2-an385 building the RP2040's Cortex-M0+ code (what
// bench and test run for the rp2040: tune/measure.MeasureBoardOn): the M3
// executes ARMv6-M code unchanged.
func m0plusOnM3(t *testing.T) *boards.Board {
	t.Helper()
	an385 := qemuBoard(t, "mps2-an385")
	pico, err := LoadBoard("rp2040", "")
	if err != nil {
		t.Fatal(err)
	}
	return an385.Running(pico)
}

// On ARMv6-M the requantization's 32 x 32 -> 64 multiply-add is four MULS
// and ADDS/ADCS carries in inline asm (emitc's requant_fast_s8), where gcc
// calls __aeabi_lmul: pointwise, 3x3, depthwise (stride 2, ReLU) and RGB
// layers, random and extreme inputs, run bit-exact against the reference
// interpreter on the M0+ code, with the asm (also at -Os with a frame
// pointer) and with -DMCUGEN_NO_ASM's C;
// only the C build's kernels call __aeabi_lmul (the harness's counter
// arithmetic does in both).
func TestRequantOnCortexM0Plus(t *testing.T) {
	b := m0plusOnM3(t)
	objdump, err := exec.LookPath("arm-none-eabi-objdump")
	if err != nil {
		t.Skip("arm-none-eabi-objdump not found: install binutils-arm-none-eabi")
	}
	for _, c := range []struct {
		name string
		g    func() *graph.Graph
	}{
		{"pw-k32-zp7", func() *graph.Graph { return tirtest.Conv1x1(3, 5, 32, 6, graph.ActNone, 7) }},
		{"conv3x3", func() *graph.Graph { return tirtest.ConvK(5, 6, 8, 6, 3, 1, graph.ActNone, 3) }},
		{"dw-stride2-relu", func() *graph.Graph { return tirtest.Conv3x3(8, 8, 2, graph.ActRelu, -128) }},
		{"rgb-relu6", func() *graph.Graph { return tirtest.ConvRGB(6, 5, 4, 2, graph.ActRelu6, -128) }},
	} {
		for _, v := range []struct {
			suffix string
			flags  []string
		}{{"", nil}, {"-c", []string{"-DMCUGEN_NO_ASM"}}, {"-fp-os", []string{"-Os", "-fno-omit-frame-pointer"}}} {
			// The asm, the C, and the asm where r7 is the frame pointer
			// (a review found a seven-register asm that did not compile so).
			name, flags, asm := c.name+v.suffix, v.flags, v.suffix != "-c"
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				x := m0plusMatches(t, b, c.g(), c.name, flags, "requant_fast_s8(")
				dis, err := exec.Command(objdump, "-d", x.Firmware.Path).Output()
				if err != nil {
					t.Fatal(err)
				}
				var kernels []string // the model's functions that call __aeabi_lmul
				fn := ""
				for _, l := range strings.Split(string(dis), "\n") {
					if strings.HasSuffix(l, ">:") {
						fn = l[strings.Index(l, "<")+1 : len(l)-2]
					}
					if strings.Contains(l, "<__aeabi_lmul>") && strings.Contains(l, "bl") && !strings.HasPrefix(fn, "crt_") {
						kernels = append(kernels, fn)
					}
				}
				if (len(kernels) == 0) != asm {
					t.Errorf("the model's functions calling __aeabi_lmul: %q (asm %v)", kernels, asm)
				}
			})
		}
	}
}

// m0plusMatches compiles g on the generic target for b (the M0+ code on
// the M3) with the extra compiler flags, checks that the C holds marker,
// and runs random and extreme inputs bit-exact against the reference
// interpreter.
func m0plusMatches(t *testing.T, b *boards.Board, g *graph.Graph, name string, flags []string, marker string) *Execution {
	t.Helper()
	s, err := CompileGraph(g, name, Options{Board: b, Target: "generic", CFlags: flags, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, marker) {
		t.Fatalf("the C has no %q", marker)
	}
	vecs := append(RandomInputs(s.Graph, 6, 5), ExtremeInputs(s.Graph)...)
	x, err := s.Execute(vecs, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("outputs differ from the reference interpreter")
	}
	return x
}

// KWS and AD on the M0+ code (the requantization asm, and AD's fully
// connected layers in the Cortex-M0 family's blocks of two rows): every
// TFLite Micro vector bit-exact.
func TestMLPerfOnCortexM0Plus(t *testing.T) {
	b := m0plusOnM3(t)
	shared := sharedDir(t)
	for _, m := range mlperfModels {
		if m.name != "kws" && m.name != "ad" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			s, err := Compile(filepath.Join(shared, m.file), Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			vecs, want := loadVectors(t, s, filepath.Join(shared, m.vectors))
			x, err := s.Execute(vecs, t.TempDir(), 5*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, x, len(vecs), want)
			t.Logf("%s on the M0+: %d vectors bit-exact, %d instructions/inference", m.name, len(vecs), x.Instructions())
		})
	}
}
