package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compile on a 512 KiB Cortex-M4 from a user board file: AD's int16
// weights (535 KB) do not fit, so its largest layer keeps int8 weights;
// the text report says so in one line and the JSON report carries it. On
// 256 KiB the one-line FitError comes before anything is written.
func TestCompileKeepsWeightsInt8ToFit(t *testing.T) {
	dir := sharedModels(t)
	tmp := t.TempDir()
	boards, _ := filepath.Abs("../../testdata/boards/small_flash.star") // Cortex-M4F parts with 512 and 256 KiB of flash
	model := filepath.Join(dir, "ad/ad01_int8.tflite")
	code, out, errs := mcugen(t, "compile", model, "--boards", boards, "--board", "m4-512k", "-o", filepath.Join(tmp, "a"))
	if code != 0 || strings.Count(out, "kept int8 to fit flash") != 1 || !strings.Contains(out, "weights: 1 layer kept int8 to fit flash (") {
		t.Fatalf("compile: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = mcugen(t, "compile", model, "--boards", boards, "--board", "m4-512k", "-o", filepath.Join(tmp, "b"), "--json")
	var r struct {
		WeightsBytes int `json:"weights_bytes"`
		Int8         *struct {
			Kernels    []string `json:"kernels"`
			SavedBytes int64    `json:"saved_bytes"`
			ConstBytes int64    `json:"const_bytes"`
			FlashBytes int64    `json:"flash_bytes"`
		} `json:"int8_weights"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Int8 == nil {
		t.Fatalf("compile --json: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	if len(r.Int8.Kernels) != 1 || r.Int8.SavedBytes <= 0 || r.Int8.ConstBytes != int64(r.WeightsBytes) || r.Int8.FlashBytes != 512*1024 {
		t.Errorf("int8_weights %+v, weights_bytes %d", *r.Int8, r.WeightsBytes)
	}
	// Room to spare: no such line, no such field.
	code, out, _ = mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(tmp, "c"), "--json")
	if code != 0 || strings.Contains(out, "int8_weights") {
		t.Errorf("4 MiB: exit %d\n%s", code, out)
	}
	code, _, errs = mcugen(t, "compile", model, "--boards", boards, "--board", "m4-256k", "-o", filepath.Join(tmp, "d"))
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "does not fit on m4-256k: needs") {
		t.Errorf("256 KiB: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(tmp, "d")); !os.IsNotExist(err) {
		t.Errorf("256 KiB: the output directory was written")
	}
}
