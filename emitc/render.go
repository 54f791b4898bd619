package emitc

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// ctype is the C type of a dtype.
func ctype(t tir.DType) string {
	switch t {
	case graph.Int8:
		return "int8_t"
	case graph.UInt8, graph.Bool:
		return "uint8_t"
	case graph.Int16:
		return "int16_t"
	case graph.Int32:
		return "int32_t"
	case graph.Int64:
		return "int64_t"
	case graph.Float32:
		return "float"
	}
	return "int32_t"
}

// typeTag is the short type name used in helper names.
func typeTag(t tir.DType) string {
	switch t {
	case graph.Float32:
		return "f32"
	case graph.Int64:
		return "i64"
	}
	return "i32"
}

// fnRenderer prints one PrimFunc. It decides nothing: every name and every
// loop comes from the TIR; it only picks C spellings.
type fnRenderer struct {
	sb      strings.Builder
	names   map[any]string // *tir.Var or *tir.Buffer -> C name
	scopes  []map[string]bool
	consts  map[*tir.Buffer]string
	helpers map[string]bool   // helper functions used
	extra   map[string]string // generated helpers (name -> C), e.g. typed dot products
	prefix  string
}

func (r *fnRenderer) inScope(name string) bool {
	for _, s := range r.scopes {
		if s[name] {
			return true
		}
	}
	return false
}

func (r *fnRenderer) declare(key any, base string) string {
	base = Ident(base)
	name := base
	for i := 1; r.inScope(name); i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	r.scopes[len(r.scopes)-1][name] = true
	r.names[key] = name
	return name
}

func (r *fnRenderer) push() { r.scopes = append(r.scopes, map[string]bool{}) }
func (r *fnRenderer) pop()  { r.scopes = r.scopes[:len(r.scopes)-1] }

func (r *fnRenderer) line(depth int, format string, a ...any) {
	r.sb.WriteString(strings.Repeat("    ", depth))
	fmt.Fprintf(&r.sb, format, a...)
	r.sb.WriteByte('\n')
}

func (r *fnRenderer) stmt(s tir.Stmt, depth int) error {
	switch x := s.(type) {
	case nil:
		return nil
	case *tir.Seq:
		for _, c := range x.Stmts {
			if err := r.stmt(c, depth); err != nil {
				return err
			}
		}
	case *tir.For:
		r.push()
		v := r.declare(x.Var, x.Var.Name)
		lo, err := r.expr(x.Min, 0)
		if err != nil {
			return err
		}
		var hi string
		if a, ok := tir.IsConst(x.Min); ok {
			if b, ok := tir.IsConst(x.Extent); ok {
				hi = strconv.FormatInt(a+b, 10)
			}
		}
		if hi == "" {
			if hi, err = r.expr(tir.Add(x.Min, x.Extent), precRel+1); err != nil {
				return err
			}
		}
		r.line(depth, "for (int32_t %s = %s; %s < %s; ++%s) {", v, lo, v, hi, v)
		if err := r.stmt(x.Body, depth+1); err != nil {
			return err
		}
		r.line(depth, "}")
		r.pop()
	case *tir.Store:
		lhs, err := r.access(x.Buf, x.Indices, x.Flat)
		if err != nil {
			return err
		}
		// acc = acc + v prints as acc += v.
		if b, ok := x.Value.(*tir.Binary); ok && (b.Op == tir.OpAdd || b.Op == tir.OpSub) {
			if l, ok := b.A.(*tir.Load); ok && l.Buf == x.Buf && sameIndices(l.Indices, x.Indices) {
				rhs, err := r.expr(b.B, precAssign+1)
				if err != nil {
					return err
				}
				op := "+="
				if b.Op == tir.OpSub {
					op = "-="
				}
				r.line(depth, "%s %s %s;", lhs, op, rhs)
				return nil
			}
		}
		rhs, err := r.expr(x.Value, precAssign+1)
		if err != nil {
			return err
		}
		r.line(depth, "%s = %s;", lhs, rhs)
	case *tir.LetStmt:
		val, err := r.expr(x.Value, precAssign+1)
		if err != nil {
			return err
		}
		name := r.declare(x.Var, x.Var.Name)
		r.line(depth, "const %s %s = %s;", ctype(x.Var.T), name, val)
		return r.stmt(x.Body, depth)
	case *tir.IfThenElse:
		c, err := r.expr(x.Cond, 0)
		if err != nil {
			return err
		}
		r.line(depth, "if (%s) {", c)
		r.push()
		if err := r.stmt(x.Then, depth+1); err != nil {
			return err
		}
		r.pop()
		if x.Else != nil {
			r.line(depth, "} else {")
			r.push()
			if err := r.stmt(x.Else, depth+1); err != nil {
				return err
			}
			r.pop()
		}
		r.line(depth, "}")
	case *tir.Evaluate:
		e, err := r.expr(x.X, 0)
		if err != nil {
			return err
		}
		r.line(depth, "(void)%s;", e)
	case *tir.Allocate:
		name := r.declare(x.Buf, x.Buf.Name)
		if len(x.Buf.Shape) == 0 {
			// A scalar stored first thing is declared with that value.
			first, rest := splitFirst(x.Body)
			if st, ok := first.(*tir.Store); ok && st.Buf == x.Buf && !reads(st.Value, x.Buf) {
				v, err := r.expr(st.Value, precAssign+1)
				if err != nil {
					return err
				}
				r.line(depth, "%s %s = %s;", ctype(x.Buf.DType), name, v)
				return r.stmt(rest, depth)
			}
			r.line(depth, "%s %s;", ctype(x.Buf.DType), name)
		} else {
			r.line(depth, "%s %s[%d];", ctype(x.Buf.DType), name, x.Buf.Len())
		}
		return r.stmt(x.Body, depth)
	default:
		return fmt.Errorf("emitc: cannot print statement %T", s)
	}
	return nil
}

