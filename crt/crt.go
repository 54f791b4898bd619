// Package crt is mcugen's runtime: plain C files (embedded in the binary and written next
// to a model's sources) for startup, semihosting, fault reports, the instruction counter
// and the test harness, plus the generated pieces that depend on the board and the model:
// the linker script (from the board's memory regions), mcugen_board.h, the compiled-in
// test vectors and the glue that calls <prefix>_run.
//
// The harness prints one line per fact, each starting with "@mcugen " (UART or stdout;
// semihosting SYS_WRITE0, i.e. QEMU's stderr, on boards without a UART):
//
//	@mcugen begin vectors=<n> inputs=<n> outputs=<n> board=<name>
//	@mcugen ret <v> <int32 returned by <prefix>_run>
//	@mcugen guard <v> <below|above> <offset> expected=<hex> got=<hex>   (only on damage)
//	@mcugen output <v> <o> <lowercase hex of every output byte>
//	@mcugen count <v> instructions=<n|-|plugin> ticks=<n|-> [coarse=<n>] cycles=<n|->
//	@mcugen end status=<0|1>
//	@mcugen fault <type> <CFSR bits|-> pc=0x.. lr=0x.. xpsr=0x.. cfsr=0x..|- hfsr=0x..|- addr=0x..|-
//	@mcugen mark <running instruction count>   (from the QEMU plugin, two per vector)
//	@mcugen mix <v> total=<n> <key>=<count>[/<taken>] ...   (from the mix plugin, when asked)
//
// The exit code is 0 when every run returned 0 and no guard was damaged, 1 otherwise, 3
// after a fault. instructions= is round(ticks·1e9/(hz·2^shift)) for the board's counter
// under -icount shift=7,align=off,sleep=off, measured around the <prefix>_run call
// (the counter reads add a few instructions). ticks= counts the counter's 32-bit wraps
// with a slow timebase of the same time where the board has one (coarse= its ticks,
// read around the counter's window: coarseTimebase).
//
// Generated model code may put read-only data in section WeightsSection (the linker puts
// it in the board's weights region) and a buffer in ArenaSection (the arena region).
package crt

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/mcugen/mcugen/boards"
)

//go:embed src/*.c src/*.h src/*.tmpl
var srcFS embed.FS

// Section names the generated model code may use: read-only weights placed in the board's
// weights region, and a buffer placed in its arena region.
const (
	WeightsSection = ".mcugen.weights"
	ArenaSection   = ".mcugen.arena"
	// ModelArenaSection holds a generated model's static arena: a .bss
	// section to any other linker script, the arena region in mcugen's.
	ModelArenaSection = ".bss.mcugen.arena"
)

// Generated file names.
const (
	BoardHeaderFile = "mcugen_board.h"
	LinkerFile      = "mcugen.ld"
	VectorsFile     = "mcugen_vectors.c"
	GlueFile        = "mcugen_glue.c"
)

// StackGuardBytes is the paint's guard band at the stack's bottom
// (CRT_STACK_GUARD in crt_baremetal.c): a run that writes within it is
// reported as a stack overflow.
const StackGuardBytes = 256

// GuardBytes is the number of guard bytes the harness puts on each side of an external
// arena.
const GuardBytes = 16

// Files returns the names of the runtime's C files a board needs (headers included), in a
// fixed order.
func Files(b *boards.Board) []string {
	common := []string{"crt.h", "crt_print.c", "crt_harness.c", "mcugen_harness.h"}
	if b.BareMetal() {
		return append(common, "crt_baremetal.c", "crt_semihost.c", "crt_semihost.h", "crt_startup.c")
	}
	return append(common, "crt_hosted.c")
}

// PluginFile is the QEMU TCG plugin (C, built for the host as a shared object) that counts
// instructions for boards whose counter kind is "qemu-plugin"; MarkerSymbol is the
// function whose entry it reports.
const (
	PluginFile   = "qemu_icount_plugin.c"
	MarkerSymbol = "crt_icount_marker"
)

