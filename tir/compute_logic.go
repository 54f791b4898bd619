package tir

import "github.com/mcugen/mcugen/graph"

func init() {
	register(graph.Compare, computeCompare)
	register(graph.Logic, computeLogic)
	register(graph.Where, computeWhere)
}

// computeCompare: a bool (0/1 byte) per element of the broadcast shape.
// Quantized operands share their parameters (graph/interp checks), so the
// stored values compare as the real ones.
func computeCompare(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.CompareAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.CompareAttrs")
	}
	y, yt := k.output()
	x, err := k.operand(0, yt.Shape)
	if err != nil {
		return nil, err
	}
	z, err := k.operand(1, yt.Shape)
	if err != nil {
		return nil, err
	}
	op := map[string]func(a, b Expr) Expr{"Equal": EQ, "Less": LT, "Greater": GT, "LessOrEqual": LE, "GreaterOrEqual": GE}[a.Kind]
	if op == nil {
		return nil, k.errorf("unknown comparison %q", a.Kind)
	}
	xt, zt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if isInt(xt) != isInt(zt) {
		return nil, k.errorf("comparison of %s and %s", xt.DType, zt.DType)
	}
	k.f.Op = "compare"
	wide := func(b *Buffer, iv []Expr) Expr {
		if b.DType == F32 || b.DType == I64 {
			return At(b, iv...)
		}
		return CastTo(I64, At(b, iv...))
	}
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		return CastTo(graph.Bool, op(wide(x, iv), wide(z, iv)))
	}), nil
}

// computeLogic: And, Or, Xor of bools as bytes 0/1, and Not.
func computeLogic(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.LogicAttrs)
	if !ok || a == nil {
		return nil, k.errorf("missing *graph.LogicAttrs")
	}
	y, yt := k.output()
	x, err := k.operand(0, yt.Shape)
	if err != nil {
		return nil, err
	}
	k.f.Op = "logic"
	one := func(b *Buffer, iv []Expr) Expr { return NE(At(b, iv...), &IntImm{T: graph.Bool, V: 0}) }
	if a.Kind == "Not" {
		return elementwise(y, yt.Shape, func(iv []Expr) Expr {
			return CastTo(graph.Bool, EQ(At(x, iv...), &IntImm{T: graph.Bool, V: 0}))
		}), nil
	}
	z, err := k.operand(1, yt.Shape)
	if err != nil {
		return nil, err
	}
	op := map[string]func(a, b Expr) Expr{"And": And, "Or": Or, "Xor": NE}[a.Kind]
	if op == nil {
		return nil, k.errorf("unknown logic operator %q", a.Kind)
	}
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		return CastTo(graph.Bool, op(one(x, iv), one(z, iv)))
	}), nil
}

// computeWhere: cond ? x : y per element of the broadcast shape.
func computeWhere(k *kctx) (Stmt, error) {
	y, yt := k.output()
	c, err := k.operand(0, yt.Shape)
	if err != nil {
		return nil, err
	}
	a, err := k.operand(1, yt.Shape)
	if err != nil {
		return nil, err
	}
	b, err := k.operand(2, yt.Shape)
	if err != nil {
		return nil, err
	}
	k.f.Op = "where"
	return elementwise(y, yt.Shape, func(iv []Expr) Expr {
		return Sel(NE(At(c, iv...), &IntImm{T: graph.Bool, V: 0}), At(a, iv...), At(b, iv...))
	}), nil
}
