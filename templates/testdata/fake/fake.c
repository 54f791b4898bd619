/* The stand-in model (see fake.h). The constant table shows the AVR pattern the
 * generated code needs: on AVR, const data stays in flash only with PROGMEM and must be
 * read with pgm_read_*; elsewhere the macros are plain loads. */
#include <stdint.h>
#include <string.h>

#include "fake.h"

#if defined(__AVR__)
#include <avr/pgmspace.h>
#define FAKE_CONST PROGMEM
#define FAKE_LOAD_S8(p) ((int8_t)pgm_read_byte(p))
#else
#define FAKE_CONST
#define FAKE_LOAD_S8(p) (*(p))
#endif

static const int8_t fake_w[8] FAKE_CONST = {-10, -7, -4, -1, 2, 5, 8, 11};

static int8_t fake_arena[FAKE_ARENA_SIZE];

int32_t fake_run(struct fake_inputs *in, struct fake_outputs *out)
{
    const int8_t *x = (const int8_t *)in->x;
    int8_t *y = (int8_t *)out->y;
    int32_t sum = 0;
    int i;
    for (i = 0; i < 8; i++) {
        int32_t v = (int32_t)x[i] + (int32_t)FAKE_LOAD_S8(&fake_w[i]);
        fake_arena[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
        sum += (int32_t)x[i] * 1000L;
    }
    memcpy(y, fake_arena, FAKE_Y_SIZE);
    memcpy(out->z, &sum, sizeof sum);
    return 0;
}
