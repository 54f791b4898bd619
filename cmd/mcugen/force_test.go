package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --force replaces an earlier output directory, but never the working
// directory, one holding it, or a repository: `compile -o . --force` in a
// project deleted its sources and .git (review finding). Each refusal is
// one line, exit 1, and leaves every file in place; a subdirectory is still
// replaced.
func TestForceGuard(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	proj := t.TempDir()
	main := filepath.Join(proj, "main.c")
	os.WriteFile(main, []byte("int main(void) { return 0; }\n"), 0o644)
	os.Mkdir(filepath.Join(proj, ".git"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	t.Chdir(proj)

	intact := func(what string) {
		t.Helper()
		for _, f := range []string{main, filepath.Join(proj, ".git", "HEAD")} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%s: %s is gone", what, f)
			}
		}
	}
	// The repository from elsewhere (from within it, the working
	// directory's refusal comes first).
	t.Chdir(t.TempDir())
	code, _, stderr := mcugen(t, "compile", model, "-o", proj, "--force")
	oneErrorLine(t, "-o a repository", code, stderr, 1, "holds .git", "never a repository")
	intact("-o a repository")
	t.Chdir(proj)
	code, _, stderr = mcugen(t, "compile", model, "-o", ".", "--force")
	oneErrorLine(t, "-o . in a repository", code, stderr, 1, "is the working directory or holds it")
	intact("-o . in a repository")
	// An empty working directory too, without --force: the output
	// replaced it, and the shell was left in a deleted directory
	// (template journey finding).
	empty := t.TempDir()
	t.Chdir(empty)
	code, _, stderr = mcugen(t, "compile", model, "-o", ".")
	oneErrorLine(t, "-o . in an empty directory", code, stderr, 1, "is the working directory or holds it")
	if _, err := os.Stat(empty); err != nil {
		t.Errorf("-o . in an empty directory: %v", err)
	}
	t.Chdir(proj)

	os.RemoveAll(filepath.Join(proj, ".git"))
	os.Mkdir(filepath.Join(proj, ".git"), 0o755) // the check below is the working directory's
	os.WriteFile(filepath.Join(proj, ".git", "HEAD"), []byte("x\n"), 0o644)
	sub := filepath.Join(proj, "src")
	os.Mkdir(sub, 0o755)
	t.Chdir(sub)
	os.WriteFile(filepath.Join(sub, "app.c"), []byte("/* app */\n"), 0o644)
	code, _, stderr = mcugen(t, "compile", model, "-o", ".", "--force")
	oneErrorLine(t, "-o . (the working directory)", code, stderr, 1, "working directory", "name a subdirectory")
	code, _, stderr = mcugen(t, "compile", model, "-o", "..", "--force")
	if code != 1 || !strings.Contains(stderr, "holds .git") && !strings.Contains(stderr, "working directory") {
		t.Errorf("-o .. --force: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(sub, "app.c")); err != nil {
		t.Fatal("-o . --force removed the working directory's files")
	}
	intact("-o .. --force")

	out := filepath.Join(sub, "model")
	if code, _, stderr = mcugen(t, "compile", model, "-o", "model"); code != 0 {
		t.Fatalf("-o model: exit %d: %s", code, stderr)
	}
	os.WriteFile(filepath.Join(out, "cnn_int8.c"), []byte("old\n"), 0o644)
	dropMarkerSums(t, out) // an older compile's output, whose model differs
	if code, _, stderr = mcugen(t, "compile", model, "-o", "model", "--force"); code != 0 {
		t.Fatalf("-o model --force: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "cnn_int8.c")); err != nil || string(b) == "old\n" {
		t.Errorf("--force did not replace an output directory's model: %v", err)
	}
}

// Nor does --force replace a directory holding the command's own inputs: `compile
// danger/m.tflite -o danger --force` deleted the model it compiled, and the notes beside
// it (user-journey finding); a model in a subdirectory of -o is refused the same way.
func TestForceKeepsInputs(t *testing.T) {
	src, err := os.ReadFile("../../testdata/tflite/cnn_int8.tflite")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	danger := filepath.Join(root, "danger")
	model := filepath.Join(danger, "sub", "m.tflite")
	notes := filepath.Join(danger, "notes.txt")
	os.MkdirAll(filepath.Dir(model), 0o755)
	os.WriteFile(model, src, 0o644)
	os.WriteFile(notes, []byte("important\n"), 0o644)
	for _, out := range []string{danger, filepath.Dir(model)} {
		code, _, stderr := mcugen(t, "compile", model, "--board", "host", "-o", out, "--force")
		oneErrorLine(t, "-o "+out, code, stderr, 1, "holds "+model+", an input of this command", "name another directory")
		for _, f := range []string{model, notes} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("-o %s --force: %s is gone", out, f)
			}
		}
	}
	// A board file is an input too.
	boards := filepath.Join(danger, "my.star")
	os.WriteFile(boards, []byte("board(name = \"mine\", inherits = \"mps2-an386\")\n"), 0o644)
	other := filepath.Join(root, "m.tflite")
	os.WriteFile(other, src, 0o644)
	code, _, stderr := mcugen(t, "compile", other, "--boards", boards, "--board", "mine", "-o", danger, "--force")
	oneErrorLine(t, "board file in -o", code, stderr, 1, "holds "+boards, "an input of this command")
}

