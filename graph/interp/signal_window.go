package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.SignalWindow, IntClass, signalWindow) }

// signalWindow is TFLite Micro's SignalWindow (signal/src/window.cc): each
// run of W samples times the window, int32 product shifted right
// (arithmetic) and saturated to int16.
func signalWindow(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalWindowAttrs)
	if !ok || a == nil || len(in) != 2 || in[1] == nil {
		return nil, fmt.Errorf("needs SignalWindowAttrs and weights")
	}
	x, w := in[0], in[1]
	if len(w.I) == 0 || len(x.I)%len(w.I) != 0 || a.Shift < 0 || a.Shift > 31 {
		return nil, fmt.Errorf("weights of %d values, input of %d, shift %d", len(w.I), len(x.I), a.Shift)
	}
	y := graph.NewData(graph.Int16, x.Shape)
	for i, v := range x.I {
		y.I[i] = WindowSample(int16(v), int16(w.I[i%len(w.I)]), a.Shift)
	}
	return []*graph.Data{y}, nil
}

// WindowSample is one windowed sample: (x·w) >> shift, saturated to int16.
func WindowSample(x, w int16, shift int) int64 {
	return int64(min(max((int32(x)*int32(w))>>shift, -32768), 32767))
}
