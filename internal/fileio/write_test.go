package fileio

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

func names(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	sort.Strings(n)
	return strings.Join(n, " ")
}

// A new file is 0644 less the umask (os.WriteFile's); an existing one keeps
// its mode and gets the new contents; no temporary file is left.
func TestWriteFileModes(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	fresh := filepath.Join(dir, "fresh")
	if err := WriteAtomic(fresh, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("new file under umask 077: %v %v, want 0600", st.Mode(), err)
	}
	kept := filepath.Join(dir, "kept")
	if err := os.WriteFile(kept, []byte("old contents"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(kept, 0o640)
	if err := WriteAtomic(kept, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(kept); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("existing file: %v %v, want 0640", st.Mode(), err)
	}
	if b, _ := os.ReadFile(kept); string(b) != "new" {
		t.Errorf("existing file holds %q", b)
	}
	if got := names(t, dir); got != "fresh kept" {
		t.Errorf("files left: %s", got)
	}
}

// A link is written through to the file it names, which keeps its mode; a
// dangling link gets the file it names.
func TestWriteFileThroughLinks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "model")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("model", link); err != nil {
		t.Skip(err)
	}
	if err := WriteAtomic(link, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v %v, want 0600", st.Mode(), err)
	}
	if b, _ := os.ReadFile(file); string(b) != "through" {
		t.Errorf("the linked file holds %q", b)
	}
	dangling := filepath.Join(dir, "dangling")
	target := filepath.Join(dir, "target")
	if err := os.Symlink(target, dangling); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(dangling, []byte("made")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(dangling); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "made" {
		t.Errorf("the link's target holds %q", b)
	}
}

// A pipe (for a user, /dev/stdout or /dev/full) is written, not replaced by
// a renamed temporary file: run as root, that put a regular file in place
// of /dev/full (review finding, session 22).
func TestWriteFileToAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := WriteAtomic(fifo, []byte("piped")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", st.Mode(), err)
	}
	if s := <-got; s != "piped" {
		t.Errorf("the pipe carried %q", s)
	}
	if got := names(t, dir); got != "out" {
		t.Errorf("files left: %s", got)
	}
}

// A failed write leaves nothing behind: not over a directory, not into a
// missing one, not into a read-only one.
func TestWriteFileFailures(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(sub, []byte("x")); err == nil {
		t.Error("writing over a directory succeeded")
	}
	if err := WriteAtomic(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	if got := names(t, dir); got != "sub" {
		t.Errorf("files left: %s", got)
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := WriteAtomic(filepath.Join(ro, "f"), []byte("x")); err == nil {
			t.Error("writing into a read-only directory succeeded")
		}
	}
}

// A file the user may not write is not replaced (os.WriteFile would have
// failed; the rename replaced it: review finding), and a file in a
// directory that takes no new file is written in place.
func TestWriteAtomicPermissions(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes any file")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	os.WriteFile(ro, []byte("old"), 0o444)
	if err := WriteAtomic(ro, []byte("new")); err == nil {
		t.Error("a read-only file was replaced")
	}
	if b, _ := os.ReadFile(ro); string(b) != "old" {
		t.Errorf("the read-only file holds %q", b)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	rw := filepath.Join(sub, "rw")
	os.WriteFile(rw, []byte("old"), 0o644)
	os.Chmod(sub, 0o555)
	defer os.Chmod(sub, 0o755)
	if err := WriteAtomic(rw, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(rw); string(b) != "new" {
		t.Errorf("the file in the read-only directory holds %q", b)
	}
}
