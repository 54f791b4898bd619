/* mcugen test harness: runs the model on the compiled-in vectors and prints, one line
 * each (every line starts with "@mcugen "):
 *   @mcugen begin vectors=<n> inputs=<n> outputs=<n> board=<name>
 *   @mcugen ret <v> <int32 returned by <prefix>_run>
 *   @mcugen guard <v> <below|above> <offset> expected=<hex> got=<hex>   (only on damage)
 *   @mcugen output <v> <o> <hex bytes>
 *   @mcugen count <v> instructions=<n|-|plugin> ticks=<n|-> cycles=<n|-> stack=<n|-|overflow>
 *   @mcugen layer <v> <i> <n|->          (per layer, when the model is profiled)
 *   @mcugen end status=<0|1>
 * and exits with the status (1 when a run returned non-zero or a guard was damaged).
 * stack= is the bytes of stack the run took below the harness's frame (the high-water
 * mark of a painted stack; - on hosted builds; overflow when the run wrote within 256 B
 * of the stack's bottom, see crt.h).
 * instructions=plugin: QEMU's plugin prints "@mcugen mark <count>" (to stderr) at each
 * counter read, two per vector; the runner takes the difference.
 * A model compiled with its layer hook routed to crt_layer_mark (crt.LayerHookFlags) is
 * profiled per layer: before the vectors the harness times two back-to-back marks and
 * prints "@mcugen layer-overhead <n|->", what one mark adds to each layer's count; under
 * the plugin those two and the marks inside every run are plugin marks. */
#include <string.h>

#include "crt.h"
#include "mcugen_harness.h"

#if defined(CRT_COUNTER_QEMU_PLUGIN)
#define CRT_COUNTS_BY_PLUGIN 1
#else
#define CRT_COUNTS_BY_PLUGIN 0
#endif

#if defined(CRT_LAYER_PROFILE) && CRT_LAYER_PROFILE > 0
static uint32_t crt_layer_ticks[CRT_LAYER_PROFILE + 1];

void crt_layer_mark(int32_t i)
{
    uint32_t t = crt_counter_read();
    if (i >= 0 && i <= CRT_LAYER_PROFILE) {
        crt_layer_ticks[i] = t;
    }
}

static void put_count(uint64_t ticks)
{
    int ok;
    uint64_t n = crt_counter_instructions(ticks, &ok);
    if (ok) {
        crt_put_u64(n);
    } else {
        crt_puts("-");
    }
}

#endif

static uint8_t guard_byte(uint32_t i) { return (uint8_t)(0xA5u ^ (i * 29u)); }

static void put_kv_u32(const char *key, uint32_t v)
{
    crt_puts(key);
    crt_put_u64(v);
}

static void set_guards(void)
{
    uint32_t i, g = mcugen_guard_size, a = mcugen_arena_size;
    for (i = 0; i < g; i++) {
        mcugen_arena_storage[i] = guard_byte(i);
        mcugen_arena_storage[g + a + i] = guard_byte(g + i);
    }
}

static int check_guards(uint32_t v)
{
    uint32_t i, g = mcugen_guard_size, a = mcugen_arena_size;
    int bad = 0;
    for (i = 0; i < 2u * g; i++) {
        uint32_t at = i < g ? i : a + i;
        uint8_t want = guard_byte(i), got = mcugen_arena_storage[at];
        if (got != want) {
            put_kv_u32("@mcugen guard ", v);
            crt_puts(i < g ? " below " : " above ");
            crt_put_u64(i < g ? i : i - g);
            crt_puts(" expected=");
            crt_put_hex_bytes(&want, 1);
            crt_puts(" got=");
            crt_put_hex_bytes(&got, 1);
            crt_puts("\n");
            bad = 1;
        }
    }
    return bad;
}

