package tir

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

func TestFixedPointHandWorked(t *testing.T) {
	cases := []struct {
		name      string
		got, want int32
	}{
		{"srdhm(0.5, 0.5)", SRDHM(1<<30, 1<<30), 1 << 29},
		{"srdhm(min, min) saturates", SRDHM(math.MinInt32, math.MinInt32), math.MaxInt32},
		{"srdhm(3, 1<<30) = 1.5 rounds to 2", SRDHM(3, 1<<30), 2},
		{"srdhm(-3, 1<<30) = -1.5: the negative nudge 1-2^30 gives -1", SRDHM(-3, 1<<30), -1},
		{"rdivpot(5, 1) = 2.5 -> 3", RDivPOT(5, 1), 3},
		{"rdivpot(-5, 1) = -2.5 -> -3", RDivPOT(-5, 1), -3},
		{"rdivpot(7, 2) = 1.75 -> 2", RDivPOT(7, 2), 2},
		{"rdivpot(-6, 2) = -1.5 -> -2", RDivPOT(-6, 2), -2},
		{"requant(100, 0.5, 0)", RequantQ(100, 1<<30, 0), 50},
		{"requant(100, 0.5, -1)", RequantQ(100, 1<<30, -1), 25},
		{"requant(100, 0.5, 2)", RequantQ(100, 1<<30, 2), 200},
		{"exp(0) = 1", ExpNeg(0), math.MaxInt32},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// exp(-1) in Q5.26 input is -(1<<26); the Q0.31 result is close to e^-1.
	if got := float64(ExpNeg(-(1 << 26))) / (1 << 31); math.Abs(got-math.Exp(-1)) > 1e-6 {
		t.Errorf("exp(-1) = %g", got)
	}
	// 1/(1+x) at x = 0.5.
	if got := float64(OneOverOnePlusX(1<<30)) / (1 << 31); math.Abs(got-2.0/3) > 1e-6 {
		t.Errorf("1/(1+0.5) = %g", got)
	}
}

// TestInterpreterCSemantics checks the interpreter's integer rules against
// what C on a two's-complement target does.
func TestInterpreterCSemantics(t *testing.T) {
	out := NewBuffer("out", I32, []int{6}, ScopeParam)
	out.Writes = true
	body := Block(
		Put(out, CastTo(I32, CastTo(I8, C(200))), C(0)), // (int8_t)200 == -56
		Put(out, Div(C(-7), NewConstVar(2)), C(1)),      // -7 / 2 == -3
		Put(out, Mod(C(-7), NewConstVar(2)), C(2)),      // -7 % 2 == -1
		Put(out, Shr(C(-7), NewConstVar(1)), C(3)),      // -7 >> 1 == -4
		Put(out, Sel(LT(C(3), C(4)), C(10), C(20)), C(4)),
		Put(out, Call(IntrRequant, I32, C(-100), C(1<<30), C(-1)), C(5)), // -25
	)
	f := &PrimFunc{Name: "sem", Params: []*Buffer{out}, Body: body}
	d := graph.NewData(I32, []int{6})
	if err := Run(f, []*graph.Data{d}); err != nil {
		t.Fatal(err)
	}
	want := []int64{-56, -3, -1, -4, 10, -25}
	for i, w := range want {
		if d.I[i] != w {
			t.Errorf("out[%d] = %d, want %d", i, d.I[i], w)
		}
	}
}

// NewConstVar is a let-bound variable holding v, so the simplifier cannot fold it.
func NewConstVar(v int64) Expr {
	return &Intrinsic{Name: IntrRDivPOT, T: I32, Args: []Expr{C(v), C(0)}}
}

func TestInterpreterDotProduct(t *testing.T) {
	x := NewBuffer("x", I8, []int{4}, ScopeParam)
	y := NewBuffer("y", I32, []int{1}, ScopeParam)
	y.Writes = true
	w := constBuf("w", I8, []int{4}, []int64{1, -2, 3, -4})
	body := Scalar("acc", I32, func(acc *Buffer) Stmt {
		return Block(Put(acc, C(10)),
			Loop("k", 4, func(k Expr) Stmt { return Put(acc, Add(At(acc), Mul(ld(x, k), ld(w, k)))) }),
			Put(y, At(acc), C(0)))
	})
	f := &PrimFunc{Name: "dot", Params: []*Buffer{x, y}, Body: body}
	xd := &graph.Data{DType: I8, Shape: []int{4}, I: []int64{5, 6, -7, 8}}
	yd := graph.NewData(I32, []int{1})
	if err := Run(f, []*graph.Data{xd, yd}); err != nil {
		t.Fatal(err)
	}
	// 10 + 5 - 12 - 21 - 32 = -50
	if yd.I[0] != -50 {
		t.Fatalf("dot = %d, want -50", yd.I[0])
	}
	if err := Run(f, []*graph.Data{graph.NewData(I8, []int{3}), yd}); err == nil {
		t.Fatal("a too-short buffer was accepted")
	}
}

func TestSimplify(t *testing.T) {
	i := NewVar("i")
	cases := []struct {
		in   Expr
		want string
	}{
		{Add(Mul(C(3), C(4)), C(1)), "13"},
		{Add(Add(i, C(0)), C(0)), "i"},
		{Mul(i, C(1)), "i"},
		{Mul(i, C(0)), "0"},
		{Add(Add(i, C(3)), C(-3)), "i"},
		{Sub(Add(i, C(5)), C(2)), "(i + 3)"},
		{Add(C(2), i), "(i + 2)"},
		{Min(C(3), C(9)), "3"},
		{Sel(LT(C(1), C(2)), i, C(0)), "i"},
		{CastTo(I8, C(300)), "int8(44)"},
	}
	for _, c := range cases {
		if got := String(SimplifyExpr(c.in)); got != c.want {
			t.Errorf("simplify %s = %s, want %s", String(c.in), got, c.want)
		}
	}
	// Dead code: an empty loop, a false condition, a one-trip loop.
	out := NewBuffer("o", I32, []int{4}, ScopeParam)
	s := Block(
		&For{Var: NewVar("a"), Min: C(0), Extent: C(0), Body: Put(out, C(1), C(0))},
		If(LT(C(2), C(1)), Put(out, C(2), C(0))),
		Loop("b", 1, func(b Expr) Stmt { return Put(out, C(3), b) }),
	)
	if got := strings.TrimSpace(StmtString(SimplifyStmt(s))); got != "o[0] = 3" {
		t.Errorf("dead code left: %q", got)
	}
}

func TestCanonical(t *testing.T) {
	i, j := NewVar("i"), NewVar("j")
	e := Add(Mul(Add(Mul(i, C(4)), Sub(j, C(1))), C(3)), C(5))
	if got := String(SimplifyExpr(Canonical(e))); got != "(((i * 12) + (j * 3)) + 2)" {
		t.Errorf("canonical = %s", got)
	}
}

func TestPruneConditions(t *testing.T) {
	out := NewBuffer("o", I32, []int{8}, ScopeParam)
	body := Loop("i", 4, func(i Expr) Stmt {
		return If(AllOf(GE(i, C(0)), LT(Add(i, C(1)), C(8))), Put(out, C(1), i))
	})
	f := PruneConditions(&PrimFunc{Name: "p", Params: []*Buffer{out}, Body: body})
	if strings.Contains(f.String(), "if") {
		t.Errorf("conditions that always hold survived:\n%s", f)
	}
}

func TestIdentSafePrinter(t *testing.T) {
	x := NewBuffer("x", F32, []int{2, 3}, ScopeParam)
	y := NewBuffer("y", F32, []int{2, 3}, ScopeParam)
	y.Writes = true
	f := &PrimFunc{Name: "relu", Params: []*Buffer{x, y}, Body: Loops([]string{"i", "j"}, []int{2, 3}, func(v []Expr) Stmt {
		return Put(y, Max(At(x, v...), F(0)), v...)
	})}
	want := "func relu(in x: float32[2 3], out y: float32[2 3])\n  for i in 0..+2:\n    for j in 0..+3:\n      y[i, j] = max(x[i, j], 0f)\n"
	if got := f.String(); got != want {
		t.Errorf("printer:\n%s\nwant\n%s", got, want)
	}
}
