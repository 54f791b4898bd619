/* mcugen runtime: the platform layer of hosted builds (the host, and static AArch64 Linux
 * binaries under qemu-aarch64): stdout, exit(), and no counter. */
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

uint32_t crt_counter_read(void) { return 0u; }
