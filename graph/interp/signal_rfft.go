package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.SignalRfft, IntClass, signalRfft) }

// RfftPlan is kissfft's fixed-point (16-bit) real FFT of 2·N points as
// TFLite Micro's SignalRfft runs it (kiss_fftr over kiss_fft of N complex
// points): the radices, the complex FFT's twiddles and the real split's
// super twiddles, each floor(0.5 + 32767·cos) and floor(0.5 + 32767·sin)
// of kissfft's phases in double, and the order in which kissfft's
// decimation in time reads the N complex input points (Perm[j] is the
// point stored at j before the first butterflies).
//
// Inverse marks the plan of the inverse transform (kiss_fftri, TFLite
// Micro's SignalIrfft): kissfft's phases negated and its radix-4
// butterfly's inverse form.
type RfftPlan struct {
	N       int
	Factors []int
	Tw      [][2]int16
	Super   [][2]int16
	Perm    []int
	Inverse bool
}

// NewRfftPlan is the plan of an FFT of length points (graph.RfftLengthOK).
func NewRfftPlan(length int) (*RfftPlan, error) { return newKissPlan(length, false) }

// NewIrfftPlan is the plan of the inverse FFT of length points.
func NewIrfftPlan(length int) (*RfftPlan, error) { return newKissPlan(length, true) }

func newKissPlan(length int, inverse bool) (*RfftPlan, error) {
	if err := graph.RfftLengthOK(length); err != nil {
		return nil, err
	}
	n := length / 2
	p := &RfftPlan{N: n, Factors: graph.RfftFactors(n), Inverse: inverse}
	kissCexp := func(phase float64) [2]int16 {
		if inverse {
			// kissfft's phase *= -1 (exact).
			phase = -phase
		}
		// Each product rounded on its own, as C without contraction does.
		c := float64(32767 * math.Cos(phase))
		s := float64(32767 * math.Sin(phase))
		return [2]int16{int16(math.Floor(0.5 + c)), int16(math.Floor(0.5 + s))}
	}
	for i := range n {
		p.Tw = append(p.Tw, kissCexp(float64(-2*math.Pi*float64(i))/float64(n)))
	}
	for i := range n / 2 {
		p.Super = append(p.Super, kissCexp(-math.Pi*(float64(i+1)/float64(n)+0.5)))
	}
	// kf_work: the points at stride fstride of the input go, factor by
	// factor, to consecutive sub-transforms.
	p.Perm = make([]int, n)
	var walk func(out, in, stride, stage int)
	walk = func(out, in, stride, stage int) {
		r := p.Factors[stage]
		m := n / (stride * r)
		for j := range r {
			if m == 1 {
				p.Perm[out+j] = in + j*stride
			} else {
				walk(out+j*m, in+j*stride, stride*r, stage+1)
			}
		}
	}
	walk(0, 0, 1, 0)
	return p, nil
}

// kissCpx is kissfft's complex int16 value.
type kissCpx struct{ r, i int16 }

// kissRound is kissfft's sround: (x + 2^14) >> 15, stored as int16.
func kissRound(x int32) int16 { return int16((x + 1<<14) >> 15) }

func kissMul(a, b kissCpx) kissCpx {
	return kissCpx{kissRound(int32(a.r)*int32(b.r) - int32(a.i)*int32(b.i)), kissRound(int32(a.r)*int32(b.i) + int32(a.i)*int32(b.r))}
}

// kissDiv is C_FIXDIV: each part times 32767/k, rounded.
func kissDiv(c kissCpx, k int32) kissCpx {
	d := 32767 / k
	return kissCpx{kissRound(int32(c.r) * d), kissRound(int32(c.i) * d)}
}

func kissAdd(a, b kissCpx) kissCpx { return kissCpx{a.r + b.r, a.i + b.i} }
func kissSub(a, b kissCpx) kissCpx { return kissCpx{a.r - b.r, a.i - b.i} }

// Run transforms the 2·N samples x into the N + 1 bins y (re, im pairs).
func (p *RfftPlan) Run(x []int16, y []int16) {
	n := p.N
	f := make([]kissCpx, n)
	for j, src := range p.Perm {
		f[j] = kissCpx{x[2*src], x[2*src+1]}
	}
	p.butterflies(f)
	// kiss_fftr's split of the two interleaved real transforms.
	dc := kissDiv(f[0], 2)
	y[0], y[1] = dc.r+dc.i, 0
	y[2*n], y[2*n+1] = dc.r-dc.i, 0
	for k := 1; k <= n/2; k++ {
		fpk := kissDiv(f[k], 2)
		fpnk := kissDiv(kissCpx{f[n-k].r, -f[n-k].i}, 2)
		f1, f2 := kissAdd(fpk, fpnk), kissSub(fpk, fpnk)
		t := kissMul(f2, kissCpx{p.Super[k-1][0], p.Super[k-1][1]})
		y[2*k] = int16((int32(f1.r) + int32(t.r)) >> 1)
		y[2*k+1] = int16((int32(f1.i) + int32(t.i)) >> 1)
		y[2*(n-k)] = int16((int32(f1.r) - int32(t.r)) >> 1)
		y[2*(n-k)+1] = int16((int32(t.i) - int32(f1.i)) >> 1)
	}
}

