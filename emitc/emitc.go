// Package emitc prints a lowered tir.Module as dependency-free C99: a header
// with the model's API (DESIGN §4), and a source file holding the weights as
// static const arrays, one static function per kernel and the entry function
// that calls them in the planned order with arena offsets. It is a printer:
// every decision (loop order, fusion, unrolling, constants) was made in tir.
package emitc

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
)

// Options say how to print the module.
type Options struct {
	// Prefix names the files, the API functions and macros (default "model").
	Prefix string
	// ArenaExternal adds a void *arena parameter instead of a static arena.
	ArenaExternal bool
	// IOInArena: inputs and outputs live in the arena (the plan must agree);
	// <prefix>_input_ptr()/<prefix>_output_ptr() give their addresses.
	IOInArena bool
	// WeightsSection puts the weights in this linker section (GCC/Clang attribute).
	WeightsSection string
	// ArenaSection puts the static arena in this linker section (a name
	// starting with ".bss." so that any linker script zero-fills it as .bss
	// unless it places the section itself, as mcugen's does).
	ArenaSection string
	// Model is the model name printed in the header comment (default m.Name).
	Model string
	// Version is the mcugen version printed in the header comment.
	Version string
	// Target names the tir schedule set for Compile (default "generic").
	Target string
	// Format is the model's file format, "tflite" or "onnx" (graph.Graph.Format;
	// Compile takes the graph's): with microTVM's prefix (MicroTVM) it decides
	// the outputs' names as TVM's frontends did (MicroTVMIONames).
	Format string
}

// Report summarizes what Compile produced (for `mcugen compile --json`).
type Report struct {
	Target       string   `json:"target"`
	ArenaBytes   int      `json:"arena_bytes"`
	WeightsBytes int      `json:"weights_bytes"`
	Files        []string `json:"files"`
	Entry        string   `json:"entry"`
	Kernels      []Kernel `json:"kernels"`
	// ScratchBytes is the stack the largest kernel's local arrays take
	// (tir.Module.ScratchBytes): what the caller's stack needs beyond the
	// functions' own frames.
	ScratchBytes int `json:"scratch_bytes"`
	// DeadChannels is the kernels' constant output channels, summed.
	DeadChannels int      `json:"dead_channels"`
	Inputs       []IOInfo `json:"inputs"`
	Outputs      []IOInfo `json:"outputs"`
	// States are the tensors the generated code carries from one inference
	// to the next (graph.State), by their input tensor's name; StateBytes
	// is the static RAM they take (one copy each, two with separate I/O).
	States     []IOInfo `json:"states,omitempty"`
	StateBytes int      `json:"state_bytes,omitempty"`
}

// Kernel describes one generated function.
type Kernel struct {
	Name  string         `json:"name"`
	Node  string         `json:"node"`
	Op    string         `json:"op"`
	Knobs map[string]int `json:"knobs,omitempty"`
	// Scratch is the bytes of the kernel's local arrays (on the stack).
	Scratch int `json:"scratch_bytes,omitempty"`
	// DeadChannels is how many output channels it stores as constants
	// (all-zero weights).
	DeadChannels int `json:"dead_channels,omitempty"`
}

// Compile lowers g with its memory plan for opts.Target and prints the C.
// It is the one call `mcugen compile` needs.
func Compile(g *graph.Graph, plan *memplan.Plan, opts Options) (map[string][]byte, *Report, error) {
	tname := opts.Target
	if tname == "" {
		tname = "generic"
	}
	target, err := tir.TargetByName(tname)
	if err != nil {
		return nil, nil, err
	}
	m, err := tir.Lower(g, plan, target)
	if err != nil {
		return nil, nil, err
	}
	if opts.Format == "" {
		opts.Format = g.Format
	}
	files, err := Emit(m, opts)
	if err != nil {
		return nil, nil, err
	}
	return files, ReportFor(m, files, opts), nil
}

func prefixOf(opts Options, m *tir.Module) string {
	p := opts.Prefix
	if p == "" {
		p = "model"
	}
	return strings.ToLower(Ident(p))
}

type emitter struct {
	m *tir.Module
	// usesMath: the C calls the C library's maths (source sets it; the
	// header's -lm note reads it).
	usesMath bool
	opts     Options
	prefix   string
	PREFIX   string
	consts   map[*tir.Buffer]string
	helpers  map[string]bool
	extra    map[string]string
	// constList holds one buffer per distinct constant array, in order.
	constList []*tir.Buffer
	inNames   []string
	outName   []string
	// same maps a kernel to the earlier kernel whose C it would repeat
	// (the steps of an unrolled recurrent layer).
	same map[string]string
	// shared maps a kernel whose C differs from others' only in the
	// constant arrays it reads to the one function they share, and the
	// arrays its call passes.
	shared map[string]sharedCall
	// constName maps each constant array's name to its C element type and
	// length ("int8_t[4096]").
	constName map[string]string
}

// sharedCall is a layer's call of a kernel shared by layers of one shape:
// the function, and this layer's constant arrays as its leading arguments.
type sharedCall struct {
	fn     string
	consts []string
}

// Emit prints m as <prefix>.h and <prefix>.c.
func Emit(m *tir.Module, opts Options) (map[string][]byte, error) {
	if opts.IOInArena != m.IOInArena {
		return nil, fmt.Errorf("emitc: --io in-arena is %v but the memory plan has inputs/outputs in the arena = %v", opts.IOInArena, m.IOInArena)
	}
	e := &emitter{m: m, opts: opts, consts: map[*tir.Buffer]string{}, helpers: map[string]bool{}, extra: map[string]string{}}
	e.prefix = prefixOf(opts, m)
	e.PREFIX = strings.ToUpper(e.prefix)
	e.inNames, e.outName = ioNames(m, opts)
	if m.IOInArena {
		for _, in := range m.Inputs {
			if in.Offset < 0 {
				return nil, fmt.Errorf("emitc: input %q has no arena offset", in.Name)
			}
		}
		for _, o := range m.Outputs {
			if o.Offset < 0 {
				return nil, fmt.Errorf("emitc: output %q has no arena offset", o.Name)
			}
		}
	}
	cnames := newNamer()
	for _, f := range m.Funcs {
		cnames.used[e.prefix+"_"+f.Name] = true
	}
	// The states' static names (states()) are taken too.
	for k, st := range m.States {
		for _, n := range []string{e.stateBuf(st.In, false), e.stateBuf(st.Out, true), fmt.Sprintf("%s_state%d_init", e.prefix, k)} {
			cnames.used[n] = true
		}
	}
	cnames.used[e.prefix+"_state_set"], cnames.used[e.prefix+"_reset"] = true, true
	// The entry function's own names: a shared kernel's call passes
	// constant arrays by name there (a weight named "arena" was arena_,
	// the external arena's parameter, and the call passed the arena as
	// the weights: session 48 review).
	for _, n := range []string{"arena_", "workspace_pools", "io"} {
		cnames.used[n] = true
	}
	// Buffers viewing the same data (a broadcast view, a shared weight), or
	// equal data (the weights of an unrolled recurrent layer's steps, each
	// step's kernel holding its own copy), share one array.
	byData := map[*graph.Data]string{}
	byValue := map[string]string{}
	for _, c := range m.Consts {
		if n, ok := byData[c.Data]; ok && c.Data != nil {
			e.consts[c] = n
			continue
		}
		key := c.ContentKey()
		if n, ok := byValue[key]; ok && key != "" {
			e.consts[c] = n
			byData[c.Data] = n
			continue
		}
		e.consts[c] = cnames.unique(Ident(c.Name))
		byData[c.Data] = e.consts[c]
		if key != "" {
			byValue[key] = e.consts[c]
		}
		e.constList = append(e.constList, c)
	}
	src, err := e.source()
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		e.prefix + ".h": e.header(),
		e.prefix + ".c": src,
	}, nil
}

