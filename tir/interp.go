package tir

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// Run interprets f with its parameters bound to args (one graph.Data per
// Params entry, integers in I, floats in F). Integer arithmetic wraps to the
// expression's type exactly as the C that emitc prints does (two's
// complement, truncating division, arithmetic right shift); float32
// arithmetic rounds to float32 after every operation.
func Run(f *PrimFunc, args []*graph.Data) (err error) {
	if len(args) != len(f.Params) {
		return fmt.Errorf("tir: %s takes %d buffers, got %d", f.Name, len(f.Params), len(args))
	}
	m := &machine{mem: map[*Buffer]*graph.Data{}, vars: map[*Var]val{}}
	for i, p := range f.Params {
		if args[i].Len() < p.span() {
			return fmt.Errorf("tir: %s: buffer %s needs %d elements, got %d", f.Name, p.Name, p.span(), args[i].Len())
		}
		m.mem[p] = args[i]
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tir: %s: %v", f.Name, r)
		}
	}()
	m.exec(f.Body)
	return nil
}

// span is the number of elements from the first to one past the last addressable element.
func (b *Buffer) span() int {
	n := 1
	for i, d := range b.Shape {
		if d == 0 {
			return 0
		}
		n += (d - 1) * b.Strides[i]
	}
	return n
}

type val struct {
	i int64
	f float64
	p *graph.Data // a Ptr's buffer (its element index is in i)
}

type machine struct {
	mem  map[*Buffer]*graph.Data
	vars map[*Var]val
}

func (m *machine) data(b *Buffer) *graph.Data {
	if b.Scope == ScopeConst {
		return b.Data
	}
	d, ok := m.mem[b]
	if !ok {
		panic(fmt.Sprintf("buffer %s is not allocated", b.Name))
	}
	return d
}

func (m *machine) offset(b *Buffer, idx []Expr, flat bool) int {
	if len(idx) == 0 {
		return 0
	}
	if flat {
		return int(m.eval(idx[0]).i)
	}
	off := 0
	for i, e := range idx {
		v := int(m.eval(e).i)
		if v < 0 || v >= b.Shape[i] {
			panic(fmt.Sprintf("index %d of %s out of range [0,%d)", v, b.Name, b.Shape[i]))
		}
		off += v * b.Strides[i]
	}
	return off
}

func (m *machine) exec(s Stmt) {
	switch x := s.(type) {
	case *For:
		lo, n := m.eval(x.Min).i, m.eval(x.Extent).i
		for i := lo; i < lo+n; i++ {
			m.vars[x.Var] = val{i: i}
			m.exec(x.Body)
		}
		delete(m.vars, x.Var)
	case *Seq:
		for _, c := range x.Stmts {
			m.exec(c)
		}
	case *Store:
		d := m.data(x.Buf)
		off := m.offset(x.Buf, x.Indices, x.Flat)
		if off < 0 || off >= d.Len() {
			panic(fmt.Sprintf("store to %s at %d out of range %d", x.Buf.Name, off, d.Len()))
		}
		v := m.eval(x.Value)
		if x.Buf.DType == F32 {
			d.F[off] = float32(v.f)
		} else {
			d.I[off] = wrap(x.Buf.DType, v.i)
		}
	case *LetStmt:
		m.vars[x.Var] = m.eval(x.Value)
		m.exec(x.Body)
		delete(m.vars, x.Var)
	case *IfThenElse:
		if m.eval(x.Cond).i != 0 {
			m.exec(x.Then)
		} else if x.Else != nil {
			m.exec(x.Else)
		}
	case *Evaluate:
		m.eval(x.X)
	case *Allocate:
		m.mem[x.Buf] = graph.NewData(x.Buf.DType, []int{x.Buf.span()})
		m.exec(x.Body)
		delete(m.mem, x.Buf)
	case nil:
		// An empty statement (what the simplifier leaves of dead code).
	default:
		panic(fmt.Sprintf("unknown statement %T", s))
	}
}

// wrap converts v to dtype t as a C conversion does (graph.DType.Wrap).
func wrap(t DType, v int64) int64 { return t.Wrap(v) }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (m *machine) eval(e Expr) val {
	switch x := e.(type) {
	case *IntImm:
		return val{i: x.V}
	case *FloatImm:
		return val{f: float64(x.V)}
	case *Var:
		v, ok := m.vars[x]
		if !ok {
			panic(fmt.Sprintf("variable %s is not bound", x.Name))
		}
		return v
	case *Cast:
		v := m.eval(x.X)
		from := x.X.Type()
		switch {
		case x.T == F32 && from == F32:
			return v
		case x.T == F32:
			return val{f: float64(float32(v.i))}
		case from == F32:
			if math.IsNaN(v.f) || v.f >= 9.2e18 || v.f <= -9.2e18 {
				panic(fmt.Sprintf("float %g does not convert to %s", v.f, x.T))
			}
			return val{i: wrap(x.T, int64(v.f))}
		}
		return val{i: wrap(x.T, v.i)}
	case *Select:
		if m.eval(x.Cond).i != 0 {
			return m.eval(x.A)
		}
		return m.eval(x.B)
	case *Load:
		d := m.data(x.Buf)
		off := m.offset(x.Buf, x.Indices, x.Flat)
		if off < 0 || off >= d.Len() {
			panic(fmt.Sprintf("load from %s at %d out of range %d", x.Buf.Name, off, d.Len()))
		}
		if x.Buf.DType == F32 {
			return val{f: float64(d.F[off])}
		}
		return val{i: d.I[off]}
	case *Ptr:
		return val{p: m.data(x.Buf), i: m.eval(x.Index).i}
	case *Binary:
		return m.binary(x)
	case *Intrinsic:
		return m.intrinsic(x)
	}
	panic(fmt.Sprintf("unknown expression %T", e))
}

