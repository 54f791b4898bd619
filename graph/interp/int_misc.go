package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/qmath"
)

func init() {
	Register(graph.Concat, IntClass, intConcat)
	Register(graph.Resize, IntClass, intResize)
}

// intConcat concatenates integer tensors. An input whose scale and zero
// point equal the output's is copied; any other is requantized the way
// TFLite's ConcatenationWithScaling does: round(q*scale + bias) + zy with
// scale = s_in/s_out and bias = -z_in*scale, in float32.
func intConcat(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.ConcatAttrs)
	if !ok {
		return nil, fmt.Errorf("needs ConcatAttrs")
	}
	y, yt, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	r := len(y.Shape)
	ax := a.Axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r {
		return nil, fmt.Errorf("axis %d out of range for %v", a.Axis, y.Shape)
	}
	outer := graph.NumElements(y.Shape[:ax])
	inner := graph.NumElements(y.Shape[ax+1:])
	sy, zy := qparams(yt)
	lo, hi := actRange(a.Act, yt)
	invOut := 1 / sy
	off := 0
	for i, x := range ins {
		if x == nil || x.DType == graph.Float32 || len(x.Shape) != r {
			return nil, fmt.Errorf("input %d must be an integer tensor of rank %d", i, r)
		}
		sx, zx := qparams(g.In(n, i))
		same := sx == sy && zx == zy
		scale := sx * invOut
		bias := float32(-zx) * scale
		// A subnormal output scale (below 2^-126) makes 1/sy +Inf in
		// float32, and TFLite's arithmetic Inf or NaN (0 × Inf), whose
		// conversion C leaves undefined. There the input is requantized
		// in float64, round((q − zx) · sx / sy) + zy: the requantization
		// TFLite's steps approximate where they stay finite. Every result
		// saturates to int32 before the zero point and the clamp.
		wide := math.IsInf(float64(scale), 0) || math.IsInf(float64(bias), 0) || bias != bias
		d := x.Shape[ax]
		if off+d > y.Shape[ax] || x.Len() != outer*d*inner {
			return nil, fmt.Errorf("input %d of shape %v does not fit output %v", i, x.Shape, y.Shape)
		}
		for o := 0; o < outer; o++ {
			for k := 0; k < d*inner; k++ {
				v := x.I[o*d*inner+k]
				if !same {
					r := math.Round(float64(float32(float32(v)*scale) + bias))
					if wide {
						r = math.Round(float64(v-int64(zx)) * float64(sx) / float64(sy))
					}
					v = qmath.SatInt(r, math.MinInt32, math.MaxInt32) + int64(zy)
				}
				y.I[(o*y.Shape[ax]+off)*inner+k] = int64(clamp32(int32(max(min(v, math.MaxInt32), math.MinInt32)), lo, hi))
			}
		}
		off += d
	}
	if off != y.Shape[ax] {
		return nil, fmt.Errorf("inputs fill %d of %d along axis %d", off, y.Shape[ax], ax)
	}
	return []*graph.Data{y}, nil
}

// nearestIndex maps an output coordinate to an input one for nearest
// resizing. The TFLite modes compute (x + offset) * (in/out) in float32 as
// TFLite's GetNearestNeighbor does; the others follow ONNX's definitions.
func nearestIndex(a *graph.ResizeAttrs, x, in, out int) int {
	var orig float64
	switch a.Coord {
	case "align_corners":
		if out > 1 {
			orig = float64(float32(x) * (float32(in-1) / float32(out-1)))
		}
	case "tf_half_pixel_for_nn":
		orig = float64((float32(x) + 0.5) * (float32(in) / float32(out)))
	case "asymmetric", "":
		orig = float64(float32(x) * (float32(in) / float32(out)))
	case "half_pixel":
		orig = (float64(x)+0.5)*float64(in)/float64(out) - 0.5
	case "pytorch_half_pixel":
		if out > 1 {
			orig = (float64(x)+0.5)*float64(in)/float64(out) - 0.5
		}
	default:
		orig = float64(x) * float64(in) / float64(out)
	}
	var i int
	switch a.Nearest {
	case "floor":
		i = int(math.Floor(orig))
	case "ceil":
		i = int(math.Ceil(orig))
	case "round_prefer_ceil":
		i = int(math.Floor(orig + 0.5))
	default: // round_prefer_floor
		i = int(math.Ceil(orig - 0.5))
	}
	return max(0, min(in-1, i))
}

