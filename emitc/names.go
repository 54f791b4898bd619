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
	// C++'s keywords and alternative tokens (and gcc's asm): the header is
	// included from C++ (Arduino sketches are C++), where a field named
	// "new" or "class" does not compile, and and/or/not are macros under
	// <iso646.h> in C too (user-journey finding).
	for _, k := range strings.Fields(`alignas alignof and and_eq asm bitand bitor catch char8_t char16_t char32_t
		class compl concept const_cast consteval constexpr constinit co_await co_return co_yield decltype
		delete dynamic_cast explicit export friend mutable namespace new noexcept not not_eq nullptr
		operator or or_eq private protected public reinterpret_cast requires static_assert static_cast
		template this thread_local throw try typeid typename using virtual xor xor_eq
		_Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local`) {
		cKeywords[k] = true
	}
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
	for _, f := range []string{"signbit", "isnan", "isinf", "isfinite", "isnormal", "fpclassify", "memcpy", "memset",
		"memmove", "memcmp", "strlen", "size_t", "ptrdiff_t", "wchar_t", "offsetof", "NULL", "intptr_t", "uintptr_t",
		"intmax_t", "uintmax_t", "bool", "true", "false", "abs", "labs", "div", "errno",
		// math.h macros
		"INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "FP_NAN", "FP_INFINITE", "FP_ZERO",
		"FP_SUBNORMAL", "FP_NORMAL", "FP_ILOGB0", "FP_ILOGBNAN", "MATH_ERRNO", "MATH_ERREXCEPT",
		"math_errhandling", "M_E", "M_PI", "M_PI_2", "M_PI_4", "M_1_PI", "M_2_PI", "M_LN2", "M_LN10",
		"M_LOG2E", "M_LOG10E", "M_SQRT2", "M_SQRT1_2", "M_2_SQRTPI",
		// stdint.h and stddef.h limits
		"INTPTR_MIN", "INTPTR_MAX", "UINTPTR_MAX", "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX",
		"PTRDIFF_MIN", "PTRDIFF_MAX", "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "SIZE_MAX", "WCHAR_MIN",
		"WCHAR_MAX", "WINT_MIN", "WINT_MAX", "INTMAX_C", "UINTMAX_C"} {
		cKeywords[f] = true
	}
	for _, b := range []string{"8", "16", "32", "64"} {
		for _, f := range []string{"int%_t", "uint%_t", "int_least%_t", "uint_least%_t", "int_fast%_t", "uint_fast%_t",
			"INT%_MIN", "INT%_MAX", "UINT%_MAX", "INT_LEAST%_MIN", "INT_LEAST%_MAX", "UINT_LEAST%_MAX",
			"INT_FAST%_MIN", "INT_FAST%_MAX", "UINT_FAST%_MAX", "INT%_C", "UINT%_C"} {
			cKeywords[strings.Replace(f, "%", b, 1)] = true
		}
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

// headerNames are headers a prefix must not be named after: <prefix>.h
// beside the generated C would hide them from every file compiled with
// that directory on its include path (a model named stdint.tflite broke
// its own build and the user's). The C99 and C11 library headers, POSIX's
// common ones, the ARM intrinsics headers the kernels include, and the
// runtime's and projects' own files.
var headerNames = map[string]bool{}

// ownHeaders are the runtime's and the projects' own headers among them.
var ownHeaders = map[string]bool{"crt": true, "crt_semihost": true, "mcugen_board": true, "mcugen_harness": true}

func init() {
	for _, h := range strings.Fields(`assert complex ctype errno fenv float inttypes iso646 limits locale math
		setjmp signal stdalign stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string
		tgmath threads time uchar wchar wctype unistd fcntl strings pthread sched alloca malloc memory
		endian features arm_acle arm_mve arm_neon arm_fp16 arm_bf16 arm_math arm_nnfunctions cmsis_compiler
		crt crt_semihost mcugen_board mcugen_harness main arm_cmse arm_compat cmsis_gcc cmsis_armcc
		cmsis_armclang cmsis_armclang_ltm cmsis_iccarm cmsis_clang cmsis_tiarmclang cmsis_csm cmsis_version
		mpu_armv7 mpu_armv8 pmu_armv8 pac_armv81 tz_context`) {
		headerNames[h] = true
	}
}

// cmsisCore reports whether h names one of CMSIS-Core's per-core headers
// (core_cm4.h, core_armv8mml.h, core_starmc1.h, ...), which a firmware
// built with CMSIS includes beside the generated code.
func cmsisCore(h string) bool {
	for _, p := range []string{"core_cm", "core_arm", "core_sc", "core_starmc"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// PrefixProblem says why p cannot be a C prefix, or "" if it can: not an
// identifier, reserved to the implementation (a leading _ and a capital,
// or two _), or the name of a header its <p>.h would hide.
func PrefixProblem(p string) string {
	switch {
	case len(p) > MaxPrefix:
		// Robustness journey: a 5,000-character prefix failed at the file's
		// creation, echoing the whole name.
		return fmt.Sprintf("is %d characters long; at most %d (it names the files and every external symbol): %q would do", len(p), MaxPrefix, SafePrefix(p))
	case cKeywords[p]:
		return fmt.Sprintf("is a C or C++ keyword, or a name the generated code or the C library already uses (main, in, out, arena, the math functions); %q would do", SafePrefix(p))
	case strings.HasSuffix(p, "_"):
		// Any trailing _ (int_ was taken, the keyword's suggested form,
		// and made int__run: multi-model journey).
		return fmt.Sprintf("ends in _: the names made from it (%s_run, %s_inputs) would hold __, which C++ reserves to the implementation; %q would do", p, p, SafePrefix(p))
	case Ident(p) != p:
		return fmt.Sprintf("is not a C identifier (letters, digits and _, not starting with a digit); %q would be", Ident(p))
	case strings.HasPrefix(p, "_"):
		// Any leading _: the macros are upper case (bare-metal journey:
		// _kws made _KWS_ARENA_SIZE and _KWS_H_).
		return fmt.Sprintf("starts with _: its macros (%s_ARENA_SIZE) would start with _ and a capital, which C reserves to the implementation; %q would do", strings.ToUpper(p), SafePrefix(p))
	case strings.Contains(p, "__"):
		return fmt.Sprintf("holds __, which C++ reserves to the implementation in every name; %q would do", SafePrefix(p))
	case ownHeaders[strings.ToLower(p)]:
		return fmt.Sprintf("%s.h, the generated header, would hide mcugen's own runtime header %s.h from everything compiled beside it", strings.ToLower(p), strings.ToLower(p))
	case headerNames[strings.ToLower(p)] || cmsisCore(strings.ToLower(p)):
		return fmt.Sprintf("%s.h, the generated header, would hide the system's <%s.h> from everything compiled beside it", strings.ToLower(p), strings.ToLower(p))
	}
	return ""
}

// MaxPrefix is the longest prefix taken: 63 characters, as many initial
// characters of an identifier as C99 guarantees significant (the compilers
// mcugen builds with keep them all; the bound keeps file names sane).
const MaxPrefix = 63

// MicroTVM reports whether prefix (as Options.Prefix, any case) asks for
// microTVM's API names: tvmgen_<module>, the prefix relay.build gave the AOT
// C interface of module <module> ("default" unless mod_name said otherwise).
// Then the header follows TVM v0.18's interface_c.cc (the last microTVM):
// members and size macros are named as microTVMIONames says, and
// <PREFIX>_WORKSPACE_SIZE is defined beside mcugen's own macros.
func MicroTVM(prefix string) bool {
	n, ok := strings.CutPrefix(strings.ToLower(prefix), "tvmgen_")
	return ok && n != ""
}

// microTVMSanitize is TVM's runtime SanitizeName: every byte that is not an
// ASCII letter or digit becomes '_' (a UTF-8 letter gives one '_' a byte),
// nothing is collapsed, trimmed or lowercased. TVM leaves it at that; mcugen
// also keeps the result a C identifier that names nothing the generated code
// sees (TVM's header would not compile for a name starting with a digit, or
// named "int" or "NULL").
func microTVMSanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	out := string(b)
	switch {
	case out == "":
		out = "t"
	case out[0] >= '0' && out[0] <= '9':
		out = "t_" + out
	}
	// The generated code's own names (in, out, arena, main) are safe as
	// members: it only ever reads in->NAME and out->NAME.
	if cKeywords[out] && !ownNames[out] {
		out += "_"
	}
	return out
}

var ownNames = map[string]bool{"in": true, "out": true, "arena": true, "main": true}

// SafePrefix is a prefix PrefixProblem takes, made from p: lower case, an
// identifier, without _ at either end or runs of _, and with _model added
// where that is still no prefix (a header's or keyword's name); "model"
// when nothing is left (review finding: _1x became 1x_model, not an
// identifier).
func SafePrefix(p string) string {
	clean := func(s string) string {
		s = strings.Trim(strings.ToLower(s), "_")
		for strings.Contains(s, "__") {
			s = strings.ReplaceAll(s, "__", "_")
		}
		return s
	}
	q := clean(Ident(p))
	if q == "" || clean(p) == "" {
		return "model"
	}
	q = clean(Ident(q)) // a leading digit, once the _ before it is gone
	if len(q) > MaxPrefix-len("_model") {
		q = clean(q[:MaxPrefix-len("_model")])
	}
	for _, c := range []string{q, q + "_model"} {
		if Ident(c) == c && PrefixProblem(c) == "" {
			return c
		}
	}
	return "model"
}
