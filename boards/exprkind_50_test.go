package boards

import (
	"strings"
	"testing"
)

// An expression a board file may not use is named as its author wrote it:
// the message said "unsupported expression *build.DictExpr" (CLI review).
func TestUnsupportedExpressionNamed50(t *testing.T) {
	for src, want := range map[string]string{
		`board(name = "x", inherits = "mps2-an386", cflags = {"a": 1})`:              "a dict ({...}) is not taken in a board file",
		`board(name = "x", inherits = "mps2-an386", stack_bytes = 1 if True else 2)`: "a conditional (x if c else y) is not taken",
		`board(name = "x", inherits = "mps2-an386", cflags = [c for c in "ab"])`:     "a comprehension is not taken",
	} {
		_, err := LoadData("user.star", []byte(src+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "build.") {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
}
