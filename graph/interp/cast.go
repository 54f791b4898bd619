package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Cast, FloatClass, cast)
	Register(graph.Cast, IntClass, cast)
}

// cast is ONNX Cast and TFLite CAST of a run-time value, by graph.CastData's
// rules. Quantized tensors are refused: a cast converts stored values,
// and the quantizer keeps Cast in float.
func cast(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	if len(ins) < 1 || ins[0] == nil {
		return nil, fmt.Errorf("missing input")
	}
	if t := g.In(n, 0); t.Quant != nil {
		return nil, fmt.Errorf("cast of quantized %s", t.DType)
	}
	yt := g.Out(n, 0)
	if yt == nil || yt.Quant != nil {
		return nil, fmt.Errorf("cast needs an unquantized output")
	}
	return []*graph.Data{graph.CastData(ins[0], yt.DType)}, nil
}
