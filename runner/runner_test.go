package runner

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
)

const fakeSize = 16

// fakeModel is testdata/fake: output[i] = input[i] + (i + 1), then 1 + 64*input[0]
// iterations of a two-instruction loop.
func fakeModel(t *testing.T, external bool, arena int) Model {
	t.Helper()
	dir, err := filepath.Abs("testdata/fake")
	if err != nil {
		t.Fatal(err)
	}
	return Model{
		Prefix:        "fake",
		Sources:       []string{filepath.Join(dir, "fake.c")},
		Inputs:        []IO{{Name: "input", CName: "input", Size: fakeSize}},
		Outputs:       []IO{{Name: "output", CName: "output", Size: fakeSize}},
		ArenaBytes:    arena,
		ExternalArena: external,
	}
}

func fakeOptions(external bool) Options {
	o := Options{CFlags: []string{"-Werror"}}
	if external {
		o.CFlags = append(o.CFlags, "-DFAKE_EXTERNAL_ARENA")
	}
	return o
}

// fakeExpected computes what the fake model must output, independently of the C.
func fakeExpected(in []byte) []byte {
	out := make([]byte, len(in))
	for i := range in {
		out[i] = in[i] + byte(i+1)
	}
	return out
}

func vector(first byte, seed int) []byte {
	v := make([]byte, fakeSize)
	v[0] = first
	for i := 1; i < fakeSize; i++ {
		v[i] = byte(seed*31 + i*17 + 250) // wraps around 255 on purpose
	}
	return v
}

// needTools skips (or, under CI=true, fails) when a tool the board needs is missing.
func needTools(t *testing.T, b *boards.Board) {
	t.Helper()
	for _, tool := range Tools(b) {
		if _, err := LookTool(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %v", err)
			}
			t.Skipf("skipping: %v", err)
		}
	}
}

func board(t *testing.T, name string) *boards.Board {
	t.Helper()
	c, err := boards.Load("")
	return pick(t, c, err, name)
}

// boardFrom loads the Starlark board file src on top of the catalog and
// returns its board name.
func boardFrom(t *testing.T, src, name string) *boards.Board {
	t.Helper()
	c, err := boards.LoadData("board.star", []byte(src))
	return pick(t, c, err, name)
}

// pick is the board name of a catalog just loaded (with err).
func pick(t *testing.T, c *boards.Catalog, err error, name string) *boards.Board {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onBoards runs f as a parallel subtest on each named board (the first one
// only in -short), skipped (locally) or failed (CI) without its tools.
func onBoards(t *testing.T, names []string, f func(t *testing.T, b *boards.Board)) {
	if testing.Short() {
		names = names[:1]
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := board(t, name)
			needTools(t, b)
			f(t, b)
		})
	}
}

