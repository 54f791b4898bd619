package tir

import (
	"fmt"
	"math"
)

// IntrDSPAddLUT is TFLite's int8 ADD or SUB on n contiguous elements with
// each input's rescaling looked up and the output's requantization one
// SMMLA:
//
//	dsp_addlut_s8(y, a, b *int8, n, t1, t2 *int32, m, A, D, T, lo, hi):
//	for i < n: s = t1[a[i] + 128] + t2[b[i] + 128]
//	           y[i] = clamp((⌊s·m / 2^32⌋ + A − [s < 0]·D) >> T, lo, hi)
//
// The tables hold TFLite's per-input values (requant((v + offset)·2^ls,
// m_k, s_k), negated for SUB's second input) times 2^j; A, D and T are
// IntrDSPRequant's constants for the output's multiplier and shift scaled
// the same way (DSPGemmSNName's derivation, tir/dsp_gemm_shift.go), with
// the zero point as A's zp·2^T. dspAddLUT checks every one of the 65,536
// input pairs against TFLite's formula at compile time, and D is 0 where
// the sign correction changes no output (a fused ReLU's).
//
// The generic lowering with the same tables (knob lut) took 17
// instructions an element on mps2-an386: a 64-bit requantization (two
// SMLALs, a shift), an index add per table and a loop per dimension.
const IntrDSPAddLUT = "dsp_addlut_s8"

// IntrMVEAddLUT is IntrDSPAddLUT on the M55, four lanes at a time: the
// tables indexed by each input byte read as unsigned (two VLDRB.U32 and
// two gathers), the output by VMULH, a VADD and a VSHL:
//
//	mve_addlut_s8(y, a, b *int8, n, t1, t2 *int32, m, A, D, T, lo, hi):
//	for i < n: s = t1[a[i] & 255] + t2[b[i] & 255], y[i] as IntrDSPAddLUT's
//
// (the tables are IntrDSPAddLUT's, rotated by 128 entries). IC's first Add
// on mps3-an547: 110,617 → 65,566 instructions, TFLite's three
// requantizations in vector form before.
const IntrMVEAddLUT = "mve_addlut_s8"

func init() {
	lut := func(name string, index func(x int64) int64) func(a []val) val {
		return func(a []val) val {
			y, x1, x2, n, t1, t2 := a[0], a[1], a[2], a[3].i, a[4], a[5]
			m, A, D, T, lo, hi := a[6].i, a[7].i, a[8].i, a[9].i, a[10].i, a[11].i
			if T < 1 || T > 31 || m < 0 || m > math.MaxInt32 || lo < -128 || hi > 127 || lo > hi {
				panic(fmt.Sprintf("%s: shift %d, multiplier %d, range [%d, %d]", name, T, m, lo, hi))
			}
			for i := int64(0); i < n; i++ {
				s := t1.p.I[t1.i+index(x1.p.I[x1.i+i])] + t2.p.I[t2.i+index(x2.p.I[x2.i+i])]
				v, ok := addLUTOut(s, m, A, D, T, lo, hi)
				if !ok {
					panic("int32 overflow in " + name)
				}
				y.p.I[y.i+i] = v
			}
			return val{}
		}
	}
	extIntrinsics[IntrDSPAddLUT] = lut(IntrDSPAddLUT, func(x int64) int64 { return x + 128 })
	extIntrinsics[IntrMVEAddLUT] = lut(IntrMVEAddLUT, func(x int64) int64 { return x & 255 })
}

// addLUTOut is one output of IntrDSPAddLUT from the table sum s; ok is
// false where the C would leave int32.
func addLUTOut(s, m, A, D, T, lo, hi int64) (int64, bool) {
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, false
	}
	v := (s*m)>>32 + A
	if s < 0 {
		v -= D
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, false
	}
	return min(max(v>>T, lo), hi), true
}

// addLUTSpec is one ADD or SUB as matchAddSub reads it.
type addLUTSpec struct {
	oa, ob, ls, m1, s1, m2, s2 int32
	sub                        bool
	mo, so, zp, lo, hi         int32
}

// ref is TFLite's output for inputs a and b (KAddSub's semantics).
func (p addLUTSpec) ref(u1, u2 int32) int64 {
	u := u1 + u2
	r := int64(RequantQ(u, p.mo, p.so)) + int64(p.zp)
	return min(max(r, int64(p.lo)), int64(p.hi))
}

// tables are the two inputs' rescaled values, v = −128..127 (the second
// negated for SUB).
func (p addLUTSpec) tables() (t1, t2 []int32) {
	t1, t2 = make([]int32, 256), make([]int32, 256)
	for v := int32(-128); v < 128; v++ {
		t1[v+128] = RequantQ((v+p.oa)*p.ls, p.m1, p.s1)
		t2[v+128] = RequantQ((v+p.ob)*p.ls, p.m2, p.s2)
		if p.sub {
			t2[v+128] = -t2[v+128]
		}
	}
	return t1, t2
}

