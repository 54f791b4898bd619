package pipeline

import (
	"path/filepath"
	"testing"
)

// TestRegressionModels compiles each model of testdata/regress for its
// board (README.md there says what each once broke) and, outside -short,
// runs it bit-exact against the reference interpreter.
func TestRegressionModels(t *testing.T) {
	for _, c := range []struct{ file, board string }{
		{"dsp_negative_shift_conv1x1.tflite", "mps2-an386"},
		{"dsp_negative_shift_fc.tflite", "mps2-an386"},
		{"dsp_gemm3_2x2_conv3x1.tflite", "mps2-an386"},
		{"dsp_gemm3_2x2_u3.tflite", "mps2-an500"},
		{"dsp_gemm3_2x2_relun1.tflite", "mps2-an505"},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := LoadBoard(c.board, "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(filepath.Join("..", "testdata", "regress", c.file), Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if testing.Short() {
				return
			}
			runCount(t, s)
		})
	}
}
