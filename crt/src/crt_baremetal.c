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
/* nRF51/nRF52 UART: PSEL.TXD, BAUDRATE, ENABLE = 4, TASKS_STARTTX, TXD, EVENTS_TXDRDY. */
static void crt_uart_init(void)
{
    uint32_t spin = 0;
    /* The crystal oscillator (HFXO): the internal one is not accurate enough for a UART.
       CLOCK TASKS_HFCLKSTART, then EVENTS_HFCLKSTARTED (a bounded wait). */
    CRT_REG(0x40000100u) = 0u;
    CRT_REG(0x40000000u) = 1u;
    while (CRT_REG(0x40000100u) == 0u && spin < 100000u) {
        spin++;
    }
#if defined(CRT_UART_NRF_TXPIN)
    /* The TX pin an output, idle high, before the UART takes it: GPIO port
       (0x50000000 + 0x300 per port) OUTSET and DIRSET. */
    CRT_REG(0x50000000u + 0x300u * (CRT_UART_NRF_TXPIN >> 5) + 0x508u) = 1u << (CRT_UART_NRF_TXPIN & 31u);
    CRT_REG(0x50000000u + 0x300u * (CRT_UART_NRF_TXPIN >> 5) + 0x518u) = 1u << (CRT_UART_NRF_TXPIN & 31u);
    CRT_REG(CRT_UART_BASE + 0x50cu) = CRT_UART_NRF_TXPIN;
#endif
#if defined(CRT_UART_NRF_BAUD)
    CRT_REG(CRT_UART_BASE + 0x524u) = CRT_UART_NRF_BAUD;
#endif
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
#elif defined(CRT_UART_STM32)
/* STM32 USART/LPUART with ISR/TDR: CR1 (UE bit 0, TE bit 3), BRR, ISR (TXE bit 7), TDR. */
static void crt_uart_init(void)
{
    CRT_REG(CRT_UART_BASE + 0x00u) = 0u;
    CRT_REG(CRT_UART_BASE + 0x0cu) = CRT_UART_BRR;
    CRT_REG(CRT_UART_BASE + 0x00u) = (1u << 3) | 1u;
}
static void crt_uart_putc(char c)
{
    uint32_t spin = 0;
    while ((CRT_REG(CRT_UART_BASE + 0x1cu) & (1u << 7)) == 0u && spin < 1000000u) {
        spin++;
    }
    CRT_REG(CRT_UART_BASE + 0x28u) = (uint8_t)c;
}
/* Waits until the last character has left the shift register (ISR.TC, bit 6). */
static void crt_uart_flush(void)
{
    uint32_t spin = 0;
    while ((CRT_REG(CRT_UART_BASE + 0x1cu) & (1u << 6)) == 0u && spin < 1000000u) {
        spin++;
    }
}
#elif defined(CRT_UART_STM32F4)
/* STM32 F1/F2/F4 USART: SR (TXE bit 7), DR, BRR, CR1 (UE bit 13, TE bit 3). */
static void crt_uart_init(void)
{
    CRT_REG(CRT_UART_BASE + 0x08u) = CRT_UART_BRR;
    CRT_REG(CRT_UART_BASE + 0x0cu) = (1u << 13) | (1u << 3);
}
static void crt_uart_putc(char c)
{
    uint32_t spin = 0;
    while ((CRT_REG(CRT_UART_BASE + 0x00u) & (1u << 7)) == 0u && spin < 1000000u) {
        spin++;
    }
    CRT_REG(CRT_UART_BASE + 0x04u) = (uint8_t)c;
}
/* Waits until the last character has left the shift register (SR.TC, bit 6). */
static void crt_uart_flush(void)
{
    uint32_t spin = 0;
    while ((CRT_REG(CRT_UART_BASE + 0x00u) & (1u << 6)) == 0u && spin < 1000000u) {
        spin++;
    }
}
#endif

#if defined(CRT_UART_CMSDK) || defined(CRT_UART_NRF) || defined(CRT_UART_STM32) || defined(CRT_UART_STM32F4)
#define CRT_HAS_UART 1
#endif

void crt_write(const char *s, size_t n)
{
#if defined(CRT_HAS_UART)
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
#if defined(CRT_UART_STM32) || defined(CRT_UART_STM32F4)
    crt_uart_flush();
#endif
#if defined(CRT_NO_EMULATOR) && defined(CRT_HAS_UART) && !defined(__ARM_ARCH_6M__)
    /* On the chip itself the exit is semihosting's only when a debugger is attached
     * (DHCSR.C_DEBUGEN): without one its BKPT would stop the core with a fault. */
    if ((CRT_REG(0xE000EDF0u) & 1u) == 0u) {
        for (;;) {
        }
    }
#endif
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
#elif defined(CRT_COUNTER_STM32_TIM)
/* A 32-bit STM32 general-purpose timer (TIM2, TIM5): PSC = 0, ARR = max, UG, CEN; CNT.
 * Its clock is enabled by the board's init registers. The coarse timebase, where there
 * is one (CRT_COARSE_ADDR: TIM5 beside TIM2), is the same timer prescaled by
 * CRT_COARSE_TICKS. */
static void crt_tim_start(uint32_t base, uint32_t psc)
{
    CRT_REG(base + 0x28u) = psc;
    CRT_REG(base + 0x2cu) = 0xffffffffu;
    CRT_REG(base + 0x14u) = 1u;
    CRT_REG(base + 0x00u) = 1u;
}
static void crt_counter_init(void)
{
    crt_tim_start(CRT_COUNTER_ADDR, 0u);
#if defined(CRT_COARSE_ADDR)
    crt_tim_start(CRT_COARSE_ADDR, CRT_COARSE_TICKS - 1u);
#endif
}
uint32_t crt_counter_read(void) { return CRT_REG(CRT_COUNTER_ADDR + 0x24u); }
#if defined(CRT_COARSE_ADDR)
uint32_t crt_coarse_read(void) { return CRT_REG(CRT_COARSE_ADDR + 0x24u); }
#endif
#elif defined(CRT_COUNTER_DWT)
/* DWT CYCCNT: DEMCR.TRCENA, then DWT_CTRL.CYCCNTENA. */
static void crt_counter_init(void)
{
    CRT_REG(0xE000EDFCu) |= 1u << 24;
#if defined(CRT_DWT_UNLOCK)
    CRT_REG(0xE0001FB0u) = 0xC5ACCE55u; /* DWT_LAR: the Cortex-M7's DWT is locked until then */
#endif
    CRT_REG(0xE0001004u) = 0u;
    CRT_REG(0xE0001000u) |= 1u;
}
uint32_t crt_counter_read(void) { return CRT_REG(0xE0001004u); }
#elif defined(CRT_COUNTER_FPGAIO)
static void crt_counter_init(void) {}
uint32_t crt_counter_read(void) { return CRT_REG(CRT_COUNTER_ADDR); }
#if defined(CRT_COARSE_ADDR)
/* CLK100HZ, the FPGAIO register before COUNTER: 100 Hz of the same (virtual) time. */
uint32_t crt_coarse_read(void) { return CRT_REG(CRT_COARSE_ADDR); }
#endif
#else
static void crt_counter_init(void) {}
uint32_t crt_counter_read(void) { return 0u; }
#endif
#if !defined(CRT_COARSE_ADDR)
uint32_t crt_coarse_read(void) { return 0u; }
#endif

/* The stack lies between _sstack and _estack (the linker script); it grows down. */
extern uint32_t _sstack[];
#define CRT_STACK_PATTERN 0xC5A3E1B7u

/* Paints the free stack, every word from _sstack up to the caller's stack pointer, and
   returns that stack pointer. Naked, it pushes nothing: SP is exactly the caller's, and
   the paint cannot reach a frame of its own. ARMv6-M instructions, for every core. */
__attribute__((naked, noinline)) uintptr_t crt_stack_paint(void)
{
    __asm__ volatile(
        "mov r0, sp\n\t"
        "ldr r1, 3f\n\t"
        "ldr r2, 4f\n"
        "1:\n\t"
        "cmp r1, r0\n\t"
        "bhs 2f\n\t"
        "str r2, [r1]\n\t"
        "adds r1, #4\n\t"
        "b 1b\n"
        "2:\n\t"
        "bx lr\n\t"
        ".balign 4\n"
        "3:\n\t"
        ".word _sstack\n"
        "4:\n\t"
        ".word 0xC5A3E1B7\n");
}

uint32_t crt_stack_used(uintptr_t top, int *ok)
{
    const uintptr_t bottom = (uintptr_t)_sstack;
    uintptr_t p = bottom;
    if (top == 0u || top <= bottom + CRT_STACK_GUARD) {
        *ok = 0; /* nothing (or too little to tell) was painted */
        return 0u;
    }
    while (p < top && *(const volatile uint32_t *)p == CRT_STACK_PATTERN) {
        p += 4u;
    }
    *ok = p < bottom + CRT_STACK_GUARD ? -1 : 1;
    return (uint32_t)(top - p);
}

#if defined(CRT_INIT_REGS)
/* The board's start-up registers (clock enables, pin multiplexing): addr, mask, value. */
static const uint32_t crt_init_regs[][3] = {CRT_INIT_REGS};
#endif

void crt_init(void)
{
#if defined(CRT_INIT_REGS)
    size_t i;
    for (i = 0; i < sizeof crt_init_regs / sizeof crt_init_regs[0]; i++) {
        CRT_REG(crt_init_regs[i][0]) = (CRT_REG(crt_init_regs[i][0]) & ~crt_init_regs[i][1]) | crt_init_regs[i][2];
        /* Read it back: the peripheral a clock enable starts answers only a few cycles
           later (STM32 errata), and the next entry may be that peripheral's register. */
        (void)CRT_REG(crt_init_regs[i][0]);
    }
#endif
#if defined(CRT_HAS_UART)
    crt_uart_init();
#endif
    crt_counter_init();
}
