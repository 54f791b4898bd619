// Package measure is the measuring side of mcugen's autotuner: it finds the
// distinct kernels of a model, builds each candidate setting of a kernel's
// knobs into a small firmware that runs just that kernel (a one-node graph
// compiled through the pipeline), runs it under the board's QEMU with an
// exact instruction count, checks the outputs bit-exactly against the
// reference interpreter, and drives package tune's search over many
// candidates in parallel, writing records as kernels finish. It also writes
// Bazel test targets so the same measurements can run remotely.
package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// Kernel is one distinct kernel of a model to tune.
type Kernel struct {
	Signature string
	Op        string // the tir op (PrimFunc.Op)
	Func      string // kernel name in the one-node build (knob override key)
	Nodes     []string
	Defaults  tune.Knobs // the schedule's knobs at their defaults
	Space     tune.Space
	Graph     *graph.Graph // the one-node graph
	// KnobTarget is the target whose knob declarations give its space
	// (PrimFunc.KnobTarget: "dsp" for a Cortex-M55 layer the dsp schedule
	// runs); "" for the build's.
	KnobTarget string
}

// knobTarget is the target whose value sets k's knobs take in a build for
// target.
func (k *Kernel) knobTarget(target string) string {
	if k.KnobTarget != "" {
		return k.KnobTarget
	}
	return target
}

// MeasureBoard picks the board to measure on: b itself when it runs under
// QEMU (whose -icount or plugin gives the exact instruction counts tune
// needs), else an emulated catalog board with the same core, else one whose
// core executes b's instruction set unchanged (HostCores), set to build b's
// code. The host runs natively and counts nothing, and it has no core a QEMU
// board could share: it is refused, as is a board no QEMU board of the
// catalog can run.
func MeasureBoard(b *boards.Board, cat *boards.Catalog) (*boards.Board, error) {
	m, _, err := MeasureBoardOn(b, cat)
	return m, err
}

// HostCores lists, for cores no QEMU machine of the catalog models, the
// cores whose machines run their code unchanged (boards.HostCores). The
// instructions executed, and so the counts, are the board's own; only
// faults differ (ARMv7-M allows unaligned loads that ARMv6-M traps), and
// the code mcugen emits makes none.
var HostCores = boards.HostCores