var runBoards = []string{"mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "microbit", "aarch64-linux", "host"}

// The fake model builds and runs bit-exactly on every runnable board, with an external
// (guarded) arena and with the model's own; the loop's instruction count is exact.
func TestFakeModelRunsEverywhere(t *testing.T) {
	vectors := [][][]byte{{vector(0, 1)}, {vector(1, 2)}, {vector(5, 3)}}
	names := runBoards
	if testing.Short() {
		names = []string{"mps2-an386", "host"}
	}
	for _, name := range names {
		for _, external := range []bool{true, false} {
			name, external := name, external
			t.Run(name+map[bool]string{true: "/external", false: "/static"}[external], func(t *testing.T) {
				t.Parallel()
				b := board(t, name)
				needTools(t, b)
				fw, err := BuildWith(b, fakeModel(t, external, 64), vectors, t.TempDir(), fakeOptions(external))
				if err != nil {
					t.Fatal(err)
				}
				res, err := Run(fw, 20*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				for v, vec := range vectors {
					if got, want := res.Vectors[v].Outputs[0], fakeExpected(vec[0]); !bytes.Equal(got, want) {
						t.Errorf("vector %d: output %x, want %x", v, got, want)
					}
				}
				if fw.Text <= 0 || fw.FlashBytes() != fw.Text+fw.Data || fw.RAMBytes() != fw.Data+fw.BSS {
					t.Errorf("sizes text %d data %d bss %d", fw.Text, fw.Data, fw.BSS)
				}
				counts := b.Counter.Kind == "fpgaio" || b.Counter.Kind == "nrf-timer" || b.Counter.Kind == "qemu-plugin"
				for v := range vectors {
					if n := res.Vectors[v].Instructions; (n >= 0) != counts {
						t.Errorf("vector %d: instructions %d, counter %q", v, n, b.Counter.Kind)
					}
				}
				if !counts {
					return
				}
				// The loop runs 1 + 64*input[0] times, 2 instructions each: vectors with
				// input[0] = 0, 1, 5 differ by exactly 128 and 640 instructions, and the
				// rest of the model is a small constant.
				n0, n1, n5 := res.Vectors[0].Instructions, res.Vectors[1].Instructions, res.Vectors[2].Instructions
				if n1-n0 != 2*64 || n5-n0 != 2*64*5 {
					t.Errorf("instructions %d %d %d: differences %d, %d, want 128, 640", n0, n1, n5, n1-n0, n5-n0)
				}
				if n0 < 2 || n0 > 600 {
					t.Errorf("instructions for 1 loop iteration + 16-byte add: %d", n0)
				}
			})
		}
	}
}

// The count of a long known loop is exact and identical across three runs.
func TestInstructionCountRepeatable(t *testing.T) {
	onBoards(t, []string{"mps2-an386", "mps3-an547", "microbit", "aarch64-linux"}, func(t *testing.T, b *boards.Board) {
		vectors := [][][]byte{{vector(0, 0)}, {vector(200, 0)}}
		fw, err := BuildWith(b, fakeModel(t, true, 64), vectors, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		var first []int64
		for run := 0; run < 3; run++ {
			res, err := Run(fw, 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{res.Vectors[0].Instructions, res.Vectors[1].Instructions}
			if got[1]-got[0] != 2*64*200 {
				t.Errorf("run %d: %v differ by %d, want %d", run, got, got[1]-got[0], 2*64*200)
			}
			if run == 0 {
				first = got
			} else if got[0] != first[0] || got[1] != first[1] {
				t.Errorf("run %d: %v, first run %v", run, got, first)
			}
		}
	})
}

// The harness measures the stack a run takes: a run that calls a function with a 2,048 B
// local array takes at least 2,048 B more than one that does not, and at most a frame
// more than that; the smaller run, measured after the larger, is not the larger's
// leftover (the stack is painted again before each run). Hosted builds measure nothing.
func TestStackHighWater(t *testing.T) {
	onBoards(t, []string{"mps2-an386", "microbit", "mps3-an547", "aarch64-linux"}, func(t *testing.T, b *boards.Board) {
		name := b.Name
		deep, flat := vector(0, 0), vector(0, 0)
		deep[1], flat[1] = 0xEB, 0
		vectors := [][][]byte{{deep}, {flat}}
		small := b.BareMetal() && b.StackBytes < 4096 // microbit's 2 KiB: the array would overflow it
		if small {
			vectors = [][][]byte{{flat}, {flat}}
		}
		fw, err := BuildWith(b, fakeModel(t, true, 64), vectors, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(fw, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		d, f := res.Vectors[0].Stack, res.Vectors[1].Stack
		if !b.BareMetal() {
			if d != -1 || f != -1 {
				t.Errorf("hosted: stack %d, %d measured, want -1 (not measured)", d, f)
			}
			return
		}
		if f <= 0 || f > 256 {
			t.Errorf("run without the array: stack %d B, want a few frames (1..256)", f)
		}
		if small {
			if d != f {
				t.Errorf("the same run twice: stack %d B, then %d B", d, f)
			}
			return
		}
		if d-f < 2048 || d-f > 2048+64 {
			t.Errorf("run with the 2,048 B array: stack %d B, the other %d B: differ by %d, want 2,048..2,112", d, f, d-f)
		}
		t.Logf("%s: stack %d B with the array, %d B without", name, d, f)
	})
}

// A run that takes more stack than the board gives it (a 2,048 B array on a 1 KiB stack)
// is an error naming the stack: on the M4 the writes past the bottom land in mapped
// memory, and the harness finds the stack's bottom word written; the M0 locks up (its
// HardFault has no stack to push to) and the runner reads SP from QEMU's dump.
func TestStackOverflowReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode byte // 0xEB a 2,048 B array; 0xEA recursion in small frames
	}{{"mps2-an386", 0xEB}, {"microbit", 0xEB}, {"mps2-an505", 0xEB}, {"mps3-an547", 0xEB},
		{"mps2-an386", 0xEA}, {"mps2-an505", 0xEA}, {"mps3-an547", 0xEA}} {
		name := tc.name
		t.Run(fmt.Sprintf("%s/%#x", name, tc.mode), func(t *testing.T) {
			t.Parallel()
			b := board(t, name)
			needTools(t, b)
			b.StackBytes = 1024
			deep := vector(0, 0)
			deep[1] = tc.mode
			fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{deep}}, t.TempDir(), fakeOptions(true))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Run(fw, 20*time.Second)
			var so *StackOverflowError
			switch {
			case err == nil:
				t.Fatal("2,048 B of stack or more on a 1,024 B stack ran without an error")
			case name == "microbit":
				if !errors.As(err, &so) || so.SP >= so.Bottom || so.Bottom != 0x20000000 || so.StackBytes != 1024 {
					t.Errorf("want a StackOverflowError with SP below 0x20000000, got %v", err)
				}
			case name == "mps2-an505" || name == "mps3-an547":
				// v8-M Main: the stack limit (MSPLIM) faults at once.
				if !errors.As(err, &so) || !so.Limit || so.StackBytes != 1024 || !strings.Contains(err.Error(), "MSPLIM") {
					t.Errorf("want the stack limit's fault, got %v", err)
				}
			case errors.As(err, &so):
				// The M4 locked up with SP below the stack (recursion
				// pushes as it goes; an array's writes need not).
				if so.Limit || so.SP >= so.Bottom || so.StackBytes != 1024 {
					t.Errorf("want a lockup below the stack's bottom, got %v", err)
				}
			case !strings.Contains(err.Error(), "the stack overflowed on vector 0") || !strings.Contains(err.Error(), "1,024 B stack"):
				t.Errorf("want the stack's overflow named, got %v", err)
			}
			t.Log(err)
		})
	}
}

// A run that stays within its stack but comes within the paint's guard band
// (256 B) of the bottom is reported as an overflow: the paint cannot tell it
// from a frame hanging over the bottom whose low end was never written. The
// 2,048 B array and the frames above it leave well under 256 B of a 2,304 B
// stack, and a 3,072 B stack passes.
func TestStackGuardBand(t *testing.T) {
	for _, name := range []string{"mps2-an386", "mps2-an505"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := board(t, name)
			needTools(t, b)
			deep := vector(0, 0)
			deep[1] = 0xEB
			for _, tc := range []struct {
				stack int
				fail  bool
			}{{2048 + crt.StackGuardBytes, true}, {3072, false}} {
				b.StackBytes = tc.stack
				fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{deep}}, t.TempDir(), fakeOptions(true))
				if err != nil {
					t.Fatal(err)
				}
				res, err := Run(fw, 20*time.Second)
				var so *StackOverflowError
				switch {
				case tc.fail && name == "mps2-an505":
					// MSPLIM sits at the band's top.
					if !errors.As(err, &so) || !so.Limit {
						t.Errorf("stack %d B: want the stack limit's fault, got %v", tc.stack, err)
					}
				case tc.fail && (err == nil || !strings.Contains(err.Error(), "within 256 B of the bottom")):
					t.Errorf("stack %d B: want the guard band's overflow, got %v", tc.stack, err)
				case !tc.fail && err != nil:
					t.Errorf("stack %d B: %v", tc.stack, err)
				case !tc.fail && (res.Vectors[0].Stack < 2048 || res.Vectors[0].Stack > 2048+256):
					t.Errorf("stack %d B: measured %d B for a 2,048 B array", tc.stack, res.Vectors[0].Stack)
				}
			}
		})
	}
}

