/* mcugen runtime: Arm semihosting (bkpt 0xab on M-profile). QEMU needs
 * -semihosting-config enable=on,target=native, or the first call stops the CPU. */
#ifndef MCUGEN_CRT_SEMIHOST_H
#define MCUGEN_CRT_SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

/* C linkage from C++ too (a C++ file calling crt_puts did not link: microTVM journey). */
#ifdef __cplusplus
extern "C" {
#endif

/* Open modes of SYS_OPEN (fopen's "r", "rb", ..., "wb", ... in this order). */
#define CRT_SH_MODE_RB 1
#define CRT_SH_MODE_WB 5
#define CRT_SH_MODE_AB 9

int32_t crt_sh_call(uint32_t op, const void *arg);
void crt_sh_write0(const char *s);
/* Returns a handle, or -1. */
int32_t crt_sh_open(const char *path, int mode);
int32_t crt_sh_close(int32_t fd);
/* Both return the number of bytes NOT transferred (0 = all of them), as the ABI does. */
int32_t crt_sh_write(int32_t fd, const void *buf, size_t n);
int32_t crt_sh_read(int32_t fd, void *buf, size_t n);
/* SYS_EXIT_EXTENDED with ADP_Stopped_ApplicationExit: QEMU exits with code & 0xff. */
void crt_sh_exit(int code);

#ifdef __cplusplus
}
#endif

#endif