// MixPluginFile is the QEMU TCG plugin (C, built for the host) that counts executed
// instructions per mnemonic between two entries of a marker function and prints
// "@mcugen mix <v> total=<n> <key>=<count>[/<taken>] ..." per vector. On bare-metal
// boards its marker is CounterReadSymbol, the counter read the harness makes right before
// and right after each inference, so its window matches the counter's and the firmware
// needs no change; under qemu-aarch64 it is MarkerSymbol.
const (
	MixPluginFile     = "qemu_mix_plugin.c"
	CounterReadSymbol = "crt_counter_read"
)

// Source returns the text of one runtime file.
func Source(name string) ([]byte, error) {
	data, err := srcFS.ReadFile("src/" + name)
	if err != nil {
		return nil, fmt.Errorf("crt: no runtime file %q", name)
	}
	return data, nil
}

// Layout chooses regions for the weights and the arena; "" keeps the board's choice.
type Layout struct {
	WeightsRegion string
	ArenaRegion   string
	// WeightsSection is a section the model's weights were put in
	// (compile --weights-section) that the script places with them.
	WeightsSection string
}

type ldRegion struct {
	Name           string
	Attr           string
	Origin, Length uint64
}

type ldData struct {
	Board                        string
	Regions                      []ldRegion
	Code, Data, Weights, Arena   string
	SeparateWeights              bool
	SeparateArena                bool
	Stack                        int
	WeightsSection, ArenaSection string
	UserWeights                  string // Layout.WeightsSection, "" when none
}

var ldTmpl = template.Must(template.New("ld").Funcs(template.FuncMap{
	"hex": func(v uint64) string { return fmt.Sprintf("0x%08X", v) },
}).ParseFS(srcFS, "src/mcugen.ld.tmpl"))

// LinkerScript generates the GNU ld script of a bare-metal board: the stack at the bottom
// of the data region (an overflow faults instead of corrupting data), then .data and
// .bss; code, read-only data and the .data image in the code region; WeightsSection in
// the weights region and ArenaSection in the arena region.
func LinkerScript(b *boards.Board, l Layout) (string, error) {
	if !b.BareMetal() {
		return "", fmt.Errorf("crt: board %q (%s) is not bare metal and needs no linker script", b.Name, b.Toolchain)
	}
	pick := func(role, override string) (*boards.Region, error) {
		if override == "" {
			return b.RegionFor(role), nil
		}
		r := b.Region(override)
		if r == nil {
			var names []string
			for _, m := range b.Memory {
				names = append(names, m.Name)
			}
			return nil, fmt.Errorf("crt: board %q has no region %q for the %s (regions: %s)", b.Name, override, role, strings.Join(names, ", "))
		}
		if r.ReadOnly && role == boards.HoldsArena {
			return nil, fmt.Errorf("crt: board %q: region %q is read-only and cannot hold the arena", b.Name, override)
		}
		return r, nil
	}
	w, err := pick(boards.HoldsWeights, l.WeightsRegion)
	if err != nil {
		return "", err
	}
	a, err := pick(boards.HoldsArena, l.ArenaRegion)
	if err != nil {
		return "", err
	}
	code, data := b.RegionFor(boards.HoldsCode), b.RegionFor(boards.HoldsData)
	d := ldData{
		Board: b.Name, Code: code.Name, Data: data.Name, Weights: w.Name, Arena: a.Name,
		SeparateWeights: w.Name != code.Name, SeparateArena: a.Name != data.Name,
		Stack: b.StackBytes, WeightsSection: WeightsSection, ArenaSection: ArenaSection,
	}
	if l.WeightsSection != "" && l.WeightsSection != WeightsSection {
		if err := CheckSectionName(l.WeightsSection); err != nil {
			return "", fmt.Errorf("crt: %w", err)
		}
		d.UserWeights = l.WeightsSection
	}
	for _, r := range b.Memory {
		attr := "rwx"
		if r.ReadOnly {
			attr = "rx"
		}
		d.Regions = append(d.Regions, ldRegion{Name: r.Name, Attr: attr, Origin: r.Origin, Length: r.Length})
	}
	var buf bytes.Buffer
	if err := ldTmpl.ExecuteTemplate(&buf, "mcugen.ld.tmpl", d); err != nil {
		return "", fmt.Errorf("crt: linker script for %q: %w", b.Name, err)
	}
	return buf.String(), nil
}

