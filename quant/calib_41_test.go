package quant

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// TestLoadCalibSourcesNameFilesAndRows: each sample is named by the file it
// came from, with its row when the file stacks several, in the order the
// samples are returned (natural file order); sample subdirectories name
// their own files; rows grouped into a batch are named by the batch's first
// row.
func TestLoadCalibSourcesNameFilesAndRows(t *testing.T) {
	g := oneInputGraph()
	dir := t.TempDir()
	one := func() *graph.Data {
		return &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: make([]float32, 4)}
	}
	writeNpy(t, filepath.Join(dir, "x_10.npy"), one())
	writeNpy(t, filepath.Join(dir, "x_2.npy"), &graph.Data{DType: graph.Float32, Shape: []int{2, 4}, F: make([]float32, 8)})
	s, src, err := LoadCalibSources(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "x_2.npy") + " row 0", filepath.Join(dir, "x_2.npy") + " row 1", filepath.Join(dir, "x_10.npy")}
	if len(s) != 3 || len(src) != 3 {
		t.Fatalf("%d samples, %d sources", len(s), len(src))
	}
	for i, w := range want {
		if src[i]["x"] != w {
			t.Errorf("sample %d: source %q, want %q", i, src[i]["x"], w)
		}
	}

	sub := t.TempDir()
	for _, d := range []string{"s10", "s9"} {
		if err := os.Mkdir(filepath.Join(sub, d), 0o755); err != nil {
			t.Fatal(err)
		}
		writeNpy(t, filepath.Join(sub, d, "x.npy"), one())
	}
	_, src, err = LoadCalibSources(sub, g)
	if err != nil || len(src) != 2 || src[0]["x"] != filepath.Join(sub, "s9", "x.npy") || src[1]["x"] != filepath.Join(sub, "s10", "x.npy") {
		t.Errorf("subdirectories: %v, %v", src, err)
	}

	gb := oneInputGraph()
	gb.Tensors["x"].Shape = []int{2, 4}
	gb.Tensors["y"].Shape = []int{2, 4}
	rows := t.TempDir()
	writeNpy(t, filepath.Join(rows, "a.npy"), &graph.Data{DType: graph.Float32, Shape: []int{3, 1, 4}, F: make([]float32, 12)})
	s, src, err = LoadCalibSources(rows, gb)
	if err != nil || len(s) != 2 || src[0]["x"] != filepath.Join(rows, "a.npy")+" row 0" || src[1]["x"] != filepath.Join(rows, "a.npy")+" row 2" {
		t.Errorf("batch rows: %d samples, %v, %v", len(s), src, err)
	}
}

// TestLoadCalibRefusesFilesBesideSampleDirs: .npy files beside sample
// subdirectories that hold .npy files are refused, naming both (the
// subdirectories were skipped without a word); a subdirectory with no .npy
// file (notes, a .git) does not count.
func TestLoadCalibRefusesFilesBesideSampleDirs(t *testing.T) {
	g := oneInputGraph()
	dir := t.TempDir()
	one := &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, 2, 3, 4}}
	writeNpy(t, filepath.Join(dir, "x.npy"), one)
	if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes", "README.txt"), []byte("calibration set"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadCalib(dir, g); err != nil || len(s) != 1 {
		t.Fatalf("a subdirectory without .npy files: %d samples, %v", len(s), err)
	}
	if err := os.Mkdir(filepath.Join(dir, "s1"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeNpy(t, filepath.Join(dir, "s1", "x.npy"), one)
	_, err := LoadCalib(dir, g)
	if err == nil || !strings.Contains(err.Error(), "holds both .npy files (x.npy) and a sample subdirectory with .npy files (s1)") {
		t.Errorf("files beside a sample subdirectory: %v", err)
	}
}
