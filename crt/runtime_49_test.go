package crt

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// A part run without a debugger (QEMU without semihosting behaves as one):
// a semihosting call's BKPT escalated to a HardFault, and the report's own
// exit call locked the core up (runtime review: the netduinoplus2 and
// micro:bit firmware on their chips). The fault handler now skips a
// BKPT 0xAB, so the program goes on; with semihosting the calls work as
// before.
func TestSemihostingWithoutDebugger49(t *testing.T) {
	qemu := needTool(t, "qemu-system-arm", "qemu-system-arm")
	const prog = `#include "crt.h"
#include "crt_semihost.h"
int main(void)
{
    crt_init();
    crt_puts("before\n");
    crt_sh_write0("semihosted\n");
    crt_puts("after\n");
    return 0;
}
`
	for _, name := range []string{"netduinoplus2", "microbit"} {
		t.Run(name, func(t *testing.T) {
			b := getBoard(t, name)
			elf := buildBareMetal(t, b, "main.c", prog)
			args := []string{"-M", b.QEMU.Machine}
			for i := 0; i < len(b.QEMU.Args); i++ {
				if b.QEMU.Args[i] == "-semihosting-config" {
					i++
					continue
				}
				args = append(args, b.QEMU.Args[i])
			}
			if !slices.Contains(args, "-serial") {
				args = append(args, "-serial", "stdio")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			out, _ := exec.CommandContext(ctx, qemu, append(args, "-display", "none", "-monitor", "none", "-kernel", elf)...).CombinedOutput()
			o := string(out)
			if !strings.Contains(o, "before") || !strings.Contains(o, "after") || strings.Contains(o, "@mcugen fault") || strings.Contains(o, "Lockup") {
				t.Errorf("without a debugger:\n%s", o)
			}
			out, err := runBareMetalOn(t, qemu, b.QEMU.Machine, b.QEMU.Args, elf)
			if o := string(out); err != nil || !strings.Contains(o, "before") || !strings.Contains(o, "semihosted") || !strings.Contains(o, "after") {
				t.Errorf("with semihosting: %v\n%s", err, o)
			}
		})
	}
}

func runBareMetalOn(t *testing.T, qemu, machine string, args []string, elf string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, qemu, append([]string{"-M", machine}, append(args, "-kernel", elf)...)...).CombinedOutput()
}

// ARMv6-M code run on QEMU's Cortex-M3 (the rp2040 stand-in) did an
// unaligned word load without a fault, where the M0+ faults: the start-up
// code now sets CCR.UNALIGN_TRP there.
func TestUnalignedTrapOnV6MStandIn49(t *testing.T) {
	const prog = `#include <stdint.h>
#include "crt.h"
static uint32_t buf[2] = {1, 2};
static volatile uintptr_t one = 1; /* an offset gcc cannot see: a real LDR, not four LDRBs */
int main(void)
{
    volatile uint32_t v;
    crt_init();
    crt_puts("before\n");
    v = *(volatile uint32_t *)((uintptr_t)buf + one);
    (void)v;
    crt_puts("after\n");
    return 0;
}
`
	b := getBoard(t, "mps2-an385").Running(getBoard(t, "rp2040"))
	out, _ := runBareMetal(t, b, "main.c", prog)
	if o := string(out); !strings.Contains(o, "before") || strings.Contains(o, "after") || !strings.Contains(o, "@mcugen fault HardFault") {
		t.Errorf("an unaligned load on the stand-in:\n%s", o)
	}
}
