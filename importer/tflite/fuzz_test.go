package tflite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must return a graph or
// an error, never panic (the recover in Decode is switched off here); a
// decoded graph then goes through graph.PermuteDeadChannels.
func FuzzDecode(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "tflite", "*.tflite"))
	shared := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny")
	seeds = append(seeds, filepath.Join(shared, "kws", "kws_ref_model.tflite"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add([]byte("TFL3TFL3TFL3"))
	f.Add([]byte{12, 0, 0, 0, 'T', 'F', 'L', '3', 0, 0, 0, 0})
	recoverPanics = false
	defer func() { recoverPanics = true }()
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode("fuzz", b)
		if err == nil && g == nil {
			t.Fatal("no graph and no error")
		}
		if err == nil {
			// The plan pass's channel reordering runs on every imported
			// graph: it must not panic on one either.
			graph.PermuteDeadChannels(g)
		}
	})
}

// FuzzFlexMap feeds arbitrary bytes to the FlexBuffers map reader of
// custom options, and to the signal ops' positional reader: a map or an
// error, a value or none, never a panic.
func FuzzFlexMap(f *testing.F) {
	f.Add(tg.FlexMap(map[string]tg.FlexValue{"max_detections": tg.FlexInt(10), "nms_iou_threshold": tg.FlexFloat(0.6), "use_regular_nms": tg.FlexBool(false)}))
	f.Add([]byte{})
	f.Add([]byte{0, 38, 4})
	f.Add(tg.FlexMap(map[string]tg.FlexValue{"shift": tg.FlexInt(12), "a": tg.FlexInt(3)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := flexMapOf(b)
		if err == nil && m == nil {
			t.Fatal("no map and no error")
		}
		for i := range 4 {
			signalPositional(b, i)
		}
	})
}

// The reader's hand-checked layout: a map written by tflitegen reads back.
func TestFlexMapRoundTrip(t *testing.T) {
	m, err := flexMapOf(tg.FlexMap(map[string]tg.FlexValue{"b": tg.FlexBool(true), "a": tg.FlexInt(-7), "c": tg.FlexFloat(0.25)}))
	if err != nil {
		t.Fatal(err)
	}
	if a, b, c := m["a"], m["b"], m["c"]; len(m) != 3 || a.typ != flexInt || a.i != -7 || b.typ != flexBool || b.i != 1 || c.typ != flexFloat || c.f != 0.25 {
		t.Errorf("%+v", m)
	}
}
