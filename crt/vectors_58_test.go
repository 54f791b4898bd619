package crt

import (
	"strings"
	"testing"
)

// Vectors above bigVector bytes are written as one string literal of exactly
// the array's length (no terminating NUL stored): each byte value, the quote,
// the backslash and NUL among them, comes through the harness unchanged on the
// host under -std=c99 -pedantic -Werror. Up to bigVector bytes the brace list
// stays. (Review finding, session 57: a million-element float input's brace
// lists took gcc 1.2 GB and 34 s; the literal 0.38 GB and 5 s.)
func TestBigVectorsAsLiterals58(t *testing.T) {
	mk := func(n int, seed uint32) []byte {
		b := make([]byte, n)
		x := seed
		for i := range b {
			x = x*1664525 + 1013904223
			b[i] = byte(x >> 24)
		}
		// The bytes a literal must escape, at its ends and across a line break.
		copy(b, []byte{0, '"', '\\', '?', '?', '='})
		copy(b[31:], []byte{'\\', '"', 0})
		b[n-1] = 0
		return b
	}
	for _, c := range []struct {
		n       int
		literal bool
	}{{bigVector, false}, {bigVector + 1, true}, {70001, true}} {
		h := Harness{Prefix: "m", Inputs: []Tensor{{"x", c.n}}, Outputs: []Tensor{{"y", 1}}, Vectors: [][][]byte{{mk(c.n, 1)}}}
		src, err := h.VectorsC(getBoard(t, "host"))
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(src, "mcugen_v0_in0[")
		if i < 0 {
			t.Fatalf("%d bytes: no vector array in\n%.400s", c.n, src)
		}
		decl := src[i : i+40]
		if got := strings.Contains(decl, "= \n    \"\\x"); got != c.literal {
			t.Errorf("%d bytes: declaration %q, want a string literal: %v", c.n, decl, c.literal)
		}
		reverseOnHost(t, [][]byte{mk(c.n, 1), mk(c.n, 2)})
	}
}
