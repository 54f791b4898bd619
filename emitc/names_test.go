package emitc

import (
	"strings"
	"testing"
)

// Tensor names become C identifiers that clash with nothing the generated
// code can see: keywords, its own names, and the C library's.
func TestIdent(t *testing.T) {
	cases := map[string]string{
		"conv1/weights":   "conv1_weights",
		"0":               "t_0",
		"":                "t",
		"int":             "int_",
		"arena":           "arena_",
		"exp":             "exp_",
		"powf":            "powf_",
		"memcpy":          "memcpy_",
		"int8_t":          "int8_t_",
		"INFINITY":        "INFINITY_",
		"NAN":             "NAN_",
		"INT8_MAX":        "INT8_MAX_",
		"UINT_FAST16_MAX": "UINT_FAST16_MAX_",
		"expo":            "expo",
		"é":               "u00e9",
	}
	for in, want := range cases {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%q) = %q, want %q", in, got, want)
		}
	}
}

// Names go into comments: neither */ nor /* may survive (the second is
// gcc's -Wcomment, an error under -Werror; a tensor named "a/*b" did it).
func TestCommentSafe(t *testing.T) {
	if got := commentSafe(`x/*y*/z`); got != `x/ *y* /z` || strings.Contains(got, "/*") || strings.Contains(got, "*/") {
		t.Errorf("commentSafe: %q", got)
	}
}
