package interp

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/mcugen/mcugen/graph"
)

// The back half of TFLite Micro's signal-library audio front end
// (signal/src: filter_bank, filter_bank_square_root, square_root_32/64,
// filter_bank_spectral_subtraction, pcan_argc_fixed, filter_bank_log, log),
// bit for bit. A uint32 operand is its tensor's low 32 bits (graph holds it
// as int64 or int32); a uint64 one is an int64's bit pattern.

func init() {
	for _, op := range []graph.Op{graph.SignalFilterBank, graph.SignalFilterBankSqrt, graph.SignalNoiseEstimate,
		graph.SignalSpectralSubtraction, graph.SignalPCAN, graph.SignalFilterBankLog} {
		Register(op, IntClass, signalBank)
	}
}

// SigFilterBankTerm is one term of a filter bank channel: the accumulator
// plus weight w times bin x, modulo 2^64 (uint64 arithmetic; x is uint32).
func SigFilterBankTerm(acc int64, w int16, x int64) int64 {
	return int64(uint64(acc) + uint64(int64(w))*uint64(uint32(x)))
}

// SigSqrt32 is TFLite Micro's Sqrt32: the rounded integer square root.
func SigSqrt32(num uint32) uint16 { return uint16(sigSqrt(num, 32)) }

// SigSqrt64 is TFLite Micro's Sqrt64 (Sqrt32 below 2^32).
func SigSqrt64(num uint64) uint32 {
	if num>>32 == 0 {
		return uint32(SigSqrt32(uint32(num)))
	}
	return uint32(sigSqrt(num, 64))
}

// sigSqrt is the digit-by-digit square root of Sqrt32 and Sqrt64 in a
// width-bit word, rounded up when the remainder exceeds the root (short of
// the largest root of the width's half).
func sigSqrt[T uint32 | uint64](num T, width int) T {
	if num == 0 {
		return 0
	}
	var res T
	top := (bits.LeadingZeros64(uint64(num)) - (64 - width)) | 1
	bit := T(1) << (width - 1 - top)
	for it := (width-1-top)/2 + 1; it > 0; it-- {
		if num >= res+bit {
			num -= res + bit
			res = res>>1 + bit
		} else {
			res >>= 1
		}
		bit >>= 2
	}
	if maxRoot := T(1)<<(width/2) - 1; num > res && res != maxRoot {
		res++
	}
	return res
}

// SigFilterBankSqrt is one channel of FilterbankSqrt: the square root of x
// (uint64) shifted right by shift. TFLite Micro shifts a uint32 by the
// shift tensor's value, undefined outside [0, 31]: mcugen gives 0 for a
// shift of 32 or more and the unshifted root for a negative one.
func SigFilterBankSqrt(x int64, shift int32) int64 {
	r := SigSqrt64(uint64(x))
	switch {
	case shift < 0:
	case shift > 31:
		r = 0
	default:
		r >>= uint(shift)
	}
	return int64(r)
}

// SigNoiseEstimate is one channel's next noise estimate in
// FilterbankSpectralSubtraction: the smoothed estimate, clamped to the
// scaled signal when clamping. x and prev are uint32.
func SigNoiseEstimate(x, prev int64, smoothing, oneMinus uint32, smoothingBits, ssBits int, clamping bool) int64 {
	up := uint32(x) << uint(smoothingBits)
	e := uint32((uint64(up)*uint64(smoothing) + uint64(uint32(prev))*uint64(oneMinus)) >> uint(ssBits))
	if clamping && e > up {
		e = up
	}
	return int64(e)
}

// SigSpectralSubtract is one channel's output of
// FilterbankSpectralSubtraction given its next noise estimate est (the
// estimate before clamping enters only through min(est, signal), which
// clamping does not change).
func SigSpectralSubtract(x, est int64, minSignal uint32, smoothingBits, ssBits int) int64 {
	up := uint32(x) << uint(smoothingBits)
	e := min(uint32(est), up)
	floor := uint32((uint64(uint32(x)) * uint64(minSignal)) >> uint(ssBits))
	sub := (up - e) >> uint(smoothingBits)
	return int64(max(sub, floor))
}

