// Package fileio reads the files a user names as inputs and writes the
// outputs, with the lessons each caller once learned on its own.
//
// WriteAtomic writes an output so that a reader, or the next run after an
// interruption, sees the old contents or the new ones, never half of a
// file: the QDQ model (`quantize -o`), the tuning records and `--junit`.
// A device or a pipe given as the output is written, not replaced; a
// symbolic link is written through; a new file's mode respects the umask.
//
// ReadRegular reads an input that must be a regular file of bounded size:
// a device (/dev/zero) read without end, and a FIFO blocked forever.
package fileio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// writing holds the temporary files WriteAtomic is filling, for
// RemoveWriting.
var writing sync.Map

// testAfterCreate, when set (tests), runs once WriteAtomic has made its
// temporary file.
var testAfterCreate func()

// RemoveWriting removes the temporary files of the WriteAtomic calls under
// way: for a signal handler that exits the process (review finding: a
// SIGINT while tune saved a large records file left .FILE.tmpNNN, cut off,
// beside it). The file being replaced keeps its old contents.
func RemoveWriting() {
	writing.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}

// WriteAtomic writes data to path through a temporary file in the same
// directory renamed over it: a failed write leaves no half-written file
// (and an existing one as it was).
//
//   - A symbolic link is written through, to the file it names, which keeps
//     its mode; a dangling link gets the file it names created.
//   - A path that is not a regular file (/dev/stdout, /dev/full, a pipe) is
//     written directly: renaming over it would put a regular file in its
//     place (as root, over the device itself).
//   - An existing file keeps its mode; a new one gets 0644 less the umask,
//     as os.WriteFile gives it.
func WriteAtomic(path string, data []byte) error {
	mode, keep := os.FileMode(0o644), false
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if _, err := filepath.EvalSymlinks(path); err != nil {
			return os.WriteFile(path, data, mode)
		}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
		st, err := os.Stat(real)
		if err == nil && !st.Mode().IsRegular() {
			return os.WriteFile(path, data, mode)
		}
		if err == nil {
			mode, keep = st.Mode().Perm(), true
			if syscall.Access(path, 2 /* W_OK */) != nil {
				// A file its owner may not write is not replaced behind
				// its back, as os.WriteFile would not write it (review
				// finding).
				return &os.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
			}
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		if keep && errors.Is(err, fs.ErrPermission) {
			// The directory takes no new file, but the file may be
			// written: in place, as os.WriteFile would (review finding).
			return os.WriteFile(path, data, mode)
		}
		return err
	}
	tmp := f.Name()
	writing.Store(tmp, true)
	defer writing.Delete(tmp)
	if testAfterCreate != nil {
		testAfterCreate()
	}
	if !keep {
		// CreateTemp makes the file 0600, and a Chmod would ignore the
		// umask: the name is created again with 0644 for the umask to mask.
		f.Close()
		os.Remove(tmp)
		if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return err
		}
	}
	_, err = f.Write(data)
	if err == nil && keep {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
