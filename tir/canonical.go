package tir

import "sort"

// Canonical rewrites an int32 expression built from + − and multiplication
// by constants as Σ cᵢ·termᵢ + c₀, terms in a stable order, so that index
// arithmetic folds into one sum with one constant. Other expressions are
// returned unchanged (their sub-expressions are not visited).
func Canonical(e Expr) Expr {
	if e.Type() != I32 {
		return e
	}
	lf := linear(e)
	return lf.expr()
}

type linForm struct {
	terms map[string]*linTerm
	c     int64
}

type linTerm struct {
	e    Expr
	coef int64
	ord  int
}

func constForm(c int64) *linForm { return &linForm{terms: map[string]*linTerm{}, c: c} }

func linear(e Expr) *linForm {
	switch x := e.(type) {
	case *IntImm:
		return constForm(x.V)
	case *Binary:
		switch x.Op {
		case OpAdd, OpSub:
			a, b := linear(x.A), linear(x.B)
			s := int64(1)
			if x.Op == OpSub {
				s = -1
			}
			a.add(b, s)
			return a
		case OpMul:
			a, b := linear(x.A), linear(x.B)
			if len(b.terms) == 0 {
				a.scale(b.c)
				return a
			}
			if len(a.terms) == 0 {
				b.scale(a.c)
				return b
			}
		}
	}
	f := constForm(0)
	f.terms[String(e)] = &linTerm{e: e, coef: 1, ord: termOrder(e)}
	return f
}

func termOrder(e Expr) int {
	if _, ok := e.(*Var); ok {
		return 0
	}
	return 1
}

func (f *linForm) add(g *linForm, s int64) {
	f.c += s * g.c
	for k, t := range g.terms {
		if u, ok := f.terms[k]; ok {
			u.coef += s * t.coef
		} else {
			f.terms[k] = &linTerm{e: t.e, coef: s * t.coef, ord: t.ord}
		}
	}
}

func (f *linForm) scale(c int64) {
	f.c *= c
	for _, t := range f.terms {
		t.coef *= c
	}
}

func (f *linForm) expr() Expr {
	keys := make([]string, 0, len(f.terms))
	for k, t := range f.terms {
		if t.coef != 0 {
			keys = append(keys, k)
		}
	}
	// Largest coefficient first (outer loops first), then by name.
	sort.Slice(keys, func(i, j int) bool {
		a, b := f.terms[keys[i]], f.terms[keys[j]]
		if a.ord != b.ord {
			return a.ord > b.ord
		}
		if abs64(a.coef) != abs64(b.coef) {
			return abs64(a.coef) > abs64(b.coef)
		}
		return keys[i] < keys[j]
	})
	var out Expr
	for _, k := range keys {
		t := f.terms[k]
		c := t.coef
		neg := c < 0 && out != nil
		if neg {
			c = -c
		}
		var term Expr = t.e
		if c != 1 {
			term = &Binary{Op: OpMul, A: t.e, B: C(c)}
		}
		switch {
		case out == nil:
			out = term
		case neg:
			out = &Binary{Op: OpSub, A: out, B: term}
		default:
			out = &Binary{Op: OpAdd, A: out, B: term}
		}
	}
	if out == nil {
		return C(f.c)
	}
	if f.c > 0 {
		out = &Binary{Op: OpAdd, A: out, B: C(f.c)}
	} else if f.c < 0 {
		out = &Binary{Op: OpSub, A: out, B: C(-f.c)}
	}
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
