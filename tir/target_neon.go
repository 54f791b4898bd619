package tir

// NEON is the AArch64 Advanced SIMD target: the same SIMD schedule as MVE
// (mve_schedule.go) with micro-kernels that emitc prints with <arm_neon.h>
// (vdotq_s32 when the compiler has the dot-product extension, vmull_s8 /
// vpadalq_s16 otherwise).
var NEON = &Target{Name: "neon", Schedules: map[string]ScheduleFunc{
	"conv2d":           simdSchedule("neon", scheduleConvBlocked),
	"depthwise_conv2d": simdSchedule("neon", scheduleConvBlocked),
	"fully_connected":  simdSchedule("neon", scheduleFCBlocked),
	"add":              simdElementwise("neon", nil),
	"avg_pool2d":       simdAvgPool("neon", scheduleHoist),
	"max_pool2d":       simdMaxPool("neon", scheduleHoist),
	"sub":              simdElementwise("neon", nil),
	"mean":             simdMean("neon", IntrRequantFast),
	"batch_matmul":     scheduleBMMSIMD("neon", func(f *PrimFunc) (*PrimFunc, error) { return f, nil }),
}}

func init() {
	RegisterTarget(NEON)
	// The values each knob of the SIMD schedule may take, for the autotuner.
	DeclareKnob("neon.window", 1, 2)                        // conv: padded window per output row (1) or pixel (2)
	DeclareKnob("neon.pixel_window_below", 0, 16, 64, 1024) // conv: pixel windows when KW*Cin is below this
	DeclareKnob("neon.weight_blocked", 0, 1)                // conv, FC: 4x16 weight blocks (gemvb)
	DeclareKnob("neon.bias_in_gemv", 0, 64, 256, 4096)      // conv, FC: blocked GEMV starts from the bias up to this n
	DeclareKnob("neon.pixel_pairs", 0, 16, 32, 64)          // 1x1 conv: least n run two pixels at a time (0 = never)
	DeclareKnob("neon.pixel_pairs_max", 64, 128, 4096)      // 1x1 conv: largest n run in pairs
	DeclareKnob("neon.dw_fused", 0, 1)                      // depthwise: bias, taps and requant in one block
	DeclareKnob("neon.row_copy_below", 0, 8, 16, 64)        // pixel windows: copy whole rows shorter than this
}
