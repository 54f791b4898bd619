package pipeline

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// logMelModel is a keyword spotter's audio front end in ONNX (opset 17):
// one second at 16 kHz in frames of n samples, step apart, under a Hann
// window; the power spectrum (n/2 + 1 bins) weighted by 40 mel filters
// (MelWeightMatrix, folded) and its log. 512 and 320 make the 49 frames
// of MLPerf Tiny's KWS; 400 and 160 (25 ms every 10 ms) Kaldi's 98.
func logMelModel(t *testing.T, n, step int) string {
	b := onnx.NewBuilder("logmel", 17, 1)
	x := b.Input("audio", graph.Float32, 1, 16000, 1)
	win := make([]float32, n)
	for i := range win {
		win[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n)))
	}
	spec := b.Node("STFT", []string{x, b.Scalar("step", graph.Int64, float64(step)), b.Floats("window", win...)})
	power := b.Node("ReduceSumSquare", []string{spec}, onnx.IntsAttr("axes", -1), onnx.IntAttr("keepdims", 0))
	mel := b.Node("MelWeightMatrix", []string{b.Scalar("bins", graph.Int64, 40), b.Scalar("dft", graph.Int64, float64(n)),
		b.Scalar("rate", graph.Int64, 16000), b.Scalar("lo", graph.Float32, 20), b.Scalar("hi", graph.Float32, 7600)})
	m := b.Node("MatMul", []string{power, mel})
	b.Output(b.Node("Log", []string{b.Node("Add", []string{m, b.Scalar("eps", graph.Float32, 1e-6)})}), graph.Float32)
	return writeONNX(t, b, fmt.Sprintf("logmel%d", n))
}

// writeONNX writes the builder's model to name.onnx in a temporary
// directory, or to $MCUGEN_KEEP_MODELS/name.onnx when that is set (to
// bench or inspect it by hand), and returns the path.
func writeONNX(t *testing.T, b *onnx.Builder, name string) string {
	t.Helper()
	dir := os.Getenv("MCUGEN_KEEP_MODELS")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(path, b.Model().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLogMelFrontEnd runs the front end on the Cortex-M4 under QEMU: the
// firmware's FFTs (float32, twiddle tables; 512 points by radix 2, 400 by
// radices 2 and 5) against the reference interpreter's transforms summed
// by definition in float64.
func TestLogMelFrontEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("a QEMU run")
	}
	needTools(t, "mps2-an386")
	for _, c := range []struct{ n, step, frames int }{{512, 320, 49}, {400, 160, 98}} {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) { logMelOnM4(t, c.n, c.step, c.frames) })
	}
}

func logMelOnM4(t *testing.T, n, step, frames int) {
	board, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(logMelModel(t, n, step), Options{Board: board, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if src := string(s.Files[fmt.Sprintf("logmel%d.c", n)]); !strings.Contains(src, "_fft[") {
		t.Errorf("the %d-point STFT is summed directly, not by an FFT", n)
	}
	// The power spectrum is fused into the STFT: no complex spectrum (100 KB)
	// in the arena.
	for _, n := range s.Graph.Nodes {
		if n.Op == graph.Reduce {
			t.Errorf("the sum of squares %s was not fused into the STFT", n.Name)
		}
	}
	if s.Module.ArenaBytes >= 100000 {
		t.Errorf("arena %d B: the complex spectrum is still in it", s.Module.ArenaBytes)
	}
	x, err := s.Execute(RandomInputs(s.Graph, 2, 3), t.TempDir(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Fatalf("outputs differ from the reference interpreter (max abs diff %g)", x.MaxAbsDiff)
	}
	// A direct sum costs over 2 n^2 multiply-adds a frame (the half
	// spectrum's n/2 bins, two products a sample); the FFT about
	// n (p1 + ... + pL) for its factors, under 20 n log2 n instructions
	// with the window, the power and the mel weights.
	per := x.Instructions() / int64(frames)
	if limit := int64(20 * float64(n) * math.Log2(float64(n))); per > limit {
		t.Errorf("%d instructions a frame, over %d: not an FFT's cost", per, limit)
	}
	t.Logf("log-mel front end (%d-point frames) on mps2-an386: %d instructions per inference (%d a frame), arena %d B, flash %d B (text+data)",
		n, x.Instructions(), per, s.Module.ArenaBytes, x.Firmware.Text+x.Firmware.Data)
}

// stftModel is an STFT of frames of n samples over a signal of 4n.
func stftModel(t *testing.T, n int) string {
	b := onnx.NewBuilder("stft", 17, 1)
	x := b.Input("signal", graph.Float32, 1, 4*n, 1)
	b.Output(b.Node("STFT", []string{x, b.Scalar("step", graph.Int64, float64(n)), "", b.Scalar("len", graph.Int64, float64(n))}), graph.Float32)
	return writeONNX(t, b, fmt.Sprintf("stft%d", n))
}

// The FFT's local buffer (4 N bytes for a real signal's N points: a
// complex FFT of N/2) is taken only where it fits the board's stack;
// otherwise the transform sums directly, as before the FFT, and the model
// still builds (a 2048-point STFT on a 16 KiB stack and a 512-point one on
// the micro:bit's 2 KiB once failed the stack check).
func TestFFTFitsTheStack(t *testing.T) {
	for _, c := range []struct {
		board string
		n     int
		fft   bool
	}{{"mps2-an386", 512, true}, {"mps2-an386", 2048, true}, {"mps2-an386", 4096, false}, {"microbit", 512, false}, {"microbit", 128, true}} {
		board, err := LoadBoard(c.board, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := Compile(stftModel(t, c.n), Options{Board: board, Version: "test"})
		if err != nil {
			t.Errorf("%d points on %s: %v", c.n, c.board, err)
			continue
		}
		src := string(s.Files[fmt.Sprintf("stft%d.c", c.n)])
		if got := strings.Contains(src, "_fft["); got != c.fft {
			t.Errorf("%d points on %s: FFT %v, want %v", c.n, c.board, got, c.fft)
		}
	}
}
