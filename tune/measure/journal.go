package measure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/mcugen/mcugen/internal/fileio"
)

// readJournal reads a journal's lines: those that parse as measurements,
// and the count of those that do not (a line cut short by an interruption
// or a full disk). Lines of any length are read: a bufio.Scanner stopped
// at its first line over 1 MiB and ignored every line after it in silence
// (tune review finding).
func readJournal(path string) (lines []journalLine, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		b, rerr := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var l journalLine
			if json.Unmarshal(b, &l) != nil || l.Knobs == nil || l.Key == "" {
				bad++
			} else {
				lines = append(lines, l)
			}
		}
		if rerr == io.EOF {
			return lines, bad, nil
		}
		if rerr != nil {
			return lines, bad, rerr
		}
	}
}

// keepJournal rewrites the journal at path with the lines keep accepts
// (damaged lines go), or removes it when none is left. It is written
// whole and renamed into place, so it always ends in a complete line: a
// run appending to a journal whose last line was cut short glued its
// first measurement onto it (tune review finding).
func keepJournal(path string, keep func(journalLine) bool) error {
	lines, _, err := readJournal(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range lines {
		if keep(l) {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	if b.Len() == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return fileio.WriteAtomic(path, b.Bytes())
}

// dropJournalOf removes from the journal the lines of the kernels in mine
// (this run's, by record key) and keeps another run's: a run of another
// model or core on the same records file deleted the journal of an
// interrupted one, and that run's --resume started over (tune review
// finding).
func dropJournalOf(path string, mine map[string]bool) {
	keepJournal(path, func(l journalLine) bool { return !mine[l.Key] })
}
