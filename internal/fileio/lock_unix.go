//go:build unix

package fileio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// held holds the lock files this process has locked and not released, for
// RemoveLocks.
var held sync.Map

// RemoveLocks removes the lock files this process holds: for a signal
// handler that exits the process (an interrupted tune left an empty
// FILE.lock beside its records; review finding). The locks themselves end
// with the process.
func RemoveLocks() {
	held.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}

// Lock takes the exclusive lock on the file at path (made if missing),
// waiting for another process that holds it after calling wait with a line
// to show, so two mcugen runs sharing a records file take turns. The
// returned function removes the file and releases the lock: a lock file
// left behind made a user's checkout dirty (review finding). A run that
// waited on the file another removed finds, once it holds the lock, that
// the path is gone or names another file, and locks again at the path, so
// no two runs ever hold the lock of the file the path names.
func Lock(path string, wait func()) (func(), error) {
	waited := false
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		w := wait
		if waited {
			w = func() {} // said once
		}
		if _, err := flock(f, path, func() { waited = true; w() }); err != nil {
			return nil, err
		}
		lockd, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(lockd, now) {
			key := path
			if abs, err := filepath.Abs(path); err == nil {
				key = abs
			}
			held.Store(key, true)
			return func() {
				held.Delete(key)
				_ = os.Remove(path)
				f.Close()
			}, nil
		}
		f.Close()
		if err1 != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err1)
		}
	}
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
