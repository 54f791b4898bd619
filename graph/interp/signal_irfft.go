package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.SignalIrfft, IntClass, signalIrfft)
	Register(graph.SignalIrfft, FloatClass, signalIrfft)
}

// RunInverse is kiss_fftri in 16-bit fixed point on an inverse plan
// (NewIrfftPlan): the N + 1 bins x (re, im pairs) split into N complex
// points (each bin halved, C_FIXDIV), the complex inverse FFT of those
// gives the 2·N samples y. Unscaled, as TFLite Micro's int16 SignalIrfft.
func (p *RfftPlan) RunInverse(x []int16, y []int16) { kissInverse(kissI16{}, p, x, y) }

// kissInverse is kiss_fftri in T's arithmetic (no scaling).
func kissInverse[T kissNum, M kissMath[T]](m M, p *RfftPlan, x []T, y []T) {
	n := p.N
	tw, sup := twiddles[T](p)
	bin := func(k int) kc[T] { return kc[T]{x[2*k], x[2*k+1]} }
	tmp := make([]kc[T], n)
	tmp[0] = kdiv(m, kc[T]{bin(0).r + bin(n).r, bin(0).r - bin(n).r}, 2)
	for k := 1; k <= n/2; k++ {
		fk := kdiv(m, bin(k), 2)
		fnkc := kdiv(m, kc[T]{bin(n - k).r, -bin(n - k).i}, 2)
		fek, t := kadd(fk, fnkc), ksub(fk, fnkc)
		fok := m.cmul(t, sup[k-1])
		tmp[k] = kadd(fek, fok)
		tmp[n-k] = ksub(fek, fok)
		tmp[n-k].i = -tmp[n-k].i
	}
	f := make([]kc[T], n)
	for j, src := range p.Perm {
		f[j] = tmp[src]
	}
	kissButterflies(m, p, tw, f)
	for j, v := range f {
		y[2*j], y[2*j+1] = v.r, v.i
	}
}

// irfftF32 is TFLite Micro's float SignalIrfft: kiss_fftri, then each
// sample divided by the FFT length (in float).
func irfftF32(m kissF32, p *RfftPlan, x, y []float32) {
	kissInverse(m, p, x, y)
	d := float32(2 * p.N)
	for i := range y {
		y[i] /= d
	}
}

// signalIrfft is TFLite Micro's SignalIrfft: each frame of N + 1 bins to
// FFTLength = 2·N samples (kiss_fftri; int16 and int32 unscaled, float32
// divided by the length).
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
	y := graph.NewData(x.DType, shape)
	switch x.DType {
	case graph.Int16:
		kissFrames(kissI16{}, p, x.I, y.I, l, l, a.FFTLength, kissInverse)
	case graph.Int32:
		kissFrames(kissI32{}, p, x.I, y.I, l, l, a.FFTLength, kissInverse)
	case graph.Float32:
		kissFrames(kissF32{}, p, x.F, y.F, l, l, a.FFTLength, irfftF32)
	default:
		return nil, fmt.Errorf("input is %s, want int16, int32 or float32", x.DType)
	}
	return []*graph.Data{y}, nil
}
