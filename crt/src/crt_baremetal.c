/* mcugen runtime: output, exit and the counter on a bare-metal Cortex-M board. */
#include "crt.h"
#include "crt_semihost.h"

#define CRT_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

#if defined(CRT_UART_CMSDK)
/* Arm CMSDK APB UART: DATA, STATE (bit 0: TX full), CTRL (bit 0: TX enable), BAUDDIV. */
static void crt_uart_init(void)
{
    CRT_REG(CRT_UART_BASE + 0x10u) = 16u;
    CRT_REG(CRT_UART_BASE + 0x08u) = 1u;
}
static void crt_uart_putc(char c)
{
    while ((CRT_REG(CRT_UART_BASE + 0x04u) & 1u) != 0u) {
    }
    CRT_REG(CRT_UART_BASE) = (uint8_t)c;
}
#elif defined(CRT_UART_NRF)
/* nRF51/nRF52 UART: ENABLE = 4, TASKS_STARTTX, TXD, EVENTS_TXDRDY. */
static void crt_uart_init(void)
{
    CRT_REG(CRT_UART_BASE + 0x500u) = 4u;
    CRT_REG(CRT_UART_BASE + 0x008u) = 1u;
}
static void crt_uart_putc(char c)
{
    uint32_t spin = 0;
    CRT_REG(CRT_UART_BASE + 0x11cu) = 0u;
    CRT_REG(CRT_UART_BASE + 0x51cu) = (uint8_t)c;
    while (CRT_REG(CRT_UART_BASE + 0x11cu) == 0u && spin < 100000u) {
        spin++;
    }
}
#endif

void crt_write(const char *s, size_t n)
{
#if defined(CRT_UART_CMSDK) || defined(CRT_UART_NRF)
    size_t i;
    for (i = 0; i < n; i++) {
        crt_uart_putc(s[i]);
    }
#else
    /* Semihosting: SYS_WRITE to handle 1 would need an open; SYS_WRITE0 takes a string. */
    char buf[65];
    size_t i = 0;
    while (i < n) {
        size_t k = 0;
        while (k < sizeof buf - 1u && i < n) {
            buf[k++] = s[i++];
        }
        buf[k] = '\0';
        crt_sh_write0(buf);
    }
#endif
}

void crt_exit(int code)
{
    crt_sh_exit(code);
    for (;;) {
    }
}

#if defined(CRT_COUNTER_NRF_TIMER)
/* nRF TIMER: TASKS_START, TASKS_CAPTURE[0], MODE, BITMODE, PRESCALER, CC[0]. */
static void crt_counter_init(void)
{
    CRT_REG(CRT_COUNTER_ADDR + 0x504u) = 0u; /* timer mode */
    CRT_REG(CRT_COUNTER_ADDR + 0x508u) = 3u; /* 32 bit */
    CRT_REG(CRT_COUNTER_ADDR + 0x510u) = 0u; /* 16 MHz */
    CRT_REG(CRT_COUNTER_ADDR + 0x000u) = 1u; /* start */
}
uint32_t crt_counter_read(void)
{
    CRT_REG(CRT_COUNTER_ADDR + 0x040u) = 1u;
    return CRT_REG(CRT_COUNTER_ADDR + 0x540u);
}
#elif defined(CRT_COUNTER_DWT)
/* DWT CYCCNT: DEMCR.TRCENA, then DWT_CTRL.CYCCNTENA. */
static void crt_counter_init(void)
{
    CRT_REG(0xE000EDFCu) |= 1u << 24;
    CRT_REG(0xE0001004u) = 0u;
    CRT_REG(0xE0001000u) |= 1u;
}
uint32_t crt_counter_read(void) { return CRT_REG(0xE0001004u); }
#elif defined(CRT_COUNTER_FPGAIO)
static void crt_counter_init(void) {}
uint32_t crt_counter_read(void) { return CRT_REG(CRT_COUNTER_ADDR); }
#else
static void crt_counter_init(void) {}
uint32_t crt_counter_read(void) { return 0u; }
#endif

void crt_init(void)
{
#if defined(CRT_UART_CMSDK) || defined(CRT_UART_NRF)
    crt_uart_init();
#endif
    crt_counter_init();
}
