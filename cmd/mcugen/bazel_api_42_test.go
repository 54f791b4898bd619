package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Bazel project for a board other than the host holds only the model's
// cc_library, no example, so it takes --arena external and --io in-arena
// (review finding: they were refused because "its example calls the default
// API"); the host's Bazel project, which has an example, still refuses them.
func TestBazelLibraryTakesEitherAPI(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, c := range []struct {
		args []string
		want string // in the header
	}{
		{[]string{"--arena", "external"}, "_run(struct cnn_int8_inputs *in, struct cnn_int8_outputs *out, void *arena);"},
		{[]string{"--io", "in-arena"}, "_run(void);"},
	} {
		out := filepath.Join(t.TempDir(), "bz")
		code, _, errs := mcugen(t, append([]string{"compile", model, "--board", "nucleo-f746zg", "--project", "bazel", "-o", out}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		h, err := os.ReadFile(filepath.Join(out, "model", "cnn_int8.h"))
		if err != nil || !strings.Contains(string(h), c.want) {
			t.Errorf("%v: header lacks %q (%v)", c.args, c.want, err)
		}
		build, err := os.ReadFile(filepath.Join(out, "BUILD.bazel"))
		if err != nil || !strings.Contains(string(build), `cc_library(`) || strings.Contains(string(build), "cc_binary(") {
			t.Errorf("%v: BUILD.bazel is not the library alone (%v):\n%s", c.args, err, build)
		}
		code, _, errs = mcugen(t, append([]string{"compile", model, "--board", "host", "--project", "bazel", "-o", filepath.Join(t.TempDir(), "h")}, c.args...)...)
		oneErrorLine(t, "host bazel "+strings.Join(c.args, " "), code, errs, 2, "its example calls the default API")
	}
}
