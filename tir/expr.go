package tir

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// Expr is a side-effect-free expression with a static type.
type Expr interface {
	Type() DType
}

// IntImm is an integer constant of type T.
type IntImm struct {
	T DType
	V int64
}

// FloatImm is a float32 constant.
type FloatImm struct{ V float32 }

// Var is a loop or let variable. Identity is the pointer; Name is for printing.
type Var struct {
	Name string
	T    DType
}

// BinOp is an arithmetic, bitwise or comparison operator.
type BinOp uint8

// Binary operators. Comparisons yield Bool; And/Or on Bool are logical.
const (
	OpAdd BinOp = iota
	OpSub
	OpMul
	OpDiv // truncating, as in C
	OpMod // sign of the dividend, as in C
	OpMin
	OpMax
	OpShl
	OpShr // arithmetic for signed types
	OpAnd
	OpOr
	OpXor
	OpLT
	OpLE
	OpGT
	OpGE
	OpEQ
	OpNE
)

var binOpNames = [...]string{"+", "-", "*", "/", "%", "min", "max", "<<", ">>", "&", "|", "^", "<", "<=", ">", ">=", "==", "!="}

func (o BinOp) String() string { return binOpNames[o] }

// IsCompare reports whether o yields a Bool.
func (o BinOp) IsCompare() bool { return o >= OpLT }

// Binary applies Op to A and B, which have the same type.
type Binary struct {
	Op   BinOp
	A, B Expr
}

// Cast converts X to T (C conversion semantics; float to int truncates).
type Cast struct {
	T DType
	X Expr
}

// Select is Cond ? A : B.
type Select struct{ Cond, A, B Expr }

// Load reads Buf at Indices (one per dimension), or at a flat element index
// when Flat is set (after Flatten).
type Load struct {
	Buf     *Buffer
	Indices []Expr
	Flat    bool
}

// Ptr is the address of an element of Buf (a flat element index), passed to
// intrinsics that read a run of elements (tensorized inner loops).
type Ptr struct {
	Buf   *Buffer
	Index Expr
}

// Intrinsic is a named operation with exact semantics in interp.go and a C
// rendering in emitc.
type Intrinsic struct {
	Name string
	T    DType
	Args []Expr
}

