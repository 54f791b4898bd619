package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// peakRSSEnv, when set in this test binary's environment, turns the binary
// into the CLI: TestMain runs the command line in its arguments and writes
// the process's own peak resident set (VmHWM) to the file the variable names.
//
// TestMemoryBounded needs the peak of the CLI alone. A child's rusage
// ru_maxrss cannot give it: Go starts children with vfork, and on exec Linux
// folds the peak of the memory the child was sharing — the parent test
// process's — into the child's ru_maxrss, so every child reported the test
// binary's own 96 MiB in CI. VmHWM belongs to the fresh address space exec
// made, so it counts the CLI only.
const peakRSSEnv = "MCUGEN_TEST_PEAK_RSS_FILE"

func TestMain(m *testing.M) {
	if file := os.Getenv(peakRSSEnv); file != "" {
		code := run(os.Args[1:], os.Stdout, os.Stderr)
		kib, err := vmHWM()
		if err == nil {
			err = os.WriteFile(file, []byte(strconv.FormatInt(kib, 10)), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "peak RSS: %v\n", err)
			os.Exit(125)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// vmHWM reads this process's peak resident set size in KiB.
func vmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status has no VmHWM line")
}