// A user board whose arena region is not backed by memory: the harness's first write to
// the arena faults, and the runner names the fault and the address instead of hanging.
// Mainline cores report a precise BusFault with BFAR; the M0 only knows "HardFault".
func TestBadMemoryMapFaults(t *testing.T) {
	cases := []struct {
		parent, flash, ram, bad string
		want                    uint64
		typ                     string
		addr                    bool
	}{
		{"mps2-an385", "0x00000000", "0x20000000", "0x30000000", 0x30000000, "BusFault", true},
		{"mps3-an547", "0x00000000", "0x20000000", "0xF0000000", 0xF0000000, "BusFault", true},
		{"microbit", "0x00000000", "0x20000000", "0x30000000", 0x30000000, "HardFault", false},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		src := `board(
    name = "bad-arena",
    inherits = "` + tc.parent + `",
    memory = [
        region(name = "FLASH", origin = ` + tc.flash + `, length = 0x40000, holds = ["code", "weights"]),
        region(name = "RAM", origin = ` + tc.ram + `, length = 0x4000, holds = ["data"]),
        region(name = "NOWHERE", origin = ` + tc.bad + `, length = 0x10000, holds = ["arena"]),
    ],
    stack_bytes = 2048,
)
`
		b := boardFrom(t, src, "bad-arena")
		needTools(t, b)
		fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}}, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = Run(fw, 20*time.Second)
		var fe *FaultError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: want a fault, got %v", tc.parent, err)
		}
		if fe.Type != tc.typ || fe.HasAddr != tc.addr || (tc.addr && fe.Addr != tc.want) || fe.PC == 0 {
			t.Errorf("%s: fault %+v", tc.parent, fe)
		}
		if tc.addr && !strings.Contains(err.Error(), "at address 0x"+strconv.FormatUint(tc.want, 16)) {
			t.Errorf("%s: message %q", tc.parent, err)
		}
		if !strings.Contains(err.Error(), tc.typ) {
			t.Errorf("%s: message %q", tc.parent, err)
		}
		// The pc is named (here the harness's main, which writes the guard
		// bytes around the arena before the model runs).
		if !regexp.MustCompile(`^(fake_run|memcpy|main)\+0x[0-9a-f]+$`).MatchString(fe.Func) || !strings.Contains(err.Error(), "(in "+fe.Func+")") {
			t.Errorf("%s: pc %#x named %q in %q", tc.parent, fe.PC, fe.Func, err)
		}
		if time.Since(start) > 10*time.Second {
			t.Errorf("%s: the fault took %v to report", tc.parent, time.Since(start))
		}
	}
}

