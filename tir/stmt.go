package tir

// Stmt is a statement of a PrimFunc body.
type Stmt interface{ isStmt() }

// ForKind says how a loop is to be run.
type ForKind uint8

const (
	Serial ForKind = iota
	// Unrolled loops are printed fully unrolled (or with an unroll pragma).
	Unrolled
	// Vectorized loops are meant for a target's SIMD lowering; generic code runs them serially.
	Vectorized
)

func (k ForKind) String() string { return [...]string{"serial", "unrolled", "vectorized"}[k] }

// For runs Body for Var = Min, Min+1, ..., Min+Extent-1.
type For struct {
	Var         *Var
	Min, Extent Expr
	Kind        ForKind
	Body        Stmt
}

// Seq runs statements in order.
type Seq struct{ Stmts []Stmt }

// Store writes Value to Buf at Indices (or a flat index when Flat).
type Store struct {
	Buf     *Buffer
	Indices []Expr
	Value   Expr
	Flat    bool
}

// LetStmt binds Var to Value within Body.
type LetStmt struct {
	Var   *Var
	Value Expr
	Body  Stmt
}

// IfThenElse runs Then when Cond holds, Else (may be nil) otherwise.
type IfThenElse struct {
	Cond       Expr
	Then, Else Stmt
}

// Evaluate evaluates an expression for its effect (intrinsic calls).
type Evaluate struct{ X Expr }

// Allocate declares a ScopeLocal buffer for the duration of Body.
type Allocate struct {
	Buf  *Buffer
	Body Stmt
}

func (*For) isStmt()        {}
func (*Seq) isStmt()        {}
func (*Store) isStmt()      {}
func (*LetStmt) isStmt()    {}
func (*IfThenElse) isStmt() {}
func (*Evaluate) isStmt()   {}
func (*Allocate) isStmt()   {}

// Loop builds a serial loop over [0, extent) with a fresh variable.
func Loop(name string, extent int, body func(i Expr) Stmt) Stmt {
	v := NewVar(name)
	return &For{Var: v, Min: C(0), Extent: C(int64(extent)), Body: body(v)}
}

// Loops builds a perfect nest over extents (outermost first).
func Loops(names []string, extents []int, body func(iv []Expr) Stmt) Stmt {
	vars := make([]Expr, len(extents))
	var build func(d int) Stmt
	build = func(d int) Stmt {
		if d == len(extents) {
			return body(vars)
		}
		return Loop(names[d], extents[d], func(i Expr) Stmt {
			vars[d] = i
			return build(d + 1)
		})
	}
	return build(0)
}

// Block makes a Seq, dropping nil statements and flattening nested Seqs.
func Block(ss ...Stmt) Stmt {
	var out []Stmt
	for _, s := range ss {
		switch s := s.(type) {
		case nil:
		case *Seq:
			out = append(out, s.Stmts...)
		default:
			out = append(out, s)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return &Seq{Stmts: out}
}

// Put stores v at b[idx...].
func Put(b *Buffer, v Expr, idx ...Expr) Stmt {
	if len(idx) != len(b.Shape) {
		panic("tir: store rank mismatch on " + b.Name)
	}
	return &Store{Buf: b, Indices: idx, Value: v}
}

// If builds a conditional without else.
func If(cond Expr, then Stmt) Stmt { return &IfThenElse{Cond: cond, Then: then} }

// Scalar declares a local scalar, runs body(s) with it.
func Scalar(name string, dt DType, body func(s *Buffer) Stmt) Stmt {
	b := NewBuffer(name, dt, nil, ScopeLocal)
	return &Allocate{Buf: b, Body: body(b)}
}

// Let binds a fresh int32-or-typed variable to v within body.
func Let(name string, v Expr, body func(x Expr) Stmt) Stmt {
	x := &Var{Name: name, T: v.Type()}
	return &LetStmt{Var: x, Value: v, Body: body(x)}
}