// reservedSections are the sections the linker script places itself: a
// weights section named after one (or inside one, .data.x) would take theirs.
var reservedSections = []string{".text", ".data", ".bss", ".rodata", ".init", ".fini", ".init_array",
	".fini_array", ".preinit_array", ".ctors", ".dtors", ".ARM", ".stack", ".heap", ".noinit", ".comment",
	".debug", ".vectors", ".isr_vector", ".tbss", ".tdata", ".got", ".mcugen", ".mcugen_weights", ".mcugen_arena"}

// ldKeywords are words of GNU ld's script language that a section name in
// the script would be read as (boards.LDKeywords).
var ldKeywords = boards.LDKeywords

// CheckSectionName says whether name can be the weights' own linker section:
// a C identifier's characters plus '.', '$' and '-' (what gcc's section
// attribute and a linker script both take), not one of the sections the
// linker script places, nor inside one.
func CheckSectionName(name string) error {
	ok := name != ""
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_', r == '.':
		case i > 0 && (r >= '0' && r <= '9' || r == '$' || r == '-'):
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("weights section %q: a section name is letters, digits, '_', '.', '$' and '-', not starting with a digit", name)
	}
	if slices.Contains(ldKeywords, name) {
		return fmt.Errorf("weights section %q: %s is a linker script keyword; name a section of the weights' own (e.g. .model_weights)", name, name)
	}
	for _, r := range reservedSections {
		if name == r || strings.HasPrefix(name, r+".") {
			if r == ".mcugen" {
				// User-journey finding: ".mcugen is the linker script's
				// own" read oddly for .mcugen.weights.ad, which the
				// script does place (where the default weights go).
				return fmt.Errorf("weights section %q: .mcugen.* is mcugen's own (.mcugen.weights.* is where the weights go without --weights-section: leave the flag out for that); name a section of the weights' own (e.g. .model_weights)", name)
			}
			return fmt.Errorf("weights section %q: %s is the linker script's own; name a section of the weights' own (e.g. .model_weights)", name, r)
		}
	}
	// Names a vendor's linker script takes by a wildcard, or the tools by
	// their prefix (review: .bss_model went into .bss under a CubeMX
	// script's *(.bss*) and start-up zeroed the weights; .sbss failed in
	// gcc, .symtab in ld, .data_model copied 54 KB of weights into RAM).
	for _, p := range []struct{ prefix, why string }{
		{".bss", "a linker script's *(.bss*) puts it in .bss, which start-up zeroes"},
		{".sbss", "a linker script's *(.sbss*) puts it in zero-filled RAM"},
		{".tbss", "thread-local zero-filled data's prefix"},
		{".data", "a linker script's *(.data*) copies it into RAM"},
		{".sdata", "a linker script's *(.sdata*) copies it into RAM"},
		{".tdata", "thread-local data's prefix"},
		{".noinit", "a linker script's *(.noinit*) leaves it unloaded"},
		{".debug", "debug information, not loaded"},
		{".symtab", "the ELF symbol table"},
		{".strtab", "an ELF string table"},
		{".shstrtab", "the ELF section names"},
		{".rel.", "relocations"},
		{".rela", "relocations (the assembler refuses it)"},
		{".note", "a note, not loaded"},
		{".stab", "debug information (the assembler fails on it)"},
		{".comment", "comments, not loaded"},
	} {
		// The ELF tables' and notes' own names, and those inside them
		// (.symtab.x); a prefix for the rest (a session 50 review found
		// .symmetric_w and .notebook refused, which build and run).
		exact := p.prefix == ".symtab" || p.prefix == ".strtab" || p.prefix == ".shstrtab" || p.prefix == ".note"
		switch {
		case exact && (name == p.prefix || strings.HasPrefix(name, p.prefix+".")):
			return fmt.Errorf("weights section %q: %s is %s; name a section of the weights' own (e.g. .model_weights)", name, p.prefix, p.why)
		case !exact && strings.HasPrefix(name, p.prefix):
			return fmt.Errorf("weights section %q: a name starting %s: %s; name a section of the weights' own (e.g. .model_weights)", name, p.prefix, p.why)
		}
	}
	return nil
}

