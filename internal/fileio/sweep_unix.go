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
// the process, however it ends. Only names os.MkdirTemp makes count (the
// prefix and digits), and a directory holding the file keep names (a run's
// --keep directory) is left. It returns how many it removed; errors leave
// a directory where it is.
func SweepOrphans(parent string, prefixes []string, keep string, minAge time.Duration) int {
	es, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range es {
		if !e.IsDir() || !tempName(e.Name(), prefixes) {
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
		if _, err := os.Lstat(filepath.Join(dir, keep)); keep != "" && err == nil {
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

// tempName reports whether s is a name os.MkdirTemp makes from one of
// prefixes: the prefix, then decimal digits only (a review: a user's
// mcugen-tune-cache or mcugen-run-keep directory was removed).
func tempName(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
