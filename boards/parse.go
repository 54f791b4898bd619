package boards

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/bazelbuild/buildtools/build"
)

// The catalog language: top-level `NAME = <int expression>` constants and calls of
// family(...) and board(...) with keyword arguments. Values are strings, integers (with
// + - * // << | and parentheses over constants), True/False, lists, and calls of
// region(...), counter(...), uart(...), qemu(...) and reg(...).

type pos struct {
	file string
	line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

type kind int

const (
	kStr kind = iota
	kInt
	kBool
	kList
	kCall
)

var kindNames = [...]string{"a string", "an integer", "a bool", "a list", "a call"}

type value struct {
	kind   kind
	s      string
	i      int64
	b      bool
	list   []value
	call   string           // region, counter, uart, qemu, reg
	fields map[string]value // keyword arguments of a call
	at     pos
}

type def struct {
	name   string
	family bool
	fields map[string]value
	at     pos
}

type parser struct {
	consts map[string]value
	defs   map[string]*def
	order  []string
	built  int64 // bytes concatenation has allocated, against maxBuiltBytes

	resolved  map[string]map[string]value // resolve's results, by definition
	resolving map[string]bool             // definitions resolve is inside of
}

func newParser() *parser {
	return &parser{consts: map[string]value{}, defs: map[string]*def{},
		resolved: map[string]map[string]value{}, resolving: map[string]bool{}}
}

func errAt(at pos, format string, args ...any) error {
	return fmt.Errorf("boards: %s: %s", at, fmt.Sprintf(format, args...))
}

// posOf is where e starts. It follows the left spine itself: buildtools' Span does so
// recursively and computes the end too, which costs the whole spine at every node of a
// chain like 1 + 1 + ... + 1.
func posOf(file string, e build.Expr) pos {
	for {
		switch x := e.(type) {
		case *build.BinaryExpr:
			e = x.X
			continue
		case *build.AssignExpr:
			e = x.LHS
			continue
		case *build.CallExpr:
			e = x.X
			continue
		case *build.DotExpr:
			e = x.X
			continue
		case *build.IndexExpr:
			e = x.X
			continue
		case *build.SliceExpr:
			e = x.X
			continue
		case *build.UnaryExpr:
			return pos{file, x.OpStart.Line}
		case *build.TupleExpr:
			if x.NoBrackets && len(x.List) > 0 {
				e = x.List[0]
				continue
			}
			return pos{file, x.Start.Line}
		}
		start, _ := e.Span()
		return pos{file, start.Line}
	}
}

func (p *parser) parseFile(file string, data []byte) error {
	// A byte-order mark (some Windows editors write one) is not text of
	// the file (review: "expected a call of board(...)" on such a call).
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := checkShape(file, data); err != nil {
		return err
	}
	f, err := build.ParseDefault(file, data)
	if err != nil {
		return fmt.Errorf("boards: %w", err)
	}
	defs := 0
	for _, st := range f.Stmt {
		at := posOf(file, st)
		switch st := st.(type) {
		case *build.CommentBlock:
		case *build.AssignExpr:
			id, ok := st.LHS.(*build.Ident)
			if !ok || st.Op != "=" {
				return errAt(at, "only `NAME = value` assignments are allowed")
			}
			v, err := p.eval(file, st.RHS)
			if err != nil {
				return err
			}
			p.consts[id.Name] = v
		case *build.CallExpr:
			fn, ok := st.X.(*build.Ident)
			if !ok || (fn.Name != "board" && fn.Name != "family") {
				return errAt(at, "expected a call of board(...) or family(...)")
			}
			d := &def{family: fn.Name == "family", fields: map[string]value{}, at: at}
			if err := p.kwargs(file, st, d.fields, fieldKinds); err != nil {
				return err
			}
			name, ok := d.fields["name"]
			if !ok || name.s == "" {
				return errAt(at, "%s(...) needs a name", fn.Name)
			}
			// A name the command line can give: --board takes a list split at
			// commas, and a name with spaces, quotes or a newline broke
			// the boards table and the generated projects' text (a user
			// journey).
			if !boardName(name.s) {
				return errAt(at, "%s name %q: letters, digits, '.', '_', '+' and '-', starting with a letter or digit", fn.Name, name.s)
			}
			d.name = name.s
			if defs++; defs > maxDefs {
				return errAt(at, "more than %d boards and families in one file", maxDefs)
			}
			if old, dup := p.defs[d.name]; dup {
				return errAt(at, "%q is already defined at %s", d.name, old.at)
			}
			p.defs[d.name] = d
			p.order = append(p.order, d.name)
		default:
			return errAt(at, "unexpected statement: only constants, board(...) and family(...) are allowed")
		}
	}
	return nil
}

// fieldKinds lists the fields of board(...) and family(...) and the kinds they take.
var fieldKinds = map[string][]kind{
	"name": {kStr}, "description": {kStr}, "part": {kStr}, "inherits": {kStr, kList},
	"toolchain": {kStr}, "cpu": {kStr}, "arch": {kStr}, "fpu": {kStr}, "float_abi": {kStr},
	"cflags": {kList}, "features": {kList}, "memory": {kList}, "stack_bytes": {kInt},
	"counter": {kCall, kStr}, "uart": {kCall, kStr}, "qemu": {kCall, kStr},
	"zephyr": {kStr}, "arduino": {kStr}, "init": {kList}, "no_boot": {kStr},
}

// callKinds lists the helper calls and their keyword arguments.
var callKinds = map[string]map[string][]kind{
	"region":  {"name": {kStr}, "origin": {kInt}, "length": {kInt}, "holds": {kList}, "readonly": {kBool}},
	"counter": {"kind": {kStr}, "addr": {kInt}, "hz": {kInt}},
	"uart":    {"kind": {kStr}, "base": {kInt}, "baud": {kInt}, "clock_hz": {kInt}, "tx_pin": {kInt}},
	"reg":     {"addr": {kInt}, "mask": {kInt}, "value": {kInt}},
	"qemu":    {"binary": {kStr}, "machine": {kStr}, "args": {kList}, "icount_shift": {kInt}},
}

// callOrder lists each helper call's arguments in the order the docs give
// them, for the error that asks for keywords.
var callOrder = map[string][]string{
	"region":  {"name", "origin", "length", "holds", "readonly"},
	"counter": {"kind", "addr", "hz"},
	"uart":    {"kind", "base", "baud", "clock_hz", "tx_pin"},
	"reg":     {"addr", "mask", "value"},
	"qemu":    {"binary", "machine", "args", "icount_shift"},
}

func (p *parser) kwargs(file string, call *build.CallExpr, out map[string]value, schema map[string][]kind) error {
	for _, a := range call.List {
		at := posOf(file, a)
		as, ok := a.(*build.AssignExpr)
		if !ok {
			// Name the call's fields (template journey finding: the docs
			// wrote region(name, origin, ...) and the file was refused).
			if id, ok := call.X.(*build.Ident); ok && len(callOrder[id.Name]) > 0 {
				return errAt(at, "arguments must be keyword arguments (name = value): %s(%s = ...)", id.Name, strings.Join(callOrder[id.Name], " = ..., "))
			}
			return errAt(at, "arguments must be keyword arguments (name = value)")
		}
		id, ok := as.LHS.(*build.Ident)
		if !ok {
			return errAt(at, "argument name must be an identifier")
		}
		kinds, known := schema[id.Name]
		if !known {
			return errAt(at, "unknown field %q; known fields: %s", id.Name, strings.Join(sortedKeys(schema), ", "))
		}
		if _, dup := out[id.Name]; dup {
			return errAt(at, "field %q given twice", id.Name)
		}
		v, err := p.eval(file, as.RHS)
		if err != nil {
			return err
		}
		if !slices.Contains(kinds, v.kind) {
			var want []string
			for _, k := range kinds {
				want = append(want, kindNames[k])
			}
			return errAt(at, "field %q must be %s, not %s", id.Name, strings.Join(want, " or "), kindNames[v.kind])
		}
		out[id.Name] = v
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

func (p *parser) eval(file string, e build.Expr) (value, error) {
	at := posOf(file, e)
	switch e := e.(type) {
	case *build.StringExpr:
		return value{kind: kStr, s: e.Value, at: at}, nil
	case *build.LiteralExpr:
		if t := e.Token; len(t) > 1 && t[0] == '0' && t[1] >= '0' && t[1] <= '9' {
			// Starlark has no octal 0512 (Go's ParseInt read it as 330).
			return value{}, errAt(at, "number %q has a leading zero: write %s (Starlark writes octal as 0o...)", t, strings.TrimLeft(t, "0"))
		}
		n, err := strconv.ParseInt(e.Token, 0, 64)
		if err != nil {
			return value{}, errAt(at, "bad number %q", e.Token)
		}
		return value{kind: kInt, i: n, at: at}, nil
	case *build.Ident:
		switch e.Name {
		case "True", "False":
			return value{kind: kBool, b: e.Name == "True", at: at}, nil
		}
		if v, ok := p.consts[e.Name]; ok {
			v.at = at
			return v, nil
		}
		return value{}, errAt(at, "undefined name %q", e.Name)
	case *build.ParenExpr:
		return p.eval(file, e.X)
	case *build.UnaryExpr:
		x, err := p.eval(file, e.X)
		if err != nil {
			return value{}, err
		}
		if e.Op != "-" || x.kind != kInt {
			return value{}, errAt(at, "unsupported unary %q", e.Op)
		}
		if x.i == math.MinInt64 {
			return value{}, errAt(at, "integer overflow: -(%d) does not fit in 64 bits", x.i)
		}
		return value{kind: kInt, i: -x.i, at: at}, nil
	case *build.BinaryExpr:
		x, err := p.eval(file, e.X)
		if err != nil {
			return value{}, err
		}
		y, err := p.eval(file, e.Y)
		if err != nil {
			return value{}, err
		}
		opAt := pos{file, e.OpStart.Line}
		if x.kind == kStr && y.kind == kStr && e.Op == "+" {
			n := int64(len(x.s)) + int64(len(y.s))
			if n > maxStringBytes {
				return value{}, errAt(opAt, "string too long: %d bytes (at most %d)", n, maxStringBytes)
			}
			if err := p.build(opAt, n); err != nil {
				return value{}, err
			}
			return value{kind: kStr, s: x.s + y.s, at: at}, nil
		}
		if x.kind == kList && y.kind == kList && e.Op == "+" {
			n := int64(len(x.list)) + int64(len(y.list))
			if n > maxListLen {
				return value{}, errAt(opAt, "list too long: %d elements (at most %d)", n, maxListLen)
			}
			if err := p.build(opAt, n*valueBytes); err != nil {
				return value{}, err
			}
			return value{kind: kList, list: append(slices.Clip(x.list), y.list...), at: at}, nil
		}
		if x.kind != kInt || y.kind != kInt {
			return value{}, errAt(opAt, "operator %q needs integers", e.Op)
		}
		r, err := intOp(e.Op, x.i, y.i)
		if err != nil {
			return value{}, errAt(opAt, "%v", err)
		}
		return value{kind: kInt, i: r, at: at}, nil
	case *build.ListExpr:
		if len(e.List) > maxListLen {
			return value{}, errAt(at, "list too long: %d elements (at most %d)", len(e.List), maxListLen)
		}
		v := value{kind: kList, at: at}
		for _, x := range e.List {
			xv, err := p.eval(file, x)
			if err != nil {
				return value{}, err
			}
			v.list = append(v.list, xv)
		}
		return v, nil
	case *build.CallExpr:
		fn, ok := e.X.(*build.Ident)
		if !ok {
			return value{}, errAt(at, "unsupported call")
		}
		schema, ok := callKinds[fn.Name]
		if !ok {
			return value{}, errAt(at, "unknown function %q; known: %s", fn.Name, strings.Join(sortedKeys(callKinds), ", "))
		}
		v := value{kind: kCall, call: fn.Name, fields: map[string]value{}, at: at}
		if err := p.kwargs(file, e, v.fields, schema); err != nil {
			return value{}, err
		}
		return v, nil
	}
	return value{}, errAt(at, "%s is not taken in a board file (it takes numbers, strings, lists, True and False, names assigned earlier, integer arithmetic, + of strings and of lists, and calls such as board(...) and region(...))", exprKind(e))
}

// build charges n bytes of concatenation to the file's budget.
func (p *parser) build(at pos, n int64) error {
	if p.built += n; p.built > maxBuiltBytes {
		return errAt(at, "concatenation builds more than %d MiB of strings and lists", maxBuiltBytes>>20)
	}
	return nil
}

// intOp applies a binary operator to integers, refusing results that do not fit in 64
// bits (Starlark's integers do not wrap). // floors, as in Starlark.
func intOp(op string, x, y int64) (int64, error) {
	overflow := fmt.Errorf("integer overflow: %d %s %d does not fit in 64 bits", x, op, y)
	switch op {
	case "+":
		r := x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, overflow
		}
		return r, nil
	case "-":
		r := x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return 0, overflow
		}
		return r, nil
	case "*":
		if x == 0 || y == 0 {
			return 0, nil
		}
		r := x * y
		if r/y != x || x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 {
			return 0, overflow
		}
		return r, nil
	case "|":
		return x | y, nil
	case "<<":
		if y < 0 || y > 62 {
			return 0, fmt.Errorf("shift by %d", y)
		}
		if r := x << y; r>>y == x {
			return r, nil
		}
		return 0, overflow
	case "//":
		if y == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if x == math.MinInt64 && y == -1 {
			return 0, overflow
		}
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return q, nil
	}
	return 0, fmt.Errorf("unsupported operator %q", op)
}

// resolve merges the fields of d's parents (in order, later ones winning) and then d's
// own. Call-valued fields (qemu, counter, uart) merge argument by argument. seen is the
// chain of definitions being resolved, for the message about a cycle. Each definition is
// resolved once (a diamond of families would otherwise take exponential time); callers
// must not modify the map it returns.
func (p *parser) resolve(d *def, seen []string) (map[string]value, error) {
	if m, ok := p.resolved[d.name]; ok {
		return m, nil
	}
	if p.resolving[d.name] {
		return nil, errAt(d.at, "inheritance cycle: %s -> %s", strings.Join(seen, " -> "), d.name)
	}
	p.resolving[d.name] = true
	defer delete(p.resolving, d.name)
	seen = append(seen, d.name)
	merged := map[string]value{}
	if inh, ok := d.fields["inherits"]; ok {
		parents, err := stringList(inh, "inherits")
		if err != nil {
			return nil, err
		}
		if len(parents) > maxParents {
			return nil, errAt(inh.at, "%q inherits from %d parents (at most %d)", d.name, len(parents), maxParents)
		}
		for _, pn := range parents {
			pd, ok := p.defs[pn]
			if !ok {
				return nil, errAt(inh.at, "%q inherits from unknown %q", d.name, pn)
			}
			pf, err := p.resolve(pd, seen)
			if err != nil {
				return nil, err
			}
			for k, v := range pf {
				merged[k] = mergeValue(merged[k], v)
			}
		}
	}
	for k, v := range d.fields {
		merged[k] = mergeValue(merged[k], v)
	}
	p.resolved[d.name] = merged
	return merged, nil
}

func mergeValue(old, v value) value {
	if old.kind != kCall || v.kind != kCall || old.call != v.call {
		return v
	}
	// Another kind of UART or counter takes none of the parent's arguments (a
	// Nucleo's baud and clock mean nothing to a CMSDK UART).
	if k, ok := v.fields["kind"]; ok && k.s != old.fields["kind"].s {
		return v
	}
	m := value{kind: kCall, call: v.call, fields: map[string]value{}, at: v.at}
	for k, f := range old.fields {
		m.fields[k] = f
	}
	for k, f := range v.fields {
		m.fields[k] = f
	}
	return m
}

func stringList(v value, field string) ([]string, error) {
	if v.kind == kStr {
		return []string{v.s}, nil
	}
	var out []string
	for _, x := range v.list {
		if x.kind != kStr {
			return nil, errAt(x.at, "%s: list elements must be strings", field)
		}
		out = append(out, x.s)
	}
	return out, nil
}

func (p *parser) resolveAll() (*Catalog, error) {
	var bs []*Board
	for _, name := range p.order {
		d := p.defs[name]
		f, err := p.resolve(d, nil)
		if err != nil {
			return nil, err
		}
		if d.family {
			continue
		}
		b, err := decode(d, f)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return newCatalog(bs), nil
}

func str(f map[string]value, k string) string { return f[k].s }

// plainText reports whether s is printable text that a Makefile's
// double-quoted echo and a shell print as it is.
func plainText(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) || strings.ContainsRune("\\\"$`", r) {
			return false
		}
	}
	return true
}

