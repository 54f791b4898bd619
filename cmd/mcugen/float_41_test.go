package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/internal/needtool"
)

// TestFloatFlag: --float keeps named nodes in float32 when quantizing. The
// quantize report marks them (and --json says "float": true); the firmware
// of a mixed build runs bit-exact against the reference interpreter on the
// host; --float without quantization, or naming no node, is one error
// line, exit 1.
func TestFloatFlag(t *testing.T) {
	model := "../../testdata/onnx/cnn.onnx"
	dir := t.TempDir()
	code, out, errs := mcugen(t, "quantize", model, "--calib-random", "8", "-o", filepath.Join(dir, "q.onnx"), "--float", "Gemm_10", "--float", "Conv_5+Clip_6", "--json")
	if code != 0 {
		t.Fatalf("quantize --float: exit %d: %s", code, errs)
	}
	var rep struct {
		Layers []struct {
			Name  string `json:"name"`
			Float bool   `json:"float"`
		} `json:"layers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	float := map[string]bool{}
	for _, l := range rep.Layers {
		float[l.Name] = l.Float
	}
	for name, want := range map[string]bool{"Gemm_10": true, "Conv_5": true, "Clip_6": true, "Conv_1+Relu_3": false, "Conv_7": false} {
		if got, ok := float[name]; !ok || got != want {
			t.Errorf("report row %s: present %v, float %v, want float %v (rows %v)", name, ok, got, want, float)
		}
	}

	// Compiling the QDQ file keeps them float as the report measured them
	// (folding quantized them again).
	code, _, errs = mcugen(t, "compile", filepath.Join(dir, "q.onnx"), "--board", "host", "-o", filepath.Join(dir, "qc"))
	if code != 0 || !strings.Contains(errs, "3 node(s) stay in float32, as mcugen quantize marked them (its --float, or ops it keeps float): Conv_5, Clip_6, Gemm_10") {
		t.Errorf("compile q.onnx: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "compile", model, "--board", "host", "-o", filepath.Join(dir, "c"), "--float", "Conv_7")
	oneErrorLine(t, "--float without quantizing", code, errs, 2, "--float Conv_7 applies only when quantizing a float model")
	code, _, errs = mcugen(t, "compile", model, "--board", "host", "-o", filepath.Join(dir, "c"), "--calib-random", "4", "--float", "Conv_9")
	oneErrorLine(t, "--float naming no node", code, errs, 1, `--float "Conv_9" matches no node of the model`, "Conv_1, Relu_3")

	// What a glob reached is said (layout moves, the importer's NHWC
	// Transposes, are not reached by one); an int8 model says --float is
	// ignored.
	code, _, errs = mcugen(t, "compile", model, "--board", "host", "-o", filepath.Join(dir, "c2"), "--calib-random", "4", "--float", "Conv_*")
	if code != 0 || !strings.Contains(errs, "--float keeps 3 node(s) in float32: Conv_1, Conv_5, Conv_7\n") {
		t.Errorf("--float 'Conv_*': exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "compile", "../../testdata/tflite/mlp_int8.tflite", "--board", "host", "-o", filepath.Join(dir, "c3"), "--calib-random", "4", "--float", "x")
	if code != 0 || !strings.Contains(errs, "--calib/--quantize/--float ignored") {
		t.Errorf("an int8 model: exit %d, stderr %q", code, errs)
	}

	needtool.Need(t, "gcc", "gcc")
	code, out, errs = mcugen(t, "test", model, "--calib-random", "8", "--float", "Conv_*", "--float", "Gemm_10", "--board", "host", "--random", "3")
	if code != 0 || !strings.Contains(out, "bit-exact") {
		t.Errorf("test --float: exit %d\n%s\n%s", code, out, errs)
	}
}
