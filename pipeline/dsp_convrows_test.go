package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The row-widened dsp convolution (knob conv_rows = 1) runs bit-exact on
// the Cortex-M4 board at strides 1 and 2, odd and even widths, several
// input channel counts, int16 and int8 weights, on random and extreme
// inputs.
func TestDSPConvRowsUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	rows := func(k map[string]int) map[string]map[string]int {
		m := map[string]int{"conv_rows": 1}
		for n, v := range k {
			m[n] = v
		}
		return map[string]map[string]int{"conv2d": m}
	}
	for _, c := range []struct {
		name  string
		g     *graph.Graph
		knobs map[string]map[string]int
	}{
		{"s1", tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5), rows(nil)},
		{"s1-relu-w7", tirtest.Conv3x3Size(5, 7, 16, 1, 1, graph.ActRelu, -128), rows(nil)},
		{"s2-w9", tirtest.Conv3x3Size(5, 9, 12, 1, 2, graph.ActNone, 5), rows(nil)},
		{"s2-relu-w8", tirtest.Conv3x3Size(6, 8, 4, 1, 2, graph.ActRelu, -128), rows(nil)},
		{"s1-oc4-px1", tirtest.Conv3x3Size(4, 5, 8, 1, 1, graph.ActRelu, -128), rows(map[string]int{"block_oc": 4, "block_px": 1})},
		{"s1-w8", tirtest.Conv3x3Size(4, 6, 8, 1, 1, graph.ActNone, 5), rows(map[string]int{"weights": 8})},
		// Three input channels: dsp_widen3_s8 (a word read per pixel but the
		// last of each row) and the gathered column.
		{"rgb-s1-relu", tirtest.Conv3x3Size(6, 7, 3, 1, 1, graph.ActRelu, -128), rows(nil)},
		{"rgb-s2-w9", tirtest.Conv3x3Size(7, 9, 3, 1, 2, graph.ActNone, 5), rows(nil)},
		{"rgb-s2-w8-segments", tirtest.Conv3x3Size(6, 8, 3, 1, 2, graph.ActRelu, -128), rows(map[string]int{"rows_gather": 0})},
		{"rgb-s1-int8-weights", tirtest.Conv3x3Size(5, 5, 3, 1, 1, graph.ActNone, 5), rows(map[string]int{"weights": 8})},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGraphUnderQEMU(t, b, c.g, c.name, "dsp", c.knobs, 6, 9, "_rows[")
		})
	}
}

// The row-widened convolution is the default on the Cortex-M4 and, since
// session 7 (no core override left), on the Cortex-M33; a knob the caller
// sets wins. (TestTargetForCore has the core overrides' mechanism.)
func TestDSPConvRowsCoreDefault(t *testing.T) {
	g := tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5)
	rows := func(board string, knobs map[string]map[string]int) int {
		b, err := LoadBoard(board, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := CompileGraph(g, "rows", Options{Board: b, Target: "dsp", Knobs: knobs, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range s.Module.Funcs {
			if f.Op == "conv2d" {
				return f.Knobs["conv_rows"]
			}
		}
		t.Fatal("no conv2d kernel")
		return -1
	}
	if got := rows("mps2-an386", nil); got != 1 {
		t.Errorf("Cortex-M4: conv_rows = %d, want the row form", got)
	}
	if got := rows("mps2-an505", nil); got != 1 {
		t.Errorf("Cortex-M33: conv_rows = %d, want the row form", got)
	}
	if got := rows("mps2-an505", map[string]map[string]int{"conv2d": {"conv_rows": 0}}); got != 0 {
		t.Errorf("Cortex-M33 with conv_rows=0 asked: %d", got)
	}
}