// tokenOf reports whether s is a non-empty run of ASCII letters, digits
// and the runes of extra.
func tokenOf(s, extra string) bool {
	for _, r := range s {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) || strings.ContainsRune(extra, r)) {
			return false
		}
	}
	return s != ""
}

func decode(d *def, f map[string]value) (*Board, error) {
	b := &Board{
		Name:        d.name,
		Description: str(f, "description"),
		Part:        str(f, "part"),
		Toolchain:   str(f, "toolchain"),
		CPU:         str(f, "cpu"),
		Arch:        str(f, "arch"),
		FPU:         str(f, "fpu"),
		FloatABI:    str(f, "float_abi"),
		Zephyr:      str(f, "zephyr"),
		Arduino:     str(f, "arduino"),
		NoBoot:      str(f, "no_boot"),
		StackBytes:  int(f["stack_bytes"].i),
		File:        d.at.file,
		Line:        d.at.line,
		Counter:     Counter{Kind: "none"},
		UART:        UART{Kind: "none"},
	}
	fail := func(at pos, format string, args ...any) error {
		if at.file != d.at.file {
			// A field the board inherits from another file (the
			// catalog): the board's own line is where to fix it
			// (adversarial journey: only catalog.star was named).
			return errAt(d.at, "board %q: %s (a field it inherits from %s:%d)", d.name, fmt.Sprintf(format, args...), at.file, at.line)
		}
		return errAt(at, "board %q: %s", d.name, fmt.Sprintf(format, args...))
	}
	for _, lim := range []struct {
		field string
		max   int
	}{{"memory", maxRegions}, {"init", maxInit}, {"cflags", maxFlags}, {"features", maxFlags}} {
		if v := f[lim.field]; len(v.list) > lim.max {
			return nil, fail(v.at, "%s has %d entries (at most %d)", lim.field, len(v.list), lim.max)
		}
	}
	// Text that lands in generated build files: a Makefile's echo, a
	// README's west and arduino-cli commands (review: no_boot's $(shell
	// ...) ran at `make run`; a newline broke the Makefile's parse).
	for _, k := range []string{"description", "no_boot"} {
		if v, ok := f[k]; ok && !plainText(v.s) {
			return nil, fail(v.at, "%s %q: printable text without a backslash, a double quote, $ or a backquote (it is written into the project's Makefile)", k, v.s)
		}
	}
	if v, ok := f["zephyr"]; ok && !tokenOf(v.s, "/_.-") {
		return nil, fail(v.at, "zephyr %q: a Zephyr board name is letters, digits and / _ . - (west build -b NAME)", v.s)
	}
	if v, ok := f["arduino"]; ok && !tokenOf(v.s, ":_.-=,") {
		return nil, fail(v.at, "arduino %q: an FQBN is letters, digits and : _ . - = , (arduino-cli compile --fqbn NAME)", v.s)
	}
	var err error
	if v, ok := d.fields["inherits"]; ok {
		if b.Inherits, err = stringList(v, "inherits"); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"cflags", "features"} {
		if v, ok := f[k]; ok {
			l, err := stringList(v, k)
			if err != nil {
				return nil, err
			}
			if k == "cflags" {
				b.CFlags = l
			} else {
				b.Features = l
			}
		}
	}
	for _, ft := range b.Features {
		if !slices.Contains(knownFeatures, ft) {
			return nil, fail(f["features"].at, "unknown feature %q; known: %s", ft, strings.Join(knownFeatures, ", "))
		}
	}
	if v, ok := f["stack_bytes"]; ok && (v.i < 0 || v.i > maxStackBytes) {
		return nil, fail(v.at, "stack_bytes %d is not in [0, 4 GiB]", v.i)
	}
	for _, rv := range f["memory"].list {
		if rv.kind != kCall || rv.call != "region" {
			return nil, fail(rv.at, "memory entries must be region(...)")
		}
		r := Region{Name: rv.fields["name"].s, ReadOnly: rv.fields["readonly"].b}
		o, l := rv.fields["origin"], rv.fields["length"]
		if r.Name == "" {
			return nil, fail(rv.at, "region needs a name")
		}
		if !regionName(r.Name) {
			// The name goes into the linker script's MEMORY block as it
			// is (user-journey finding: "AXI SRAM" broke ld's parse).
			return nil, fail(rv.at, "region name %q: letters, digits and _, not starting with a digit (it names a MEMORY region of the linker script)", r.Name)
		}
		if slices.Contains(LDKeywords, r.Name) {
			// ld read ORIGIN, len, AT... as its own words ("mcugen.ld:8:
			// syntax error" at link time: review finding).
			return nil, fail(rv.at, "region name %q is a word of the linker script's language; name it otherwise (RAM2, SRAM_A, ...)", r.Name)
		}
		if _, ok := rv.fields["origin"]; !ok || o.i < 0 || o.i > math.MaxUint32 {
			return nil, fail(rv.at, "region %q needs an origin in [0, 0xffffffff]", r.Name)
		}
		// o.i is in [0, 2^32), so 1<<32 - o.i cannot overflow where o.i + l.i could.
		if _, ok := rv.fields["length"]; !ok || l.i <= 0 || l.i > 1<<32-o.i {
			return nil, fail(rv.at, "region %q needs a positive length that ends below 4 GiB", r.Name)
		}
		r.Origin, r.Length = uint64(o.i), uint64(l.i)
		if r.Origin%4 != 0 {
			// User-journey finding: a flash origin of 0x08000001 linked
			// the vector table off the boot address without a word.
			return nil, fail(rv.at, "region %q: origin %#x is not word-aligned (a multiple of 4)", r.Name, r.Origin)
		}
		if h, ok := rv.fields["holds"]; ok {
			if r.Holds, err = stringList(h, "holds"); err != nil {
				return nil, err
			}
			for _, role := range r.Holds {
				if !slices.Contains([]string{HoldsCode, HoldsWeights, HoldsData, HoldsArena}, role) {
					return nil, fail(h.at, "region %q: unknown role %q (code, weights, data, arena)", r.Name, role)
				}
				if r.ReadOnly && (role == HoldsData || role == HoldsArena) {
					return nil, fail(h.at, "region %q is read-only and cannot hold %s", r.Name, role)
				}
			}
		}
		if slices.Contains(r.Holds, HoldsCode) && r.Origin%128 != 0 {
			// The vector table goes at the code region's start, and VTOR
			// takes 128-byte-aligned tables at the least (review finding).
			return nil, fail(rv.at, "region %q holds code, whose vector table goes at its start: origin %#x is not a multiple of 128, which the Cortex-M's vector table needs", r.Name, r.Origin)
		}
		if (slices.Contains(r.Holds, HoldsArena) || slices.Contains(r.Holds, HoldsWeights)) && r.Origin%16 != 0 {
			// The linker script aligns the arena and the weights to 16
			// bytes, padding the region's start, which the fit checks do
			// not count (review: an ARENA at 0x21000004 of exactly the
			// arena's size passed compile and overflowed at link by 12 B).
			return nil, fail(rv.at, "region %q holds the %s, which the linker script aligns to 16 bytes: origin %#x is not a multiple of 16", r.Name, strings.Join(r.Holds, " and "), r.Origin)
		}
		if b.Region(r.Name) != nil {
			return nil, fail(rv.at, "region %q defined twice", r.Name)
		}
		for _, q := range b.Memory {
			if r.Origin < q.Origin+q.Length && q.Origin < r.Origin+r.Length {
				return nil, fail(rv.at, "region %q [%#x, %#x) overlaps region %q", r.Name, r.Origin, r.Origin+r.Length, q.Name)
			}
		}
		for _, role := range r.Holds {
			for _, q := range b.Memory {
				if slices.Contains(q.Holds, role) {
					// The linker script puts a role in one region; a
					// second went unused (user-journey finding).
					return nil, fail(rv.at, "regions %q and %q both hold %s: a role goes in one region", q.Name, r.Name, role)
				}
			}
		}
		b.Memory = append(b.Memory, r)
	}
	if v, ok := f["counter"]; ok && v.kind == kCall {
		b.Counter = Counter{Kind: v.fields["kind"].s, Addr: uint64(v.fields["addr"].i), Hz: v.fields["hz"].i}
		if !slices.Contains([]string{"fpgaio", "nrf-timer", "stm32-tim", "dwt", "qemu-plugin"}, b.Counter.Kind) {
			return nil, fail(v.at, "unknown counter kind %q (fpgaio, nrf-timer, stm32-tim, dwt, qemu-plugin)", b.Counter.Kind)
		}
		if a := v.fields["addr"].i; a < 0 || a > math.MaxUint32 {
			return nil, fail(v.at, "counter addr %d is not in [0, 0xffffffff]", a)
		}
		if a := v.fields["addr"].i; b.Counter.Kind != "qemu-plugin" && (a == 0 || a%4 != 0) {
			// A counter read at 0 became gcc's trap instruction (review:
			// UsageFault UNDEFINSTR in crt_counter_read).
			return nil, fail(v.at, "counter %q needs the word-aligned, nonzero addr of its register (got %#x)", b.Counter.Kind, a)
		}
		if b.Counter.Hz < 0 || b.Counter.Hz > maxHz {
			return nil, fail(v.at, "counter hz %d is not in [0, 100 GHz]", b.Counter.Hz)
		}
		if (b.Counter.Kind == "fpgaio" || b.Counter.Kind == "nrf-timer" || b.Counter.Kind == "stm32-tim") && b.Counter.Hz <= 0 {
			return nil, fail(v.at, "counter %q needs hz > 0", b.Counter.Kind)
		}
	} else if ok && v.s != "none" {
		return nil, fail(v.at, `counter must be counter(...) or "none"`)
	}
	if v, ok := f["uart"]; ok && v.kind == kCall {
		if b.UART, err = decodeUART(v); err != nil {
			return nil, fail(v.at, "%v", err)
		}
	} else if ok && v.s != "none" {
		return nil, fail(v.at, `uart must be uart(...) or "none"`)
	}
	for _, rv := range f["init"].list {
		if rv.kind != kCall || rv.call != "reg" {
			return nil, fail(rv.at, "init entries must be reg(addr = ..., mask = ..., value = ...)")
		}
		a, m, val := rv.fields["addr"], rv.fields["mask"], rv.fields["value"]
		if _, ok := rv.fields["value"]; !ok {
			val = m // reg(addr, mask) sets the mask's bits
		}
		if _, ok := rv.fields["addr"]; !ok || a.i < 0 || a.i > math.MaxUint32 || a.i%4 != 0 {
			return nil, fail(rv.at, "reg needs a word-aligned addr in [0, 0xfffffffc]")
		}
		if _, ok := rv.fields["mask"]; !ok || m.i <= 0 || m.i > math.MaxUint32 {
			return nil, fail(rv.at, "reg needs a mask in [1, 0xffffffff]")
		}
		if val.i < 0 || val.i&^m.i != 0 {
			return nil, fail(rv.at, "reg value %#x has bits outside its mask %#x", val.i, m.i)
		}
		b.Init = append(b.Init, RegWrite{Addr: uint32(a.i), Mask: uint32(m.i), Value: uint32(val.i)})
	}
	if v, ok := f["qemu"]; ok && v.kind == kCall {
		b.QEMU = QEMU{Binary: v.fields["binary"].s, Machine: v.fields["machine"].s, ICountShift: int(v.fields["icount_shift"].i)}
		if s := v.fields["icount_shift"].i; s < 0 || s > maxICountShift {
			return nil, fail(v.at, "icount_shift %d is not in [0, %d]", s, maxICountShift)
		}
		if a, ok := v.fields["args"]; ok && len(a.list) > maxFlags {
			return nil, fail(a.at, "qemu args has %d entries (at most %d)", len(a.list), maxFlags)
		}
		if a, ok := v.fields["args"]; ok {
			if b.QEMU.Args, err = stringList(a, "args"); err != nil {
				return nil, err
			}
		}
		if b.QEMU.Binary == "" {
			return nil, fail(v.at, "qemu(...) needs a binary")
		}
		if b.QEMU.Binary == "qemu-system-arm" && b.QEMU.Machine == "" {
			return nil, fail(v.at, "qemu-system-arm needs a machine")
		}
	} else if ok && v.s != "none" {
		return nil, fail(v.at, `qemu must be qemu(...) or "none"`)
	}
	switch b.Toolchain {
	case ToolchainArmNoneEABI:
		if b.CPU == "" {
			return nil, fail(d.at, "an arm-none-eabi board needs a cpu")
		}
		for _, role := range []string{HoldsCode, HoldsData} {
			if b.RegionFor(role) == nil {
				return nil, fail(d.at, "no memory region holds %s", role)
			}
		}
		if b.StackBytes <= 0 {
			return nil, fail(d.at, "stack_bytes must be positive")
		}
		if ram := b.RegionFor(HoldsData); uint64(b.StackBytes) > ram.Length {
			return nil, fail(d.at, "stack_bytes %d does not fit its data region %q (%d bytes)", b.StackBytes, ram.Name, ram.Length)
		}
	case ToolchainAArch64, ToolchainHost:
	case "":
		return nil, fail(d.at, "no toolchain (inherit a core family such as cortex-m4f)")
	default:
		return nil, fail(f["toolchain"].at, "unknown toolchain %q (arm-none-eabi, aarch64-linux-gnu, host)", b.Toolchain)
	}
	if a := b.FloatABI; a != "" && a != "hard" && a != "softfp" && a != "soft" {
		return nil, fail(f["float_abi"].at, "float_abi %q: one of hard, softfp, soft (gcc's -mfloat-abi)", a)
	}
	if b.FloatABI == "hard" && !b.HasFeature("fpu") {
		return nil, fail(d.at, `float_abi "hard" needs the "fpu" feature`)
	}
	if b.Toolchain == ToolchainArmNoneEABI {
		if err := checkCore(b); err != nil {
			return nil, fail(d.at, "%v", err)
		}
	} else if b.Toolchain == ToolchainAArch64 && b.CPU != "" && !strings.HasPrefix(b.CPU, "cortex-a") && !strings.HasPrefix(b.CPU, "neoverse") && !strings.HasPrefix(b.CPU, "cortex-x") {
		// Review: cpu = "cortex-m4" on aarch64-linux built nothing, with a
		// 6 KB line of gcc's refusals.
		return nil, fail(d.at, "cpu %q is not an AArch64 core (cortex-a..., cortex-x..., neoverse-...) for toolchain %s", b.CPU, b.Toolchain)
	}
	return b, nil
}

