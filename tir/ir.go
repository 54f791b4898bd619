// Package tir is mcugen's loop-level IR, in the spirit of TVM's TIR: a
// PrimFunc has typed buffer parameters and a body of loops, stores and
// expressions. Every canonical graph op has one compute definition here
// (compute_*.go); a target brings schedules (schedule*.go) that transform
// those loop nests without changing what they compute; Lower turns a planned
// graph into a Module of PrimFuncs that emitc prints as C. The package also
// has a printer, a simplifier and an interpreter used to check transforms.
//
// To add an op: write its compute definition (a naive loop nest built with
// Loops/Scalar/Put, int8 semantics bit-exact with graph/interp) in a
// compute_*.go file and register it; add a graph to tirtest. To add a
// target: register a Target whose Schedules map kernel ops to functions that
// transform the compute definition with the primitives (Split, Reorder,
// Fuse, Unroll, PartitionLoop, CacheWindow, FoldInputOffset, Tensorize, ...)
// and read their choices from PrimFunc.Knobs; ops it does not list fall back
// to Generic.
package tir

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

// DType is the element type of a buffer or expression (graph's dtypes plus Bool).
type DType = graph.DType

// Scope says where a buffer's storage lives.
type Scope uint8

const (
	// ScopeParam is a pointer passed to the kernel by its caller (activations).
	ScopeParam Scope = iota
	// ScopeConst is compile-time constant data (weights, bias, multipliers, tables).
	ScopeConst
	// ScopeLocal is a kernel-local variable or array (accumulators, windows).
	ScopeLocal
)

// Buffer is a typed, strided n-dimensional array. Rank-0 buffers are scalars.
type Buffer struct {
	Name    string
	DType   DType
	Shape   []int
	Strides []int // in elements; row-major when built with NewBuffer
	Scope   Scope
	// Data holds the values of a ScopeConst buffer (F for float32, I otherwise).
	Data *graph.Data
	// Tensor is the graph tensor the buffer stands for, if any.
	Tensor string
	// Writes reports whether a ScopeParam buffer is written by the kernel.
	Writes bool
}

// NewBuffer returns a row-major buffer.
func NewBuffer(name string, dt DType, shape []int, scope Scope) *Buffer {
	return &Buffer{Name: name, DType: dt, Shape: append([]int{}, shape...), Strides: graph.Strides(shape), Scope: scope}
}

// Len is the number of elements the buffer spans.
func (b *Buffer) Len() int { return graph.NumElements(b.Shape) }

// PrimFunc is one kernel: parameters, constants it reads, and a loop body.
type PrimFunc struct {
	Name   string
	Params []*Buffer
	Body   Stmt
	// Node and Op name the graph node(s) the kernel implements (for comments).
	Node string
	Op   string
	// Knobs are the schedule's tunable choices, by name (split factors, unroll depths).
	Knobs map[string]int
	// WantInPlace says the memory plan puts the output over the first input
	// (memplan's in-place rule for the op); a schedule that has an in-place
	// safe form takes it.
	WantInPlace bool
	// InPlaceSafe says the scheduled kernel stays exact with its output
	// over its first input laid out that way (a convolution that stages
	// each input window before writing the outputs that cover it).
	InPlaceSafe bool
	// DeadChannels is how many output channels the schedule stores as
	// constants instead of computing (all-zero weights; tir/dsp_dead.go).
	DeadChannels int
	// StackBytes is the target's stack for the kernel's local arrays
	// (Target.StackBytes, set before scheduling; 0: no limit known): a
	// schedule whose form would need more takes another.
	StackBytes int
	// KnobTarget names the target whose knob declarations its knobs follow
	// when a schedule of another target ran it (a Cortex-M55 layer with a
	// weight zero point runs the dsp schedule: "dsp"); "" for the module's.
	KnobTarget string
	// StackFallback is the local arrays (bytes) of the target's own
	// schedule where they passed StackBytes and a fallback target's
	// schedule took the kernel instead (lowerer.kernel); 0 otherwise.
	StackFallback int
}

// Consts returns the constant buffers the function reads, in first-use order.
func (f *PrimFunc) Consts() []*Buffer {
	var out []*Buffer
	seen := map[*Buffer]bool{}
	VisitExprs(f.Body, func(e Expr) {
		var b *Buffer
		switch x := e.(type) {
		case *Load:
			b = x.Buf
		case *Ptr:
			b = x.Buf
		}
		if b != nil && b.Scope == ScopeConst && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	})
	return out
}

// Module is a lowered model: kernels in execution order and the calls that run them.
type Module struct {
	Name       string // model name
	Funcs      []*PrimFunc
	Consts     []*Buffer     // every constant buffer, in first-use order, names unique
	Calls      []*KernelCall // the entry function's body
	ArenaBytes int
	Inputs     []*IO
	Outputs    []*IO
	Target     string
	IOInArena  bool // graph inputs and outputs live in the arena (plan.IOInArena)
	Float      bool // true when any kernel uses float maths
	// States are the graph's states (graph.State): Inputs[In] is the value
	// at the start of an inference, Outputs[Out] the next one.
	States []*StateIO
}

// StateIO is a tensor carried from one inference to the next: the pair of
// the module's I/O (by index) that the generated code keeps in a static
// buffer instead of the caller's, and its initial value (nil: zeros).
type StateIO struct {
	In, Out int
	Init    *graph.Data
}

// IsState reports whether input (output=false) or output i is a state's.
func (m *Module) IsState(i int, output bool) bool {
	for _, s := range m.States {
		if !output && s.In == i || output && s.Out == i {
			return true
		}
	}
	return false
}

