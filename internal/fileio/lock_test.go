//go:build unix

package fileio

import (
	"os"
	"testing"
	"time"
)

// A second LockDir on a held directory says it waits, then gets the lock
// once the first is released; no file is left in the directory.
func TestLockDirTakesTurns(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir, func() { t.Error("the first lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited, got := make(chan bool, 1), make(chan func(), 1)
	go func() {
		u, err := LockDir(dir, func() { waited <- true })
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the second lock did not say it waits")
	}
	select {
	case <-got:
		t.Fatal("the second lock was taken while the first was held")
	default:
	}
	unlock()
	(<-got)()
	if es, _ := readDirNames(dir); len(es) != 0 {
		t.Errorf("left %v in the directory", es)
	}
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