// A user's board file adds a board that builds and runs: an AN386 whose arena lives in
// the PSRAM, built with -Os.
func TestUserBoardRuns(t *testing.T) {
	src := `PSRAM = 0x21000000
board(
    name = "my-an386",
    inherits = "mps2-an386",
    memory = [
        region(name = "FLASH", origin = 0, length = 4 << 20, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 4 << 20, holds = ["data"]),
        region(name = "PSRAM", origin = PSRAM, length = 16 << 20, holds = ["arena"]),
    ],
    stack_bytes = 4096,
)
`
	b := boardFrom(t, src, "my-an386")
	needTools(t, b)
	vec := vector(3, 4)
	o := fakeOptions(true)
	o.OptLevel = "-Os"
	fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vec}}, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fw, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Vectors[0].Outputs[0]; !bytes.Equal(got, fakeExpected(vec)) {
		t.Errorf("output %x", got)
	}
	if n := res.Vectors[0].Instructions; n < 2*(1+64*3) {
		t.Errorf("instructions %d", n)
	}
	if a := elfSymbols(t, fw.Path)["mcugen_arena_buf"]; a < 0x21000000 || a >= 0x22000000 {
		t.Errorf("arena at %#x, want PSRAM", a)
	}
}

// Writing past the external arena damages the guard bytes, and the run fails; a non-zero
// return from the model fails too.
func TestArenaGuardAndReturnCode(t *testing.T) {
	for _, name := range []string{"mps2-an386", "host"} {
		b := board(t, name)
		needTools(t, b)
		over := vector(0, 0)
		over[1] = 0xEE
		fail := vector(0, 0)
		fail[1] = 0xEF
		fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}, {over}, {fail}}, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(fw, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), "@mcugen guard 1 above 0 expected=") || !strings.Contains(err.Error(), "got=42") {
			t.Errorf("%s: guard damage not reported: %v", name, err)
		}
		if err == nil || !strings.Contains(err.Error(), "fake_run returned 7 on vector 2") {
			t.Errorf("%s: return code not reported: %v", name, err)
		}
		if res == nil || !bytes.Equal(res.Vectors[0].Outputs[0], fakeExpected(vector(0, 0))) {
			t.Errorf("%s: vector 0 should still be right", name)
		}
	}
}

// An image too big for the micro:bit's 16 KiB of RAM fails to link with the numbers.
func TestDoesNotFit(t *testing.T) {
	b := board(t, "microbit")
	needTools(t, b)
	_, err := BuildWith(b, fakeModel(t, true, 20000), [][][]byte{{vector(0, 0)}}, t.TempDir(), fakeOptions(true))
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatalf("want a FitError, got %v", err)
	}
	if len(fe.Overflows) != 1 || fe.Overflows[0].Region != "RAM" || fe.Overflows[0].Available != 16384 {
		t.Fatalf("%+v", fe)
	}
	// The RAM holds the 2 KiB stack, the arena with its 2x16 guard bytes and a few
	// hundred bytes of buffers: more than 20000+32+2048, less than that + 1 KiB.
	need := fe.Overflows[0].Needed
	if need < 20000+2*crt.GuardBytes+2048 || need > 20000+2*crt.GuardBytes+2048+1024 {
		t.Errorf("needed %d", need)
	}
	msg := err.Error()
	for _, s := range []string{"does not fit on microbit", "of RAM in region RAM", "microbit has 16,384 B", "arena 20,000 B", "stack 2,048 B", " B short"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	if testing.Short() {
		return
	}
	// Too much flash: 300 KB of vectors in 256 KiB.
	big := make([][][]byte, 300*1024/fakeSize)
	for i := range big {
		big[i] = [][]byte{vector(0, i)}
	}
	_, err = BuildWith(b, fakeModel(t, true, 64), big, t.TempDir(), fakeOptions(true))
	if !errors.As(err, &fe) || fe.Overflows[0].Region != "FLASH" || fe.Overflows[0].Available != 256*1024 || !strings.Contains(err.Error(), "of flash in region FLASH") {
		t.Errorf("flash overflow: %v", err)
	}
}