func sameIndices(a, b []tir.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if tir.String(a[i]) != tir.String(b[i]) {
			return false
		}
	}
	return true
}

func (r *fnRenderer) bufName(b *tir.Buffer) (string, error) {
	if b.Scope == tir.ScopeConst {
		if n, ok := r.consts[b]; ok {
			return n, nil
		}
		return "", fmt.Errorf("emitc: constant %s is not in the module", b.Name)
	}
	n, ok := r.names[b]
	if !ok {
		return "", fmt.Errorf("emitc: buffer %s is not declared", b.Name)
	}
	return n, nil
}

func (r *fnRenderer) access(b *tir.Buffer, idx []tir.Expr, flat bool) (string, error) {
	name, err := r.bufName(b)
	if err != nil {
		return "", err
	}
	if len(idx) == 0 {
		if len(b.Shape) == 0 && b.Scope == tir.ScopeLocal {
			return name, nil // a local scalar variable
		}
		return name + "[0]", nil // a pointer or an array, even of rank 0
	}
	if !flat {
		return "", fmt.Errorf("emitc: %s is accessed with %d indices: run tir.Flatten first", b.Name, len(idx))
	}
	i, err := r.expr(idx[0], 0)
	if err != nil {
		return "", err
	}
	return name + "[" + i + "]", nil
}

// C operator precedences (higher binds tighter).
const (
	precAssign  = 1
	precCond    = 3
	precOrOr    = 4
	precAndAnd  = 5
	precBitOr   = 6
	precBitXor  = 7
	precBitAnd  = 8
	precEq      = 9
	precRel     = 10
	precShift   = 11
	precAdd     = 12
	precMul     = 13
	precUnary   = 14
	precPostfix = 15
)

var binC = map[tir.BinOp]struct {
	op   string
	prec int
}{
	tir.OpAdd: {"+", precAdd}, tir.OpSub: {"-", precAdd}, tir.OpMul: {"*", precMul},
	tir.OpDiv: {"/", precMul}, tir.OpMod: {"%", precMul},
	tir.OpShl: {"<<", precShift}, tir.OpShr: {">>", precShift},
	tir.OpAnd: {"&", precBitAnd}, tir.OpOr: {"|", precBitOr}, tir.OpXor: {"^", precBitXor},
	tir.OpLT: {"<", precRel}, tir.OpLE: {"<=", precRel}, tir.OpGT: {">", precRel}, tir.OpGE: {">=", precRel},
	tir.OpEQ: {"==", precEq}, tir.OpNE: {"!=", precEq},
}

func paren(s string, prec, need int) string {
	if prec < need {
		return "(" + s + ")"
	}
	return s
}

