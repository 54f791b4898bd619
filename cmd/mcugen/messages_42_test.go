package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// Review findings on two messages: a float64 input said only that it "has
// data type DOUBLE", not that mcugen does not take it or what to do; and
// the dynamic-dimension warning's --shape hint for an input named "2nd
// input" was split in two by the shell. The hint is now quoted, and a shell
// running it binds the input (the compile after it warns no more).
func TestInputMessagesSayWhatToDo(t *testing.T) {
	b := onnx.NewBuilder("dbl", 13, 1)
	x := b.Input("x", graph.Float32, 1, 3)
	b.Model().Graph.Input[0].Type.ElemType = onnx.TDouble
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	code, _, errs := mcugen(t, "compile", writeBuilt(t, b, "dbl"), "-o", filepath.Join(t.TempDir(), "o"))
	oneErrorLine(t, "float64 input", code, errs, 1, `graph input "x" has data type DOUBLE, which mcugen does not support`, "float64 as float32")

	b = onnx.NewBuilder("dyn", 13, 1)
	x = b.Input("2nd input", graph.Float32, -1, 3)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	model := writeBuilt(t, b, "dyn")
	code, _, errs = mcugen(t, "compile", model, "-o", filepath.Join(t.TempDir(), "o"))
	if code != 0 || !strings.Contains(errs, `bind it with --shape '2nd input=...'`) {
		t.Fatalf("exit %d, warning %q: want the --shape hint quoted", code, errs)
	}
	// The hint as a shell splits it: two arguments, the second the whole
	// binding, which (dimensions filled in) binds the input.
	out, err := exec.Command("sh", "-c", `set -- --shape '2nd input=...'; printf '%s\n' "$@"`).Output()
	args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if err != nil || len(args) != 2 || args[1] != "2nd input=..." {
		t.Fatalf("sh splits the hint into %q (%v)", args, err)
	}
	code, _, errs = mcugen(t, "inspect", model, args[0], strings.Replace(args[1], "...", "1,3", 1))
	if code != 0 || strings.Contains(errs, "set to 1") {
		t.Errorf("the hint's binding: exit %d, %s", code, errs)
	}
}