// MeasureBoardOn is MeasureBoard, and also names the core of the QEMU
// machine that runs the build (b.CPU itself but for a HostCores twin). A
// QEMU board of b's own core is used as it is where its flags and
// features are b's, and as a copy built with b's (Running) where they
// differ: a user's board without the FPU counts its soft-float code, not
// the QEMU board's hard-float build (a user journey: 23,392 instructions
// reported for 437,747). Among QEMU boards of b's core it takes the one
// whose regions hold most of b's roles at b's sizes, then the most RAM,
// then the catalog's board over one of the user's.
// A twin of another core is a copy of its QEMU board (memory map, counter,
// UART, machine) with b's core, flags and features, so that what runs is
// what b's compiler makes; among such boards it prefers one with at least
// b's code and data memory (the micro:bit's 16 KiB cannot hold what a
// Pico's 264 KiB can), then the order of HostCores, then the catalog's.
func MeasureBoardOn(b *boards.Board, cat *boards.Catalog) (*boards.Board, string, error) {
	if b.QEMU.Binary != "" {
		return b, b.CPU, nil
	}
	if cat != nil && b.CPU != "" {
		// The QEMU board of the core whose regions hold most of b's roles
		// at b's sizes, then the one with the most RAM, then the first by
		// name (user-journey finding: a small board of the user's own file,
		// first by name, was taken over mps2-an500, and the model did not
		// fit it).
		var same *boards.Board
		bestFit, bestRAM := -1, uint64(0)
		for _, o := range cat.Boards() {
			if boards.CoreOf(o.CPU) != boards.CoreOf(b.CPU) || o.QEMU.Binary == "" {
				continue
			}
			fit := 0
			for _, role := range []string{boards.HoldsCode, boards.HoldsData, boards.HoldsArena, boards.HoldsWeights} {
				if holds(o, b, role) {
					fit++
				}
			}
			ram := uint64(0)
			if r := o.RegionFor(boards.HoldsData); r != nil {
				ram = r.Length
			}
			if fit > bestFit || fit == bestFit && (ram > bestRAM || ram == bestRAM && builtinOver(o, same)) {
				same, bestFit, bestRAM = o, fit, ram
			}
		}
		if o := same; o != nil {
			// The same core, built with b's own flags and features
			// where they differ (a board without the FPU: soft-float
			// code, other instructions than the QEMU board's build).
			// And with its stack, where that is smaller or larger: a
			// kernel must fit the board's (a user journey: Winograd
			// chosen on a board of 8 KiB stack, measured in 16).
			if !slices.Equal(o.GCCFlags(), b.GCCFlags()) || !slices.Equal(o.Features, b.Features) ||
				b.StackBytes > 0 && b.StackBytes != o.StackBytes {
				return o.Running(b), o.CPU, nil
			}
			return o, o.CPU, nil
		}
		var best *boards.Board
		bestFits, bestRank := false, 0
		for _, o := range cat.Boards() {
			rank := slices.Index(HostCores[boards.CoreOf(b.CPU)], boards.CoreOf(o.CPU))
			if rank < 0 || o.QEMU.Binary == "" || o.Toolchain != b.Toolchain {
				continue
			}
			fits := holds(o, b, boards.HoldsCode) && holds(o, b, boards.HoldsData)
			if best == nil || fits && !bestFits || fits == bestFits && (rank < bestRank || rank == bestRank && builtinOver(o, best)) {
				best, bestFits, bestRank = o, fits, rank
			}
		}
		if best != nil {
			return best.Running(b), best.CPU, nil
		}
	}
	if b.CPU == "" {
		return nil, "", fmt.Errorf("board %s has no instruction counter: tune measures under QEMU; pick a board with an emulator (mcugen boards), or one whose core a QEMU board shares", b.Name)
	}
	return nil, "", fmt.Errorf("board %s (%s) has no emulator and no QEMU board in the catalog has its core or runs its code: tune measures under QEMU; pick a board with an emulator (mcugen boards), or one whose core a QEMU board shares", b.Name, b.CPU)
}

// builtinOver reports whether o is a catalog board and cur one of the
// user's: between QEMU boards equal otherwise, the catalog's is the twin
// (a user journey: a board of the user's own file that inherits
// mps2-an505 with another memory map, first by name, ran an M23's code and
// crashed, where mps2-an505 itself was there).
func builtinOver(o, cur *boards.Board) bool {
	return cur != nil && o.File == boards.BuiltinFile && cur.File != boards.BuiltinFile
}

// holds reports whether o's region for role is at least as long as b's (true
// when b has none).
func holds(o, b *boards.Board, role string) bool {
	rb := b.RegionFor(role)
	if rb == nil {
		return true
	}
	ro := o.RegionFor(role)
	return ro != nil && ro.Length >= rb.Length
}

// Isolate returns a graph holding node n alone: its non-constant inputs
// become graph inputs, its outputs graph outputs, constants stay constants.
func Isolate(g *graph.Graph, n *graph.Node) (*graph.Graph, error) {
	sg := graph.New(g.Name+"_kernel", g.Format)
	seen := map[string]bool{}
	for _, name := range n.Inputs {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		t := g.Tensor(name)
		if t == nil {
			return nil, fmt.Errorf("node %q: input %q has no tensor", n.Name, name)
		}
		c := *t
		sg.AddTensor(&c)
		if !t.IsConst() {
			sg.Inputs = append(sg.Inputs, name)
		}
	}
	for _, name := range n.Outputs {
		t := g.Tensor(name)
		if t == nil || seen[name] {
			return nil, fmt.Errorf("node %q: output %q has no tensor of its own", n.Name, name)
		}
		c := *t
		c.Data = nil
		sg.AddTensor(&c)
		sg.Outputs = append(sg.Outputs, name)
	}
	if len(sg.Inputs) == 0 {
		return nil, fmt.Errorf("node %q: no non-constant input", n.Name)
	}
	nc := *n
	sg.AddNode(&nc)
	return sg, nil
}

