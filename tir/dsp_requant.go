package tir

import (
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

func init() {
	extIntrinsics[IntrDSPRequantP] = func(a []val) val {
		x, p := a[0], a[1]
		P := func(k int64) int64 { return p.p.I[p.i+k] }
		k0 := int64(uint32(P(0))) + P(1)<<32
		return extIntrinsics[IntrDSPRequant]([]val{x, {i: P(2)}, {i: k0}, {i: P(3)}, a[2], a[3], a[4]})
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
		// Per-tensor parameters stay immediates.
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
	v := Call(IntrDSPRequantP, I32, rq.Args[0], ptr(buf, SimplifyExpr(Mul(idx, C(4)))), rq.Args[4], rq.Args[5], rq.Args[6])
	return &Store{Buf: st.Buf, Indices: st.Indices, Value: CastTo(graph.Int8, v), Flat: st.Flat}
}