func intLit(t tir.DType, v int64) string {
	switch {
	case t == graph.Int64 && v == math.MinInt64:
		return "INT64_MIN" // -9223372036854775808 is the negation of a constant too large for int64
	case t == graph.Int64:
		return fmt.Sprintf("INT64_C(%d)", v)
	case v == math.MinInt32:
		return "INT32_MIN"
	}
	return strconv.FormatInt(v, 10)
}

func floatLit(f float32) string {
	switch {
	case math.IsInf(float64(f), 1):
		return "HUGE_VALF"
	case math.IsInf(float64(f), -1):
		return "-HUGE_VALF"
	case math.IsNaN(float64(f)):
		return "NAN"
	}
	s := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(s, ".en") {
		s += ".0"
	}
	return s + "f"
}

// expr prints e; need is the precedence the context requires.
func (r *fnRenderer) expr(e tir.Expr, need int) (string, error) {
	switch x := e.(type) {
	case *tir.IntImm:
		s := intLit(x.T, x.V)
		if x.V < 0 {
			return paren(s, precUnary, need), nil
		}
		return s, nil
	case *tir.FloatImm:
		s := floatLit(x.V)
		if strings.HasPrefix(s, "-") {
			return paren(s, precUnary, need), nil
		}
		return s, nil
	case *tir.Var:
		n, ok := r.names[x]
		if !ok {
			return "", fmt.Errorf("emitc: variable %s is not bound", x.Name)
		}
		return n, nil
	case *tir.Load:
		return r.access(x.Buf, x.Indices, x.Flat)
	case *tir.Cast:
		s, err := r.expr(x.X, precUnary)
		if err != nil {
			return "", err
		}
		return paren("("+ctype(x.T)+")"+s, precUnary, need), nil
	case *tir.Select:
		c, err := r.expr(x.Cond, precCond+1)
		if err != nil {
			return "", err
		}
		a, err := r.expr(x.A, precCond+1)
		if err != nil {
			return "", err
		}
		b, err := r.expr(x.B, precCond)
		if err != nil {
			return "", err
		}
		return paren(c+" ? "+a+" : "+b, precCond, need), nil
	case *tir.Ptr:
		name, err := r.bufName(x.Buf)
		if err != nil {
			return "", err
		}
		i, err := r.expr(x.Index, 0)
		if err != nil {
			return "", err
		}
		return paren("&"+name+"["+i+"]", precUnary, need), nil
	case *tir.Binary:
		return r.binary(x, need)
	case *tir.Intrinsic:
		return r.intrinsic(x)
	}
	return "", fmt.Errorf("emitc: cannot print expression %T", e)
}

func (r *fnRenderer) binary(x *tir.Binary, need int) (string, error) {
	t := x.A.Type()
	if x.Op == tir.OpMin || x.Op == tir.OpMax {
		name := "min_" + typeTag(t)
		if x.Op == tir.OpMax {
			name = "max_" + typeTag(t)
		}
		r.helpers[name] = true
		a, err := r.expr(x.A, 0)
		if err != nil {
			return "", err
		}
		b, err := r.expr(x.B, 0)
		if err != nil {
			return "", err
		}
		return name + "(" + a + ", " + b + ")", nil
	}
	if t == graph.Bool && (x.Op == tir.OpAnd || x.Op == tir.OpOr) {
		op, prec := "&&", precAndAnd
		if x.Op == tir.OpOr {
			op, prec = "||", precOrOr
		}
		// && inside || gets parentheses (gcc's -Wparentheses).
		la, lb := prec, prec+1
		if x.Op == tir.OpOr {
			la, lb = precAndAnd+1, precAndAnd+1
		}
		a, err := r.expr(x.A, la)
		if err != nil {
			return "", err
		}
		b, err := r.expr(x.B, lb)
		if err != nil {
			return "", err
		}
		return paren(a+" "+op+" "+b, prec, need), nil
	}
	info, ok := binC[x.Op]
	if !ok {
		return "", fmt.Errorf("emitc: operator %s", x.Op)
	}
	la, lb := info.prec, info.prec+1
	switch x.Op {
	case tir.OpShl, tir.OpShr, tir.OpAnd, tir.OpOr, tir.OpXor:
		// Shifts and bit operators get explicit parentheses around operands.
		la, lb = precUnary, precUnary
	}
	if x.Op.IsCompare() {
		// A comparison of comparisons gets parentheses (gcc's
		// -Wparentheses: "a < 0 != b < 0").
		la, lb = precRel+1, precRel+1
	}
	a, err := r.expr(x.A, la)
	if err != nil {
		return "", err
	}
	b, err := r.expr(x.B, lb)
	if err != nil {
		return "", err
	}
	return paren(a+" "+info.op+" "+b, info.prec, need), nil
}