// A firmware that never finishes is killed after the timeout with a clear message.
func TestTimeout(t *testing.T) {
	names := []string{"mps2-an385", "host"}
	if testing.Short() {
		names = names[:1]
	}
	for _, name := range names {
		b := board(t, name)
		needTools(t, b)
		hang := vector(0, 0)
		hang[1] = 0xED
		fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}, {hang}}, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = Run(fw, time.Second)
		var te *TimeoutError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "did not finish within 1s") {
			t.Errorf("%s: want a timeout, got %v", name, err)
		}
		// A timeout is not proof of a hang: the message offers both causes.
		if err != nil && (!strings.Contains(err.Error(), "may be too short") || !strings.Contains(err.Error(), "--timeout") || strings.Contains(err.Error(), "killed: it hangs")) {
			t.Errorf("%s: %v: want it to say the timeout may be too short (--timeout) or the firmware hangs", name, err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("%s: killing took %v", name, d)
		}
		// The M3 has no stack limit register: an overflow there can hang,
		// and the message says so; the host's stack is the OS's.
		if overflow := err != nil && strings.Contains(err.Error(), "stack overflow, which a cortex-m3 does not trap"); overflow != (name == "mps2-an385") {
			t.Errorf("%s: %v: the stack overflow named %v", name, err, overflow)
		}
	}
}

// Interrupt (what mcugen's SIGINT/SIGTERM handler calls) kills a running
// program's whole process group and returns once it is reaped; the Run that
// started it never returns (the process is about to exit, and must not
// report the kill as the firmware's failure), nor does a later one start
// anything. QEMU runs in a process group of its own, out of reach of a
// terminal's Ctrl-C, so without Interrupt it outlived mcugen.
func TestInterrupt(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc: cannot see the firmware's process")
	}
	for _, name := range []string{"host", "mps2-an385"} {
		t.Run(name, func(t *testing.T) {
			b := board(t, name)
			needTools(t, b)
			hang := vector(0, 0)
			hang[1] = 0xED // the fake model loops for ever on this vector
			fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{hang}}, t.TempDir(), fakeOptions(true))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				procs.Lock()
				procs.stopped = false
				procs.Unlock()
			})
			returned := make(chan error, 2)
			go func() { _, err := Run(fw, time.Minute); returned <- err }()
			// Wait until the program runs (the sh wrapper has exec'd it).
			pid := 0
			for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				pid = processRunning(fw.Path)
			}
			if pid == 0 {
				t.Fatal("the firmware did not start")
			}
			t.Cleanup(func() {
				for p := processRunning(fw.Path); p != 0; p = processRunning(fw.Path) {
					syscall.Kill(p, syscall.SIGKILL)
					time.Sleep(10 * time.Millisecond)
				}
			})
			start := time.Now()
			Interrupt()
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process group %d still exists after Interrupt (kill -0: %v)", pid, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Interrupt took %v", d)
			}
			go func() { _, err := Run(fw, time.Minute); returned <- err }()
			select {
			case err := <-returned:
				t.Errorf("Run returned (%v) after Interrupt: it must block", err)
			case <-time.After(500 * time.Millisecond):
			}
			procs.Lock()
			n := len(procs.running)
			procs.Unlock()
			if n != 0 {
				t.Errorf("%d programs started after Interrupt", n)
			}
		})
	}
}

// processRunning returns the pid of a live process whose command line
// mentions path, or 0.
func processRunning(path string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(path)) && !bytes.HasPrefix(cmdline, []byte("/bin/sh")) {
			return pid
		}
	}
	return 0
}

