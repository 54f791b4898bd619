//go:build !unix

package fileio

// Lock does nothing where flock is missing: concurrent runs are not
// serialized there.
func Lock(string, func()) (func(), error) { return func() {}, nil }

// LockDir does nothing where flock is missing.
func LockDir(string, func()) (func(), error) { return func() {}, nil }

// RemoveLocks does nothing where Lock makes no files.
func RemoveLocks() {}
