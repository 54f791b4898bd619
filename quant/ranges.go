package quant

import (
	"fmt"
	"math"
)

// Method is an activation range method.
type Method string

// The range methods.
const (
	// MinMax uses the observed minimum and maximum.
	MinMax Method = "minmax"
	// Percentile clips (100-P)% of the values from each tail.
	Percentile Method = "percentile"
	// Entropy minimizes the KL divergence between the histogram and its
	// 255-level quantization (TensorRT's method, over a signed range).
	Entropy Method = "entropy"
	// MSE minimizes the mean squared quantization error over the histogram.
	MSE Method = "mse"
)

// Methods lists every range method.
var Methods = []Method{MinMax, Percentile, Entropy, MSE}

// ParseMethod checks a method name.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("quant: unknown range method %q (want minmax, percentile, entropy or mse)", s)
}

// DefaultPercentile is the percentile the Percentile method keeps.
const DefaultPercentile = 99.99

// Range returns the float range [lo, hi] the method chooses for the tensor.
// It always lies within [Min, Max]; pct is used by Percentile only.
func (t *TensorStats) Range(m Method, pct float64) (lo, hi float64, err error) {
	switch m {
	case MinMax, "":
		lo, hi = t.Min, t.Max
	case Percentile:
		if pct <= 50 || pct > 100 {
			return 0, 0, fmt.Errorf("quant: percentile %v outside (50, 100]", pct)
		}
		lo, hi = t.percentile(pct)
	case Entropy:
		lo, hi = t.entropy()
	case MSE:
		lo, hi = t.mse()
	default:
		return 0, 0, fmt.Errorf("quant: unknown range method %q", m)
	}
	return math.Max(lo, t.Min), math.Min(hi, t.Max), nil
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func (t *TensorStats) percentile(pct float64) (lo, hi float64) {
	total := sum(t.Hist)
	if total == 0 {
		return t.Min, t.Max
	}
	tail := total * (100 - pct) / 100
	w := t.BinWidth()
	n := len(t.Hist)
	acc := 0.0
	i0 := 0
	for ; i0 < n-1; i0++ {
		acc += t.Hist[i0]
		if acc > tail {
			break
		}
	}
	acc = 0
	i1 := n - 1
	for ; i1 > 0; i1-- {
		acc += t.Hist[i1]
		if acc > tail {
			break
		}
	}
	return t.Lo + float64(i0)*w, t.Lo + float64(i1+1)*w
}

// candidates yields bin windows [i0, i1) that shrink the histogram's range
// towards zero by the same factor on both sides, from the full range down to
// minBins bins.
func (t *TensorStats) candidates(minBins int, f func(i0, i1 int)) {
	n := len(t.Hist)
	z := (0 - t.Lo) / t.BinWidth() // position of 0 in bins
	step := max(1, n/512)
	for m := n; m >= minBins; m -= step {
		r := float64(m) / float64(n)
		i0 := int(math.Floor(z - r*z))
		i1 := int(math.Ceil(z + r*(float64(n)-z)))
		i0, i1 = max(i0, 0), min(i1, n)
		if i1-i0 < 1 {
			continue
		}
		f(i0, i1)
	}
}

// entropy is TensorRT's KL-divergence calibration generalized to a signed
// histogram: for each candidate window, P is the windowed histogram with the
// clipped outliers added to its edge bins, Q is the window merged into 255
// quantization levels and spread back over the non-empty bins; the window
// with the smallest KL(P||Q) wins.
func (t *TensorStats) entropy() (lo, hi float64) {
	const levels = 255
	n := len(t.Hist)
	if sum(t.Hist) == 0 || n < levels {
		return t.Min, t.Max
	}
	w := t.BinWidth()
	best := math.Inf(1)
	lo, hi = t.Min, t.Max
	p := make([]float64, n)
	q := make([]float64, n)
	// 0 is exactly representable (the zero point), so the bin holding 0 (where
	// ReLU's zeros pile up) is a level of its own and is not smeared.
	zb := min(max(int((0-t.Lo)/w), 0), n-1)
	t.candidates(levels, func(i0, i1 int) {
		m := i1 - i0
		copy(p, t.Hist[i0:i1])
		p[0] += sum(t.Hist[:i0])
		p[m-1] += sum(t.Hist[i1:])
		for j := 0; j < levels; j++ {
			a, b := j*m/levels, (j+1)*m/levels
			if b <= a {
				continue
			}
			tot, nz := 0.0, 0
			for k := a; k < b; k++ {
				if t.Hist[i0+k] != 0 && i0+k != zb {
					tot += t.Hist[i0+k]
					nz++
				}
			}
			for k := a; k < b; k++ {
				q[k] = 0
				switch {
				case i0+k == zb:
					q[k] = t.Hist[zb]
				case t.Hist[i0+k] != 0:
					q[k] = tot / float64(nz)
				}
			}
		}
		ps, qs := sum(p[:m]), sum(q[:m])
		if qs == 0 {
			return
		}
		kl := 0.0
		for k := 0; k < m; k++ {
			if p[k] == 0 {
				continue
			}
			pk := p[k] / ps
			qk := q[k] / qs
			if qk == 0 {
				qk = 1e-4 / float64(m) // TensorRT-style smoothing of empty bins
			}
			kl += pk * math.Log(pk/qk)
		}
		if kl < best {
			best = kl
			lo, hi = t.Lo+float64(i0)*w, t.Lo+float64(i1)*w
		}
	})
	return lo, hi
}

// mse chooses the window whose int8 quantization (TFLite parameters,
// clamping included) has the smallest squared error over the histogram's
// bin centres.
func (t *TensorStats) mse() (lo, hi float64) {
	if sum(t.Hist) == 0 {
		return t.Min, t.Max
	}
	w := t.BinWidth()
	n := len(t.Hist)
	best := math.Inf(1)
	lo, hi = t.Min, t.Max
	// Shrink the two sides independently: 64 steps each.
	const steps = 64
	for a := 1; a <= steps; a++ {
		cl := math.Min(t.Min, 0) * float64(a) / steps
		if t.Min >= 0 && a > 1 {
			break
		}
		for b := 1; b <= steps; b++ {
			ch := math.Max(t.Max, 0) * float64(b) / steps
			if t.Max <= 0 && b > 1 {
				break
			}
			s, z := ChooseParams(cl, ch)
			sc := float64(s)
			e := 0.0
			for i := 0; i < n; i++ {
				if t.Hist[i] == 0 {
					continue
				}
				x := t.Lo + (float64(i)+0.5)*w
				q := math.Max(-128, math.Min(127, math.Round(x/sc)+float64(z)))
				d := x - sc*(q-float64(z))
				e += t.Hist[i] * d * d
				if e >= best {
					break
				}
			}
			if e < best {
				best, lo, hi = e, cl, ch
			}
		}
	}
	return lo, hi
}
