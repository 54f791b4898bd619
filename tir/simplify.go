package tir

// Simplify folds constants, applies arithmetic identities, removes dead code
// (empty loops, constant conditions, empty sequences), substitutes
// single-iteration loops and constant lets, and leaves every loop bound a
// number when it can be one. It never changes what f computes.
func Simplify(f *PrimFunc) *PrimFunc {
	g := *f
	g.Body = SimplifyStmt(f.Body)
	if g.Body == nil {
		g.Body = &Seq{}
	}
	return &g
}

// SimplifyStmt simplifies a statement (see Simplify). It may return nil.
func SimplifyStmt(s Stmt) Stmt {
	return RewriteStmt(s, simplifyNode, SimplifyNode)
}

func simplifyNode(s Stmt) Stmt {
	switch x := s.(type) {
	case *For:
		n, ok := IsConst(x.Extent)
		if ok && n <= 0 || x.Body == nil {
			return nil
		}
		if ok && n == 1 {
			return SimplifyStmt(Substitute(x.Body, map[*Var]Expr{x.Var: x.Min}))
		}
	case *Seq:
		switch len(x.Stmts) {
		case 0:
			return nil
		case 1:
			return x.Stmts[0]
		}
		return Block(x.Stmts...)
	case *IfThenElse:
		if c, ok := IsConst(x.Cond); ok {
			if c != 0 {
				return x.Then
			}
			return x.Else
		}
		if x.Then == nil && x.Else == nil {
			return nil
		}
	case *LetStmt:
		if x.Body == nil {
			return nil
		}
		switch x.Value.(type) {
		case *IntImm, *FloatImm, *Var:
			return SimplifyStmt(Substitute(x.Body, map[*Var]Expr{x.Var: x.Value}))
		}
	case *Allocate:
		if x.Body == nil {
			return nil
		}
	}
	return s
}

// SimplifyExpr simplifies an expression tree.
func SimplifyExpr(e Expr) Expr { return RewriteExpr(e, SimplifyNode) }

// SimplifyNode simplifies one node whose children are already simplified.
func SimplifyNode(e Expr) Expr {
	switch x := e.(type) {
	case *Binary:
		return simplifyBinary(x)
	case *Cast:
		if x.X.Type() == x.T {
			return x.X
		}
		if c, ok := x.X.(*IntImm); ok {
			if x.T == F32 {
				return &FloatImm{V: float32(c.V)}
			}
			return &IntImm{T: x.T, V: wrap(x.T, c.V)}
		}
		// int32(int8 value) widening of a narrower cast chain stays as is.
	case *Select:
		if c, ok := IsConst(x.Cond); ok {
			if c != 0 {
				return x.A
			}
			return x.B
		}
	}
	return e
}

func simplifyBinary(x *Binary) Expr {
	t := x.A.Type()
	ca, aok := x.A.(*IntImm)
	cb, bok := x.B.(*IntImm)
	if t == F32 {
		return x
	}
	if aok && bok {
		if v, ok := foldInt(x.Op, t, ca.V, cb.V); ok {
			rt := t
			if x.Op.IsCompare() {
				rt = B
			}
			return &IntImm{T: rt, V: v}
		}
		return x
	}
	// Constants go on the right of commutative operators.
	if aok && !bok {
		switch x.Op {
		case OpAdd, OpMul, OpMin, OpMax, OpAnd, OpOr, OpXor, OpEQ, OpNE:
			return simplifyBinary(&Binary{Op: x.Op, A: x.B, B: x.A})
		}
	}
	if bok {
		c := cb.V
		switch x.Op {
		case OpAdd, OpSub, OpShl, OpShr, OpOr, OpXor:
			if c == 0 {
				return x.A
			}
		case OpMul, OpDiv:
			if c == 1 {
				return x.A
			}
			if c == 0 && x.Op == OpMul {
				return &IntImm{T: t, V: 0}
			}
		case OpMod:
			if c == 1 {
				return &IntImm{T: t, V: 0}
			}
		case OpAnd:
			if t == B && c != 0 {
				return x.A
			}
			if t == B && c == 0 {
				return &IntImm{T: B, V: 0}
			}
		}
		// (y + c1) + c2 -> y + (c1+c2); (y - c1) + c2 likewise.
		if in, ok := x.A.(*Binary); ok && (x.Op == OpAdd || x.Op == OpSub) && (in.Op == OpAdd || in.Op == OpSub) {
			if c1, ok := in.B.(*IntImm); ok {
				v1 := c1.V
				if in.Op == OpSub {
					v1 = -v1
				}
				v2 := c
				if x.Op == OpSub {
					v2 = -v2
				}
				return simplifyBinary(&Binary{Op: OpAdd, A: in.A, B: &IntImm{T: t, V: wrap(t, v1+v2)}})
			}
		}
		// (y * c1) * c2 -> y * (c1*c2).
		if in, ok := x.A.(*Binary); ok && x.Op == OpMul && in.Op == OpMul {
			if c1, ok := in.B.(*IntImm); ok {
				return simplifyBinary(&Binary{Op: OpMul, A: in.A, B: &IntImm{T: t, V: wrap(t, c1.V*c)}})
			}
		}
		// y + (-c) prints as y - c.
		if x.Op == OpAdd && c < 0 && c != -1<<31 {
			return &Binary{Op: OpSub, A: x.A, B: &IntImm{T: t, V: -c}}
		}
	}
	if aok && ca.V == 0 && x.Op == OpAdd {
		return x.B
	}
	if aok && x.Op == OpAnd && t == B {
		if ca.V != 0 {
			return x.B
		}
		return &IntImm{T: B, V: 0}
	}
	return x
}

func foldInt(op BinOp, t DType, a, b int64) (int64, bool) {
	var r int64
	switch op {
	case OpAdd:
		r = a + b
	case OpSub:
		r = a - b
	case OpMul:
		r = a * b
	case OpDiv:
		if b == 0 {
			return 0, false
		}
		r = a / b
	case OpMod:
		if b == 0 {
			return 0, false
		}
		r = a % b
	case OpMin:
		r = min(a, b)
	case OpMax:
		r = max(a, b)
	case OpShl:
		if b < 0 || b > 62 || a < 0 {
			return 0, false
		}
		r = a << uint(b)
	case OpShr:
		if b < 0 || b > 62 {
			return 0, false
		}
		r = a >> uint(b)
	case OpAnd:
		r = a & b
	case OpOr:
		r = a | b
	case OpXor:
		r = a ^ b
	case OpLT:
		return b2i(a < b), true
	case OpLE:
		return b2i(a <= b), true
	case OpGT:
		return b2i(a > b), true
	case OpGE:
		return b2i(a >= b), true
	case OpEQ:
		return b2i(a == b), true
	case OpNE:
		return b2i(a != b), true
	}
	if w := wrap(t, r); w != r {
		return 0, false // would overflow: leave it for the run-time check
	}
	return r, true
}
