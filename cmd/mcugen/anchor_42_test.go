package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// bench sets TFLite Micro's count beside the MLPerf Tiny int8 file TFLite
// Micro ran, and beside nothing else: AD's float model quantized by mcugen
// has the int8 file's MACs but is another program (review finding: it was
// shown "0.34x" of TFLite Micro's figure for the official file).
func TestBenchAnchorsOnlyTheirOwnModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU")
	}
	needQEMU(t)
	dir := filepath.Join(sharedModels(t), "ad")
	for _, c := range []struct {
		args []string
		want int64
	}{
		{[]string{filepath.Join(dir, "ad01_int8.tflite")}, 582895}, // anchors.md, AD on mps2-an386
		{[]string{filepath.Join(dir, "ad01_fp32.tflite"), "--calib", filepath.Join(dir, "calib")}, 0},
	} {
		code, out, errs := mcugen(t, append([]string{"bench", "--board", "mps2-an386", "--json"}, c.args...)...)
		if code != 0 {
			t.Fatalf("bench %v: exit %d\n%s", c.args, code, errs)
		}
		var r struct {
			Results []struct {
				MACs   int64 `json:"macs"`
				Anchor int64 `json:"tflm_cmsis_nn_instructions"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		if got := r.Results[0]; got.Anchor != c.want || got.MACs != 264192 {
			t.Errorf("bench %v: TFLite Micro figure %d, MACs %d; want %d beside AD's 264,192 MACs", c.args, got.Anchor, got.MACs, c.want)
		}
	}
}