// BoardHeader generates mcugen_board.h: the CRT_* macros that select the UART, the counter
// and the instruction conversion in the runtime.
func BoardHeader(b *boards.Board) string {
	var s strings.Builder
	s.WriteString("/* Generated by mcugen for board " + b.Name + ": do not edit. */\n")
	s.WriteString("#ifndef MCUGEN_BOARD_H\n#define MCUGEN_BOARD_H\n\n")
	fmt.Fprintf(&s, "#define CRT_BOARD_NAME %q\n", b.Name)
	if b.BareMetal() {
		s.WriteString("#define CRT_BAREMETAL 1\n")
		if b.QEMU.Binary == "" {
			s.WriteString("#define CRT_NO_EMULATOR 1\n")
		}
		u := b.UART
		switch u.Kind {
		case "cmsdk":
			s.WriteString("#define CRT_UART_CMSDK 1\n")
		case "nrf":
			s.WriteString("#define CRT_UART_NRF 1\n")
			if u.TxPin >= 0 {
				fmt.Fprintf(&s, "#define CRT_UART_NRF_TXPIN %du\n", u.TxPin)
			}
			if v, ok := u.NRFBaud(); ok {
				fmt.Fprintf(&s, "#define CRT_UART_NRF_BAUD 0x%08Xu /* %d baud */\n", v, u.Baud)
			}
		case "stm32", "stm32-lpuart":
			s.WriteString("#define CRT_UART_STM32 1\n")
		case "stm32f4":
			s.WriteString("#define CRT_UART_STM32F4 1\n")
		}
		if brr, ok := u.BRR(); ok {
			fmt.Fprintf(&s, "#define CRT_UART_BRR %du /* %d baud from %d Hz */\n", brr, u.Baud, u.ClockHz)
		}
		if u.Kind != "none" {
			fmt.Fprintf(&s, "#define CRT_UART_BASE 0x%08Xu\n", u.Base)
		}
		switch boards.CoreOf(b.CPU) {
		case "cortex-m7", "cortex-m55", "cortex-m85":
			// Level 1 caches to enable at reset (crt_startup.c).
			s.WriteString("#define CRT_CACHES 1\n")
		}
		if len(b.Init) > 0 {
			s.WriteString("#define CRT_INIT_REGS")
			for i, r := range b.Init {
				sep := ","
				if i == len(b.Init)-1 {
					sep = ""
				}
				fmt.Fprintf(&s, " \\\n    {0x%08Xu, 0x%08Xu, 0x%08Xu}%s", r.Addr, r.Mask, r.Value, sep)
			}
			s.WriteString("\n")
		}
	} else {
		s.WriteString("#define CRT_HOSTED 1\n")
	}
	kind := b.Counter.Kind
	// Bare-metal boards count with a peripheral, hosted ones only through the QEMU plugin.
	if b.BareMetal() && kind == "qemu-plugin" || !b.BareMetal() && kind != "qemu-plugin" {
		kind = "none"
	}
	switch kind {
	case "qemu-plugin":
		s.WriteString("#define CRT_COUNTER_QEMU_PLUGIN 1\n")
	case "fpgaio":
		s.WriteString("#define CRT_COUNTER_FPGAIO 1\n")
	case "nrf-timer":
		s.WriteString("#define CRT_COUNTER_NRF_TIMER 1\n")
	case "stm32-tim":
		s.WriteString("#define CRT_COUNTER_STM32_TIM 1\n")
	case "dwt":
		s.WriteString("#define CRT_COUNTER_DWT 1\n")
		if boards.CoreOf(b.CPU) == "cortex-m7" {
			s.WriteString("#define CRT_DWT_UNLOCK 1\n")
		}
	default:
		s.WriteString("#define CRT_COUNTER_NONE 1\n")
	}
	fmt.Fprintf(&s, "#define CRT_COUNTER_ADDR 0x%08Xu\n", b.Counter.Addr)
	fmt.Fprintf(&s, "#define CRT_COUNTER_HZ %du\n", b.Counter.Hz)
	fmt.Fprintf(&s, "#define CRT_ICOUNT_SHIFT %d\n", b.QEMU.ICountShift)
	if num, den := ticksFraction(b); den > 0 {
		fmt.Fprintf(&s, "#define CRT_TICKS_NUM %dull\n#define CRT_TICKS_DEN %dull\n", num, den)
	}
	if addr, ticks := coarseTimebase(kind, b); ticks > 0 {
		fmt.Fprintf(&s, "#define CRT_COARSE_ADDR 0x%08Xu\n#define CRT_COARSE_TICKS %du\n", addr, ticks)
	}
	s.WriteString("\n#endif\n")
	return s.String()
}