// Kernels lists the distinct kernels of a compiled model (one per signature,
// in first-use order) that have knobs under opt's target. Nodes that cannot
// be built alone or have no knobs are left out.
func Kernels(s *pipeline.State, opt pipeline.Options) ([]*Kernel, error) {
	var out []*Kernel
	bySig := map[string]*Kernel{}
	done := map[string]bool{}
	// The kernels the model's own build keeps int8 in flash (the fit pass,
	// for the board's flash or --flash-budget) are tuned with int8 weights,
	// the build they will be in, so their records say so. A record covers
	// every node of its signature: only a signature whose nodes are all
	// kept int8 is; where some are, those take the signature's int8
	// record if an earlier run made one (records are keyed by the layout,
	// tune.KeyFor), else their defaults, and the others the int16 record.
	leanNode := map[string]bool{}
	if s.Lean != nil && s.Module != nil {
		kept := map[string]bool{}
		for _, name := range s.Lean.Kernels {
			kept[name] = true
		}
		for _, f := range s.Module.Funcs {
			if kept[f.Name] {
				leanNode[f.Node] = true
			}
		}
	}
	lean := map[string]bool{} // by signature: every node kept int8
	for _, ni := range s.Plan.Order {
		n := s.Graph.Nodes[ni]
		sig := tune.Signature(s.Graph, n)
		if l, seen := lean[sig]; !seen {
			lean[sig] = leanNode[n.Name]
		} else {
			lean[sig] = l && leanNode[n.Name]
		}
	}
	for _, ni := range s.Plan.Order {
		n := s.Graph.Nodes[ni]
		sig := tune.Signature(s.Graph, n)
		if k := bySig[sig]; k != nil {
			k.Nodes = append(k.Nodes, n.Name)
			continue
		}
		if done[sig] {
			continue
		}
		done[sig] = true
		sg, err := Isolate(s.Graph, n)
		if err != nil {
			continue
		}
		o := kernelOptions(opt)
		ks, err := pipeline.CompileGraph(sg, "kernel", o)
		if err != nil || ks.Module == nil || len(ks.Module.Funcs) != 1 || len(ks.Module.Funcs[0].Knobs) == 0 {
			continue
		}
		if f := ks.Module.Funcs[0]; lean[sig] && f.Knobs["weights"] == 16 {
			o.Knobs = map[string]map[string]int{f.Op: tune.Lean.Clone()}
			if ks, err = pipeline.CompileGraph(sg, "kernel", o); err != nil || ks.Module == nil || len(ks.Module.Funcs) != 1 {
				continue
			}
		}
		f := ks.Module.Funcs[0]
		k := &Kernel{Signature: sig, Op: f.Op, Func: f.Name, Nodes: []string{n.Name}, Defaults: tune.Knobs(f.Knobs).Clone(), Graph: sg, KnobTarget: f.KnobTarget}
		k.Space = tune.SpaceFor(k.knobTarget(ks.Module.Target), f.Op, k.Defaults)
		for name, v := range tune.Lean {
			if w, ok := k.Defaults[name]; ok && w == v {
				k.Space = k.Space.Fix(name, v) // the fit pass's choice, not a speed one
			}
		}
		bySig[sig] = k
		out = append(out, k)
	}
	return out, nil
}

// Measurement is one candidate's outcome.
type Measurement struct {
	Knobs        tune.Knobs
	Instructions int64
	Err          error
	Wall         time.Duration
}