func (r *fnRenderer) intrinsic(x *tir.Intrinsic) (string, error) {
	args := make([]string, len(x.Args))
	for i, a := range x.Args {
		s, err := r.expr(a, 0)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	var fn string
	switch x.Name {
	case tir.IntrExp:
		fn = "expf"
	case tir.IntrTanh:
		fn = "tanhf"
	case tir.IntrRound:
		fn = "roundf"
	case tir.IntrFloor:
		fn = "floorf"
	case tir.IntrPow:
		fn = "powf"
	case tir.IntrFmod:
		fn = "fmodf"
	case tir.IntrDot:
		px, ok1 := x.Args[0].(*tir.Ptr)
		pw, ok2 := x.Args[2].(*tir.Ptr)
		if !ok1 || !ok2 {
			return "", fmt.Errorf("emitc: dot needs two pointers")
		}
		fn = "dot_" + kernelTag(px.Buf.DType) + "_" + kernelTag(pw.Buf.DType)
		r.extra[fn] = dotHelper(fn, ctype(px.Buf.DType), ctype(pw.Buf.DType))
		r.helpers[fn] = true
	case tir.IntrGenPairs:
		// A reduction of 16 or more steps takes the always-inline form:
		// clang, left to itself, called the helper, and its loops ran
		// with run-time r, n and np (the M3's KWS 7.6% slower, AD 9.9%).
		// Shorter ones are left to the compiler: VWW's n = 8 layer inlined
		// by clang took 87% more instructions (it unrolled every pair).
		fn = tir.IntrGenPairs
		if n, ok := x.Args[6].(*tir.IntImm); ok && n.V >= genPairsInlineN {
			fn += "_i"
		}
		r.helpers[fn] = true
	default:
		if name, ok := strings.CutPrefix(x.Name, tir.IntrLibm); ok {
			if _, known := tir.LibmFuncs[name]; known {
				fn = name + "f"
				break
			}
		}
		if _, ok := helperText[x.Name]; !ok {
			return "", fmt.Errorf("emitc: no C spelling for intrinsic %s", x.Name)
		}
		fn = x.Name
		r.helpers[x.Name] = true
	}
	return fn + "(" + strings.Join(args, ", ") + ")", nil
}

// genPairsInlineN is the least reduction length (n) whose gen_pairs_s8 calls
// take the always-inline form, gen_pairs_s8_i.
const genPairsInlineN = 16

func kernelTag(t tir.DType) string {
	if t == graph.UInt8 {
		return "u8"
	}
	return "s8"
}

func dotHelper(name, xt, wt string) string {
	return fmt.Sprintf(`/* Sum over i < n of (x[i*sx] + xo) * (w[i*sw] + wo). */
static inline int32_t %s(const %s *x, int32_t sx, const %s *w, int32_t sw, int32_t n, int32_t xo, int32_t wo)
{
    int32_t acc = 0;
    int32_t i;
    for (i = 0; i < n; ++i) {
        acc += ((int32_t)x[i * sx] + xo) * ((int32_t)w[i * sw] + wo);
    }
    return acc;
}`, name, xt, wt)
}

// splitFirst returns the first statement of s and what follows it.
func splitFirst(s tir.Stmt) (tir.Stmt, tir.Stmt) {
	if q, ok := s.(*tir.Seq); ok && len(q.Stmts) > 0 {
		return q.Stmts[0], &tir.Seq{Stmts: q.Stmts[1:]}
	}
	return s, nil
}

// reads reports whether e loads b.
func reads(e tir.Expr, b *tir.Buffer) bool {
	found := false
	tir.VisitExprs(&tir.Evaluate{X: e}, func(e tir.Expr) {
		if l, ok := e.(*tir.Load); ok && l.Buf == b {
			found = true
		}
	})
	return found
}
