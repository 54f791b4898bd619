package boards

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hostile board files: each must be refused (or, when valid, read) quickly, with one
// error line that names the file, never a panic, a hang or a huge allocation.

// loadHostile writes src to a board file in a temporary directory and loads it, failing
// the test if that takes longer than 10 s (the defects were hangs of minutes).
func loadHostile(t *testing.T, src string) (*Catalog, string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "hostile.star")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		c   *Catalog
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := Load(file)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, file, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("loading a %d-byte board file took more than 10 s", len(src))
	}
	return nil, "", nil
}

// wantRefused checks that src is refused with one line naming the file (at line, when
// line > 0) and containing msg.
func wantRefused(t *testing.T, src string, line int, msg string) {
	t.Helper()
	_, file, err := loadHostile(t, src)
	if err == nil {
		t.Fatalf("accepted; want an error containing %q", msg)
	}
	e := err.Error()
	where := file + ":"
	if line > 0 {
		where = fmt.Sprintf("%s:%d:", file, line)
	}
	if !strings.HasPrefix(e, "boards: ") || !strings.Contains(e, where) || !strings.Contains(e, msg) || strings.Contains(e, "\n") {
		t.Errorf("error %q: want one line with %q and %q", e, where, msg)
	}
}

// doubling returns a file that defines name0 = first and doubles it n times.
func doubling(name, first string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s0 = %s\n", name, first)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d = %s%d + %s%d\n", name, i, name, i-1, name, i-1)
	}
	return b.String()
}