// ticksFraction is 1e9 / (hz·2^shift) reduced, the instructions per counter
// tick under -icount (den 0 where the board's counter does not give them).
func ticksFraction(b *boards.Board) (num, den uint64) {
	shift := b.QEMU.ICountShift
	if b.Counter.Hz <= 0 || shift <= 0 || shift > 20 {
		return 0, 0
	}
	num, den = 1_000_000_000, uint64(b.Counter.Hz)<<uint(shift)
	x, y := num, den
	for y != 0 {
		x, y = y, x%y
	}
	return num / x, den / x
}

// coarseTimebase is where the harness reads a slow timebase of the counter's
// time, and how many counter ticks each of its ticks is: the counter's 32
// bits wrap (every 1,342,177,280 instructions for the MPS2's 25 MHz counter
// at shift 7, 2,147,483,648 for netduinoplus2's 1 GHz timer at shift 1), and the timebase
// counts the wraps (review finding: IC on rp2040, run on mps2-an385,
// reported 633,725,774 of its 1,975,903,122 instructions). The FPGAIO's
// CLK100HZ sits just before its COUNTER (0x14 and 0x18); beside TIM2, TIM5
// runs prescaled by 65,536. Boards without one (the nRF51's other timers
// have 16 bits) keep the 32-bit count.
func coarseTimebase(kind string, b *boards.Board) (addr, ticks uint64) {
	a, hz := uint64(b.Counter.Addr), b.Counter.Hz
	switch {
	case kind == "fpgaio" && a&0xfff == 0x018 && hz > 0 && hz%100 == 0:
		return a - 4, uint64(hz / 100)
	case kind == "stm32-tim" && a == 0x40000000:
		return 0x40000C00, 65536
	}
	return 0, 0
}

// Tensor is one model input or output as the harness sees it.
type Tensor struct {
	CName string // the member of struct <prefix>_inputs / _outputs
	Size  int    // bytes
}

// Harness describes the model the test harness drives, and the vectors it runs.
type Harness struct {
	Prefix        string
	Inputs        []Tensor
	Outputs       []Tensor
	ArenaBytes    int
	ExternalArena bool
	// WorkspacePools: with ExternalArena, run takes microTVM's struct
	// <prefix>_workspace_pools (a tvmgen_ prefix), the arena its
	// global_workspace.
	WorkspacePools bool
	// IOInArena: the model keeps its inputs and outputs in the arena and gives their
	// addresses with <prefix>_input_ptr(), <prefix>_input1_ptr(), ... (DESIGN §4,
	// --io in-arena); <prefix>_run then takes only the arena (or nothing).
	IOInArena bool
	// Vectors[v][i] is input i of vector v.
	Vectors [][][]byte
	// Layers is how many layers the model reports through <PREFIX>_LAYER_HOOK
	// (compiled with LayerHookFlag); 0 when it is not profiled per layer.
	Layers int
	// Reset calls <prefix>_reset() before each vector (outside the counted
	// run): a model with state starts every vector from its initial state.
	Reset bool
}

// MaxLayers is how many layers the harness profiles at most: it keeps one
// 32-bit count per layer (CRT_LAYER_PROFILE in crt_harness.c), 32 KiB at
// most, which an unrolled recurrent layer can need (a 49-step LSTM has
// over a thousand layers).
const MaxLayers = 8192

