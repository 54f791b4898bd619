//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process with this id is running (one that
// belongs to another user counts).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// hardLinks is the number of names a file has (1 where the system does not
// say).
func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
