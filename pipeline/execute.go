package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/emitc"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/runner"
)

// Execution is a compiled model built for a board and run on vectors.
type Execution struct {
	Firmware *runner.Firmware
	Result   *runner.Result
	// Outputs[v][i] is output i of vector v as the firmware produced it;
	// Reference[v][i] is what the reference interpreter computes.
	Outputs   [][]*graph.Data
	Reference [][]*graph.Data
	// Match[v] says whether vector v agrees with the reference: bit-exact for
	// integers; floats by CompareModel (1e-5 of the output's scale), or by
	// Compare (1e-5 of each element) with Options.StrictFloat. MaxAbsDiff is
	// over all vectors.
	Match      []bool
	MaxAbsDiff float64
	// Layers is the per-layer profile of the first vector (ExecuteLayers only).
	Layers []LayerCount
}

// LayerCount is what one layer (one kernel call of the entry function) took.
type LayerCount struct {
	Kernel string // the kernel's C name, without the prefix
	Op     string
	Node   string // the graph node(s) it implements
	MACs   int64  // of the graph node, 0 when the kernel is not one node's
	// Instructions is the layer's count without the hook's overhead, -1 when
	// the board cannot count.
	Instructions int64
}

// Instructions is the instruction count of the first vector (every vector of
// a model costs the same: the generated code has no data-dependent branches
// beyond saturation), or -1 when the board cannot count.
func (x *Execution) Instructions() int64 {
	if len(x.Result.Vectors) == 0 {
		return -1
	}
	return x.Result.Vectors[0].Instructions
}

// StackBytes is the most stack any vector's run took (the high-water mark of
// the painted stack below the harness's frame), or -1 where the platform
// cannot tell (hosted builds).
func (x *Execution) StackBytes() int64 {
	n := int64(-1)
	for _, v := range x.Result.Vectors {
		n = max(n, v.Stack)
	}
	return n
}

// AllMatch reports whether every vector matched the reference.
func (x *Execution) AllMatch() bool {
	for _, m := range x.Match {
		if !m {
			return false
		}
	}
	return true
}

// Execute writes s's sources into dir/model, builds the firmware for the
// board with the vectors compiled in, runs it and compares every output with
// the reference interpreter.
func (s *State) Execute(vectors []map[string]*graph.Data, dir string, timeout time.Duration) (*Execution, error) {
	return s.execute(vectors, dir, timeout, false)
}

// ExecuteLayers is Execute with the firmware profiled per layer: the model's
// layer hook reads the counter between layers (Execution.Layers). The hooks
// add a few instructions per layer to the whole-run count.
func (s *State) ExecuteLayers(vectors []map[string]*graph.Data, dir string, timeout time.Duration) (*Execution, error) {
	return s.execute(vectors, dir, timeout, true)
}