// nearestIndices is the input index of every output index along axis (0 H,
// 1 W). An ONNX scale that is not out/in (5 × 1.5 floors to 7) maps
// coordinates by the scale, as ONNX and the float kernel (whose taps the C
// takes) do; nearestIndex's in/out picked other pixels there.
func nearestIndices(a *graph.ResizeAttrs, axis, in, out int) ([]int, error) {
	if s := a.Scale[axis]; s != 0 && s != float32(out)/float32(in) {
		i0, _, _, err := resizeTaps(*a, s, in, out)
		return i0, err
	}
	idx := make([]int, out)
	for x := range idx {
		idx[x] = nearestIndex(a, x, in, out)
	}
	return idx, nil
}

// intResize resizes H and W (NHWC) on raw values: nearest neighbour, or
// TFLite's integer bilinear (intResizeBilinear).
func intResize(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.ResizeAttrs)
	if !ok {
		return nil, fmt.Errorf("needs ResizeAttrs")
	}
	if a.Mode != "nearest" && a.Mode != "bilinear" {
		return nil, fmt.Errorf("integer resize supports modes nearest and bilinear, not %q", a.Mode)
	}
	if err := needInts(ins, 0); err != nil {
		return nil, err
	}
	x := ins[0]
	y, _, err := outData(g, n, 0)
	if err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 || len(y.Shape) != 4 || x.Shape[0] != y.Shape[0] || x.Shape[3] != y.Shape[3] {
		return nil, fmt.Errorf("input %v and output %v must be NHWC with equal N and C", x.Shape, y.Shape)
	}
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	OH, OW := y.Shape[1], y.Shape[2]
	if a.Mode == "bilinear" {
		if err := sameQuantIO(g, n, 0); err != nil {
			return nil, err
		}
		return intResizeBilinear(a, x, y)
	}
	ys, err := nearestIndices(a, 0, H, OH)
	if err != nil {
		return nil, err
	}
	xs, err := nearestIndices(a, 1, W, OW)
	if err != nil {
		return nil, err
	}
	for b := 0; b < N; b++ {
		for oy := 0; oy < OH; oy++ {
			iy := ys[oy]
			for ox := 0; ox < OW; ox++ {
				ix := xs[ox]
				copy(y.I[((b*OH+oy)*OW+ox)*C:][:C], x.I[((b*H+iy)*W+ix)*C:][:C])
			}
		}
	}
	return []*graph.Data{y}, nil
}

// intResizeBilinear is TFLite's ResizeBilinearInteger on stored values: each
// output is the 2^20-scaled sum of its four inputs times the products of
// their 10-bit weights (graph.IntResizeTaps), rounded half away from zero.
func intResizeBilinear(a *graph.ResizeAttrs, x, y *graph.Data) ([]*graph.Data, error) {
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	OH, OW := y.Shape[1], y.Shape[2]
	if a.Scale != [2]float32{} && (a.Scale[0] != float32(OH)/float32(H) || a.Scale[1] != float32(OW)/float32(W)) {
		return nil, fmt.Errorf("integer bilinear resize takes its scale from the sizes, not %v", a.Scale)
	}
	ty, err := graph.IntResizeTaps(a.Coord, H, OH)
	if err != nil {
		return nil, err
	}
	tx, err := graph.IntResizeTaps(a.Coord, W, OW)
	if err != nil {
		return nil, err
	}
	at := func(b, r, c, ch int) int64 { return x.I[((b*H+r)*W+c)*C+ch] }
	for b := range N {
		for oy := range OH {
			for ox := range OW {
				for ch := range C {
					acc := at(b, ty.I0[oy], tx.I0[ox], ch)*int64(ty.W0[oy]*tx.W0[ox]) +
						at(b, ty.I1[oy], tx.I0[ox], ch)*int64(ty.W1[oy]*tx.W0[ox]) +
						at(b, ty.I0[oy], tx.I1[ox], ch)*int64(ty.W0[oy]*tx.W1[ox]) +
						at(b, ty.I1[oy], tx.I1[ox], ch)*int64(ty.W1[oy]*tx.W1[ox])
					y.I[((b*OH+oy)*OW+ox)*C+ch] = graph.IntResizeRound(acc)
				}
			}
		}
	}
	return []*graph.Data{y}, nil
}
