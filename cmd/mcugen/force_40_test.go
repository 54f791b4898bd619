package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compile --force refuses to replace a file the user changed since compile
// wrote it (review finding: an edit to src/main.c, as the project README
// invites, was replaced without a word), naming the file; the edit stays.
// Unchanged files, and a file the user deleted, are replaced as before, and
// a marker of an older mcugen (paths, no sums) still lets --force replace.
func TestForceKeepsEdits40(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	out := filepath.Join(t.TempDir(), "p")
	args := []string{"compile", model, "--board", "mps2-an386", "--project", "make", "-o", out, "--force"}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, errs)
	}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Fatalf("compile --force over its own output: exit %d: %s", code, errs)
	}
	main := filepath.Join(out, "src", "main.c")
	orig, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	edited := append(append([]byte{}, orig...), "/* my edit */\n"...)
	if err := os.WriteFile(main, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mcugen(t, args...)
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "src/main.c was changed since mcugen wrote it") {
		t.Errorf("compile --force over an edited file: exit %d: %q", code, errs)
	}
	if b, _ := os.ReadFile(main); string(b) != string(edited) {
		t.Errorf("the edit was lost")
	}
	if err := os.Remove(main); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Fatalf("compile --force after the user deleted the edited file: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(main); string(b) != string(orig) {
		t.Errorf("src/main.c not written again")
	}
	// An older marker: the paths, no sums.
	dropMarkerSums(t, out)
	if err := os.WriteFile(main, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Errorf("compile --force over an older marker: exit %d: %s", code, errs)
	}
}

// dropMarkerSums makes dir's .mcugen an older mcugen's: its paths without
// the files' sums.
func dropMarkerSums(t *testing.T, dir string) {
	t.Helper()
	mark := filepath.Join(dir, outputMarker)
	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(b), markerSums)
	if !ok {
		t.Fatalf("no sums in %s:\n%s", mark, b)
	}
	if err := os.WriteFile(mark, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
}

// --calib-random 0 is refused like a negative count (review finding: it
// built float firmware in silence), and quantize refuses to write its ONNX
// model under a .tflite name.
func TestCalibRandomZeroAndQDQName40(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/onnx/cnn.onnx")
	dir := t.TempDir()
	for _, form := range [][]string{{"--calib-random", "0"}, {"--calib-random=0"}} {
		code, _, errs := mcugen(t, append([]string{"compile", model, "-o", filepath.Join(dir, "c")}, form...)...)
		if code != 2 || !strings.Contains(errs, "--calib-random 0: must be a positive number of samples") {
			t.Errorf("compile %v: exit %d: %s", form, code, errs)
		}
	}
	code, _, errs := mcugen(t, "quantize", model, "--calib-random", "2", "-o", filepath.Join(dir, "q.tflite"))
	if code != 2 || !strings.Contains(errs, "quantize writes an ONNX QDQ model; name it .onnx") {
		t.Errorf("quantize -o q.tflite: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "q.tflite")); !os.IsNotExist(err) {
		t.Errorf("q.tflite was written")
	}
}

// A checkout with autocrlf (every text file's line ends CRLF, the marker's
// too) is no edit: --force replaces it (review finding: every file read as
// changed).
func TestForceAfterAutocrlf40(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/mlp_int8.tflite")
	out := filepath.Join(t.TempDir(), "p")
	args := []string{"compile", model, "--board", "mps2-an386", "--project", "make", "-o", out, "--force"}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Fatalf("compile: exit %d: %s", code, errs)
	}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "\n", "\r\n")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mcugen(t, args...); code != 0 {
		t.Errorf("compile --force over a CRLF checkout: exit %d: %s", code, errs)
	}
}
