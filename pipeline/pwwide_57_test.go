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

// The wide pointwise default (and the fully connected one over several
// rows) takes the 1x4 block only where the six-register stream does:
// twelve or more groups of four k a helper iteration. 256 channels make 32
// groups a pass (one by four); 272 make 68 groups, which no unroll from 12
// to 32 divides, so the layer keeps its two-channel blocks.
func TestWidePointwiseNeedsTheStream57(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		g        *graph.Graph
		op, knob string
		want     int
	}{
		{"pointwise 256", tirtest.Conv1x1(6, 6, 256, 64, graph.ActRelu, -128), "conv2d", "block_oc", 4},
		{"pointwise 272", tirtest.Conv1x1(6, 6, 272, 64, graph.ActRelu, -128), "conv2d", "block_oc", 2},
		{"4 rows 256", fcGraph51(4, 256, 64), "fully_connected", "block_rows", 1},
		{"4 rows 272", fcGraph51(4, 272, 64), "fully_connected", "block_rows", 2},
	} {
		s, err := CompileGraph(c.g, "w57", Options{Board: b, Target: "dsp", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Module.Funcs[0].Knobs[c.knob]; got != c.want {
			t.Errorf("%s: %s %d, want %d (knobs %v)", c.name, c.knob, got, c.want, s.Module.Funcs[0].Knobs)
		}
	}
}
