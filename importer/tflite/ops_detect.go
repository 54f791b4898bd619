package tflite

import (
	"math"

	"github.com/mcugen/mcugen/graph"
)

// customDetection is the custom code of SSD's box decoding and non-max
// suppression (TF Object Detection API exports).
const customDetection = "TFLite_Detection_PostProcess"

// detection maps TFLite_Detection_PostProcess (box encodings, class
// scores, anchors; outputs boxes [1, D, 4], classes [1, D], scores [1, D]
// and the count [1]) to one graph.DetectionPostProcess node and a Slice and
// Reshape per output. Its options are a FlexBuffers map. mcugen runs the
// fast non-max suppression with one class per detection, TFLite Micro's
// path for the Object Detection API's default export; regular NMS and
// several classes per detection are refused. Quantized encodings and
// scores are dequantized first, as TFLite does.
func (c *opctx) detection(opts []byte) error {
	m, err := flexMapOf(opts)
	if err != nil {
		return c.errorf("%v", err)
	}
	num := func(key string, def float64, required bool) (float64, error) {
		v, ok := m[key]
		if !ok || v.typ == flexNull {
			if required {
				return 0, c.errorf("option %q is missing", key)
			}
			return def, nil
		}
		switch v.typ {
		case flexInt, flexUint, flexFloat, flexBool:
			return v.f, nil
		}
		return 0, c.errorf("option %q is of FlexBuffers type %d, not a number", key, v.typ)
	}
	var a graph.DetectionAttrs
	var f [10]float64
	for i, k := range []string{"max_detections", "max_classes_per_detection", "num_classes", "nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale", "w_scale"} {
		if f[i], err = num(k, 0, true); err != nil {
			return err
		}
	}
	if f[9], err = num("use_regular_nms", 0, false); err != nil {
		return err
	}
	if f[9] != 0 {
		return c.errorf("use_regular_nms is true: mcugen runs the fast non-max suppression only (the Object Detection API's default for TFLite)")
	}
	if f[1] != 1 {
		return c.errorf("max_classes_per_detection is %v: mcugen supports 1", f[1])
	}
	// The counts are checked as floats before they are converted: Go's
	// conversion of one beyond int (max_detections 2^63) is the platform's,
	// and arm64's saturated value passed the check below.
	for _, v := range []float64{f[0], f[2]} {
		if !(v >= 1 && v <= graph.MaxElements && v == math.Trunc(v)) {
			return c.errorf("max_detections %v and num_classes %v must be positive integers of at most %d", f[0], f[2], graph.MaxElements)
		}
	}
	a.MaxDetections, a.NumClasses = int(f[0]), int(f[2])
	a.ScoreThreshold, a.IoUThreshold = float32(f[3]), float32(f[4])
	for i := range a.Scale {
		a.Scale[i] = float32(f[5+i])
		if !(a.Scale[i] != 0) {
			return c.errorf("a box scale is 0")
		}
	}
	if float64(a.MaxDetections) != f[0] || a.MaxDetections < 1 || float64(a.NumClasses) != f[2] || a.NumClasses < 1 {
		return c.errorf("max_detections %v and num_classes %v must be positive integers", f[0], f[2])
	}
	if !(a.IoUThreshold > 0 && a.IoUThreshold <= 1) {
		return c.errorf("nms_iou_threshold %v is not in (0, 1]", a.IoUThreshold)
	}
	var ins [3]*graph.Tensor
	for i := range ins {
		if ins[i], err = c.in(i); err != nil {
			return err
		}
		if ins[i].DType != graph.Float32 {
			if ins[i], err = c.dequantized(ins[i]); err != nil {
				return err
			}
		}
	}
	if !ins[2].IsConst() {
		return c.errorf("anchors (input 2) must be a constant")
	}
	enc, sc := ins[0], ins[1]
	if len(enc.Shape) != 3 || len(sc.Shape) != 3 {
		return c.errorf("box encodings %v and class scores %v must be 3-D", enc.Shape, sc.Shape)
	}
	a.LabelOffset = sc.Shape[2] - a.NumClasses
	if a.LabelOffset < 0 || a.LabelOffset > 1 {
		return c.errorf("scores of %d columns for %d classes (one background column at most)", sc.Shape[2], a.NumClasses)
	}
	if len(c.outs) != 4 {
		return c.errorf("%d outputs, want 4 (boxes, classes, scores, count)", len(c.outs))
	}
	l := a.Layout(enc.Shape[1])
	all := c.temp("detection", graph.Float32, []int{l.Size}, nil)
	c.d.g.AddNode(&graph.Node{Name: all.Name, Op: graph.DetectionPostProcess, Attrs: &a,
		Inputs: []string{enc.Name, sc.Name, ins[2].Name}, Outputs: []string{all.Name}})
	d := a.MaxDetections
	for i, part := range []struct {
		at    int
		shape []int
	}{{l.Boxes, []int{1, d, 4}}, {l.Classes, []int{1, d}}, {l.Scores, []int{1, d}}, {l.Count, []int{1}}} {
		out, err := c.out(i)
		if err != nil {
			return err
		}
		if out.DType != graph.Float32 {
			return c.errorf("output %d (%q) is %s, want float32", i, out.Name, out.DType)
		}
		if len(out.Shape) > 0 && graph.NumElements(out.Shape) != graph.NumElements(part.shape) {
			return c.errorf("output %d (%q) has shape %v, want %v", i, out.Name, out.Shape, part.shape)
		}
		if len(out.Shape) == 0 {
			out.Shape = part.shape
		}
		n := graph.NumElements(part.shape)
		sl := c.step(graph.Slice, &graph.SliceAttrs{Begin: []int{part.at}, End: []int{part.at + n}, Stride: []int{1}}, []string{all.Name}, "part", graph.Float32, []int{n}, nil)
		c.emit(graph.Reshape, nil, []string{sl.Name}, out)
	}
	c.done = true
	return nil
}

// dequantized is t as float32: a quantized constant converted here, an
// activation through a Dequantize node.
func (c *opctx) dequantized(t *graph.Tensor) (*graph.Tensor, error) {
	q := t.Quant
	if q == nil || len(q.Scale) != 1 || (t.DType != graph.Int8 && t.DType != graph.UInt8) {
		return nil, c.errorf("input %q is %s: want float32, or int8 or uint8 with one scale", t.Name, t.DType)
	}
	if t.IsConst() {
		zp := float32(0)
		if len(q.ZeroPoint) > 0 {
			zp = float32(q.ZeroPoint[0])
		}
		d := graph.NewData(graph.Float32, t.Shape)
		for i := range d.F {
			// TFLite's Dequantizer: (float(x) - zero point) * scale.
			d.F[i] = (float32(t.Data.I[i]) - zp) * q.Scale[0]
		}
		return c.d.g.AddConst(c.d.g.UniqueName(t.Name+"/float"), d), nil
	}
	return c.step(graph.Dequantize, nil, []string{t.Name}, "float", graph.Float32, t.Shape, nil), nil
}