// LDKeywords are words of GNU ld's script language that a name in a linker
// script would be read as: a memory region or section of that name breaks
// the script ("syntax error" at link time), so board files and
// --weights-section refuse them. o, org, l and len are ORIGIN's and
// LENGTH's short forms in MEMORY.
var LDKeywords = []string{"KEEP", "SORT", "SORT_BY_NAME", "SORT_BY_ALIGNMENT", "SORT_BY_INIT_PRIORITY",
	"SORT_NONE", "REVERSE", "COMMON", "EXCLUDE_FILE", "INPUT_SECTION_FLAGS", "ONLY_IF_RO", "ONLY_IF_RW",
	"NOLOAD", "DSECT", "COPY", "INFO", "OVERLAY", "ALIGN", "ALIGN_WITH_INPUT", "AT", "SUBALIGN", "BYTE",
	"SHORT", "LONG", "QUAD", "SQUAD", "FILL", "CREATE_OBJECT_SYMBOLS", "CONSTRUCTORS", "PROVIDE",
	"PROVIDE_HIDDEN", "HIDDEN", "ASSERT", "ENTRY", "INCLUDE", "INPUT", "GROUP", "OUTPUT", "SECTIONS",
	"MEMORY", "PHDRS", "ORIGIN", "LENGTH", "ADDR", "LOADADDR", "SIZEOF", "DEFINED", "NEXT", "ABSOLUTE",
	"BLOCK", "STARTUP", "TARGET", "SEARCH_DIR", "INSERT", "AFTER", "BEFORE", "NOCROSSREFS",
	"o", "org", "l", "len"}

