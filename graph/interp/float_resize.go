package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.Resize, FloatClass, floatResize)
}

// resizeCoord maps output index x to the input coordinate along one axis,
// following ONNX Resize's coordinate_transformation_mode. scale is the
// model's scale factor; outLen is the output length.
func resizeCoord(mode string, x float64, scale float64, inLen, outLen int) (float64, error) {
	outF := scale * float64(inLen) // ONNX's "length_resized" before flooring
	switch mode {
	case "half_pixel", "":
		return (x+0.5)/scale - 0.5, nil
	case "half_pixel_symmetric":
		adj := float64(outLen) / outF
		center := float64(inLen) / 2
		return center*(1-adj) + (x+0.5)/scale - 0.5, nil
	case "pytorch_half_pixel":
		if outF == 1 {
			return -0.5, nil
		}
		return (x+0.5)/scale - 0.5, nil
	case "align_corners":
		if outF == 1 {
			return 0, nil
		}
		return x * float64(inLen-1) / (outF - 1), nil
	case "asymmetric":
		return x / scale, nil
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / scale, nil
	}
	return 0, fmt.Errorf("resize coordinate transformation %q not supported", mode)
}

// resizeTaps gives, for every output index along one axis, the two input
// indices (clamped to the axis, as ONNX pads with the edge) and the weight
// of the second. Nearest modes put the chosen index in both taps.
func resizeTaps(a graph.ResizeAttrs, scale float32, inLen, outLen int) (i0, i1 []int, w []float64, err error) {
	if inLen == 0 && outLen > 0 {
		return nil, nil, nil, fmt.Errorf("resize of an empty axis to length %d", outLen)
	}
	s := float64(scale)
	if s == 0 {
		s = float64(outLen) / float64(inLen)
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, nil, nil, fmt.Errorf("resize scale %v is not positive and finite", scale)
	}
	clamp := func(i int) int { return min(max(i, 0), inLen-1) }
	for x := 0; x < outLen; x++ {
		c, err := resizeCoord(a.Coord, float64(x), s, inLen, outLen)
		if err != nil {
			return nil, nil, nil, err
		}
		f := math.Floor(c)
		r := c - f
		lo := int(f)
		switch a.Mode {
		case "cubic":
			return nil, nil, nil, fmt.Errorf("resize mode cubic has four taps (cubicTaps)")
		case "bilinear", "linear":
			i0, i1, w = append(i0, clamp(lo)), append(i1, clamp(lo+1)), append(w, r)
			continue
		case "nearest":
		default:
			return nil, nil, nil, fmt.Errorf("resize mode %q not supported (nearest, bilinear, cubic)", a.Mode)
		}
		pick := lo
		if r != 0 {
			switch a.Nearest {
			case "round_prefer_floor", "":
				if r > 0.5 {
					pick = lo + 1
				}
			case "round_prefer_ceil":
				if r >= 0.5 {
					pick = lo + 1
				}
			case "floor":
			case "ceil":
				pick = lo + 1
			default:
				return nil, nil, nil, fmt.Errorf("resize nearest mode %q not supported", a.Nearest)
			}
		}
		i0, i1, w = append(i0, clamp(pick)), append(i1, clamp(pick)), append(w, 0)
	}
	return i0, i1, w, nil
}

// cubicTaps gives, for every output index along one axis, ONNX's cubic
// convolution over the four inputs around the coordinate c: floor(c)-1 ..
// floor(c)+2 with t = c - floor(c), or floor(c)-2 .. floor(c)+1 with t = 1
// where c is whole (the four nearest, ties to the lower index, as ONNX's
// reference picks them; the weights are then 0, 0, 1, 0). Taps outside
// the axis read the edge, or with ExcludeOutside weigh 0, the others
// rescaled to sum to 1.
func cubicTaps(a graph.ResizeAttrs, scale float32, inLen, outLen int) (idx [][4]int, w [][4]float64, err error) {
	if inLen == 0 && outLen > 0 {
		return nil, nil, fmt.Errorf("resize of an empty axis to length %d", outLen)
	}
	s := float64(scale)
	if s == 0 {
		s = float64(outLen) / float64(inLen)
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, nil, fmt.Errorf("resize scale %v is not positive and finite", scale)
	}
	A := float64(a.CubicA)
	// k(d) is the cubic convolution kernel at distance d from the tap.
	k := func(d float64) float64 {
		d = math.Abs(d)
		if d <= 1 {
			return ((A+2)*d-(A+3))*d*d + 1
		}
		return ((A*d-5*A)*d+8*A)*d - 4*A
	}
	for x := 0; x < outLen; x++ {
		c, err := resizeCoord(a.Coord, float64(x), s, inLen, outLen)
		if err != nil {
			return nil, nil, err
		}
		f := math.Floor(c)
		t, first := c-f, int(f)-1
		if t == 0 {
			t, first = 1, int(f)-2
		}
		var ix [4]int
		var ws [4]float64
		sum := 0.0
		for j := range 4 {
			ix[j] = first + j
			ws[j] = k(t + 1 - float64(j))
			if a.ExcludeOutside && (ix[j] < 0 || ix[j] >= inLen) {
				ws[j] = 0
			}
			ix[j] = min(max(ix[j], 0), inLen-1)
			sum += ws[j]
		}
		if a.ExcludeOutside {
			for j := range ws {
				ws[j] /= sum
			}
		}
		idx, w = append(idx, ix), append(w, ws)
	}
	return idx, w, nil
}

