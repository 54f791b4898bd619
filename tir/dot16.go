package tir

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// IntrDotS16S8(x *int16, w *int8, n) int64: Σ_{i<n} x[i]·w'[i], the inner
// product of a 16x8 layer, where w's groups of four are stored in the order
// 0, 2, 1, 3 (DotS16S8Weights) and a tail of n % 4 in order. On a core
// with the DSP extension the C helper takes each group as one word that
// SXTB16 splits into the pairs (w0, w1) and (w2, w3), multiplied with x's
// pairs by two SMLALDs into the 64-bit sum; elsewhere it is a plain loop
// over the same layout.
const IntrDotS16S8 = "dot_s16s8"

// IntrDotS16S16(x *int16, w *int16, n, init) int32: init + Σ_{i<n}
// x[i]·w[i] wrapped to 32 bits, as TFLite Micro's int32 sums wrap (an
// integer SVDF's time step: an int16 state against int16 weights, both
// in order). On a core with the DSP extension the C takes two pairs a step
// by SMLAD, whose sum wraps the same way.
const IntrDotS16S16 = "dot_s16s16"

// IntrDot4S16S8(x *int16, w *int8, stride, n, out *int32) writes out[j] =
// Σ_{i<n} x[i]·w'[j·stride + i] for j < 4: four output channels' inner
// products over one shared input run, each channel's weights in
// IntrDotS16S8's layout. The sums are 32-bit (SMLAD on a DSP core): the
// caller takes it only where every channel's weights keep every partial
// sum inside int32 whatever the input (fitsDot32), which the interpreter
// checks.
const IntrDot4S16S8 = "dot4_s16s8"

// On the "mve" target (Helium) the 16x8 inner products are
// IntrMVEDotS16S8(x, w, n) int64 and IntrMVEDot4S16S8(x, w, stride, n,
// out *int64): the same sums over weights stored in order (VLDRB.S16 widens
// eight of them into a vector, VMLALDAVA multiplies it with eight inputs
// into a 64-bit sum), 64-bit whatever the weights.
const (
	IntrMVEDotS16S8  = "mve_dot_s16s8"
	IntrMVEDot4S16S8 = "mve_dot4_s16s8"
)

// minDotS16S8 is the shortest run a 16x8 kernel hands to IntrDotS16S8
// (a depthwise convolution's one-channel taps stay scalar products).
const minDotS16S8 = 4

func init() {
	extIntrinsics[IntrDotS16S16] = func(a []val) val {
		n := a[2].i
		return val{i: int64(int32(a[3].i + dotRef(IntrDotS16S16, a[0], a[1], n, func(i int64) int64 { return i }, false)))}
	}
	extIntrinsics[IntrDotS16S8] = func(a []val) val {
		n := a[2].i
		return val{i: dotRef(IntrDotS16S8, a[0], a[1], n, func(i int64) int64 { return dotS16S8Index(i, n) }, false)}
	}
}

// dotRef is Σ_{i<n} x[i]·w[at(i)], the intrinsics' reference: it panics
// on a negative n and, with check32, on a partial sum outside int32.
func dotRef(name string, x, w val, n int64, at func(i int64) int64, check32 bool) int64 {
	if n < 0 {
		panic(fmt.Sprintf("%s: n = %d", name, n))
	}
	var acc int64
	for i := int64(0); i < n; i++ {
		acc += x.p.I[x.i+i] * w.p.I[w.i+at(i)]
		if check32 && acc != int64(int32(acc)) {
			panic(fmt.Sprintf("%s: a partial sum %d leaves int32", name, acc))
		}
	}
	return acc
}

// dot4Ref writes the four channels' dotRef, stride apart in w, to out.
func dot4Ref(name string, a []val, at func(i, n int64) int64, check32 bool) val {
	x, w, stride, n, out := a[0], a[1], a[2].i, a[3].i, a[4]
	for j := int64(0); j < 4; j++ {
		out.p.I[out.i+j] = dotRef(name, x, val{p: w.p, i: w.i + j*stride}, n, func(i int64) int64 { return at(i, n) }, check32)
	}
	return val{}
}

func init() {
	extIntrinsics[IntrDot4S16S8] = func(a []val) val { return dot4Ref(IntrDot4S16S8, a, dotS16S8Index, true) }
}

