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
		case "bilinear", "linear":
			i0, i1, w = append(i0, clamp(lo)), append(i1, clamp(lo+1)), append(w, r)
			continue
		case "nearest":
		default:
			return nil, nil, nil, fmt.Errorf("resize mode %q not supported (nearest, bilinear)", a.Mode)
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
	y0, y1, wy, err := resizeTaps(a, a.Scale[0], H, OH)
	if err != nil {
		return nil, fmt.Errorf("resize H: %w", err)
	}
	x0, x1, wx, err := resizeTaps(a, a.Scale[1], W, OW)
	if err != nil {
		return nil, fmt.Errorf("resize W: %w", err)
	}
	at := func(nb, y, xx, c int) float64 { return float64(x.F[((nb*H+y)*W+xx)*C+c]) }
	k := 0
	for nb := 0; nb < N; nb++ {
		for oy := 0; oy < OH; oy++ {
			for ox := 0; ox < OW; ox++ {
				for c := 0; c < C; c++ {
					top := (1-wx[ox])*at(nb, y0[oy], x0[ox], c) + wx[ox]*at(nb, y0[oy], x1[ox], c)
					bot := (1-wx[ox])*at(nb, y1[oy], x0[ox], c) + wx[ox]*at(nb, y1[oy], x1[ox], c)
					out.F[k] = float32((1-wy[oy])*top + wy[oy]*bot)
					k++
				}
			}
		}
	}
	return []*graph.Data{out}, nil
}
