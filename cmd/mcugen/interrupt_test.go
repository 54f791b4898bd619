package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processesMentioning returns the live processes whose command line
// mentions dir (a firmware's or a build's path lies under it): pid -> the
// program's base name.
func processesMentioning(dir string) map[int]string {
	procs := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), dir) || !alive(pid) {
			continue
		}
		procs[pid] = filepath.Base(strings.Split(string(b), "\x00")[0])
	}
	return procs
}

// alive reports whether pid is a process that has not exited (a zombie,
// dead but not yet reaped, counts as exited).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestRunTestInterrupted interrupts `mcugen run` and `mcugen test` while QEMU
// runs their firmware: with SIGINT or SIGTERM to mcugen alone (kill -INT
// PID; `timeout -s TERM`), and with SIGINT to its process group (a
// terminal's Ctrl-C); and once while the cross compiler builds the firmware.
// mcugen must exit 128 + the signal's number, leave nothing in TMPDIR (no
// mcugen-run-* directory, no compiler temporaries), and leave no QEMU or
// compiler running (they run in process groups of their own, which neither
// signal reaches). The QEMU is the real one, started with -S so that it
// waits for ever.
func TestRunTestInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds firmware: skipped with -short")
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc: cannot look for QEMU processes")
	}
	needQEMU(t)
	qemu, _ := exec.LookPath("qemu-system-arm")
	bin := buildMcugen(t)
	wrap := t.TempDir()
	script := "#!/bin/sh\nexec " + qemu + " \"$@\" -S\n"
	if err := os.WriteFile(filepath.Join(wrap, "qemu-system-arm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, c := range []struct {
		cmd    string
		sig    syscall.Signal
		group  bool
		during []string // the programs that must be running when the signal goes
	}{
		{"run", syscall.SIGINT, false, []string{"qemu-system-arm"}},
		{"test", syscall.SIGTERM, false, []string{"qemu-system-arm"}},
		{"test", syscall.SIGINT, true, []string{"qemu-system-arm"}},
		{"run", syscall.SIGINT, false, []string{"cc1", "as", "collect2", "ld"}},
	} {
		name := c.cmd + "/" + c.sig.String()
		if c.group {
			name += " to the process group"
		}
		name += " during " + c.during[0]
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(bin, c.cmd, model, "--board", "mps2-an386", "--random", "1")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PATH="+wrap+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			defer func() {
				select {
				case <-exited:
				default:
					cmd.Process.Kill()
					<-exited
				}
			}()
			defer func() {
				for pid := range processesMentioning(tmp) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
				select {
				case <-exited:
					t.Fatalf("mcugen %s exited before %s ran: %s", c.cmd, c.during[0], stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s did not run", c.during[0])
				}
				found := false
				for _, prog := range processesMentioning(tmp) {
					found = found || slices.Contains(c.during, prog)
				}
				if found {
					break
				}
			}
			if c.group {
				syscall.Kill(-cmd.Process.Pid, c.sig)
			} else {
				cmd.Process.Signal(c.sig)
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("mcugen %s still runs 30 s after %v", c.cmd, c.sig)
			}
			if got, want := cmd.ProcessState.ExitCode(), 128+int(c.sig); got != want {
				t.Errorf("exit code %d, want %d (stderr %q)", got, want, stderr.String())
			}
			if !strings.HasSuffix(stderr.String(), "mcugen: interrupted ("+c.sig.String()+")\n") {
				t.Errorf("stderr %q does not end with the interruption", stderr.String())
			}
			// Interrupt waits for its programs to be reaped before mcugen
			// exits; a second's grace for the kernel to finish the exits.
			for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
				left := processesMentioning(tmp)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("still running after mcugen exited: %v", left)
					break
				}
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("left behind in TMPDIR: %v", names)
			}
		})
	}
}
