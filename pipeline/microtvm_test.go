package pipeline

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// microTVMIO is one input or output as code written for microTVM's AOT API
// names it: the member of struct tvmgen_default_inputs/_outputs and the size
// macro TVM's interface_c.cc defined for it.
type microTVMIO struct{ field, size string }

// kerasNamedModel is an int8 TFLite model named as a Keras export is, whose
// names microTVM sanitized (":" to "_") keeping their case: input
// "serving_default_input_1:0", outputs "StatefulPartitionedCall:0" and
// "Identity_1".
func kerasNamedModel(t *testing.T) string {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "serving_default_input_1:0", Type: tg.Int8, Shape: []int32{1, 8}, Scale: []float32{0.5}, ZeroPoint: []int64{-3}})
	y0 := m.AddTensor(tg.Tensor{Name: "StatefulPartitionedCall:0", Type: tg.Int8, Shape: []int32{1, 8}, Scale: []float32{0.5}, ZeroPoint: []int64{-3}})
	y1 := m.AddTensor(tg.Tensor{Name: "Identity_1", Type: tg.Int8, Shape: []int32{1, 8}, Scale: []float32{0.25}, ZeroPoint: []int64{10}})
	m.Inputs, m.Outputs = []int32{x}, []int32{y0, y1}
	m.AddOp(tg.OpRelu, nil, []int32{x}, y0)
	m.AddOp(tg.OpRelu6, nil, []int32{x}, y1)
	path := filepath.Join(t.TempDir(), "keras_named.tflite")
	if err := os.WriteFile(path, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// With --prefix tvmgen_default a main.c written for microTVM's AOT API (its
// Zephyr aot_standalone_demo's style: designated initializers of struct
// tvmgen_default_inputs/_outputs, tvmgen_default_run, a workspace of
// TVMGEN_DEFAULT_WORKSPACE_SIZE, the per-tensor size macros) compiles
// unchanged with gcc -std=c99 -pedantic -Wall -Wextra -Werror against the
// generated C, runs, and gives the reference interpreter's outputs. The
// names are TVM v0.18's (interface_c.cc, model_library_format.py): a TFLite
// model's inputs and outputs after their tensor names, sanitized with their
// case kept; an ONNX model's outputs "output" (one) or "output<i>".
func TestMicroTVMMainCompiles(t *testing.T) {
	needTools(t, "host")
	b, err := LoadBoard("host", "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, model string
		ins, outs   []microTVMIO
	}{
		{"single-output tflite", "../testdata/tflite/cnn_int8.tflite",
			[]microTVMIO{{"input", "TVMGEN_DEFAULT_INPUT_SIZE"}},
			[]microTVMIO{{"act7_softmax", "TVMGEN_DEFAULT_ACT7_SOFTMAX_SIZE"}}},
		{"multi-output tflite", "../testdata/tflite/op_int8_split.tflite",
			[]microTVMIO{{"in1", "TVMGEN_DEFAULT_IN1_SIZE"}},
			[]microTVMIO{{"out", "TVMGEN_DEFAULT_OUT_SIZE"}, {"out1", "TVMGEN_DEFAULT_OUT1_SIZE"}}},
		{"keras-named tflite", kerasNamedModel(t),
			[]microTVMIO{{"serving_default_input_1_0", "TVMGEN_DEFAULT_SERVING_DEFAULT_INPUT_1_0_SIZE"}},
			[]microTVMIO{{"StatefulPartitionedCall_0", "TVMGEN_DEFAULT_STATEFULPARTITIONEDCALL_0_SIZE"}, {"Identity_1", "TVMGEN_DEFAULT_IDENTITY_1_SIZE"}}},
		{"onnx", "../testdata/onnx/mlp.onnx",
			[]microTVMIO{{"features", "TVMGEN_DEFAULT_FEATURES_SIZE"}},
			[]microTVMIO{{"output", "TVMGEN_DEFAULT_OUTPUT_SIZE"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Compile(c.model, Options{Board: b, Prefix: "tvmgen_default", Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Report.Inputs) != len(c.ins) || len(s.Report.Outputs) != len(c.outs) {
				t.Fatalf("the model has %d inputs and %d outputs, the test %d and %d", len(s.Report.Inputs), len(s.Report.Outputs), len(c.ins), len(c.outs))
			}
			vec := RandomInputs(s.Graph, 1, 7)[0]
			ref, err := interp.NewSession(s.Graph).Run(vec)
			if err != nil {
				t.Fatal(err)
			}
			var main bytes.Buffer
			main.WriteString("#include <stdio.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"tvmgen_default.h\"\n\n")
			// microTVM's demos hand the runtime a workspace of this size; a
			// model that needs none gets a 0 there, which C forbids as an
			// array size.
			main.WriteString("static uint8_t g_aot_memory[TVMGEN_DEFAULT_WORKSPACE_SIZE > 0 ? TVMGEN_DEFAULT_WORKSPACE_SIZE : 1];\n\n")
			for i, io := range c.ins {
				d := vec[s.Report.Inputs[i].Name]
				fmt.Fprintf(&main, "static const uint8_t input%d_bytes[%s] = {%s};\nstatic uint32_t input%d[(%s + 3) / 4];\n", i, io.size, cBytes(npy.Bytes(d)), i, io.size)
			}
			for i, io := range c.outs {
				fmt.Fprintf(&main, "static uint32_t output%d[(%s + 3) / 4];\n", i, io.size)
			}
			main.WriteString("\nint main(void)\n{\n    size_t i;\n    int32_t ret;\n")
			for i, io := range c.ins {
				fmt.Fprintf(&main, "    memcpy(input%d, input%d_bytes, %s);\n", i, i, io.size)
			}
			main.WriteString("    struct tvmgen_default_inputs inputs = {\n")
			for i, io := range c.ins {
				fmt.Fprintf(&main, "        .%s = input%d,\n", io.field, i)
			}
			main.WriteString("    };\n    struct tvmgen_default_outputs outputs = {\n")
			for i, io := range c.outs {
				fmt.Fprintf(&main, "        .%s = output%d,\n", io.field, i)
			}
			main.WriteString("    };\n    printf(\"workspace %u\\n\", (unsigned)TVMGEN_DEFAULT_WORKSPACE_SIZE);\n    memset(g_aot_memory, 0, sizeof g_aot_memory);\n")
			main.WriteString("    ret = tvmgen_default_run(&inputs, &outputs);\n    if (ret != 0) {\n        printf(\"run: %d\\n\", (int)ret);\n        return 1;\n    }\n")
			for i, io := range c.outs {
				fmt.Fprintf(&main, "    printf(\"output%d \");\n    for (i = 0; i < %s; i++) {\n        printf(\"%%02x\", ((const uint8_t *)output%d)[i]);\n    }\n    printf(\"\\n\");\n", i, io.size, i)
			}
			main.WriteString("    return 0;\n}\n")

			dir := t.TempDir()
			if err := WriteFiles(dir, s.Files); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.c"), main.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			exe := filepath.Join(dir, "demo")
			args := []string{"-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-I", dir, "-o", exe,
				filepath.Join(dir, "main.c"), filepath.Join(dir, "tvmgen_default.c"), "-lm"}
			if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s\n--- main.c ---\n%s\n--- tvmgen_default.h ---\n%s", err, out, main.String(), s.Files["tvmgen_default.h"])
			}
			out, err := exec.Command(exe).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", exe, err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if want := fmt.Sprintf("workspace %d", s.Report.ArenaBytes); lines[0] != want {
				t.Errorf("printed %q, want %q (the arena)", lines[0], want)
			}
			if len(lines) != 1+len(c.outs) {
				t.Fatalf("output:\n%s", out)
			}
			for i := range c.outs {
				name := s.Report.Outputs[i].Name
				tt := s.Graph.Tensors[name]
				raw, err := hex.DecodeString(strings.TrimPrefix(lines[1+i], fmt.Sprintf("output%d ", i)))
				if err != nil {
					t.Fatal(err)
				}
				got, err := npy.FromBytes(raw, tt.DType, tt.Shape)
				if err != nil {
					t.Fatal(err)
				}
				if ok, diff := CompareModel(got, ref[name]); !ok {
					t.Errorf("output %q (.%s) differs from the reference by %g", name, c.outs[i].field, diff)
				}
			}
		})
	}
}

func cBytes(b []byte) string {
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = fmt.Sprintf("0x%02x", v)
	}
	return strings.Join(parts, ", ")
}
