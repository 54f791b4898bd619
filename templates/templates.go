// Package templates writes the model's generated C into a complete project a user can
// build: a Makefile, a CMake project (model library + example firmware), a Zephyr
// application, an Arduino library or a Bazel workspace, and, separately, a Model Library
// Format tarball laid out as microTVM's. The project files are text/template files
// embedded in the binary (tmpl/); the Bazel files are built and printed with buildtools.
//
// templates only arranges files: the model's sources come from emitc and the bare-metal
// runtime from crt, both passed in as bytes in a Project. Every name that reaches a file
// name or a C identifier goes through Ident, and every file is written through an os.Root
// so that nothing lands outside the output directory.
package templates

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
)

// Kind is a project template.
type Kind string

// The project templates.
const (
	Make    Kind = "make"
	CMake   Kind = "cmake"
	Zephyr  Kind = "zephyr"
	Arduino Kind = "arduino"
	Bazel   Kind = "bazel"
)

// Kinds lists every template, in the order the CLI documents them.
var Kinds = []Kind{Make, CMake, Zephyr, Arduino, Bazel}

// ParseKind turns a --project value into a Kind.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("templates: unknown project template %q; known: %s", s, strings.Join(names, ", "))
}

// shellWord reports whether s is one non-empty word that make, CMake and
// a shell pass on unchanged.
func shellWord(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune("\\\"'$`;&|<>()#{}*?", r) {
			return false
		}
	}
	return s != ""
}

// CheckBoard reports whether a project of kind k can be written for board b: a Zephyr
// application needs the board's Zephyr name and an Arduino library its FQBN, both from
// the board catalog, since the model's C is generated for that board's core. The error
// is one line naming the board and the fix. Files and Write check it first; a caller may
// check it before compiling the model.
func CheckBoard(k Kind, b *boards.Board) error {
	if b == nil {
		return fmt.Errorf("templates: no board given")
	}
	if k == Make || k == CMake {
		// The Makefile and CMake's toolchain file and run target take the
		// board's flags and QEMU arguments as they are (review: a board
		// file's -DV="1.0" broke CMake's configure, -DL="a b" ran b as a
		// command); run, test and bench pass them to gcc and QEMU
		// unchanged, so the board file itself may have them.
		for _, l := range []struct {
			what string
			args []string
		}{{"cflag", b.CFlags}, {"qemu arg", b.QEMU.Args}} {
			for _, a := range l.args {
				if !shellWord(a) {
					return fmt.Errorf("board %q: %s %q is not one plain word (it has a space, a quote or a character the shell reads, such as $ ; # or a bracket), which the %s project's build files would take apart; run, test and bench take it, or write the project with a board without it", b.Name, l.what, a, k)
				}
			}
		}
	}
	switch k {
	case Zephyr:
		if b.Zephyr == "" {
			return fmt.Errorf("board %q has no Zephyr board name; pick a board with one (mcugen boards) or add `zephyr = \"...\"` to a board file", b.Name)
		}
	case Arduino:
		if b.Arduino == "" {
			return fmt.Errorf("board %q has no Arduino FQBN; pick a board with one (mcugen boards) or add `arduino = \"vendor:arch:board\"` to a board file", b.Name)
		}
		if !fqbnSyntax.MatchString(b.Arduino) {
			return fmt.Errorf("board %q: Arduino FQBN %q is not vendor:architecture:board[:option=value,...]", b.Name, b.Arduino)
		}
	}
	return nil
}

// UsesCRT reports whether projects of kind k build with mcugen's runtime and its linker
// script (make, cmake): only those may have the model's weights in crt.WeightsSection.
// Zephyr and Arduino link with their own scripts, and the Bazel example runs on the host.
func UsesCRT(k Kind) bool { return k == Make || k == CMake }

// Tensor is one model input or output as the generated API exposes it.
type Tensor struct {
	Name  string // the model's tensor name (any text)
	Field string // the C member of <prefix>_inputs/<prefix>_outputs; "" means the header's
	// member in the same position
	DType string // "int8", "uint8", "int16", "int32" or "float32"
	Shape []int
}

