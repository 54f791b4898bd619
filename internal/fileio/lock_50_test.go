//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Lock removes its file when released (a tune run's records.json.lock made
// a checkout dirty: CLI review), and still excludes: runs waiting on a file
// another removed lock again at the path. Eight lockers (each open is its
// own open file description, so flock excludes them as it does processes)
// take turns 200 times with never two inside.
func TestLockRemovesFileAndExcludes50(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json.lock")
	var inside, max, turns atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				unlock, err := Lock(path, func() {})
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > max.Load() {
					max.Store(n)
				}
				time.Sleep(50 * time.Microsecond)
				turns.Add(1)
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if max.Load() != 1 || turns.Load() != 200 {
		t.Errorf("at most %d inside at once over %d turns, want 1 over 200", max.Load(), turns.Load())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the lock file is left: %v", err)
	}
}
