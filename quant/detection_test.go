package quant

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
)

// A quantized SSD head keeps TFLite's float32 detection outputs (review
// finding: the Slice and Reshape nodes that cut the packed output were
// quantized on one range over work area, classes and count, which put
// boxes and scores on a 0.35 grid with 91 classes). The model is
// op_float_detection_postprocess, calibrated on its hand-worked input
// (importer/tflite TestDetectionPostProcess): the results stay within the
// inputs' int8 rounding of the hand-worked values.
func TestQuantizedDetectionStaysFloat(t *testing.T) {
	g, err := tflite.Load("../testdata/tflite/op_float_detection_postprocess.tflite")
	if err != nil {
		t.Fatal(err)
	}
	enc := graph.NewData(graph.Float32, []int{1, 5, 4})
	copy(enc.F, []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, -2, 0, 0, 0, 0, 0, 0})
	sc := graph.NewData(graph.Float32, []int{1, 5, 3})
	copy(sc.F, []float32{0.1, 0.9, 0.2, 0, 0.3, 0.85, 0.5, 0.4, 0.4, 0, 0.1, 0.35, 0, 0.1, 0.6})
	in := map[string]*graph.Data{"box_encodings": enc, "class_predictions": sc}
	st, err := Calibrate(g, []map[string]*graph.Data{in}, CalibOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Quantize(g, st, Options{Method: MinMax})
	if err != nil {
		t.Fatal(err)
	}
	qin := map[string]*graph.Data{}
	for name, d := range in {
		p := q.Tensors[name].Quant
		qin[name] = QuantizeData(d, p.Scale[0], p.ZeroPoint[0])
	}
	out, err := interp.Run(q, qin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{
		"detection_boxes":   {0.4, 0.4, 0.6, 0.6, 0.15, 0.2, 0.25, 0.3, 0.15, 0.1254088, 0.25, 0.2745912, 0.72, 0.52, 0.92, 0.92},
		"detection_classes": {0, 1, 0, 1},
		"detection_scores":  {0.9, 0.6, 0.4, 0.35},
		"num_detections":    {4},
	}
	for name, w := range want {
		if dt := q.Tensors[name].DType; dt != graph.Float32 {
			t.Errorf("%s is %s, want float32", name, dt)
			continue
		}
		got := out[name]
		for i := range w {
			// Scores on a 0.9/255 grid, encodings on a 4/255 one.
			if math.Abs(float64(got.F[i]-w[i])) > 0.005 {
				t.Errorf("%s[%d] = %v, want %v", name, i, got.F[i], w[i])
			}
		}
	}
}
