//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SweepOrphans removes an old, unlocked work directory with what it holds,
// and leaves a locked one (a live run), a young one (a run that has not
// locked it yet), another prefix's and a plain file.
func TestSweepOrphans(t *testing.T) {
	parent := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name string, age time.Time) string {
		d := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sub", "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, age, age); err != nil {
			t.Fatal(err)
		}
		return d
	}
	orphan := mk("mcugen-tune-1", old)
	live := mk("mcugen-run-2", old)
	young := mk("mcugen-run-3", time.Now())
	other := mk("other-4", old)
	named := mk("mcugen-tune-cache", old)
	kept := mk("mcugen-run-77", old)
	if err := os.WriteFile(filepath.Join(kept, ".keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(kept, old, old); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(parent, "mcugen-run-5")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := LockDir(live, func() { t.Error("waited") })
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if n := SweepOrphans(parent, []string{"mcugen-run-", "mcugen-tune-"}, ".keep", 10*time.Minute); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan %s: %v, want removed", orphan, err)
	}
	for _, p := range []string{live, young, other, file, named, kept} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v, want kept", p, err)
		}
	}
}
