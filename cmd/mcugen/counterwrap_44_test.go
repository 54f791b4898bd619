package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// The harness's 32-bit counter wraps every 1,342,177,280 instructions on the
// MPS2 boards (25 MHz under -icount shift=7), and nothing counted the wraps:
// IC's float model on rp2040 (its ARMv6-M code run on mps2-an385, soft
// float) reported 633,725,774 instructions, one wrap short, and --layers a
// negative rest (review finding). The FPGAIO's 100 Hz clock now counts the
// wraps. The layers, each far below a wrap, are the independent measure:
// the whole run must equal their sum give or take the hook's few
// instructions per layer.
func TestCounterWrapCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs QEMU: two runs of about two billion instructions")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "ic", "pretrainedResnet.tflite")
	code, out, errs := mcugen(t, "bench", model, "--board", "rp2040", "--layers", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	var r struct {
		Results []struct {
			Instructions int64 `json:"instructions"`
			Layers       []struct {
				Instructions int64 `json:"instructions"`
			} `json:"layers"`
			Rest int64 `json:"rest_instructions"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Results) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	res := r.Results[0]
	var sum int64
	for _, l := range res.Layers {
		sum += l.Instructions
	}
	const wrap = 1 << 32 * 10 / 32 // 2^32 ticks at 3.2 ticks an instruction
	if sum < wrap || len(res.Layers) == 0 {
		t.Fatalf("the layers add up to %d instructions; the test needs a run past the counter's wrap (%d)", sum, wrap)
	}
	if d := res.Instructions - sum; d < -100*int64(len(res.Layers)) || d > 100*int64(len(res.Layers)) {
		t.Errorf("the run counted %d instructions, its %d layers %d (rest %d)", res.Instructions, len(res.Layers), sum, res.Rest)
	}
	t.Logf("%d instructions, layers %d", res.Instructions, sum)
}