func (m *machine) binary(x *Binary) val {
	a, b := m.eval(x.A), m.eval(x.B)
	t := x.A.Type()
	if t == F32 {
		var r float64
		switch x.Op {
		case OpAdd:
			r = a.f + b.f
		case OpSub:
			r = a.f - b.f
		case OpMul:
			r = a.f * b.f
		case OpDiv:
			r = a.f / b.f
		case OpMin:
			r = a.f
			if b.f < a.f {
				r = b.f
			}
		case OpMax:
			r = a.f
			if b.f > a.f {
				r = b.f
			}
		case OpLT:
			return val{i: b2i(a.f < b.f)}
		case OpLE:
			return val{i: b2i(a.f <= b.f)}
		case OpGT:
			return val{i: b2i(a.f > b.f)}
		case OpGE:
			return val{i: b2i(a.f >= b.f)}
		case OpEQ:
			return val{i: b2i(a.f == b.f)}
		case OpNE:
			return val{i: b2i(a.f != b.f)}
		default:
			panic(fmt.Sprintf("operator %s on float32", x.Op))
		}
		return val{f: float64(float32(r))}
	}
	var r int64
	switch x.Op {
	case OpAdd:
		r = a.i + b.i
	case OpSub:
		r = a.i - b.i
	case OpMul:
		r = a.i * b.i
	case OpDiv:
		if b.i == 0 {
			panic("integer division by zero")
		}
		r = a.i / b.i
	case OpMod:
		if b.i == 0 {
			panic("integer modulo by zero")
		}
		r = a.i % b.i
	case OpMin:
		r = min(a.i, b.i)
	case OpMax:
		r = max(a.i, b.i)
	case OpShl:
		if b.i < 0 || b.i >= 64 || a.i < 0 {
			panic(fmt.Sprintf("undefined shift %d << %d", a.i, b.i))
		}
		r = a.i << uint(b.i)
	case OpShr:
		if b.i < 0 || b.i >= 64 {
			panic(fmt.Sprintf("undefined shift %d >> %d", a.i, b.i))
		}
		r = a.i >> uint(b.i)
	case OpAnd:
		r = a.i & b.i
	case OpOr:
		r = a.i | b.i
	case OpXor:
		r = a.i ^ b.i
	case OpLT:
		return val{i: b2i(a.i < b.i)}
	case OpLE:
		return val{i: b2i(a.i <= b.i)}
	case OpGT:
		return val{i: b2i(a.i > b.i)}
	case OpGE:
		return val{i: b2i(a.i >= b.i)}
	case OpEQ:
		return val{i: b2i(a.i == b.i)}
	case OpNE:
		return val{i: b2i(a.i != b.i)}
	}
	if t == I32 && (r > math.MaxInt32 || r < math.MinInt32) && x.Op != OpShl {
		panic(fmt.Sprintf("int32 overflow: %d %s %d", a.i, x.Op, b.i))
	}
	return val{i: wrap(t, r)}
}

