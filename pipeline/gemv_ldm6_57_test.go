package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// A fully connected layer over one input row takes the 1x4 block, whose
// weights (twelve or more groups of four k: K >= 48) stream through six
// registers, one LDM per six words (emitc/dsp_ldm6.go). A chain of layers
// whose K takes 12 to 160 groups a loop iteration, a K not a multiple of
// four (staged), N with and without single-channel tails, ReLU layers and a
// last one without (the sign-corrected requantization) runs bit-exact
// against the reference interpreter on the Cortex-M4 and the Cortex-M33,
// and its C builds under the flag sets that leave gcc fewest registers.
func TestGemvStreamsSixWords57(t *testing.T) {
	t.Parallel()
	g := func() *graph.Graph { return fcChain(57, 48, 100, 640, 130, 64, 128, 8) }
	for _, name := range []string{"mps2-an386", "mps2-an505"} {
		b := qemuBoard(t, name)
		o := Options{Board: b, Target: "dsp", Version: "test"}
		s, err := CompileGraph(g(), "fc57", o)
		if err != nil {
			t.Fatal(err)
		}
		if !cContains(s.Files, "ldmia %[w]!, {r4, r5, r6, r8, r10, r11}") {
			t.Fatalf("%s: the C has no six-register weight stream", name)
		}
		checkedRun(t, g(), "fc57", o, 4, 57)
	}
	b, cc := an386Compiler(t)
	s, err := CompileGraph(g(), "fc57", Options{Board: b, Target: "dsp", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, s.Files); err != nil {
		t.Fatal(err)
	}
	for _, opt := range [][]string{{"-O2"}, {"-O3"}, {"-O1", "-fno-omit-frame-pointer"}, {"-O2", "-fno-omit-frame-pointer"},
		{"-O3", "-fno-omit-frame-pointer"}, {"-O2", "-ffixed-r9", "-fno-omit-frame-pointer"}, {"-Os"}, {"-O2", "-fPIC"}} {
		for name := range s.Files {
			if !strings.HasSuffix(name, ".c") {
				continue
			}
			u := filepath.Join(dir, name)
			args := append(append(b.GCCFlags(), opt...), "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c", "-I", dir, "-o", u+".o", u)
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %v: %v\n%s", name, opt, err, firstLines(string(out), 6))
			}
			_ = os.Remove(u + ".o")
		}
	}
}

// Two or three channels left after the blocks of four run as a block of two
// (and a single channel), not as single channels (tir.channelBlocks): a
// 64 → 7 layer (4 + 2 + 1) and a 7 → 2 one (the pair alone) are bit-exact
// on the Cortex-M4, and the C calls a one-row block of two.
func TestChannelTailPairs57(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	g := func() *graph.Graph { return fcChain(58, 64, 7, 2) }
	o := Options{Board: b, Target: "dsp", Version: "test"}
	s, err := CompileGraph(g(), "tail57", o)
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, "_1x2_u") {
		t.Fatal("the C has no one-row block of two channels")
	}
	checkedRun(t, g(), "tail57", o, 4, 58)
}

// A fully connected layer over several rows with K of 64 or more takes one
// row by four channels by default too (the six-register stream), and runs
// bit-exact in fewer instructions than the 2x2 blocks it had (8 rows,
// 512 → 128).
func TestFCRowsTakeOneByFour57(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	g := func() *graph.Graph { return fcGraph51(8, 512, 128) }
	o := Options{Board: b, Target: "dsp", Version: "test"}
	s, err := CompileGraph(g(), "fcrows57", o)
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Module.Funcs[0].Knobs; k["block_rows"] != 1 || k["block_oc"] != 4 {
		t.Errorf("8-row 512 → 128 layer: knobs %v, want block_rows 1, block_oc 4", k)
	}
	d := checkedRun(t, g(), "fcrows57", o, 3, 57)
	o.Knobs = map[string]map[string]int{"fully_connected": {"block_rows": 2, "block_oc": 2}}
	a := checkedRun(t, g(), "fcrows57-2x2", o, 3, 57)
	if d >= a {
		t.Errorf("default (1x4) %d instructions, 2x2 %d: the default should take fewer", d, a)
	}
	t.Logf("default (1x4) %d, 2x2 %d", d, a)
}
