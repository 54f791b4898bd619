package templates

import (
	"os"
	"testing"
)

func TestDump(t *testing.T) {
	d := os.Getenv("DUMP")
	if d == "" {
		t.Skip()
	}
	for _, k := range Kinds {
		p := fakeProject(t, k, board(t, os.Getenv("BOARD")), "fake", "")
		if _, err := Write(d+"/"+string(k), p); err != nil {
			t.Log(err)
		}
	}
}
