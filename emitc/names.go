package emitc

import (
	"fmt"
	"strings"
)

var cKeywords = map[string]bool{
	"auto": true, "break": true, "case": true, "char": true, "const": true, "continue": true,
	"default": true, "do": true, "double": true, "else": true, "enum": true, "extern": true,
	"float": true, "for": true, "goto": true, "if": true, "inline": true, "int": true,
	"long": true, "register": true, "restrict": true, "return": true, "short": true,
	"signed": true, "sizeof": true, "static": true, "struct": true, "switch": true,
	"typedef": true, "union": true, "unsigned": true, "void": true, "volatile": true,
	"while": true, "_Bool": true, "_Complex": true, "_Imaginary": true,
	// names the generated code itself uses
	"in": true, "out": true, "arena": true, "main": true,
}

func init() {
	// The C library names the generated code can see (math.h with its float
	// forms, string.h, stdint.h, stddef.h): a tensor named "exp" or "pow"
	// must not shadow or redeclare them.
	for _, f := range []string{"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "cosh", "sinh", "tanh",
		"acosh", "asinh", "atanh", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "pow", "sqrt",
		"cbrt", "hypot", "erf", "erfc", "tgamma", "lgamma", "ceil", "floor", "round", "rint", "trunc",
		"nearbyint", "lround", "lrint", "fabs", "fmod", "remainder", "fmax", "fmin", "fma", "frexp",
		"ldexp", "modf", "copysign", "nan"} {
		cKeywords[f], cKeywords[f+"f"] = true, true
	}
	for _, f := range []string{"signbit", "isnan", "isinf", "isfinite", "memcpy", "memset", "memmove",
		"memcmp", "strlen", "size_t", "ptrdiff_t", "offsetof", "NULL", "int8_t", "uint8_t", "int16_t",
		"uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "intptr_t", "uintptr_t", "bool", "true",
		"false", "abs", "labs", "div"} {
		cKeywords[f] = true
	}
}

// Ident turns any name into a valid C identifier: ASCII letters, digits and
// underscores, not starting with a digit, never a keyword. Runs of other
// characters become one underscore; non-ASCII letters are spelled as their
// code point so that different names stay different.
func Ident(s string) string {
	var sb strings.Builder
	lastUnderscore := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
			lastUnderscore = false
		case r == '_':
			sb.WriteRune(r)
			lastUnderscore = true
		case r > 127:
			fmt.Fprintf(&sb, "u%04x", r)
			lastUnderscore = false
		default:
			if !lastUnderscore && sb.Len() > 0 {
				sb.WriteByte('_')
				lastUnderscore = true
			}
		}
	}
	out := strings.TrimRight(sb.String(), "_")
	if out == "" {
		out = "t"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "t_" + out
	}
	if cKeywords[out] {
		out += "_"
	}
	return out
}

// namer hands out unique identifiers.
type namer struct{ used map[string]bool }

func newNamer() *namer { return &namer{used: map[string]bool{}} }

func (n *namer) unique(base string) string {
	name := base
	for i := 1; n.used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	n.used[name] = true
	return name
}
