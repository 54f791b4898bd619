package tir

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// IntrDSPRequantP is IntrDSPRequant with its per-channel parameters packed
// as four words at p (two LDRDs instead of three loads from three tables):
//
//	dsp_requant_s8p(x, p *int32, zr, lo, hi) =
//	    dsp_requant_s8(x, p[2], p[0] as uint32 + p[1]·2^32, p[3], zr, lo, hi)
//
// The C folds TFLite's sign correction into a second SMLAL.
const IntrDSPRequantP = "dsp_requant_s8p"

// IntrDSPRequantPR is IntrDSPRequantP for an output whose zero point
// zk + zr is at or below lo in every channel (a fused ReLU), without the
// sign correction:
//
//	dsp_requant_s8pr(x, p *int32, zr, lo, hi) = clamp(⌊(x·p[2] + k0) / 2^(32+p[3])⌋ + zr, lo, hi)
//
// For x >= 0 the correction is zero. For x < 0 (m >= 0, e = e1 + 1 >= 1),
// x·m + k0 <= 2^30 + 2^(30+e) + zk·2^(31+e) < (1 + zk)·2^(31+e), so the
// result is at most zk + zr, as TFLite's requant(x) + zp <= zp is: both
// clamp to lo. One SMLAL and a shift per output instead of two SMLALs.
const IntrDSPRequantPR = "dsp_requant_s8pr"

// IntrDSPRequantR is IntrDSPRequant's ReLU form (per-tensor parameters as
// immediates), under the same condition as IntrDSPRequantPR:
//
//	dsp_requant_s8r(x, m, k0, e1, zr, lo, hi) = clamp(⌊(x·m + k0) / 2^(32+e1)⌋ + zr, lo, hi)
const IntrDSPRequantR = "dsp_requant_s8r"

// reluRequant is the shared semantics of the ReLU forms.
func reluRequant(name string, x, m, k0, e1, zr, lo, hi int64) val {
	if m < 0 || m > math.MaxInt32 || e1 < 0 || e1 > 30 || lo < -128 || hi > 127 || lo > hi {
		panic(fmt.Sprintf("%s: multiplier %d, e1 %d, range [%d, %d]", name, m, e1, lo, hi))
	}
	// x·m + k0 must fit 64 bits (it does for an int32 x and a k0 with a
	// zero point folded in; the planar form's k0 also carries bias·m).
	if x != 0 && m != 0 && (math.MaxInt64-abs64(k0))/m < abs64(x) {
		panic(fmt.Sprintf("%s: int64 overflow", name))
	}
	y := (x*m+k0)>>(32+e1) + zr
	return val{i: min(max(y, lo, -128), hi, 127)}
}

// reluForm reports whether an output with zero point zk (folded in k0 for
// shift e1 + 1) + zr clamps at or above it.
func reluForm(k0, e1, zr, lo int64) bool {
	return (k0-dspRequantK0(e1+1, 0))>>(32+e1)+zr <= lo
}

func init() {
	extIntrinsics[IntrDSPRequantP] = func(a []val) val {
		x, p := a[0], a[1]
		P := func(k int64) int64 { return p.p.I[p.i+k] }
		k0 := int64(uint32(P(0))) + P(1)<<32
		return extIntrinsics[IntrDSPRequant]([]val{x, {i: P(2)}, {i: k0}, {i: P(3)}, a[2], a[3], a[4]})
	}
	extIntrinsics[IntrDSPRequantPR] = func(a []val) val {
		p := a[1]
		P := func(k int64) int64 { return p.p.I[p.i+k] }
		return reluRequant(IntrDSPRequantPR, a[0].i, P(2), int64(uint32(P(0)))+P(1)<<32, P(3), a[2].i, a[3].i, a[4].i)
	}
	extIntrinsics[IntrDSPRequantR] = func(a []val) val {
		return reluRequant(IntrDSPRequantR, a[0].i, a[1].i, a[2].i, a[3].i, a[4].i, a[5].i, a[6].i)
	}
}

// packRequant rewrites a store of fastRequant's IntrDSPRequant form as
// IntrDSPRequantP over one compile-time table of four words per channel;
// other stores (or parameters indexed differently) are returned unchanged.
func packRequant(st *Store) *Store {
	cast, ok := st.Value.(*Cast)
	if !ok || cast.T != graph.Int8 {
		return st
	}
	rq, ok := cast.X.(*Intrinsic)
	if !ok || rq.Name != IntrDSPRequant {
		return st
	}
	// The channel index shared by the per-channel parameters.
	var idx Expr
	n := 1
	var vals [3][]int64 // m, k0, e1
	for i, e := range rq.Args[1:4] {
		switch x := e.(type) {
		case *IntImm:
			vals[i] = []int64{x.V}
		case *Load:
			if x.Buf.Scope != ScopeConst || x.Buf.Data == nil || len(x.Buf.Shape) != 1 {
				return st
			}
			ix := x.Indices[0]
			if idx == nil {
				idx, n = ix, x.Buf.Shape[0]
			} else if String(idx) != String(ix) || n != x.Buf.Shape[0] {
				return st
			}
			vals[i] = x.Buf.Data.I
		default:
			return st
		}
	}
	if idx == nil {
		// Per-tensor parameters stay immediates (in the ReLU form where it applies).
		zr, ok1 := IsConst(rq.Args[4])
		lo, ok2 := IsConst(rq.Args[5])
		if ok1 && ok2 && reluForm(vals[1][0], vals[2][0], zr, lo) {
			v := Call(IntrDSPRequantR, I32, rq.Args...)
			return &Store{Buf: st.Buf, Indices: st.Indices, Value: CastTo(graph.Int8, v), Flat: st.Flat}
		}
		return st
	}
	at := func(v []int64, c int) int64 {
		if len(v) == 1 {
			return v[0]
		}
		return v[c]
	}
	tab := make([]int64, 0, 4*n)
	for c := 0; c < n; c++ {
		k0 := at(vals[1], c)
		tab = append(tab, int64(int32(uint32(k0))), k0>>32, at(vals[0], c), at(vals[2], c))
	}
	name := "requant"
	if l, ok := rq.Args[1].(*Load); ok {
		name = l.Buf.Name
	}
	buf := constBuf(name+"_rq4", I32, []int{4 * n}, tab)
	// The ReLU form where every channel's zero point is at or below the clamp.
	name = IntrDSPRequantP
	zr, ok1 := IsConst(rq.Args[4])
	lo, ok2 := IsConst(rq.Args[5])
	if ok1 && ok2 {
		name = IntrDSPRequantPR
		for c := 0; c < n; c++ {
			if !reluForm(at(vals[1], c), at(vals[2], c), zr, lo) {
				name = IntrDSPRequantP
			}
		}
	}
	v := Call(name, I32, rq.Args[0], ptr(buf, SimplifyExpr(Mul(idx, C(4)))), rq.Args[4], rq.Args[5], rq.Args[6])
	return &Store{Buf: st.Buf, Indices: st.Indices, Value: CastTo(graph.Int8, v), Flat: st.Flat}
}