// SigPCANIndex is the first gain table entry WideDynamicFunction reads for
// noise estimate x (uint32).
func SigPCANIndex(x int64) int64 {
	u := uint32(x)
	if u <= 2 {
		return int64(u)
	}
	return int64(4*(32-bits.LeadingZeros32(u)) - 6)
}

// SigPCANGain is WideDynamicFunction for noise estimate x (uint32) given
// the table entries l0, l1, l2 from SigPCANIndex(x) on (only l0 when x <= 2).
func SigPCANGain(x int64, l0, l1, l2 int16) int64 {
	u := uint32(x)
	if u <= 2 {
		return int64(l0)
	}
	interval := 32 - bits.LeadingZeros32(u)
	var f uint32
	if interval < 11 {
		f = u << uint(11-interval)
	} else {
		f = u >> uint(interval-11)
	}
	frac := int32(int16(f & 0x3FF))
	// int32 arithmetic, wrapping (as the C does on every target mcugen has).
	r := (int32(l2) * frac) >> 5
	r += int32(uint32(int32(l1)) << 5)
	r *= frac
	r = (r + 1<<14) >> 15
	r += int32(l0)
	return int64(int16(r))
}

// SigPCANOut is one channel of ApplyPcanAutoGainControlFixed: x (uint32)
// times the gain (int16 widened to uint32) shifted right by snrShift, then
// PcanShrink.
func SigPCANOut(x, gain int64, snrShift int) int64 {
	g := uint32(int32(int16(gain)))
	snr := uint32((uint64(uint32(x)) * uint64(g)) >> uint(snrShift))
	const snrBits, outBits = 12, 6
	if snr < 2<<snrBits {
		return int64((snr * snr) >> (2 + 2*snrBits - outBits))
	}
	return int64((snr >> (snrBits - outBits)) - 1<<outBits)
}

// SigLogLUT is the Q16 correction table of TFLite Micro's Log32: entry i of
// the 128 segments is log2(1 + i/128) − i/128, rounded, then a 0 past the
// end.
var SigLogLUT = sync.OnceValue(func() []int32 {
	t := make([]int32, 130)
	for i := 0; i <= 128; i++ {
		v := math.Log2(1+float64(i)/128) - float64(i)/128
		t[i] = int32(math.Round(v * 65536))
	}
	return t
})

// SigLog32 is TFLite Micro's Log32(x, outScale) for x > 1.
func SigLog32(x, outScale uint32) uint32 {
	integer := uint32(32-bits.LeadingZeros32(x)) - 1
	frac := int32(x - uint32(1)<<integer)
	if integer < 16 {
		frac <<= 16 - integer
	} else {
		frac >>= integer - 16
	}
	lut := SigLogLUT()
	seg := uint32(frac) >> (16 - 7)
	c0, c1 := lut[seg], lut[seg+1]
	segBase := int32((uint32(1) << 16 >> 7) * seg)
	rel := ((c1 - c0) * (frac - segBase)) >> 16
	log2 := integer<<16 + uint32(frac+c0+rel)
	const round = 65536 / 2
	loge := uint32((uint64(45426)*uint64(log2) + round) >> 16)
	return (outScale*loge + round) >> 16
}

// SigFilterBankLog is one channel of FilterbankLog: x (uint32) shifted
// left by corr, its scaled natural log capped at 32767, 0 for 0 and 1.
func SigFilterBankLog(x int64, outScale int32, corr int) int64 {
	s := uint32(x) << uint(corr)
	if s <= 1 {
		return 0
	}
	return int64(min(SigLog32(s, uint32(outScale)), math.MaxInt16))
}

