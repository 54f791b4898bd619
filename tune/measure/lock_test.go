//go:build unix

package measure

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two tune runs writing one records file take turns (a CI's parallel jobs
// sharing a records cache lost the first run's records): the second waits,
// says why, and gets the lock once the first lets go.
func TestRecordsLockTakesTurns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "recs.json")
	unlock, err := lockRecords(out, func(string) { t.Error("the first run waited") })
	if err != nil {
		t.Fatal(err)
	}
	notes := make(chan string, 1)
	got := make(chan func())
	go func() {
		u, err := lockRecords(out, func(n string) { notes <- n })
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	n := <-notes // the second run says it waits before it blocks
	if !strings.Contains(n, "another mcugen tune is writing these records; waiting") {
		t.Errorf("note %q", n)
	}
	select {
	case <-got:
		t.Fatal("the second run got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	(<-got)()
}