// A model with its inputs and outputs in the (external) arena: the harness copies the
// vectors to <prefix>_input_ptr(arena) and reads <prefix>_output_ptr(arena).
func TestIOInArena(t *testing.T) {
	dir, err := filepath.Abs("testdata/fakeio")
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Prefix: "fakeio", Sources: []string{filepath.Join(dir, "fakeio.c")},
		Inputs:     []IO{{Name: "in", CName: "in", Size: fakeSize}},
		Outputs:    []IO{{Name: "out", CName: "out", Size: fakeSize}},
		ArenaBytes: 32, ExternalArena: true, IOInArena: true}
	for _, name := range []string{"mps2-an386", "host"} {
		b := board(t, name)
		needTools(t, b)
		vecs := [][][]byte{{vector(9, 1)}, {vector(0, 2)}}
		fw, err := BuildWith(b, m, vecs, t.TempDir(), Options{CFlags: []string{"-Werror"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(fw, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for v, vec := range vecs {
			want := make([]byte, fakeSize)
			for i, x := range vec[0] {
				want[i] = x ^ 0x5a
			}
			if got := res.Vectors[v].Outputs[0]; !bytes.Equal(got, want) {
				t.Errorf("%s vector %d: %x, want %x", name, v, got, want)
			}
		}
	}
}

// A hosted program that crashes (a segmentation fault natively, or in the guest under
// qemu-aarch64) is reported with its signal.
func TestHostedCrash(t *testing.T) {
	for _, name := range []string{"host", "aarch64-linux"} {
		b := board(t, name)
		needTools(t, b)
		crash := vector(0, 0)
		crash[1] = 0xEC
		fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{crash}}, t.TempDir(), fakeOptions(true))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(fw, 20*time.Second)
		var ce *CrashError
		if !errors.As(err, &ce) || !strings.Contains(ce.Signal, "segmentation fault") {
			t.Errorf("%s: want a crash with SIGSEGV, got %v", name, err)
		}
	}
}

// On the M55 the weights go to the read-only QSPI flash (a region apart from the code)
// and the model still reads them right there; a layout override moves the arena.
func TestWeightsAndArenaRegions(t *testing.T) {
	b := board(t, "mps3-an547")
	needTools(t, b)
	vec := vector(2, 9)
	fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vec}}, t.TempDir(),
		Options{CFlags: []string{"-Werror", "-DFAKE_EXTERNAL_ARENA"}, Layout: crt.Layout{ArenaRegion: "ISRAM"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fw, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Vectors[0].Outputs[0]; !bytes.Equal(got, fakeExpected(vec)) {
		t.Errorf("output %x", got)
	}
	syms := elfSymbols(t, fw.Path)
	if a := syms["fake_weights"]; a < 0x28000000 || a >= 0x28000000+8<<20 {
		t.Errorf("fake_weights at %#x, want QSPI", a)
	}
	if a := syms["mcugen_v0_in0"]; a < 0x28000000 || a >= 0x28000000+8<<20 {
		t.Errorf("vector 0 at %#x, want QSPI", a)
	}
	if a := syms["mcugen_arena_buf"]; a < 0x21000000 || a >= 0x21000000+4<<20 {
		t.Errorf("arena at %#x, want ISRAM", a)
	}
	if a := syms["_estack"]; a != 0x20000000+uint64(b.StackBytes) {
		t.Errorf("_estack %#x, want the stack at the bottom of DTCM", a)
	}
}

// Size agrees with the ELF's own section headers (Berkeley rules: text = allocated
// read-only sections, data = allocated writable PROGBITS, bss = NOBITS).
func TestSizeMatchesSections(t *testing.T) {
	b := board(t, "mps2-an386")
	needTools(t, b)
	fw, err := BuildWith(b, fakeModel(t, true, 1000), [][][]byte{{vector(0, 0)}}, t.TempDir(), fakeOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	text, data, bss := elfSections(t, fw.Path)
	if fw.Text != text || fw.Data != data || fw.BSS != bss {
		t.Errorf("size %d/%d/%d, sections %d/%d/%d", fw.Text, fw.Data, fw.BSS, text, data, bss)
	}
	// bss holds the 16 KiB stack and the 1000+32-byte arena at least.
	if fw.BSS < 16*1024+1032 {
		t.Errorf("bss %d", fw.BSS)
	}
}

func TestMissingToolNamesPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	b := board(t, "mps2-an386")
	_, err := Build(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}}, t.TempDir())
	var me *MissingToolError
	if !errors.As(err, &me) || me.Tool != "arm-none-eabi-gcc" || !strings.Contains(err.Error(), "gcc-arm-none-eabi") {
		t.Errorf("got %v", err)
	}
	_, err = Run(&Firmware{Board: board(t, "mps3-an547"), Path: "x.elf"}, time.Second)
	if !errors.As(err, &me) || me.Package != "qemu-system-arm" {
		t.Errorf("got %v", err)
	}
	_, err = Run(&Firmware{Board: board(t, "aarch64-linux"), Path: "x"}, time.Second)
	if !errors.As(err, &me) || me.Package != "qemu-user" {
		t.Errorf("got %v", err)
	}
}

func TestRealBoardsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, name := range []string{"nucleo-l4r5zi", "nucleo-f746zg", "nucleo-h743zi", "nrf52840dk", "nrf5340dk", "arduino-nano-33-ble", "rp2040", "teensy40", "portenta-h7", "stm32u575"} {
		name := name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := board(t, name)
			needTools(t, b)
			fw, err := BuildWith(b, fakeModel(t, true, 4096), [][][]byte{{vector(0, 0)}}, t.TempDir(), fakeOptions(true))
			if err != nil {
				t.Fatal(err)
			}
			if fw.BSS < 4096 {
				t.Errorf("bss %d", fw.BSS)
			}
			if _, err := Run(fw, time.Second); err == nil || !strings.Contains(err.Error(), "no emulator") {
				t.Errorf("run on a real board: %v", err)
			}
		})
	}
}

func elfSections(t *testing.T, path string) (text, data, bss int) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		switch {
		case s.Type == elf.SHT_NOBITS:
			bss += int(s.Size)
		case s.Flags&elf.SHF_WRITE != 0:
			data += int(s.Size)
		default:
			text += int(s.Size)
		}
	}
	return text, data, bss
}

func elfSymbols(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]uint64{}
	for _, s := range syms {
		m[s.Name] = s.Value
	}
	return m
}

// netduinoplus2's runtime prints through USART1 (the STM32F4 SR/DR driver), not
// semihosting: with QEMU's first serial port routed to a file, the whole report is in the
// file and nothing reaches stdout; and TIM2, its counter, gives the same instructions as
// the MPS2 board's FPGA counter for the same Cortex-M4 code.
func TestSTM32UARTAndTimer(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU: not in -short")
	}
	b := board(t, "netduinoplus2")
	needTools(t, b)
	vec := vector(5, 6)
	fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vec}}, t.TempDir(), fakeOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	args, err := Command(fw)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(args, "stdio")
	if i < 1 || args[i-1] != "-serial" {
		t.Fatalf("no -serial stdio in %q", args)
	}
	uart := filepath.Join(t.TempDir(), "uart.txt")
	args[i] = "file:" + uart
	var stdout bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	got, err := os.ReadFile(uart)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "@mcugen end status=0") || strings.Contains(stdout.String(), "@mcugen") {
		t.Fatalf("USART1 got %q; stdout %q", got, stdout.String())
	}
	res, err := Run(fw, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Vectors[0].Outputs[0]; !bytes.Equal(out, fakeExpected(vec)) {
		t.Errorf("output %x", out)
	}
	ref := board(t, "mps2-an386")
	fwRef, err := BuildWith(ref, fakeModel(t, true, 64), [][][]byte{{vec}}, t.TempDir(), fakeOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	resRef, err := Run(fwRef, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := res.Vectors[0].Instructions, resRef.Vectors[0].Instructions; n != m || n == 0 {
		t.Errorf("netduinoplus2 counts %d instructions, mps2-an386 %d", n, m)
	}
}

// A lockup with SP just below the stack's bottom is a stack overflow where the
// stack does not start its region: with the weights in RAM the linker script
// puts them first, and the bottom is the ELF's _sstack, not the region's
// origin (review finding: the origin alone called this a plain crash).
func TestStackOverflowAboveRegionStart(t *testing.T) {
	b0 := board(t, "microbit")
	needTools(t, b0)
	src := `board(
    name = "microbit-ram-weights",
    inherits = "microbit",
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = 0x40000, holds = ["code"]),
        region(name = "RAM", origin = 0x20000000, length = 0x4000, holds = ["weights", "data", "arena"]),
    ],
    stack_bytes = 1024,
)
`
	b := boardFrom(t, src, "microbit-ram-weights")
	deep := vector(0, 0)
	deep[1] = 0xEB
	fw, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{deep}}, t.TempDir(), fakeOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if fw.StackBottom <= 0x20000000 {
		t.Fatalf("_sstack at %#x: want it above the weights, past 0x20000000", fw.StackBottom)
	}
	_, err = Run(fw, 20*time.Second)
	var so *StackOverflowError
	if !errors.As(err, &so) || so.Bottom != fw.StackBottom || so.SP >= so.Bottom {
		t.Errorf("want a StackOverflowError below %#x, got %v", fw.StackBottom, err)
	}
	t.Log(err)
}

// A build into a directory an earlier build used (mcugen's --keep) removes
// that build's firmware and scripts first, and gcc's temporary files live
// and die in a directory of their own: a failed or interrupted build leaves
// neither the old firmware beside the new sources nor cc*.o files (user-
// journey finding: run.sh ran the previous model's firmware).
func TestRebuildLeavesNoStaleFirmware(t *testing.T) {
	b := board(t, "mps2-an386")
	needTools(t, b)
	dir := t.TempDir()
	if _, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}}, dir, fakeOptions(true)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"firmware.elf", "run.sh", "build.sh"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("the first build has no %s: %v", f, err)
		}
	}
	// What a compiler killed mid-build leaves.
	if err := os.MkdirAll(filepath.Join(dir, ".gcc-tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gcc-tmp", "ccStale.o"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(true)
	o.CFlags = append(o.CFlags, "-include", filepath.Join(dir, "no-such-header.h"))
	if _, err := BuildWith(b, fakeModel(t, true, 64), [][][]byte{{vector(0, 0)}}, dir, o); err == nil {
		t.Fatal("a build with a missing header succeeded")
	}
	for _, f := range []string{"firmware.elf", "firmware.map", "run.sh", ".gcc-tmp"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is left after the failed rebuild", f)
		}
	}
}

