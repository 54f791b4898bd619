package interp

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.SignalRfft, IntClass, signalRfft)
	Register(graph.SignalRfft, FloatClass, signalRfft)
}

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
	// The same twiddles for kissfft's int32 (floor(0.5 + 2147483647·cos),
	// FIXED_POINT 32) and float (the double cos and sin rounded to float)
	// forms.
	Tw32, Super32 [][2]int32
	TwF, SuperF   [][2]float32
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
	kissCexp := func(phase float64) ([2]int16, [2]int32, [2]float32) {
		if inverse {
			// kissfft's phase *= -1 (exact).
			phase = -phase
		}
		co, si := math.Cos(phase), math.Sin(phase)
		// Each product rounded on its own, as C without contraction does.
		c := float64(32767 * co)
		s := float64(32767 * si)
		c32 := float64(2147483647 * co)
		s32 := float64(2147483647 * si)
		return [2]int16{int16(math.Floor(0.5 + c)), int16(math.Floor(0.5 + s))},
			[2]int32{int32(math.Floor(0.5 + c32)), int32(math.Floor(0.5 + s32))},
			[2]float32{float32(co), float32(si)}
	}
	for i := range n {
		t, t32, tf := kissCexp(float64(-2*math.Pi*float64(i)) / float64(n))
		p.Tw, p.Tw32, p.TwF = append(p.Tw, t), append(p.Tw32, t32), append(p.TwF, tf)
	}
	for i := range n / 2 {
		t, t32, tf := kissCexp(-math.Pi * (float64(i+1)/float64(n) + 0.5))
		p.Super, p.Super32, p.SuperF = append(p.Super, t), append(p.Super32, t32), append(p.SuperF, tf)
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

// kissNum is a scalar kissfft runs in: int16 (FIXED_POINT 16), int32
// (FIXED_POINT 32) or float.
type kissNum interface{ ~int16 | ~int32 | ~float32 }

// kc is kissfft's complex value.
type kc[T kissNum] struct{ r, i T }

// kissMath is kissfft's arithmetic on one scalar type (_kiss_fft_guts.h):
// sums and differences wrap as stores to the scalar type do (Go's own
// int16 and int32 arithmetic; C's int32 arithmetic would overflow where
// TFLite Micro's compiled code wraps), products and divisions are the
// type's.
type kissMath[T kissNum] interface {
	smul(a, b T) T         // S_MUL
	cmul(a, b kc[T]) kc[T] // C_MUL
	div(a T, k int) T      // DIVSCALAR (C_FIXDIV; nothing in float)
	half(a T) T            // HALF_OF
	halfAdd(a, b T) T      // HALF_OF(a + b) with C's promotions
	halfSub(a, b T) T      // HALF_OF(a - b)
}

// kissI16 is FIXED_POINT 16: Q15 products rounded, (x + 2^14) >> 15;
// int16 operands of + and - promote to int.
type kissI16 struct{}

func (kissI16) smul(a, b int16) int16 { return int16((int32(a)*int32(b) + 1<<14) >> 15) }
func (kissI16) cmul(a, b kc[int16]) kc[int16] {
	return kc[int16]{int16((int32(a.r)*int32(b.r) - int32(a.i)*int32(b.i) + 1<<14) >> 15),
		int16((int32(a.r)*int32(b.i) + int32(a.i)*int32(b.r) + 1<<14) >> 15)}
}
func (m kissI16) div(a int16, k int) int16 { return m.smul(a, int16(32767/k)) }
func (kissI16) half(a int16) int16         { return a >> 1 }
func (kissI16) halfAdd(a, b int16) int16   { return int16((int32(a) + int32(b)) >> 1) }
func (kissI16) halfSub(a, b int16) int16   { return int16((int32(a) - int32(b)) >> 1) }

// kissI32 is FIXED_POINT 32: Q31 products in int64, rounded, (x + 2^30)
// >> 31, stored as int32; int32 sums wrap before HALF_OF.
type kissI32 struct{}

func (kissI32) smul(a, b int32) int32 { return int32((int64(a)*int64(b) + 1<<30) >> 31) }
func (kissI32) cmul(a, b kc[int32]) kc[int32] {
	return kc[int32]{int32((int64(a.r)*int64(b.r) - int64(a.i)*int64(b.i) + 1<<30) >> 31),
		int32((int64(a.r)*int64(b.i) + int64(a.i)*int64(b.r) + 1<<30) >> 31)}
}
func (m kissI32) div(a int32, k int) int32 { return m.smul(a, int32(2147483647/k)) }
func (kissI32) half(a int32) int32         { return a >> 1 }
func (kissI32) halfAdd(a, b int32) int32   { return (a + b) >> 1 }
func (kissI32) halfSub(a, b int32) int32   { return (a - b) >> 1 }

// kissF32 is float: every operation rounded to float32 on its own (the
// conversions keep Go from fusing a product into a sum), HALF_OF a
// product by 0.5f.
type kissF32 struct{}

func (kissF32) smul(a, b float32) float32 { return float32(a * b) }
func (kissF32) cmul(a, b kc[float32]) kc[float32] {
	return kc[float32]{float32(a.r*b.r) - float32(a.i*b.i), float32(a.r*b.i) + float32(a.i*b.r)}
}
func (kissF32) div(a float32, k int) float32 { return a }
func (kissF32) half(a float32) float32       { return float32(a * 0.5) }
func (kissF32) halfAdd(a, b float32) float32 { return float32((a + b) * 0.5) }
func (kissF32) halfSub(a, b float32) float32 { return float32((a - b) * 0.5) }

func kdiv[T kissNum, M kissMath[T]](m M, c kc[T], k int) kc[T] {
	return kc[T]{m.div(c.r, k), m.div(c.i, k)}
}
func kadd[T kissNum](a, b kc[T]) kc[T] { return kc[T]{a.r + b.r, a.i + b.i} }
func ksub[T kissNum](a, b kc[T]) kc[T] { return kc[T]{a.r - b.r, a.i - b.i} }

// twiddles are the plan's twiddles and super twiddles in T.
func twiddles[T kissNum](p *RfftPlan) (tw, sup []kc[T]) {
	var z T
	conv := func(ts [][2]int16, t32 [][2]int32, tf [][2]float32) []kc[T] {
		out := make([]kc[T], len(ts))
		for i := range out {
			switch any(z).(type) {
			case int16:
				out[i] = kc[T]{T(ts[i][0]), T(ts[i][1])}
			case int32:
				out[i] = kc[T]{T(t32[i][0]), T(t32[i][1])}
			default:
				out[i] = kc[T]{T(tf[i][0]), T(tf[i][1])}
			}
		}
		return out
	}
	return conv(p.Tw, p.Tw32, p.TwF), conv(p.Super, p.Super32, p.SuperF)
}

// Run transforms the 2·N int16 samples x into the N + 1 bins y (re, im
// pairs).
func (p *RfftPlan) Run(x []int16, y []int16) { kissForward(kissI16{}, p, x, y) }

// kissForward is kiss_fftr: the complex FFT of the N sample pairs, then
// the split of the two interleaved real transforms into the N + 1 bins.
func kissForward[T kissNum, M kissMath[T]](m M, p *RfftPlan, x []T, y []T) {
	n := p.N
	tw, sup := twiddles[T](p)
	f := make([]kc[T], n)
	for j, src := range p.Perm {
		f[j] = kc[T]{x[2*src], x[2*src+1]}
	}
	kissButterflies(m, p, tw, f)
	dc := kdiv(m, f[0], 2)
	y[0], y[1] = dc.r+dc.i, 0
	y[2*n], y[2*n+1] = dc.r-dc.i, 0
	for k := 1; k <= n/2; k++ {
		fpk := kdiv(m, f[k], 2)
		fpnk := kdiv(m, kc[T]{f[n-k].r, -f[n-k].i}, 2)
		f1, f2 := kadd(fpk, fpnk), ksub(fpk, fpnk)
		t := m.cmul(f2, sup[k-1])
		y[2*k] = m.halfAdd(f1.r, t.r)
		y[2*k+1] = m.halfAdd(f1.i, t.i)
		y[2*(n-k)] = m.halfSub(f1.r, t.r)
		y[2*(n-k)+1] = m.halfSub(t.i, f1.i)
	}
}

// kissButterflies runs kissfft's stages on f, already in its reading
// order (Perm).
func kissButterflies[T kissNum, M kissMath[T]](m M, p *RfftPlan, tws []kc[T], f []kc[T]) {
	n := p.N
	tw := func(i int) kc[T] { return tws[i] }
	stride := n
	for s := len(p.Factors) - 1; s >= 0; s-- {
		r := p.Factors[s]
		stride /= r
		mm := n / (stride * r)
		for b := range stride {
			o := f[b*r*mm : (b+1)*r*mm]
			switch r {
			case 2:
				for k := range mm {
					a, c := kdiv(m, o[k], 2), kdiv(m, o[k+mm], 2)
					t := m.cmul(c, tw(k*stride))
					o[k+mm] = ksub(a, t)
					o[k] = kadd(a, t)
				}
			case 3:
				e := tw(stride * mm)
				for k := range mm {
					a, b1, b2 := kdiv(m, o[k], 3), kdiv(m, o[k+mm], 3), kdiv(m, o[k+2*mm], 3)
					s1, s2 := m.cmul(b1, tw(k*stride)), m.cmul(b2, tw(2*k*stride))
					s3, s0 := kadd(s1, s2), ksub(s1, s2)
					om := kc[T]{a.r - m.half(s3.r), a.i - m.half(s3.i)}
					s0 = kc[T]{m.smul(s0.r, e.i), m.smul(s0.i, e.i)}
					o[k] = kadd(a, s3)
					o[k+2*mm] = kc[T]{om.r + s0.i, om.i - s0.r}
					o[k+mm] = kc[T]{om.r - s0.i, om.i + s0.r}
				}
			case 4:
				for k := range mm {
					a := kdiv(m, o[k], 4)
					s0 := m.cmul(kdiv(m, o[k+mm], 4), tw(k*stride))
					s1 := m.cmul(kdiv(m, o[k+2*mm], 4), tw(2*k*stride))
					s2 := m.cmul(kdiv(m, o[k+3*mm], 4), tw(3*k*stride))
					s5 := ksub(a, s1)
					a = kadd(a, s1)
					s3, s4 := kadd(s0, s2), ksub(s0, s2)
					o[k+2*mm] = ksub(a, s3)
					o[k] = kadd(a, s3)
					if p.Inverse {
						o[k+mm] = kc[T]{s5.r - s4.i, s5.i + s4.r}
						o[k+3*mm] = kc[T]{s5.r + s4.i, s5.i - s4.r}
					} else {
						o[k+mm] = kc[T]{s5.r + s4.i, s5.i - s4.r}
						o[k+3*mm] = kc[T]{s5.r - s4.i, s5.i + s4.r}
					}
				}
			case 5:
				ya, yb := tw(stride*mm), tw(2*stride*mm)
				for u := range mm {
					s0 := kdiv(m, o[u], 5)
					s1 := m.cmul(kdiv(m, o[u+mm], 5), tw(u*stride))
					s2 := m.cmul(kdiv(m, o[u+2*mm], 5), tw(2*u*stride))
					s3 := m.cmul(kdiv(m, o[u+3*mm], 5), tw(3*u*stride))
					s4 := m.cmul(kdiv(m, o[u+4*mm], 5), tw(4*u*stride))
					s7, s10 := kadd(s1, s4), ksub(s1, s4)
					s8, s9 := kadd(s2, s3), ksub(s2, s3)
					o[u] = kc[T]{s0.r + (s7.r + s8.r), s0.i + (s7.i + s8.i)}
					s5 := kc[T]{s0.r + m.smul(s7.r, ya.r) + m.smul(s8.r, yb.r), s0.i + m.smul(s7.i, ya.r) + m.smul(s8.i, yb.r)}
					s6 := kc[T]{m.smul(s10.i, ya.i) + m.smul(s9.i, yb.i), -m.smul(s10.r, ya.i) - m.smul(s9.r, yb.i)}
					o[u+mm] = ksub(s5, s6)
					o[u+4*mm] = kadd(s5, s6)
					s11 := kc[T]{s0.r + m.smul(s7.r, yb.r) + m.smul(s8.r, ya.r), s0.i + m.smul(s7.i, yb.r) + m.smul(s8.i, ya.r)}
					s12 := kc[T]{-m.smul(s10.i, yb.i) + m.smul(s9.i, ya.i), m.smul(s10.r, yb.i) - m.smul(s9.r, ya.i)}
					o[u+2*mm] = kadd(s11, s12)
					o[u+3*mm] = ksub(s11, s12)
				}
			}
		}
	}
}

// signalRfft is TFLite Micro's SignalRfft (int16, int32 or float32):
// each frame (the last axis) zero-padded to the FFT length and
// transformed by RfftPlan in the type's arithmetic.
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
	shape := append([]int(nil), x.Shape...)
	shape[r-1] = 2 * (p.N + 1)
	y := graph.NewData(x.DType, shape)
	switch x.DType {
	case graph.Int16:
		kissFrames(kissI16{}, p, x.I, y.I, x.Shape[r-1], a.FFTLength, 2*(p.N+1), kissForward)
	case graph.Int32:
		kissFrames(kissI32{}, p, x.I, y.I, x.Shape[r-1], a.FFTLength, 2*(p.N+1), kissForward)
	case graph.Float32:
		kissFrames(kissF32{}, p, x.F, y.F, x.Shape[r-1], a.FFTLength, 2*(p.N+1), kissForward)
	default:
		return nil, fmt.Errorf("input is %s, want int16, int32 or float32", x.DType)
	}
	return []*graph.Data{y}, nil
}

// kissFrames runs run on each frame of l values of x (zero-padded to
// frameIn) into frames of lOut values of y; E is how the tensor holds T.
func kissFrames[T kissNum, M kissMath[T], E int64 | float32](m M, p *RfftPlan, x, y []E, l, frameIn, lOut int,
	run func(M, *RfftPlan, []T, []T)) {
	frame := make([]T, frameIn)
	out := make([]T, lOut)
	for f := 0; f*l < len(x); f++ {
		clear(frame)
		for i := range l {
			frame[i] = T(x[f*l+i])
		}
		run(m, p, frame, out)
		for i, v := range out {
			y[f*lOut+i] = E(v)
		}
	}
}
