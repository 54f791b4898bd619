package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Templates review: --force removed a top-level build/ whatever it held (a
// user's notes in it went); now a build/ that is no build tree (no
// CMakeCache.txt, no make flags stamp) is looked at file by file, and a
// file of the user's there stops --force. And Bazel 7 and 8 write
// MODULE.bazel.lock beside MODULE.bazel: --force refused the project after
// any such build.
func TestForceBuildDirAndBazelLock49(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out := filepath.Join(t.TempDir(), "out")
	compile := func(project string) (int, string) {
		code, _, errs := mcugen(t, "compile", model, "--board", "host", "-o", out, "--force", "--project", project)
		return code, errs
	}
	if code, errs := compile("make"); code != 0 {
		t.Fatalf("first compile: exit %d: %s", code, errs)
	}
	os.MkdirAll(filepath.Join(out, "build"), 0o755)
	os.WriteFile(filepath.Join(out, "build", "NOTES.txt"), []byte("mine\n"), 0o644)
	code, errs := compile("make")
	oneErrorLine(t, "notes in build/", code, errs, 1, "holds "+filepath.Join("build", "NOTES.txt")+", which no mcugen compile wrote there")
	if b, _ := os.ReadFile(filepath.Join(out, "build", "NOTES.txt")); string(b) != "mine\n" {
		t.Error("the user's build/NOTES.txt went")
	}
	// CMake's build tree goes, with the warning.
	os.WriteFile(filepath.Join(out, "build", "CMakeCache.txt"), []byte("# cache\n"), 0o644)
	if code, errs := compile("make"); code != 0 {
		t.Fatalf("a CMake build tree: exit %d: %s", code, errs)
	}

	if code, errs := compile("bazel"); code != 0 {
		t.Fatalf("bazel project: exit %d: %s", code, errs)
	}
	os.WriteFile(filepath.Join(out, "MODULE.bazel.lock"), []byte("{}\n"), 0o644)
	if code, errs := compile("bazel"); code != 0 {
		t.Errorf("after a Bazel 7 build (MODULE.bazel.lock): exit %d: %s", code, errs)
	}
}
