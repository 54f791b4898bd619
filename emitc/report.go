package emitc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// IOInfo describes one graph input or output of the generated API.
type IOInfo struct {
	Name  string `json:"name"`  // the tensor's name in the model
	CName string `json:"cname"` // its member in struct <prefix>_inputs/_outputs
	Size  int    `json:"size"`  // bytes
	DType string `json:"dtype,omitempty"`
	Shape []int  `json:"shape,omitempty"`
	// Scale and ZeroPoint of a quantized tensor: real = scale·(q − zero_point).
	Scale     *float32 `json:"scale,omitempty"`
	ZeroPoint *int32   `json:"zero_point,omitempty"`
}

func ioInfo(t *tir.IO, cname string) IOInfo {
	r := IOInfo{Name: t.Name, CName: cname, Size: t.Bytes, DType: t.DType.String(), Shape: t.Shape}
	if t.Quantized {
		s, z := t.Scale, t.ZeroPoint
		r.Scale, r.ZeroPoint = &s, &z
	}
	return r
}

// IONames are the C member names of m's inputs and outputs, as Emit prints them
// with any prefix but microTVM's (MicroTVM).
func IONames(m *tir.Module) (in, out []string) {
	names := newNamer()
	// <PREFIX>_ARENA_SIZE, <PREFIX>_STACK_SIZE and, with states,
	// <PREFIX>_STATE_SIZE are the header's own.
	names.used["arena"], names.used["stack"] = true, true
	if len(m.States) > 0 {
		names.used["state"] = true
	}
	var bases []string
	for _, t := range m.Inputs {
		bases = append(bases, memberSafe(memberIdent(t.Name)))
	}
	for _, t := range m.Outputs {
		bases = append(bases, memberSafe(memberIdent(t.Name)))
	}
	all := uniqueNames(bases, func(s string) string { return s }, names.used)
	return all[:len(m.Inputs)], all[len(m.Inputs):]
}

// memberIdent is Ident lower-cased for a member: the generated code's own
// names (in, out, arena, main) need no trailing _ there, as it only reads
// in->NAME and out->NAME (API journey: an output named out became out_,
// its macros OUT__SIZE, which the README's rule does not give); one whose
// size macro is the header's own (arena) gets _1 from uniqueNames instead.
func memberIdent(name string) string {
	return ownMember(Ident(strings.ToLower(name))) // lower-cased first: Int is int, a keyword
}

// ownMember is identifier id as a member: without the _ that Ident gives
// the generated code's own names.
func ownMember(id string) string {
	if base, ok := strings.CutSuffix(id, "_"); ok && ownNames[base] {
		return base
	}
	return id
}

// memberSafe makes a member name one that C does not reserve and the
// project templates take: no leading _ and no __ (an input named __x was
// the member __x, and _ or - broke --format mlf: microTVM journey finding).
func memberSafe(s string) string {
	t := strings.TrimLeft(s, "_")
	for strings.Contains(t, "__") {
		t = strings.ReplaceAll(t, "__", "_")
	}
	if t == s {
		return s
	}
	return ownMember(Ident(t)) // "" is t, a keyword gets its _ (_int: int_), _out is out, case kept
}

// uniqueNames gives each base a name whose key (the macro it names, or the
// name itself) no other takes: the first of equal bases keeps it, a later
// one gets _1, _2, ... skipping every key used and every base's own, so a
// renamed tensor never takes another's name (Input, input and input_1
// became Input, input_1 and input_1_1: code that set input_1 fed the
// second tensor; microTVM journey finding).
func uniqueNames(bases []string, key func(string) string, used map[string]bool) []string {
	own := map[string]bool{}
	for _, b := range bases {
		own[key(b)] = true
	}
	out := make([]string, len(bases))
	for i, b := range bases {
		name := b
		if used[key(name)] {
			sep := "_"
			if strings.HasSuffix(b, "_") {
				sep = "" // int_ gives int_1, not int__1 (C++ reserves __)
			}
			for j := 1; ; j++ {
				name = fmt.Sprintf("%s%s%d", b, sep, j)
				if !used[key(name)] && !own[key(name)] {
					break
				}
			}
		}
		used[key(name)] = true
		out[i] = name
	}
	return out
}

// ioNames are the C member names of m's inputs and outputs with opts: each
// also names its <PREFIX>_<NAME>_SIZE macro, upper-cased.
func ioNames(m *tir.Module, opts Options) (in, out []string) {
	if MicroTVM(opts.Prefix) {
		return MicroTVMIONames(m, opts.Format)
	}
	return IONames(m)
}

