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

uint64_t crt_counter_instructions(uint64_t ticks, int *ok)
{
#if (defined(CRT_COUNTER_FPGAIO) || defined(CRT_COUNTER_NRF_TIMER) || defined(CRT_COUNTER_STM32_TIM)) && defined(CRT_TICKS_DEN)
    /* round(ticks * 1e9 / (hz * 2^shift)), the fraction reduced (CRT_TICKS_NUM /
     * CRT_TICKS_DEN) so that a 64-bit count of ticks does not overflow; the rounding is
     * the same. */
    *ok = 1;
    return (ticks * CRT_TICKS_NUM + CRT_TICKS_DEN / 2u) / CRT_TICKS_DEN;
#else
    (void)ticks;
    *ok = 0;
    return 0;
#endif
}

uint64_t crt_counter_ticks64(uint32_t fine, uint32_t coarse)
{
#if defined(CRT_COARSE_TICKS)
    /* The timebase puts the window within CRT_COARSE_TICKS counter ticks of its length,
     * far less than half a wrap: the nearest length with the counter's low 32 bits. */
    const uint64_t est = (uint64_t)coarse * CRT_COARSE_TICKS;
    uint64_t wraps = 0;
    if (est > (uint64_t)fine + 0x80000000u) {
        wraps = (est - fine + 0x80000000u) >> 32;
    }
    return (uint64_t)fine + (wraps << 32);
#else
    (void)coarse;
    return fine;
#endif
}
