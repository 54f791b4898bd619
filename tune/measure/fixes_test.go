package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tune"
)

// tune measures under QEMU: a board with an emulator is measured on itself,
// one without on a QEMU board with its core, and the host, which runs
// natively and counts nothing and has no core, is refused with a reason.
func TestMeasureBoard(t *testing.T) {
	cat, err := boards.Load("")
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) *boards.Board {
		b, err := cat.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, name := range []string{"mps2-an386", "mps3-an547", "aarch64-linux"} {
		if m, err := MeasureBoard(get(name), cat); err != nil || m.Name != name {
			t.Errorf("%s: measured on %v (%v), want itself", name, m, err)
		}
	}
	nucleo := get("nucleo-l4r5zi")
	if m, err := MeasureBoard(nucleo, cat); err != nil || m.CPU != nucleo.CPU || m.QEMU.Binary == "" {
		t.Errorf("nucleo-l4r5zi: measured on %v (%v), want a QEMU board with its core", m, err)
	}
	// A board of a QEMU board's core with other flags (no FPU: soft-float
	// code) is measured on a copy built with its own flags and features.
	soft := *nucleo
	soft.Name, soft.FPU, soft.FloatABI, soft.Features = "m4-soft", "", "soft", []string{"dsp"}
	if m, core, err := MeasureBoardOn(&soft, cat); err != nil || core != "cortex-m4" || m.QEMU.Binary == "" ||
		strings.Join(m.GCCFlags(), " ") != strings.Join(soft.GCCFlags(), " ") || strings.Join(m.Features, ",") != "dsp" {
		t.Errorf("m4-soft: measured on %+v, core %q (%v), want a QEMU board building %v", m, core, err, soft.GCCFlags())
	}
	// A board of the QEMU board's flags with another stack is measured on
	// a copy with its stack, where a kernel's local arrays must fit it.
	small := *get("mps2-an386")
	small.Name, small.QEMU.Binary, small.StackBytes = "m4-8k-stack", "", 8192
	if m, _, err := MeasureBoardOn(&small, cat); err != nil || m.StackBytes != 8192 || m.QEMU.Binary == "" || get("mps2-an386").StackBytes == 8192 {
		t.Errorf("m4-8k-stack: measured on %+v (%v), want a QEMU board with an 8 KiB stack", m, err)
	}
	// A core named with gcc's suffix (.small-multiply) is the core's (a
	// review: it found no QEMU board).
	sm := *get("rp2040")
	sm.Name, sm.CPU = "pico-sm", "cortex-m0plus.small-multiply"
	if m, core, err := MeasureBoardOn(&sm, cat); err != nil || core != "cortex-m3" || m.CPU != sm.CPU {
		t.Errorf("pico-sm: measured on %+v, core %q (%v)", m, core, err)
	}
	if get("mps2-an386").FloatABI != "hard" {
		t.Error("the catalog's mps2-an386 was changed by its twin")
	}
	// The M0+ has no QEMU machine: its code runs on the M3 of mps2-an385
	// (the micro:bit's M0 runs it too, but has 16 KiB of RAM to the Pico's
	// 264), built with the Pico's flags; the M0 board is measured on itself.
	pico := get("rp2040")
	m, core, err := MeasureBoardOn(pico, cat)
	if err != nil || m.Name != "mps2-an385" || core != "cortex-m3" || m.CPU != "cortex-m0plus" ||
		strings.Join(m.GCCFlags(), " ") != strings.Join(pico.GCCFlags(), " ") || len(m.Features) != 0 || m.QEMU.Machine != "mps2-an385" {
		t.Errorf("rp2040: measured on %+v, core %q (%v), want mps2-an385 building %v", m, core, err, pico.GCCFlags())
	}
	if get("mps2-an385").CPU != "cortex-m3" {
		t.Error("the catalog's mps2-an385 was changed by its twin")
	}
	if m, err := MeasureBoard(get("microbit"), cat); err != nil || m.Name != "microbit" || m.CPU != "cortex-m0" {
		t.Errorf("microbit: measured on %+v (%v)", m, err)
	}
	m, err = MeasureBoard(get("host"), cat)
	if err == nil {
		t.Fatalf("host: measured on %s, want a refusal", m.Name)
	}
	want := "board host has no instruction counter: tune measures under QEMU; pick a board with an emulator (mcugen boards), or one whose core a QEMU board shares"
	if err.Error() != want {
		t.Errorf("host: %q, want %q", err, want)
	}
}

