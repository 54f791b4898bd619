/* Test-only: the few Zephyr 3.7 declarations the generated src/main.c uses, so that the
 * template tests can compile it with arm-none-eabi-gcc without a Zephyr tree. The tests
 * make zephyr/kernel.h, zephyr/sys/printk.h and zephyr/timing/timing.h include this file.
 * Signatures follow Zephyr 3.7's include/zephyr/timing/timing.h, timing/types.h and
 * sys/printk.h. */
#ifndef TEST_ZEPHYR_API_H
#define TEST_ZEPHYR_API_H

#include <stdint.h>

/* include/zephyr/timing/types.h */
typedef uint64_t timing_t;

/* include/zephyr/timing/timing.h (static inline wrappers there) */
void timing_init(void);
void timing_start(void);
void timing_stop(void);
timing_t timing_counter_get(void);
uint64_t timing_cycles_get(volatile timing_t *const start, volatile timing_t *const end);
uint64_t timing_freq_get(void);
uint64_t timing_cycles_to_ns(uint64_t cycles);

/* include/zephyr/sys/printk.h */
void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
