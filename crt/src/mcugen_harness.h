/* mcugen test harness: the tables the generated mcugen_vectors.c defines and the glue
 * (mcugen_glue.c) that calls the model's <prefix>_run. */
#ifndef MCUGEN_HARNESS_H
#define MCUGEN_HARNESS_H

#include <stdint.h>

/* C linkage from C++ too (a C++ file calling crt_puts did not link: microTVM journey). */
#ifdef __cplusplus
extern "C" {
#endif

extern const uint32_t mcugen_num_vectors;
extern const uint32_t mcugen_num_inputs;
extern const uint32_t mcugen_num_outputs;
extern const uint32_t mcugen_input_size[];
extern const uint32_t mcugen_output_size[];
/* mcugen_vector_data[v * mcugen_num_inputs + i]: input i of vector v. */
extern const uint8_t *const mcugen_vector_data[];
extern uint8_t *const mcugen_input_buf[];
extern uint8_t *const mcugen_output_buf[];
/* The external arena with mcugen_guard_size guard bytes on each side, or a null pointer
 * when the model keeps its own arena. */
extern uint8_t *const mcugen_arena_storage;
extern const uint32_t mcugen_arena_size;
extern const uint32_t mcugen_guard_size;

/* mcugen_model_load copies the inputs to where the model reads them (a no-op unless the
 * model keeps its inputs in the arena); mcugen_model_run runs the model and returns what
 * it returned; mcugen_model_store copies the outputs into mcugen_output_buf (a no-op
 * unless they live in the arena). Only mcugen_model_run is counted. */
void mcugen_model_load(void *arena);
int32_t mcugen_model_run(void *arena);
void mcugen_model_store(void *arena);

/* The model's per-layer hook (<PREFIX>_LAYER_HOOK compiled as crt_layer_mark, and the harness
 * with CRT_LAYER_PROFILE=<layers>): i = 0 before the first layer, i + 1 after layer i. It
 * reads the counter. */
void crt_layer_mark(int32_t i);

#ifdef __cplusplus
}
#endif

#endif