// regionName reports whether s is a usable memory region name (a linker
// script identifier).
func regionName(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// boardName reports whether s is a usable board or family name.
func boardName(s string) bool {
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune("._+-", r)
		if !ok {
			return false
		}
	}
	return s != "" && len(s) <= 64
}

// mCores are the Cortex-M cores gcc's -mcpu names, with the features
// mcugen's targets use that each has (a user journey: cpu "cortex-m4x"
// reached the compiler, and "mve" on a Cortex-M4 the #error of the
// generated C).
var mCores = map[string][]string{
	"cortex-m0": nil, "cortex-m0plus": nil, "cortex-m1": nil, "cortex-m3": nil, "cortex-m23": nil,
	"cortex-m4": {"dsp", "fpu"}, "cortex-m7": {"dsp", "fpu"},
	"cortex-m33": {"dsp", "fpu"}, "cortex-m35p": {"dsp", "fpu"},
	"cortex-m52": {"dsp", "fpu", "mve"}, "cortex-m55": {"dsp", "fpu", "mve"}, "cortex-m85": {"dsp", "fpu", "mve"},
}

// HostCores lists, for cores no QEMU machine models, the cores whose
// machines run their code unchanged: every ARMv6-M instruction (Cortex-M0,
// M0+, M1) is an ARMv7-M one with the same encoding and result, and
// ARMv8-M Baseline (Cortex-M23) is a subset of ARMv8-M Mainline
// (Cortex-M33). In order of preference.
var HostCores = map[string][]string{
	"cortex-m0":     {"cortex-m0plus", "cortex-m1", "cortex-m3", "cortex-m4", "cortex-m7"},
	"cortex-m0plus": {"cortex-m0", "cortex-m1", "cortex-m3", "cortex-m4", "cortex-m7"},
	"cortex-m1":     {"cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7"},
	"cortex-m23":    {"cortex-m33"},
	"cortex-m35p":   {"cortex-m33"}, // the M33's instruction set
}

