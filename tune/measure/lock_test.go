//go:build unix

package measure

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/tune"
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

// A run that waited for the lock of another, which then stopped with its
// journal left (interrupted), continues from that journal; it deleted it
// as stale, and the other run's --resume found nothing (tuning journey).
func TestWaitingRunContinuesTheJournal(t *testing.T) {
	b, opt, s := qemuModel(t)
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) == 0 {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	unlock, err := lockRecords(out, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	waiting := make(chan bool, 1)
	cfg := Config{Opt: opt, Trials: 2, Jobs: 2, Out: out, Timeout: 30 * time.Second, Version: "test",
		Note: func(n string) {
			notes = append(notes, n)
			if strings.Contains(n, "waiting for it") {
				waiting <- true
			}
		}}
	done := make(chan *Report)
	go func() {
		rep, err := Run(s, cfg)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	<-waiting
	// The other run's journal, as its interruption leaves it.
	k := kernels[0]
	line := fmt.Sprintf(`{"key":%q,"knobs":%s,"instructions":123456,"code":%q}`+"\n", tune.KeyFor(k.Signature, s.Module.Target, b.CPU, k.Defaults), knobsJSON(t, k.Defaults),
		candidateCode(t, k, k.Defaults, opt))
	if err := os.WriteFile(JournalPath(out), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock()
	rep := <-done
	if rep == nil || rep.Resumed != 1 {
		t.Fatalf("report %+v: want the journal's one measurement resumed; notes %q", rep, notes)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "the run this one waited for stopped before it finished; continuing from its measurements") {
		t.Errorf("notes %q", notes)
	}
}

func knobsJSON(t *testing.T, k tune.Knobs) string {
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
