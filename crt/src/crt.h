/* mcugen runtime: the interface every platform layer implements.
 * mcugen_board.h is generated for the board and says which UART, counter and FPU the
 * firmware has (CRT_* macros). */
#ifndef MCUGEN_CRT_H
#define MCUGEN_CRT_H

#include <stddef.h>
#include <stdint.h>

#include "mcugen_board.h"

/* C linkage from C++ too (a C++ file calling crt_puts did not link: microTVM journey). */
#ifdef __cplusplus
extern "C" {
#endif

/* Set up the output channel and the counter. */
void crt_init(void);

/* Output: a UART when the board has one, else semihosting, else stdout (hosted). */
void crt_write(const char *s, size_t n);
void crt_puts(const char *s);
void crt_put_u64(uint64_t v);
void crt_put_i32(int32_t v);
void crt_put_hex32(uint32_t v);
void crt_put_hex_bytes(const uint8_t *p, size_t n);

/* Stop the program with an exit code (semihosting SYS_EXIT_EXTENDED on bare metal). */
void crt_exit(int code)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* The counter: crt_counter_read() returns raw ticks of the board's free-running counter
 * (CRT_COUNTER_FPGAIO, CRT_COUNTER_NRF_TIMER, CRT_COUNTER_STM32_TIM) or core cycles
 * (CRT_COUNTER_DWT).
 * crt_counter_instructions() turns a tick difference into the instructions QEMU executed
 * under -icount shift=CRT_ICOUNT_SHIFT: round(ticks * 1e9 / (hz * 2^shift)); it returns
 * 0 and sets *ok = 0 when that is not known. */
uint32_t crt_counter_read(void);
uint64_t crt_counter_instructions(uint64_t ticks, int *ok);

/* The counter's 32 bits wrap: every 1,342,177,280 instructions at 25 MHz under -icount
 * shift=7. crt_coarse_read() reads a slow timebase of the same time whose 32 bits do not
 * wrap in any run (CRT_COARSE_TICKS counter ticks each: the FPGAIO's CLK100HZ, a prescaled
 * second STM32 timer), or 0 where the board has none; crt_counter_ticks64() counts the
 * counter's wraps with it: fine is the counter's difference, coarse the timebase's over a
 * window that contains the counter's. */
uint32_t crt_coarse_read(void);
uint64_t crt_counter_ticks64(uint32_t fine, uint32_t coarse);

/* The stack's high-water mark. crt_stack_paint() fills the free stack (from the bottom
 * the linker script gives it, _sstack, up to its caller's stack pointer) with a pattern
 * and returns that stack pointer; crt_stack_used(top, &ok) is then how many bytes below
 * top have been written since: what the calls made in between took. It returns 0 and sets
 * *ok = 0 where the platform cannot tell (hosted builds), and sets *ok = -1 when a word
 * within 256 B of the stack's bottom was written: the stack overflowed, or came too close
 * to its bottom to tell (a local array need not be written whole) and to leave room for an
 * interrupt. No interrupts may write to the stack in between. */
/* The guard band at the stack's bottom. A run whose lowest written word lies this close to
 * the bottom counts as an overflow: the paint sees only the words a run writes, and a local
 * array need not be written whole, so a frame hanging over the bottom can leave the bottom
 * word painted; and this is less room than an interrupt's exception frame and handler need
 * anyway. On v8-M Main cores the stack limit register (MSPLIM) sits at its top, so that the
 * fault handler has the band to report from. */
#define CRT_STACK_GUARD 256u
uintptr_t crt_stack_paint(void);
uint32_t crt_stack_used(uintptr_t top, int *ok);

#ifdef __cplusplus
}
#endif

#endif
