// Package runner builds test firmware for a board (a model's C sources plus mcugen's
// runtime and harness), runs it under QEMU (or natively for the host board) with a
// timeout, and turns its output into per-vector output bytes and instruction counts.
// Link overflows, faults, hangs and missing tools become errors that say what happened.
package runner

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
)

// IO is one model input or output.
type IO struct {
	Name  string // the tensor's name in the model
	CName string // its member in struct <prefix>_inputs / <prefix>_outputs
	Size  int    // bytes
}

// Model is generated model code following DESIGN §4.
type Model struct {
	Prefix        string   // <prefix>.h declares <prefix>_run
	Sources       []string // C files
	IncludeDirs   []string // the directories of Sources are added too
	Inputs        []IO
	Outputs       []IO
	ArenaBytes    int
	ExternalArena bool // <prefix>_run takes a void *arena (the harness guards it)
	// WorkspacePools: run takes microTVM's struct <prefix>_workspace_pools
	// instead (a tvmgen_ prefix with ExternalArena).
	WorkspacePools bool
	IOInArena      bool // inputs/outputs live in the arena: <prefix>_input_ptr() etc.
	// Layers is how many layers <prefix>_run reports through <PREFIX>_LAYER_HOOK
	// (emitc's per-layer hook; Options.Layers profiles them).
	Layers int
	// Reset: the model has state and each vector starts from its initial
	// state (<prefix>_reset() before each run).
	Reset bool
}

// The C compilers a build can take (Options.Compiler).
const (
	CompilerGCC   = "gcc"   // the board's gcc (the default)
	CompilerClang = "clang" // LLVM's clang (ClangFlags), linked by the board's gcc
)

// Options tune a build; the zero value is the default.
type Options struct {
	OptLevel string   // "-O2" when empty; e.g. "-Os"
	Compiler string   // CompilerGCC when empty, or CompilerClang
	CFlags   []string // appended to the compile line
	// ClangCFlags are appended to a clang build's compile lines only (not
	// to the gcc link that follows them).
	ClangCFlags []string
	Layout      crt.Layout // override the board's weights / arena regions
	// Mix also builds mcugen's instruction-mix QEMU plugin (see EnableMix): Run then
	// reports per-mnemonic counts and, on Cortex-M4 boards, a cycle estimate. Off by
	// default: the plugin slows QEMU down.
	Mix bool
	// Layers profiles the model per layer (Model.Layers of them): each layer's count
	// comes back in VectorResult.Layers. The hooks add a few instructions per layer
	// to the whole-run count (Result.LayerOverhead each).
	Layers bool
}

// Firmware is a built test program.
type Firmware struct {
	Board   *boards.Board
	Model   Model
	Path    string // ELF (or host executable)
	Dir     string
	Vectors int
	// Layers is how many layers the harness profiles (0: none).
	Layers int
	// PluginArgs is the -plugin argument when QEMU's instruction-counting plugin is used.
	PluginArgs string
	// MixPluginArgs is the -plugin argument of the instruction-mix plugin (EnableMix).
	MixPluginArgs string
	Text          int // from the size tool: text (code + read-only data)
	Data          int
	BSS           int // includes the stack and the arena
	// RAMWeights is the part of Text the linker script put in a writable
	// region (a board file's weights region in RAM): loaded into RAM, not
	// flash, so FlashBytes leaves it out and RAMBytes counts it.
	RAMWeights int
	// StackBottom is the address of the stack's lowest word (the linker
	// script's _sstack) in a bare-metal firmware, 0 where unknown.
	StackBottom uint64
}

// gccTemp makes dir/.gcc-tmp afresh (a killed compiler's files gone) for
// gcc's own temporary files (cc*.s, cc*.o): in the build directory, so that
// a compiler killed by Interrupt leaves none in /tmp, and in a directory of
// their own, which the caller removes, so that they do not pile up in a
// kept build directory either (user-journey finding).
func gccTemp(dir string) (string, error) {
	tmp := filepath.Join(dir, ".gcc-tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("runner: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", fmt.Errorf("runner: %w", err)
	}
	return tmp, nil
}

// symbolValue is the value of the ELF file's symbol name, 0 if it has none.
func symbolValue(path, name string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// FlashBytes is text + data, less the weights placed in RAM.
func (f *Firmware) FlashBytes() int { return f.Text - f.RAMWeights + f.Data }

// RAMBytes is data + bss (stack and arena included), with the weights placed in RAM.
func (f *Firmware) RAMBytes() int { return f.Data + f.BSS + f.RAMWeights }

// weightsOutputSection is the linker script's output section of the weights
// when they have a region of their own (crt/src/mcugen.ld.tmpl).
const weightsOutputSection = ".mcugen_weights"

// writableSection is the size of the ELF file's allocated section name when
// its address is in one of the board's RAM regions (one that holds data or
// the arena), else 0. A region that holds weights alone is flash (a QSPI
// or second flash bank) whether or not its board file says readonly: the
// catalog marks few (a review: weights in a second flash region were
// counted as RAM).
func writableSection(path string, b *boards.Board, name string) int {
	f, err := elf.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sec := f.Section(name)
	if sec == nil || sec.Flags&elf.SHF_ALLOC == 0 || sec.Type == elf.SHT_NOBITS {
		return 0
	}
	for _, r := range b.Memory {
		ram := !r.ReadOnly && (slices.Contains(r.Holds, boards.HoldsData) || slices.Contains(r.Holds, boards.HoldsArena))
		if ram && sec.Addr >= r.Origin && sec.Addr-r.Origin < r.Length {
			return int(sec.Size)
		}
	}
	return 0
}

// MissingToolError says which program is missing and which Debian package provides it.
type MissingToolError struct {
	Tool    string
	Package string
}

func (e *MissingToolError) Error() string {
	return fmt.Sprintf("runner: %s not found in PATH: install the Debian package %s (apt-get install %s)", e.Tool, e.Package, e.Package)
}

var debianPackage = map[string]string{
	"arm-none-eabi-gcc":      "gcc-arm-none-eabi libnewlib-arm-none-eabi",
	"arm-none-eabi-size":     "binutils-arm-none-eabi",
	"aarch64-linux-gnu-gcc":  "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
	"aarch64-linux-gnu-size": "binutils-aarch64-linux-gnu",
	"qemu-system-arm":        "qemu-system-arm",
	"qemu-aarch64":           "qemu-user",
	"gcc":                    "gcc",
	"clang":                  "clang",
	"size":                   "binutils",
}

// LookTool finds a program in PATH or returns a *MissingToolError naming its package.
func LookTool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		pkg := debianPackage[name]
		if pkg == "" {
			pkg = name
		}
		return "", &MissingToolError{Tool: name, Package: pkg}
	}
	return p, nil
}

