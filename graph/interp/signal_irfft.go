package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.SignalIrfft, IntClass, signalIrfft) }

// RunInverse is kiss_fftri in 16-bit fixed point on an inverse plan
// (NewIrfftPlan): the N + 1 bins x (re, im pairs) split into N complex
// points (each bin halved, C_FIXDIV), the complex inverse FFT of those
// gives the 2·N samples y. Unscaled, as TFLite Micro's int16 SignalIrfft.
func (p *RfftPlan) RunInverse(x []int16, y []int16) {
	n := p.N
	bin := func(k int) kissCpx { return kissCpx{x[2*k], x[2*k+1]} }
	tmp := make([]kissCpx, n)
	tmp[0] = kissDiv(kissCpx{bin(0).r + bin(n).r, bin(0).r - bin(n).r}, 2)
	for k := 1; k <= n/2; k++ {
		fk := kissDiv(bin(k), 2)
		fnkc := kissDiv(kissCpx{bin(n - k).r, -bin(n - k).i}, 2)
		fek, t := kissAdd(fk, fnkc), kissSub(fk, fnkc)
		fok := kissMul(t, kissCpx{p.Super[k-1][0], p.Super[k-1][1]})
		tmp[k] = kissAdd(fek, fok)
		tmp[n-k] = kissSub(fek, fok)
		tmp[n-k].i = -tmp[n-k].i
	}
	f := make([]kissCpx, n)
	for j, src := range p.Perm {
		f[j] = tmp[src]
	}
	p.butterflies(f)
	for j, v := range f {
		y[2*j], y[2*j+1] = v.r, v.i
	}
}

// signalIrfft is TFLite Micro's int16 SignalIrfft: each frame of N + 1
// bins to FFTLength = 2·N samples (RunInverse).
func signalIrfft(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalRfftAttrs)
	if !ok || a == nil || len(in) != 1 {
		return nil, fmt.Errorf("needs SignalRfftAttrs")
	}
	p, err := NewIrfftPlan(a.FFTLength)
	if err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	l := 2 * (p.N + 1)
	if r < 1 || x.Shape[r-1] != l {
		return nil, fmt.Errorf("input %v: want frames of %d values", x.Shape, l)
	}
	shape := append([]int(nil), x.Shape...)
	shape[r-1] = a.FFTLength
	y := graph.NewData(graph.Int16, shape)
	bins := make([]int16, l)
	out := make([]int16, a.FFTLength)
	for f := 0; f*l < len(x.I); f++ {
		for i := range bins {
			bins[i] = int16(x.I[f*l+i])
		}
		p.RunInverse(bins, out)
		for i, v := range out {
			y.I[f*a.FFTLength+i] = int64(v)
		}
	}
	return []*graph.Data{y}, nil
}
