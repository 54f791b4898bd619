package fileio

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadRegular reads the file at path, which must be a regular file (a
// symbolic link to one is followed) of at most limit bytes. A device
// (/dev/zero) was read until memory ran out, and a FIFO blocked the command
// forever (review findings); both are refused, as is a larger file, with
// the reason. The read itself stops past limit, for a file that grows.
func ReadRegular(path string, limit int64) ([]byte, error) {
	// Opened without blocking (a FIFO's open waits for a writer) and
	// checked through the open file, so a path swapped for a FIFO between
	// a check and the open cannot block the read (review finding).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(st); err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%d bytes is larger than the %d-byte limit", st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("grew past the %d-byte limit while read", limit)
	}
	return b, nil
}

// CheckRegular refuses a path that is not a regular file (after following
// links): a directory, a device, a FIFO or a socket, named as such.
func CheckRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(st)
}

func regular(st os.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("is a directory, not a file")
	case m&os.ModeNamedPipe != 0:
		return fmt.Errorf("is a named pipe, not a regular file (mcugen reads its inputs whole, from files)")
	case m&os.ModeDevice != 0 || m&os.ModeCharDevice != 0:
		return fmt.Errorf("is a device, not a regular file (mcugen reads its inputs whole, from files)")
	case m&os.ModeSocket != 0:
		return fmt.Errorf("is a socket, not a regular file")
	}
	return fmt.Errorf("is not a regular file (mode %v)", m)
}