func init() {
	plain := func(i, _ int64) int64 { return i }
	extIntrinsics[IntrMVEDotS16S8] = func(a []val) val {
		return val{i: dotRef(IntrMVEDotS16S8, a[0], a[1], a[2].i, func(i int64) int64 { return i }, false)}
	}
	extIntrinsics[IntrMVEDot4S16S8] = func(a []val) val { return dot4Ref(IntrMVEDot4S16S8, a, plain, false) }
}

// s16s8Weights stores a 16x8 layer's int8 weights, runs of n, for the
// inner products s16s8Outs calls: in IntrDotS16S8's order, or as they are
// on "mve".
func (k *kctx) s16s8Weights(name string, w []int64, shape []int, n int) *Buffer {
	if k.target == "mve" {
		return constBuf(name, graph.Int8, shape, slices.Clone(w))
	}
	return DotS16S8Weights(name, w, shape, n)
}

// fitsDot32 says whether rows runs of n int8 weights, multiplied with
// inputs of magnitude at most xmax, keep every partial sum inside int32:
// Σ|w|·xmax ≤ 2^31 − 1 for each run.
func fitsDot32(w []int64, n int, xmax int64) bool {
	for r := 0; r+n <= len(w); r += n {
		var s int64
		for _, v := range w[r : r+n] {
			s += max(v, -v)
		}
		if s*xmax > 1<<31-1 {
			return false
		}
	}
	return true
}

// dotS16S8Index is where element i of a run of n is stored: groups of four
// in the order 0, 2, 1, 3, the tail of n % 4 in order.
func dotS16S8Index(i, n int64) int64 {
	if i >= n/4*4 {
		return i
	}
	return i&^3 | [4]int64{0, 2, 1, 3}[i&3]
}

// DotS16S8Weights stores the int8 weights of a 16x8 layer, runs of n
// values one after another, in IntrDotS16S8's layout: each run's groups of
// four in the order 0, 2, 1, 3, its tail in order.
func DotS16S8Weights(name string, w []int64, shape []int, n int) *Buffer {
	out := make([]int64, len(w))
	for r := 0; r+n <= len(w); r += n {
		for i := 0; i < n; i++ {
			out[r+int(dotS16S8Index(int64(i), int64(n)))] = w[r+i]
		}
	}
	return constBuf(name, graph.Int8, shape, out)
}

// s16s8Outs builds a 16x8 layer's output channels oc(0) … oc(cnt−1) over
// one input run x of n values: emit(oc, dot) stores channel oc from its
// inner product dot (int64 from IntrDotS16S8, or int32 from
// IntrDot4S16S8). Channel j's weights are in w at wAt(j), one run after
// another (stride apart). With quad (the weights fit 32-bit sums:
// fitsDot32) the channels go four at a time through IntrDot4S16S8, which
// loads each input pair once for four channels; the rest one at a time.
func (k *kctx) s16s8Outs(name string, cnt int, quad bool, x *Ptr, w *Buffer, wAt func(j Expr) Expr, stride int64, n Expr, oc func(j Expr) Expr, emit func(oc, dot Expr) Stmt) Stmt {
	dot1, dot4, qt := IntrDotS16S8, IntrDot4S16S8, I32
	if k.target == "mve" {
		// Helium's sums are 64-bit: four channels a call always.
		dot1, dot4, qt, quad = IntrMVEDotS16S8, IntrMVEDot4S16S8, I64, true
	}
	one := func(j Expr) Stmt {
		return emit(oc(j), Call(dot1, I64, x, &Ptr{Buf: w, Index: wAt(j)}, n))
	}
	if !quad || cnt < 4 {
		return Loop("j", cnt, one)
	}
	blocks := Loop("jb", cnt/4, func(jb Expr) Stmt {
		q := NewBuffer(name+"_quad", qt, []int{4}, ScopeLocal)
		j0 := Mul(jb, C(4))
		body := []Stmt{&Evaluate{X: Call(dot4, I32, x, &Ptr{Buf: w, Index: wAt(j0)}, C(stride), n, &Ptr{Buf: q, Index: C(0)})}}
		for t := int64(0); t < 4; t++ {
			body = append(body, emit(oc(Add(j0, C(t))), At(q, C(t))))
		}
		return &Allocate{Buf: q, Body: Block(body...)}
	})
	if cnt%4 == 0 {
		return blocks
	}
	tail := Loop("jt", cnt%4, func(jt Expr) Stmt { return one(Add(jt, C(int64(cnt/4*4)))) })
	return Block(blocks, tail)
}