// machineCores are the cores of the QEMU machines mcugen's catalog and
// users' boards run on.
var machineCores = map[string]string{
	"mps2-an385": "cortex-m3", "mps2-an386": "cortex-m4", "mps2-an500": "cortex-m7", "mps2-an505": "cortex-m33",
	"mps2-an511": "cortex-m3", "mps2-an521": "cortex-m33", "mps3-an524": "cortex-m33", "mps3-an547": "cortex-m55",
	"microbit": "cortex-m0", "netduinoplus2": "cortex-m4", "netduino2": "cortex-m3", "olimex-stm32-h405": "cortex-m4",
	"stm32vldiscovery": "cortex-m3", "lm3s6965evb": "cortex-m3", "lm3s811evb": "cortex-m3", "emcraft-sf2": "cortex-m3",
	"musca-a": "cortex-m33", "musca-b1": "cortex-m33",
}

// CoreOf is the core an -mcpu value names, without gcc's +extension and
// .variant suffixes (cortex-m33+nodsp, cortex-m0plus.small-multiply).
func CoreOf(cpu string) string {
	core, _, _ := strings.Cut(cpu, "+")
	core, _, _ = strings.Cut(core, ".")
	return core
}

// coreFPUs are gcc's -mfpu values whose instructions each Cortex-M core's
// FPU executes (FPv5 is a superset of FPv4; the M55's and M85's FPU comes
// with -mfpu=auto, unchecked).
var coreFPUs = map[string][]string{
	"cortex-m4":   {"fpv4-sp-d16"},
	"cortex-m7":   {"fpv4-sp-d16", "fpv5-sp-d16", "fpv5-d16"},
	"cortex-m33":  {"fpv4-sp-d16", "fpv5-sp-d16"},
	"cortex-m35p": {"fpv4-sp-d16", "fpv5-sp-d16"},
}

