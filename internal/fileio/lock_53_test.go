//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveLocks (the signal handler's) removes the lock files still held, and
// only those: a released lock's file is gone already, and a later Lock at
// the same path takes it at once (review finding: an interrupted tune left
// an empty FILE.lock behind).
func TestRemoveLocksLeavesNoLockFile53(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json.lock"), filepath.Join(dir, "b.json.lock")
	unlockA, err := Lock(a, func() { t.Error("a waited") })
	if err != nil {
		t.Fatal(err)
	}
	unlockB, err := Lock(b, func() { t.Error("b waited") })
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveLocks()
	if es, _ := readDirNames(dir); len(es) != 1 || es[0] != "other" {
		t.Errorf("after RemoveLocks the directory holds %v, want [other]", es)
	}
	unlockA() // the file is gone already: no error, no panic
	again, err := Lock(a, func() { t.Error("a lock after RemoveLocks waited") })
	if err != nil {
		t.Fatal(err)
	}
	again()
	if es, _ := readDirNames(dir); len(es) != 1 {
		t.Errorf("left %v", es)
	}
}