// The intrinsics every target knows.
const (
	// IntrRequant(x, multiplier, shift) int32: TFLite MultiplyByQuantizedMultiplier
	// (SaturatingRoundingDoublingHighMul then RoundingDivideByPOT).
	IntrRequant = "requant"
	// IntrRequant64(x int64, multiplier, shift) int32: TFLite's
	// MultiplyByQuantizedMultiplier overload for the 64-bit accumulators of
	// its 16x8 layers (the multiplier rounded to 16 bits, one rounding).
	IntrRequant64 = "requant64"
	// IntrExp, IntrTanh, IntrRound (half away from zero) on float32.
	IntrExp   = "exp"
	IntrTanh  = "tanh"
	IntrRound = "round"
	IntrFloor = "floor"
	// IntrSRDHM(a, b) int32: SaturatingRoundingDoublingHighMul.
	IntrSRDHM = "srdhm"
	// IntrRDivPOT(x, exponent) int32: RoundingDivideByPOT.
	IntrRDivPOT = "rdivpot"
	// IntrMulRoundPos(a, b, s) int32: RDivPOT(SRDHM(a, b), s) for a, b >= 0
	// and s in [0, 31] (a softmax's scale times a table's exponential): on
	// non-negative values both roundings are half up, one 64-bit multiply
	// and two adds and shifts in C.
	IntrMulRoundPos = "mul_round_pos"
	// IntrRecip(x, intbits) int32: gemmlowp one_over_one_plus_x based reciprocal
	// of a Q(intbits) positive sum, as TFLite's GetReciprocal; returns the
	// Q0.31 scale and is paired with IntrRecipShift.
	IntrRecip      = "recip"
	IntrRecipShift = "recip_shift"
	// IntrQuantize(x, scale, even) int32: round(x / scale) with x/scale a
	// float32, half away from zero (even == 0, TFLite) or half to even
	// (even == 1, ONNX); saturated to int32.
	IntrQuantize = "quantize_f32"
	// IntrQuantizeS8(x, scale, zp, even) int32: IntrQuantize plus zp
	// (|zp| <= 128), clamped to int8: an int8 output's whole element.
	IntrQuantizeS8 = "quantize_f32_s8"
	// IntrQuantize64(x, scale, even) int64: IntrQuantize saturated to
	// ±2^40 instead, for an int32 output, whose zero point is added after
	// (an int32 saturation first lost the quotients past 2^31).
	IntrQuantize64 = "quantize_f32_64"
	// IntrRoundEven(x) int32: float32 x rounded half to even, saturated to ±2^22.
	IntrRoundEven = "round_even_f32"
	// IntrDot(x *T, sx, w *T, sw, n, xo, wo) int32: Σ_{i<n} (x[i·sx] + xo)·(w[i·sw] + wo)
	// over 8-bit buffers; the tensorized form of an int8 inner product.
	IntrDot = "dot"
	// IntrExpNeg(x) int32: gemmlowp exp_on_negative_values on Q5.26 -> Q0.31.
	IntrExpNeg = "exp_neg"
	// IntrDivQ8(a, b, m, shift) int32: TFLite's int8 DIV of two values less
	// their zero points, before the output zero point (qmath.DivInt8).
	IntrDivQ8 = "div_q8"
	// IntrInvSqrtMult(x) and IntrInvSqrtShift(x) int32: TFLite's
	// GetInvSqrtQuantizedMultiplierExp(x, -1), its multiplier and shift.
	IntrInvSqrtMult  = "inv_sqrt_mult"
	IntrInvSqrtShift = "inv_sqrt_shift"
	// IntrLogQ(z) int32: TFLite's log_x_for_x_greater_than_or_equal_to_1
	// of a Q12.19 z >= 1, as Q5.26 (qmath.LogQ12ToQ5).
	IntrLogQ = "log_q12_q5"
	// IntrPow(x, y) float32: the C library's powf.
	IntrPow = "pow"
	// IntrFmod(x, y) float32: the C library's fmodf.
	IntrFmod = "fmod"
	// IntrWrapAdd64, IntrWrapSub64, IntrWrapMul64(a, b) int64: the
	// operation modulo 2^64 (C computes it in uint64: no signed overflow).
	IntrWrapAdd64 = "wrap_add_s64"
	IntrWrapSub64 = "wrap_sub_s64"
	IntrWrapMul64 = "wrap_mul_s64"
	// IntrLibm + name (x) float32: the C library's float function name+"f"
	// (logf, sqrtf, sinf, ...): see LibmFuncs.
	IntrLibm = "libm_"
)

// LibmFuncs are the float32 C library functions Math lowers to, with their
// float64 definitions for the TIR interpreter.
var LibmFuncs = map[string]func(float64) float64{
	"log": math.Log, "sqrt": math.Sqrt, "fabs": math.Abs, "ceil": math.Ceil, "rint": math.RoundToEven,
	"erf": math.Erf, "erfc": math.Erfc, "sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin,
	"acos": math.Acos, "atan": math.Atan, "sinh": math.Sinh, "cosh": math.Cosh, "asinh": math.Asinh,
	"acosh": math.Acosh, "atanh": math.Atanh, "log1p": math.Log1p, "expm1": math.Expm1,
}

// Libm calls the C library's float32 function name on x.
func Libm(name string, x Expr) Expr { return Call(IntrLibm+name, F32, x) }

func (e *IntImm) Type() DType    { return e.T }
func (e *FloatImm) Type() DType  { return graph.Float32 }
func (e *Var) Type() DType       { return e.T }
func (e *Cast) Type() DType      { return e.T }
func (e *Select) Type() DType    { return e.A.Type() }
func (e *Load) Type() DType      { return e.Buf.DType }
func (e *Intrinsic) Type() DType { return e.T }
func (e *Ptr) Type() DType       { return e.Buf.DType }
func (e *Binary) Type() DType {
	if e.Op.IsCompare() {
		return graph.Bool
	}
	return e.A.Type()
}

// Shorthands used by compute definitions.
const (
	I8  = graph.Int8
	U8  = graph.UInt8
	I16 = graph.Int16
	I32 = graph.Int32
	I64 = graph.Int64
	F32 = graph.Float32
	B   = graph.Bool
)

