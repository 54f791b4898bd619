package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// max_detections and num_classes are range-checked as floats before they
// are converted: 2^63 (9.223372e18, exact in float32) converted to int as
// the build machine does (arm64's INT64_MAX passed the old check), 1e30,
// 2^24 + 1 (beyond graph.MaxElements), 0, −3 and 2.5 are refused with one
// line; 4 is taken.
func TestDetectionCountsRange53b(t *testing.T) {
	for _, c := range []struct {
		key string
		v   tg.FlexValue
	}{
		{"max_detections", tg.FlexFloat(9.223372e18)},
		{"max_detections", tg.FlexFloat(-9.223372e18)},
		{"max_detections", tg.FlexFloat(1e30)},
		{"max_detections", tg.FlexInt(1<<24 + 1)},
		{"max_detections", tg.FlexInt(0)},
		{"max_detections", tg.FlexFloat(2.5)},
		{"num_classes", tg.FlexFloat(9.223372e18)},
		{"num_classes", tg.FlexInt(-3)},
	} {
		m := detectionModel(false, 4, 0.3)
		o := detOptionsMap(4, 0.3)
		o[c.key] = c.v
		m.Ops[0].CustomOptions = tg.FlexMap(o)
		_, err := tflite.Decode("det", m.Bytes())
		if err == nil || !strings.Contains(err.Error(), "must be positive integers of at most 16777216") || !strings.Contains(err.Error(), "TFLite_Detection_PostProcess") || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%s = %+v: %v", c.key, c.v, err)
		}
	}
	if _, err := tflite.Decode("det", detectionModel(false, 4, 0.3).Bytes()); err != nil {
		t.Errorf("max_detections 4: %v", err)
	}
}