// floatResize is ONNX Resize over H and W of NHWC, nearest or bilinear; the
// output size comes from the output tensor, the scale from the attributes
// (or output/input). Empty Coord and Nearest take ONNX's defaults
// (half_pixel, round_prefer_floor).
func floatResize(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.ResizeAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("resize has no attributes (*graph.ResizeAttrs)")
	}
	x, err := floatIn(ins, 0, "input")
	if err != nil {
		return nil, err
	}
	if len(x.Shape) != 4 {
		return nil, fmt.Errorf("resize input %v is not 4-D NHWC", x.Shape)
	}
	out, err := newFloatOut(g, n, 0)
	if err != nil {
		return nil, err
	}
	N, H, W, C := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if len(out.Shape) != 4 || out.Shape[0] != N || out.Shape[3] != C {
		return nil, fmt.Errorf("resize output shape %v does not keep N and C of input %v", out.Shape, x.Shape)
	}
	OH, OW := out.Shape[1], out.Shape[2]
	at := func(nb, y, xx, c int) float64 { return float64(x.F[((nb*H+y)*W+xx)*C+c]) }
	if a.Mode == "cubic" {
		ry, wy, err := cubicTaps(a, a.Scale[0], H, OH)
		if err != nil {
			return nil, fmt.Errorf("resize H: %w", err)
		}
		rx, wx, err := cubicTaps(a, a.Scale[1], W, OW)
		if err != nil {
			return nil, fmt.Errorf("resize W: %w", err)
		}
		k := 0
		for nb := 0; nb < N; nb++ {
			for oy := 0; oy < OH; oy++ {
				for ox := 0; ox < OW; ox++ {
					for c := 0; c < C; c++ {
						v := 0.0
						for i := range 4 {
							row := 0.0
							for j := range 4 {
								row += wx[ox][j] * at(nb, ry[oy][i], rx[ox][j], c)
							}
							v += wy[oy][i] * row
						}
						out.F[k] = float32(v)
						k++
					}
				}
			}
		}
		return []*graph.Data{out}, nil
	}
	y0, y1, wy, err := resizeTaps(a, a.Scale[0], H, OH)
	if err != nil {
		return nil, fmt.Errorf("resize H: %w", err)
	}
	x0, x1, wx, err := resizeTaps(a, a.Scale[1], W, OW)
	if err != nil {
		return nil, fmt.Errorf("resize W: %w", err)
	}
	wy0, wy1 := tapWeights32(y0, y1, wy)
	wx0, wx1 := tapWeights32(x0, x1, wx)
	// float32, each product and sum rounded, in the C's order (tir's
	// computeResize, whose tables are these weights, probed): a float
	// Resize between a Dequantize and a Quantize lands on the C's ties.
	px := func(nb, y, xx, c int) float32 { return x.F[((nb*H+y)*W+xx)*C+c] }
	k := 0
	for nb := 0; nb < N; nb++ {
		for oy := 0; oy < OH; oy++ {
			for ox := 0; ox < OW; ox++ {
				for c := 0; c < C; c++ {
					if a.Mode == "nearest" { // a copy, as the C's (an infinity stays one)
						out.F[k] = px(nb, y0[oy], x0[ox], c)
						k++
						continue
					}
					top := float32(px(nb, y0[oy], x0[ox], c)*wx0[ox]) + float32(px(nb, y0[oy], x1[ox], c)*wx1[ox])
					bot := float32(px(nb, y1[oy], x0[ox], c)*wx0[ox]) + float32(px(nb, y1[oy], x1[ox], c)*wx1[ox])
					out.F[k] = float32(top*wy0[oy]) + float32(bot*wy1[oy])
					k++
				}
			}
		}
	}
	return []*graph.Data{out}, nil
}

// tapWeights32 turns resizeTaps' second-tap weights into the float32 weight
// pair of each output, with the taps normalised as the C's tables hold them:
// a second tap of weight 0 reads the first's input, and two taps on one
// input (clamped at an edge, or nearest) are one of weight w0 + w1 and one
// of weight 0. i1 is updated in place.
func tapWeights32(i0, i1 []int, w []float64) (w0, w1 []float32) {
	w0, w1 = make([]float32, len(w)), make([]float32, len(w))
	for o, r := range w {
		w0[o], w1[o] = float32(1-r), float32(r)
		if w1[o] == 0 {
			i1[o] = i0[o]
		}
		if i1[o] == i0[o] {
			w0[o], w1[o] = w0[o]+w1[o], 0
		}
	}
	return w0, w1
}
