package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// bench with several models keeps going past one that cannot be built: its
// row says why, the others are measured, --json has every case, and the
// exit is 1 with one line counting the failures (review finding: one model
// over the RAM budget dropped the whole table). AD's arena is 256 B and
// mlp_int8's 32 B, so a 100 B budget fails AD only.
func TestBenchKeepsGoing(t *testing.T) {
	m := sharedModels(t)
	ad := filepath.Join(m, "ad", "ad01_int8.tflite")
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "bench", ad, mlp, "--board", "host", "--ram-budget", "100")
	// The line names the first failure too (journey 30: it named none).
	if code != 1 || !strings.HasPrefix(stderr, "mcugen: 1 of 2 benchmarks failed (the first on host: "+ad+": ") || !strings.Contains(stderr, "needs 256 B for activations") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "ad01_int8.tflite") || !strings.Contains(out, "ERROR: ") || !strings.Contains(out, "needs 256 B for activations") ||
		!strings.Contains(out, "mlp_int8.tflite") || strings.Count(out, "\n") != 3 {
		t.Errorf("table:\n%s", out)
	}
	code, out, _ = mcugen(t, "bench", ad, mlp, "--board", "host", "--ram-budget", "100", "--json")
	var rep struct {
		Results []struct {
			Model, Error string
			ArenaBytes   int `json:"arena_bytes"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 1 || err != nil || len(rep.Results) != 2 ||
		rep.Results[0].Error == "" || rep.Results[1].Error != "" || rep.Results[1].ArenaBytes != 32 {
		t.Errorf("--json: exit %d, %v\n%s", code, err, out)
	}
}

// A model named twice (or by two spellings of one path) is tested once.
func TestTestRunsAModelOnce(t *testing.T) {
	mlp, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	code, out, stderr := mcugen(t, "test", mlp, mlp, filepath.Dir(mlp)+"/./mlp_int8.tflite", "--board", "host", "--json")
	var rep struct{ Results []struct{ Model string } }
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Results) != 1 {
		t.Errorf("exit %d, %v, %d results\n%s", code, err, len(rep.Results), stderr)
	}
}