// tail keeps a repeated line once, with its count, and the last lines.
func TestTailRepeats(t *testing.T) {
	in := "cc1: error: bad -O\ncc1: error: bad -O\nx.c:1: error: y\ncc1: error: bad -O\n"
	want := "cc1: error: bad -O (3 times)\nx.c:1: error: y"
	if got := tail(in, 40); got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if got := tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("tail 2 = %q", got)
	}
	// Source and caret lines repeat for different errors: kept as they are.
	carets := "x.c:1:5: error: 'a' undeclared\n    |     ^\nx.c:2:5: error: 'b' undeclared\n    |     ^\n"
	if got := tail(carets, 40); got != strings.TrimSuffix(carets, "\n") {
		t.Errorf("tail folded caret lines: %q", got)
	}
}

// A run past the counter's 32-bit wrap counts exactly: the fake model's spin
// of 2·spin·x[0] instructions crosses the MPS2's wrap (1,342,177,280
// instructions: x = 170 at 2^22 is 1,426,063,360 more than x = 0), the
// MPS3's (1,677,721,600: x = 205, 1,719,664,640) and netduinoplus2's
// (2,147,483,648: x = 130 at 2^23, 2,181,038,080); the two counts must
// differ by exactly that (they differed by the wrap less before the
// timebase counted the wraps: review finding).
func TestCounterWrapsCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU for about two billion instructions a board")
	}
	spins := map[string][2]int64{"mps2-an386": {1 << 22, 170}, "mps3-an547": {1 << 22, 205}, "netduinoplus2": {1 << 23, 130}}
	onBoards(t, []string{"mps2-an386", "mps3-an547", "netduinoplus2"}, func(t *testing.T, b *boards.Board) {
		spin, x := spins[b.Name][0], spins[b.Name][1]
		vectors := [][][]byte{{vector(0, 0)}, {vector(byte(x), 0)}}
		o := fakeOptions(true)
		o.CFlags = append(o.CFlags, fmt.Sprintf("-DFAKE_SPIN=%du", spin))
		fw, err := BuildWith(b, fakeModel(t, true, 64), vectors, t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(fw, 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		n0, n1 := res.Vectors[0].Instructions, res.Vectors[1].Instructions
		if n1-n0 != 2*spin*x {
			t.Errorf("x = %d: %d more instructions than x = 0 (%d, %d), want %d", x, n1-n0, n0, n1, 2*spin*x)
		}
		if c := res.Vectors[1].Coarse; c <= 0 {
			t.Errorf("the timebase read %d ticks over the long run", c)
		}
	})
}

// A region holding data and the arena is RAM, whatever else it holds, and
// the weights in it are named (review finding: "needs ... B of flash in
// region RAM", the weights left out).
func TestFitErrorSharedRAMRegion(t *testing.T) {
	e := &FitError{Board: "b", Model: "m", ArenaBytes: 256, StackBytes: 16384,
		Overflows: []RegionOverflow{{Region: "RAM", Holds: []string{boards.HoldsData, boards.HoldsArena, boards.HoldsWeights}, Needed: 22672, Available: 20480}}}
	if msg := e.Error(); !strings.Contains(msg, "needs 22,672 B of RAM in region RAM (arena 256 B + stack 16,384 B + data, bss and buffers + the weights)") {
		t.Errorf("%s", msg)
	}
}
