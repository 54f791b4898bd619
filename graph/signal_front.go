package graph

import "fmt"

// The shapes of TFLite Micro's signal-library front end ops (SignalWindow,
// SignalFftAutoScale, SignalRfft, SignalEnergy; int16 in, as its
// micro_speech audio preprocessor uses them, SignalRfft also int32 or
// float32).

// signalFrontShape is the output shape of one of those ops.
func signalFrontShape(g *Graph, n *Node, x *Tensor) ([]int, error) {
	if x.DType != Int16 && !(n.Op == SignalRfft && (x.DType == Int32 || x.DType == Float32)) {
		return nil, fmt.Errorf("input %q is %s, want int16", x.Name, x.DType)
	}
	r := len(x.Shape)
	switch n.Op {
	case SignalWindow:
		a, ok := n.Attrs.(*SignalWindowAttrs)
		w := g.In(n, 1)
		if !ok || a == nil || w == nil {
			return nil, fmt.Errorf("needs SignalWindowAttrs and weights (input 1)")
		}
		if a.Shift < 0 || a.Shift > 31 {
			return nil, fmt.Errorf("shift %d is not in [0, 31]", a.Shift)
		}
		if w.DType != Int16 || len(w.Shape) != 1 || r < 1 || NumElements(x.Shape)%w.Shape[0] != 0 {
			return nil, fmt.Errorf("weights %s %v do not divide input %v (want int16, 1-D)", w.DType, w.Shape, x.Shape)
		}
		return append([]int(nil), x.Shape...), nil
	case SignalFftAutoScale:
		a, ok := n.Attrs.(*SignalFftAutoScaleAttrs)
		if !ok || a == nil || r != 1 {
			return nil, fmt.Errorf("needs SignalFftAutoScaleAttrs and a 1-D input, not %v", x.Shape)
		}
		if a.Bits {
			if out := g.Out(n, 0); out != nil && len(out.Shape) == 0 && out.Shape != nil {
				return []int{}, nil
			}
			return []int{1}, nil
		}
		return []int{x.Shape[0]}, nil
	case SignalRfft:
		a, ok := n.Attrs.(*SignalRfftAttrs)
		if !ok || a == nil || r < 1 {
			return nil, fmt.Errorf("needs SignalRfftAttrs and an input of rank 1 or more")
		}
		if err := RfftLengthOK(a.FFTLength); err != nil {
			return nil, err
		}
		if x.Shape[r-1] > a.FFTLength {
			return nil, fmt.Errorf("frames of %d samples are longer than the FFT length %d", x.Shape[r-1], a.FFTLength)
		}
		s := append([]int(nil), x.Shape...)
		s[r-1] = 2 * (a.FFTLength/2 + 1)
		return s, nil
	case SignalEnergy:
		a, ok := n.Attrs.(*SignalEnergyAttrs)
		if !ok || a == nil || r != 1 || x.Shape[0]%2 != 0 {
			return nil, fmt.Errorf("needs SignalEnergyAttrs and a 1-D input of complex values, not %v", x.Shape)
		}
		if a.Start < 0 || a.Start > a.End || a.End > x.Shape[0]/2 {
			return nil, fmt.Errorf("bins %d to %d are not within %d", a.Start, a.End, x.Shape[0]/2)
		}
		return []int{x.Shape[0] / 2}, nil
	}
	return nil, fmt.Errorf("not a signal front end op")
}

// RfftFactors are kissfft's radices (kf_factor: fours first, then twos,
// then odd numbers up) for a complex FFT of n points, or nil when one is
// above 5: TFLite Micro's kissfft allocates nothing, so its generic
// butterfly (any other radix) cannot run.
func RfftFactors(n int) []int {
	if n < 2 {
		return nil
	}
	var fs []int
	p := 4
	root := 1
	for (root+1)*(root+1) <= n {
		root++
	}
	for n > 1 {
		for n%p != 0 {
			switch p {
			case 4:
				p = 2
			case 2:
				p = 3
			default:
				p += 2
			}
			if p > root {
				p = n
			}
		}
		if p > 5 {
			return nil
		}
		n /= p
		fs = append(fs, p)
	}
	return fs
}

// RfftLengthOK checks a SignalRfft length: even, at least 4, its half
// made of radices 2 to 5 (RfftFactors), and at most 2^15.
func RfftLengthOK(n int) error {
	if n < 4 || n%2 != 0 || n > 1<<15 || RfftFactors(n/2) == nil {
		return fmt.Errorf("FFT length %d: want an even length from 4 to 32768 whose half has no prime factor above 5", n)
	}
	return nil
}
