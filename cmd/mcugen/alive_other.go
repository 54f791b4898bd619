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