// MicroTVMIONames are the member names microTVM (TVM v0.18) gave m's inputs
// and outputs in struct tvmgen_<module>_inputs/_outputs, from a model of
// format "tflite" or "onnx" (graph.Graph.Format). TVM's model_library_format.py
// names an input after its Relay parameter, the model's tensor name; an
// output after the main function's output_tensor_names, which only the TFLite
// frontend sets (to the tensor names), else "output" for a model with one
// output and "output0", "output1", ... for several. interface_c.cc's EmitStruct
// then sanitizes each name (microTVMSanitize), keeping its case, and names its
// size macro TVMGEN_<MODULE>_<NAME>_SIZE, upper-cased.
//
// Where TVM's header would not compile mcugen differs: a name that is not a C
// identifier is made one (microTVMSanitize), and names whose macros would
// collide (Input and input, or one named workspace) get _1, _2, ... in order.
func MicroTVMIONames(m *tir.Module, format string) (in, out []string) {
	// Macro names are what must differ: compared upper-cased, with the
	// header's own (<PREFIX>_ARENA_SIZE, _STACK_SIZE, _WORKSPACE_SIZE, USMP's
	// _GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE and with states _STATE_SIZE)
	// taken.
	used := map[string]bool{"ARENA": true, "STACK": true, "WORKSPACE": true, "GLOBAL_WORKSPACE_WORKSPACE_POOL": true}
	if len(m.States) > 0 {
		used["STATE"] = true
	}
	var bases []string
	for _, t := range m.Inputs {
		bases = append(bases, microTVMMember(t.Name))
	}
	for i, t := range m.Outputs {
		name := t.Name
		switch {
		case format == "tflite":
		case len(m.Outputs) == 1:
			name = "output"
		default:
			name = fmt.Sprintf("output%d", i)
		}
		bases = append(bases, microTVMMember(name))
	}
	all := uniqueNames(bases, strings.ToUpper, used)
	return all[:len(m.Inputs)], all[len(m.Inputs):]
}

// microTVMMember is TVM's sanitized name, made one C does not reserve
// (memberSafe) where it starts with __ or _ and a capital, which C
// reserves for any use; other names stay TVM's, a__b and _x included.
func microTVMMember(name string) string {
	s := microTVMSanitize(name)
	if strings.HasPrefix(s, "__") || len(s) > 1 && s[0] == '_' && s[1] >= 'A' && s[1] <= 'Z' {
		return memberSafe(s)
	}
	return s
}

// ioInfos lists m's inputs and outputs with their C member names and sizes.
func ioInfos(m *tir.Module, opts Options) (ins, outs []IOInfo) {
	in, out := ioNames(m, opts)
	for i, t := range m.Inputs {
		if !m.IsState(i, false) {
			ins = append(ins, ioInfo(t, in[i]))
		}
	}
	for i, t := range m.Outputs {
		if !m.IsState(i, true) {
			outs = append(outs, ioInfo(t, out[i]))
		}
	}
	return ins, outs
}

// ReportFor describes what Emit produced from m with opts: target, arena and
// weight bytes (each distinct constant array once), file names, the entry
// function, every kernel with its node and schedule knobs, and the API's
// inputs and outputs.
func ReportFor(m *tir.Module, files map[string][]byte, opts Options) *Report {
	p := prefixOf(opts, m)
	rep := &Report{Target: m.Target, ArenaBytes: m.ArenaBytes, Entry: p + "_run", Files: []string{}, WeightsBytes: int(m.ConstBytes())}
	for name := range files {
		rep.Files = append(rep.Files, name)
	}
	sort.Strings(rep.Files)
	for _, f := range m.Funcs {
		rep.Kernels = append(rep.Kernels, Kernel{Name: p + "_" + f.Name, Node: f.Node, Op: f.Op, Knobs: f.Knobs, Scratch: f.ScratchBytes(), DeadChannels: f.DeadChannels})
		rep.DeadChannels += f.DeadChannels
	}
	rep.ScratchBytes, _ = m.ScratchBytes()
	rep.Inputs, rep.Outputs = ioInfos(m, opts)
	for k, st := range m.States {
		in := m.Inputs[st.In]
		rep.States = append(rep.States, IOInfo{Name: in.Name, CName: fmt.Sprintf("%s_state%d", p, k), Size: in.Bytes})
	}
	rep.StateBytes = StateRAM(m)
	return rep
}