// checkCore checks a bare-metal board's cpu against gcc's Cortex-M names
// (a suffix such as +nodsp or .small-multiply allowed), its features
// against what the core has, and its QEMU machine's core against the
// board's: code for one core run on a machine of another (an M33 board
// inheriting mps2-an386) counted instructions the board would not
// execute, and test called them bit-exact.
func checkCore(b *Board) error {
	core, exts := CoreOf(b.CPU), strings.Split(b.CPU, "+")[1:]
	has, known := mCores[core]
	if !known {
		names := strings.Join(slices.Sorted(maps.Keys(mCores)), ", ")
		if _, ok := mCores[strings.ToLower(core)]; ok {
			// gcc takes "Cortex-M4" too, but every check here, and the
			// runner's choice of QEMU machine, went by name (review
			// finding: Helium on a "Cortex-M4" passed).
			return fmt.Errorf("cpu %q: write it in lowercase, %q, as gcc's -mcpu names are", b.CPU, strings.ToLower(b.CPU))
		}
		if core == "star-mc1" {
			return nil // an Armv8-M Main core gcc knows: gcc checks it
		}
		// The bare-metal runtime (vector table, MSP, fault registers) is
		// Cortex-M's: a Cortex-A or -R board failed in the assembler.
		return fmt.Errorf("cpu %q is not a Cortex-M core gcc knows (%s); mcugen's bare-metal runtime runs on Cortex-M (a Linux board inherits aarch64-linux)", b.CPU, names)
	}
	// gcc's +no<feature> options: +nodsp also drops MVE (which needs the
	// DSP extension), +nomve.fp only MVE's floating point, +nofp the FPU.
	has = slices.Clone(has)
	for _, e := range exts {
		switch e {
		case "nodsp":
			has = slices.DeleteFunc(has, func(f string) bool { return f == "dsp" || f == "mve" })
		case "nomve":
			has = slices.DeleteFunc(has, func(f string) bool { return f == "mve" })
		case "nofp":
			has = slices.DeleteFunc(has, func(f string) bool { return f == "fpu" })
		}
	}
	for _, ft := range b.Features {
		if slices.Contains(has, ft) {
			continue
		}
		if ft == "fpu" {
			return fmt.Errorf(`feature "fpu": %s (%s) has no FPU`, core, b.CPU)
		}
		what := map[string]string{"dsp": "DSP extension", "mve": "Helium (MVE)", "neon": "NEON (a Cortex-A feature)",
			"dotprod": "dot-product instructions", "i8mm": "int8 matrix multiply"}[ft]
		if what == "" {
			what = ft
		}
		return fmt.Errorf("feature %q: %s (%s) has no %s", ft, core, b.CPU, what)
	}
	if m := b.QEMU.Machine; m != "" && b.QEMU.Binary == "qemu-system-arm" {
		mc, ok := machineCores[m]
		if ok && mc != core && !slices.Contains(HostCores[core], mc) {
			return fmt.Errorf("cpu %s on QEMU machine %s, whose core is a %s: it would run other code than the board's (inherit a board of its core, or set qemu = \"none\")", core, m, mc)
		}
	}
	if (core == "cortex-m52" || core == "cortex-m55" || core == "cortex-m85") && b.FPU != "" && b.FPU != "auto" && b.HasFeature("mve") {
		// Review: fpv4-sp-d16 on mps3-an547 was taken, and the assembler
		// then refused the MVE kernels' float instructions.
		return fmt.Errorf("fpu %q: %s's Helium (mve) and FPU come with fpu = \"auto\" (-mfpu=auto); another -mfpu takes them away", b.FPU, core)
	}
	if fpus, ok := coreFPUs[core]; ok && b.FPU != "" && b.FPU != "auto" && b.HasFeature("fpu") && !slices.Contains(fpus, b.FPU) {
		// User-journey finding: a cortex-m7 family's fpv5-d16 kept on a
		// board set to cortex-m4 built code its core cannot run.
		return fmt.Errorf("fpu %q: %s's FPU does not run its code (%s do): set fpu, or inherit the core's own family", b.FPU, core, strings.Join(fpus, ", "))
	}
	return nil
}

