package pipeline

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// testModels are the project's own generated models.
func testModels(t *testing.T) []string {
	var ms []string
	for _, pat := range []string{"../testdata/tflite/*.tflite", "../testdata/onnx/*.onnx"} {
		m, _ := filepath.Glob(pat)
		ms = append(ms, m...)
	}
	if len(ms) < 20 {
		t.Fatalf("only %d test models found", len(ms))
	}
	return ms
}

// TestGeneratedCodeUnderAttack builds every test model for the host with
// AddressSanitizer and UndefinedBehaviorSanitizer, warning-free under
// -pedantic -Werror (int32 FLOOR_MOD once compared two comparisons without
// parentheses), and an external arena
// (holding the inputs and outputs too) wrapped in guard bytes that the harness checks after each inference, and
// runs it on random and extreme inputs (all minimum, all maximum,
// alternating): no sanitizer report, no damaged guard, outputs equal to the
// reference interpreter.
func TestGeneratedCodeUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("sanitizer builds: not in -short")
	}
	needTools(t, "host")
	b, _ := LoadBoard("host", "")
	for _, model := range testModels(t) {
		t.Run(filepath.Base(model), func(t *testing.T) {
			t.Parallel() // one gcc and one run each: the cores share them
			// One operator each mostly: floats held to 1e-5 of each value.
			s, err := Compile(model, Options{Board: b, ArenaExternal: true, IOInArena: true, Version: "test", StrictFloat: true,
				// -g for the reports' lines, without variable tracking:
				// it took gcc four times as long on big kernels.
				CFlags: []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-fno-var-tracking-assignments", "-pedantic", "-Werror"}})
			if s != nil && s.Graph != nil && len(s.Graph.Inputs) == 0 {
				t.Skip("the model has no inputs (constant-folded away)")
			}
			if err != nil {
				t.Fatal(err)
			}
			// Twenty random inputs for the one-operator models; four for
			// the few networks of a million MACs or more, whose sanitized
			// runs and reference interpreter took a minute (resnet.onnx).
			n := 20
			if s.MACs >= 1_000_000 {
				n = 4
			}
			vecs := append(RandomInputs(s.Graph, n, 9), ExtremeInputs(s.Graph)...)
			x, err := s.Execute(vecs, t.TempDir(), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			for v, ok := range x.Match {
				if !ok {
					t.Errorf("vector %d differs from the reference interpreter (max abs diff %g)", v, x.MaxAbsDiff)
				}
			}
		})
	}
}

// TestGuardBytesUnderQEMU runs models with guarded external arenas on the
// Cortex-M4 board: the harness checks the guard bytes after every inference
// and the runner turns damage into an error.
func TestGuardBytesUnderQEMU(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	models := []string{"../testdata/tflite/cnn_int8.tflite", "../testdata/tflite/mlp_int8.tflite",
		"../testdata/tflite/cnn_float.tflite", "../testdata/onnx/resnet.onnx"}
	for _, model := range models {
		for _, target := range []string{"generic", "dsp"} {
			t.Run(filepath.Base(model)+"/"+target, func(t *testing.T) {
				s, err := Compile(model, Options{Board: b, Target: target, ArenaExternal: true, IOInArena: true, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				vecs := append(RandomInputs(s.Graph, 2, 4), ExtremeInputs(s.Graph)...)
				x, err := s.Execute(vecs, t.TempDir(), time.Minute)
				var fault *FitError
				if errors.As(err, &fault) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("outputs differ from the reference interpreter")
				}
			})
		}
	}
}
