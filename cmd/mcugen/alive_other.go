//go:build !unix

package main

import "os"

// processAlive reports whether a process with this id is running: where
// os.FindProcess cannot tell, it says yes, so a directory that may be
// another compile's is kept.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// hardLinks is the number of names a file has: 1 here, where the system
// does not say.
func hardLinks(os.FileInfo) uint64 { return 1 }
