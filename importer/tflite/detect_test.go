package tflite_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

const opCustomCode = 32

// Five anchors (y, x, h, w). 0 and 1 overlap (IoU 0.818); 2 and 4 overlap
// less (IoU 0.429 after 2's width is decoded); 3 stands apart.
var detAnchors = []float32{
	0.5, 0.5, 0.2, 0.2,
	0.52, 0.5, 0.2, 0.2,
	0.2, 0.2, 0.1, 0.1,
	0.8, 0.8, 0.2, 0.4,
	0.2, 0.25, 0.1, 0.1,
}

// Class scores (background, class 0, class 1) per anchor: best 0.9 (class
// 0), 0.85 (1), 0.4 (0, the first of a tie), 0.35 (1), 0.6 (1).
var detScores = []float32{
	0.1, 0.9, 0.2,
	0, 0.3, 0.85,
	0.5, 0.4, 0.4,
	0, 0.1, 0.35,
	0, 0.1, 0.6,
}

// detOptions are the custom options of the test models.
func detOptions(maxDet int32, score float32) []byte {
	return tg.FlexMap(map[string]tg.FlexValue{
		"max_detections": tg.FlexInt(maxDet), "max_classes_per_detection": tg.FlexInt(1),
		"detections_per_class": tg.FlexInt(100), "use_regular_nms": tg.FlexBool(false),
		"nms_score_threshold": tg.FlexFloat(score), "nms_iou_threshold": tg.FlexFloat(0.5),
		"num_classes": tg.FlexInt(2), "y_scale": tg.FlexFloat(10), "x_scale": tg.FlexFloat(10),
		"h_scale": tg.FlexFloat(5), "w_scale": tg.FlexFloat(5),
	})
}

// detectionModel is one TFLite_Detection_PostProcess on five anchors with
// inputs box encodings [1, 5, 4] and scores [1, 5, 3]: float32, or uint8
// (encodings scale 0.25 zero point 128, scores 0.05 and 0, anchors 0.01 and 0).
func detectionModel(quant bool, maxDet int32, score float32) *tg.Model {
	m := &tg.Model{}
	enc := tg.Tensor{Name: "box_encodings", Type: tg.Float32, Shape: []int32{1, 5, 4}}
	sc := tg.Tensor{Name: "class_predictions", Type: tg.Float32, Shape: []int32{1, 5, 3}}
	anc := tg.Tensor{Name: "anchors", Type: tg.Float32, Shape: []int32{5, 4}, Data: tg.F32Bytes(detAnchors...)}
	if quant {
		enc.Type, enc.Scale, enc.ZeroPoint = tg.UInt8, []float32{0.25}, []int64{128}
		sc.Type, sc.Scale, sc.ZeroPoint = tg.UInt8, []float32{0.05}, []int64{0}
		q := make([]byte, len(detAnchors))
		for i, v := range detAnchors {
			q[i] = byte(math.Round(float64(v) / 0.01))
		}
		anc.Type, anc.Scale, anc.ZeroPoint, anc.Data = tg.UInt8, []float32{0.01}, []int64{0}, q
	}
	e, s, a := m.AddTensor(enc), m.AddTensor(sc), m.AddTensor(anc)
	var outs []int32
	for _, o := range []struct {
		name  string
		shape []int32
	}{{"detection_boxes", []int32{1, maxDet, 4}}, {"detection_classes", []int32{1, maxDet}}, {"detection_scores", []int32{1, maxDet}}, {"num_detections", []int32{1}}} {
		outs = append(outs, m.AddTensor(tg.Tensor{Name: o.name, Type: tg.Float32, Shape: o.shape}))
	}
	m.Ops = append(m.Ops, tg.Operator{Code: opCustomCode, Custom: "TFLite_Detection_PostProcess", Inputs: []int32{e, s, a}, Outputs: outs,
		CustomOptions: detOptions(maxDet, score)})
	m.Inputs, m.Outputs = []int32{e, s}, outs
	return m
}

