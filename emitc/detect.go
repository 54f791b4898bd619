package emitc

import "github.com/mcugen/mcugen/tir"

// The box decoding of DetectionPostProcess, in double as TFLite's
// DecodeCenterSizeBoxes computes it (tir.IntrDetCenter, tir.IntrDetHalf;
// interp.DetCenter and interp.DetHalf are the Go side).
func init() {
	addHelper(tir.IntrDetCenter, nil, `/* A decoded box centre: e / scale * size + centre, in double (TFLite). */
static inline float det_center(float e, float scale, float size, float centre)
{
    return (float)((double)e / (double)scale * (double)size + (double)centre);
}`)
	addHelper(tir.IntrDetHalf, nil, `/* A decoded box half size: 0.5 * exp(e / scale) * size, in double (TFLite). */
static inline float det_half(float e, float scale, float size)
{
    return (float)(0.5 * exp((double)e / (double)scale) * (double)size);
}`)
}