// Where says where a tensor lives at run time.
type Where struct {
	// Arena is true when the tensor lives at Offset bytes into the arena;
	// otherwise it is the caller's pointer of graph input/output IO (by index).
	Arena  bool
	Offset int
	IO     int  // index into Module.Inputs or Module.Outputs
	Output bool // IO indexes Outputs
}

// IO is a graph input or output.
type IO struct {
	Name   string // graph tensor name
	DType  DType
	Shape  []int
	Bytes  int
	Offset int // arena offset given by the plan (used with in-arena I/O)
	// Quantized: an integer tensor with one scale and zero point; its real
	// value is Scale·(q − ZeroPoint).
	Quantized bool
	Scale     float32
	ZeroPoint int32
	// CopyFrom, for an output whose value lives elsewhere (an alias, or an input
	// passed straight through), is where to copy it from after the kernels run.
	CopyFrom *Where
}

// KernelCall is one kernel invocation in the entry function.
type KernelCall struct {
	Func *PrimFunc
	Args []Where // one per Func.Params
	// Bytes is the byte length of each argument (for the printed comment and checks).
	Bytes []int
}

// ScratchBytes is an upper bound on the stack a kernel's local arrays take:
// the sum of every array it allocates (im2col rows, transformed tiles,
// accumulator blocks). Scalars (one element) stay in registers or the
// compiler's frame and are not counted. It is the sum, not the peak of
// the C's scopes: gcc at -O0, -Og and -O1 gives the arrays of a function's
// own block space of their own, and its greedy slot sharing can exceed the
// scopes' peak at every level (a review measured a 3x3 convolution whose
// scoped peak was 14,208 B take 21,392 B at -Og; TestStackSizeBoundsGCC).
func (f *PrimFunc) ScratchBytes() int {
	n := 0
	VisitStmts(f.Body, func(s Stmt) {
		if a, ok := s.(*Allocate); ok && a.Buf.Scope == ScopeLocal && a.Buf.Len() > 1 {
			n += a.Buf.Len() * a.Buf.DType.Size()
		}
	})
	return n
}

// ConstBytes is the bytes of the module's constant data (weights in the
// layouts the kernels read, biases, requantization and lookup tables),
// each distinct array once: what the weights region of flash must hold.
func (m *Module) ConstBytes() int64 {
	var n int64
	seen := map[*graph.Data]bool{}
	equal := map[string]bool{}
	for _, c := range m.Consts {
		if c.Data == nil || seen[c.Data] {
			continue
		}
		seen[c.Data] = true
		if k := c.ContentKey(); equal[k] {
			continue
		} else {
			equal[k] = true
		}
		n += int64(c.Data.Len() * c.DType.Size())
	}
	return n
}

// ContentKey identifies a constant buffer's array by its element type and
// values ("" for a buffer without data): constants with one key are one
// array in the generated C.
func (b *Buffer) ContentKey() string {
	if b.Data == nil {
		return ""
	}
	h := sha256.New()
	var w [8]byte
	n := b.Data.Len()
	for i := 0; i < n; i++ {
		if b.DType == graph.Float32 {
			binary.LittleEndian.PutUint32(w[:4], math.Float32bits(b.Data.F[i]))
			h.Write(w[:4])
		} else {
			binary.LittleEndian.PutUint64(w[:], uint64(b.Data.I[i]))
			h.Write(w[:])
		}
	}
	return fmt.Sprintf("%s/%d/%x", b.DType, n, h.Sum(nil))
}

// DistinctFuncs estimates how many kernel functions the generated C holds:
// emitc prints kernels whose C is the same up to their names (which prefix
// their locals) and the constant arrays they read once, and two kernels
// whose bodies print the same with their parameters and constants renamed
// by position, over parameters of one type and shape and constants of one
// type and length, are such a pair.
func (m *Module) DistinctFuncs() int {
	seen := map[string]bool{}
	for _, f := range m.Funcs {
		var b strings.Builder
		b.WriteString(f.Op)
		for _, p := range f.Params {
			fmt.Fprintf(&b, "|%s%v%v", p.DType, p.Shape, p.Writes)
		}
		// Kernels that differ only in their constant arrays (of the same
		// types and lengths) are one function in the C, the arrays passed
		// by each call (emitc's writeKernels).
		consts := f.Consts()
		for _, c := range consts {
			n := 0
			if c.Data != nil {
				n = c.Data.Len()
			}
			fmt.Fprintf(&b, "|%s%d", c.DType, n)
		}
		// Parameters print under their tensors' names, and emitc under
		// input and output: the body is printed with them and the
		// constants renamed.
		names := make([]string, len(f.Params))
		for i, p := range f.Params {
			names[i], p.Name = p.Name, fmt.Sprintf("\x02%d", i)
		}
		cnames := make([]string, len(consts))
		for i, c := range consts {
			cnames[i], c.Name = c.Name, fmt.Sprintf("\x03%d", i)
		}
		var body strings.Builder
		printStmt(&body, f.Body, 1)
		for i, p := range f.Params {
			p.Name = names[i]
		}
		for i, c := range consts {
			c.Name = cnames[i]
		}
		b.WriteString("|" + strings.ReplaceAll(body.String(), f.Name, "\x01"))
		seen[b.String()] = true
	}
	return len(seen)
}

// ScratchBytes is the largest ScratchBytes of the module's kernels, and
// that kernel's name ("" when none has local arrays): the stack the
// generated code needs beyond its functions' frames, one kernel at a time.
func (m *Module) ScratchBytes() (int, string) {
	best, name := 0, ""
	for _, f := range m.Funcs {
		if b := f.ScratchBytes(); b > best {
			best, name = b, f.Name
		}
	}
	return best, name
}