func (m *machine) intrinsic(x *Intrinsic) val {
	args := make([]val, len(x.Args))
	for i, a := range x.Args {
		args[i] = m.eval(a)
	}
	i32 := func(k int) int32 { return int32(args[k].i) }
	switch x.Name {
	case IntrRequant:
		return val{i: int64(RequantQ(i32(0), i32(1), i32(2)))}
	case IntrRequant64:
		return val{i: int64(qmath.MultiplyByQuantizedMultiplier64(args[0].i, i32(1), int(i32(2))))}
	case IntrSRDHM:
		return val{i: int64(SRDHM(i32(0), i32(1)))}
	case IntrRDivPOT:
		return val{i: int64(RDivPOT(i32(0), i32(1)))}
	case IntrMulRoundPos:
		if args[0].i < 0 || args[1].i < 0 || args[2].i < 0 || args[2].i > 31 {
			panic(fmt.Sprintf("%s(%d, %d, %d): wants a, b >= 0 and s in [0, 31]", IntrMulRoundPos, args[0].i, args[1].i, args[2].i))
		}
		return val{i: int64(RDivPOT(SRDHM(i32(0), i32(1)), i32(2)))}
	case IntrRecip:
		r, _ := Reciprocal(i32(0), i32(1))
		return val{i: int64(r)}
	case IntrRecipShift:
		_, s := Reciprocal(i32(0), i32(1))
		return val{i: int64(s)}
	case IntrExpNeg:
		return val{i: int64(ExpNeg(i32(0)))}
	case IntrDivQ8:
		return val{i: int64(qmath.DivInt8(i32(0), i32(1), i32(2), int(i32(3))))}
	case IntrInvSqrtMult:
		m, _ := qmath.GetInvSqrtQuantizedMultiplierExp(i32(0), -1)
		return val{i: int64(m)}
	case IntrInvSqrtShift:
		_, sh := qmath.GetInvSqrtQuantizedMultiplierExp(i32(0), -1)
		return val{i: int64(sh)}
	case IntrLogQ:
		return val{i: int64(qmath.LogQ12ToQ5(i32(0)))}
	case IntrDot:
		x, sx, w, sw, n, xo, wo := args[0], args[1].i, args[2], args[3].i, args[4].i, args[5].i, args[6].i
		var acc int64
		for i := int64(0); i < n; i++ {
			acc += (x.p.I[x.i+i*sx] + xo) * (w.p.I[w.i+i*sw] + wo)
		}
		if acc > math.MaxInt32 || acc < math.MinInt32 {
			panic("int32 overflow in dot")
		}
		return val{i: acc}
	case IntrQuantize:
		return val{i: int64(QuantizeF32(float32(args[0].f), float32(args[1].f), args[2].i != 0))}
	case IntrQuantizeS8:
		zp := args[2].i
		if zp < -128 || zp > 127 {
			panic(fmt.Sprintf("%s: zero point %d", IntrQuantizeS8, zp))
		}
		return val{i: min(max(int64(QuantizeF32(float32(args[0].f), float32(args[1].f), args[3].i != 0))+zp, -128), 127)}
	case IntrQuantize64:
		return val{i: QuantizeF32Wide(float32(args[0].f), float32(args[1].f), args[2].i != 0)}
	case IntrRoundEven:
		return val{i: int64(RoundEvenF32(float32(args[0].f)))}
	case IntrExp:
		return val{f: float64(float32(math.Exp(args[0].f)))}
	case IntrTanh:
		return val{f: float64(float32(math.Tanh(args[0].f)))}
	case IntrRound:
		return val{f: math.Round(args[0].f)}
	case IntrFloor:
		return val{f: math.Floor(args[0].f)}
	case IntrPow:
		return val{f: float64(float32(math.Pow(args[0].f, args[1].f)))}
	case IntrWrapAdd64:
		return val{i: args[0].i + args[1].i}
	case IntrWrapSub64:
		return val{i: args[0].i - args[1].i}
	case IntrWrapMul64:
		return val{i: args[0].i * args[1].i}
	case IntrFmod:
		return val{f: float64(float32(math.Mod(args[0].f, args[1].f)))}
	}
	if fn, ok := extIntrinsics[x.Name]; ok {
		return fn(args)
	}
	if f, ok := LibmFuncs[strings.TrimPrefix(x.Name, IntrLibm)]; ok && strings.HasPrefix(x.Name, IntrLibm) {
		return val{f: float64(float32(f(args[0].f)))}
	}
	panic(fmt.Sprintf("unknown intrinsic %s", x.Name))
}

// extIntrinsics holds the semantics of target intrinsics defined in other
// files (dsp_*.go): they get their evaluated arguments (a Ptr argument
// carries its buffer in p and its element index in i) and may write
// through pointer arguments.
var extIntrinsics = map[string]func(args []val) val{}

// QuantizeF32 is the semantics of IntrQuantize.
func QuantizeF32(x, scale float32, even bool) int32 {
	return int32(quantizeSat(x, scale, even, math.MinInt32, math.MaxInt32))
}

// QuantizeF32Wide is the semantics of IntrQuantize64.
func QuantizeF32Wide(x, scale float32, even bool) int64 {
	return quantizeSat(x, scale, even, -1<<40, 1<<40)
}

// quantizeSat is round(x / scale), half to even or (even false) half away
// from zero, saturated to [lo, hi]; NaN gives 0.
func quantizeSat(x, scale float32, even bool, lo, hi int64) int64 {
	// The quotient is a float32, as in TFLite's AffineQuantize
	// (val / static_cast<float>(scale)) and ONNX's QuantizeLinear.
	q := float64(x / scale)
	if even {
		q = math.RoundToEven(q)
	} else {
		q = math.Round(q)
	}
	switch {
	case math.IsNaN(q):
		return 0
	case q > float64(hi):
		return hi
	case q < float64(lo):
		return lo
	}
	return int64(q)
}

// RoundEvenF32 is the semantics of IntrRoundEven.
func RoundEvenF32(x float32) int32 {
	const lim = 1 << 22
	v := math.RoundToEven(float64(x))
	switch {
	case math.IsNaN(v):
		return 0
	case v > lim:
		return lim
	case v < -lim:
		return -lim
	}
	return int32(v)
}
