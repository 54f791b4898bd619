/* A hand-written stand-in for generated model code compiled with --io in-arena and
 * --arena external (DESIGN §4): the input lives at arena + 0, the output at arena + 16;
 * output[i] = input[i] ^ 0x5a. */
#ifndef FAKEIO_H
#define FAKEIO_H

#include <stdint.h>

#define FAKEIO_ARENA_SIZE 32
#define FAKEIO_INPUT_SIZE 16
#define FAKEIO_OUTPUT_SIZE 16

void *fakeio_input_ptr(void *arena);
void *fakeio_output_ptr(void *arena);
int32_t fakeio_run(void *arena);

#endif
