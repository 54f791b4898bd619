//go:build unix

package fileio

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes the exclusive lock on the file at path (made if missing),
// waiting for another process that holds it after calling wait with a line
// to show, so two mcugen runs sharing a records file or a --keep directory
// take turns. The returned function releases the lock; the file stays.
func Lock(path string, wait func()) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return flock(f, path, wait)
}

// LockDir is Lock on a directory itself (no lock file is left in it): two
// runs building in one --keep directory take turns.
func LockDir(dir string, wait func()) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return flock(f, dir, wait)
}

func flock(f *os.File, path string, wait func()) (func(), error) {
	var err error
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		wait()
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
