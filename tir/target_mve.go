package tir

// MVE is the Cortex-M55 Helium target: int8 conv, depthwise conv and fully
// connected kernels through the SIMD schedule (mve_schedule.go) whose
// micro-kernels emitc prints with <arm_mve.h>. MUL, and the ADD and SUB
// the lanes do not take (a broadcast operand), take the dsp target's
// tables and SMMLA requantization (the M55 has the DSP extension): the
// generic loops took 2 to 4.4 times the Cortex-M4's instructions there (a
// review's ConvNeXt-like model 567,376 → 351,787). Everything else falls
// back to the generic schedules.
var MVE = &Target{Name: "mve", Schedules: map[string]ScheduleFunc{
	"conv2d":           simdSchedule("mve", scheduleConvBlocked),
	"depthwise_conv2d": simdSchedule("mve", scheduleConvBlocked),
	"fully_connected":  simdSchedule("mve", scheduleFCGeneric),
	"add":              simdElementwise("mve", scheduleElemDSP),
	"avg_pool2d":       simdAvgPool("mve", scheduleHoist),
	"max_pool2d":       simdMaxPool("mve", scheduleHoist),
	"sub":              simdElementwise("mve", scheduleElemDSP),
	"mul":              scheduleElemDSP,
	"mean":             simdMean("mve", IntrRequantFast),
	"batch_matmul":     scheduleBMMSIMD("mve", scheduleBMMDSP),
}}

func init() {
	RegisterTarget(MVE)
	// The values each knob of the SIMD schedule may take, for the autotuner.
	DeclareKnob("mve.add_lut", 0, 1)                       // ADD/SUB: tables and gathers (tir/dsp_addlut.go)
	DeclareKnob("mve.window", 1, 2)                        // conv: padded window per output row (1) or pixel (2)
	DeclareKnob("mve.pixel_window_below", 0, 16, 64, 1024) // conv: pixel windows when KW*Cin is below this
	DeclareKnob("mve.weight_blocked", 0, 1)                // conv, FC: 4x16 weight blocks (gemvb)
	DeclareKnob("mve.bias_in_gemv", 0, 64, 256, 4096)      // conv, FC: blocked GEMV starts from the bias up to this n
	DeclareKnob("mve.pixel_pairs", 0, 16, 32, 64)          // 1x1 conv: least n run two pixels at a time (0 = never)
	DeclareKnob("mve.pixel_pairs_max", 64, 128, 4096)      // 1x1 conv: largest n run in pairs
	DeclareKnob("mve.pixel_group", 2, 3)                   // 1x1 conv: pixels per group (gemvb2 or gemvb3)
	DeclareKnob("mve.dw_fused", 0, 1)                      // depthwise: bias, taps and requant in one block
	DeclareKnob("mve.dw_dsp_1d", 0, 1)                     // depthwise 1×k and k×1: the dsp target's planar forms
	DeclareKnob("mve.row_copy_below", 0, 8, 16, 64)        // pixel windows: copy whole rows shorter than this
	DeclareKnob("mve.small_k", 0, 8, 16)                   // conv, FC: reductions up to this long (at most 16) fused with their requantization (pwrq)
	DeclareKnob("mve.small_k_pairs", 0, 1)                 // those pixels two at a time along the innermost loop (pwrq2)
}
