package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Scatter, FloatClass, scatterOp)
	Register(graph.Scatter, IntClass, scatterOp)
}

// scatterOp is ONNX ScatterElements and ScatterND (graph.ScatterAttrs):
// the data copied, then each update applied in order at the flat offset
// its indices give, skipped when an index (negative ones counted from the
// end) is outside its axis.
func scatterOp(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ScatterAttrs](n)
	if err != nil || !ok {
		return nil, fmt.Errorf("scatter needs *graph.ScatterAttrs (%v)", err)
	}
	if len(ins) < 3 || ins[0] == nil || ins[1] == nil || ins[2] == nil || !ins[1].DType.IsInt() {
		return nil, fmt.Errorf("scatter needs data, integer indices and updates")
	}
	x, idx, upd := ins[0], ins[1], ins[2]
	if (x.DType == graph.Float32) != (upd.DType == graph.Float32) {
		return nil, fmt.Errorf("data is %s, updates %s", x.DType, upd.DType)
	}
	if err := graph.ScatterShapes(&a, x.Shape, idx.Shape, upd.Shape); err != nil {
		return nil, err
	}
	y, err := outAny(g, n, x.DType == graph.Float32)
	if err != nil {
		return nil, err
	}
	copy(y.F, x.F)
	copy(y.I, x.I)
	// inAxis is an index counted into [0, dim), or -1 outside it.
	inAxis := func(v int64, dim int) int {
		if v < 0 {
			v += int64(dim)
		}
		if v < 0 || v >= int64(dim) {
			return -1
		}
		return int(v)
	}
	apply := func(at, u int) {
		if y.DType == graph.Float32 {
			y.F[at] = combineF(a.Reduction, y.F[at], upd.F[u])
		} else {
			y.I[at] = y.DType.Wrap(combineI(a.Reduction, y.I[at], upd.I[u]))
		}
	}
	xs := graph.Strides(x.Shape)
	if a.ND {
		k := idx.Shape[len(idx.Shape)-1]
		slice := graph.NumElements(x.Shape[k:])
		for r := 0; r < idx.Len()/k; r++ {
			at := 0
			for j := 0; j < k && at >= 0; j++ {
				if v := inAxis(idx.I[r*k+j], x.Shape[j]); v < 0 {
					at = -1
				} else {
					at += v * xs[j]
				}
			}
			for s := 0; at >= 0 && s < slice; s++ {
				apply(at+s, r*slice+s)
			}
		}
		return []*graph.Data{y}, nil
	}
	us := graph.Strides(upd.Shape)
	for u := 0; u < upd.Len(); u++ {
		at, rem := 0, u
		for d := range upd.Shape {
			c := rem / us[d]
			rem %= us[d]
			if d == a.Axis {
				if c = inAxis(idx.I[u], x.Shape[d]); c < 0 {
					at = -1
					break
				}
			}
			at += c * xs[d]
		}
		if at >= 0 {
			apply(at, u)
		}
	}
	return []*graph.Data{y}, nil
}

func combineF(r string, old, u float32) float32 {
	switch r {
	case "add":
		return old + u
	case "mul":
		return old * u
	case "max":
		return nanMax(old, u)
	case "min":
		return nanMin(old, u)
	}
	return u
}

// combineI combines in 64 bits, wrapping (the caller wraps to the type).
func combineI(r string, old, u int64) int64 {
	switch r {
	case "add":
		return int64(uint64(old) + uint64(u))
	case "mul":
		return int64(uint64(old) * uint64(u))
	case "max":
		return max(old, u)
	case "min":
		return min(old, u)
	}
	return u
}
