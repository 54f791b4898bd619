package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/internal/needtool"
)

// TestMicroTVMWorkspacePools: with microTVM's prefix and --arena external
// the header is TVM's USMP API (struct tvmgen_default_workspace_pools, its
// POOL_SIZE macro; with --io in-arena map_inputs, map_outputs and
// run(&pools)), so a main.c written for microTVM compiles warning-free and
// runs clean under ASan and UBSan, giving the reference interpreter's
// outputs; NULL pools are refused. The void *arena run took &pools
// without a word, and the struct became the arena.
func TestMicroTVMWorkspacePools(t *testing.T) {
	needtool.Need(t, "gcc", "gcc")
	model := "../../testdata/tflite/mlp_int8.tflite"
	dir := t.TempDir()
	in := graph.NewData(graph.Int8, []int{1, 16})
	for i := range in.I {
		in.I[i] = int64(i*13%200 - 100)
	}
	if err := writeNpy(filepath.Join(dir, "in.npy"), in); err != nil {
		t.Fatal(err)
	}
	want := evalNpy(t, model, filepath.Join(dir, "in.npy"))["act1_fc"]
	if want == nil {
		t.Fatal("eval wrote no act1_fc.npy")
	}
	var vals, exp []string
	for _, v := range in.I {
		vals = append(vals, fmt.Sprint(v))
	}
	for _, v := range want.I {
		exp = append(exp, fmt.Sprint(v))
	}
	mains := map[string]string{
		"separate": `
    static int8_t x[TVMGEN_DEFAULT_INPUT_SIZE] = {%s};
    static int8_t y[TVMGEN_DEFAULT_ACT1_FC_SIZE];
    struct tvmgen_default_inputs in = {x};
    struct tvmgen_default_outputs out = {y};
    if (tvmgen_default_run(&in, &out, NULL) != -1 || tvmgen_default_run(&in, &out, &pools) != 0) {
        return 1;
    }
`,
		"in-arena": `
    static const int8_t x[TVMGEN_DEFAULT_INPUT_SIZE] = {%s};
    struct tvmgen_default_inputs in = tvmgen_default_map_inputs(&pools);
    struct tvmgen_default_outputs out;
    memcpy(in.input, x, sizeof x);
    if (tvmgen_default_run(NULL) != -1 || tvmgen_default_run(&pools) != 0) {
        return 1;
    }
    out = tvmgen_default_map_outputs(&pools);
`,
	}
	for io, body := range mains {
		out := filepath.Join(dir, io)
		if code, _, errs := mcugen(t, "compile", model, "--board", "host", "--prefix", "tvmgen_default", "--arena", "external", "--io", io, "-o", out); code != 0 {
			t.Fatalf("%s: %s", io, errs)
		}
		src := "#include <stdio.h>\n#include <string.h>\n#include \"tvmgen_default.h\"\n\n" +
			"static uint8_t ws[TVMGEN_DEFAULT_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE] __attribute__((aligned(16)));\n\n" +
			"int main(void)\n{\n    struct tvmgen_default_workspace_pools pools = {ws};\n    int i;\n" +
			fmt.Sprintf(body, strings.Join(vals, ", ")) +
			"    for (i = 0; i < TVMGEN_DEFAULT_ACT1_FC_SIZE; i++) {\n        printf(\"%d \", ((const int8_t *)out.act1_fc)[i]);\n    }\n    return 0;\n}\n"
		if err := os.WriteFile(filepath.Join(out, "main.c"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(out, "m")
		cmd := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
			"-I", out, filepath.Join(out, "main.c"), filepath.Join(out, "tvmgen_default.c"), "-o", bin)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: gcc: %v\n%s\n%s", io, err, b, src)
		}
		b, err := exec.Command(bin).CombinedOutput()
		if err != nil || strings.TrimSpace(string(b)) != strings.Join(exp, " ") {
			t.Errorf("%s: %v: %q, want %q", io, err, b, strings.Join(exp, " "))
		}
	}
}