// --force replaces only a directory an earlier compile wrote: one holding
// the .mcugen file every output gets, or (an earlier version's output)
// only names the new output holds too. `-o $HOME --force` replaced a home
// directory (user-journey finding); a version that asked for the file
// alone refused its predecessors' outputs (review finding). A directory of
// the user's is refused, its files and permissions left alone; one a
// compile wrote is replaced and keeps its permissions, read-only too.
func TestForceNeedsAnEarlierOutput(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	victim := filepath.Join(t.TempDir(), "victim")
	thesis := filepath.Join(victim, "docs", "thesis.txt")
	os.MkdirAll(filepath.Dir(thesis), 0o755)
	os.WriteFile(thesis, []byte("precious\n"), 0o644)
	os.Chmod(victim, 0o700)
	code, _, stderr := mcugen(t, "compile", model, "--board", "host", "-o", victim, "--force")
	oneErrorLine(t, "-o victim --force", code, stderr, 1, "holds docs, which this compile does not write, and no .mcugen file", "only mcugen's own output directories")
	if b, err := os.ReadFile(thesis); err != nil || string(b) != "precious\n" {
		t.Fatalf("the refused directory lost its file: %v", err)
	}
	if st, _ := os.Stat(victim); st.Mode().Perm() != 0o700 {
		t.Errorf("the refused directory's mode is %v, want 0700", st.Mode().Perm())
	}

	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := mcugen(t, "compile", model, "--board", "host", "-o", out); code != 0 {
		t.Fatalf("-o out: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, ".mcugen")); err != nil || !strings.Contains(string(b), "mcugen compile wrote this directory") {
		t.Fatalf("the output has no .mcugen marker: %v", err)
	}
	os.Chmod(out, 0o750)
	// A file the user added beside the output stops --force, which
	// replaces only what the marker lists (bare-metal journey: a glue
	// file beside the model's C went, with a warning after the fact).
	os.WriteFile(filepath.Join(out, "glue.c"), []byte("x\n"), 0o644)
	code, _, stderr = mcugen(t, "compile", model, "--board", "host", "-o", out, "--force", "--project", "make")
	oneErrorLine(t, "-o out --force with glue.c added", code, stderr, 1, "holds glue.c, which no mcugen compile wrote there", "move it out of the output directory first")
	if b, err := os.ReadFile(filepath.Join(out, "glue.c")); err != nil || string(b) != "x\n" {
		t.Fatalf("the refused directory lost glue.c: %v", err)
	}
	os.Remove(filepath.Join(out, "glue.c"))
	code, _, stderr = mcugen(t, "compile", model, "--board", "host", "-o", out, "--force", "--project", "make")
	if code != 0 {
		t.Fatalf("-o out --force: exit %d: %s", code, stderr)
	}
	// It says what of the earlier output it removed and does not write
	// again (session-23 journey: files went silently).
	if !strings.Contains(stderr, "--force removed cnn_int8.c, cnn_int8.h, which this compile does not write") {
		t.Errorf("no word of the removed cnn_int8.c and cnn_int8.h: %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "cnn_int8.c")); err == nil {
		t.Error("--force left the earlier output's file")
	}
	if _, err := os.Stat(filepath.Join(out, ".mcugen")); err != nil {
		t.Error("a project output has no .mcugen marker")
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o750 {
		t.Errorf("the replaced directory's mode is %v, want its own 0750", st.Mode().Perm())
	}

	// An earlier version's output: the model's files, no .mcugen file.
	old := filepath.Join(t.TempDir(), "old")
	if code, _, stderr := mcugen(t, "compile", model, "--board", "host", "-o", old); code != 0 {
		t.Fatalf("-o old: exit %d: %s", code, stderr)
	}
	os.Remove(filepath.Join(old, ".mcugen"))
	os.Chmod(old, 0o555)
	if code, _, stderr := mcugen(t, "compile", model, "--board", "host", "-o", old, "--force"); code != 0 {
		t.Fatalf("an earlier version's output: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(old, ".mcugen")); err != nil {
		t.Error("the replaced output has no .mcugen file")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(old), ".old.mcugen-tmp-*")); len(left) > 0 {
		t.Errorf("replacing a read-only output left %v", left)
	}
	os.Chmod(old, 0o755)
	// Beside a file the compile does not write, it is the user's.
	os.Remove(filepath.Join(old, ".mcugen"))
	os.WriteFile(filepath.Join(old, "notes.txt"), []byte("mine\n"), 0o644)
	code, _, stderr = mcugen(t, "compile", model, "--board", "host", "-o", old, "--force")
	oneErrorLine(t, "-o old (notes.txt) --force", code, stderr, 1, "holds notes.txt, which this compile does not write")
	if _, err := os.Stat(filepath.Join(old, "notes.txt")); err != nil {
		t.Error("the refused directory lost notes.txt")
	}
	// At any depth: a make project's src/ with the user's app.c beside
	// main.c is the user's.
	proj := filepath.Join(t.TempDir(), "proj")
	if code, _, stderr := mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", proj); code != 0 {
		t.Fatalf("--project make: exit %d: %s", code, stderr)
	}
	os.Remove(filepath.Join(proj, ".mcugen"))
	os.WriteFile(filepath.Join(proj, "src", "app.c"), []byte("/* mine */\n"), 0o644)
	code, _, stderr = mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", proj, "--force")
	oneErrorLine(t, "-o proj (src/app.c) --force", code, stderr, 1, "holds "+filepath.Join("src", "app.c")+", which this compile does not write")
	if _, err := os.Stat(filepath.Join(proj, "src", "app.c")); err != nil {
		t.Error("the refused project lost src/app.c")
	}
	os.Remove(filepath.Join(proj, "src", "app.c"))
	if code, _, stderr := mcugen(t, "compile", model, "--board", "mps2-an386", "--project", "make", "-o", proj, "--force"); code != 0 {
		t.Errorf("an earlier version's project: exit %d: %s", code, stderr)
	}
}

// --force and the marker's list (review findings): a user's file under a
// name the new compile writes again is refused too; a file inside a
// directory the compile wrote is named itself; the build directory of a
// project built in place goes (with the warning); a marker with CRLF
// line ends is still read, and one mcugen did not write is refused.
func TestForceMarkerList(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	out := filepath.Join(t.TempDir(), "out")
	compile := func(extra ...string) (int, string) {
		code, _, errs := mcugen(t, append([]string{"compile", model, "--board", "host", "-o", out, "--force"}, extra...)...)
		return code, errs
	}
	if code, errs := compile("--project", "make"); code != 0 {
		t.Fatalf("first compile: exit %d: %s", code, errs)
	}
	// A new file under a generated directory is named itself.
	os.WriteFile(filepath.Join(out, "src", "notes.txt"), []byte("mine\n"), 0o644)
	code, errs := compile("--project", "make")
	oneErrorLine(t, "a file in src/", code, errs, 1, "holds "+filepath.Join("src", "notes.txt")+", which no mcugen compile wrote there")
	os.Remove(filepath.Join(out, "src", "notes.txt"))
	// A README of the user's where a plain compile writes none, then a
	// project compile that writes one: refused, the file kept.
	if code, errs := compile(); code != 0 {
		t.Fatalf("plain compile: exit %d: %s", code, errs)
	}
	os.WriteFile(filepath.Join(out, "README.md"), []byte("mine\n"), 0o644)
	code, errs = compile("--project", "make")
	oneErrorLine(t, "a README of the user's", code, errs, 1, "holds README.md, which no mcugen compile wrote there")
	if b, _ := os.ReadFile(filepath.Join(out, "README.md")); string(b) != "mine\n" {
		t.Error("the user's README.md was overwritten")
	}
	os.Remove(filepath.Join(out, "README.md"))
	// A project built in place: its build/ goes, with the warning.
	if code, errs := compile("--project", "make"); code != 0 {
		t.Fatalf("project compile: exit %d: %s", code, errs)
	}
	os.MkdirAll(filepath.Join(out, "build", "obj"), 0o755)
	os.WriteFile(filepath.Join(out, "build", "obj", "a.o"), []byte("o"), 0o644)
	os.WriteFile(filepath.Join(out, "build", "flags"), []byte("arm-none-eabi-gcc -O2"), 0o644) // make's stamp
	code, errs = compile("--project", "make")
	if code != 0 || !strings.Contains(errs, "--force removed build") {
		t.Errorf("a project built in place: exit %d, %q", code, errs)
	}
	// CRLF line ends: the list is still read (notes.txt refused).
	b, _ := os.ReadFile(filepath.Join(out, ".mcugen"))
	os.WriteFile(filepath.Join(out, ".mcugen"), []byte(strings.ReplaceAll(string(b), "\n", "\r\n")), 0o644)
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine\n"), 0o644)
	code, errs = compile("--project", "make")
	oneErrorLine(t, "a CRLF marker", code, errs, 1, "holds notes.txt, which no mcugen compile wrote there")
	// A marker mcugen did not write: refused, not replaced whole.
	os.WriteFile(filepath.Join(out, ".mcugen"), []byte("edited by hand\n"), 0o644)
	code, errs = compile("--project", "make")
	oneErrorLine(t, "a hand-edited marker", code, errs, 1, "its .mcugen is not one mcugen wrote")
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err != nil {
		t.Error("notes.txt went")
	}
	// A .mcugen that is a symbolic link to a marker is no mark, and says so
	// (it was "holds .mcugen, ... and no .mcugen file").
	real := filepath.Join(filepath.Dir(out), "real-marker")
	os.WriteFile(real, []byte(oldMarkerText), 0o644)
	os.Remove(filepath.Join(out, ".mcugen"))
	if err := os.Symlink(real, filepath.Join(out, ".mcugen")); err == nil {
		code, errs = compile("--project", "make")
		oneErrorLine(t, "a linked marker", code, errs, 1, "its .mcugen is not a regular file (a compile writes one), so the directory is not an earlier output")
		os.Remove(filepath.Join(out, ".mcugen"))
	}
	// An earlier mcugen's marker (no list) still replaces the whole
	// directory, as it promised.
	os.WriteFile(filepath.Join(out, ".mcugen"), []byte(oldMarkerText), 0o644)
	code, errs = compile("--project", "make")
	if code != 0 || !strings.Contains(errs, "--force removed notes.txt") {
		t.Errorf("an old marker: exit %d, %q", code, errs)
	}
}
