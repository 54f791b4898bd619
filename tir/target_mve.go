package tir

// MVE is the Cortex-M55 Helium target: int8 conv, depthwise conv and fully
// connected kernels through the SIMD schedule (mve_schedule.go) whose
// micro-kernels emitc prints with <arm_mve.h>; everything else falls back
// to the generic schedules.
var MVE = &Target{Name: "mve", Schedules: map[string]ScheduleFunc{
	"conv2d":           simdSchedule("mve", scheduleConvGeneric),
	"depthwise_conv2d": simdSchedule("mve", scheduleConvGeneric),
	"fully_connected":  simdSchedule("mve", scheduleFCGeneric),
	"add":              simdElementwise("mve", nil),
	"avg_pool2d":       simdAvgPool("mve", scheduleHoist),
	"sub":              simdElementwise("mve", nil),
}}

func init() { RegisterTarget(MVE) }