// Worked by hand. Anchor 3's encodings (1, -2, 0, 0) move its centre to
// y 0.8 + 1/10·0.2 = 0.82, x 0.8 − 2/10·0.4 = 0.72: box (0.72, 0.52, 0.92,
// 0.92). Anchor 2's w encoding 2 widens it by exp(2/5) = 1.4918247: half
// width 0.0745912, box (0.15, 0.1254088, 0.25, 0.2745912). The rest are
// their anchors. Best first: 0 (0.9) suppresses 1 (0.85, IoU 0.818); then
// 4 (0.6), 2 (0.4; IoU with 4 is 0.0074/0.0174 = 0.43, kept) and 3 (0.35).
// At a 0.45 threshold only 0 and 4 are candidates: two results, the rest
// zero.
func TestDetectionPostProcess(t *testing.T) {
	enc := []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, -2, 0, 0, 0, 0, 0, 0}
	box0, box4 := []float32{0.4, 0.4, 0.6, 0.6}, []float32{0.15, 0.2, 0.25, 0.3}
	box2, box3 := []float32{0.15, 0.1254088, 0.25, 0.2745912}, []float32{0.72, 0.52, 0.92, 0.92}
	cat := func(bs ...[]float32) []float32 {
		var out []float32
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	zero := []float32{0, 0, 0, 0}
	for _, c := range []struct {
		name                   string
		quant                  bool
		score                  float32
		boxes, classes, scores []float32
		count                  float32
	}{
		{"float", false, 0.3, cat(box0, box4, box2, box3), []float32{0, 1, 0, 1}, []float32{0.9, 0.6, 0.4, 0.35}, 4},
		{"uint8", true, 0.45, cat(box0, box4, zero, zero), []float32{0, 1, 0, 0}, []float32{0.9, 0.6, 0, 0}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := tflite.Decode("det", detectionModel(c.quant, 4, c.score).Bytes())
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]*graph.Data{}
			e := graph.NewData(graph.Float32, []int{1, 5, 4})
			s := graph.NewData(graph.Float32, []int{1, 5, 3})
			copy(e.F, enc)
			copy(s.F, detScores)
			if c.quant {
				e, s = graph.NewData(graph.UInt8, []int{1, 5, 4}), graph.NewData(graph.UInt8, []int{1, 5, 3})
				for i, v := range enc {
					e.I[i] = int64(v/0.25) + 128
				}
				for i, v := range detScores {
					s.I[i] = int64(math.Round(float64(v) / 0.05))
				}
			}
			in["box_encodings"], in["class_predictions"] = e, s
			out, err := interp.Run(g, in)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string][]float32{"detection_boxes": c.boxes, "detection_classes": c.classes, "detection_scores": c.scores, "num_detections": {c.count}} {
				got := out[name]
				if got == nil || len(got.F) != len(want) {
					t.Fatalf("%s: %v", name, got)
				}
				for i := range want {
					if math.Abs(float64(got.F[i]-want[i])) > 2e-6 {
						t.Errorf("%s[%d] = %v, want %v", name, i, got.F[i], want[i])
					}
				}
			}
		})
	}
}

// Options mcugen does not run, and malformed ones, are refused with the
// operator and the reason.
func TestDetectionPostProcessRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(m *tg.Model)
		want string
	}{
		{"regular", func(m *tg.Model) {
			o := detOptionsMap(4, 0.3)
			o["use_regular_nms"] = tg.FlexBool(true)
			m.Ops[0].CustomOptions = tg.FlexMap(o)
		}, "use_regular_nms is true"},
		{"classes per detection", func(m *tg.Model) {
			o := detOptionsMap(4, 0.3)
			o["max_classes_per_detection"] = tg.FlexInt(2)
			m.Ops[0].CustomOptions = tg.FlexMap(o)
		}, "max_classes_per_detection is 2"},
		{"missing", func(m *tg.Model) {
			o := detOptionsMap(4, 0.3)
			delete(o, "num_classes")
			m.Ops[0].CustomOptions = tg.FlexMap(o)
		}, `option "num_classes" is missing`},
		{"truncated", func(m *tg.Model) { m.Ops[0].CustomOptions = detOptions(4, 0.3)[:20] }, "custom options"},
		{"no options", func(m *tg.Model) { m.Ops[0].CustomOptions = nil }, "too short for FlexBuffers"},
	} {
		m := detectionModel(false, 4, 0.3)
		c.edit(m)
		_, err := tflite.Decode("det", m.Bytes())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "TFLite_Detection_PostProcess") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func detOptionsMap(maxDet int32, score float32) map[string]tg.FlexValue {
	return map[string]tg.FlexValue{
		"max_detections": tg.FlexInt(maxDet), "max_classes_per_detection": tg.FlexInt(1),
		"nms_score_threshold": tg.FlexFloat(score), "nms_iou_threshold": tg.FlexFloat(0.5),
		"num_classes": tg.FlexInt(2), "y_scale": tg.FlexFloat(10), "x_scale": tg.FlexFloat(10),
		"h_scale": tg.FlexFloat(5), "w_scale": tg.FlexFloat(5),
	}
}

// More result slots than anchors, as TFLite allows: the four detections of
// the float case, then zeros.
func TestDetectionMoreSlotsThanAnchors(t *testing.T) {
	g, err := tflite.Decode("det", detectionModel(false, 6, 0.3).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	e := graph.NewData(graph.Float32, []int{1, 5, 4})
	copy(e.F, []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, -2, 0, 0, 0, 0, 0, 0})
	s := graph.NewData(graph.Float32, []int{1, 5, 3})
	copy(s.F, detScores)
	out, err := interp.Run(g, map[string]*graph.Data{"box_encodings": e, "class_predictions": s})
	if err != nil {
		t.Fatal(err)
	}
	if sc, n := out["detection_scores"].F, out["num_detections"].F; len(sc) != 6 || sc[3] != 0.35 || sc[4] != 0 || sc[5] != 0 || n[0] != 4 {
		t.Errorf("scores %v, count %v", sc, n)
	}
}
