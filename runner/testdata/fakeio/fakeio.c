/* See fakeio.h. */
#include "fakeio.h"

void *fakeio_input_ptr(void *arena) { return (uint8_t *)arena; }

void *fakeio_output_ptr(void *arena) { return (uint8_t *)arena + FAKEIO_INPUT_SIZE; }

int32_t fakeio_run(void *arena)
{
    const uint8_t *x = (const uint8_t *)fakeio_input_ptr(arena);
    uint8_t *y = (uint8_t *)fakeio_output_ptr(arena);
    int i;
    for (i = 0; i < FAKEIO_OUTPUT_SIZE; i++) {
        y[i] = (uint8_t)(x[i] ^ 0x5au);
    }
    return 0;
}