// decodeUART reads uart(...) and checks that the runtime can drive it as given.
func decodeUART(v value) (UART, error) {
	u := UART{Kind: v.fields["kind"].s, Base: uint64(v.fields["base"].i), Baud: v.fields["baud"].i,
		ClockHz: v.fields["clock_hz"].i, TxPin: -1}
	if p, ok := v.fields["tx_pin"]; ok {
		u.TxPin = p.i
	}
	if u.Baud < 0 || u.Baud > maxHz || u.ClockHz < 0 || u.ClockHz > maxHz {
		return u, fmt.Errorf("uart baud %d or clock_hz %d is not in [0, 100 GHz]", u.Baud, u.ClockHz)
	}
	if !slices.Contains(uartKinds, u.Kind) {
		return u, fmt.Errorf("unknown uart kind %q (%s)", u.Kind, strings.Join(uartKinds, ", "))
	}
	if _, ok := v.fields["base"]; !ok || v.fields["base"].i <= 0 || v.fields["base"].i > math.MaxUint32 {
		return u, fmt.Errorf("uart %q needs a base address", u.Kind)
	}
	switch u.Kind {
	case "stm32", "stm32f4", "stm32-lpuart":
		if u.Baud <= 0 || u.ClockHz <= 0 {
			return u, fmt.Errorf("uart %q needs baud and clock_hz (the port's clock after reset) to set its divider", u.Kind)
		}
		if _, ok := u.BRR(); !ok {
			return u, fmt.Errorf("uart %q cannot make %d baud from a %d Hz clock", u.Kind, u.Baud, u.ClockHz)
		}
	case "nrf":
		if _, ok := u.NRFBaud(); u.Baud != 0 && !ok {
			return u, fmt.Errorf("the nRF UART has no %d baud setting", u.Baud)
		}
		if u.TxPin < -1 || u.TxPin > 47 {
			return u, fmt.Errorf("tx_pin %d is not an nRF pin (0-31 on port 0, 32-47 on port 1)", u.TxPin)
		}
	case "cmsdk":
		if u.Baud != 0 || u.ClockHz != 0 || u.TxPin != -1 {
			return u, fmt.Errorf("the cmsdk uart takes only a base (QEMU's needs no divider)")
		}
	}
	if u.Kind != "nrf" && u.TxPin != -1 {
		return u, fmt.Errorf("tx_pin is for the nrf uart; route an STM32 pin with init = [reg(...)]")
	}
	return u, nil
}

var knownFeatures = []string{"dsp", "fpu", "mve", "neon", "dotprod", "i8mm"}

// exprKind names a Starlark expression a board file may not use, as its
// author wrote it (the message said "*build.DictExpr").
func exprKind(e build.Expr) string {
	switch e.(type) {
	case *build.DictExpr:
		return "a dict ({...})"
	case *build.Comprehension:
		return "a comprehension"
	case *build.LambdaExpr:
		return "a lambda"
	case *build.ConditionalExpr:
		return "a conditional (x if c else y)"
	case *build.IndexExpr, *build.SliceExpr:
		return "indexing"
	case *build.DotExpr:
		return "an attribute (x.y)"
	case *build.TupleExpr:
		return "a tuple"
	}
	return "this expression"
}
