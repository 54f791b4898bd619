package pipeline

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// FuzzCompile feeds mutated models through every pass, import to C, for
// the host and for the Cortex-M4's dsp kernels: each must give a State or
// an error, never panic. The importers' own fuzzers cover decoding; this
// one reaches what a decodable but malformed model does to the later
// passes (shape inference, quantization, the plan, lowering, emission).
// A pass that recovers a panic into an error (lowering does, per node)
// is still a defect when the message says so, so "internal" and
// "runtime error" in an error fail too.
func FuzzCompile(f *testing.F) {
	for _, pat := range []string{"../testdata/tflite/op_int8_*.tflite", "../testdata/tflite/op_float_*.tflite", "../testdata/tflite/cnn_int8.tflite", "../testdata/onnx/*.onnx"} {
		ms, _ := filepath.Glob(pat)
		for _, m := range ms {
			if b, err := os.ReadFile(m); err == nil && len(b) < 64<<10 {
				f.Add(b, strings.HasSuffix(m, ".onnx"), false)
			}
		}
	}
	host, err := LoadBoard("host", "")
	if err != nil {
		f.Fatal(err)
	}
	m4, err := LoadBoard("mps2-an386", "")
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, onnx, dsp bool) {
		name := filepath.Join(dir, "m.tflite")
		if onnx {
			name = filepath.Join(dir, "m.onnx")
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		board := host
		if dsp {
			board = m4
		}
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		_, err := Compile(name, Options{Board: board, Version: "fuzz"})
		if err != nil && (strings.Contains(err.Error(), "runtime error") || strings.Contains(err.Error(), "internal error")) {
			t.Fatalf("a recovered panic: %v", err)
		}
	})
}