// LayerHookFlags are the compiler flags that route a model's per-layer hook
// (<PREFIX>_LAYER_HOOK, emitted by emitc) to the harness's crt_layer_mark and
// build the harness's per-layer profile for that many layers (nothing of it is
// in a harness built without them).
func LayerHookFlags(prefix string, layers int) []string {
	return []string{"-D" + strings.ToUpper(prefix) + "_LAYER_HOOK(i)=crt_layer_mark(i)",
		fmt.Sprintf("-DCRT_LAYER_PROFILE=%d", layers), "-include", "mcugen_harness.h"}
}

var cIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (h *Harness) check() error {
	if !cIdent.MatchString(h.Prefix) {
		return fmt.Errorf("crt: prefix %q is not a C identifier", h.Prefix)
	}
	if len(h.Outputs) == 0 {
		return fmt.Errorf("crt: the model needs at least one output (has %d inputs, no output)", len(h.Inputs))
	}
	for _, t := range append(append([]Tensor{}, h.Inputs...), h.Outputs...) {
		if !cIdent.MatchString(t.CName) || t.Size <= 0 {
			return fmt.Errorf("crt: tensor %q of %d bytes: need a C identifier and a positive size", t.CName, t.Size)
		}
	}
	if len(h.Vectors) == 0 {
		return fmt.Errorf("crt: no test vectors")
	}
	for v, vec := range h.Vectors {
		if len(vec) != len(h.Inputs) {
			return fmt.Errorf("crt: vector %d has %d inputs, the model has %d", v, len(vec), len(h.Inputs))
		}
		for i, in := range vec {
			if len(in) != h.Inputs[i].Size {
				return fmt.Errorf("crt: vector %d input %d (%s) has %d bytes, the model wants %d", v, i, h.Inputs[i].CName, len(in), h.Inputs[i].Size)
			}
		}
	}
	if h.Layers < 0 || h.Layers > MaxLayers {
		return fmt.Errorf("crt: %d layers to profile; the harness keeps at most %d", h.Layers, MaxLayers)
	}
	// An empty arena is a model whose tensors all live in the caller's
	// buffers: compile --arena external takes it, so run does too (the
	// harness still passes its guarded buffer; audit finding).
	if h.ExternalArena && h.ArenaBytes < 0 {
		return fmt.Errorf("crt: an external arena's size is %d", h.ArenaBytes)
	}
	return nil
}

// bigVector is the size from which writeBytesInit writes a string literal.
const bigVector = 4096

// writeBytesInit writes the initializer of a uint8_t array of len(b) elements. Up to
// bigVector bytes it is a brace list; above it, one string literal of exactly len(b)
// bytes (C99 6.7.8p14: no terminating NUL is stored when the array has no room for it),
// because gcc holds a brace list's elements as a tree node each: a million-element
// float input's four vectors took 1.2 GB and 34 s to compile for the host, the
// literal a fraction of that.
func writeBytesInit(s *strings.Builder, b []byte) {
	if len(b) <= bigVector {
		s.WriteString("{")
		for k, x := range b {
			if k%16 == 0 {
				s.WriteString("\n   ")
			}
			fmt.Fprintf(s, " 0x%02x,", x)
		}
		s.WriteString("\n}")
		return
	}
	const hex = "0123456789abcdef"
	for k, x := range b {
		if k%32 == 0 {
			s.WriteString("\n    \"")
		}
		s.WriteByte('\\')
		s.WriteByte('x')
		s.WriteByte(hex[x>>4])
		s.WriteByte(hex[x&15])
		if k%32 == 31 || k == len(b)-1 {
			s.WriteByte('"')
		}
	}
}