int main(void)
{
    uint32_t v, i;
    int status = 0;
    void *arena = 0;

    crt_init();
    if (mcugen_arena_storage != 0) {
        arena = mcugen_arena_storage + mcugen_guard_size;
    }
    put_kv_u32("@mcugen begin vectors=", mcugen_num_vectors);
    put_kv_u32(" inputs=", mcugen_num_inputs);
    put_kv_u32(" outputs=", mcugen_num_outputs);
    crt_puts(" board=" CRT_BOARD_NAME "\n");
#if defined(CRT_LAYER_PROFILE) && CRT_LAYER_PROFILE > 0
    {
        crt_layer_mark(0);
        crt_layer_mark(1);
        crt_puts("@mcugen layer-overhead ");
        put_count(crt_layer_ticks[1] - crt_layer_ticks[0]);
        crt_puts("\n");
    }
#endif
    for (v = 0; v < mcugen_num_vectors; v++) {
        uint32_t t0, t1, c0, c1, stack;
        uint64_t ticks;
        uintptr_t top;
        int32_t ret;
        int ok, stack_ok;
        uint64_t n;
        for (i = 0; i < mcugen_num_inputs; i++) {
            memcpy(mcugen_input_buf[i], mcugen_vector_data[v * mcugen_num_inputs + i], mcugen_input_size[i]);
        }
        for (i = 0; i < mcugen_num_outputs; i++) {
            memset(mcugen_output_buf[i], 0, mcugen_output_size[i]);
        }
        if (arena != 0) {
            set_guards();
        }
        /* The timebase's reads frame the counter's, well outside its window. */
        c0 = crt_coarse_read();
        mcugen_model_load(arena);
        top = crt_stack_paint();
        t0 = crt_counter_read();
        ret = mcugen_model_run(arena);
        t1 = crt_counter_read();
        stack = crt_stack_used(top, &stack_ok);
        mcugen_model_store(arena);
        c1 = crt_coarse_read();
        ticks = crt_counter_ticks64(t1 - t0, c1 - c0);

        put_kv_u32("@mcugen ret ", v);
        crt_puts(" ");
        crt_put_i32(ret);
        crt_puts("\n");
        if (ret != 0) {
            status = 1;
        }
        if (arena != 0 && check_guards(v)) {
            status = 1;
        }
        for (i = 0; i < mcugen_num_outputs; i++) {
            put_kv_u32("@mcugen output ", v);
            put_kv_u32(" ", i);
            crt_puts(" ");
            crt_put_hex_bytes(mcugen_output_buf[i], mcugen_output_size[i]);
            crt_puts("\n");
        }
#if defined(CRT_LAYER_PROFILE) && CRT_LAYER_PROFILE > 0
        for (i = 0; i < (uint32_t)CRT_LAYER_PROFILE; i++) {
            put_kv_u32("@mcugen layer ", v);
            put_kv_u32(" ", i);
            crt_puts(" ");
            put_count(crt_layer_ticks[i + 1] - crt_layer_ticks[i]);
            crt_puts("\n");
        }
#endif
        put_kv_u32("@mcugen count ", v);
        n = crt_counter_instructions(ticks, &ok);
        if (ok) {
            crt_puts(" instructions=");
            crt_put_u64(n);
        } else if (CRT_COUNTS_BY_PLUGIN) {
            crt_puts(" instructions=plugin");
        } else {
            crt_puts(" instructions=-");
        }
#if defined(CRT_COUNTER_DWT)
        put_kv_u32(" ticks=- cycles=", t1 - t0);
#elif defined(CRT_COUNTER_NONE)
        crt_puts(" ticks=- cycles=-");
#else
        crt_puts(" ticks=");
        crt_put_u64(ticks);
#if defined(CRT_COARSE_TICKS)
        put_kv_u32(" coarse=", c1 - c0);
#endif
        crt_puts(" cycles=-");
#endif
        if (stack_ok > 0) {
            put_kv_u32(" stack=", stack);
        } else if (stack_ok < 0) {
            crt_puts(" stack=overflow");
        } else {
            crt_puts(" stack=-");
        }
        crt_puts("\n");
    }
    put_kv_u32("@mcugen end status=", (uint32_t)status);
    crt_puts("\n");
    crt_exit(status);
    return status;
}
