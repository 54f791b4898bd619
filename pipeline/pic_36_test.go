package pipeline

import (
	"debug/elf"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// Position-independent firmware (-fPIC, -fpie) linked at the board's fixed
// addresses runs on the Cortex-M4, int8 models on the dsp kernels, each
// output bit-exact with the reference interpreter. Such code reads the
// addresses of globals from the global offset table, the start-up code's
// own (_sidata, _sdata, ...) too: mcugen's linker script keeps the table
// in flash, as the static link filled it in. Before, GNU ld put it after
// .data in RAM, where nothing copied it, and every such firmware
// BusFaulted (review finding: the PIC builds in the suite only compiled).
// -msingle-pic-base code never loads its PIC register (r9): the reset
// handler sets it. With a frame pointer as well, r7 and r9 are both taken
// and the 3x2 block's asm has too few registers, as with -ffixed-r9: that
// build defines MCUGEN_NO_ASM (every helper's C form).
func TestPICFirmwareRuns(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	type model struct {
		name  string
		state func(o Options) (*State, error)
	}
	graphModel := func(name string, g func() *graph.Graph, knobs map[string]int) model {
		return model{name, func(o Options) (*State, error) {
			o.Knobs = map[string]map[string]int{"conv2d": knobs}
			return CompileGraph(g(), name, o)
		}}
	}
	models := []model{
		{"cnn_int8", func(o Options) (*State, error) { return Compile("../testdata/tflite/cnn_int8.tflite", o) }},
		// The 3x2 block, whose asm PIC builds keep (its weights in r4-r8).
		graphModel("conv3x3", func() *graph.Graph { return tirtest.Conv3x3Size(5, 8, 8, 1, 1, graph.ActRelu, 3) }, map[string]int{"block_px": 3}),
		graphModel("pointwise", func() *graph.Graph { return tirtest.Conv1x1(1, 26, 48, 96, graph.ActNone, 3) }, nil),
	}
	flagSets := [][]string{{"-O2", "-fPIC"}, {"-O3", "-fpie"}, {"-O2", "-fPIC", "-fno-omit-frame-pointer"},
		{"-O2", "-fPIC", "-msingle-pic-base"}, {"-O2", "-fPIC", "-msingle-pic-base", "-fno-omit-frame-pointer", "-DMCUGEN_NO_ASM"},
		{"-O2", "-flto", "-fPIC"}}
	for _, m := range models {
		for _, flags := range flagSets {
			t.Run(m.name+strings.Join(flags, ""), func(t *testing.T) {
				s, err := m.state(Options{Board: b, Target: "dsp", CFlags: flags, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				if !cContains(s.Files, "smlad") {
					t.Fatal("the C has no SMLAD: not the dsp kernels")
				}
				x, err := s.Execute(append(RandomInputs(s.Graph, 3, 36), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
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
	// A build without PIC flags has no table: the linker script's .got
	// section is left out and the firmware is laid out as before.
	t.Run("cnn_int8-O2", func(t *testing.T) {
		s, err := models[0].state(Options{Board: b, Target: "dsp", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Execute(RandomInputs(s.Graph, 1, 36), t.TempDir(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !x.AllMatch() {
			t.Errorf("outputs differ from the reference interpreter")
		}
		if err := gotInCode(b, x.Firmware.Path, false); err != nil {
			t.Error(err)
		}
	})
}

// gotInCode checks that the ELF at path has a non-empty .got in b's code
// region, run from where it is loaded (want), or has no .got (!want).
func gotInCode(b *boards.Board, path string, want bool) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	got := f.Section(".got")
	if !want {
		if got != nil {
			return fmt.Errorf("a .got of %d B in a build without PIC flags", got.Size)
		}
		return nil
	}
	if got == nil || got.Size == 0 {
		return fmt.Errorf("no .got: the build is not position-independent")
	}
	code := b.RegionFor(boards.HoldsCode)
	if got.Addr < code.Origin || got.Addr+got.Size > code.Origin+code.Length {
		return fmt.Errorf(".got at %#x, %d B: not in %s (%#x, %d B)", got.Addr, got.Size, code.Name, code.Origin, code.Length)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && got.Addr >= p.Vaddr && got.Addr < p.Vaddr+p.Memsz && p.Paddr != p.Vaddr {
			return fmt.Errorf(".got at %#x loads at %#x", got.Addr, p.Paddr+got.Addr-p.Vaddr)
		}
	}
	return nil
}