// VectorsC generates mcugen_vectors.c: the vectors as const arrays (with the weights), the input,
// output and arena buffers, and the tables mcugen_harness.h declares. board decides
// where the arena goes (ArenaSection on bare metal).
func (h *Harness) VectorsC(b *boards.Board) (string, error) {
	if err := h.check(); err != nil {
		return "", err
	}
	var s strings.Builder
	s.WriteString("/* Generated by mcugen: the test vectors and buffers of the harness. */\n")
	s.WriteString("#include <stdint.h>\n\n#include \"mcugen_harness.h\"\n\n")
	// Vectors above bigVector bytes are string literals, longer than the 4,095
	// characters C99 promises (-pedantic's -Woverlength-strings).
	s.WriteString("#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n\n")
	fmt.Fprintf(&s, "const uint32_t mcugen_num_vectors = %du;\n", len(h.Vectors))
	fmt.Fprintf(&s, "const uint32_t mcugen_num_inputs = %du;\n", len(h.Inputs))
	fmt.Fprintf(&s, "const uint32_t mcugen_num_outputs = %du;\n", len(h.Outputs))
	sizes := func(ts []Tensor) string {
		var p []string
		for _, t := range ts {
			p = append(p, fmt.Sprintf("%du", t.Size))
		}
		return strings.Join(p, ", ")
	}
	// C has no empty initializer: a model without inputs (every one folded
	// into a constant) gets one unused element in each input table.
	orZero := func(list, zero string) string {
		if list == "" {
			return zero
		}
		return list
	}
	fmt.Fprintf(&s, "const uint32_t mcugen_input_size[] = {%s};\n", orZero(sizes(h.Inputs), "0u"))
	fmt.Fprintf(&s, "const uint32_t mcugen_output_size[] = {%s};\n\n", sizes(h.Outputs))
	// On bare metal the vectors go with the weights (a large read-only region on boards
	// that have one, such as the M55's QSPI flash).
	attr := ""
	if b.BareMetal() {
		attr = fmt.Sprintf(" __attribute__((section(%q)))", WeightsSection+".vectors")
	}
	var refs []string
	for v, vec := range h.Vectors {
		for i, in := range vec {
			name := fmt.Sprintf("mcugen_v%d_in%d", v, i)
			refs = append(refs, name)
			fmt.Fprintf(&s, "static const uint8_t %s[%d]%s = ", name, len(in), attr)
			writeBytesInit(&s, in)
			s.WriteString(";\n")
		}
	}
	fmt.Fprintf(&s, "const uint8_t *const mcugen_vector_data[] = {\n    %s,\n};\n\n", orZero(strings.Join(refs, ",\n    "), "0"))
	for _, io := range []struct {
		kind string
		ts   []Tensor
	}{{"input", h.Inputs}, {"output", h.Outputs}} {
		var names []string
		for i, t := range io.ts {
			n := fmt.Sprintf("mcugen_%s%d", io.kind, i)
			names = append(names, n)
			fmt.Fprintf(&s, "static uint8_t %s[%d] __attribute__((aligned(16))); /* %s */\n", n, t.Size, t.CName)
		}
		fmt.Fprintf(&s, "uint8_t *const mcugen_%s_buf[] = {%s};\n\n", io.kind, orZero(strings.Join(names, ", "), "0"))
	}
	if h.ExternalArena {
		section := ""
		if b.BareMetal() {
			section = fmt.Sprintf(", section(%q)", ArenaSection)
		}
		fmt.Fprintf(&s, "static uint8_t mcugen_arena_buf[%d + 2 * %d] __attribute__((aligned(16)%s));\n", h.ArenaBytes, GuardBytes, section)
		s.WriteString("uint8_t *const mcugen_arena_storage = mcugen_arena_buf;\n")
		fmt.Fprintf(&s, "const uint32_t mcugen_arena_size = %du;\n", h.ArenaBytes)
		fmt.Fprintf(&s, "const uint32_t mcugen_guard_size = %du;\n", GuardBytes)
	} else {
		s.WriteString("uint8_t *const mcugen_arena_storage = 0;\n")
		s.WriteString("const uint32_t mcugen_arena_size = 0u;\n")
		s.WriteString("const uint32_t mcugen_guard_size = 0u;\n")
	}
	return s.String(), nil
}

