package qmath

import (
	"math"
	"sync"
)

// Int16LUTSize is the length of TFLite's int16 lookup tables: 512 segments
// indexed by an input's high 9 bits, and one more entry for the last slope.
const Int16LUTSize = 513

// roundF32 is TfLiteRound on a float: half away from zero.
func roundF32(x float32) float32 { return float32(math.Round(float64(x))) }

// Int16LUT is TFLite's LUTPopulate<int16_t> (detail::LUTPopulateInt16 in
// float): f sampled at 513 points across the input range, each entry
// corrected by half the error of the linear interpolation at its segment's
// midpoint. Every operation is single precision and rounded on its own, as
// the C++ does on a host without fused multiply-adds; explicit float32
// conversions keep Go from fusing them.
func Int16LUT(inScale float32, inZP int32, outScale float32, outZP int32, f func(float32) float32) []int16 {
	inMin := float32(inScale * float32(math.MinInt16-inZP))
	inMax := float32(inScale * float32(math.MaxInt16-inZP))
	outMin := float32(outScale * float32(math.MinInt16-outZP))
	outMax := float32(outScale * float32(math.MaxInt16-outZP))
	const steps = 512
	step := float32((inMax - inMin) / steps)
	half := float32(step / 2)
	inv := float32(float32(65536) / float32(outMax-outMin))
	clamp := func(v float32) int16 {
		return int16(min(max(v, math.MinInt16), math.MaxInt16))
	}
	at := func(i int) float32 { return float32(inMin + float32(float32(i)*step)) }
	lut := make([]int16, Int16LUTSize)
	for i := 0; i < steps; i++ {
		val := f(at(i))
		mid := f(float32(at(i) + half))
		next := f(at(i + 1))
		sample := roundF32(float32(val * inv))
		interp := roundF32(float32(float32(float32(next*inv)+roundF32(float32(val*inv))) / 2))
		midVal := roundF32(float32(mid * inv))
		bias := roundF32(float32(float32(interp-midVal) / 2))
		lut[i] = clamp(float32(sample - bias))
	}
	lut[steps] = clamp(roundF32(float32(f(inMax) * inv)))
	return lut
}

// LUTLookupInt16 is TFLite's int16 table lookup: the entry at the value's
// high 9 bits, plus the slope to the next entry times its low 7 bits,
// rounded.
func LUTLookupInt16(v int16, lut []int16) int16 {
	index := 256 + int(v>>7)
	offset := int32(v & 0x7f)
	base := int32(lut[index])
	slope := int32(lut[index+1] - lut[index]) // an int16, as TFLite's
	return int16(base + (slope*offset+64)>>7)
}

// ExpF32 is expf: exp in single precision, correctly rounded (as glibc's
// and newlib's expf are within 0.502 ULP).
func ExpF32(x float32) float32 { return float32(math.Exp(float64(x))) }

// SoftmaxInt16Tables are TFLite Micro's int16 softmax tables: exp on
// [-10, 0] and 1/(1+x) on [0, 1], both in Q0.15 (softmax_common.cc). They
// depend on nothing, so they are made once (the interpreter asked for them
// at every inference); callers must not modify them.
func SoftmaxInt16Tables() (exp, recip []int16) {
	softmaxTables.once.Do(func() {
		const rng = float32(math.MaxInt16 - math.MinInt16) // 65535
		softmaxTables.exp = Int16LUT(float32(10/rng), math.MaxInt16, float32(2/rng), 0, ExpF32)
		softmaxTables.recip = Int16LUT(float32(1/rng), math.MinInt16, float32(2/rng), 0, func(x float32) float32 { return float32(1 / float32(1+x)) })
	})
	return softmaxTables.exp, softmaxTables.recip
}

var softmaxTables struct {
	once       sync.Once
	exp, recip []int16
}

// SoftmaxInt16Params is TFLite Micro's input rescale for the int16
// softmax: input_scale * beta / (10 / 65535) in double, so that a
// difference of [-65535, 0] steps spans [-10, 0].
func SoftmaxInt16Params(inputScale, beta float32) (multiplier int32, shift int) {
	return QuantizeMultiplier(float64(inputScale) * float64(beta) / (10.0 / 65535.0))
}

// SoftmaxInt16Row is TFLite's SoftmaxInt16 on one row (reference_ops):
// each difference from the row's maximum rescaled and looked up in the exp
// table, the sum's reciprocal from the 1/(1+x) table after normalising it,
// each exponential scaled by it, clamped to [0, 32767].
func SoftmaxInt16Row(in []int64, out []int64, mult int32, shift int, expLUT, recipLUT []int16) {
	mx := int64(math.MinInt16)
	for _, v := range in {
		mx = max(mx, v)
	}
	var sum int32
	for c, v := range in {
		d := MultiplyByQuantizedMultiplier(int32(v-mx), mult, shift)
		e := LUTLookupInt16(int16(min(max(d+32767, math.MinInt16), math.MaxInt16)), expLUT)
		out[c] = int64(e)
		sum += int32(e)
	}
	h := CountLeadingZeros32(uint32(sum))
	shifted := int32((int64(sum)<<(h-1) + 1<<13) >> 14)
	sym := shifted - (1<<15 + 1<<16)
	r := int64(LUTLookupInt16(int16(min(max(sym, math.MinInt16), math.MaxInt16)), recipLUT))
	rs := 31 - h
	for c := range out {
		v := (out[c]*r + int64(1)<<(rs-1)) >> rs
		out[c] = min(max(v, 0), math.MaxInt16)
	}
}
