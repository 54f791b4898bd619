//go:build unix

package measure

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockRecords takes the exclusive lock on out's lock file (out + ".lock"),
// waiting for another tune run that holds it (note says so), so two runs
// writing one records file take turns: the second loads the first's
// records and measures only what they lack. The returned function
// releases the lock; the file stays.
func lockRecords(out string, note func(string)) (func(), error) {
	f, err := os.OpenFile(out+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tuning records lock: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		note(fmt.Sprintf("%s: another mcugen tune is writing these records; waiting for it", out))
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tuning records lock %s.lock: %w", out, err)
	}
	return func() { f.Close() }, nil
}