// A run in which every measurement fails is an error that says so, and
// writes no records file. (The host counts no instructions: every one of
// its measurements fails, without QEMU.)
func TestEveryMeasurementFailedIsAnError(t *testing.T) {
	host := board(t, "host")
	if err := runner.CheckTools(host); err != nil {
		t.Skip(err)
	}
	model := "../../testdata/tflite/mlp_int8.tflite"
	opt := pipeline.Options{Board: host, Version: "test"}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "host.json")
	var notes []string
	cfg := Config{Opt: opt, Trials: 1, Jobs: 2, Out: out, Timeout: 30 * time.Second, Version: "test",
		Note: func(n string) { notes = append(notes, n) }}
	rep, err := Run(s, cfg)
	if err == nil {
		t.Fatalf("every measurement failed and Run said nothing (report %+v, notes %q)", rep, notes)
	}
	msg := err.Error()
	for _, frag := range []string{"measurement(s) failed", "no records written to " + out, "reported no instruction count"} {
		if !strings.Contains(msg, frag) {
			t.Errorf("error %q lacks %q", msg, frag)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}
	if rep == nil || rep.Trials == 0 || rep.Failed != rep.Trials {
		t.Errorf("report %+v: want every measurement failed", rep)
	}
	for _, p := range []string{out, JournalPath(out)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// Every setting the tuner can write for a kernel (each point of its space,
// the fit pass's int8 weights where it keeps them) passes tune.Check against
// the knobs the model's own lowering reads, on each target: the records tune
// writes apply whole, without notes. No QEMU.
func TestTunerSettingsPassCheck(t *testing.T) {
	type build struct {
		model, board string
		flash        int64
	}
	builds := []build{
		{"../../testdata/tflite/cnn_int8.tflite", "mps2-an386", 0},
		{"../../testdata/tflite/cnn_int8.tflite", "mps2-an385", 0},
		{"../../testdata/tflite/cnn_int8.tflite", "mps3-an547", 0},
		{"../../testdata/tflite/cnn_int8.tflite", "aarch64-linux", 0},
		{"../../testdata/tflite/mlp_int8.tflite", "mps2-an386", 0},
		{"../../testdata/tflite/mlp_int8.tflite", "microbit", 0},
	}
	ad := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny", "ad", "ad01_int8.tflite")
	if _, err := os.Stat(ad); err == nil {
		builds = append(builds, build{ad, "mps2-an386", 400000}) // three layers kept int8
	}
	for _, bd := range builds {
		opt := pipeline.Options{Board: board(t, bd.board), Version: "test", FlashBudget: bd.flash}
		s, err := pipeline.Compile(bd.model, opt)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := Kernels(s, opt)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]tune.Knobs{} // by signature, from the model's lowering
		for _, f := range s.Module.Funcs {
			node, _, _ := strings.Cut(f.Node, " + ")
			for _, n := range s.Graph.Nodes {
				if n.Name == node {
					read[tune.Signature(s.Graph, n)] = f.Knobs
				}
			}
		}
		checked := 0
		for _, k := range ks {
			r, ok := read[k.Signature]
			if !ok {
				continue
			}
			// The defaults, and every value of every knob with the rest at
			// the defaults, and up to 64 points more.
			pts := []tune.Knobs{k.Defaults}
			for _, d := range k.Space.Dims {
				for _, v := range d.Values {
					p := k.Defaults.Clone()
					p[d.Name] = v
					pts = append(pts, p)
				}
			}
			for i := 0; i < min(k.Space.Size(), 64); i++ {
				pts = append(pts, k.Space.At(i))
			}
			for _, p := range pts {
				keep, bad := tune.CheckOp(s.Module.Target, k.Op, r, p)
				if len(bad) > 0 || keep.String() != p.String() {
					t.Fatalf("%s on %s, kernel %s: the tuner's %v flagged %q", filepath.Base(bd.model), bd.board, k.Signature, p, bad)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s on %s: no kernel checked", filepath.Base(bd.model), bd.board)
		}
	}
}

// The records of a real (small) tune run apply without a note, and take:
// here the generic schedules of the Cortex-M3 (TestTuneEndToEnd checks the
// dsp ones on mps2-an386).
func TestTunedRecordsApplyWithoutNotes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs firmware under QEMU")
	}
	b := board(t, "mps2-an385")
	if err := runner.CheckTools(b); err != nil {
		t.Skip(err)
	}
	model := "../../testdata/tflite/cnn_int8.tflite"
	opt := pipeline.Options{Board: b, Version: "test"}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	cfg := Config{Opt: opt, Trials: 2, Jobs: 4, Out: out, Timeout: 30 * time.Second, Version: "test"}
	if _, err := Run(s, cfg); err != nil {
		t.Fatal(err)
	}
	recs, notes, err := tune.Load(out)
	if err != nil || len(notes) > 0 || recs.Len() == 0 {
		t.Fatalf("records: %v %q", err, notes)
	}
	var warns []string
	topt := opt
	topt.Tuning, topt.Warn = out, func(w string) { warns = append(warns, w) }
	ts, err := pipeline.Compile(model, topt)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 || ts.Tuned == 0 {
		t.Errorf("tune's own records: %d kernels tuned, notes %q", ts.Tuned, warns)
	}
}

// A board without an emulator is measured on a QEMU board of its core that
// has room for it, not the first by name: a small QEMU board of the user's
// own file sorted before mps2-an500 and took a 1 MiB board's model, which
// did not fit it (user-journey finding).
func TestMeasureBoardHasRoom(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m7.star")
	src := `board(
    name = "a-small-m7-qemu",
    inherits = "mps2-an500",
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = 256 * 1024, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 24 * 1024, holds = ["data", "arena"]),
    ],
    stack_bytes = 4096,
)
board(
    name = "big-m7",
    inherits = "nucleo-h743zi",
    memory = [
        region(name = "FLASH", origin = 0x08000000, length = 2048 * 1024, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x24000000, length = 1024 * 1024, holds = ["data", "arena"]),
    ],
)
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := boards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	big, err := cat.Get("big-m7")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := MeasureBoardOn(big, cat)
	if err != nil || m.RegionFor(boards.HoldsData).Length < 1024*1024 {
		t.Errorf("big-m7 measured on %v (%v), want a QEMU board with 1 MiB of RAM or more", m.Name, err)
	}
}

// Between QEMU boards otherwise equal, the catalog's is the twin: a board
// of the user's own file that inherits mps2-an505 with another memory map
// (first by name) ran a Cortex-M23's code and crashed, where mps2-an505
// was there (multi-model journey). Both the other-core and the same-core
// choice.
func TestTwinPrefersCatalogBoards(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.star")
	src := `board(
    name = "aaa-m33",
    description = "an505 with RAM elsewhere",
    inherits = "mps2-an505",
    memory = [
        region(name = "FLASH", origin = 0x10000000, length = 512 * KiB, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x60000000, length = 64 * KiB, holds = ["data", "arena"]),
    ],
)
board(
    name = "aaa-m4",
    description = "an386 by another name",
    inherits = "mps2-an386",
)
board(
    name = "my-m23",
    description = "M23",
    inherits = "cortex-m",
    cpu = "cortex-m23",
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = 256 * KiB, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 32 * KiB, holds = ["data", "arena"]),
    ],
)
board(
    name = "my-m4",
    description = "M4 without an emulator",
    inherits = "nucleo-l4r5zi",
)
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := boards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"my-m23": "mps2-an505", "my-m4": "mps2-an386"} {
		b, err := cat.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := MeasureBoardOn(b, cat)
		if err != nil || m.Name != want && !strings.HasPrefix(m.Name, want) {
			t.Errorf("%s measured on %v (%v), want %s", name, m, err, want)
		}
		if m != nil && m.QEMU.Machine != want {
			t.Errorf("%s: machine %s, want %s", name, m.QEMU.Machine, want)
		}
	}
}
