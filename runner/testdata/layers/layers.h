/* A hand-written stand-in for generated model code (DESIGN §4) with a per-layer hook, for the
 * runner's per-layer profile tests. input is three little-endian uint32 loop counts and a
 * seed; layers_run runs three "layers", layer i looping count i times, each calling
 * LAYERS_LAYER_HOOK like emitc's entry function; output (4 bytes) is a checksum. */
#ifndef LAYERS_H
#define LAYERS_H

#include <stdint.h>

#define LAYERS_INPUT_SIZE 16
#define LAYERS_OUTPUT_SIZE 4
#define LAYERS_NUM_LAYERS 3

struct layers_inputs {
    void *input;
};
struct layers_outputs {
    void *output;
};

int32_t layers_run(struct layers_inputs *in, struct layers_outputs *out);

#endif
