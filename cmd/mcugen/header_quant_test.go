package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The header gives what an application needs to fill the inputs and read
// the outputs: sizes in bytes with the element count, each quantized
// tensor's scale and zero point (KWS's as TFLite's converter stored them:
// input 0.5847029 and 83, output 1/256 and -128), the stack the kernels'
// arrays take, and whether run is re-entrant; compile --json gives the same
// scales. A float model mcugen quantizes itself gets the parameters it chose,
// which no other file held (review finding).
func TestHeaderQuantization(t *testing.T) {
	m := sharedModels(t)
	dir := filepath.Join(t.TempDir(), "kws")
	code, stdout, stderr := mcugen(t, "compile", filepath.Join(m, "kws", "kws_ref_model.tflite"), "--board", "mps2-an386", "-o", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, err := os.ReadFile(filepath.Join(dir, "kws_ref_model.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"/* input \"input_1\": int8 [1 49 10 1] (490 elements) */\n#define KWS_REF_MODEL_INPUT_1_SIZE 490\n#define KWS_REF_MODEL_INPUT_1_TYPE int8_t\n#define KWS_REF_MODEL_INPUT_1_ELEMENTS 490\n",
		"#define KWS_REF_MODEL_INPUT_1_SCALE 0.5847029f\n#define KWS_REF_MODEL_INPUT_1_ZERO_POINT 83\n",
		"#define KWS_REF_MODEL_IDENTITY_SCALE 0.00390625f\n#define KWS_REF_MODEL_IDENTITY_ZERO_POINT (-128)\n",
		"#define KWS_REF_MODEL_STACK_SIZE ",
		"Sizes are in bytes",
		"Not re-entrant",
	} {
		if !strings.Contains(string(h), want) {
			t.Errorf("header lacks %q:\n%s", want, h)
		}
	}
	var rep struct {
		Inputs []struct {
			Name      string
			Scale     *float32
			ZeroPoint *int32 `json:"zero_point"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Inputs) != 1 || rep.Inputs[0].Scale == nil ||
		*rep.Inputs[0].Scale != 0.5847029 || rep.Inputs[0].ZeroPoint == nil || *rep.Inputs[0].ZeroPoint != 83 {
		t.Errorf("--json inputs: %v %s", err, stdout)
	}

	// AD quantized from float by mcugen: the input's parameters exist only
	// in mcugen's choice; the header must carry them.
	dir = filepath.Join(t.TempDir(), "ad")
	code, _, stderr = mcugen(t, "compile", filepath.Join(m, "ad", "ad01_fp32.tflite"), "--calib", filepath.Join(m, "ad", "calib"), "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, _ = os.ReadFile(filepath.Join(dir, "ad01_fp32.h"))
	if !strings.Contains(string(h), "_INPUT_1_SCALE ") || !strings.Contains(string(h), "_INPUT_1_ZERO_POINT ") {
		t.Errorf("the quantized float model's header has no input scale:\n%s", h)
	}
}