// C is an int32 constant.
func C(v int64) Expr { return &IntImm{T: I32, V: v} }

// Imm is a constant of type t.
func Imm(t DType, v int64) Expr {
	if t == F32 {
		return &FloatImm{V: float32(v)}
	}
	return &IntImm{T: t, V: v}
}

// F is a float32 constant.
func F(v float32) Expr { return &FloatImm{V: v} }

// NewVar returns a fresh int32 variable.
func NewVar(name string) *Var { return &Var{Name: name, T: I32} }

func bin(op BinOp, a, b Expr) Expr {
	if a.Type() != b.Type() {
		panic(fmt.Sprintf("tir: %s on %s and %s", op, a.Type(), b.Type()))
	}
	return &Binary{Op: op, A: a, B: b}
}

// Arithmetic and comparison builders. Both operands must have the same type.
func Add(a, b Expr) Expr { return bin(OpAdd, a, b) }
func Sub(a, b Expr) Expr { return bin(OpSub, a, b) }
func Mul(a, b Expr) Expr { return bin(OpMul, a, b) }
func Div(a, b Expr) Expr { return bin(OpDiv, a, b) }
func Mod(a, b Expr) Expr { return bin(OpMod, a, b) }
func Min(a, b Expr) Expr { return bin(OpMin, a, b) }
func Max(a, b Expr) Expr { return bin(OpMax, a, b) }
func Shl(a, b Expr) Expr { return bin(OpShl, a, b) }
func Shr(a, b Expr) Expr { return bin(OpShr, a, b) }
func LT(a, b Expr) Expr  { return bin(OpLT, a, b) }
func LE(a, b Expr) Expr  { return bin(OpLE, a, b) }
func GT(a, b Expr) Expr  { return bin(OpGT, a, b) }
func GE(a, b Expr) Expr  { return bin(OpGE, a, b) }
func EQ(a, b Expr) Expr  { return bin(OpEQ, a, b) }
func NE(a, b Expr) Expr  { return bin(OpNE, a, b) }

// And is logical and of Bool operands.
func And(a, b Expr) Expr { return bin(OpAnd, a, b) }

// Or is logical or of Bool operands.
func Or(a, b Expr) Expr { return bin(OpOr, a, b) }

// AllOf is the conjunction of conds (true when empty).
func AllOf(conds ...Expr) Expr {
	var r Expr
	for _, c := range conds {
		if r == nil {
			r = c
		} else {
			r = And(r, c)
		}
	}
	if r == nil {
		return &IntImm{T: B, V: 1}
	}
	return r
}

// Clamp is min(max(x, lo), hi).
func Clamp(x, lo, hi Expr) Expr { return Min(Max(x, lo), hi) }

// CastTo converts x to t (no-op when already t).
func CastTo(t DType, x Expr) Expr {
	if x.Type() == t {
		return x
	}
	return &Cast{T: t, X: x}
}

// Sel is cond ? a : b.
func Sel(cond, a, b Expr) Expr { return &Select{Cond: cond, A: a, B: b} }

// At loads b at the given indices.
func At(b *Buffer, idx ...Expr) Expr {
	if len(idx) != len(b.Shape) {
		panic(fmt.Sprintf("tir: %s has rank %d, indexed with %d", b.Name, len(b.Shape), len(idx)))
	}
	return &Load{Buf: b, Indices: idx}
}

// Call builds an intrinsic call.
func Call(name string, t DType, args ...Expr) Expr { return &Intrinsic{Name: name, T: t, Args: args} }

// Requant is TFLite's MultiplyByQuantizedMultiplier(x, m, shift).
func Requant(x, m, shift Expr) Expr { return Call(IntrRequant, I32, x, m, shift) }

// Requant64 is IntrRequant64 of a 64-bit accumulator.
func Requant64(x, m, shift Expr) Expr { return Call(IntrRequant64, I32, x, m, shift) }

// IsConst returns the value of an integer constant.
func IsConst(e Expr) (int64, bool) {
	if c, ok := e.(*IntImm); ok {
		return c.V, true
	}
	return 0, false
}

// floatBits is used by the printer to show float constants exactly.
func floatBits(f float32) uint32 { return math.Float32bits(f) }
