/* A hand-written stand-in for emitc's output, following DESIGN §4, for the template
 * tests: y[i] = saturate_int8(x[i] + w[i]) with w[i] = 3*i - 10 (a constant table kept in
 * flash, read through a PROGMEM-aware macro on AVR), and z = the int32 sum of x. */
#ifndef FAKE_H
#define FAKE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_ARENA_SIZE 8
#define FAKE_X_SIZE 8
#define FAKE_Y_SIZE 8
#define FAKE_Z_SIZE 4

struct fake_inputs {
    void *x;
};

struct fake_outputs {
    void *y;
    void *z;
};

int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out);

#ifdef __cplusplus
}
#endif

#endif
