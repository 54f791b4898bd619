package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A 3×3 convolution over an RGB input (a vision network's first layer)
// gathers each window into 14 pair words and runs the im2col GEMM
// (tir/dsp_col33.go): bit-exact against the reference interpreter with
// TensorFlow's SAME padding at stride 2 (bottom and right only), padding
// on every side, none, odd sizes, maps smaller than a few windows; and
// in fewer instructions than the three-channel rows form it replaces
// (knob col33 0) on every layer of a realistic size: at least 12% fewer
// on VWW's and MobileNetV2's first layers.
func TestRGBFirstLayerCol33_55(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	same2 := graph.Padding{Bottom: 1, Right: 1}
	all1 := graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}
	for _, c := range []struct {
		name           string
		h, w, cout, st int
		pad            graph.Padding
		act            graph.Activation
		zp             int32
		gain           float64 // the most instructions against the rows form (0: only fewer)
	}{
		{"vww-96-s2-c8", 96, 96, 8, 2, same2, graph.ActRelu6, -128, 0.88},
		{"mbv2-96-s2-c16", 96, 96, 16, 2, same2, graph.ActRelu6, -128, 0.88},
		{"ic-32-s1-c16", 32, 32, 16, 1, all1, graph.ActRelu, -128, 0},
		{"odd-17x13-s2-c8-none", 17, 13, 8, 2, all1, graph.ActNone, 5, 0},
		{"valid-9x9-s1-c6", 9, 9, 6, 1, graph.Padding{}, graph.ActRelu, -128, -1},
		{"tiny-5x4-s2-c4", 5, 4, 4, 2, all1, graph.ActNone, -7, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := func() *graph.Graph { return tirtest.ConvRGBPad(c.h, c.w, c.cout, c.st, c.pad, c.act, c.zp) }
			o := Options{Board: b, Version: "test"}
			s, err := CompileGraph(g(), c.name, o)
			if err != nil {
				t.Fatal(err)
			}
			if !cContains(s.Files, "dsp_col33c3_s8(") {
				t.Fatalf("%s: the C does not call dsp_col33c3_s8", c.name)
			}
			col := checkedRun(t, g(), c.name, o, 2, 55)
			if c.gain < 0 {
				return
			}
			o.Knobs = map[string]map[string]int{"conv2d": {"col33": 0}}
			rows := checkedRun(t, g(), c.name+"-rows", o, 1, 55)
			t.Logf("%s: %d instructions, the rows form %d (%.3f)", c.name, col, rows, float64(col)/float64(rows))
			if col >= rows || c.gain > 0 && float64(col) > c.gain*float64(rows) {
				t.Errorf("%s: %d instructions, the rows form %d", c.name, col, rows)
			}
		})
	}
}
