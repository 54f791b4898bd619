package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.DetectionPostProcess, FloatClass, detectionPostProcess) }

// DecodeBox is one anchor's box, decoded as TFLite's detection
// post-process decodes it: the centre and the half sizes in double
// precision (the exponential too), each rounded to float32, then the
// corners in float32. enc and anchor are (y, x, h, w); scale is the
// encodings' (y, x, h, w) scale. It returns ymin, xmin, ymax, xmax.
func DecodeBox(enc, anchor, scale [4]float32) [4]float32 {
	yc := DetCenter(enc[0], scale[0], anchor[2], anchor[0])
	xc := DetCenter(enc[1], scale[1], anchor[3], anchor[1])
	hh := DetHalf(enc[2], scale[2], anchor[2])
	hw := DetHalf(enc[3], scale[3], anchor[3])
	return [4]float32{yc - hh, xc - hw, yc + hh, xc + hw}
}

// DetCenter is a decoded centre: float(e / scale * size + centre) in double.
func DetCenter(e, scale, size, centre float32) float32 {
	// The product is rounded on its own (float64(...)): Go may otherwise
	// fuse a multiply and an add, which the C does not (ISO C99 mode).
	return float32(float64(float64(e)/float64(scale)*float64(size)) + float64(centre))
}

// DetHalf is a decoded half size: float(0.5 * exp(e / scale) * size) in double.
func DetHalf(e, scale, size float32) float32 {
	return float32(0.5 * math.Exp(float64(e)/float64(scale)) * float64(size))
}

// BoxIoU is the intersection over union of two (ymin, xmin, ymax, xmax)
// boxes in float32, 0 when either has no area, as TFLite computes it.
func BoxIoU(a, b [4]float32) float32 {
	areaA := float32((a[2] - a[0]) * (a[3] - a[1]))
	areaB := float32((b[2] - b[0]) * (b[3] - b[1]))
	if areaA <= 0 || areaB <= 0 {
		return 0
	}
	h := float32(min(a[2], b[2]) - max(a[0], b[0]))
	w := float32(min(a[3], b[3]) - max(a[1], b[1]))
	inter := float32(max(h, 0) * max(w, 0))
	return inter / float32(float32(areaA+areaB)-inter)
}

// detectionPostProcess is TFLite_Detection_PostProcess with the fast
// non-max suppression and one class per detection: each anchor's box is
// decoded and scored by its best class (the first of equal scores); the
// candidates at or above the score threshold are taken best first (the
// earlier anchor of equal scores first, as TFLite's stable sort orders
// them), each one suppressing every remaining candidate whose IoU with it
// is above the threshold, until MaxDetections are kept. Unused result slots
// are zero. The output follows graph.DetectionLayout.
func detectionPostProcess(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	a, ok, err := attrsOf[graph.DetectionAttrs](n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("detection post-process has no attributes (*graph.DetectionAttrs)")
	}
	if len(ins) < 3 || ins[0] == nil || ins[1] == nil || ins[2] == nil {
		return nil, fmt.Errorf("needs box encodings, class scores and anchors")
	}
	enc, sc, anc := ins[0], ins[1], ins[2]
	if enc.DType != graph.Float32 || sc.DType != graph.Float32 || anc.DType != graph.Float32 {
		return nil, fmt.Errorf("inputs must be float32")
	}
	if len(enc.Shape) != 3 || len(sc.Shape) != 3 || len(anc.Shape) != 2 {
		return nil, fmt.Errorf("input shapes %v, %v, %v", enc.Shape, sc.Shape, anc.Shape)
	}
	num, stride, cols := enc.Shape[1], enc.Shape[2], sc.Shape[2]
	if stride < 4 || sc.Shape[1] != num || anc.Shape[0] != num || anc.Shape[1] != 4 || a.LabelOffset+a.NumClasses != cols || a.MaxDetections < 1 {
		return nil, fmt.Errorf("inputs %v, %v, %v do not fit %d classes and %d detections", enc.Shape, sc.Shape, anc.Shape, a.NumClasses, a.MaxDetections)
	}
	l := a.Layout(num)
	y := graph.NewData(graph.Float32, []int{l.Size})
	out := y.F
	for i := 0; i < num; i++ {
		row := sc.F[i*cols+a.LabelOffset : (i+1)*cols]
		best, cls := row[0], 0
		for c := 1; c < a.NumClasses; c++ {
			if row[c] > best {
				best, cls = row[c], c
			}
		}
		out[l.Best+i], out[l.Class+i] = best, float32(cls)
		// Only a candidate's box is ever read: the others stay zero (the
		// decoding, an exponential in double, is most of the work).
		if best >= a.ScoreThreshold {
			var e, an [4]float32
			copy(e[:], enc.F[i*stride:i*stride+4])
			copy(an[:], anc.F[i*4:i*4+4])
			b := DecodeBox(e, an, a.Scale)
			copy(out[l.Decoded+4*i:], b[:])
		}
	}
	box := func(i int) [4]float32 {
		var b [4]float32
		copy(b[:], out[l.Decoded+4*i:])
		return b
	}
	live := func(j int) bool { return out[l.Class+j] >= 0 && out[l.Best+j] >= a.ScoreThreshold }
	count := 0
	for ; count < a.MaxDetections; count++ {
		pick := -1
		for j := 0; j < num; j++ {
			if live(j) && (pick < 0 || out[l.Best+j] > out[l.Best+pick]) {
				pick = j
			}
		}
		if pick < 0 {
			break
		}
		b := box(pick)
		copy(out[l.Boxes+4*count:], b[:])
		out[l.Classes+count] = out[l.Class+pick]
		out[l.Scores+count] = out[l.Best+pick]
		out[l.Class+pick] = -1
		for j := 0; j < num; j++ {
			if live(j) && BoxIoU(b, box(j)) > a.IoUThreshold {
				out[l.Class+j] = -1
			}
		}
	}
	out[l.Count] = float32(count)
	return []*graph.Data{y}, nil
}
