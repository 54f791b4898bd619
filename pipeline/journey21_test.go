package pipeline

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A compile from real calibration data warns when the int8 outputs are far
// from the float model's (user-journey finding: a transformer whose class
// token, a row of values near 0.02 among rows near ±3, lost its
// LayerNorm to one int8 scale, at 10.7 dB, without a word). LayerNorm over
// rows of 8 where row 0 is 100 times smaller than row 1: the int8 input
// holds row 0 in a level or two, its normalized values are noise, and
// the warning names the output SQNR; with both rows alike, none.
func TestLowSQNRWarning(t *testing.T) {
	for _, small := range []float64{0.02, 2} {
		b := onnx.NewBuilder("ln", 17, 1)
		x := b.Input("x", graph.Float32, 1, 2, 8)
		scale := b.Floats("scale", 1, 1, 1, 1, 1, 1, 1, 1)
		b.Output(b.Node("LayerNormalization", []string{x, scale}), graph.Float32, 1, 2, 8)
		dir := t.TempDir()
		model := filepath.Join(dir, "ln.onnx")
		if err := os.WriteFile(model, b.Model().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		calib := filepath.Join(dir, "calib")
		if err := os.Mkdir(calib, 0o755); err != nil {
			t.Fatal(err)
		}
		for s := range 8 {
			d := graph.NewData(graph.Float32, []int{1, 2, 8})
			for i := range 8 {
				d.F[i] = float32(small * math.Sin(float64(3*s+i)))
				d.F[8+i] = float32(3 * math.Cos(float64(5*s+i)))
			}
			var buf bytes.Buffer
			if err := npy.Write(&buf, d); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(calib, fmt.Sprintf("x_%03d.npy", s)), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var warns []string
		s, err := Compile(model, Options{Calib: calib, Version: "test", Warn: func(w string) { warns = append(warns, w) }})
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(warns, "\n"), "int8 output SQNR")
		low := s.QuantReport.OutputSQNRdB < LowSQNRdB
		t.Logf("row 0 at %g: output SQNR %.1f dB, warnings %q", small, s.QuantReport.OutputSQNRdB, warns)
		if low != (small < 1) || warned != low {
			t.Errorf("row 0 at %g: output SQNR %.1f dB, warned %v", small, s.QuantReport.OutputSQNRdB, warned)
		}
	}
}

// definedFuncs reads the kernels the C defines: a kernel emitc prints as
// a call of an earlier one (its comment names that one) is not defined,
// nor is a call, another prefix's function, or one declared at the start
// of a line (the entry function: kernels are "static ..._KERNEL void").
func TestDefinedFuncs(t *testing.T) {
	c := []byte("static M_KERNEL void m_fully_connected_0_s8(const int8_t *input, int8_t *output)\n{\n}\n" +
		"/* fully_connected \"fc1\": m_fully_connected_0_s8 */\n" +
		"static M_KERNEL void m_conv2d_2_s8(const int8_t *input, int8_t *output)\n{\n}\n" +
		"static void mx_helper(void)\n{\n}\n" +
		"void m_run(const struct m_inputs *in)\n{\n    m_fully_connected_0_s8(a, b);\n}\n")
	got := definedFuncs(map[string][]byte{"m.c": c, "m.h": []byte("void m_other(void);\n")}, "m_")
	want := map[string]bool{"fully_connected_0_s8": true, "conv2d_2_s8": true}
	if len(got) != len(want) {
		t.Fatalf("defined %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("defined %v, want %v", got, want)
		}
	}
}