// Measure builds the kernel alone with knobs into firmware for opt.Board in
// a fresh directory under workDir (its input and output in the arena), runs it on two random vectors under a
// timeout and checks both against the reference interpreter bit-exactly.
func Measure(k *Kernel, knobs tune.Knobs, opt pipeline.Options, workDir string, timeout time.Duration) Measurement {
	start := time.Now()
	m := Measurement{Knobs: knobs}
	m.Instructions, m.Err = measure(k, knobs, opt, workDir, timeout)
	m.Wall = time.Since(start)
	return m
}

// kernelOptions are the compile options of one kernel's graph, cut from
// the compiled model: no tuning records, knobs or budgets of the model's,
// and nothing to quantize again (the graph is the quantized model's; a
// --calib-random would warn once per candidate that it was ignored).
func kernelOptions(opt pipeline.Options) pipeline.Options {
	o := opt
	o.Tuning, o.Knobs, o.Prefix = "", nil, "k"
	o.FlashBudget, o.RAMBudget = 0, 0
	o.Calib, o.CalibRandom, o.Quantize = "", 0, ""
	o.Float = nil
	// A one-kernel graph's warnings (its arena run out of place, its
	// figures) are not the model's: they read as the user's (review
	// finding: "kernel: 1 layer(s) the plan ran in place run out of
	// place" twelve times over a VWW tune).
	o.Warn = func(string) {}
	return o.KernelOptions()
}

func measure(k *Kernel, knobs tune.Knobs, opt pipeline.Options, workDir string, timeout time.Duration) (int64, error) {
	s, err := compileCandidate(k, knobs, opt)
	if err != nil {
		return 0, err
	}
	return runCandidate(k, s, opt, workDir, timeout)
}

// compileCandidate compiles the kernel alone with knobs, as Measure builds
// it.
func compileCandidate(k *Kernel, knobs tune.Knobs, opt pipeline.Options) (*pipeline.State, error) {
	o := kernelOptions(opt)
	o.Knobs = map[string]map[string]int{k.Func: knobs}
	// Inputs and outputs in the arena, as a kernel inside a model reads
	// and writes them: with separate buffers behind pointer parameters
	// gcc schedules the loops differently, and such counts were a poor
	// proxy (IC conv 16x16x32 on generic: 2.42 M gain alone, 0.34 M in
	// the model; in the arena 0.36 M).
	o.IOInArena = true
	s, err := pipeline.CompileGraph(k.Graph, "kernel", o)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if len(s.Module.Funcs) != 1 || s.Module.Funcs[0].Name != k.Func {
		return nil, fmt.Errorf("the one-kernel build has %d kernels", len(s.Module.Funcs))
	}
	return s, nil
}

// codeKey identifies a compiled candidate's generated files: two knob
// settings with the same key build the same firmware.
func codeKey(s *pipeline.State) string {
	names := slices.Sorted(maps.Keys(s.Files))
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(s.Files[n]))
		h.Write(s.Files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runCandidate builds the compiled candidate s into firmware and runs it
// (Measure).
func runCandidate(k *Kernel, s *pipeline.State, opt pipeline.Options, workDir string, timeout time.Duration) (int64, error) {
	dir, err := os.MkdirTemp(workDir, "cand-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	h := fnv.New64a()
	h.Write([]byte(k.Signature))
	x, err := s.Execute(pipeline.RandomInputs(k.Graph, 2, h.Sum64()), filepath.Join(dir, "b"), timeout)
	if err != nil {
		return 0, err
	}
	if !x.AllMatch() {
		return 0, fmt.Errorf("outputs differ from the reference interpreter (max abs diff %g)", x.MaxAbsDiff)
	}
	n := x.Instructions()
	if n <= 0 {
		return 0, fmt.Errorf("board %s reported no instruction count", opt.Board.Name)
	}
	return n, nil
}