func (e *emitter) banner() string {
	model := e.opts.Model
	if model == "" {
		model = e.m.Name
	}
	ver := e.opts.Version
	if ver == "" {
		ver = "(devel)"
	}
	return fmt.Sprintf("/* Generated by mcugen %s from model %s (target %s). Do not edit. */\n",
		commentSafe(ver), commentSafe(fmt.Sprintf("%q", model)), commentSafe(e.m.Target))
}

func commentSafe(s string) string {
	// A "/*" inside a comment is gcc's -Wcomment (an error under -Werror).
	return strings.ReplaceAll(strings.ReplaceAll(s, "*/", "* /"), "/*", "/ *")
}

func (e *emitter) arenaParam() string {
	if e.opts.ArenaExternal {
		return "void *arena"
	}
	return "void"
}

// arenaAlign is the alignment the arena's offsets assume (word and
// double-word loads, vector loads): a caller's arena must have it.
const arenaAlign = 16

func (e *emitter) header() []byte {
	var b bytes.Buffer
	b.WriteString(e.banner())
	guard := e.PREFIX + "_H_"
	fmt.Fprintf(&b, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n", guard, guard)
	b.WriteString("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
	fmt.Fprintf(&b, "/* Bytes of working memory (activations)")
	if e.opts.ArenaExternal {
		fmt.Fprintf(&b, " the caller provides, aligned to %s_ARENA_ALIGN bytes", e.PREFIX)
	}
	fmt.Fprintf(&b, ". */\n#define %s_ARENA_SIZE %d\n", e.PREFIX, e.m.ArenaBytes)
	if e.opts.ArenaExternal {
		fmt.Fprintf(&b, "#define %s_ARENA_ALIGN %d\n", e.PREFIX, arenaAlign)
	}
	if MicroTVM(e.prefix) {
		// interface_c.cc's macro, for code written for microTVM's header.
		if e.opts.ArenaExternal {
			b.WriteString("/* The same, by microTVM's name: the arena run takes. */\n")
		} else {
			fmt.Fprintf(&b, "/* The same, by microTVM's name. run works in its own static arena: a workspace\n   of this size that the application declares goes unused. */\n")
		}
		fmt.Fprintf(&b, "#define %s_WORKSPACE_SIZE %d\n", e.PREFIX, e.m.ArenaBytes)
		if e.usmp() {
			// TVM's USMP names for an arena the application gives: its
			// main.c fills the pools struct and passes it to run (review
			// finding: a void *arena took &workspace_pools without a
			// word, and the struct became the arena).
			fmt.Fprintf(&b, "/* The same, by the name of microTVM's one workspace pool (USMP's global_workspace). */\n#define %s_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE %d\n", e.PREFIX, e.m.ArenaBytes)
		}
	}
	stack, _ := e.m.ScratchBytes()
	fmt.Fprintf(&b, "/* Bytes of stack the largest kernel's local arrays take, on top of the call frames\n   (a -O2 build's take a few hundred more, -O3 or -funroll-loops up to about 2 KiB more,\n   an unoptimized clang build's up to 12 KiB; mcugen run measures a board's). */\n#define %s_STACK_SIZE %d\n", e.PREFIX, stack)
	// Multi-model journey: a firmware splitting its flash between models
	// found this only in compile --json (weights_bytes). _BYTES: no
	// tensor's macro ends so.
	fmt.Fprintf(&b, "/* Bytes of constants the C defines (weights in the kernels' layouts, biases,\n   requantization and lookup tables): flash, or the weights section. */\n#define %s_WEIGHTS_BYTES %d\n", e.PREFIX, e.m.ConstBytes())
	if e.m.Float && e.usesMath {
		// User-journey finding: a float model's firmware failed to link
		// (expf) with nothing saying why.
		b.WriteString("/* A float model's kernels may call the C library's math functions (expf, tanhf, ...):\n   link with -lm. */\n")
	}
	if ws := e.opts.WeightsSection; ws != "" {
		fmt.Fprintf(&b, "/* The weights are in section %s (--weights-section): a linker script that\n   does not name it leaves it to ld's placement of orphan sections. */\n", ws)
	}
	if as := e.opts.ArenaSection; as != "" && !e.opts.ArenaExternal {
		fmt.Fprintf(&b, "/* The static arena is in section %s. */\n", as)
	}
	b.WriteString("\n")
	// User-journey finding: the header gave only the dequantizing way, and
	// the common (int)(x / s + 0.5) rounds negative values otherwise.
	// Ties round as the model's own quantize op does (API journey: the
	// header said half away from zero for QDQ models too).
	b.WriteString("/* Sizes are in bytes. A quantized tensor's element q stands for SCALE * (q - ZERO_POINT);\n   a real value x quantizes to q = round(x / SCALE) + ZERO_POINT, x / SCALE divided in float,\n   rounded half away from zero for a TFLite int8 model (TFLite's QUANTIZE) and half to even\n   for an ONNX QDQ model or one mcugen quantized (ONNX's QuantizeLinear), then clamped to the\n   type's range (-128..127 for int8). */\n")
	ioDefs := func(kind string, t *tir.IO, name string) {
		note := ""
		if t.DType == graph.Bool {
			// API journey: how a bool is stored was nowhere.
			note = "; one byte each, 0 false and any other value true"
		}
		fmt.Fprintf(&b, "/* %s %s: %s %v (%d elements%s) */\n#define %s_%s_SIZE %d\n", kind, commentSafe(fmt.Sprintf("%q", t.Name)), t.DType, t.Shape, graph.NumElements(t.Shape), note, e.PREFIX, name, t.Bytes)
		// The element type and count as macros, for a buffer declared as
		// <NAME>_TYPE buf[<NAME>_ELEMENTS] (C API review: only a comment
		// said them).
		fmt.Fprintf(&b, "#define %s_%s_TYPE %s\n#define %s_%s_ELEMENTS %d\n", e.PREFIX, name, ctype(t.DType), e.PREFIX, name, graph.NumElements(t.Shape))
		if t.Quantized {
			zp := fmt.Sprint(t.ZeroPoint)
			if t.ZeroPoint < 0 {
				zp = "(" + zp + ")" // a macro's negative value in parentheses (CERT PRE02-C)
			}
			fmt.Fprintf(&b, "#define %s_%s_SCALE %sf\n#define %s_%s_ZERO_POINT %s\n", e.PREFIX, name, cFloat(t.Scale), e.PREFIX, name, zp)
		}
		if e.m.IOInArena {
			// Multi-model journey: only the _ptr functions said where,
			// so a buffer placed at link time (DMA) could not use it.
			fmt.Fprintf(&b, "#define %s_%s_OFFSET %d /* bytes into the arena: the address its _ptr function returns */\n", e.PREFIX, name, t.Offset)
		}
	}
	for i, in := range e.m.Inputs {
		if !e.m.IsState(i, false) {
			ioDefs("input", in, strings.ToUpper(e.inNames[i]))
		}
	}
	for i, o := range e.m.Outputs {
		if !e.m.IsState(i, true) {
			ioDefs("output", o, strings.ToUpper(e.outName[i]))
		}
	}
	b.WriteString("\n")
	if e.opts.ArenaExternal && len(e.m.States) == 0 {
		b.WriteString("/* run keeps nothing between calls but what is in the arena it is given: threads may\n   run the model at once, each with an arena of its own. */\n\n")
	} else if e.opts.ArenaExternal {
		b.WriteString("/* Not re-entrant: run keeps the model's state in static RAM, so call it from one\n   thread (or task) at a time. */\n\n")
	} else {
		b.WriteString("/* Not re-entrant: run works in one static arena")
		if len(e.m.States) > 0 {
			b.WriteString(" and keeps the model's state")
		}
		b.WriteString(", so call it from one\n   thread (or task) at a time. */\n\n")
	}
	if len(e.m.States) > 0 {
		fmt.Fprintf(&b, "/* The model keeps state from one inference to the next (%d tensor(s) of %d bytes,\n"+
			"   %d bytes of static RAM with their next values): each run starts from what the\n"+
			"   previous one left. Call reset to start a new sequence; the state starts reset. */\n"+
			"#define %s_STATE_SIZE %d\n/* Bytes of static RAM the state takes, its next values included. */\n#define %s_STATE_RAM %d\nvoid %s_reset(void);\n\n",
			len(e.m.States), e.stateBytes(), StateRAM(e.m), e.PREFIX, e.stateBytes(), e.PREFIX, StateRAM(e.m), e.prefix)
	}
	if e.m.IOInArena {
		b.WriteString("/* Inputs and outputs live in the arena: write the inputs at the\n   addresses below, call run, read the outputs. run overwrites the inputs\n   (the arena reuses their bytes): write them again before each run. */\n")
		for i, in := range e.m.Inputs {
			if !e.m.IsState(i, false) {
				fmt.Fprintf(&b, "void *%s(%s); /* input %s */\n", e.ioPtrName("input", i), e.arenaParam(), commentSafe(fmt.Sprintf("%q", in.Name)))
			}
		}
		for i, o := range e.m.Outputs {
			if !e.m.IsState(i, true) {
				fmt.Fprintf(&b, "void *%s(%s); /* output %s */\n", e.ioPtrName("output", i), e.arenaParam(), commentSafe(fmt.Sprintf("%q", o.Name)))
			}
		}
		if e.usmp() {
			// microTVM's API with the I/O in the workspace pool (USMP's
			// use_workspace_io): the structs, map_inputs/map_outputs and
			// run take the pools.
			b.WriteString("\n")
			e.ioStructs(&b)
			e.poolsStruct(&b)
			fmt.Fprintf(&b, "/* The inputs' and outputs' addresses in the pool's arena, as microTVM's map functions gave them. */\n")
			fmt.Fprintf(&b, "struct %s_inputs %s_map_inputs(struct %s_workspace_pools *workspace_pools);\n", e.prefix, e.prefix, e.prefix)
			fmt.Fprintf(&b, "struct %s_outputs %s_map_outputs(struct %s_workspace_pools *workspace_pools);\n", e.prefix, e.prefix, e.prefix)
			fmt.Fprintf(&b, "\n/* Runs the model; returns 0, or -1 when the pools or their arena are missing or the arena\n   is not aligned to %s_ARENA_ALIGN. */\nint32_t %s_run(struct %s_workspace_pools *workspace_pools);\n", e.PREFIX, e.prefix, e.prefix)
		} else if e.opts.ArenaExternal && e.m.ArenaBytes > 0 {
			fmt.Fprintf(&b, "\n/* Runs the model; returns 0, or -1 when the arena is missing or not aligned to\n   %s_ARENA_ALIGN. */\nint32_t %s_run(%s);\n", e.PREFIX, e.prefix, e.arenaParam())
		} else {
			fmt.Fprintf(&b, "\n/* Runs the model; returns 0. */\nint32_t %s_run(%s);\n", e.prefix, e.arenaParam())
		}
	} else {
		// C99 has no empty struct: a model whose inputs all folded into
		// constants (or whose outputs are all states) gets a placeholder.
		members := func(names []string, outputs bool) {
			k := 0
			for i, n := range names {
				if !e.m.IsState(i, outputs) {
					fmt.Fprintf(&b, "    void *%s;\n", n)
					k++
				}
			}
			if k == 0 {
				b.WriteString("    char none; /* the model has none; C needs a member */\n")
			}
		}
		fmt.Fprintf(&b, "struct %s_inputs {\n", e.prefix)
		members(e.inNames, false)
		fmt.Fprintf(&b, "};\n\n")
		b.WriteString(e.microTVMLegacyNote())
		fmt.Fprintf(&b, "struct %s_outputs {\n", e.prefix)
		members(e.outName, true)
		fmt.Fprintf(&b, "};\n\n/* Runs the model; returns 0, or -1 when a pointer is missing or misaligned (each\n   input and output aligned for its element type: 4 bytes for float32 on Arm%s).\n   run reads the inputs and never writes them; an output's buffer must not overlap an\n   input's or another output's (some layers write an output before reading all inputs). */\n", e.arenaAlignNote())
		args := fmt.Sprintf("struct %s_inputs *in, struct %s_outputs *out", e.prefix, e.prefix)
		switch {
		case e.usmp():
			e.poolsStruct(&b)
			args += fmt.Sprintf(", struct %s_workspace_pools *workspace_pools", e.prefix)
		case e.opts.ArenaExternal:
			args += ", void *arena"
		}
		fmt.Fprintf(&b, "int32_t %s_run(%s);\n", e.prefix, args)
	}
	if n := len(e.m.Calls); n > 0 {
		fmt.Fprintf(&b, "\n/* The %d layers, in the order run calls them (%s_LAYER_HOOK in %s.c):\n", n, e.PREFIX, e.prefix)
		for k, c := range e.m.Calls {
			fmt.Fprintf(&b, "   %3d %s %s\n", k, c.Func.Name, commentSafe(fmt.Sprintf("%q", c.Func.Node)))
		}
		fmt.Fprintf(&b, " */\n#define %s_NUM_LAYERS %d\n", e.PREFIX, n)
	}
	fmt.Fprintf(&b, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", guard)
	return b.Bytes()
}

// usmp reports microTVM's API for an arena the application gives (USMP's
// workspace pools): a microTVM prefix with --arena external.
func (e *emitter) usmp() bool { return MicroTVM(e.prefix) && e.opts.ArenaExternal }

// poolsStruct writes microTVM's workspace pools struct: one pool, the arena.
func (e *emitter) poolsStruct(b *bytes.Buffer) {
	fmt.Fprintf(b, "/* microTVM's workspace pools: one, the arena (%s_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE\n   bytes, aligned to %s_ARENA_ALIGN). */\nstruct %s_workspace_pools {\n    void *global_workspace;\n};\n\n", e.PREFIX, e.PREFIX, e.prefix)
}

// ioStructs writes struct <prefix>_inputs and _outputs, a void * member a
// tensor (with --io in-arena, what map_inputs and map_outputs return).
func (e *emitter) ioStructs(b *bytes.Buffer) {
	for _, side := range []struct {
		kind    string
		names   []string
		outputs bool
	}{{"inputs", e.inNames, false}, {"outputs", e.outName, true}} {
		fmt.Fprintf(b, "struct %s_%s {\n", e.prefix, side.kind)
		k := 0
		for i, n := range side.names {
			if !e.m.IsState(i, side.outputs) {
				fmt.Fprintf(b, "    void *%s;\n", n)
				k++
			}
		}
		if k == 0 {
			b.WriteString("    char none; /* the model has none; C needs a member */\n")
		}
		b.WriteString("};\n\n")
	}
}

// microTVMLegacyNote is, with microTVM's prefix, a comment for code written
// for TVM before v0.9, whose TFLite frontend did not name the outputs: it
// named them as it still names ONNX models' (MicroTVMIONames).
func (e *emitter) microTVMLegacyNote() string {
	if !MicroTVM(e.prefix) || e.opts.Format != "tflite" {
		return ""
	}
	_, old := MicroTVMIONames(e.m, "")
	var renames []string
	for i, n := range e.outName {
		if !e.m.IsState(i, true) && old[i] != n {
			renames = append(renames, fmt.Sprintf(".%s is .%s", old[i], n))
		}
	}
	if len(renames) == 0 {
		return ""
	}
	return fmt.Sprintf("/* Named after the model's output tensors, as TVM v0.9 to v0.18 named a TFLite\n   model's. TVM before v0.9 named them output, output0, ...: its %s here. */\n", strings.Join(renames, ", "))
}

// arenaAlignNote completes run's comment for an external arena.
func (e *emitter) arenaAlignNote() string {
	if !e.opts.ArenaExternal {
		return ""
	}
	if e.m.ArenaBytes == 0 {
		return "; the arena may be NULL: the model needs none"
	}
	return fmt.Sprintf("; the arena %s_ARENA_ALIGN", e.PREFIX)
}

func (e *emitter) ioPtrName(kind string, i int) string {
	// Numbered among the application's inputs (outputs): states are not
	// theirs.
	k := 0
	for j := 0; j < i; j++ {
		if !e.m.IsState(j, kind == "output") {
			k++
		}
	}
	i = k
	if i == 0 {
		return fmt.Sprintf("%s_%s_ptr", e.prefix, kind)
	}
	return fmt.Sprintf("%s_%s%d_ptr", e.prefix, kind, i)
}

func (e *emitter) source() ([]byte, error) {
	var kernels bytes.Buffer
	e.same, e.shared, e.constName = map[string]string{}, map[string]sharedCall{}, map[string]string{}
	for c, n := range e.consts {
		e.constName[n] = fmt.Sprintf("%s[%d]", ctype(c.DType), max(c.Data.Len(), 1))
	}
	ks := make([]*kernelC, 0, len(e.m.Funcs))
	for _, f := range e.m.Funcs {
		k, err := e.kernel(f)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	e.writeKernels(&kernels, ks)
	var b bytes.Buffer
	b.WriteString(e.banner())
	fmt.Fprintf(&b, "#include \"%s.h\"\n\n", e.prefix)
	b.WriteString("#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n")
	// Unoptimized, gcc gives every inlined helper its own stack slots: a
	// depthwise kernel's frame grew to 25 KB at -O0 (a Debug build), far
	// past <PREFIX>_STACK_SIZE. The kernels are always built optimized
	// for debugging at least.
	b.WriteString("/* A build without optimisation (-O0) still compiles this file at -Og: at -O0 gcc's\n   frames for the kernels outgrow <PREFIX>_STACK_SIZE many times over. */\n")
	b.WriteString("#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPTIMIZE__)\n#pragma GCC optimize(\"Og\")\n#endif\n")
	if e.m.Float {
		// avr-libc's math.h has INFINITY and no HUGE_VALF. Taken out
		// below where no kernel or helper uses the C library's maths.
		b.WriteString(mathBlock)
		// clang contracts a*b + c into one fused multiply-add by default;
		// gcc in ISO C mode, and the reference interpreter, round both
		// operations (review finding: a float sum of squares rounded
		// otherwise under clang, and a result quantized after it could
		// fall on the other side of a tie).
		b.WriteString("/* Each float operation rounded on its own, as gcc in ISO C mode and mcugen's reference do. */\n#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n")
	}
	b.WriteString("\n#if defined(__GNUC__)\n")
	fmt.Fprintf(&b, "#define %s_ALIGNED __attribute__((aligned(16)))\n", e.PREFIX)
	if e.opts.ArenaSection != "" && !e.opts.ArenaExternal {
		fmt.Fprintf(&b, "#define %s_ARENA __attribute__((aligned(16), section(%q)))\n", e.PREFIX, e.opts.ArenaSection)
	} else {
		fmt.Fprintf(&b, "#define %s_ARENA __attribute__((aligned(16)))\n", e.PREFIX)
	}
	if e.opts.WeightsSection != "" {
		fmt.Fprintf(&b, "#define %s_WEIGHTS __attribute__((aligned(16), section(%q)))\n", e.PREFIX, e.opts.WeightsSection)
	} else {
		fmt.Fprintf(&b, "#define %s_WEIGHTS __attribute__((aligned(16)))\n", e.PREFIX)
	}
	// Each kernel stays a function of its own: inlined into the entry function, gcc
	// allocates registers over the whole model and the micro-kernels it inlines into
	// the kernels lose (VWW on a Cortex-M4: 3.5% more instructions). gcc also gets
	// no interprocedural view of them (noipa): gcc 12.2 specialized kernels for their
	// constant arena pointers (.constprop clones) and miscompiled models with them,
	// on x86-64 (a kernel dropped as dead) and on the Cortex-M4 and M55 (a PyTorch
	// CNN and a Conv-ScatterND-Conv model, int8, wrong at -O2 and right at -O1, with
	// -fno-ipa-cp or with noipa; user journey, session 19).
	fmt.Fprintf(&b, "#if !defined(__clang__) && __GNUC__ >= 8\n#define %[1]s_KERNEL __attribute__((noipa))\n#else\n#define %[1]s_KERNEL __attribute__((noinline))\n#endif\n", e.PREFIX)
	fmt.Fprintf(&b, "#define %[1]s_ALIGNOF(t) __alignof__(t)\n", e.PREFIX)
	fmt.Fprintf(&b, "#else\n#define %[1]s_ALIGNED\n#define %[1]s_ARENA\n#define %[1]s_WEIGHTS\n#define %[1]s_KERNEL\n#define %[1]s_ALIGNOF(t) sizeof(t)\n#endif\n\n", e.PREFIX)
	fmt.Fprintf(&b, "/* Per-layer profiling: define %[1]s_LAYER_HOOK(i) when compiling this file (for\n"+
		"   example as a call that reads DWT->CYCCNT). run calls it with 0 before the first layer\n"+
		"   and with i + 1 after layer i (the layers are listed in %[2]s.h). */\n"+
		"#ifndef %[1]s_LAYER_HOOK\n#define %[1]s_LAYER_HOOK(i) ((void)0)\n#endif\n\n", e.PREFIX, e.prefix)
	if !e.opts.ArenaExternal {
		// Other compilers (IAR, TI, MSVC) get no aligned attribute: a
		// union aligns the arena for the words and floats the kernels
		// keep in it (audit finding: a plain byte array may be at any
		// address, and an LDRD or VLDR from it faults).
		fmt.Fprintf(&b, "#if defined(__GNUC__)\nstatic uint8_t %[1]s_arena[%[2]s_ARENA_SIZE > 0 ? %[2]s_ARENA_SIZE : 1] %[2]s_ARENA;\n#else\n", e.prefix, e.PREFIX)
		fmt.Fprintf(&b, "static union {\n    uint8_t b[%[2]s_ARENA_SIZE > 0 ? %[2]s_ARENA_SIZE : 1];\n    int64_t i;\n    double d;\n    void *p;\n} %[1]s_arena_u;\n#define %[1]s_arena (%[1]s_arena_u.b)\n#endif\n\n", e.prefix, e.PREFIX)
	}
	// Helpers (with their dependencies), in a fixed order.
	need := map[string]bool{}
	var mark func(string)
	mark = func(h string) {
		if need[h] {
			return
		}
		need[h] = true
		for _, d := range helperText[h].deps {
			mark(d)
		}
	}
	for h := range e.helpers {
		mark(h)
	}
	// helperOrder's order, each helper after the ones it needs (whichever
	// file registered them first).
	printed := map[string]bool{}
	var hb bytes.Buffer
	for _, h := range helperOrder {
		if need[h] {
			writeHelper(&hb, h, printed)
		}
	}
	extras := make([]string, 0, len(e.extra))
	for name := range e.extra {
		extras = append(extras, name)
	}
	sort.Strings(extras)
	for _, name := range extras {
		hb.WriteString(e.extra[name])
		hb.WriteString("\n\n")
	}
	if bytes.Contains(hb.Bytes(), []byte(asmImm)) || bytes.Contains(kernels.Bytes(), []byte(asmImm)) {
		b.WriteString(asmImmDef)
	}
	if bytes.Contains(hb.Bytes(), []byte(alwaysInline)) {
		b.WriteString(alwaysInlineDef)
	}
	// clang warns of a static inline function the file does not call (gcc
	// does not): a helper's dependency may serve only its other form (its
	// asm or its C, by the core's features). The helpers only; the kernels
	// and the entry function keep the warning.
	if hb.Len() > 0 {
		b.WriteString("/* clang warns of an unused static inline function, gcc does not: some helpers serve\n" +
			"   only the other form (asm or C) of one a kernel calls. */\n" +
			"#if defined(__clang__)\n#pragma clang diagnostic push\n#pragma clang diagnostic ignored \"-Wunused-function\"\n#endif\n\n")
		b.Write(hb.Bytes())
		b.WriteString("#if defined(__clang__)\n#pragma clang diagnostic pop\n#endif\n\n")
	}
	for _, c := range e.constList {
		writeConst(&b, c, e.consts[c], e.PREFIX)
	}
	e.states(&b)
	b.Write(kernels.Bytes())
	if err := e.entry(&b); err != nil {
		return nil, err
	}
	src := b.Bytes()
	if e.m.Float {
		// An int8 model whose float is its inputs' Quantize and outputs'
		// Dequantize (a QDQ file's, fused into Transposes) calls nothing of
		// <math.h>: the contract's includes, and no -lm note (review
		// finding).
		rest := bytes.Replace(src, []byte(mathBlock), nil, 1)
		if e.usesMath = mathUse.Match(cComment.ReplaceAll(rest, nil)); !e.usesMath {
			src = rest
		}
	}
	return src, nil
}

// cComment matches a C comment (the C mcugen writes has no comment
// markers inside its strings).
var cComment = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)

// mathBlock is the float C's include of <math.h>.
const mathBlock = "#include <math.h>\n#ifndef HUGE_VALF\n#define HUGE_VALF INFINITY\n#endif\n"

// mathUse matches a use of <math.h>: a macro, or a call of one of its
// functions (float, double or long double).
var mathUse = regexp.MustCompile(`\b(HUGE_VALF?|INFINITY|NAN|isnan|isinf|isfinite|signbit|fpclassify)\b|\b(acos|asin|atan2|atan|cos|sin|tan|acosh|asinh|atanh|cosh|sinh|tanh|exp2|expm1|exp|log10|log1p|log2|logb|log|ilogb|frexp|ldexp|modf|scalbn|scalbln|cbrt|fabs|hypot|pow|sqrt|erfc|erf|lgamma|tgamma|ceil|floor|nearbyint|rint|lrint|llrint|lround|llround|round|trunc|fmod|remainder|remquo|copysign|nan|nextafter|nexttoward|fdim|fmax|fmin|fma)[fl]?\s*\(`)

// asmImm is the constraint of an asm immediate that a helper computes from its
// parameters (a stride, a count): gcc checks "n" once inlining has made the
// parameter a constant, clang checks "n" before inlining but takes "i" after
// it (at -O1 and up, where the asm is compiled at all).
const asmImm = "MCUGEN_ASM_IMM"

const asmImmDef = "/* The constraint of an asm immediate a helper computes from its parameters: gcc checks \"n\"\n" +
	"   once inlining has made them constants, clang checks \"n\" before inlining and \"i\" after. */\n" +
	"#ifndef " + asmImm + "\n#if defined(__clang__)\n#define " + asmImm + " \"i\"\n#else\n#define " + asmImm + " \"n\"\n#endif\n#endif\n\n"

// alwaysInline marks the helpers the kernels inline. clang without
// optimisation keeps every inlined copy's locals in slots of their own, and
// KWS's depthwise kernels took 20 KB frames (past mps2-an386's 16 KiB stack:
// gcc's -O0 builds take -Og instead, which clang has no pragma for); there
// the helpers are plain calls.
const alwaysInline = "MCUGEN_ALWAYS_INLINE"

const alwaysInlineDef = "/* The helpers the kernels inline; called, not inlined, in a clang build without optimisation,\n" +
	"   whose inlined copies would each keep their own stack slots. */\n" +
	"#ifndef " + alwaysInline + "\n#if defined(__GNUC__) && !(defined(__clang__) && !defined(__OPTIMIZE__))\n#define " + alwaysInline +
	" __attribute__((always_inline))\n#else\n#define " + alwaysInline + "\n#endif\n#endif\n\n"

func writeConst(b *bytes.Buffer, c *tir.Buffer, name, PREFIX string) {
	what := "constant"
	if c.Tensor != "" {
		what = fmt.Sprintf("tensor %q", c.Tensor)
	}
	fmt.Fprintf(b, "/* %s: %s %v */\n", commentSafe(what), c.DType, c.Shape)
	// A broadcast view of a constant has the shape it is read with (zero
	// strides on the broadcast axes); the array holds the data itself.
	n := c.Data.Len()
	fmt.Fprintf(b, "static const %s %s[%d] %s_WEIGHTS = {", ctype(c.DType), name, max(n, 1), PREFIX)
	perLine := 16
	if c.DType == graph.Float32 {
		perLine = 6
	} else if c.DType == graph.Int32 {
		perLine = 8
	}
	for i := 0; i < n; i++ {
		if i%perLine == 0 {
			b.WriteString("\n    ")
		} else {
			b.WriteString(" ")
		}
		if c.DType == graph.Float32 {
			b.WriteString(floatLit(c.Data.F[i]))
		} else {
			b.WriteString(intLit(c.DType, c.Data.I[i]))
		}
		b.WriteString(",")
	}
	if n == 0 {
		b.WriteString("0")
	}
	b.WriteString("\n};\n\n")
}

// kernelC is one kernel's C before it is written: its parameters, its
// body, and the constant arrays the body reads, in the order it first reads
// them.
type kernelC struct {
	f      *tir.PrimFunc
	params []string
	body   string
	consts []string
	// comment lists the kernel's parameters (the layer's tensors).
	comment string
}

func (e *emitter) kernel(f *tir.PrimFunc) (*kernelC, error) {
	r := &fnRenderer{names: map[any]string{}, consts: e.consts, helpers: e.helpers, extra: e.extra, prefix: e.prefix}
	r.push()
	for _, c := range e.consts {
		r.scopes[0][c] = true
	}
	var params []string
	nin, nout := 0, 0
	for _, p := range f.Params {
		if !p.Writes {
			nin++
		} else {
			nout++
		}
	}
	in, out := 0, 0
	for _, p := range f.Params {
		var base string
		if p.Writes {
			base = "output"
			if nout > 1 {
				base = fmt.Sprintf("output%d", out)
			}
			out++
		} else {
			base = "input"
			if nin > 1 {
				base = fmt.Sprintf("input%d", in)
			}
			in++
		}
		name := r.declare(p, base)
		if p.Writes {
			params = append(params, fmt.Sprintf("%s *%s", ctype(p.DType), name))
		} else {
			params = append(params, fmt.Sprintf("const %s *%s", ctype(p.DType), name))
		}
	}
	if len(params) == 0 {
		params = []string{"void"}
	}
	if err := r.stmt(f.Body, 1); err != nil {
		return nil, fmt.Errorf("emitc: kernel %s (node %q): %v", f.Name, f.Node, err)
	}
	body := r.sb.String()
	// A parameter the body never reads (a convolution whose every window
	// lies in the padding reads no input) is named void, for -Wextra.
	used := map[string]bool{}
	for _, id := range identRE.FindAllString(body, -1) {
		used[id] = true
	}
	// The constant arrays the body reads, in order: identifiers, not a
	// float literal's suffix (a constant named f) or an asm template's word.
	var consts []string
	seen := map[string]bool{}
	mapIdents(body, func(id string) string {
		if !seen[id] && e.constName[id] != "" {
			consts = append(consts, id)
		}
		seen[id] = true
		return id
	})
	var unused strings.Builder
	for _, p := range f.Params {
		if n := r.names[p]; !used[n] {
			fmt.Fprintf(&unused, "    (void)%s;\n", n)
		}
	}
	var comment strings.Builder
	fmt.Fprintf(&comment, "/* %s %s", f.Op, commentSafe(fmt.Sprintf("%q", f.Node)))
	for _, p := range f.Params {
		fmt.Fprintf(&comment, "\n   %s: %s %s %v", r.names[p], commentSafe(fmt.Sprintf("%q", p.Tensor)), p.DType, tensorShape(p))
	}
	return &kernelC{f: f, params: params, body: unused.String() + body, consts: consts, comment: comment.String()}, nil
}

// writeKernels writes the kernels' functions. A kernel whose C, up to its
// own name, is an earlier kernel's, and that reads the same constant
// arrays, is that kernel (the steps of an unrolled recurrent layer). Kernels
// whose C differs only in which constant arrays of the same types and
// lengths it reads (layers of one shape and one requantization: AD's six
// 128x128 fully connected layers with int8 weights) are one function that
// takes those arrays as leading parameters: its code is in flash once.
func (e *emitter) writeKernels(b *bytes.Buffer, ks []*kernelC) {
	exact := map[string]*kernelC{}
	var distinct []*kernelC
	for _, k := range ks {
		key := kernelIdentity(k.f.Name, strings.Join(k.params, ", "), k.body, k.consts)
		if first, ok := exact[key]; ok {
			e.same[k.f.Name] = first.f.Name
			continue
		}
		exact[key] = k
		distinct = append(distinct, k)
	}
	groups := map[string][]*kernelC{}
	shapeOf := map[*kernelC]string{}
	for _, k := range distinct {
		key := e.kernelShape(k)
		shapeOf[k] = key
		groups[key] = append(groups[key], k)
	}
	for _, k := range ks {
		if first, ok := e.same[k.f.Name]; ok {
			callee := first
			if s, ok := e.shared[first]; ok {
				callee = s.fn
			}
			fmt.Fprintf(b, "/* %s %s: %s_%s */\n\n", k.f.Op, commentSafe(fmt.Sprintf("%q", k.f.Node)), e.prefix, callee)
			continue
		}
		g := groups[shapeOf[k]]
		switch {
		case len(g) == 1:
			fmt.Fprintf(b, "%s */\n", k.comment)
			fmt.Fprintf(b, "static %s_KERNEL void %s_%s(%s)\n{\n", e.PREFIX, e.prefix, k.f.Name, strings.Join(k.params, ", "))
			b.WriteString(k.body)
			b.WriteString("}\n\n")
		case g[0] == k:
			e.writeShared(b, g)
		}
	}
}

// kernelShape is kernelIdentity with the constant arrays read as positions,
// each with its type and length: the kernels of one shape differ at most in
// which arrays they read.
func (e *emitter) kernelShape(k *kernelC) string {
	pos := map[string]int{}
	for i, c := range k.consts {
		pos[c] = i
	}
	body := mapIdents(k.body, func(id string) string {
		if i, ok := pos[id]; ok {
			return fmt.Sprintf("\x02%d\x02", i)
		}
		return id
	})
	types := make([]string, len(k.consts))
	for i, c := range k.consts {
		types[i] = e.constName[c]
	}
	return strings.Join(k.params, ", ") + "\x00" + strings.ReplaceAll(body, k.f.Name, "\x01") + "\x00" + strings.Join(types, ",")
}

// writeShared writes the one function of kernels g (same shape, other
// arrays): the first kernel's C, each array that differs between them
// read through a parameter.
func (e *emitter) writeShared(b *bytes.Buffer, g []*kernelC) {
	first := g[0]
	idents := map[string]bool{}
	for _, id := range identRE.FindAllString(first.body, -1) {
		idents[id] = true
	}
	param := map[string]string{}
	var params, vary []string
	for i, c := range first.consts {
		differs := false
		for _, k := range g[1:] {
			differs = differs || k.consts[i] != c
		}
		if !differs {
			continue
		}
		name := fmt.Sprintf("const%d", len(vary))
		for idents[name] {
			name += "_"
		}
		param[c] = name
		vary = append(vary, c)
		t := e.constName[c]
		params = append(params, fmt.Sprintf("const %s *restrict %s", t[:strings.IndexByte(t, '[')], name))
	}
	for _, k := range g {
		var args []string
		for i, c := range first.consts {
			if _, ok := param[c]; ok {
				args = append(args, k.consts[i])
			}
		}
		e.shared[k.f.Name] = sharedCall{fn: first.f.Name, consts: args}
	}
	body := mapIdents(first.body, func(id string) string {
		if n, ok := param[id]; ok {
			return n
		}
		return id
	})
	b.WriteString(first.comment)
	for _, c := range vary {
		fmt.Fprintf(b, "\n   %s: %s here; each layer's call passes its own", param[c], c)
	}
	fmt.Fprintf(b, "\n   The code of %d layers of this shape:", len(g))
	for _, k := range g {
		fmt.Fprintf(b, "\n     %s", commentSafe(fmt.Sprintf("%q", k.f.Node)))
	}
	b.WriteString(" */\n")
	all := append(append([]string(nil), params...), first.params...)
	if len(first.params) == 1 && first.params[0] == "void" {
		all = params
	}
	fmt.Fprintf(b, "static %s_KERNEL void %s_%s(%s)\n{\n", e.PREFIX, e.prefix, first.f.Name, strings.Join(all, ", "))
	if len(vary) > 0 {
		// Every call passes a whole constant array, which <PREFIX>_WEIGHTS
		// aligns to 16 bytes under gcc and clang: said to the compiler,
		// which knew it of the arrays themselves before the kernels were
		// shared (float VWW on the M55 took 5% more instructions without).
		b.WriteString("#if defined(__GNUC__)\n")
		for _, c := range vary {
			fmt.Fprintf(b, "    %[1]s = __builtin_assume_aligned(%[1]s, 16);\n", param[c])
		}
		b.WriteString("#endif\n")
	}
	b.WriteString(body)
	b.WriteString("}\n\n")
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// cTokenRE matches, in a kernel's C, a string or character literal (an asm
// template), a number (with its suffix: 0.5f, 1e-05f, 0x1fu) or an
// identifier: mapIdents maps the identifiers only.
var cTokenRE = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*|[A-Za-z_][A-Za-z0-9_]*`)

// mapIdents returns src with each identifier (not in a literal) replaced
// by f's result for it.
func mapIdents(src string, f func(string) string) string {
	return cTokenRE.ReplaceAllStringFunc(src, func(tok string) string {
		if c := tok[0]; c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return f(tok)
		}
		return tok
	})
}

// kernelIdentity is what makes a kernel's C this kernel: its parameters and
// body with its own name (which prefixes its locals) taken out, and the
// constant arrays it reads, by name.
func kernelIdentity(name, params, body string, consts []string) string {
	sorted := append([]string(nil), consts...)
	sort.Strings(sorted)
	return params + "\x00" + strings.ReplaceAll(body, name, "\x01") + "\x00" + strings.Join(sorted, ",")
}

func tensorShape(p *tir.Buffer) []int { return p.Shape }

func (e *emitter) where(w tir.Where, dt tir.DType, writes bool) string {
	cast := ctype(dt) + " *"
	if !writes {
		cast = "const " + cast
	}
	if w.Arena {
		return fmt.Sprintf("(%s)(void *)(arena + %d)", cast, w.Offset)
	}
	if e.m.IsState(w.IO, w.Output) {
		return fmt.Sprintf("(%s)%s", cast, e.stateBuf(w.IO, w.Output))
	}
	if w.Output {
		return fmt.Sprintf("(%s)out->%s", cast, e.outName[w.IO])
	}
	return fmt.Sprintf("(%s)in->%s", cast, e.inNames[w.IO])
}

func (e *emitter) entry(b *bytes.Buffer) error {
	arenaDecl := fmt.Sprintf("    uint8_t *arena = %s_arena;\n", e.prefix)
	if e.opts.ArenaExternal {
		arenaDecl = "    uint8_t *arena = (uint8_t *)arena_;\n"
	}
	extArg := func(first bool) string {
		if !e.opts.ArenaExternal {
			if first {
				return "void"
			}
			return ""
		}
		if first {
			return "void *arena_"
		}
		return ", void *arena_"
	}
	if e.m.IOInArena {
		// An external arena's NULL gives NULL, not NULL + offset (review:
		// undefined pointer arithmetic; the map functions checked it).
		ret := "    return arena + %d;\n"
		if e.opts.ArenaExternal {
			ret = "    return arena == NULL ? NULL : arena + %d;\n"
		}
		for i, in := range e.m.Inputs {
			if !e.m.IsState(i, false) {
				fmt.Fprintf(b, "void *%s(%s)\n{\n%s"+ret+"}\n\n", e.ioPtrName("input", i), extArg(true), arenaDecl, in.Offset)
			}
		}
		for i, o := range e.m.Outputs {
			if !e.m.IsState(i, true) {
				fmt.Fprintf(b, "void *%s(%s)\n{\n%s"+ret+"}\n\n", e.ioPtrName("output", i), extArg(true), arenaDecl, o.Offset)
			}
		}
		if e.usmp() {
			for _, side := range []struct {
				kind, fn string
				names    []string
				outputs  bool
				ios      []*tir.IO
			}{{"inputs", "map_inputs", e.inNames, false, e.m.Inputs}, {"outputs", "map_outputs", e.outName, true, e.m.Outputs}} {
				fmt.Fprintf(b, "struct %s_%s %s_%s(struct %s_workspace_pools *workspace_pools)\n{\n", e.prefix, side.kind, e.prefix, side.fn, e.prefix)
				fmt.Fprintf(b, "    struct %s_%s io;\n    uint8_t *arena = workspace_pools != NULL ? (uint8_t *)workspace_pools->global_workspace : NULL;\n", e.prefix, side.kind)
				fmt.Fprintf(b, "    memset(&io, 0, sizeof io);\n    if (arena != NULL) {\n")
				for i, n := range side.names {
					if !e.m.IsState(i, side.outputs) {
						fmt.Fprintf(b, "        io.%s = arena + %d;\n", n, side.ios[i].Offset)
					}
				}
				b.WriteString("    }\n    return io;\n}\n\n")
			}
			fmt.Fprintf(b, "int32_t %s_run(struct %s_workspace_pools *workspace_pools)\n{\n", e.prefix, e.prefix)
		} else {
			fmt.Fprintf(b, "int32_t %s_run(%s)\n{\n", e.prefix, extArg(true))
		}
	} else if e.usmp() {
		fmt.Fprintf(b, "int32_t %s_run(struct %s_inputs *in, struct %s_outputs *out, struct %s_workspace_pools *workspace_pools)\n{\n", e.prefix, e.prefix, e.prefix, e.prefix)
	} else {
		fmt.Fprintf(b, "int32_t %s_run(struct %s_inputs *in, struct %s_outputs *out%s)\n{\n", e.prefix, e.prefix, e.prefix, extArg(false))
	}
	if e.usmp() {
		b.WriteString("    void *arena_ = workspace_pools != NULL ? workspace_pools->global_workspace : NULL;\n")
	}
	b.WriteString(arenaDecl)
	if e.m.IOInArena && e.opts.ArenaExternal && e.m.ArenaBytes > 0 {
		fmt.Fprintf(b, "    if (arena_ == NULL || ((uintptr_t)arena_ & %du) != 0u) {\n        return -1;\n    }\n", arenaAlign-1)
	}
	if !e.m.IOInArena {
		var checks []string
		checks = append(checks, "in == NULL", "out == NULL")
		for i, n := range e.inNames {
			if !e.m.IsState(i, false) {
				checks = append(checks, "in->"+n+" == NULL")
			}
		}
		for i, n := range e.outName {
			if !e.m.IsState(i, true) {
				checks = append(checks, "out->"+n+" == NULL")
			}
		}
		// Misaligned pointers fault on the cores (float and word loads) and
		// are undefined in C: refused like missing ones.
		// The type's own alignment, which is 1 for every type on 8-bit AVR.
		for i, n := range e.inNames {
			if !e.m.IsState(i, false) {
				if t := e.m.Inputs[i].DType; t.Size() > 1 {
					checks = append(checks, fmt.Sprintf("((uintptr_t)in->%s & (%s_ALIGNOF(%s) - 1u)) != 0u", n, e.PREFIX, ctype(t)))
				}
			}
		}
		for i, n := range e.outName {
			if !e.m.IsState(i, true) {
				if t := e.m.Outputs[i].DType; t.Size() > 1 {
					checks = append(checks, fmt.Sprintf("((uintptr_t)out->%s & (%s_ALIGNOF(%s) - 1u)) != 0u", n, e.PREFIX, ctype(t)))
				}
			}
		}
		if e.opts.ArenaExternal && e.m.ArenaBytes > 0 {
			checks = append(checks, "arena_ == NULL", fmt.Sprintf("((uintptr_t)arena_ & %du) != 0u", arenaAlign-1))
		}
		fmt.Fprintf(b, "    if (%s) {\n        return -1;\n    }\n", strings.Join(checks, " || "))
	}
	used := false
	if e.stateNeedsInit() {
		fmt.Fprintf(b, "    if (!%s_state_set) {\n        %s_reset();\n    }\n", e.prefix, e.prefix)
	}
	if e.m.IOInArena {
		// The arena's other tensors overwrite the state's slot: it comes in
		// from its static buffer each time.
		for _, st := range e.m.States {
			in := e.m.Inputs[st.In]
			fmt.Fprintf(b, "    memcpy(arena + %d, %s, %d);\n", in.Offset, e.stateBuf(st.In, false), in.Bytes)
			used = true
		}
	}
	if len(e.m.Calls) > 0 {
		fmt.Fprintf(b, "    %s_LAYER_HOOK(0);\n", e.PREFIX)
	}
	for k, c := range e.m.Calls {
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			p := c.Func.Params[i]
			args[i] = e.where(a, p.DType, p.Writes)
			used = used || a.Arena
		}
		fn := c.Func.Name
		if first, ok := e.same[fn]; ok {
			fn = first
		}
		if s, ok := e.shared[fn]; ok {
			fn = s.fn
			args = append(append([]string(nil), s.consts...), args...)
		}
		fmt.Fprintf(b, "    %s_%s(%s);\n", e.prefix, fn, strings.Join(args, ", "))
		fmt.Fprintf(b, "    %s_LAYER_HOOK(%d);\n", e.PREFIX, k+1)
	}
	for i, o := range e.m.Outputs {
		if o.CopyFrom != nil && !e.m.IsState(i, true) {
			fmt.Fprintf(b, "    memcpy(out->%s, %s, %d);\n", e.outName[i], e.where(*o.CopyFrom, o.DType, false), o.Bytes)
			used = used || o.CopyFrom.Arena
		}
	}
	// The states take their next values last: an output above may be a
	// copy of a state's value at the start.
	for _, st := range e.m.States {
		o := e.m.Outputs[st.Out]
		from := tir.Where{IO: st.Out, Output: true}
		switch {
		case o.CopyFrom != nil:
			from = *o.CopyFrom
		case e.m.IOInArena:
			from = tir.Where{Arena: true, Offset: o.Offset}
		}
		used = used || from.Arena
		fmt.Fprintf(b, "    memmove(%s, %s, %d);\n", e.stateBuf(st.In, false), e.where(from, o.DType, false), o.Bytes)
	}
	if !used {
		b.WriteString("    (void)arena;\n")
	}
	b.WriteString("    return 0;\n}\n")
	return nil
}

// stateBuf is the static buffer of the state whose input (output=false)
// or output is module I/O i: the state itself, or, for its next value with
// separate I/O, the buffer the kernels write it to before run copies it
// over the state.
func (e *emitter) stateBuf(i int, output bool) string {
	for k, st := range e.m.States {
		if !output && st.In == i {
			return fmt.Sprintf("%s_state%d", e.prefix, k)
		}
		if output && st.Out == i {
			return fmt.Sprintf("%s_state%d_next", e.prefix, k)
		}
	}
	return "" // not a state (callers check IsState)
}

// stateBytes is the states' size, one copy each.
func (e *emitter) stateBytes() int {
	n := 0
	for _, st := range e.m.States {
		n += e.m.Inputs[st.In].Bytes
	}
	return n
}

// states prints the states' static buffers (initialized, so the first run
// needs no reset), their initial values where not zeros, and reset.
func (e *emitter) states(b *bytes.Buffer) {
	if len(e.m.States) == 0 {
		return
	}
	var reset strings.Builder
	for _, st := range e.m.States {
		in := e.m.Inputs[st.In]
		name := e.stateBuf(st.In, false)
		n := in.Bytes / in.DType.Size()
		fmt.Fprintf(b, "/* state %q (next value %q): %s %v */\n", commentSafe(in.Name), commentSafe(e.m.Outputs[st.Out].Name), in.DType, in.Shape)
		if st.Init != nil && !allZero(st.Init) {
			init := name + "_init"
			writeConst(b, &tir.Buffer{Name: init, DType: in.DType, Shape: in.Shape, Data: st.Init}, init, e.PREFIX)
			fmt.Fprintf(b, "static %s %s[%d] %s_ALIGNED;\n", ctype(in.DType), name, n, e.PREFIX)
			fmt.Fprintf(&reset, "    memcpy(%s, %s, sizeof %s);\n", name, init, name)
		} else {
			fmt.Fprintf(b, "static %s %s[%d] %s_ALIGNED;\n", ctype(in.DType), name, n, e.PREFIX)
			fmt.Fprintf(&reset, "    memset(%s, 0, sizeof %s);\n", name, name)
		}
		if nextBuffered(e.m, st) {
			fmt.Fprintf(b, "static %s %s[%d] %s_ALIGNED;\n", ctype(in.DType), e.stateBuf(st.Out, true), n, e.PREFIX)
		}
	}
	// A non-zero initial value is set by reset, which run calls first
	// when it has not run yet: the application may call run at once.
	if e.stateNeedsInit() {
		fmt.Fprintf(b, "static uint8_t %s_state_set;\n", e.prefix)
		fmt.Fprintf(&reset, "    %s_state_set = 1;\n", e.prefix)
	}
	fmt.Fprintf(b, "\nvoid %s_reset(void)\n{\n%s}\n\n", e.prefix, reset.String())
}

// stateNeedsInit reports whether a state starts from a non-zero value.
func (e *emitter) stateNeedsInit() bool {
	for _, st := range e.m.States {
		if st.Init != nil && !allZero(st.Init) {
			return true
		}
	}
	return false
}

func allZero(d *graph.Data) bool {
	for _, v := range d.F {
		if v != 0 {
			return false
		}
	}
	for _, v := range d.I {
		if v != 0 {
			return false
		}
	}
	return true
}

// StateRAM is the static RAM the states take: each state's buffer, and with
// separate I/O the buffer its next value is written to.
func StateRAM(m *tir.Module) int {
	n := 0
	for _, st := range m.States {
		n += m.Inputs[st.In].Bytes
		if nextBuffered(m, st) {
			n += m.Outputs[st.Out].Bytes
		}
	}
	return n
}

// nextBuffered reports whether the kernels write st's next value to a
// static buffer of its own (separate I/O), which run then copies over the
// state; with I/O in the arena it lives in the arena.
func nextBuffered(m *tir.Module, st *tir.StateIO) bool {
	return !m.IOInArena && m.Outputs[st.Out].CopyFrom == nil
}

// writeHelper writes helper h's C after the helpers it needs, each once
// (printed records what is written).
func writeHelper(w io.StringWriter, h string, printed map[string]bool) {
	if printed[h] {
		return
	}
	printed[h] = true
	for _, d := range helperText[h].deps {
		writeHelper(w, d, printed)
	}
	_, _ = w.WriteString(helperCode(h))
	_, _ = w.WriteString("\n\n")
}

// cFloat prints a float32 as a C floating constant (without its f suffix):
// the shortest decimal that reads back as the same float32, with a decimal
// point or exponent.
func cFloat(v float32) string {
	t := strconv.FormatFloat(float64(v), 'g', -1, 32)
	if !strings.ContainsAny(t, ".eEn") {
		t += ".0"
	}
	return t
}