// plan picks the scale 2^j and the output constants, then checks all
// 65,536 input pairs against ref; ok is false when no j in [2, 8] gives
// every one (the caller keeps the generic lowering).
func (p addLUTSpec) plan() (t1, t2 []int64, m, A, D, T int64, ok bool) {
	if p.so > 0 || p.mo < 0 {
		return nil, nil, 0, 0, 0, 0, false
	}
	r1, r2 := p.tables()
	want := make([]int64, 0, 65536)
	for _, u1 := range r1 {
		for _, u2 := range r2 {
			want = append(want, p.ref(u1, u2))
		}
	}
	e := int64(-p.so)
	m = int64(p.mo)
	for j := int64(2); j <= 8; j++ {
		T = e - 1 + j
		if e == 0 {
			T = j - 1
		}
		if T < 1 || T > 31 {
			continue
		}
		A = int64(1)<<(j-2) + int64(p.zp)<<T
		D = 0
		if e >= 1 {
			A += int64(1) << (j - 2 + e)
			D = int64(1) << (j - 1)
		}
		if A > math.MaxInt32 || A < math.MinInt32 {
			continue
		}
		t1, t2 = make([]int64, 256), make([]int64, 256)
		fit := true
		for i := range r1 {
			t1[i], t2[i] = int64(r1[i])<<j, int64(r2[i])<<j
			fit = fit && t1[i] <= math.MaxInt32 && t1[i] >= math.MinInt32 && t2[i] <= math.MaxInt32 && t2[i] >= math.MinInt32
		}
		if !fit {
			break
		}
		check := func(D int64) bool {
			k := 0
			for _, a := range t1 {
				for _, b := range t2 {
					v, ok := addLUTOut(a+b, m, A, D, T, int64(p.lo), int64(p.hi))
					if !ok || v != want[k] {
						return false
					}
					k++
				}
			}
			return true
		}
		// Without the sign correction where no output needs it.
		if D != 0 && check(0) {
			return t1, t2, m, A, 0, T, true
		}
		if check(D) {
			return t1, t2, m, A, D, T, true
		}
	}
	return nil, nil, 0, 0, 0, 0, false
}

// dspAddLUT tensorizes an int8 ADD or SUB whose operands have the output's
// shape (simdAddSub's match) into one IntrDSPAddLUT call over the
// flattened elements; ok is false when the layer is not one, or when the
// compile-time check refuses it.
func dspAddLUT(f *PrimFunc) (*PrimFunc, bool) {
	g, loop, n, err := elementLoop(f)
	if err != nil {
		return nil, false
	}
	// Runs of fewer than four (a two-channel constant broadcast over the
	// pixels: a call per pixel) pay the call's set-up per element and
	// leave the folded constant's table to the generic form: 14,610 →
	// 19,265 instructions for 24×24×2 + a constant (a review).
	if n < 4 {
		return nil, false
	}
	call, err := matchAddSub(loop.Body.(*Store), loop.Var, n, "dsp")
	if err != nil {
		return nil, false
	}
	lut, ok := addLUTCall(f, call, n, IntrDSPAddLUT)
	if !ok {
		return nil, false
	}
	g.Body = replaceStmt(g.Body, loop, func(Stmt) Stmt { return &Evaluate{X: lut} })
	return g, true
}

// addLUTCall is the IntrDSPAddLUT or IntrMVEAddLUT (name) call for the
// ADD or SUB matchAddSub matched as call over n elements, with its tables
// (rotated to unsigned byte order for the M55's); ok is false where the
// compile-time check refuses it.
func addLUTCall(f *PrimFunc, call Expr, n int64, name string) (Expr, bool) {
	args := call.(*Intrinsic).Args
	c := make([]int32, 13)
	for i := range c {
		v, _ := IsConst(args[4+i])
		c[i] = int32(v)
	}
	p := addLUTSpec{oa: c[0], ob: c[1], ls: c[2], m1: c[3], s1: c[4], m2: c[5], s2: c[6], sub: c[7] != 0,
		mo: c[8], so: c[9], zp: c[10], lo: c[11], hi: c[12]}
	t1, t2, m, A, D, T, ok := p.plan()
	if !ok {
		return nil, false
	}
	if name == IntrMVEAddLUT {
		rot := func(t []int64) []int64 { return append(append([]int64{}, t[128:]...), t[:128]...) }
		t1, t2 = rot(t1), rot(t2)
	}
	b1 := constBuf(f.Name+"_lut1", I32, []int{256}, t1)
	b2 := constBuf(f.Name+"_lut2", I32, []int{256}, t2)
	return Call(name, I32, args[0], args[1], args[2], C(n), ptr(b1, C(0)), ptr(b2, C(0)),
		C(m), C(A), C(D), C(T), C(int64(p.lo)), C(int64(p.hi))), true
}
