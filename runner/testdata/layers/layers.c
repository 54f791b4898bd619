/* See layers.h. */
#include <string.h>

#include "layers.h"

#ifndef LAYERS_LAYER_HOOK
#define LAYERS_LAYER_HOOK(i) ((void)0)
#endif

static __attribute__((noinline)) uint32_t layer(uint32_t n, uint32_t acc)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        acc = acc * 33u + (i ^ (acc >> 7));
    }
    return acc;
}

int32_t layers_run(struct layers_inputs *in, struct layers_outputs *out)
{
    uint32_t w[4];
    uint32_t acc;
    if (in == NULL || out == NULL || in->input == NULL || out->output == NULL) {
        return -1;
    }
    memcpy(w, in->input, sizeof w);
    acc = w[3];
    LAYERS_LAYER_HOOK(0);
    acc = layer(w[0], acc);
    LAYERS_LAYER_HOOK(1);
    acc = layer(w[1], acc);
    LAYERS_LAYER_HOOK(2);
    acc = layer(w[2], acc);
    LAYERS_LAYER_HOOK(3);
    memcpy(out->output, &acc, sizeof acc);
    return 0;
}
