/* mcugen runtime: the platform layer of hosted builds (the host, and static AArch64 Linux
 * binaries under qemu-aarch64): stdout and exit(). Under qemu-aarch64 the instructions are
 * counted by mcugen's QEMU plugin (qemu_icount_plugin.c), which prints the running count
 * each time crt_icount_marker is entered; the host has no counter. */
#include <stdio.h>
#include <stdlib.h>

#include "crt.h"

void crt_init(void) {}

void crt_write(const char *s, size_t n)
{
    if (n != 0 && fwrite(s, 1, n, stdout) != n) {
        exit(2);
    }
}

void crt_exit(int code)
{
    fflush(stdout);
    exit(code);
}

#if defined(CRT_COUNTER_QEMU_PLUGIN)
void crt_icount_marker(void) __attribute__((noinline));
void crt_icount_marker(void) { __asm__ volatile("" ::: "memory"); }
uint32_t crt_counter_read(void)
{
    crt_icount_marker();
    return 0u;
}
#else
uint32_t crt_counter_read(void) { return 0u; }
#endif
uint32_t crt_coarse_read(void) { return 0u; }

/* The host's stack is the operating system's: not measured. */
uintptr_t crt_stack_paint(void) { return 0u; }
uint32_t crt_stack_used(uintptr_t top, int *ok)
{
    (void)top;
    *ok = 0;
    return 0u;
}
