package pipeline

import (
	"path/filepath"
	"testing"
)

// TestRegressionModels compiles each model of testdata/regress for its
// board (README.md there says what each once broke) and, outside -short,
// runs it bit-exact against the reference interpreter.
func TestRegressionModels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, board string
		cflags      []string
	}{
		{"dsp_negative_shift_conv1x1.tflite", "mps2-an386", nil},
		{"dsp_negative_shift_fc.tflite", "mps2-an386", nil},
		{"dsp_gemm3_2x2_conv3x1.tflite", "mps2-an386", nil},
		{"dsp_gemm3_2x2_u3.tflite", "mps2-an500", nil},
		{"dsp_gemm3_2x2_relun1.tflite", "mps2-an505", nil},
		// Session 51's review, built at other optimisation levels than
		// the board's -O2 (a user's build, Zephyr's -Os).
		{"mve_dwl3_dead_o1.tflite", "mps3-an547", []string{"-O1"}},
		{"mve_dwl3_dead_o1_w31.tflite", "mps3-an547", []string{"-O1"}},
		{"mve_gemv3_os.tflite", "mps3-an547", []string{"-Os"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := LoadBoard(c.board, "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(filepath.Join("..", "testdata", "regress", c.file), Options{Board: b, Version: "test", CFlags: c.cflags})
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
