package tir

import "fmt"

// KAddSub(y *i8, a *i8, b *i8, n, oa, ob, ls, m1, s1, m2, s2, sub, mo, so, zp, lo, hi):
// TFLite's int8 ADD / SUB on n contiguous elements,
//
//	u = requant((a[i] + oa)·ls, m1, s1) ± requant((b[i] + ob)·ls, m2, s2)   (− when sub != 0)
//	y[i] = clamp(requant(u, mo, so) + zp, lo, hi).
const KAddSub = "addsub_s8"

func init() {
	for _, p := range SIMDPrefixes {
		extIntrinsics[p+"_"+KAddSub] = func(a []val) val {
			y, x1, x2, n := a[0], a[1], a[2], a[3].i
			c := make([]int32, 13)
			for i := range c {
				c[i] = int32(a[4+i].i)
			}
			oa, ob, ls, m1, s1, m2, s2, sub, mo, so, zp, lo, hi := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12]
			for i := int64(0); i < n; i++ {
				u := RequantQ((int32(x1.p.I[x1.i+i])+oa)*ls, m1, s1)
				v := RequantQ((int32(x2.p.I[x2.i+i])+ob)*ls, m2, s2)
				if sub != 0 {
					u -= v
				} else {
					u += v
				}
				r := int64(RequantQ(u, mo, so)) + int64(zp)
				y.p.I[y.i+i] = wrap(y.p.DType, min(max(r, int64(lo)), int64(hi)))
			}
			return val{}
		}
	}
}

// simdElementwise schedules int8 ADD / SUB whose operands have the output's
// shape: the loop nest is flattened into one contiguous run and tensorized
// into <prefix>_addsub_s8. Anything else keeps the fallback schedule.
func simdElementwise(prefix string, fallback ScheduleFunc) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		g, err := simdAddSub(f, prefix)
		if err != nil {
			if f.Knobs == nil {
				f.Knobs = map[string]int{}
			}
			f.Knobs["simd"] = 0
			if fallback == nil {
				return f, nil
			}
			return fallback(f)
		}
		if g.Knobs == nil {
			g.Knobs = map[string]int{}
		}
		g.Knobs["simd"] = 1
		return g, nil
	}
}

// elementLoop flattens f and fuses its contiguous loops, and returns the
// copy with its innermost element loop (a Store its body, from 0) and that
// loop's constant extent.
func elementLoop(f *PrimFunc) (*PrimFunc, *For, int64, error) {
	g := Flatten(PruneConditions(Simplify(f)))
	g.Body = fuseContiguous(g.Body)
	var loop *For
	VisitStmts(g.Body, func(s Stmt) {
		if l, ok := s.(*For); ok {
			if _, ok := l.Body.(*Store); ok {
				loop = l
			}
		}
	})
	if loop == nil {
		return nil, nil, 0, fmt.Errorf("no element loop")
	}
	n, ok := IsConst(loop.Extent)
	if lo, ok2 := IsConst(loop.Min); !ok || !ok2 || lo != 0 {
		return nil, nil, 0, fmt.Errorf("element loop bounds")
	}
	return g, loop, n, nil
}

func simdAddSub(f *PrimFunc, prefix string) (*PrimFunc, error) {
	g, loop, n, err := elementLoop(f)
	if err != nil {
		return nil, err
	}
	call, err := matchAddSub(loop.Body.(*Store), loop.Var, n, prefix)
	if err != nil {
		return nil, err
	}
	// On the M55 the tables where the compile-time check takes them
	// (IntrMVEAddLUT), over 2,048 elements or more: the two tables are 2 KB
	// of flash the vector form does without, and save 2.75 instructions an
	// element (a MobileNetV2 0.35's ten Adds, 504 to 4,608 elements, took
	// 11 KB for 0.4% of its instructions).
	def := 0
	if n >= 2048 {
		def = 1
	}
	if prefix == "mve" && n >= 4 && knob(g, "add_lut", def) != 0 {
		if lut, ok := addLUTCall(f, call, n, IntrMVEAddLUT); ok {
			call = lut
		}
	}
	g.Body = replaceStmt(g.Body, loop, func(Stmt) Stmt { return &Evaluate{X: call} })
	return g, nil
}

// addConst peels e ± constant.
func addConst(e Expr) (Expr, int64) {
	if b, ok := e.(*Binary); ok && (b.Op == OpAdd || b.Op == OpSub) {
		if c, ok := IsConst(b.B); ok {
			if b.Op == OpSub {
				c = -c
			}
			return b.A, c
		}
	}
	return e, 0
}

func matchAddSub(st *Store, i *Var, n int64, prefix string) (Expr, error) {
	bad := fmt.Errorf("not an int8 add/sub")
	ptr := func(buf *Buffer, idx Expr) (Expr, bool) {
		b, s, ok := affineIn(idx, i)
		if !ok || s != 1 || buf.DType != I8 {
			return nil, false
		}
		return &Ptr{Buf: buf, Index: b}, true
	}
	yp, ok := ptr(st.Buf, st.Indices[0])
	if !ok {
		return nil, bad
	}
	e, lo, hi, ok := splitClamp(st.Value)
	if !ok {
		return nil, bad
	}
	e, zp := addConst(e)
	rq := func(e Expr) (Expr, int64, int64, bool) {
		r, ok := e.(*Intrinsic)
		if !ok || r.Name != IntrRequant {
			return nil, 0, 0, false
		}
		m, ok1 := IsConst(r.Args[1])
		s, ok2 := IsConst(r.Args[2])
		return r.Args[0], m, s, ok1 && ok2
	}
	u, mo, so, ok := rq(e)
	if !ok {
		return nil, bad
	}
	sum, ok := u.(*Binary)
	if !ok || (sum.Op != OpAdd && sum.Op != OpSub) {
		return nil, bad
	}
	side := func(e Expr) (Expr, int64, int64, int64, int64, bool) {
		x, m, s, ok := rq(e)
		if !ok {
			return nil, 0, 0, 0, 0, false
		}
		mul, ok := x.(*Binary)
		if !ok || mul.Op != OpMul {
			return nil, 0, 0, 0, 0, false
		}
		ls, ok := IsConst(mul.B)
		if !ok {
			return nil, 0, 0, 0, 0, false
		}
		v, off := addConst(mul.A)
		c, ok := v.(*Cast)
		if !ok || c.T != I32 {
			return nil, 0, 0, 0, 0, false
		}
		l, ok := c.X.(*Load)
		if !ok || !l.Flat {
			return nil, 0, 0, 0, 0, false
		}
		p, ok := ptr(l.Buf, l.Indices[0])
		return p, off, ls, m, s, ok
	}
	ap, oa, ls1, m1, s1, ok1 := side(sum.A)
	bp, ob, ls2, m2, s2, ok2 := side(sum.B)
	if !ok1 || !ok2 || ls1 != ls2 {
		return nil, bad
	}
	var sub int64
	if sum.Op == OpSub {
		sub = 1
	}
	return Call(prefix+"_"+KAddSub, I32, yp, ap, bp, C(n), C(oa), C(ob), C(ls1), C(m1), C(s1), C(m2), C(s2), C(sub),
		C(mo), C(so), C(zp), C(lo), C(hi)), nil
}
