/* mcugen runtime: number printing on top of crt_write (no printf needed). */
#include "crt.h"

void crt_puts(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    crt_write(s, n);
}

void crt_put_u64(uint64_t v)
{
    char buf[21];
    int i = 20;
    buf[i] = '\0';
    do {
        /* v % 10 and v / 10 through 32-bit halves would be faster; clarity wins here. */
        buf[--i] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    crt_puts(&buf[i]);
}

void crt_put_i32(int32_t v)
{
    if (v < 0) {
        crt_puts("-");
        crt_put_u64((uint64_t)(-(int64_t)v));
    } else {
        crt_put_u64((uint64_t)v);
    }
}

static const char crt_hex_digits[] = "0123456789abcdef";

void crt_put_hex32(uint32_t v)
{
    char buf[11];
    int i;
    buf[0] = '0';
    buf[1] = 'x';
    for (i = 0; i < 8; i++) {
        buf[2 + i] = crt_hex_digits[(v >> (28 - 4 * i)) & 0xfu];
    }
    buf[10] = '\0';
    crt_puts(buf);
}

void crt_put_hex_bytes(const uint8_t *p, size_t n)
{
    char buf[64];
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        buf[k++] = crt_hex_digits[p[i] >> 4];
        buf[k++] = crt_hex_digits[p[i] & 0xfu];
        if (k == sizeof buf) {
            crt_write(buf, k);
            k = 0;
        }
    }
    if (k != 0) {
        crt_write(buf, k);
    }
}

uint64_t crt_counter_instructions(uint32_t ticks, int *ok)
{
#if (defined(CRT_COUNTER_FPGAIO) || defined(CRT_COUNTER_NRF_TIMER) || defined(CRT_COUNTER_STM32_TIM)) && CRT_ICOUNT_SHIFT > 0
    const uint64_t den = (uint64_t)CRT_COUNTER_HZ << CRT_ICOUNT_SHIFT;
    *ok = 1;
    return ((uint64_t)ticks * 1000000000u + den / 2u) / den;
#else
    (void)ticks;
    *ok = 0;
    return 0;
#endif
}
