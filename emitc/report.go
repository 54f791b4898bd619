package emitc

import (
	"sort"
	"strings"

	"github.com/mcugen/mcugen/tir"
)

// IOInfo describes one graph input or output of the generated API.
type IOInfo struct {
	Name  string `json:"name"`  // the tensor's name in the model
	CName string `json:"cname"` // its member in struct <prefix>_inputs/_outputs
	Size  int    `json:"size"`  // bytes
}

// IONames are the C member names of m's inputs and outputs, as Emit prints them.
func IONames(m *tir.Module) (in, out []string) {
	names := newNamer()
	for _, t := range m.Inputs {
		in = append(in, names.unique(strings.ToLower(Ident(t.Name))))
	}
	for _, t := range m.Outputs {
		out = append(out, names.unique(strings.ToLower(Ident(t.Name))))
	}
	return in, out
}

// ReportFor summarizes what Emit produced from m with opts.
func ReportFor(m *tir.Module, files map[string][]byte, opts Options) *Report {
	prefix := prefixOf(opts, m)
	rep := &Report{Target: m.Target, ArenaBytes: m.ArenaBytes, Entry: prefix + "_run"}
	for _, c := range m.Consts {
		rep.WeightsBytes += c.Len() * c.DType.Size()
	}
	for name := range files {
		rep.Files = append(rep.Files, name)
	}
	sort.Strings(rep.Files)
	for _, f := range m.Funcs {
		rep.Kernels = append(rep.Kernels, Kernel{Name: prefix + "_" + f.Name, Node: f.Node, Op: f.Op, Knobs: f.Knobs})
	}
	in, out := IONames(m)
	for i, t := range m.Inputs {
		rep.Inputs = append(rep.Inputs, IOInfo{Name: t.Name, CName: in[i], Size: t.Bytes})
	}
	for i, t := range m.Outputs {
		rep.Outputs = append(rep.Outputs, IOInfo{Name: t.Name, CName: out[i], Size: t.Bytes})
	}
	return rep
}
