package graph

import "fmt"

// The shapes of the back half of TFLite Micro's signal-library audio front
// end (SignalFilterBank … SignalFilterBankLog). TFLite Micro's tensors there
// are uint32 and uint64: mcugen holds a uint32 tensor as int64 (or int32,
// its bit pattern) and a uint64 one as int64 (its bit pattern); the kernels
// read the low 32 bits of a uint32 operand.

// SignalPCANLUTLen is the least length of SignalPCAN's gain table: TFLite
// Micro's WideDynamicFunction reads up to entry 4·32 − 6 + 2.
const SignalPCANLUTLen = 4*32 - 6 + 3

// signalWord reports whether t can hold a uint32 tensor.
func signalWord(t *Tensor) bool { return t != nil && (t.DType == Int64 || t.DType == Int32) }

// signalBankShape is the output shape of one of those ops.
func signalBankShape(g *Graph, n *Node, x *Tensor) ([]int, error) {
	if len(x.Shape) != 1 {
		return nil, fmt.Errorf("input %q has shape %v, want 1-D", x.Name, x.Shape)
	}
	c := x.Shape[0]
	in := func(i int) *Tensor { return g.In(n, i) }
	switch n.Op {
	case SignalFilterBank:
		a, ok := n.Attrs.(*SignalFilterBankAttrs)
		if !ok || a == nil || a.Channels < 1 {
			return nil, fmt.Errorf("needs SignalFilterBankAttrs with channels")
		}
		if !signalWord(x) {
			return nil, fmt.Errorf("input %q is %s, want int64 or int32 (uint32 values)", x.Name, x.DType)
		}
		for i := 1; i <= 5; i++ {
			t := in(i)
			if t == nil || t.DType != Int16 || len(t.Shape) != 1 || !t.IsConst() {
				return nil, fmt.Errorf("input %d must be a constant 1-D int16 tensor", i)
			}
			if i >= 3 && t.Shape[0] < a.Channels+1 {
				return nil, fmt.Errorf("input %d has %d entries for %d channels (want channels + 1)", i, t.Shape[0], a.Channels)
			}
		}
		if err := SignalFilterBankCheck(a.Channels, c, in(1).Data.I, in(2).Data.I, in(3).Data.I, in(4).Data.I, in(5).Data.I); err != nil {
			return nil, err
		}
		return []int{a.Channels}, nil
	case SignalFilterBankSqrt:
		s := in(1)
		if x.DType != Int64 || s == nil || s.DType != Int32 || NumElements(s.Shape) != 1 {
			return nil, fmt.Errorf("needs an int64 input (uint64 values) and an int32 scalar shift")
		}
		return []int{c}, nil
	case SignalNoiseEstimate, SignalSpectralSubtraction:
		a, ok := n.Attrs.(*SignalSpectralSubtractionAttrs)
		if !ok || a == nil {
			return nil, fmt.Errorf("needs SignalSpectralSubtractionAttrs")
		}
		if a.SmoothingBits < 0 || a.SmoothingBits > 31 || a.SpectralSubtractionBits < 0 || a.SpectralSubtractionBits > 63 {
			return nil, fmt.Errorf("smoothing bits %d or spectral subtraction bits %d out of range", a.SmoothingBits, a.SpectralSubtractionBits)
		}
		if e := in(1); !signalWord(x) || !signalWord(e) || len(e.Shape) != 1 || e.Shape[0] != c {
			return nil, fmt.Errorf("needs two uint32 (int64 or int32) inputs of shape [%d]", c)
		}
		return []int{c}, nil
	case SignalPCAN:
		a, ok := n.Attrs.(*SignalPCANAttrs)
		if !ok || a == nil || a.SNRShift < 0 || a.SNRShift > 63 {
			return nil, fmt.Errorf("needs SignalPCANAttrs with a shift in [0, 63]")
		}
		e, lut := in(1), in(2)
		if !signalWord(x) || !signalWord(e) || len(e.Shape) != 1 || e.Shape[0] != c {
			return nil, fmt.Errorf("needs two uint32 (int64 or int32) inputs of shape [%d]", c)
		}
		if lut == nil || lut.DType != Int16 || NumElements(lut.Shape) < SignalPCANLUTLen {
			return nil, fmt.Errorf("gain table (input 2) must be int16 of %d entries or more", SignalPCANLUTLen)
		}
		return []int{c}, nil
	case SignalFilterBankLog:
		a, ok := n.Attrs.(*SignalFilterBankLogAttrs)
		if !ok || a == nil || a.CorrectionBits < 0 || a.CorrectionBits > 31 {
			return nil, fmt.Errorf("needs SignalFilterBankLogAttrs with correction bits in [0, 31]")
		}
		if !signalWord(x) {
			return nil, fmt.Errorf("input %q is %s, want int64 or int32 (uint32 values)", x.Name, x.DType)
		}
		return []int{c}, nil
	}
	return nil, fmt.Errorf("unknown op")
}

// SignalFilterBankCheck checks that a filter bank of channels channels
// reads only inside its input of n bins and its weight tables (every
// channel start, weight start and width of the channels + 1 accumulated).
func SignalFilterBankCheck(channels, n int, weights, unweights, freqStarts, weightStarts, widths []int64) error {
	if len(unweights) != len(weights) {
		return fmt.Errorf("%d weights and %d unweights", len(weights), len(unweights))
	}
	if channels < 1 || min(len(freqStarts), len(weightStarts), len(widths)) <= channels {
		return fmt.Errorf("%d channels need %d channel starts, weight starts and widths", channels, channels+1)
	}
	for i := 0; i <= channels; i++ {
		f, w, k := freqStarts[i], weightStarts[i], widths[i]
		if k < 0 || f < 0 || w < 0 || f+k > int64(n) || w+k > int64(len(weights)) {
			return fmt.Errorf("channel %d (start %d, weight start %d, width %d) reads outside %d bins or %d weights", i, f, w, k, n, len(weights))
		}
	}
	return nil
}
