package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// C API review: with --io in-arena --arena external, <prefix>_input_ptr(NULL)
// returned NULL + the input's offset (undefined arithmetic; 0x1f40 for
// KWS, whose input and output are at 8,000 and 16): NULL now.
func TestInArenaPtrOfNullArena50(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed (Debian package gcc)")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "m")
	m := sharedModels(t)
	code, _, errs := mcugen(t, "compile", filepath.Join(m, "kws", "kws_ref_model.tflite"), "--board", "host", "--io", "in-arena", "--arena", "external", "--prefix", "m", "-o", out)
	if code != 0 {
		t.Fatalf("compile: exit %d: %s", code, errs)
	}
	h, _ := os.ReadFile(filepath.Join(out, "m.h"))
	if !strings.Contains(string(h), "void *m_input_ptr(void *arena);") || !strings.Contains(string(h), "#define M_INPUT_1_OFFSET 8000") {
		t.Fatalf("no m_input_ptr in the header:\n%s", h)
	}
	main := filepath.Join(dir, "main.c")
	src := `#include <stdio.h>
#include "m.h"
static unsigned char arena[M_ARENA_SIZE + 16];
int main(void)
{
    unsigned char *a = (unsigned char *)(((unsigned long)arena + 15) & ~15ul);
    void *volatile none = NULL;
    if (m_input_ptr(none) != NULL || m_output_ptr(none) != NULL) return 1;
    if ((unsigned char *)m_input_ptr(a) != a + M_INPUT_1_OFFSET) return 2;
    if ((unsigned char *)m_output_ptr(a) != a + M_IDENTITY_OFFSET) return 3;
    return 0;
}
`
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "a.out")
	if b, err := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", out, main, filepath.Join(out, "m.c"), "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	if b, err := exec.Command(exe).CombinedOutput(); err != nil {
		t.Errorf("the check program: %v\n%s", err, b)
	}
}

// compile --json gives a model without inputs "inputs": [] as inspect does
// (it was null: C API review).
func TestCompileJSONEmptyInputs50(t *testing.T) {
	code, out, errs := mcugen(t, "compile", "../../testdata/tflite/op_float_dequantize_per_axis.tflite", "--board", "host", "-o", filepath.Join(t.TempDir(), "o"), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if string(r["inputs"]) != "[]" {
		t.Errorf(`"inputs": %s, want []`, r["inputs"])
	}
}

// Every input and output has <NAME>_TYPE and <NAME>_ELEMENTS (only a
// comment said them: C API review), and a buffer declared from them is
// <NAME>_SIZE bytes: checked by the C compiler, for int8, float and bool
// tensors.
func TestIOTypeAndElementMacros50(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed (Debian package gcc)")
	}
	typeRE := regexp.MustCompile(`(?m)^#define (\w+)_TYPE (\w+)$`)
	for _, model := range []string{"../../testdata/tflite/cnn_int8.tflite", "../../testdata/onnx/mlp.onnx", "../../testdata/tflite/op_float_logical_and.tflite"} {
		dir := t.TempDir()
		out := filepath.Join(dir, "m")
		if code, _, errs := mcugen(t, "compile", model, "--board", "host", "--prefix", "m", "-o", out); code != 0 {
			t.Fatalf("%s: compile: exit %d: %s", model, code, errs)
		}
		h, err := os.ReadFile(filepath.Join(out, "m.h"))
		if err != nil {
			t.Fatal(err)
		}
		ms := typeRE.FindAllStringSubmatch(string(h), -1)
		if len(ms) < 2 {
			t.Fatalf("%s: %d _TYPE macros in the header:\n%s", model, len(ms), h)
		}
		var src strings.Builder
		src.WriteString("#include \"m.h\"\n")
		for i, m := range ms {
			fmt.Fprintf(&src, "static %[1]s_TYPE buf%[2]d[%[1]s_ELEMENTS];\ntypedef char check%[2]d[sizeof buf%[2]d == %[1]s_SIZE ? 1 : -1];\n", m[1], i)
		}
		src.WriteString("int main(void) { return 0; }\n")
		c := filepath.Join(dir, "check.c")
		if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("gcc", "-std=c99", "-pedantic", "-Wall", "-Wno-unused-variable", "-Wno-unused-local-typedefs", "-I", out, "-c", c, "-o", filepath.Join(dir, "check.o")).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s\n%s", model, err, b, src.String())
		}
	}
}