// signalBank runs one of the ops.
func signalBank(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error) {
	out := g.Out(n, 0)
	if out == nil || len(ins) == 0 || ins[0] == nil {
		return nil, fmt.Errorf("%s needs an input and an output tensor", n.Op)
	}
	for i, d := range ins {
		if d == nil {
			return nil, fmt.Errorf("%s: input %d is missing", n.Op, i)
		}
	}
	x := ins[0].I
	c := out.NumElements()
	y := graph.NewData(out.DType, []int{c})
	put := func(i int, v int64) { y.I[i] = out.DType.Wrap(v) }
	switch n.Op {
	case graph.SignalFilterBank:
		a, _, err := attrsOf[graph.SignalFilterBankAttrs](n)
		if err != nil {
			return nil, err
		}
		if len(ins) < 6 {
			return nil, fmt.Errorf("SignalFilterBank needs 6 inputs")
		}
		w, uw, fs, ws, wd := ins[1].I, ins[2].I, ins[3].I, ins[4].I, ins[5].I
		if c != a.Channels {
			return nil, fmt.Errorf("SignalFilterBank: %d outputs for %d channels", c, a.Channels)
		}
		if err := graph.SignalFilterBankCheck(a.Channels, len(x), w, uw, fs, ws, wd); err != nil {
			return nil, fmt.Errorf("SignalFilterBank: %v", err)
		}
		// Channel i sums its weights and channel i − 1's unweights (the
		// accumulator TFLite Micro carries over); its channel 0 is dropped.
		for k := 0; k < c; k++ {
			var acc int64
			for _, ch := range []struct {
				ch   int
				tabl []int64
			}{{k + 1, w}, {k, uw}} {
				for j := 0; j < int(wd[ch.ch]); j++ {
					acc = SigFilterBankTerm(acc, int16(ch.tabl[int(ws[ch.ch])+j]), x[int(fs[ch.ch])+j])
				}
			}
			put(k, acc)
		}
	case graph.SignalFilterBankSqrt:
		if len(ins) < 2 || ins[1].Len() != 1 {
			return nil, fmt.Errorf("SignalFilterBankSqrt needs a scalar shift")
		}
		for i := 0; i < c; i++ {
			put(i, SigFilterBankSqrt(x[i], int32(ins[1].I[0])))
		}
	case graph.SignalNoiseEstimate, graph.SignalSpectralSubtraction:
		a, _, err := attrsOf[graph.SignalSpectralSubtractionAttrs](n)
		if err != nil {
			return nil, err
		}
		e := ins[1].I
		for i := 0; i < c; i++ {
			if n.Op == graph.SignalSpectralSubtraction {
				put(i, SigSpectralSubtract(x[i], e[i], a.MinSignalRemaining, a.SmoothingBits, a.SpectralSubtractionBits))
				continue
			}
			s, om := a.Smoothing, a.OneMinusSmoothing
			if i&1 == 1 {
				s, om = a.AlternateSmoothing, a.AlternateOneMinusSmoothing
			}
			put(i, SigNoiseEstimate(x[i], e[i], s, om, a.SmoothingBits, a.SpectralSubtractionBits, a.Clamping))
		}
	case graph.SignalPCAN:
		a, _, err := attrsOf[graph.SignalPCANAttrs](n)
		if err != nil {
			return nil, err
		}
		e, lut := ins[1].I, ins[2].I
		if len(lut) < graph.SignalPCANLUTLen {
			return nil, fmt.Errorf("SignalPCAN: a gain table of %d entries", len(lut))
		}
		for i := 0; i < c; i++ {
			k := SigPCANIndex(e[i])
			gain := SigPCANGain(e[i], int16(lut[k]), int16(lut[k+1]), int16(lut[k+2]))
			put(i, SigPCANOut(x[i], gain, a.SNRShift))
		}
	case graph.SignalFilterBankLog:
		a, _, err := attrsOf[graph.SignalFilterBankLogAttrs](n)
		if err != nil {
			return nil, err
		}
		for i := 0; i < c; i++ {
			put(i, SigFilterBankLog(x[i], int32(a.OutputScale), a.CorrectionBits))
		}
	}
	return []*graph.Data{y}, nil
}
