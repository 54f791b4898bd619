package emitc

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
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
		"new":             "new_",
		"class":           "class_",
		"and":             "and_",
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

// A tvmgen_<module> prefix, as relay.build gave microTVM's AOT API, asks for
// microTVM's names; no other prefix does.
func TestMicroTVM(t *testing.T) {
	for p, want := range map[string]bool{"tvmgen_default": true, "TVMGEN_Default": true, "tvmgen_kws": true,
		"tvmgen_": false, "tvmgen": false, "model": false, "my_tvmgen_default": false} {
		if got := MicroTVM(p); got != want {
			t.Errorf("MicroTVM(%q) = %v, want %v", p, got, want)
		}
	}
}

// microTVM's member names are TVM v0.18's: every byte that is not an ASCII
// letter or digit becomes _, case kept (runtime SanitizeName, applied by
// interface_c.cc's EmitStruct); outputs are the TFLite tensors' names, or
// for other models "output" (one) and "output<i>" (model_library_format.py).
// mcugen departs only where TVM's header would not compile.
func TestMicroTVMIONames(t *testing.T) {
	mod := func(ins, outs []string) *tir.Module {
		m := &tir.Module{}
		for _, n := range ins {
			m.Inputs = append(m.Inputs, &tir.IO{Name: n})
		}
		for _, n := range outs {
			m.Outputs = append(m.Outputs, &tir.IO{Name: n})
		}
		return m
	}
	cases := []struct {
		format            string
		ins, outs         []string
		wantIns, wantOuts []string
	}{
		{"tflite", []string{"serving_default_input_1:0"}, []string{"StatefulPartitionedCall:0"},
			[]string{"serving_default_input_1_0"}, []string{"StatefulPartitionedCall_0"}},
		{"tflite", []string{"Input3"}, []string{"Identity", "Identity_1"},
			[]string{"Input3"}, []string{"Identity", "Identity_1"}},
		// Not collapsed or trimmed; a UTF-8 letter is one _ a byte. But a
		// name C reserves for any use (starting __, or _ and a capital)
		// is made one it does not (TVM's header had member __).
		{"tflite", []string{"a//b/", "_x"}, []string{"é", "_Y"}, []string{"a__b_", "_x"}, []string{"t", "Y"}},
		// A renamed member never takes another tensor's name.
		{"onnx", []string{"Input", "input", "input_1"}, []string{"y"}, []string{"Input", "input_2", "input_1"}, []string{"output"}},
		{"onnx", []string{"Input3"}, []string{"Plus214_Output_0"}, []string{"Input3"}, []string{"output"}},
		{"onnx", []string{"x"}, []string{"a", "b", "c"}, []string{"x"}, []string{"output0", "output1", "output2"}},
		{"", []string{"x"}, []string{"y"}, []string{"x"}, []string{"output"}},
		// What TVM's header would not compile: a leading digit, a C keyword or
		// macro, size macros that collide (case-insensitively, or with
		// <PREFIX>_WORKSPACE_SIZE). The generated code's own names are fine
		// as members.
		{"tflite", []string{"0x", "int", "NULL", "in", "Input", "input", "workspace"}, []string{"out", "arena"},
			[]string{"t_0x", "int_", "NULL_", "in", "Input", "input_1", "workspace_1"}, []string{"out", "arena_1"}},
		// USMP's pool macro, <PREFIX>_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE, is
		// the header's too (a tensor of that name redefined it: session 50).
		{"tflite", []string{"global_workspace_workspace_pool"}, []string{"y"}, []string{"global_workspace_workspace_pool_1"}, []string{"y"}},
		// A renamed name ending in _ takes its number without a second _
		// (X__1 held __, which C++ reserves; session 30).
		{"tflite", []string{"x_", "X-"}, []string{"y"}, []string{"x_", "X_1"}, []string{"y"}},
	}
	for _, c := range cases {
		in, out := MicroTVMIONames(mod(c.ins, c.outs), c.format)
		if !reflect.DeepEqual(in, c.wantIns) || !reflect.DeepEqual(out, c.wantOuts) {
			t.Errorf("%s %q %q: %q %q, want %q %q", c.format, c.ins, c.outs, in, out, c.wantIns, c.wantOuts)
		}
	}
	// Emit and the report use them with microTVM's prefix only.
	m := mod([]string{"Input3"}, []string{"Identity"})
	if in, out := ioNames(m, Options{Prefix: "tvmgen_default", Format: "tflite"}); in[0] != "Input3" || out[0] != "Identity" {
		t.Errorf("tvmgen_default: %q %q", in, out)
	}
	if in, out := ioNames(m, Options{Prefix: "model", Format: "tflite"}); in[0] != "input3" || out[0] != "identity" {
		t.Errorf("model: %q %q", in, out)
	}
}

// The header with microTVM's prefix, kept in testdata/ and reviewed: the
// golden int8 model's, as from a TFLite file.
func TestMicroTVMHeaderGolden(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Name != "depthwise_s8" {
			continue
		}
		opts := Options{Prefix: "tvmgen_default", Model: "depthwise_s8.tflite", Version: "golden"}
		files, rep, err := Compile(c.Graph, planFor(t, c.Graph, false), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Inputs[0].CName != "in0" || rep.Outputs[0].CName != "t1" {
			t.Errorf("report: %+v %+v", rep.Inputs, rep.Outputs)
		}
		h := files["tvmgen_default.h"]
		path := filepath.Join("testdata", "microtvm_depthwise_s8.h.golden")
		if *update {
			if err := os.WriteFile(path, h, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./emitc -update to create it)", err)
		}
		if !bytes.Equal(want, h) {
			t.Errorf("tvmgen_default.h differs from %s (go test ./emitc -update refreshes it):\n%s", path, diffText(string(want), string(h)))
		}
		return
	}
	t.Fatal("no depthwise_s8 case")
}

// SafePrefix always gives a prefix PrefixProblem takes (review finding:
// _1x gave 1x_model, not an identifier, and _int suggested a keyword).
func TestSafePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"_kws": "kws", "kws__x": "kws_x", "_1x": "t_1x", "_int": "int_model", "_a_": "a",
		"stdint": "stdint_model", "__": "model", "my__net-": "my_net", "Math": "math_model",
	} {
		got := SafePrefix(in)
		if got != want || PrefixProblem(got) != "" {
			t.Errorf("SafePrefix(%q) = %q (problem %q), want %q", in, got, PrefixProblem(got), want)
		}
	}
}

// mcugen's own member names follow the README's rule: lower case, runs of
// other characters one _, a C keyword with a trailing _; the generated
// code's own names stay as they are (API journey: out became out_, its
// macros OUT__SIZE), and one whose size macro the header has (arena,
// stack) gets _1.
func TestIONamesOwnNames(t *testing.T) {
	m := &tir.Module{}
	for _, n := range []string{"in", "main", "Int", "x.y", "_out"} {
		m.Inputs = append(m.Inputs, &tir.IO{Name: n})
	}
	for _, n := range []string{"out", "arena", "stack", "int"} {
		m.Outputs = append(m.Outputs, &tir.IO{Name: n})
	}
	in, out := IONames(m)
	// Int is int once lower-cased, a keyword; the second int_ is int_1.
	wantIn, wantOut := []string{"in", "main", "int_", "x_y", "out"}, []string{"out_1", "arena_1", "stack_1", "int_1"}
	if !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(out, wantOut) {
		t.Errorf("IONames: %q %q, want %q %q", in, out, wantIn, wantOut)
	}
}
