package pipeline

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A convolution over one or two input channels whose kernel rows hold a
// multiple of four values (KW·Cin) widens each kernel row straight from the
// input where all its taps are inside, and stages only the rows with a tap
// outside, tap by tap with each tap's bounds simplified
// (tir/dsp_kwrows.go): bit-exact against the reference interpreter on the
// M4 for KWS's 10×4 stride-2 layer with its SAME padding (4 above, 5 below,
// 1 each side), a 3×2 kernel over two channels, a 1-D 1×8 kernel over one
// channel with uneven padding, and (the old whole-window staging, KW·Cin =
// 6) a 3×3 kernel over two channels.
func TestKernelRowsWidened56(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, c := range []struct {
		h, w, cin, cout, kh, kw, st int
		pad                         graph.Padding
		rows                        bool
	}{
		{49, 10, 1, 8, 10, 4, 2, graph.Padding{Top: 4, Bottom: 5, Left: 1, Right: 1}, true},
		{7, 6, 2, 4, 3, 2, 1, graph.Padding{Top: 1, Bottom: 1, Left: 1, Right: 0}, true},
		{1, 20, 1, 8, 1, 8, 1, graph.Padding{Left: 3, Right: 4}, true},
		{6, 6, 2, 4, 3, 3, 1, graph.Padding{Top: 1, Bottom: 1, Left: 1, Right: 1}, false},
	} {
		name := fmt.Sprintf("%dx%dx%d-k%dx%d-s%d", c.h, c.w, c.cin, c.kh, c.kw, c.st)
		t.Run(name, func(t *testing.T) {
			g := func() *graph.Graph {
				return tirtest.ConvRectPad(c.h, c.w, c.cin, c.cout, c.kh, c.kw, c.st, c.pad, graph.ActRelu, -128)
			}
			o := Options{Board: b, Target: "dsp", Version: "test"}
			s, err := CompileGraph(g(), name, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := cContains(s.Files, "_krow["); got != c.rows {
				t.Errorf("%s: per-row staging in the C: %v, want %v", name, got, c.rows)
			}
			if c.rows && cContains(s.Files, "_row[") {
				t.Errorf("%s: the C still stages whole windows", name)
			}
			checkedRun(t, g(), name, o, 3, 56)
		})
	}
}
