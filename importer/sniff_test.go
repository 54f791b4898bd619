package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model named with the other format's extension is read as what its bytes
// say, with a warning; a file that is no model says what it looks like
// (review finding: a PNG was "not a valid ONNX model: field 6 ..."; a Git
// LFS pointer gives no hint that the model was never fetched).
func TestWrongFormatRecognised(t *testing.T) {
	dir := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	for _, c := range []struct {
		file   string
		data   []byte
		format string
		warn   string
	}{
		{"cnn.tflite", read("../testdata/onnx/cnn.onnx"), "onnx", "an ONNX model named .tflite"},
		{"mlp.onnx", read("../testdata/tflite/mlp_int8.tflite"), "tflite", "a TFLite model (file identifier TFL3) named .onnx"},
	} {
		var warns []string
		g, err := Load(write(c.file, c.data), Options{Warn: func(w string) { warns = append(warns, w) }})
		if err != nil || g.Format != c.format || len(warns) != 1 || !strings.Contains(warns[0], c.warn) {
			t.Errorf("%s: %v, warnings %q", c.file, err, warns)
		}
	}
	for _, c := range []struct {
		file string
		data string
		want string
	}{
		{"photo.onnx", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks like a PNG image"},
		{"model.tflite", "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 9\n", "Git LFS pointer"},
		{"model.onnx", "\x89HDF\r\n\x1a\n\x00\x00", "an HDF5 file"},
		{"model.onnx", "PK\x03\x04\x14\x00", "a zip archive"},
		{"npy.py", "import numpy as np\nprint(np.zeros(3))\n", "a text file (a script or notes?), not a model"},
		{"x.onnx", "\x93NUMPY\x01\x00v\x00{'descr': '<f4'", "a NumPy array (.npy), not a model: give it to --input"},
	} {
		_, err := Load(write(c.file, []byte(c.data)), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", c.file, err, c.want)
		}
	}
}
