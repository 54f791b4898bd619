package runner

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mixModel is testdata/mix: mix_run runs n iterations of a hand-written 9-instruction
// Thumb-2 loop (see mix.c for the listing).
func mixModel(t *testing.T) Model {
	t.Helper()
	dir, err := filepath.Abs("testdata/mix")
	if err != nil {
		t.Fatal(err)
	}
	return Model{
		Prefix:  "mix",
		Sources: []string{filepath.Join(dir, "mix.c")},
		Inputs:  []IO{{Name: "input", CName: "input", Size: 16}},
		Outputs: []IO{{Name: "output", CName: "output", Size: 4}},
	}
}

// mixVector asks for n iterations; the SMLAD operands are (2, 3) and (4, 5).
func mixVector(n uint32) [][]byte {
	v := make([]byte, 16)
	binary.LittleEndian.PutUint32(v, n)
	binary.LittleEndian.PutUint32(v[4:], 0x00030002)
	binary.LittleEndian.PutUint32(v[8:], 0x00050004)
	return [][]byte{v}
}

// needGCC skips (or, under CI=true, fails) when the host compiler the plugins need is
// missing.
func needGCC(t *testing.T) {
	t.Helper()
	if _, err := LookTool("gcc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

// The loop body of mix.c, counted by hand from its listing: the key the plugin gives each
// instruction, and how many of the loop's instructions have it.
var mixLoop = map[string]int64{
	"ldr":      1, // ldr r5, [r2, #4]: first in its block
	"ldr^":     1, // ldr r6, [r2, #8]: after a load, address independent of it
	"smlad":    1,
	"adds":     1,
	"ldr~":     1, // ldr r5, [r7, #4]: r7 written by the adds just before
	"udiv":     1,
	"vmla.f32": 1,
	"subs":     1,
	"bne":      1,
}

// With the mix plugin on mps2-an386 (Cortex-M4): per-mnemonic counts equal the hand count
// of the loop for every extra iteration, the kernel's own mnemonics are counted exactly,
// the mix adds up to the FPGAIO counter's instruction count of the same run, and the
// cycle estimate grows by the hand-computed cycles of one iteration.
func TestMixHandCounted(t *testing.T) {
	b := board(t, "mps2-an386")
	needTools(t, b)
	needGCC(t)
	ns := []uint32{0, 1, 2, 1000}
	var vectors [][][]byte
	for _, n := range ns {
		vectors = append(vectors, mixVector(n))
	}
	fw, err := BuildWith(b, mixModel(t), vectors, t.TempDir(), Options{Mix: true, CFlags: []string{"-Werror"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fw, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for v, n := range ns {
		r := res.Vectors[v]
		if got, want := binary.LittleEndian.Uint32(r.Outputs[0]), n*(2*4+3*5); got != want {
			t.Errorf("n=%d: smlad accumulator %d, want %d", n, got, want)
		}
		// The sum of the classes is the FPGAIO counter's count (measured independently
		// by the firmware under -icount).
		var sum int64
		for _, c := range r.Mix {
			sum += c.Count
		}
		if r.Instructions <= 0 || sum != r.Instructions {
			t.Errorf("n=%d: mix adds up to %d instructions, the FPGAIO counter says %d", n, sum, r.Instructions)
		}
		if r.M4 == nil || r.M4.Instructions != r.Instructions {
			t.Fatalf("n=%d: no M4 estimate over all instructions: %+v", n, r.M4)
		}
		var classSum int64
		for _, c := range r.M4.Classes {
			classSum += c.Instructions
		}
		if classSum != r.Instructions || len(r.M4.Unknown) != 0 {
			t.Errorf("n=%d: classes add up to %d of %d instructions; unknown keys %v", n, classSum, r.Instructions, r.M4.Unknown)
		}
		// Mnemonics only the kernel uses: exactly n each.
		for _, k := range []string{"smlad", "udiv", "vmla.f32"} {
			if got := r.Mix[k].Count; got != int64(n) {
				t.Errorf("n=%d: %s executed %d times, want %d", n, k, got, n)
			}
		}
		// bne is taken n-1 times; cbz jumps over the loop only when n == 0.
		if n > 0 && r.Mix["bne"] != (MixCount{Count: int64(n), Taken: int64(n) - 1}) {
			t.Errorf("n=%d: bne %+v, want %d executed, %d taken", n, r.Mix["bne"], n, n-1)
		}
		if want := map[bool]int64{true: 1, false: 0}[n == 0]; r.Mix["cbz"] != (MixCount{Count: 1, Taken: want}) {
			t.Errorf("n=%d: cbz %+v, want 1 executed, %d taken", n, r.Mix["cbz"], want)
		}
	}
	// Between n=1 and n=1000 exactly 999 loop iterations, all ending in a taken bne.
	lo, hi := res.Vectors[1], res.Vectors[3]
	const extra = 999
	keys := map[string]bool{}
	for k := range lo.Mix {
		keys[k] = true
	}
	for k := range hi.Mix {
		keys[k] = true
	}
	for k := range keys {
		if got, want := hi.Mix[k].Count-lo.Mix[k].Count, extra*mixLoop[k]; got != want {
			t.Errorf("%q: %d more executions for %d more iterations, want %d", k, got, extra, want)
		}
	}
	if got := hi.Mix["bne"].Taken - lo.Mix["bne"].Taken; got != extra {
		t.Errorf("bne taken %d more times, want %d", got, extra)
	}
	for k := range mixLoop {
		if got := hi.Mix[k].Taken - lo.Mix[k].Taken; k != "bne" && got != 0 {
			t.Errorf("%q: jumped %d more times, but it never jumps", k, got)
		}
	}
	if got := hi.Instructions - lo.Instructions; got != extra*9 {
		t.Errorf("FPGAIO: %d more instructions for %d iterations of 9", got, extra)
	}
	// One iteration on the Cortex-M4 by the TRM's table: ldr 2, pipelined ldr 1, smlad 1,
	// adds 1, ldr stalled on its address 2+1, udiv Div, vmla.f32 3, subs 1, taken bne 1+P.
	perIter := 2 + 1 + 1 + 1 + 3 + CortexM4.Div + 3 + 1 + 1 + CortexM4.P
	if got := hi.M4.Cycles - lo.M4.Cycles; got != extra*perIter {
		t.Errorf("estimate grew by %d cycles for %d iterations, want %d x %d", got, extra, extra, perIter)
	}
	if got, want := hi.M4.Class(ClassDiv).Cycles-lo.M4.Class(ClassDiv).Cycles, extra*CortexM4.Div; got != want {
		t.Errorf("div cycles grew by %d, want %d", got, want)
	}
	// The plugin watches the firmware; it does not change it or the count.
	plain, err := BuildWith(b, mixModel(t), vectors, t.TempDir(), Options{CFlags: []string{"-Werror"}})
	if err != nil {
		t.Fatal(err)
	}
	pres, err := Run(plain, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for v := range ns {
		if pres.Vectors[v].Instructions != res.Vectors[v].Instructions || pres.Vectors[v].Mix != nil || pres.Vectors[v].M4 != nil {
			t.Errorf("vector %d: without the plugin %d instructions (mix %v), with it %d", v, pres.Vectors[v].Instructions, pres.Vectors[v].Mix, res.Vectors[v].Instructions)
		}
	}
	if cmd := strings.Join(pres.Command, " "); strings.Contains(cmd, "-plugin") {
		t.Errorf("plugin used without being asked for: %s", cmd)
	}
}

// Under qemu-aarch64 the mix plugin shares the marker with the counting plugin: the two
// count the same instructions. There is no M4 estimate there.
func TestMixAArch64MatchesCounter(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU run; skipped with -short")
	}
	b := board(t, "aarch64-linux")
	needTools(t, b)
	vectors := [][][]byte{{vector(0, 1)}, {vector(3, 2)}}
	fw, err := BuildWith(b, fakeModel(t, false, 64), vectors, t.TempDir(), Options{Mix: true, CFlags: []string{"-Werror"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fw, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for v, r := range res.Vectors {
		var sum int64
		for _, c := range r.Mix {
			sum += c.Count
		}
		if r.Instructions <= 0 || sum != r.Instructions || r.M4 != nil {
			t.Errorf("vector %d: mix %d, counting plugin %d, M4 %v", v, sum, r.Instructions, r.M4)
		}
	}
	// The fake loop is subs + b.ne, 64 more iterations per step of input[0].
	if got := res.Vectors[1].Mix["subs"].Count - res.Vectors[0].Mix["subs"].Count; got != 3*64 {
		t.Errorf("subs: %d more, want %d", got, 3*64)
	}
}

// A board without QEMU cannot count a mix.
func TestMixNeedsQEMU(t *testing.T) {
	fw := &Firmware{Board: board(t, "host")}
	if err := EnableMix(fw); err == nil || !strings.Contains(err.Error(), "QEMU") {
		t.Errorf("EnableMix on host: %v", err)
	}
}
