package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A pointwise layer over 128 or 256 and more input channels takes one
// pixel by four channels and 32 groups of four k by default, the 1x4 block
// that streams its weights through six registers; it is bit-exact on the
// Cortex-M4 and takes fewer instructions than the 2x2 block it had (a
// MobileNetV2 projection layer, 6×6 576→96), while a 64-channel layer
// keeps its two-channel blocks.
func TestWidePointwiseTakesOneByFour57(t *testing.T) {
	b := qemuBoard(t, "mps2-an386")
	wide := func() *graph.Graph { return tirtest.Conv1x1(6, 6, 576, 96, graph.ActRelu, -128) }
	s, err := CompileGraph(wide(), "pw576", Options{Board: b, Target: "dsp", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Module.Funcs[0].Knobs; k["block_px"] != 1 || k["block_oc"] != 4 || k["unroll_k"] != 32 {
		t.Errorf("576-channel pointwise layer: knobs %v, want block_px 1, block_oc 4, unroll_k 32", k)
	}
	defaultTakesFewer(t, b, wide, nil, map[string]int{"block_px": 2, "block_oc": 2, "unroll_k": 24}, "1x4", "2x2 (the default before)")
	narrow, err := CompileGraph(tirtest.Conv1x1(25, 5, 64, 64, graph.ActRelu, -128), "pw64", Options{Board: b, Target: "dsp", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if k := narrow.Module.Funcs[0].Knobs; k["block_oc"] != 2 {
		t.Errorf("64-channel pointwise layer: knobs %v, want block_oc 2", k)
	}
}
