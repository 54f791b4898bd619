package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

// TFLite Micro's integer SVDF (EvalIntegerSvdfReference), in the two steps
// graph.SVDFFeature and graph.SVDFTime describe.

func init() {
	Register(graph.SVDFFeature, IntClass, svdfFeature)
	Register(graph.SVDFTime, IntClass, svdfTime)
}

// svdfQuant returns the per-tensor scale and zero point of the named
// tensors, refusing per-axis or missing parameters.
func svdfQuant(ts ...*graph.Tensor) ([]float32, []int64, error) {
	var s []float32
	var z []int64
	for _, t := range ts {
		if t == nil || t.Quant == nil || len(t.Quant.Scale) != 1 {
			name := "(missing)"
			if t != nil {
				name = t.Name
			}
			return nil, nil, fmt.Errorf("tensor %s needs per-tensor quantization", name)
		}
		sc, zp := t.Quant.At(0)
		s, z = append(s, sc), append(z, int64(zp))
	}
	return s, z, nil
}

func svdfFeature(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SVDFAttrs)
	if !ok || len(in) != 3 {
		return nil, fmt.Errorf("needs SVDFAttrs and three inputs")
	}
	xt, wt, st := g.In(n, 0), g.In(n, 1), g.In(n, 2)
	sc, zp, err := svdfQuant(xt, wt, st)
	if err != nil {
		return nil, err
	}
	x, w, s := in[0], in[1], in[2]
	batch, inSize := xt.Shape[0], xt.Shape[1]
	filters, mem := wt.Shape[0], a.Memory
	if wt.Shape[1] != inSize || s.Len() != batch*filters*mem {
		return nil, fmt.Errorf("weights_feature %v and state of %d values do not fit input %v, memory %d", wt.Shape, s.Len(), xt.Shape, mem)
	}
	m, shift := qmath.SVDFMultiplier(sc[0], sc[1], sc[2])
	lo, hi := st.DType.Range()
	out := graph.NewData(st.DType, st.Shape)
	for b := 0; b < batch; b++ {
		for f := 0; f < filters; f++ {
			row := (b*filters + f) * mem
			copy(out.I[row:row+mem-1], s.I[row+1:row+mem])
			var acc int64
			for i := 0; i < inSize; i++ {
				acc += w.I[f*inSize+i] * (x.I[b*inSize+i] - zp[0])
			}
			v := int64(qmath.MultiplyByQuantizedMultiplier(int32(acc), m, shift))
			// TFLite Micro stores (T)(zp + clamped value): the cast wraps.
			out.I[row+mem-1] = st.DType.Wrap(min(max(v, lo), hi) + zp[2])
		}
	}
	return []*graph.Data{out}, nil
}

func svdfTime(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SVDFAttrs)
	if !ok || len(in) < 2 {
		return nil, fmt.Errorf("needs SVDFAttrs and the state and weights_time")
	}
	st, wt, yt := g.In(n, 0), g.In(n, 1), g.Out(n, 0)
	sc, zp, err := svdfQuant(st, wt, yt)
	if err != nil {
		return nil, err
	}
	s, w := in[0], in[1]
	var bias *graph.Data
	if len(in) > 2 {
		bias = in[2]
	}
	batch, filters, mem := st.Shape[0], wt.Shape[0], a.Memory
	units := filters / a.Rank
	m, shift := qmath.SVDFMultiplier(sc[0], sc[1], sc[2])
	out := graph.NewData(graph.Int8, []int{batch, units})
	for b := 0; b < batch; b++ {
		for u := 0; u < units; u++ {
			var o int64
			if bias != nil {
				o = bias.I[u]
			}
			for r := 0; r < a.Rank; r++ {
				f := u*a.Rank + r
				var dot int64
				for t := 0; t < mem; t++ {
					dot += w.I[f*mem+t] * (s.I[(b*filters+f)*mem+t] - zp[0])
				}
				o += dot
			}
			// TFLite Micro sums in int32: wrap as it does.
			v := int64(qmath.MultiplyByQuantizedMultiplier(int32(o), m, shift)) + zp[2]
			out.I[b*units+u] = min(max(v, -128), 127)
		}
	}
	return []*graph.Data{out}, nil
}
