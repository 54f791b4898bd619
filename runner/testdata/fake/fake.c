/* See fake.h. With an external arena, input[1] == 0xEE makes it write one byte past the
 * arena (to test the harness's guards); input[1] == 0xEF makes it return 7;
 * input[1] == 0xED makes it hang; on hosted targets input[1] == 0xEC makes it write to
 * address 16 (a segmentation fault); input[1] == 0xEB makes it take 2048 more bytes of
 * stack (a local array it writes whole); input[1] == 0xEA makes it recurse 128 calls deep
 * in small frames (at least 16 bytes each: 2048 bytes or more). */
#include <string.h>

#include "fake.h"

/* "Weights": read-only, in the board's weights region. */
__attribute__((section(".mcugen.weights"), aligned(16))) static const uint8_t fake_weights[FAKE_OUTPUT_SIZE] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

#if !defined(FAKE_EXTERNAL_ARENA)
static uint8_t fake_arena[FAKE_ARENA_SIZE] __attribute__((aligned(16)));
#endif

#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
static volatile uintptr_t fake_bad_address = 16u;
#endif

/* The spin's iterations per unit of input[0] (-DFAKE_SPIN=N: long runs past the counter's
 * wrap). */
#if !defined(FAKE_SPIN)
#define FAKE_SPIN 64u
#endif

/* Exactly 2 instructions per iteration on Arm and AArch64 (subs + bne). */
static void fake_spin(uint32_t n)
{
#if defined(__arm__)
    __asm__ volatile("1:\n\tsubs %0, %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
#elif defined(__aarch64__)
    __asm__ volatile("1:\n\tsubs %w0, %w0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
    volatile uint32_t k = n;
    while (k != 0u) {
        k--;
    }
#endif
}

/* 2048 bytes of stack, every word written. */
static __attribute__((noinline)) uint32_t fake_deep(uint32_t seed)
{
    volatile uint32_t buf[512];
    uint32_t i, sum = 0;
    for (i = 0; i < 512u; i++) {
        buf[i] = seed + i;
    }
    for (i = 0; i < 512u; i++) {
        sum += buf[i];
    }
    return sum;
}

/* Recursion in small frames: each call pushes its registers and a word it writes. */
static __attribute__((noinline)) uint32_t fake_recurse(uint32_t n)
{
    volatile uint32_t here = n;
    if (n == 0u) {
        return here;
    }
    return fake_recurse(n - 1u) + here;
}

#if defined(FAKE_EXTERNAL_ARENA)
int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out, void *arena_ptr)
{
    uint8_t *arena = (uint8_t *)arena_ptr;
#else
int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out)
{
    uint8_t *arena = fake_arena;
#endif
    const uint8_t *x = (const uint8_t *)in->input;
    uint8_t *y = (uint8_t *)out->output;
    const uint8_t *w = fake_weights;
    int i;
    /* Hide where w points so that the compiler reads the weights from memory. */
    __asm__("" : "+r"(w));
    memcpy(arena, x, FAKE_INPUT_SIZE);
    for (i = 0; i < FAKE_OUTPUT_SIZE; i++) {
        arena[FAKE_INPUT_SIZE + i] = (uint8_t)(arena[i] + w[i]);
    }
#if defined(FAKE_EXTERNAL_ARENA)
    if (x[1] == 0xEEu) {
        arena[FAKE_ARENA_SIZE] = 0x42u;
    }
#endif
    memcpy(y, arena + FAKE_INPUT_SIZE, FAKE_OUTPUT_SIZE);
    if (x[1] == 0xEAu && fake_recurse(128u) == 0xFFFFFFFFu) {
        y[0] ^= 1u; /* never: keeps the call */
    }
    if (x[1] == 0xEBu && fake_deep(x[0]) == 0xFFFFFFFFu) {
        y[0] ^= 1u; /* never: keeps the call */
    }
    fake_spin(1u + FAKE_SPIN * x[0]);
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
    if (x[1] == 0xECu) {
        *(volatile uint8_t *)fake_bad_address = 1u;
    }
#endif
    while (x[1] == 0xEDu) {
        /* hang on purpose: the runner must time out */
        __asm__ volatile("" ::: "memory");
    }
    return x[1] == 0xEFu ? 7 : 0;
}