// butterflies runs kissfft's stages on f, already in its reading order
// (Perm).
func (p *RfftPlan) butterflies(f []kissCpx) {
	n := p.N
	tw := func(i int) kissCpx { return kissCpx{p.Tw[i][0], p.Tw[i][1]} }
	stride := n
	for s := len(p.Factors) - 1; s >= 0; s-- {
		r := p.Factors[s]
		stride /= r
		m := n / (stride * r)
		for b := range stride {
			o := f[b*r*m : (b+1)*r*m]
			switch r {
			case 2:
				for k := range m {
					a, c := kissDiv(o[k], 2), kissDiv(o[k+m], 2)
					t := kissMul(c, tw(k*stride))
					o[k+m] = kissSub(a, t)
					o[k] = kissAdd(a, t)
				}
			case 3:
				e := tw(stride * m)
				for k := range m {
					a, b1, b2 := kissDiv(o[k], 3), kissDiv(o[k+m], 3), kissDiv(o[k+2*m], 3)
					s1, s2 := kissMul(b1, tw(k*stride)), kissMul(b2, tw(2*k*stride))
					s3, s0 := kissAdd(s1, s2), kissSub(s1, s2)
					om := kissCpx{int16(int32(a.r) - int32(s3.r)>>1), int16(int32(a.i) - int32(s3.i)>>1)}
					s0 = kissCpx{kissRound(int32(s0.r) * int32(e.i)), kissRound(int32(s0.i) * int32(e.i))}
					o[k] = kissAdd(a, s3)
					o[k+2*m] = kissCpx{om.r + s0.i, om.i - s0.r}
					o[k+m] = kissCpx{om.r - s0.i, om.i + s0.r}
				}
			case 4:
				for k := range m {
					a := kissDiv(o[k], 4)
					s0 := kissMul(kissDiv(o[k+m], 4), tw(k*stride))
					s1 := kissMul(kissDiv(o[k+2*m], 4), tw(2*k*stride))
					s2 := kissMul(kissDiv(o[k+3*m], 4), tw(3*k*stride))
					s5 := kissSub(a, s1)
					a = kissAdd(a, s1)
					s3, s4 := kissAdd(s0, s2), kissSub(s0, s2)
					o[k+2*m] = kissSub(a, s3)
					o[k] = kissAdd(a, s3)
					if p.Inverse {
						o[k+m] = kissCpx{s5.r - s4.i, s5.i + s4.r}
						o[k+3*m] = kissCpx{s5.r + s4.i, s5.i - s4.r}
					} else {
						o[k+m] = kissCpx{s5.r + s4.i, s5.i - s4.r}
						o[k+3*m] = kissCpx{s5.r - s4.i, s5.i + s4.r}
					}
				}
			case 5:
				ya, yb := tw(stride*m), tw(2*stride*m)
				sm := func(a, b int16) int32 { return int32(kissRound(int32(a) * int32(b))) }
				for u := range m {
					s0 := kissDiv(o[u], 5)
					s1 := kissMul(kissDiv(o[u+m], 5), tw(u*stride))
					s2 := kissMul(kissDiv(o[u+2*m], 5), tw(2*u*stride))
					s3 := kissMul(kissDiv(o[u+3*m], 5), tw(3*u*stride))
					s4 := kissMul(kissDiv(o[u+4*m], 5), tw(4*u*stride))
					s7, s10 := kissAdd(s1, s4), kissSub(s1, s4)
					s8, s9 := kissAdd(s2, s3), kissSub(s2, s3)
					o[u] = kissCpx{int16(int32(s0.r) + int32(s7.r) + int32(s8.r)), int16(int32(s0.i) + int32(s7.i) + int32(s8.i))}
					s5 := kissCpx{int16(int32(s0.r) + sm(s7.r, ya.r) + sm(s8.r, yb.r)), int16(int32(s0.i) + sm(s7.i, ya.r) + sm(s8.i, yb.r))}
					s6 := kissCpx{int16(sm(s10.i, ya.i) + sm(s9.i, yb.i)), int16(-sm(s10.r, ya.i) - sm(s9.r, yb.i))}
					o[u+m] = kissSub(s5, s6)
					o[u+4*m] = kissAdd(s5, s6)
					s11 := kissCpx{int16(int32(s0.r) + sm(s7.r, yb.r) + sm(s8.r, ya.r)), int16(int32(s0.i) + sm(s7.i, yb.r) + sm(s8.i, ya.r))}
					s12 := kissCpx{int16(-sm(s10.i, yb.i) + sm(s9.i, ya.i)), int16(sm(s10.r, yb.i) - sm(s9.r, ya.i))}
					o[u+2*m] = kissAdd(s11, s12)
					o[u+3*m] = kissSub(s11, s12)
				}
			}
		}
	}
}

// signalRfft is TFLite Micro's int16 SignalRfft: each frame (the last
// axis) zero-padded to the FFT length and transformed by RfftPlan.
func signalRfft(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalRfftAttrs)
	if !ok || a == nil || len(in) != 1 {
		return nil, fmt.Errorf("needs SignalRfftAttrs")
	}
	p, err := NewRfftPlan(a.FFTLength)
	if err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	if r < 1 || x.Shape[r-1] > a.FFTLength {
		return nil, fmt.Errorf("input %v: frames longer than %d", x.Shape, a.FFTLength)
	}
	l := x.Shape[r-1]
	shape := append([]int(nil), x.Shape...)
	shape[r-1] = 2 * (p.N + 1)
	y := graph.NewData(graph.Int16, shape)
	frame := make([]int16, a.FFTLength)
	bins := make([]int16, 2*(p.N+1))
	for f := 0; f*l < len(x.I); f++ {
		clear(frame)
		for i := range l {
			frame[i] = int16(x.I[f*l+i])
		}
		p.Run(frame, bins)
		for i, v := range bins {
			y.I[f*len(bins)+i] = int64(v)
		}
	}
	return []*graph.Data{y}, nil
}
