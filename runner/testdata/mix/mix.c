/* See mix.h. mix_run is written in Thumb-2 assembly so that every instruction it executes
 * is known. With n = input word 0 it executes:
 *   once:  push {r4-r7, lr}; ldr; ldr; ldr; movs; cbz           (cbz taken only when n == 0)
 *   n times, the loop:
 *     ldr   r5, [r2, #4]       load (first in its block)
 *     ldr   r6, [r2, #8]       load right after a load, address independent: pipelined
 *     smlad r0, r5, r6, r0     multiply-accumulate
 *     adds  r7, r2, #0         data processing writing r7
 *     ldr   r5, [r7, #4]       load whose address needs r7: stalls
 *     udiv  r5, r5, r6         divide
 *     vmla.f32 s0, s1, s2      floating-point multiply-accumulate
 *     subs  r4, r4, #1
 *     bne   1b                 taken n - 1 times
 *   once:  str; movs; pop {r4-r7, pc}                             (pop returns: taken)
 * The loop starts at page offset 0x3f2, so that udiv straddles a 1 KiB page boundary. */
#include "mix.h"

#if defined(__thumb2__)
__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    "    .text\n"
    /* QEMU's pages are 1 KiB here: the stalled ldr takes the last halfword but one of a
     * page and udiv crosses into the next, so QEMU ends a block after the ldr (having
     * peeked at udiv's first halfword): the plugin must still see where that block ends. */
    "    .balign 1024\n"
    "    .space 0x3e6\n"
    "    .global mix_run\n"
    "    .type mix_run, %function\n"
    "    .thumb_func\n"
    "mix_run:\n"
    "    push {r4, r5, r6, r7, lr}\n"
    "    ldr r2, [r0]\n"
    "    ldr r3, [r1]\n"
    "    ldr r4, [r2]\n"
    "    movs r0, #0\n"
    "    cbz r4, 2f\n"
    "1:  ldr r5, [r2, #4]\n"
    "    ldr r6, [r2, #8]\n"
    "    smlad r0, r5, r6, r0\n"
    "    adds r7, r2, #0\n"
    "    ldr r5, [r7, #4]\n"
    "    udiv r5, r5, r6\n"
    "    vmla.f32 s0, s1, s2\n"
    "    subs r4, r4, #1\n"
    "    bne 1b\n"
    "2:  str r0, [r3]\n"
    "    movs r0, #0\n"
    "    pop {r4, r5, r6, r7, pc}\n"
    "    .size mix_run, . - mix_run\n");
#else
#error "mix.c needs a Thumb-2 core with an FPU (mps2-an386)"
#endif
