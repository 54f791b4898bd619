package runner

import "syscall"

// dieWithParent asks the kernel to kill the program when mcugen dies, even
// by SIGKILL (the OOM killer, a CI job's hard timeout), which no handler
// sees: QEMU, in a process group of its own, would otherwise run on as an
// orphan (user-journey finding: one kept a core busy for minutes). The
// signal follows the thread that started the program, so runCmd keeps its
// goroutine on that thread until the program is reaped.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
