/* A hand-written stand-in for generated model code (DESIGN §4) with a known instruction
 * mix, for the runner's cycle-estimate tests. input is 16 bytes: a little-endian uint32
 * n, then three words of data; output (4 bytes) is the SMLAD accumulator. mix_run runs
 * n iterations of a 9-instruction loop (see mix.c). */
#ifndef MIX_H
#define MIX_H

#include <stdint.h>

#define MIX_INPUT_SIZE 16
#define MIX_OUTPUT_SIZE 4

struct mix_inputs {
    void *input;
};
struct mix_outputs {
    void *output;
};

int32_t mix_run(struct mix_inputs *in, struct mix_outputs *out);

#endif
