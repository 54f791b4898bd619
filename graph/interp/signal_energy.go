package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.SignalEnergy, IntClass, signalEnergy) }

// signalEnergy is TFLite Micro's SignalEnergy (signal/src/energy.cc):
// re² + im² of bins Start to End − 1 as uint32 (held as int64). TFLite
// Micro leaves the other bins unwritten; here they are 0.
func signalEnergy(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalEnergyAttrs)
	if !ok || a == nil || len(in) != 1 {
		return nil, fmt.Errorf("needs SignalEnergyAttrs")
	}
	x := in[0]
	if a.Start < 0 || a.Start > a.End || 2*a.End > len(x.I) {
		return nil, fmt.Errorf("bins %d to %d of %d values", a.Start, a.End, len(x.I))
	}
	y := graph.NewData(graph.Int64, []int{len(x.I) / 2})
	for i := a.Start; i < a.End; i++ {
		y.I[i] = Energy(int16(x.I[2*i]), int16(x.I[2*i+1]))
	}
	return []*graph.Data{y}, nil
}

// Energy is re² + im² modulo 2^32 (only −32768² + −32768² wraps int32).
func Energy(re, im int16) int64 {
	return int64(uint32(int32(re)*int32(re)) + uint32(int32(im)*int32(im)))
}
