package pipeline

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestDegenerateCalibWarningOrder: several constant calibration inputs are
// warned about in name order, whatever order the sample maps iterate in,
// so the same data gives the same messages on every run. A varying input
// is not warned about.
func TestDegenerateCalibWarningOrder(t *testing.T) {
	constant := func(v float32) *graph.Data {
		d := graph.NewData(graph.Float32, []int{1, 3})
		for i := range d.F {
			d.F[i] = v
		}
		return d
	}
	varying := graph.NewData(graph.Float32, []int{1, 3})
	varying.F[1] = 1
	samples := []map[string]*graph.Data{
		{"zeta": constant(2), "alpha": constant(0), "mid": constant(-1), "free": varying},
		{"zeta": constant(2), "alpha": constant(0), "mid": constant(-1), "free": constant(0)},
	}
	want := []string{`input "alpha" holds 0`, `input "mid" holds -1`, `input "zeta" holds 2`}
	for run := 0; run < 20; run++ {
		var got []string
		warnDegenerateCalib(Options{Calib: "cal", Warn: func(w string) { got = append(got, w) }}, samples, nil)
		if len(got) != len(want) {
			t.Fatalf("run %d: %d warnings, want %d: %q", run, len(got), len(want), got)
		}
		for i, w := range want {
			if !strings.Contains(got[i], w) {
				t.Fatalf("run %d: warning %d is %q, want one containing %q", run, i, got[i], w)
			}
		}
	}
}
