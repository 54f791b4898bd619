//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SweepOrphans removes the directories in parent whose names start with
// one of prefixes, that this user owns, that have not changed for minAge,
// and whose lock (LockDir) nobody holds: the work directories of runs that
// died without cleaning up (kill -9, a crash, a power cut). A live run
// holds its directory's lock until it removes it, and the lock dies with
// the process, however it ends. It returns how many it removed; errors
// leave a directory where it is.
func SweepOrphans(parent string, prefixes []string, minAge time.Duration) int {
	es, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range es {
		if !e.IsDir() || !hasAnyPrefix(e.Name(), prefixes) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < minAge {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		// Held (a live run), or not lockable here: left alone.
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && os.RemoveAll(dir) == nil {
			removed++
		}
		f.Close()
	}
	return removed
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
