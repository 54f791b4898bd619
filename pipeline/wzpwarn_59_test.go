package pipeline

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The weight zero-point warning names the board it is about (test and
// bench take several, and the reason is the target's), and on a dsp board
// says which of the layers it names have uint8 weights, which the dsp
// kernels do not take (a review's ONNX Runtime model: the warning said the
// dsp kernels fold the zero point into convolutions and fully connected
// layers, then named convolutions and fully connected layers).
//
// On the Cortex-M55 the warning says so too (session 60: such a layer runs
// the generic C there, which the warning did not say; review finding).
func TestWeightZeroPointWarnNamesBoard59(t *testing.T) {
	for _, board := range []string{"mps2-an386", "mps3-an547"} {
		weightZPWarnOn(t, board)
	}
}

func weightZPWarnOn(t *testing.T, board string) {
	b, err := LoadBoard(board, "")
	if err != nil {
		t.Fatal(err)
	}
	g := withWeightZP(tirtest.Pointwise(5, 5, 8, 8), 9)
	w := g.Tensors[g.Nodes[0].Inputs[1]]
	d := graph.NewData(graph.UInt8, w.Data.Shape)
	for i, v := range w.Data.I {
		d.I[i] = v + 128
	}
	w.DType, w.Data = graph.UInt8, d
	w.Quant.ZeroPoint = []int32{137}
	var warns []string
	if _, err := CompileGraph(g, "wzp", Options{Board: b, Version: "test", Warn: func(w string) { warns = append(warns, w) }}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warns, "\n")
	for _, want := range []string{"on " + board + ":", "1 of them have uint8 weights, which the dsp kernels do not take"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q: want %q in them", warns, want)
		}
	}
}
