package tir

import (
	"fmt"
	"sort"
	"strings"
)

// String prints e in TIR text form.
func String(e Expr) string {
	var sb strings.Builder
	printExpr(&sb, e)
	return sb.String()
}

func printExpr(sb *strings.Builder, e Expr) {
	switch x := e.(type) {
	case *IntImm:
		if x.T == I32 {
			fmt.Fprintf(sb, "%d", x.V)
		} else {
			fmt.Fprintf(sb, "%s(%d)", x.T, x.V)
		}
	case *FloatImm:
		fmt.Fprintf(sb, "%gf", x.V)
	case *Var:
		sb.WriteString(x.Name)
	case *Binary:
		if x.Op == OpMin || x.Op == OpMax {
			fmt.Fprintf(sb, "%s(", x.Op)
			printExpr(sb, x.A)
			sb.WriteString(", ")
			printExpr(sb, x.B)
			sb.WriteString(")")
			return
		}
		sb.WriteString("(")
		printExpr(sb, x.A)
		fmt.Fprintf(sb, " %s ", x.Op)
		printExpr(sb, x.B)
		sb.WriteString(")")
	case *Cast:
		fmt.Fprintf(sb, "%s(", x.T)
		printExpr(sb, x.X)
		sb.WriteString(")")
	case *Select:
		sb.WriteString("select(")
		printExpr(sb, x.Cond)
		sb.WriteString(", ")
		printExpr(sb, x.A)
		sb.WriteString(", ")
		printExpr(sb, x.B)
		sb.WriteString(")")
	case *Load:
		sb.WriteString(x.Buf.Name)
		printIndices(sb, x.Indices, x.Flat)
	case *Ptr:
		fmt.Fprintf(sb, "&%s{", x.Buf.Name)
		printExpr(sb, x.Index)
		sb.WriteString("}")
	case *Intrinsic:
		fmt.Fprintf(sb, "@%s(", x.Name)
		for i, a := range x.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			printExpr(sb, a)
		}
		sb.WriteString(")")
	default:
		fmt.Fprintf(sb, "<%T>", e)
	}
}

func printIndices(sb *strings.Builder, idx []Expr, flat bool) {
	if len(idx) == 0 {
		return
	}
	if flat {
		sb.WriteString("{")
	} else {
		sb.WriteString("[")
	}
	for i, a := range idx {
		if i > 0 {
			sb.WriteString(", ")
		}
		printExpr(sb, a)
	}
	if flat {
		sb.WriteString("}")
	} else {
		sb.WriteString("]")
	}
}

// Print returns the text form of f.
func (f *PrimFunc) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "func %s(", f.Name)
	for i, p := range f.Params {
		if i > 0 {
			sb.WriteString(", ")
		}
		mode := "in"
		if p.Writes {
			mode = "out"
		}
		fmt.Fprintf(&sb, "%s %s: %s%v", mode, p.Name, p.DType, p.Shape)
	}
	sb.WriteString(")")
	if f.Node != "" {
		fmt.Fprintf(&sb, "  // %s %q", f.Op, f.Node)
	}
	if len(f.Knobs) > 0 {
		keys := make([]string, 0, len(f.Knobs))
		for k := range f.Knobs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteString("\n  // knobs:")
		for _, k := range keys {
			fmt.Fprintf(&sb, " %s=%d", k, f.Knobs[k])
		}
	}
	sb.WriteString("\n")
	for _, c := range f.Consts() {
		fmt.Fprintf(&sb, "  const %s: %s%v\n", c.Name, c.DType, c.Shape)
	}
	printStmt(&sb, f.Body, 1)
	return sb.String()
}

// StmtString prints s in TIR text form.
func StmtString(s Stmt) string {
	var sb strings.Builder
	printStmt(&sb, s, 0)
	return sb.String()
}

func printStmt(sb *strings.Builder, s Stmt, depth int) {
	ind := strings.Repeat("  ", depth)
	switch x := s.(type) {
	case nil:
	case *For:
		kind := ""
		if x.Kind != Serial {
			kind = " " + x.Kind.String()
		}
		fmt.Fprintf(sb, "%sfor %s in %s..+%s%s:\n", ind, x.Var.Name, String(x.Min), String(x.Extent), kind)
		printStmt(sb, x.Body, depth+1)
	case *Seq:
		for _, c := range x.Stmts {
			printStmt(sb, c, depth)
		}
	case *Store:
		sb.WriteString(ind + x.Buf.Name)
		printIndices(sb, x.Indices, x.Flat)
		sb.WriteString(" = ")
		printExpr(sb, x.Value)
		sb.WriteString("\n")
	case *LetStmt:
		fmt.Fprintf(sb, "%slet %s: %s = %s\n", ind, x.Var.Name, x.Var.T, String(x.Value))
		printStmt(sb, x.Body, depth)
	case *IfThenElse:
		fmt.Fprintf(sb, "%sif %s:\n", ind, String(x.Cond))
		printStmt(sb, x.Then, depth+1)
		if x.Else != nil {
			fmt.Fprintf(sb, "%selse:\n", ind)
			printStmt(sb, x.Else, depth+1)
		}
	case *Evaluate:
		fmt.Fprintf(sb, "%s%s\n", ind, String(x.X))
	case *Allocate:
		fmt.Fprintf(sb, "%salloc %s: %s%v\n", ind, x.Buf.Name, x.Buf.DType, x.Buf.Shape)
		printStmt(sb, x.Body, depth)
	default:
		fmt.Fprintf(sb, "%s<%T>\n", ind, s)
	}
}

// String prints the whole module: kernels, then the entry's calls.
func (m *Module) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "module %q target=%s arena=%d\n", m.Name, m.Target, m.ArenaBytes)
	for _, f := range m.Funcs {
		sb.WriteString("\n")
		sb.WriteString(f.String())
	}
	sb.WriteString("\nentry:\n")
	for _, c := range m.Calls {
		fmt.Fprintf(&sb, "  %s(", c.Func.Name)
		for i, a := range c.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(m.WhereString(a))
		}
		sb.WriteString(")\n")
	}
	for _, o := range m.Outputs {
		if o.CopyFrom != nil {
			fmt.Fprintf(&sb, "  copy %s <- %s (%d bytes)\n", o.Name, m.WhereString(*o.CopyFrom), o.Bytes)
		}
	}
	return sb.String()
}

// WhereString describes a location: arena+OFF, or in:NAME / out:NAME.
func (m *Module) WhereString(w Where) string {
	if w.Arena {
		return fmt.Sprintf("arena+%d", w.Offset)
	}
	if w.Output {
		return "out:" + m.Outputs[w.IO].Name
	}
	return "in:" + m.Inputs[w.IO].Name
}
