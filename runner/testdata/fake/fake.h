/* A hand-written stand-in for generated model code (DESIGN §4), used by the runner's
 * tests: output[i] = input[i] + (i + 1), computed through the arena, followed by a
 * counted busy loop of 1 + 64 * input[0] iterations of two instructions each. */
#ifndef FAKE_H
#define FAKE_H

#include <stdint.h>

#define FAKE_ARENA_SIZE 64
#define FAKE_INPUT_SIZE 16
#define FAKE_OUTPUT_SIZE 16

struct fake_inputs {
    void *input;
};
struct fake_outputs {
    void *output;
};

#if defined(FAKE_EXTERNAL_ARENA)
int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out, void *arena);
#else
int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out);
#endif

#endif
