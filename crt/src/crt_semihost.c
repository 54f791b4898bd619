/* mcugen runtime: Arm semihosting calls. */
#include "crt_semihost.h"

#define SYS_OPEN 0x01u
#define SYS_CLOSE 0x02u
#define SYS_WRITE0 0x04u
#define SYS_WRITE 0x05u
#define SYS_READ 0x06u
#define SYS_EXIT 0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_Stopped_ApplicationExit 0x20026u

int32_t crt_sh_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}

void crt_sh_write0(const char *s) { (void)crt_sh_call(SYS_WRITE0, s); }

int32_t crt_sh_open(const char *path, int mode)
{
    uint32_t n = 0;
    uint32_t block[3];
    while (path[n] != '\0') {
        n++;
    }
    block[0] = (uint32_t)(uintptr_t)path;
    block[1] = (uint32_t)mode;
    block[2] = n;
    return crt_sh_call(SYS_OPEN, block);
}

int32_t crt_sh_close(int32_t fd)
{
    uint32_t block[1];
    block[0] = (uint32_t)fd;
    return crt_sh_call(SYS_CLOSE, block);
}

int32_t crt_sh_write(int32_t fd, const void *buf, size_t n)
{
    uint32_t block[3];
    block[0] = (uint32_t)fd;
    block[1] = (uint32_t)(uintptr_t)buf;
    block[2] = (uint32_t)n;
    return crt_sh_call(SYS_WRITE, block);
}

int32_t crt_sh_read(int32_t fd, void *buf, size_t n)
{
    uint32_t block[3];
    block[0] = (uint32_t)fd;
    block[1] = (uint32_t)(uintptr_t)buf;
    block[2] = (uint32_t)n;
    return crt_sh_call(SYS_READ, block);
}

void crt_sh_exit(int code)
{
    uint32_t block[2];
    block[0] = ADP_Stopped_ApplicationExit;
    block[1] = (uint32_t)code;
    (void)crt_sh_call(SYS_EXIT_EXTENDED, block);
    /* A debugger without the extended call: plain SYS_EXIT can only say "stopped". */
    (void)crt_sh_call(SYS_EXIT, (const void *)(uintptr_t)ADP_Stopped_ApplicationExit);
}