// "Billion laughs": 40 doublings of a one-byte string or a one-element list asked for
// 2^40 of them.
func TestHostileBillionLaughs(t *testing.T) {
	t.Run("string", func(t *testing.T) {
		wantRefused(t, doubling("S", `"x"`, 40), 22, "string too long")
	})
	t.Run("list", func(t *testing.T) {
		wantRefused(t, doubling("L", `["x"]`, 40), 15, "list too long")
	})
	t.Run("many big lists", func(t *testing.T) {
		// Each list is under the cap; together they would take gigabytes.
		src := "L0 = [" + strings.Repeat("1, ", maxListLen/2) + "]\nL1 = L0 + L0\n"
		for i := 2; i < 2000; i++ {
			src += fmt.Sprintf("L%d = L1 + []\n", i)
		}
		wantRefused(t, src, 0, "concatenation builds more than")
	})
	t.Run("under the caps", func(t *testing.T) {
		src := doubling("S", `"x"`, 10) + `board(name = "x", inherits = "mps2-an385", description = S10)` + "\n"
		c, _, err := loadHostile(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := c.Get("x"); b == nil || len(b.Description) != 1024 {
			t.Errorf("description of %d bytes", len(b.Description))
		}
	})
}

// 60 families, each inheriting the previous twice, resolved each family 2^60 times.
func TestHostileDiamondInheritance(t *testing.T) {
	diamond := func(n int, last string) string {
		var b strings.Builder
		b.WriteString("family(name = \"f0\", inherits = \"" + last + "\")\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "family(name = \"f%d\", inherits = [\"f%d\", \"f%d\"], stack_bytes = %d)\n", i, i-1, i-1, 1024+i)
		}
		fmt.Fprintf(&b, "board(name = \"x\", inherits = \"f%d\")\n", n)
		return b.String()
	}
	c, _, err := loadHostile(t, diamond(60, "mps2-an385"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get("x"); b == nil || b.StackBytes != 1024+60 || b.CPU != "cortex-m3" {
		t.Errorf("diamond board %+v", b)
	}
	// A cycle through the diamond is still found.
	wantRefused(t, diamond(60, "f60"), 0, "inheritance cycle")
}

// A constant of 40,000 terms took half a minute: the parser and the position lookup
// walked the whole chain at every operator.
func TestHostileLongExpression(t *testing.T) {
	wantRefused(t, "\n\nK = "+strings.Repeat("1 + ", 40000)+"1\n", 3, "statement too complex")
	wantRefused(t, "K = f"+strings.Repeat("()", 40000)+"\n", 1, "statement too complex")
	wantRefused(t, "K = "+strings.Repeat("-", 40000)+"1\n", 1, "statement too complex")
	var many strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&many, "K%d = %s1\n", i, strings.Repeat("1 + ", 500))
	}
	wantRefused(t, many.String(), 0, "file too complex")
	wantRefused(t, "K = "+strings.Repeat("[", 1000)+strings.Repeat("]", 1000)+"\n", 1, "nested more than")
	wantRefused(t, "# "+strings.Repeat("x", maxFileBytes)+"\n", 0, "larger than the 1048576-byte limit")
	// Long but legal: 999 terms, and a comment (which makes buildtools walk every node).
	src := "# n\nN = " + strings.Repeat("2 + ", 998) + "2  # 1998\n" +
		"board(name = \"x\", inherits = \"mps2-an385\", stack_bytes = N)\n"
	c, _, err := loadHostile(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get("x"); b == nil || b.StackBytes != 1998 {
		t.Errorf("stack_bytes %+v", b)
	}
}

// origin + length wrapped past 2^63 and passed the 4 GiB check.
func TestHostileRegionOverflow(t *testing.T) {
	region := func(origin, length string) string {
		return `board(name = "x", inherits = "mps2-an385", memory = [
    region(name = "FLASH", origin = 0, length = 0x10000, holds = ["code"]),
    region(name = "RAM", origin = ` + origin + `, length = ` + length + `, holds = ["data"]),
])
`
	}
	wantRefused(t, region("0x20000000", "0x7fffffffe0000008"), 3, `region "RAM" needs a positive length that ends below 4 GiB`)
	wantRefused(t, region("0x20000000", "0xe0000001"), 3, "ends below 4 GiB")
	wantRefused(t, region("0x100000000", "0x1000"), 3, "needs an origin in [0, 0xffffffff]")
	// A region that ends exactly at 4 GiB is fine.
	c, _, err := loadHostile(t, region("0xffff0000", "0x10000"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Get("x"); b == nil || b.RAMBytes() != 0x10000 {
		t.Errorf("board %+v", b)
	}
}

// stack_bytes = 2^63-1 was accepted, and so were other sizes no hardware has.
func TestHostileSizes(t *testing.T) {
	cases := []struct{ name, src, msg string }{
		{"stack 2^63-1", `board(name = "x", inherits = "mps2-an385", stack_bytes = 9223372036854775807)`, "stack_bytes 9223372036854775807 is not in [0, 4 GiB]"},
		{"negative stack", `board(name = "x", toolchain = "host", stack_bytes = -1)`, "stack_bytes -1 is not in"},
		{"stack over ram", `board(name = "x", inherits = "mps2-an385", memory = [region(name = "R", origin = 0, length = 4096, holds = ["code", "data"])])`, `stack_bytes 16384 does not fit its data region "R" (4096 bytes)`},
		{"clock", `board(name = "x", inherits = "nucleo-f746zg", uart = uart(clock_hz = 1 << 62))`, "clock_hz 4611686018427387904 is not in"},
		{"counter hz", `board(name = "x", inherits = "mps2-an385", counter = counter(hz = -5))`, "counter hz -5 is not in"},
		{"counter addr", `board(name = "x", inherits = "mps2-an385", counter = counter(addr = 1 << 40))`, "counter addr 1099511627776 is not in"},
		{"icount", `board(name = "x", inherits = "mps2-an385", qemu = qemu(icount_shift = 99))`, "icount_shift 99 is not in [0, 10]"},
		{"regions", `board(name = "x", inherits = "mps2-an385", memory = [` + strings.Repeat(`region(name = "R", origin = 0, length = 1), `, maxRegions+1) + `])`, "memory has 65 entries (at most 64)"},
		{"parents", `board(name = "x", inherits = [` + strings.Repeat(`"mps2-an385", `, maxParents+1) + `])`, "inherits from 65 parents"},
		{"boards", strings.Repeat(`board(name = "x", inherits = "mps2-an385")`+"\n", maxDefs+1), "more than 4096 boards and families"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "boards" {
				// Distinct names, so that the count and not the duplicate is refused.
				var b strings.Builder
				for i := 0; i <= maxDefs; i++ {
					fmt.Fprintf(&b, "board(name = \"x%d\", inherits = \"mps2-an385\")\n", i)
				}
				tc.src = b.String()
			}
			wantRefused(t, tc.src+"\n", 0, tc.msg)
		})
	}
}

// Integer arithmetic wrapped: (2^63-1) * (2^63-1) was 1.
func TestHostileIntegerOverflow(t *testing.T) {
	const max = "9223372036854775807"
	cases := []struct {
		expr string
		line int // of the operator
		msg  string
	}{
		{max + " * " + max, 2, "integer overflow: " + max + " * " + max},
		{"(" + max + "\n  + 1)", 3, "integer overflow: " + max + " + 1"},
		{"-" + max + " - 2", 2, "integer overflow"},
		{"1 << 62 << 1", 2, "integer overflow: 4611686018427387904 << 1"},
		{"(1 << 62) * 2", 2, "integer overflow"},
		{"-(-" + max + " - 1)", 2, "integer overflow: -(-9223372036854775808)"},
		{"(-" + max + " - 1) // -1", 2, "integer overflow"},
		{"(-" + max + " - 1) * -1", 2, "integer overflow"},
		{"-1 * (-" + max + " - 1)", 2, "integer overflow"},
	}
	for _, tc := range cases {
		wantRefused(t, "# k\nK = "+tc.expr+"\n", tc.line, tc.msg)
	}
	// What does fit is computed exactly; // floors, as in Starlark.
	for expr, want := range map[string]int{
		"(1 << 31) * 2 - 1": 1<<32 - 1, "-7 // 2 + 10": 6, "7 // -2 + 10": 6, "7 // 2": 3,
		"(-" + max + " - 1) + " + max + " + 4097": 4096, "64 * 1024": 65536,
	} {
		c, _, err := loadHostile(t, `board(name = "x", toolchain = "host", stack_bytes = `+expr+")\n")
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if b, _ := c.Get("x"); b.StackBytes != want {
			t.Errorf("%s = %d, want %d", expr, b.StackBytes, want)
		}
	}
}

// A board file that is a FIFO or a device is refused, not read: a FIFO
// blocked and /dev/zero was read without end.
func TestHostileNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.star")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	zero := filepath.Join(dir, "zero.star")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Skip(err)
	}
	for f, want := range map[string]string{fifo: "is a named pipe", zero: "is a device"} {
		if _, err := Load(f); err == nil || !strings.Contains(err.Error(), f+": "+want) {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A positional argument to a helper call names the call's fields in order
// (template journey finding: the docs wrote region(name, origin, ...),
// and the refusal did not say what to write).
func TestPositionalRegionNamesItsFields(t *testing.T) {
	src := "board(\n    name = \"b\",\n    inherits = \"cortex-m4f\",\n    memory = [\n        region(\"FLASH\", 0, 65536, [\"code\", \"weights\"]),\n    ],\n)\n"
	wantRefused(t, src, 5, `arguments must be keyword arguments (name = value): region(name = ..., origin = ..., length = ..., holds = ..., readonly = ...)`)
	// Every helper call's order lists exactly the arguments it takes.
	for call, schema := range callKinds {
		if got, want := strings.Join(callOrder[call], " "), strings.Join(sortedKeys(schema), " "); len(callOrder[call]) != len(schema) {
			t.Errorf("%s: order %q, takes %q", call, got, want)
		}
		for _, f := range callOrder[call] {
			if _, ok := schema[f]; !ok {
				t.Errorf("%s: order names %q, which it does not take", call, f)
			}
		}
	}
}