// Bytes is the tensor's size in bytes.
func (t Tensor) Bytes() int {
	n := dtypeBytes(t.DType)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func dtypeBytes(dt string) int {
	switch dt {
	case "int8", "uint8", "bool":
		// bool: one byte an element, 0 or 1, as the generated API holds it
		// (a Compare's output could not be archived: microTVM journey).
		return 1
	case "int16", "uint16":
		return 2
	case "int32", "uint32", "float32":
		return 4
	case "int64", "uint64":
		return 8
	}
	return 0
}

// Vector is one test case: raw little-endian bytes for each input, and optionally the
// expected bytes of each output (bit-exact comparison on the target).
type Vector struct {
	Inputs  [][]byte
	Outputs [][]byte // nil: print the outputs, compare nothing
}

// Project is everything a template needs.
type Project struct {
	Kind   Kind
	Name   string // the model's name (any text: spaces, dots, non-ASCII are made safe)
	Prefix string // the C prefix of the generated API (DESIGN §4); "" means the stem of the
	// model header that declares <stem>_run, else Ident(Name)
	Board *boards.Board

	// Model holds emitc's files by base name: <prefix>.h (the DESIGN §4 API), <prefix>.c
	// and any further .c/.h files.
	Model map[string][]byte
	// Runtime holds crt's files for Board by base name: .c/.S sources, headers and one
	// linker script (.ld) for bare-metal boards. Make and CMake compile every source in it
	// into the example firmware. nil means Runtime(Board, crt.Layout{}). Zephyr, Arduino
	// and Bazel do not use it.
	Runtime map[string][]byte

	Inputs  []Tensor
	Outputs []Tensor
	Vectors []Vector // compiled into the example program; none means one all-zero input

	ArenaBytes   int64 // the planner's arena, for READMEs and the MLF metadata
	WeightsBytes int64 // bytes of constant data
	// ScratchBytes is the stack the largest kernel's local arrays take
	// (emitc.Report.ScratchBytes); the Zephyr main stack is sized from it.
	ScratchBytes int64
	Version      string // mcugen's version, written into headers; "" means "dev"
	// IOInArena says the inputs and outputs live in the arena (--io in-arena):
	// the MLF metadata then counts no I/O bytes beside the workspace.
	IOInArena bool
	// Compiler is the C compiler the make and CMake projects build with by
	// default: "clang" (LLVM's clang compiles, the board's gcc links), else
	// the board's gcc. Both are there either way (make COMPILER=..., the two
	// CMake toolchain files).
	Compiler string
	// ClangNoVectorize turns clang's loop vectorizer off in the clang builds
	// (pipeline.State.ClangNoVectorize: on a Helium core the generic
	// convolution rows crash clang 14's loop vectorizer).
	ClangNoVectorize bool

	// anyAPI lets the model's run function take any signature (an external
	// arena, inputs and outputs in the arena): MLF packs the model without
	// calling it, where the example programs need the default API.
	anyAPI bool
}

// Write writes p's project into dir (created if needed) and returns the files it
// wrote, relative to dir and sorted.
func Write(dir string, p Project) ([]string, error) {
	files, err := Files(p)
	if err != nil {
		return nil, err
	}
	if err := writeTree(dir, files); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Files returns p's project as file contents keyed by slash-separated relative path.
func Files(p Project) (map[string][]byte, error) {
	if p.Kind == Bazel && p.Board != nil && p.Board.Toolchain != boards.ToolchainHost {
		p.anyAPI = true // only the model's cc_library: no example calls run
	}
	m, err := newModel(p)
	if err != nil {
		return nil, err
	}
	switch p.Kind {
	case Make:
		return m.makeFiles()
	case CMake:
		return m.cmakeFiles()
	case Zephyr:
		return m.zephyrFiles()
	case Arduino:
		return m.arduinoFiles()
	case Bazel:
		return m.bazelFiles()
	}
	_, err = ParseKind(string(p.Kind))
	return nil, err
}

// model is a Project checked and with every derived name computed once.
type model struct {
	Project
	Ident    string // C identifier and file-name stem of the model
	Prefix   string // the API prefix
	Upper    string // Prefix in upper case (the size macros)
	Inputs   []tensorView
	Outputs  []tensorView
	Vectors  []Vector
	Sources  []string // model .c files, sorted
	Headers  []string // model .h files, sorted
	RtSrcs   []string // runtime .c and .S files, sorted
	RtHdrs   []string // runtime headers, sorted
	RtLD     string   // runtime linker script ("" for hosted boards)
	Hosted   bool     // the board runs an OS (host, aarch64-linux): stdio, no linker script
	Version  string
	Cross    string // gcc prefix: "arm-none-eabi-", "aarch64-linux-gnu-", ""
	CPUFlags []string
	// Opt is the board's optimization level (boards.Board.OptLevel): -O2
	// unless its cflags name another, which the project's own -O2 (make's
	// OPT, CMake's build type) then leaves in place.
	Opt string
	// FloatOut is set when an output is float32: the example compares it
	// within 1e-5 of the output's scale, as mcugen does, not byte for byte (the C
	// compiler may round differently from the reference interpreter).
	FloatOut bool
	// ExactOut is set when an output is compared byte for byte (not
	// float32): the Arduino example then defines its byte comparison (an
	// unused one warned under -Wextra: templates review).
	ExactOut bool
}

type tensorView struct {
	Tensor
	Field string // C member name
	Size  int
	Index int
	Float bool // float32: compared within 1e-5 of the output's scale (pipeline.CompareModel)
}

// Word is the element type of the example's buffer for the tensor: words
// aligned for its values, as the generated run checks (an int64 tensor in
// uint32_t words was 4-byte aligned, and run refused it where the linker put
// it so).
func (t tensorView) Word() string {
	if dtypeBytes(t.DType) == 8 {
		return "uint64_t"
	}
	return "uint32_t"
}

// Words is the number of Word elements that hold the tensor.
func (t tensorView) Words() int {
	if dtypeBytes(t.DType) == 8 {
		return (t.Size + 7) / 8
	}
	return (t.Size + 3) / 4
}

func newModel(p Project) (*model, error) {
	if p.Board == nil {
		return nil, fmt.Errorf("templates: no board given")
	}
	if _, err := ParseKind(string(p.Kind)); err != nil {
		return nil, err
	}
	if err := CheckBoard(p.Kind, p.Board); err != nil {
		return nil, err
	}
	m := &model{Project: p, Ident: Ident(p.Name), Version: p.Version}
	if m.Version == "" {
		m.Version = "dev"
	}
	m.Prefix = p.Prefix
	if m.Prefix == "" {
		m.Prefix = apiPrefix(p.Model, m.Ident)
	}
	if !IsIdent(m.Prefix) {
		return nil, fmt.Errorf("templates: prefix %q is not a C identifier", m.Prefix)
	}
	m.Upper = strings.ToUpper(m.Prefix)
	if len(p.Inputs) == 0 || len(p.Outputs) == 0 {
		return nil, fmt.Errorf("model %q has %d input(s) and %d output(s): a project's example program feeds at least one input and checks at least one output (compile without --project or --format mlf for the model's C alone)", p.Name, len(p.Inputs), len(p.Outputs))
	}
	var err error
	if m.Inputs, err = views("input", p.Inputs); err != nil {
		return nil, err
	}
	if m.Outputs, err = views("output", p.Outputs); err != nil {
		return nil, err
	}
	for _, o := range m.Outputs {
		m.FloatOut = m.FloatOut || o.Float
		m.ExactOut = m.ExactOut || !o.Float
	}
	for i, v := range p.Vectors {
		if len(v.Inputs) != len(m.Inputs) {
			return nil, fmt.Errorf("templates: vector %d has %d inputs, the model has %d", i, len(v.Inputs), len(m.Inputs))
		}
		for j, b := range v.Inputs {
			if len(b) != m.Inputs[j].Size {
				return nil, fmt.Errorf("templates: vector %d input %q: %d bytes, want %d", i, m.Inputs[j].Name, len(b), m.Inputs[j].Size)
			}
		}
		if v.Outputs == nil {
			continue
		}
		if len(v.Outputs) != len(m.Outputs) {
			return nil, fmt.Errorf("templates: vector %d has %d outputs, the model has %d", i, len(v.Outputs), len(m.Outputs))
		}
		for j, b := range v.Outputs {
			if len(b) != m.Outputs[j].Size {
				return nil, fmt.Errorf("templates: vector %d output %q: %d bytes, want %d", i, m.Outputs[j].Name, len(b), m.Outputs[j].Size)
			}
		}
	}
	m.Vectors = p.Vectors
	if len(m.Vectors) == 0 {
		v := Vector{}
		for _, t := range m.Inputs {
			v.Inputs = append(v.Inputs, make([]byte, t.Size))
		}
		m.Vectors = []Vector{v}
	}
	if len(p.Model) == 0 {
		return nil, fmt.Errorf("templates: model %q: no source files", p.Name)
	}
	for name := range p.Model {
		if err := checkBase("model", name); err != nil {
			return nil, err
		}
		switch {
		case strings.HasSuffix(name, ".c"):
			m.Sources = append(m.Sources, name)
		case strings.HasSuffix(name, ".h"):
			m.Headers = append(m.Headers, name)
		default:
			return nil, fmt.Errorf("templates: model file %q is neither .c nor .h", name)
		}
	}
	if _, ok := p.Model[m.Prefix+".h"]; !ok {
		return nil, fmt.Errorf("templates: model files lack the API header %q", m.Prefix+".h")
	}
	if err := m.checkAPI(); err != nil {
		return nil, err
	}
	if p.Runtime == nil && (p.Kind == Make || p.Kind == CMake) {
		rt, err := Runtime(p.Board, crt.Layout{})
		if err != nil {
			return nil, err
		}
		m.Runtime = rt
	}
	for name := range m.Runtime {
		if err := checkBase("runtime", name); err != nil {
			return nil, err
		}
		switch {
		case strings.HasSuffix(name, ".c"), strings.HasSuffix(name, ".S"):
			m.RtSrcs = append(m.RtSrcs, name)
		case strings.HasSuffix(name, ".h"):
			m.RtHdrs = append(m.RtHdrs, name)
		case strings.HasSuffix(name, ".ld"):
			if m.RtLD != "" {
				return nil, fmt.Errorf("templates: runtime has two linker scripts, %q and %q", m.RtLD, name)
			}
			m.RtLD = name
		default:
			return nil, fmt.Errorf("templates: runtime file %q is not .c, .S, .h or .ld", name)
		}
	}
	for _, s := range [][]string{m.Sources, m.Headers, m.RtSrcs, m.RtHdrs} {
		sort.Strings(s)
	}
	switch m.Compiler {
	case "":
		m.Compiler = "gcc"
	case "gcc", "clang":
	default:
		return nil, fmt.Errorf("templates: compiler %q: want gcc or clang", m.Compiler)
	}
	b := p.Board
	m.CPUFlags, m.Opt = b.GCCFlags(), b.OptLevel()
	switch b.Toolchain {
	case boards.ToolchainArmNoneEABI:
		m.Cross = "arm-none-eabi-"
	case boards.ToolchainAArch64:
		m.Cross, m.Hosted = "aarch64-linux-gnu-", true
	case boards.ToolchainHost:
		m.Hosted = true
		m.CPUFlags = nil
	default:
		return nil, fmt.Errorf("templates: board %q: unknown toolchain %q", b.Name, b.Toolchain)
	}
	if p.Kind == Arduino || p.Kind == Zephyr { // see UsesCRT
		// The one section such a build's script knows: the Teensy 4
		// core's .progmem (boards.ArduinoWeightsSection).
		var known []byte
		if sec := b.ArduinoWeightsSection(); p.Kind == Arduino && sec != "" {
			known = []byte("section(\"" + sec + "\")")
		}
		for _, n := range m.Sources {
			c, allowed := p.Model[n], 0
			if known != nil {
				allowed = bytes.Count(c, known)
			}
			if bytes.Count(c, []byte("section(")) > allowed {
				return nil, fmt.Errorf("templates: model file %s places data in a linker section, which the %s build's own linker script does not know; compile the model without a weights section for %s projects", n, p.Kind, p.Kind)
			}
		}
	}
	if (p.Kind == Make || p.Kind == CMake) && len(m.RtSrcs) == 0 {
		return nil, fmt.Errorf("templates: %s project for %s needs the runtime's sources (crt); none given", p.Kind, b.Name)
	}
	if (p.Kind == Make || p.Kind == CMake) && !m.Hosted && m.RtLD == "" {
		return nil, fmt.Errorf("templates: %s project for bare-metal board %s needs the runtime's linker script; none given", p.Kind, b.Name)
	}
	return m, nil
}

func views(what string, ts []Tensor) ([]tensorView, error) {
	var out []tensorView
	seen := map[string]bool{}
	for i, t := range ts {
		v := tensorView{Tensor: t, Field: t.Field, Size: t.Bytes(), Index: i, Float: t.DType == "float32"}
		if v.Field != "" { // else checkAPI takes it from the header
			// A member may start with _ and a small letter, as TVM named
			// some (_x): C reserves only __ and _ with a capital. And a
			// member may be named main, which Ident keeps from file and
			// function names only (review: a tensor named main failed
			// every --project kind).
			if f := v.Field; !IsIdent(f) && f != "main" && !(len(f) > 1 && f[0] == '_' && f[1] >= 'a' && f[1] <= 'z' && IsIdent(f[1:])) {
				return nil, fmt.Errorf("templates: %s %q: field %q is not a C identifier", what, t.Name, v.Field)
			}
			if seen[v.Field] {
				return nil, fmt.Errorf("templates: two %ss have the C name %q", what, v.Field)
			}
			seen[v.Field] = true
		}
		if dtypeBytes(t.DType) == 0 {
			return nil, fmt.Errorf("templates: %s %q: unsupported dtype %q", what, t.Name, t.DType)
		}
		if v.Size <= 0 {
			return nil, fmt.Errorf("templates: %s %q: shape %v has no elements", what, t.Name, t.Shape)
		}
		out = append(out, v)
	}
	return out, nil
}

// qemuCommand is the command line that runs firmware file elf under the board's
// emulator, or nil when the board has none.
func qemuCommand(b *boards.Board, elf string) []string {
	if b.QEMU.Binary == "" {
		return nil
	}
	cmd := []string{b.QEMU.Binary}
	if b.QEMU.Machine != "" {
		cmd = append(cmd, "-M", b.QEMU.Machine)
	}
	cmd = append(cmd, b.QEMU.Args...)
	if b.QEMU.ICountShift > 0 && b.QEMU.Machine != "" {
		cmd = append(cmd, "-icount", fmt.Sprintf("shift=%d,align=off,sleep=off", b.QEMU.ICountShift))
	}
	if b.QEMU.Machine != "" {
		cmd = append(cmd, "-kernel")
	}
	return append(cmd, elf)
}

func hasSuffixAny(names []string, suf string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, suf) })
}

