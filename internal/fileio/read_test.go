package fileio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Inputs must be regular files of bounded size: /dev/zero was read until
// memory ran out and a FIFO blocked forever (review findings). A link to a
// regular file is followed.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.onnx")
	os.Symlink("m.onnx", link)
	for _, p := range []string{file, link} {
		if b, err := ReadRegular(p, 5); err != nil || string(b) != "12345" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if _, err := ReadRegular(file, 4); err == nil || !strings.Contains(err.Error(), "5 bytes is larger than the 4-byte limit") {
		t.Errorf("over the limit: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.onnx")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := ReadRegular(fifo, 1<<20); err == nil || !strings.Contains(err.Error(), "is a named pipe") {
			t.Errorf("fifo: %v", err)
		}
	}
	zero := filepath.Join(dir, "zero.onnx")
	if err := os.Symlink("/dev/zero", zero); err == nil {
		if _, err := ReadRegular(zero, 1<<20); err == nil || !strings.Contains(err.Error(), "is a device") {
			t.Errorf("/dev/zero: %v", err)
		}
		if err := CheckRegular(zero); err == nil {
			t.Errorf("CheckRegular(/dev/zero) passed")
		}
	}
	if _, err := ReadRegular(dir, 1<<20); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "none"), 1); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