func (s *State) execute(vectors []map[string]*graph.Data, dir string, timeout time.Duration, layers bool) (*Execution, error) {
	b := s.Opt.Board
	if b == nil {
		return nil, fmt.Errorf("no board")
	}
	if !b.Emulated() {
		return nil, fmt.Errorf("board %s has no emulator: compile and size it, or run it on the hardware", b.Name)
	}
	if err := runner.CheckTools(b); err != nil {
		return nil, err
	}
	src := filepath.Join(dir, "model")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	pruneStaleModel(src, s.Files)
	if err := WriteFiles(src, s.Files); err != nil {
		return nil, err
	}
	reset := s.Opt.ResetState && s.Graph.StateBytes() > 0
	m := runner.Model{Prefix: s.Opt.Prefix, ArenaBytes: s.Report.ArenaBytes, ExternalArena: s.Opt.ArenaExternal, WorkspacePools: s.Opt.ArenaExternal && emitc.MicroTVM(s.Opt.Prefix), IOInArena: s.Opt.IOInArena, IncludeDirs: []string{src}, Reset: reset}
	if s.Module != nil {
		m.Layers = len(s.Module.Calls)
	}
	for name := range s.Files {
		if filepath.Ext(name) == ".c" {
			m.Sources = append(m.Sources, filepath.Join(src, name))
		}
	}
	sort.Strings(m.Sources)
	for _, io := range s.Report.Inputs {
		m.Inputs = append(m.Inputs, runner.IO{Name: io.Name, CName: io.CName, Size: io.Size})
	}
	for _, io := range s.Report.Outputs {
		m.Outputs = append(m.Outputs, runner.IO{Name: io.Name, CName: io.CName, Size: io.Size})
	}
	raw := make([][][]byte, len(vectors))
	for v, vec := range vectors {
		for _, name := range s.Graph.UserInputs() {
			d, ok := vec[name]
			if !ok {
				return nil, fmt.Errorf("vector %d: no value for input %q", v, name)
			}
			raw[v] = append(raw[v], npy.Bytes(d))
		}
	}
	var clangFlags []string
	if s.Opt.Compiler == runner.CompilerClang && s.ClangNoVectorize() {
		clangFlags = []string{"-mllvm", "-vectorize-loops=false"}
	}
	fw, err := runner.BuildWith(b, m, raw, filepath.Join(dir, "build"), runner.Options{CFlags: s.Opt.CFlags, ClangCFlags: clangFlags, Compiler: s.Opt.Compiler, Layers: layers,
		Layout: crt.Layout{WeightsSection: s.Opt.WeightsSection}})
	if err != nil {
		return nil, err
	}
	res, err := runner.Run(fw, timeout)
	if err != nil {
		return nil, err
	}
	x := &Execution{Firmware: fw, Result: res}
	if layers && m.Layers > 0 && len(res.Vectors) > 0 {
		x.Layers = s.layerCounts(res.Vectors[0].Layers, res.LayerOverhead)
	}
	// The firmware runs the vectors one after another, its states (if any)
	// carried from each to the next: so does the reference. With
	// Options.ResetState each vector starts from the initial state in both.
	sess := interp.NewSession(s.Graph)
	for v, vec := range vectors {
		if reset && v > 0 {
			sess = interp.NewSession(s.Graph)
		}
		ref, err := sess.Run(vec)
		if err != nil {
			return nil, fmt.Errorf("reference interpreter: %w", err)
		}
		var outs, refs []*graph.Data
		match := true
		for i, name := range s.Graph.UserOutputs() {
			t := s.Graph.Tensors[name]
			got, err := npy.FromBytes(res.Vectors[v].Outputs[i], t.DType, t.Shape)
			if err != nil {
				return nil, fmt.Errorf("vector %d output %q: %w", v, name, err)
			}
			compare := CompareModel
			if s.Opt.StrictFloat {
				compare = Compare
			}
			ok, diff := compare(got, ref[name])
			match = match && ok
			x.MaxAbsDiff = math.Max(x.MaxAbsDiff, diff)
			outs, refs = append(outs, got), append(refs, ref[name])
		}
		x.Outputs, x.Reference, x.Match = append(x.Outputs, outs), append(x.Reference, refs), append(x.Match, match)
	}
	return x, nil
}

// Compare checks got against want: integers must be equal, floats within
// 1e-5 relative (with a 1e-6 absolute floor near zero). It returns the
// largest absolute difference. It is the rule for one operator's outputs
// (the ONNX backend tests); a whole model's are CompareModel's.
func Compare(got, want *graph.Data) (bool, float64) {
	return compare(got, want, 0)
}

// CompareModel is Compare for a whole model's outputs: a float may differ
// by 1e-5 of the larger of its reference and the output tensor's largest
// magnitude (the 1e-6 floor kept). Every layer's rounding reaches the
// outputs, summed in another order by the C than by the interpreter or by
// TFLite, so an output near zero beside outputs near 1 differs by about
// 1e-6, which is 1e-5 of the tensor but far more than 1e-5 of itself (IC's
// and AD's float models: TFLite's own vectors, the interpreter and the C
// disagree with each other at that level).
func CompareModel(got, want *graph.Data) (bool, float64) {
	scale := 0.0
	if got.DType == want.DType && !want.DType.IsInt() {
		for i := 0; i < want.Len(); i++ {
			if b := math.Abs(want.Float(i)); !math.IsInf(b, 0) && !math.IsNaN(b) {
				scale = math.Max(scale, b)
			}
		}
	}
	return compare(got, want, scale)
}

// compare is Compare with the float tolerance 1e-5·max(|want|, scale) + 1e-6.
func compare(got, want *graph.Data, scale float64) (bool, float64) {
	if got.DType != want.DType || got.Len() != want.Len() {
		return false, math.Inf(1)
	}
	ok, maxd := true, 0.0
	for i := 0; i < got.Len(); i++ {
		a, b := got.Float(i), want.Float(i)
		d := math.Abs(a - b)
		switch {
		case a == b || math.IsNaN(a) && math.IsNaN(b):
			d = 0 // equal infinities, or NaN where the reference has NaN
		case math.IsNaN(a) || math.IsNaN(b):
			d = math.Inf(1)
		}
		maxd = math.Max(maxd, d)
		if got.DType.IsInt() {
			ok = ok && d == 0
		} else {
			ok = ok && (d == 0 || !math.IsInf(d, 0) && d <= 1e-5*math.Max(math.Abs(b), scale)+1e-6)
		}
	}
	return ok, maxd
}

