package tir

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// kctx carries what a compute definition needs to build one kernel.
type kctx struct {
	g      *graph.Graph
	n      *graph.Node
	f      *PrimFunc
	params map[string]*Buffer // by tensor name
	// act is a fused element-wise activation (from a following Relu/Clip node)
	// applied in float or as an int8 clamp; out overrides the output tensor.
	out *graph.Tensor
	// folded is the bias with the input offset folded in (conv/FC without padding).
	folded *Buffer
	// stack is the target's stack for a kernel's local arrays (0: unknown).
	stack int
	// target is the target's name: the 16x8 inner products take Helium's
	// forms on "mve" (s16s8Weights, s16s8Outs).
	target string
}

// compute builds the naive loop nest for a node: one compute definition per op.
type computeFn func(k *kctx) (Stmt, error)

var computes = map[graph.Op]computeFn{}

func register(op graph.Op, fn computeFn) { computes[op] = fn }

// in returns a parameter buffer for input i (a const buffer for constants).
func (k *kctx) in(i int) *Buffer {
	t := k.g.In(k.n, i)
	if t == nil {
		return nil
	}
	return k.tensorBuf(t, false)
}

// secondParam is another read-only parameter for tensor t, already a
// parameter of the kernel (the call passes the same pointer twice).
func (k *kctx) secondParam(t *graph.Tensor) *Buffer {
	b := NewBuffer(cname(t.Name)+"_2", t.DType, t.Shape, ScopeParam)
	b.Tensor = t.Name
	k.f.Params = append(k.f.Params, b)
	return b
}

func (k *kctx) tensorBuf(t *graph.Tensor, writes bool) *Buffer {
	if t.IsConst() {
		b := NewBuffer(cname(t.Name), t.DType, t.Shape, ScopeConst)
		b.Data = t.Data
		b.Tensor = t.Name
		return b
	}
	if b, ok := k.params[t.Name]; ok {
		b.Writes = b.Writes || writes
		return b
	}
	b := NewBuffer(cname(t.Name), t.DType, t.Shape, ScopeParam)
	b.Tensor = t.Name
	b.Writes = writes
	k.params[t.Name] = b
	k.f.Params = append(k.f.Params, b)
	return b
}

// output returns the parameter buffer of the kernel's output.
func (k *kctx) output() (*Buffer, *graph.Tensor) {
	t := k.out
	if t == nil {
		t = k.g.Out(k.n, 0)
	}
	return k.tensorBuf(t, true), t
}

// cname turns a tensor name into a TIR buffer name (emitc makes it valid C):
// TFLite joins the names of fused tensors with ';', the first one is kept.
func cname(s string) string {
	if i := strings.IndexByte(s, ';'); i > 0 {
		s = s[:i]
	}
	return s
}

func (k *kctx) errorf(format string, a ...any) error {
	return fmt.Errorf("tir: node %q (%s): %s", k.n.Name, OpLabel(k.g, k.n), fmt.Sprintf(format, a...))
}

// OpLabel is how a message names n's op: a Conv2D in groups as what its
// author wrote, a depthwise (or grouped) convolution (review: an overflow
// error named a DEPTHWISE_CONV_2D "(Conv2D)").
func OpLabel(g *graph.Graph, n *graph.Node) string {
	if at, ok := n.Attrs.(*graph.Conv2DAttrs); ok && n.Op == graph.Conv2D && at.Group > 1 {
		if w := g.In(n, 1); w != nil && len(w.Shape) == 4 && w.Shape[3] == 1 {
			return "depthwise Conv2D"
		}
		return "Conv2D in groups"
	}
	return string(n.Op)
}

func pos1(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// constData makes a constant buffer named name.
func constBuf(name string, dt DType, shape []int, vals []int64) *Buffer {
	b := NewBuffer(name, dt, shape, ScopeConst)
	b.Data = &graph.Data{DType: dt, Shape: append([]int{}, shape...), I: vals}
	return b
}

func constF32(name string, shape []int, vals []float32) *Buffer {
	b := NewBuffer(name, F32, shape, ScopeConst)
	b.Data = &graph.Data{DType: F32, Shape: append([]int{}, shape...), F: vals}
	return b
}

// ld loads b at idx and widens integers to int32 (floats stay float32).
func ld(b *Buffer, idx ...Expr) Expr {
	e := At(b, idx...)
	if b.DType == F32 {
		return e
	}
	return CastTo(I32, e)
}

// floatAct applies a fused activation in float.
func floatAct(a graph.Activation, x Expr) Expr {
	lo, hi, ok := a.Bounds()
	if !ok {
		return x
	}
	if math.IsInf(hi, 1) {
		return Max(x, F(float32(lo)))
	}
	return Clamp(x, F(float32(lo)), F(float32(hi)))
}

// quantParams returns scale and zero point of a per-tensor quantized tensor.
func quantParams(t *graph.Tensor) (float32, int32, error) {
	if t.Quant == nil || len(t.Quant.Scale) == 0 {
		return 0, 0, fmt.Errorf("tensor %q (%s) has no quantization parameters", t.Name, t.DType)
	}
	s, z := t.Quant.At(0)
	return s, z, nil
}

// actRange is TFLite's CalculateActivationRangeQuantized for the output tensor.
func actRange(a graph.Activation, t *graph.Tensor) (int64, int64, error) {
	qmin, qmax := t.DType.Range()
	if a == graph.ActNone {
		return qmin, qmax, nil
	}
	s, z, err := quantParams(t)
	if err != nil {
		return 0, 0, err
	}
	lo, hi := qmath.ActivationRange(a.String(), s, z, int32(qmin), int32(qmax))
	return int64(lo), int64(hi), nil
}

// QuantizeMultiplier is TFLite's QuantizeMultiplier: m in Q31 and a shift
// (positive = left) with real ≈ m·2^(shift-31).
func QuantizeMultiplier(real float64) (int32, int32) {
	m, s := qmath.QuantizeMultiplier(real)
	return m, int32(s)
}

func isInt(t *graph.Tensor) bool { return t.DType != F32 }

// kernelSuffix is the type suffix of a kernel name (s8, u8, f32, ...).
func kernelSuffix(dt DType) string {
	switch dt {
	case I8:
		return "s8"
	case U8:
		return "u8"
	case I16:
		return "s16"
	case I32:
		return "s32"
	case F32:
		return "f32"
	}
	return strings.ToLower(dt.String())
}

// axisView resolves axis (negative from the end) of shape and splits the
// shape around it as [outer, depth, inner], the view of per-axis kernels.
func axisView(shape []int, axis int) (outer, depth, inner int, err error) {
	ax := axis
	if ax < 0 {
		ax += len(shape)
	}
	if ax < 0 || ax >= len(shape) {
		return 0, 0, 0, fmt.Errorf("axis %d out of range for %v", axis, shape)
	}
	depth, inner = shape[ax], graph.NumElements(shape[ax+1:])
	return graph.NumElements(shape) / (depth * inner), depth, inner, nil
}
