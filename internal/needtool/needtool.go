// Package needtool lets a test require a program from a Debian package: the
// test skips without it, naming the package, and fails instead in CI
// (CI set), where a missing toolchain must not pass unnoticed.
package needtool

import (
	"os"
	"os/exec"
	"testing"
)

// Need skips t (fails it when CI is set) unless tool is on PATH; pkg is the
// Debian package that provides it.
func Need(t testing.TB, tool, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %s not installed (Debian package %s)", tool, pkg)
		}
		t.Skipf("%s not installed (Debian package %s)", tool, pkg)
	}
}