// GlueC generates mcugen_glue.c: mcugen_model_load, _run and _store, which connect the
// harness's buffers to the model's generated API (DESIGN §4): struct <prefix>_inputs and
// _outputs, or with IOInArena the <prefix>_input_ptr()/_output_ptr() addresses.
func (h *Harness) GlueC() (string, error) {
	if err := h.check(); err != nil {
		return "", err
	}
	var s strings.Builder
	p := h.Prefix
	arg, arena := "", "    (void)arena;\n"
	if h.ExternalArena {
		arg, arena = "arena", ""
	}
	ptr := func(kind string, i int) string {
		if i == 0 {
			return fmt.Sprintf("%s_%s_ptr(%s)", p, kind, arg)
		}
		return fmt.Sprintf("%s_%s%d_ptr(%s)", p, kind, i, arg)
	}
	s.WriteString("/* Generated by mcugen: calls the model through its generated API. */\n")
	fmt.Fprintf(&s, "#include <string.h>\n\n#include \"%s.h\"\n#include \"mcugen_harness.h\"\n\n", p)
	s.WriteString("void mcugen_model_load(void *arena)\n{\n    (void)arena;\n")
	if h.Reset {
		fmt.Fprintf(&s, "    %s_reset();\n", p)
	}
	if h.IOInArena {
		for i := range h.Inputs {
			fmt.Fprintf(&s, "    memcpy(%s, mcugen_input_buf[%d], mcugen_input_size[%d]);\n", ptr("input", i), i, i)
		}
	}
	s.WriteString("}\n\nint32_t mcugen_model_run(void *arena)\n{\n")
	pools := h.ExternalArena && h.WorkspacePools
	if pools {
		fmt.Fprintf(&s, "    struct %s_workspace_pools pools;\n    pools.global_workspace = arena;\n", p)
	}
	switch {
	case h.IOInArena && pools:
		fmt.Fprintf(&s, "    return %s_run(&pools);\n}\n", p)
	case h.IOInArena:
		fmt.Fprintf(&s, "%s    return %s_run(%s);\n}\n", arena, p, arg)
	default:
		fmt.Fprintf(&s, "    struct %s_inputs in;\n    struct %s_outputs out;\n", p, p)
		for i, t := range h.Inputs {
			fmt.Fprintf(&s, "    in.%s = mcugen_input_buf[%d];\n", t.CName, i)
		}
		for i, t := range h.Outputs {
			fmt.Fprintf(&s, "    out.%s = mcugen_output_buf[%d];\n", t.CName, i)
		}
		if pools {
			fmt.Fprintf(&s, "    return %s_run(&in, &out, &pools);\n}\n", p)
		} else if h.ExternalArena {
			fmt.Fprintf(&s, "    return %s_run(&in, &out, arena);\n}\n", p)
		} else {
			fmt.Fprintf(&s, "    (void)arena;\n    return %s_run(&in, &out);\n}\n", p)
		}
	}
	s.WriteString("\nvoid mcugen_model_store(void *arena)\n{\n    (void)arena;\n")
	if h.IOInArena {
		for i := range h.Outputs {
			fmt.Fprintf(&s, "    memcpy(mcugen_output_buf[%d], %s, mcugen_output_size[%d]);\n", i, ptr("output", i), i)
		}
	}
	s.WriteString("}\n")
	return s.String(), nil
}

// Write writes everything the harness firmware needs besides the model's own sources into
// dir: the runtime files for the board, mcugen_board.h, the linker script (bare metal),
// the vectors and the glue. It returns the C files to compile.
func Write(dir string, b *boards.Board, h *Harness, l Layout) ([]string, error) {
	files := map[string]string{BoardHeaderFile: BoardHeader(b)}
	for _, name := range Files(b) {
		data, err := Source(name)
		if err != nil {
			return nil, err
		}
		files[name] = string(data)
	}
	var err error
	if files[VectorsFile], err = h.VectorsC(b); err != nil {
		return nil, err
	}
	if files[GlueFile], err = h.GlueC(); err != nil {
		return nil, err
	}
	if b.BareMetal() {
		if files[LinkerFile], err = LinkerScript(b, l); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("crt: %w", err)
	}
	var cfiles []string
	for _, name := range append(Files(b), BoardHeaderFile, VectorsFile, GlueFile, LinkerFile) {
		text, ok := files[name]
		if !ok {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("crt: %w", err)
		}
		if strings.HasSuffix(name, ".c") {
			cfiles = append(cfiles, path)
		}
	}
	return cfiles, nil
}