// cmakeTargets are target names a generated CMake project cannot give its
// model library (named after the prefix): the ones CMake reserves (policy
// CMP0037, Makefile and IDE generators) and the project's own run and
// size.
var cmakeTargets = map[string]bool{
	"all": true, "clean": true, "help": true, "install": true, "test": true, "package": true,
	"package_source": true, "edit_cache": true, "rebuild_cache": true, "depend": true,
	"preinstall": true, "list_install_components": true, "all_build": true, "zero_check": true,
	"run_tests": true, "run": true, "size": true,
}

// PrefixProblem says why a project of kind k cannot use prefix p (its
// targets are named after it), or "": a CMake library named size or all
// clashed with the project's own size target or one CMake reserves, and
// the project did not configure (template journey finding); a Bazel
// library named mcugen_runtime with the runtime's.
func PrefixProblem(k Kind, p string) string {
	switch {
	case k == CMake && cmakeTargets[strings.ToLower(p)]:
		return fmt.Sprintf("the CMake project's model library is a target named after the prefix, and %s is a target CMake reserves or the project's own (run, size)", p)
	case k == Bazel && (p == "mcugen_runtime" || p == "all"):
		return fmt.Sprintf("the Bazel package's model library is a target named after the prefix, and %s is the runtime's or Bazel's :all", p)
	}
	return ""
}
