package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// An interrupt's handler removes the temporary file of a write under way
// (RemoveWriting); the file being replaced keeps its old contents and no
// .NAME.tmp* is left (review finding: a SIGINT while tune saved its
// records left a cut-off temporary file beside them).
func TestRemoveWritingLeavesNoTemp52(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	testAfterCreate = RemoveWriting
	defer func() { testAfterCreate = nil }()
	if err := WriteAtomic(path, []byte("new contents")); err == nil {
		t.Error("the write whose temporary file was removed reported success")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("the file: %q, %v; want its old contents", b, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".records.json.tmp*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	// Nothing is registered once writes end.
	testAfterCreate = nil
	if err := WriteAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	n := 0
	writing.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d temporary files still registered", n)
	}
}