// Tools lists the programs needed to build and run firmware for b.
func Tools(b *boards.Board) []string {
	switch b.Toolchain {
	case boards.ToolchainArmNoneEABI:
		t := []string{"arm-none-eabi-gcc", "arm-none-eabi-size"}
		if b.QEMU.Binary != "" {
			t = append(t, b.QEMU.Binary)
		}
		return t
	case boards.ToolchainAArch64:
		t := []string{"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-size", "qemu-aarch64"}
		if b.Counter.Kind == "qemu-plugin" {
			t = append(t, "gcc")
		}
		return t
	}
	return []string{"gcc", "size"}
}

func compiler(b *boards.Board) string {
	switch b.Toolchain {
	case boards.ToolchainArmNoneEABI:
		return "arm-none-eabi-gcc"
	case boards.ToolchainAArch64:
		return "aarch64-linux-gnu-gcc"
	}
	return "gcc"
}

// Build writes the runtime, the harness and the vectors into dir, then compiles and links
// them with m's sources for b. vectors[v][i] is input i of vector v.
func Build(b *boards.Board, m Model, vectors [][][]byte, dir string) (*Firmware, error) {
	return BuildWith(b, m, vectors, dir, Options{})
}

// BuildWith is Build with options.
func BuildWith(b *boards.Board, m Model, vectors [][][]byte, dir string, o Options) (*Firmware, error) {
	cc, err := LookTool(compiler(b))
	if err != nil {
		return nil, err
	}
	h := &crt.Harness{Prefix: m.Prefix, ArenaBytes: m.ArenaBytes, ExternalArena: m.ExternalArena, WorkspacePools: m.WorkspacePools, IOInArena: m.IOInArena, Vectors: vectors, Reset: m.Reset}
	if o.Layers {
		h.Layers = m.Layers
	}
	for _, t := range m.Inputs {
		h.Inputs = append(h.Inputs, crt.Tensor{CName: t.CName, Size: t.Size})
	}
	for _, t := range m.Outputs {
		h.Outputs = append(h.Outputs, crt.Tensor{CName: t.CName, Size: t.Size})
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	// A build into a directory an earlier one used (--keep) first removes
	// that build's products: an interrupted build must not leave the old
	// firmware and scripts beside the new model (user-journey finding:
	// run.sh ran the previous model's firmware).
	stale := []string{"firmware.elf", "firmware.map", "build.sh", "run.sh"}
	objs, _ := filepath.Glob(filepath.Join(dir, clangObjects)) // a clang build's
	for _, o := range objs {
		stale = append(stale, filepath.Base(o))
	}
	for _, f := range stale {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	cfiles, err := crt.Write(dir, b, h, o.Layout)
	if err != nil {
		return nil, fmt.Errorf("runner: board %s: %w", b.Name, err)
	}
	opt := o.OptLevel
	if opt == "" {
		opt = b.OptLevel()
	}
	clang, clangFlags, err := clangFor(b, o.Compiler)
	if err != nil {
		return nil, err
	}
	args := append(b.GCCFlags(), opt, "-std=c99", "-Wall", "-Wextra", "-ffunction-sections", "-fdata-sections", "-I", dir)
	seen := map[string]bool{dir: true}
	for _, d := range append(append([]string{}, m.IncludeDirs...), dirsOf(m.Sources)...) {
		if !seen[d] {
			seen[d] = true
			args = append(args, "-I", d)
		}
	}
	args = append(args, o.CFlags...)
	if h.Layers > 0 {
		args = append(args, crt.LayerHookFlags(m.Prefix, h.Layers)...)
	}
	sources := append(append([]string{}, m.Sources...), cfiles...)
	out := filepath.Join(dir, "firmware.elf")
	var link []string
	switch b.Toolchain {
	case boards.ToolchainArmNoneEABI:
		link = append(link, "-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections",
			"-T", filepath.Join(dir, crt.LinkerFile), "-Wl,-Map="+filepath.Join(dir, "firmware.map"))
	case boards.ToolchainAArch64:
		link = append(link, "-static", "-Wl,--gc-sections")
	default:
		link = append(link, "-Wl,--gc-sections")
	}
	// libm for float models (expf, tanhf); int8 models reference none of it.
	link = append(link, "-lm", "-o", out)
	// gcc compiles and links in one command. clang compiles each file
	// (its flags after the shared ones), and the board's gcc links the
	// objects with its C library, as a clang-based IDE's project does.
	var cmds [][]string
	if clang == "" {
		cmds = [][]string{append(append(append([]string{cc}, args...), sources...), link...)}
	} else {
		objs := make([]string, len(sources))
		for i, src := range sources {
			objs[i] = clangObject(dir, i, src)
			c := append(append(append([]string{clang}, ClangOnly(args)...), clangFlags...), o.ClangCFlags...)
			cmds = append(cmds, append(c, "-c", src, "-o", objs[i]))
		}
		// The host's objects link with clang itself (its sanitizer
		// runtimes are its own); the cross boards' with their gcc.
		ld := cc
		if b.Toolchain == boards.ToolchainHost {
			ld = clang
		}
		l := append(append(append([]string{ld}, b.GCCFlags()...), opt), o.CFlags...)
		if b.Toolchain == boards.ToolchainArmNoneEABI {
			// clang's objects say the stack is not executable and
			// newlib's assembly ones say nothing, which ld warns of.
			l = append(l, "-Wl,-z,noexecstack")
		}
		cmds = append(cmds, append(append(l, objs...), link...))
	}
	// The build directory says how to redo the build (a kept one is for looking into).
	if err := writeScriptCmds(dir, "build.sh", "rebuilds firmware.elf as mcugen built it", cmds); err != nil {
		return nil, err
	}
	tmp, err := gccTemp(dir)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	for _, argv := range cmds {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		cmd.Stderr = &stderr
		if err = runCmd(cmd); err != nil {
			break
		}
	}
	os.RemoveAll(tmp)
	if err != nil {
		if ov := parseOverflow(b, m, stderr.String()); ov != nil {
			return nil, ov
		}
		return nil, fmt.Errorf("runner: building %s firmware for %s failed: %v\n%s", m.Prefix, b.Name, err, tail(stderr.String(), 40))
	}
	fw := &Firmware{Board: b, Model: m, Path: out, Dir: dir, Vectors: len(vectors), Layers: h.Layers}
	if b.Counter.Kind == "qemu-plugin" && !b.BareMetal() {
		if fw.PluginArgs, err = buildPlugin(dir, out); err != nil {
			return nil, err
		}
	}
	if fw.Text, fw.Data, fw.BSS, err = Size(out); err != nil {
		return nil, err
	}
	if b.BareMetal() {
		fw.StackBottom = symbolValue(out, "_sstack")
		fw.RAMWeights = writableSection(out, b, weightsOutputSection)
	}
	if o.Mix {
		if err := EnableMix(fw); err != nil {
			return nil, err
		}
	}
	if run, err := Command(fw); err == nil {
		if err := writeScript(dir, "run.sh", "runs firmware.elf as mcugen ran it", run); err != nil {
			return nil, err
		}
	}
	return fw, nil
}

// writeScript writes dir/name, a shell script that runs argv in dir. Paths in
// dir and its parent (the build and the model beside it) are written relative
// to dir, so the script works after the kept directory is moved.
func writeScript(dir, name, what string, argv []string) error {
	return writeScriptCmds(dir, name, what, [][]string{argv})
}

// writeScriptCmds is writeScript for several commands, run in order: the
// script stops at the first that fails.
func writeScriptCmds(dir, name, what string, cmds [][]string) error {
	rel := func(a string) string {
		for _, r := range []struct{ abs, rel string }{{dir, "."}, {filepath.Dir(dir), ".."}} {
			if a == r.abs {
				return r.rel
			}
			a = strings.ReplaceAll(a, r.abs+string(filepath.Separator), r.rel+string(filepath.Separator))
		}
		return a
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Written by mcugen: %s.\ncd \"$(dirname \"$0\")\" || exit 1\n", what)
	for i, argv := range cmds {
		words := make([]string, len(argv))
		for j, a := range argv {
			words[j] = shellQuote(rel(a))
		}
		if i == len(cmds)-1 {
			b.WriteString("exec " + strings.Join(words, " ") + "\n")
		} else {
			b.WriteString(strings.Join(words, " ") + " || exit 1\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o755); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

// shellQuote quotes s for sh where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// buildPlugin compiles mcugen's instruction-counting TCG plugin for the host and returns
// the -plugin argument that reports entries to the marker function of the ELF exe.
func buildPlugin(dir, exe string) (string, error) {
	so, err := compilePlugin(dir, crt.PluginFile, "mcugen_icount.so")
	if err != nil {
		return "", err
	}
	addr, err := symbolAddr(exe, crt.MarkerSymbol)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s,marker=%#x", so, addr), nil
}

// EnableMix builds mcugen's instruction-mix TCG plugin (crt.MixPluginFile) for fw and
// sets fw.MixPluginArgs, so that Run also reports, per vector, how often each instruction
// (by mnemonic) executed during the inference (VectorResult.Mix) and, on Cortex-M4
// boards, a cycle estimate from those counts (VectorResult.M4). The firmware itself is
// unchanged: the plugin watches the counter reads the harness already makes around the
// inference (crt.CounterReadSymbol on bare metal, crt.MarkerSymbol under qemu-aarch64),
// so the instruction count is the same with and without it.
func EnableMix(fw *Firmware) error {
	b := fw.Board
	if b.QEMU.Binary == "" {
		return fmt.Errorf("runner: board %s runs without QEMU: the instruction mix needs QEMU's plugin interface", b.Name)
	}
	symbol := crt.CounterReadSymbol
	if !b.BareMetal() {
		if b.Counter.Kind != "qemu-plugin" {
			return fmt.Errorf("runner: board %s has no marker function for the instruction-mix plugin", b.Name)
		}
		symbol = crt.MarkerSymbol
	}
	so, err := compilePlugin(fw.Dir, crt.MixPluginFile, "mcugen_mix.so")
	if err != nil {
		return err
	}
	addr, err := symbolAddr(fw.Path, symbol)
	if err != nil {
		return err
	}
	fw.MixPluginArgs = fmt.Sprintf("%s,marker=%#x", so, addr)
	if b.BareMetal() {
		fw.MixPluginArgs += ",thumb=on" // every bare-metal board is a Cortex-M
	}
	return nil
}

// compilePlugin builds one of crt's QEMU plugins as a shared object in dir.
func compilePlugin(dir, name, soName string) (string, error) {
	gcc, err := LookTool("gcc")
	if err != nil {
		return "", err
	}
	src, err := crt.Source(name)
	if err != nil {
		return "", err
	}
	cfile := filepath.Join(dir, name)
	if err := os.WriteFile(cfile, src, 0o644); err != nil {
		return "", fmt.Errorf("runner: %w", err)
	}
	so := filepath.Join(dir, soName)
	cmd := exec.Command(gcc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", so, cfile)
	tmp, err := gccTemp(dir)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runCmd(cmd); err != nil {
		return "", fmt.Errorf("runner: building the QEMU plugin %s: %v\n%s", name, err, out.String())
	}
	return so, nil
}

// symbolAddr returns the address of a function in a fixed-address ELF executable, as the
// program counter sees it (without the Thumb bit).
func symbolAddr(exe, symbol string) (uint64, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return 0, fmt.Errorf("runner: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return 0, fmt.Errorf("runner: %s is not a fixed-address executable (%v): the QEMU plugins need one", exe, f.Type)
	}
	syms, err := f.Symbols()
	if err != nil {
		return 0, fmt.Errorf("runner: %s: %w", exe, err)
	}
	for _, s := range syms {
		if s.Name == symbol && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			v := s.Value
			if f.Machine == elf.EM_ARM {
				v &^= 1
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("runner: %s has no function %s", exe, symbol)
}

func dirsOf(files []string) []string {
	var d []string
	for _, f := range files {
		if abs, err := filepath.Abs(filepath.Dir(f)); err == nil {
			d = append(d, abs)
		}
	}
	return d
}

func tail(s string, lines int) string {
	// A line said again (gcc's "cc1: error: ..." once per source file) is
	// kept once, with its count (robustness journey: a bad -O flag in a
	// board file gave one error line eight times).
	var l []string
	seen := map[string]int{}
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		// Only a whole diagnostic (no indent: not a source or caret line
		// of gcc's, which repeat for different errors) is folded.
		whole := line != "" && line[0] != ' ' && line[0] != '\t' && (strings.Contains(line, "error:") || strings.Contains(line, "warning:"))
		if i, ok := seen[line]; ok && whole {
			count[line]++
			l[i] = fmt.Sprintf("%s (%d times)", line, count[line])
			continue
		}
		seen[line], count[line] = len(l), 1
		l = append(l, line)
	}
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// RegionOverflow is one memory region that a link overflowed.
type RegionOverflow struct {
	Region    string
	Holds     []string
	Needed    uint64 // bytes the image wants in the region
	Available uint64 // the region's length
}

// FitError reports an image that does not fit the board's memory.
type FitError struct {
	Board      string
	Model      string
	Overflows  []RegionOverflow
	ArenaBytes int
	StackBytes int
}

func (e *FitError) Error() string {
	var parts []string
	for _, o := range e.Overflows {
		// A region holding data or the arena is RAM, whatever else it
		// holds (review finding: one holding data, arena and weights was
		// called flash, its weights left out of the breakdown).
		kind, detail := "memory", ""
		switch {
		case slices.Contains(o.Holds, boards.HoldsData) || slices.Contains(o.Holds, boards.HoldsArena):
			kind = "RAM"
		case slices.Contains(o.Holds, boards.HoldsCode) || slices.Contains(o.Holds, boards.HoldsWeights):
			kind = "flash"
		}
		if slices.Contains(o.Holds, boards.HoldsArena) && e.ArenaBytes > 0 {
			detail += fmt.Sprintf("arena %s B", commas(uint64(e.ArenaBytes)))
		}
		if slices.Contains(o.Holds, boards.HoldsData) {
			if detail != "" {
				detail += " + "
			}
			detail += fmt.Sprintf("stack %s B + data, bss and buffers", commas(uint64(e.StackBytes)))
		}
		if kind == "RAM" {
			for _, h := range []string{boards.HoldsWeights, boards.HoldsCode} {
				if slices.Contains(o.Holds, h) {
					detail += " + " + map[string]string{boards.HoldsWeights: "the weights", boards.HoldsCode: "the code"}[h]
				}
			}
			detail = strings.TrimPrefix(detail, " + ")
		}
		if detail == "" {
			detail = strings.Join(o.Holds, ", ")
		}
		parts = append(parts, fmt.Sprintf("needs %s B of %s in region %s (%s); %s has %s B there (%s B short)",
			commas(o.Needed), kind, o.Region, detail, e.Board, commas(o.Available), commas(o.Needed-o.Available)))
	}
	return fmt.Sprintf("runner: %s does not fit on %s: %s", e.Model, e.Board, strings.Join(parts, "; "))
}

var overflowRE = regexp.MustCompile("region [`']([^'`]+)' overflowed by ([0-9]+) bytes")

func parseOverflow(b *boards.Board, m Model, ldErr string) *FitError {
	var ovs []RegionOverflow
	seen := map[string]bool{}
	for _, mm := range overflowRE.FindAllStringSubmatch(ldErr, -1) {
		if seen[mm[1]] {
			continue
		}
		seen[mm[1]] = true
		by, _ := strconv.ParseUint(mm[2], 10, 64)
		o := RegionOverflow{Region: mm[1]}
		if r := b.Region(mm[1]); r != nil {
			o.Available, o.Holds = r.Length, r.Holds
		}
		o.Needed = o.Available + by
		ovs = append(ovs, o)
	}
	if len(ovs) == 0 {
		return nil
	}
	return &FitError{Board: b.Name, Model: m.Prefix, Overflows: ovs, ArenaBytes: m.ArenaBytes, StackBytes: b.StackBytes}
}

func commas(v uint64) string {
	s := strconv.FormatUint(v, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// clangFor checks a compiler name (CompilerGCC or "", CompilerClang) and,
// for clang, finds it and its flags for b (ClangFlags); for gcc clang is "".
func clangFor(b *boards.Board, name string) (clang string, flags []string, err error) {
	switch name {
	case "", CompilerGCC:
		return "", nil, nil
	case CompilerClang:
		if clang, err = LookTool("clang"); err != nil {
			return "", nil, err
		}
		flags, err = ClangFlags(b)
		return clang, flags, err
	}
	return "", nil, fmt.Errorf("runner: compiler %q: want %s or %s", name, CompilerGCC, CompilerClang)
}

// ObjectFlash compiles the C files srcs for b as Build does (the board's
// flags, their -O or -O2, one section per function) with the compiler cc names
// (CompilerGCC or "", CompilerClang) into objects in dir and returns their
// text + data: the flash the code and constants take before any runtime or
// application is linked with them. clang's code is its own size (KWS on
// the M4: 87,296 B against gcc's 82,220; review finding: a --cc clang
// project passed compile's check and overflowed its flash at the link).
func ObjectFlash(b *boards.Board, srcs []string, dir, compilerName string) (int, error) {
	cc, err := LookTool(compiler(b))
	if err != nil {
		return 0, err
	}
	flags := b.GCCFlags()
	clang, extra, err := clangFor(b, compilerName)
	if err != nil {
		return 0, err
	}
	if clang != "" {
		cc, flags = clang, append(ClangOnly(flags), extra...)
	}
	total := 0
	for i, src := range srcs {
		obj := filepath.Join(dir, fmt.Sprintf("obj%d.o", i))
		args := append(slices.Clone(flags), b.OptLevel(), "-std=c99", "-ffunction-sections", "-fdata-sections", "-I", filepath.Dir(src), "-c", src, "-o", obj)
		cmd := exec.Command(cc, args...)
		tmp, err := gccTemp(dir)
		if err != nil {
			return 0, err
		}
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = runCmd(cmd)
		os.RemoveAll(tmp)
		if err != nil {
			return 0, fmt.Errorf("runner: compiling %s for %s: %v\n%s", filepath.Base(src), b.Name, err, tail(stderr.String(), 20))
		}
		text, data, _, err := Size(obj)
		if err != nil {
			return 0, err
		}
		total += text + data
	}
	return total, nil
}

// Size returns the Berkeley text, data and bss sizes of an ELF file, from
// arm-none-eabi-size (aarch64-linux-gnu-size or size for other machines).
func Size(path string) (text, data, bss int, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("runner: size: %w", err)
	}
	machine := f.Machine
	f.Close()
	tool := "size"
	switch machine {
	case elf.EM_ARM:
		tool = "arm-none-eabi-size"
	case elf.EM_AARCH64:
		tool = "aarch64-linux-gnu-size"
	}
	exe, err := LookTool(tool)
	if err != nil {
		return 0, 0, 0, err
	}
	cmd := exec.Command(exe, path)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err = runCmd(cmd)
	out := stdout.Bytes()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("runner: %s %s: %v", tool, path, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return 0, 0, 0, fmt.Errorf("runner: %s printed %q", tool, out)
	}
	fields := strings.Fields(lines[1])
	if len(fields) < 3 {
		return 0, 0, 0, fmt.Errorf("runner: %s printed %q", tool, out)
	}
	var v [3]int
	for i := range v {
		if v[i], err = strconv.Atoi(fields[i]); err != nil {
			return 0, 0, 0, fmt.Errorf("runner: %s printed %q", tool, out)
		}
	}
	return v[0], v[1], v[2], nil
}

// VectorResult is what the firmware printed for one vector.
type VectorResult struct {
	Ret          int32
	Outputs      [][]byte
	Instructions int64 // -1 when the board cannot count them
	Ticks        int64 // counter ticks (its 32 bits' wraps counted), -1 when none
	// Coarse is the ticks of the slow timebase that counts the counter's
	// wraps (crt.h, crt_coarse_read), over a window around the counter's;
	// -1 where the board has none.
	Coarse int64
	Cycles int64 // DWT cycles on real boards, -1 when none
	// Stack is the bytes of stack the run took below the harness's frame (the
	// high-water mark of the painted stack), -1 where the platform cannot tell
	// (hosted builds).
	Stack int64
	// Mix is how often each instruction executed during the inference, keyed by the mix
	// plugin's key (the mnemonic as disassembled, with operand notes: see
	// crt/src/qemu_mix_plugin.c); nil unless the mix was asked for (Options.Mix,
	// EnableMix). Its counts add up to Instructions.
	Mix map[string]MixCount
	// M4 is the Cortex-M4 cycle estimate from Mix with the CortexM4 timing model, per
	// timing class; nil unless Mix was measured on a Cortex-M4 board. It is an estimate
	// (a model applied to exact counts), never a measurement.
	M4 *M4Estimate
	// Layers[i] is what layer i took, the hook's overhead (Result.LayerOverhead)
	// included; nil unless the firmware was profiled per layer (Options.Layers).
	Layers []int64
}

// Result is a whole run.
type Result struct {
	Vectors []VectorResult
	// LayerOverhead is what one per-layer hook adds to each of VectorResult.Layers
	// (two back-to-back hooks timed by the harness); -1 when not profiled.
	LayerOverhead int64
	Log           string // everything the program printed (UART/stdout, then stderr)
	Command       []string
}

// FaultError is a fault the firmware reported.
type FaultError struct {
	Type    string // HardFault, BusFault, MemManage, UsageFault, ...
	Detail  string // the CFSR bits that were set, e.g. PRECISERR
	PC      uint64
	Addr    uint64 // the faulting data address (BFAR/MMFAR) when the core knows it
	HasAddr bool
	Line    string
	Board   string
	// Func is the function holding PC, with the offset into it
	// ("fault_conv2d_0_s8+0x1c"), from the firmware's symbols; "" when unknown.
	Func string
}

func (e *FaultError) Error() string {
	where := "address unknown"
	if e.HasAddr {
		where = fmt.Sprintf("at address %#08x", e.Addr)
	}
	in := ""
	if e.Func != "" {
		in = " (in " + e.Func + ")"
	}
	return fmt.Sprintf("runner: firmware on %s faulted: %s (%s) %s, pc=%#08x%s [%s]", e.Board, e.Type, e.Detail, where, e.PC, in, e.Line)
}

// funcAt names the function of the ELF exe that holds address pc, as
// "name+0xoff" ("" when none does or the file cannot be read): a fault's pc
// said nothing to a user without the map at hand (review finding).
func funcAt(exe string, pc uint64) string {
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return ""
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		v := s.Value
		if f.Machine == elf.EM_ARM {
			v &^= 1
		}
		if pc >= v && pc < v+s.Size {
			return fmt.Sprintf("%s+%#x", s.Name, pc-v)
		}
	}
	return ""
}

// CrashError says a hosted program (host, or qemu-aarch64 for its guest) was killed by a
// signal, e.g. a segmentation fault.
type CrashError struct {
	Board  string
	Signal string
	Log    string
}

func (e *CrashError) Error() string {
	return fmt.Sprintf("runner: program on %s crashed: killed by signal %q; last output: %q", e.Board, e.Signal, tail(e.Log, 3))
}

// CheckTools returns a *MissingToolError for the first program b needs that is missing.
func CheckTools(b *boards.Board) error {
	for _, t := range Tools(b) {
		if _, err := LookTool(t); err != nil {
			return err
		}
	}
	return nil
}

// TimeoutError says the program did not finish in time.
type TimeoutError struct {
	Board   string
	Timeout time.Duration
	Log     string
	// Core is the board's core where it has no stack limit register: an
	// overflow there is not trapped and can hang the run (QEMU's MPS2
	// machines read zeros below RAM, where the stack ends: review finding).
	Core string
	// Hint names the board's regions outside the memory QEMU's machine has
	// (unmappedHint); "" when none is.
	Hint string
}

func (e *TimeoutError) Error() string {
	why := "an endless loop, or a core lockup after a fault"
	if e.Core != "" {
		why = fmt.Sprintf("an endless loop, a core lockup after a fault, or a stack overflow, which a %s does not trap (a larger stack_bytes in a board file tells)", e.Core)
	}
	hint := ""
	if e.Hint != "" {
		hint = "; " + e.Hint
	}
	return fmt.Sprintf("runner: firmware on %s did not finish within %v and was killed: the timeout may be too short for it (--timeout), or it hangs (%s)%s; last output: %q",
		e.Board, e.Timeout, why, hint, tail(e.Log, 3))
}

// stackLimitCores have MSPLIM (Armv8-M Main), which the start-up code sets
// at the stack's bottom.
var stackLimitCores = []string{"cortex-m33", "cortex-m35p", "cortex-m55", "cortex-m85", "star-mc1"}

// Command returns the command line that runs fw (without the timeout and ulimit wrapper).
func Command(fw *Firmware) ([]string, error) {
	b := fw.Board
	switch {
	case b.QEMU.Binary != "":
		args := []string{b.QEMU.Binary}
		if b.QEMU.Machine != "" {
			args = append(args, "-M", b.QEMU.Machine)
		}
		args = append(args, b.QEMU.Args...)
		if b.QEMU.ICountShift > 0 {
			args = append(args, "-icount", fmt.Sprintf("shift=%d,align=off,sleep=off", b.QEMU.ICountShift))
		}
		if fw.PluginArgs != "" {
			args = append(args, "-plugin", fw.PluginArgs)
		}
		if fw.MixPluginArgs != "" {
			args = append(args, "-plugin", fw.MixPluginArgs)
		}
		if fw.PluginArgs != "" || fw.MixPluginArgs != "" {
			args = append(args, "-d", "plugin")
		}
		if b.QEMU.Machine != "" {
			return append(args, "-kernel", fw.Path), nil
		}
		return append(args, fw.Path), nil
	case b.Toolchain == boards.ToolchainHost:
		return []string{fw.Path}, nil
	}
	return nil, fmt.Errorf("runner: board %s has no emulator: it can be built and sized but not run", b.Name)
}

// Run executes fw under its emulator with a timeout (no core files) and parses what the
// harness printed. A fault, a hang, a non-zero return of the model, damaged arena guards
// or a missing line are errors; the partial Result is returned with them.
func Run(fw *Firmware, timeout time.Duration) (*Result, error) {
	argv, err := Command(fw)
	if err != nil {
		return nil, err
	}
	exe := argv[0]
	if fw.Board.Toolchain != boards.ToolchainHost {
		if exe, err = LookTool(argv[0]); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// `ulimit -c 0` so that a QEMU abort leaves no core file behind.
	shArgs := append([]string{"-c", `ulimit -c 0; exec "$@"`, "mcugen-run", exe}, argv[1:]...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = fw.Dir
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := runCmd(cmd)
	res := &Result{Log: stdout.String() + stderr.String(), Command: argv}
	if ctx.Err() == context.DeadlineExceeded {
		te := &TimeoutError{Board: fw.Board.Name, Timeout: timeout, Log: res.Log}
		if core := boards.CoreOf(fw.Board.CPU); fw.Board.BareMetal() && !slices.Contains(stackLimitCores, core) {
			te.Core = core
		}
		te.Hint = unmappedHint(fw.Board)
		return res, te
	}
	perr := parse(fw, res)
	var fe *FaultError
	var so *StackOverflowError
	if errors.As(perr, &fe) || errors.As(perr, &so) {
		return res, perr
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				if err := lockupOverflow(fw, res.Log); err != nil {
					return res, err
				}
				if err := lockupError(fw, res.Log); err != nil {
					return res, err
				}
				return res, &CrashError{Board: fw.Board.Name, Signal: ws.Signal().String(), Log: res.Log}
			}
			if perr != nil {
				return res, fmt.Errorf("%w (exit code %d)", perr, ee.ExitCode())
			}
			return res, fmt.Errorf("runner: firmware on %s exited with code %d: %s", fw.Board.Name, ee.ExitCode(), tail(res.Log, 10))
		}
		return res, fmt.Errorf("runner: running %s: %w", strings.Join(argv, " "), runErr)
	}
	return res, perr
}

// faultRE reads the start-up code's fault report; a stack overflow (STKOF)
// prints "pc=- lr=- xpsr=-" (no frame is pushed below the limit).
var faultRE = regexp.MustCompile(`@mcugen fault (\S+) (\S+) pc=(?:0x)?([0-9a-f]+|-) lr=\S+ xpsr=\S+ cfsr=\S+ hfsr=\S+ addr=(\S+)`)

func parseHex64(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return v
}

func parse(fw *Firmware, res *Result) error {
	nOut := len(fw.Model.Outputs)
	res.Vectors = make([]VectorResult, fw.Vectors)
	for i := range res.Vectors {
		res.Vectors[i] = VectorResult{Outputs: make([][]byte, nOut), Instructions: -1, Ticks: -1, Coarse: -1, Cycles: -1, Stack: -1}
	}
	res.LayerOverhead = -1
	var problems []string
	begun, ended, counted := false, false, 0
	var marks []int64
	mixes := 0
	sc := bufio.NewScanner(strings.NewReader(res.Log))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "@mcugen ")
		if i < 0 {
			continue
		}
		line = line[i:]
		if m := faultRE.FindStringSubmatch(line); m != nil {
			if strings.Contains(m[2], "STKOF") {
				// The stack limit (MSPLIM, v8-M Main) the start-up code
				// sets at the stack's bottom.
				return &StackOverflowError{Board: fw.Board.Name, Limit: true, StackBytes: fw.Board.StackBytes}
			}
			fe := &FaultError{Type: m[1], Detail: m[2], PC: parseHex64(m[3]), Line: line, Board: fw.Board.Name}
			fe.Func = funcAt(fw.Path, fe.PC)
			if m[4] != "-" {
				fe.Addr, fe.HasAddr = parseHex64(m[4]), true
			}
			return fe
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		vec := func(k int) (*VectorResult, bool) {
			if len(f) <= k {
				return nil, false
			}
			v, err := strconv.Atoi(f[k])
			if err != nil || v < 0 || v >= len(res.Vectors) {
				return nil, false
			}
			return &res.Vectors[v], true
		}
		switch f[1] {
		case "mark":
			n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err != nil {
				return fmt.Errorf("runner: bad line %q", line)
			}
			marks = append(marks, n)
		case "mix":
			v, ok := vec(2)
			if !ok || fw.MixPluginArgs == "" {
				return fmt.Errorf("runner: bad line %q", line)
			}
			mix, err := parseMix(f[3:])
			if err != nil {
				return fmt.Errorf("runner: bad line %q: %v", line, err)
			}
			v.Mix = mix
			mixes++
		case "layer-overhead":
			if len(f) != 3 || fw.Layers == 0 {
				return fmt.Errorf("runner: bad line %q", line)
			}
			res.LayerOverhead = countField(f[2])
		case "layer":
			v, ok := vec(2)
			if !ok || len(f) != 5 || fw.Layers == 0 {
				return fmt.Errorf("runner: bad line %q", line)
			}
			l, err := strconv.Atoi(f[3])
			if err != nil || l < 0 || l >= fw.Layers {
				return fmt.Errorf("runner: bad line %q", line)
			}
			if v.Layers == nil {
				v.Layers = make([]int64, fw.Layers)
			}
			v.Layers[l] = countField(f[4])
		case "begin":
			begun = true
		case "end":
			ended = true
		case "ret":
			if v, ok := vec(2); ok && len(f) > 3 {
				r, _ := strconv.ParseInt(f[3], 10, 32)
				v.Ret = int32(r)
				if r != 0 {
					problems = append(problems, fmt.Sprintf("%s_run returned %d on vector %s", fw.Model.Prefix, r, f[2]))
				}
			}
		case "guard":
			problems = append(problems, "arena guard damaged: "+line)
		case "output":
			v, ok := vec(2)
			o, err := strconv.Atoi(f[min(3, len(f)-1)])
			if !ok || err != nil || o < 0 || o >= nOut {
				return fmt.Errorf("runner: bad line %q", line)
			}
			hexs := ""
			if len(f) > 4 {
				hexs = f[4]
			}
			data, err := hex.DecodeString(hexs)
			if err != nil || len(data) != fw.Model.Outputs[o].Size {
				return fmt.Errorf("runner: output %d of vector %s: got %d bytes, want %d (%q)", o, f[2], len(hexs)/2, fw.Model.Outputs[o].Size, line)
			}
			v.Outputs[o] = data
		case "count":
			v, ok := vec(2)
			if !ok {
				return fmt.Errorf("runner: bad line %q", line)
			}
			counted++
			for _, kv := range f[3:] {
				k, val, _ := strings.Cut(kv, "=")
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					n = -1
				}
				switch k {
				case "instructions":
					v.Instructions = n
				case "ticks":
					v.Ticks = n
				case "coarse":
					v.Coarse = n
				case "cycles":
					v.Cycles = n
				case "stack":
					v.Stack = n
					if val == "overflow" {
						problems = append(problems, stackOverflow(fw, f[2]))
					}
				}
			}
		}
	}
	if !begun {
		// A QEMU machine the board file names and QEMU does not have is the
		// board's mistake, not the model's (robustness journey).
		if q := fw.Board.QEMU; q.Machine != "" && strings.Contains(res.Log, "unsupported machine type") {
			return fmt.Errorf("runner: board %s (%s:%d): %s has no machine %q (%s -machine help lists them)", fw.Board.Name, fw.Board.File, fw.Board.Line, q.Binary, q.Machine, q.Binary)
		}
		return fmt.Errorf("runner: the firmware on %s printed no harness output: %s", fw.Board.Name, tail(res.Log, 10))
	}
	if len(problems) > 0 {
		return fmt.Errorf("runner: on %s: %s", fw.Board.Name, strings.Join(problems, "; "))
	}
	if !ended || counted != fw.Vectors {
		return fmt.Errorf("runner: the firmware on %s stopped early (%d of %d vectors): %s", fw.Board.Name, counted, fw.Vectors, tail(res.Log, 5))
	}
	if fw.PluginArgs != "" {
		// Per vector: the marks around the run and, when profiled, the L+1 layer hooks
		// between them; the two calibration marks come first.
		per, skip := 2, 0
		if fw.Layers > 0 {
			per, skip = fw.Layers+3, 2
		}
		if len(marks) != skip+per*fw.Vectors {
			return fmt.Errorf("runner: the counting plugin reported %d marks for %d vectors, want %d", len(marks), fw.Vectors, skip+per*fw.Vectors)
		}
		if skip > 0 {
			res.LayerOverhead = marks[1] - marks[0]
		}
		for v := range res.Vectors {
			m := marks[skip+per*v : skip+per*(v+1)]
			res.Vectors[v].Instructions = m[per-1] - m[0]
			if fw.Layers > 0 {
				res.Vectors[v].Layers = make([]int64, fw.Layers)
				for l := range fw.Layers {
					res.Vectors[v].Layers[l] = m[l+2] - m[l+1]
				}
			}
		}
	}
	if fw.Layers > 0 {
		for v := range res.Vectors {
			if len(res.Vectors[v].Layers) != fw.Layers {
				return fmt.Errorf("runner: vector %d: the firmware reported no per-layer counts", v)
			}
		}
	}
	if fw.MixPluginArgs != "" {
		if mixes != fw.Vectors {
			return fmt.Errorf("runner: the instruction-mix plugin reported %d windows for %d vectors", mixes, fw.Vectors)
		}
		for v := range res.Vectors {
			r := &res.Vectors[v]
			var sum int64
			for _, c := range r.Mix {
				sum += c.Count
			}
			if r.Instructions >= 0 && sum != r.Instructions {
				return fmt.Errorf("runner: vector %d: the instruction-mix plugin counted %d instructions, the counter %d", v, sum, r.Instructions)
			}
			if boards.CoreOf(fw.Board.CPU) == "cortex-m4" {
				r.M4 = CortexM4.Estimate(r.Mix)
			}
		}
	}
	for v := range res.Vectors {
		for o, out := range res.Vectors[v].Outputs {
			if out == nil {
				return fmt.Errorf("runner: vector %d: output %d missing", v, o)
			}
		}
	}
	return nil
}

// stackOverflow is the problem of a vector whose run wrote within the
// paint's guard band of the stack's bottom (the harness's stack=overflow).
func stackOverflow(fw *Firmware, vector string) string {
	return fmt.Sprintf("the stack overflowed on vector %s: the run wrote within %d B of the bottom of the board's %s B stack (too close to tell an overflow from a near miss, and no room left for an interrupt); give the board a larger stack_bytes", vector, crt.StackGuardBytes, commas(uint64(fw.Board.StackBytes)))
}

// StackOverflowError is a stack that overflowed: the core's stack limit
// faulted (Limit: STKOF, on the v8-M Main cores whose start-up code sets
// MSPLIM at the stack's bottom), or the core locked up (a fault it could not
// take, QEMU's "Lockup") with its stack pointer at or below the stack's
// bottom (Bottom): the exception frame had nowhere to go.
type StackOverflowError struct {
	Board      string
	SP, Bottom uint64
	Limit      bool
	StackBytes int
}

func (e *StackOverflowError) Error() string {
	if e.Limit {
		// No pc: where stacking the exception frame failed, the frame's
		// pc slot holds whatever was there (the paint's pattern).
		return fmt.Sprintf("runner: firmware on %s overflowed its stack: the core's stack limit (MSPLIM, %d B above the stack's bottom) faulted; the board's stack (stack_bytes, %s B) is too small for this model", e.Board, crt.StackGuardBytes, commas(uint64(e.StackBytes)))
	}
	return fmt.Sprintf("runner: firmware on %s overflowed its stack: the core locked up with SP=%#08x, at or below the stack's bottom (%#08x); the board's stack (stack_bytes, %s B) is too small for this model", e.Board, e.SP, e.Bottom, commas(uint64(e.StackBytes)))
}

// lockupOverflow reads QEMU's register dump after a lockup of a bare-metal
// core: SP (R13) within an exception frame of the stack's bottom or below it
// (the ELF's _sstack; else the data region's origin, where the linker script
// puts the stack unless code or weights share the region) is a stack
// overflow. Anything else is nil.
func lockupOverflow(fw *Firmware, log string) error {
	r := fw.Board.RegionFor(boards.HoldsData)
	if !fw.Board.BareMetal() || (r == nil && fw.StackBottom == 0) || !strings.Contains(log, "Lockup") {
		return nil
	}
	bottom := fw.StackBottom
	if bottom == 0 {
		bottom = r.Origin
	}
	sp, ok := qemuReg(log, "R13")
	if !ok || sp >= bottom+128 || sp+(64<<10) < bottom {
		return nil
	}
	return &StackOverflowError{Board: fw.Board.Name, SP: sp, Bottom: bottom, StackBytes: fw.Board.StackBytes}
}

// countField reads a count the harness printed, "-" (no counter) as -1.
func countField(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// parseMix reads the fields of a mix line after the vector: total=<n>, then
// <key>=<count>[/<taken>] each.
func parseMix(fields []string) (map[string]MixCount, error) {
	mix := map[string]MixCount{}
	var total, sum int64 = -1, 0
	for _, kv := range fields {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("field %q", kv)
		}
		cs, ts, hasTaken := strings.Cut(val, "/")
		c, err := strconv.ParseInt(cs, 10, 64)
		if err != nil || c < 0 {
			return nil, fmt.Errorf("field %q", kv)
		}
		if k == "total" {
			total = c
			continue
		}
		mc := MixCount{Count: c}
		if hasTaken {
			if mc.Taken, err = strconv.ParseInt(ts, 10, 64); err != nil || mc.Taken < 0 || mc.Taken > c {
				return nil, fmt.Errorf("field %q", kv)
			}
		}
		if _, dup := mix[k]; dup {
			return nil, fmt.Errorf("key %q twice", k)
		}
		mix[k] = mc
		sum += c
	}
	if total != sum {
		return nil, fmt.Errorf("total=%d but the keys add up to %d", total, sum)
	}
	return mix, nil
}

// WriteLog writes everything the program printed to path.
func (r *Result) WriteLog(path string) error { return os.WriteFile(path, []byte(r.Log), 0o644) }

// procs are the programs the runner has started (compilers, QEMU, host
// executables) and not yet reaped, each in a process group of its own, keyed
// by that group's id; a channel is closed when its program has been reaped.
var procs struct {
	sync.Mutex
	running map[int]chan struct{}
	stopped bool // Interrupt was called
}

// runCmd runs cmd in a process group of its own (so that Interrupt can kill
// it with everything it started: QEMU, or gcc with cc1, as and ld). After
// Interrupt it never returns: the process is about to exit, and a caller
// must not mistake a killed program for a failed one.
func runCmd(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	procs.Lock()
	if procs.stopped {
		procs.Unlock()
		select {}
	}
	if err := cmd.Start(); err != nil {
		procs.Unlock()
		return err
	}
	pgid := cmd.Process.Pid
	if procs.running == nil {
		procs.running = map[int]chan struct{}{}
	}
	reaped := make(chan struct{})
	procs.running[pgid] = reaped
	procs.Unlock()
	err := cmd.Wait()
	procs.Lock()
	delete(procs.running, pgid)
	stopped := procs.stopped
	procs.Unlock()
	close(reaped)
	if stopped {
		select {}
	}
	return err
}

// Interrupt kills every program the runner started that is still running
// (their whole process groups, with SIGKILL) and waits, up to five seconds,
// until they have been reaped. From then on the runner starts nothing: a
// call that would start a program, or whose program was killed, blocks for
// good. It is for a signal handler that cleans up and exits: QEMU runs in a
// process group of its own, so neither a terminal's Ctrl-C nor a signal to
// mcugen reaches it.
func Interrupt() {
	procs.Lock()
	procs.stopped = true
	var waits []chan struct{}
	for pgid, reaped := range procs.running {
		syscall.Kill(-pgid, syscall.SIGKILL)
		waits = append(waits, reaped)
	}
	procs.Unlock()
	deadline := time.After(5 * time.Second)
	for _, reaped := range waits {
		select {
		case <-reaped:
		case <-deadline:
			return
		}
	}
}