// RandomInputs draws n input vectors: integers uniform over their dtype's
// range, floats in the model input's quantized range if known, else [-1, 1].
func RandomInputs(g *graph.Graph, n int, seed uint64) []map[string]*graph.Data {
	r := rand.New(rand.NewPCG(seed, 0x6d6375))
	out := make([]map[string]*graph.Data, n)
	for i := range out {
		out[i] = map[string]*graph.Data{}
		for _, name := range g.UserInputs() {
			t := g.Tensors[name]
			d := graph.NewData(t.DType, t.Shape)
			if t.DType == graph.Float32 {
				for j := range d.F {
					d.F[j] = float32(r.Float64()*2 - 1)
				}
			} else {
				lo, hi := t.DType.Range()
				if hi-lo > 1<<16 || hi-lo < 0 {
					lo, hi = -1000, 1000
				}
				for j := range d.I {
					d.I[j] = lo + r.Int64N(hi-lo+1)
				}
			}
			out[i][name] = d
		}
	}
	return out
}

// ExtremeInputs are the corner cases: every input all at its minimum, all at
// its maximum, and alternating between the two.
func ExtremeInputs(g *graph.Graph) []map[string]*graph.Data {
	out := make([]map[string]*graph.Data, 3)
	for k := range out {
		out[k] = map[string]*graph.Data{}
		for _, name := range g.UserInputs() {
			t := g.Tensors[name]
			d := graph.NewData(t.DType, t.Shape)
			lo, hi := -1.0, 1.0
			if t.DType.IsInt() {
				l, h := t.DType.Range()
				lo, hi = float64(max(l, -1000)), float64(min(h, 1000))
			}
			for j := 0; j < d.Len(); j++ {
				v := lo
				if k == 1 || k == 2 && j%2 == 1 {
					v = hi
				}
				if d.DType == graph.Float32 {
					d.F[j] = float32(v)
				} else {
					d.I[j] = int64(v)
				}
			}
			out[k][name] = d
		}
	}
	return out
}

// LoadBoard resolves a board name against the built-in catalog plus an
// optional user file.
func LoadBoard(name, file string) (*boards.Board, error) {
	cat, err := boards.Load(file)
	if err != nil {
		return nil, err
	}
	return cat.Get(name)
}

// layerCounts names the per-layer counts of one vector and takes the hook's
// overhead off each.
func (s *State) layerCounts(raw []int64, overhead int64) []LayerCount {
	nodes := map[string]*graph.Node{}
	for _, n := range s.Graph.Nodes {
		nodes[n.Name] = n
	}
	out := make([]LayerCount, len(s.Module.Calls))
	for i, c := range s.Module.Calls {
		l := LayerCount{Kernel: c.Func.Name, Op: c.Func.Op, Node: c.Func.Node, Instructions: -1}
		// A kernel fused from several nodes is named "A + B" (a float
		// convolution and its activation): its MACs are theirs together
		// (review: bench --layers showed none for fused float layers).
		names := strings.Split(c.Func.Node, " + ")
		for _, name := range names {
			if n := nodes[name]; n != nil {
				l.MACs += graph.MACs(s.Graph, n)
			}
		}
		if n := nodes[names[0]]; n != nil {
			// The MACs the kernel does: its dead output channels (all-zero
			// weights) are stored as constants, not computed.
			if d, y := c.Func.DeadChannels, s.Graph.Out(n, 0); d > 0 && y != nil && len(y.Shape) > 0 {
				cout := y.Shape[len(y.Shape)-1]
				l.MACs = l.MACs * int64(max(cout-d, 0)) / int64(max(cout, 1))
			}
		}
		if i < len(raw) && raw[i] >= 0 && overhead >= 0 {
			l.Instructions = max(raw[i]-overhead, 0)
		}
		out[i] = l
	}
	return out
}

// modelMarker marks a model directory mcugen wrote (a kept build's model/).
const modelMarker = ".mcugen-model"

// pruneStaleModel removes the C files an earlier model left in a model
// directory mcugen wrote before (run --keep DIR reused for another model),
// and marks the directory as mcugen's. A directory without the mark may be
// the user's: nothing in it is removed.
func pruneStaleModel(src string, files map[string][]byte) {
	mark := filepath.Join(src, modelMarker)
	if _, err := os.Stat(mark); err == nil {
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			n := e.Name()
			if _, ok := files[n]; !ok && !e.IsDir() && (filepath.Ext(n) == ".c" || filepath.Ext(n) == ".h") {
				os.Remove(filepath.Join(src, n))
			}
		}
	} else if entries, _ := os.ReadDir(src); len(entries) > 0 {
		return
	}
	os.WriteFile(mark, []byte("mcugen writes this directory: files of an earlier model in it are removed\n"), 0o644)
}
