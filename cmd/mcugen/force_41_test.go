package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentForceCompiles: compiles of one model to one directory with
// --force, six at a time, all succeed and leave one whole output and no
// temporary directory (a second compile deleted the first's temporary
// directory as stale while it was being filled: "chmod
// .out.mcugen-tmp-…: no such file or directory").
func TestConcurrentForceCompiles(t *testing.T) {
	bin := buildMcugen(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		errs := make([]string, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := exec.Command(bin, "compile", "../../testdata/onnx/mlp.onnx", "--board", "mps2-an386", "-o", out, "--force").CombinedOutput()
				if err != nil {
					errs[i] = fmt.Sprintf("%v: %s", err, b)
				}
			}()
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Errorf("round %d, compile %d: %s", r, i, e)
			}
		}
	}
	for _, f := range []string{"mlp.c", "mlp.h"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the output lacks %s: %v", f, err)
		}
	}
	if left := tmpLeftovers(dir); len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

// TestRemoveStaleTempsKeepsLiveOnes: a temporary output directory whose
// name holds a running process's id stays; one of an ended process, or of
// the old unnumbered form, goes.
func TestRemoveStaleTempsKeepsLiveOnes(t *testing.T) {
	dir := t.TempDir()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Skipf("true: %v", err)
	}
	names := map[string]bool{ // name -> kept
		fmt.Sprintf(".out.mcugen-tmp-%d-123", os.Getppid()):      true,
		fmt.Sprintf(".out.mcugen-tmp-%d-123.old0", os.Getppid()): true,
		fmt.Sprintf(".out.mcugen-tmp-%d-456", ended.Process.Pid): false,
		".out.mcugen-tmp-789012":                                 false,
		fmt.Sprintf(".other.mcugen-tmp-%d-1", ended.Process.Pid): true, // another output's
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleTemps(dir, "out")
	for n, kept := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if kept != (err == nil) {
			t.Errorf("%s: kept %v, want %v", n, err == nil, kept)
		}
	}
}
