package measure

import (
	"fmt"

	"github.com/mcugen/mcugen/internal/fileio"
)

// lockRecords takes the exclusive lock on out's lock file (out + ".lock"),
// waiting for another tune run that holds it (note says so), so two runs
// writing one records file take turns: the second loads the first's
// records and measures only what they lack. The returned function
// releases the lock and removes the lock file.
func lockRecords(out string, note func(string)) (func(), error) {
	unlock, err := fileio.Lock(out+".lock", func() {
		note(fmt.Sprintf("%s: another mcugen tune is writing these records; waiting for it", out))
	})
	if err != nil {
		return nil, fmt.Errorf("tuning records %w", err)
	}
	return unlock, nil
}
