package tir

// NEON is the AArch64 Advanced SIMD target: the same SIMD schedule as MVE
// (mve_schedule.go) with micro-kernels that emitc prints with <arm_neon.h>
// (vdotq_s32 when the compiler has the dot-product extension, vmull_s8 /
// vpadalq_s16 otherwise).
var NEON = &Target{Name: "neon", Schedules: map[string]ScheduleFunc{
	"conv2d":           simdSchedule("neon", scheduleConvGeneric),
	"depthwise_conv2d": simdSchedule("neon", scheduleConvGeneric),
	"fully_connected":  simdSchedule("neon", scheduleFCGeneric),
	"add":              simdElementwise("neon", nil),
	"avg_pool2d":       simdAvgPool("neon", scheduleHoist),
	"sub":              simdElementwise("neon", nil),
}}

func init() { RegisterTarget(NEON) }
