package tir

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
)

// The back half of TFLite Micro's signal-library audio front end: each
// channel's arithmetic is one extern intrinsic (interp's Sig* functions are
// their semantics, emitc/signal_bank.go their C). uint32 and uint64 values
// travel as int64; the intrinsics read the low 32 bits of a uint32.
const (
	IntrSigFBTerm   = "sig_fb_term"   // (acc, w int16, x) int64: acc + w·x mod 2^64
	IntrSigFBSqrt   = "sig_fb_sqrt"   // (x uint64, shift int32) int64
	IntrSigNoise    = "sig_noise"     // (x, prev, smoothing, one_minus, smoothing_bits, ss_bits, clamping) int64
	IntrSigSubtract = "sig_subtract"  // (x, estimate, min_signal, smoothing_bits, ss_bits) int64
	IntrSigPCANIdx  = "sig_pcan_idx"  // (noise) int32: the first gain table entry read
	IntrSigPCANGain = "sig_pcan_gain" // (noise, l0, l1, l2) int32
	IntrSigPCANOut  = "sig_pcan_out"  // (x, gain, snr_shift) int64
	IntrSigFBLog    = "sig_fb_log"    // (x, output_scale, correction_bits) int32
)

func init() {
	for _, op := range []graph.Op{graph.SignalFilterBank, graph.SignalFilterBankSqrt, graph.SignalNoiseEstimate,
		graph.SignalSpectralSubtraction, graph.SignalPCAN, graph.SignalFilterBankLog} {
		register(op, computeSignalBank)
	}
	extIntrinsics[IntrSigFBTerm] = func(a []val) val { return val{i: interp.SigFilterBankTerm(a[0].i, int16(a[1].i), a[2].i)} }
	extIntrinsics[IntrSigFBSqrt] = func(a []val) val { return val{i: interp.SigFilterBankSqrt(a[0].i, int32(a[1].i))} }
	extIntrinsics[IntrSigNoise] = func(a []val) val {
		return val{i: interp.SigNoiseEstimate(a[0].i, a[1].i, uint32(a[2].i), uint32(a[3].i), int(a[4].i), int(a[5].i), a[6].i != 0)}
	}
	extIntrinsics[IntrSigSubtract] = func(a []val) val {
		return val{i: interp.SigSpectralSubtract(a[0].i, a[1].i, uint32(a[2].i), int(a[3].i), int(a[4].i))}
	}
	extIntrinsics[IntrSigPCANIdx] = func(a []val) val { return val{i: interp.SigPCANIndex(a[0].i)} }
	extIntrinsics[IntrSigPCANGain] = func(a []val) val {
		return val{i: interp.SigPCANGain(a[0].i, int16(a[1].i), int16(a[2].i), int16(a[3].i))}
	}
	extIntrinsics[IntrSigPCANOut] = func(a []val) val { return val{i: interp.SigPCANOut(a[0].i, a[1].i, int(a[2].i))} }
	extIntrinsics[IntrSigFBLog] = func(a []val) val { return val{i: interp.SigFilterBankLog(a[0].i, int32(a[1].i), int(a[2].i))} }
}

// computeSignalBank lowers one of the ops (interp.signalBank is the
// reference): a loop over the channels.
func computeSignalBank(k *kctx) (Stmt, error) {
	n := k.n
	xt := k.g.In(n, 0)
	if xt == nil || len(xt.Shape) != 1 {
		return nil, k.errorf("needs a 1-D input")
	}
	x := k.in(0)
	y, yt := k.output()
	c := yt.NumElements()
	k.f.Op = map[graph.Op]string{graph.SignalFilterBank: "filter_bank", graph.SignalFilterBankSqrt: "filter_bank_sqrt",
		graph.SignalNoiseEstimate: "noise_estimate", graph.SignalSpectralSubtraction: "spectral_subtraction",
		graph.SignalPCAN: "pcan", graph.SignalFilterBankLog: "filter_bank_log"}[n.Op]
	put := func(i, v Expr) Stmt { return Put(y, CastTo(yt.DType, v), i) }
	ix := func(b *Buffer, i Expr) Expr { return CastTo(I32, At(b, i)) }
	wide := func(e Expr) Expr { return CastTo(I64, e) }
	switch n.Op {
	case graph.SignalFilterBank:
		a, ok := n.Attrs.(*graph.SignalFilterBankAttrs)
		if !ok || a == nil || a.Channels != c {
			return nil, k.errorf("needs *graph.SignalFilterBankAttrs of %d channels", c)
		}
		w, uw, fs, ws, wd := k.in(1), k.in(2), k.in(3), k.in(4), k.in(5)
		wdt := k.g.In(n, 5)
		if wdt == nil || !wdt.IsConst() {
			return nil, k.errorf("the channel widths must be constant")
		}
		maxW := 0
		for _, v := range wdt.Data.I[:c+1] {
			maxW = max(maxW, int(v))
		}
		// Output k sums channel k + 1's weights and channel k's
		// unweights (TFLite Micro's carried accumulator).
		return Loop("k", c, func(ch Expr) Stmt {
			return Scalar("acc", I64, func(acc *Buffer) Stmt {
				sum := func(tab *Buffer, ch Expr) Stmt {
					return Loop("j", maxW, func(j Expr) Stmt {
						term := Call(IntrSigFBTerm, I64, At(acc), At(tab, Add(ix(ws, ch), j)), wide(At(x, Add(ix(fs, ch), j))))
						return If(LT(j, ix(wd, ch)), Put(acc, term))
					})
				}
				return Block(
					Put(acc, Imm(I64, 0)),
					sum(w, Add(ch, C(1))),
					sum(uw, ch),
					put(ch, At(acc)),
				)
			})
		}), nil
	case graph.SignalFilterBankSqrt:
		st := k.g.In(n, 1)
		s := k.in(1)
		idx := make([]Expr, len(st.Shape))
		for i := range idx {
			idx[i] = C(0)
		}
		shift := At(s, idx...)
		return Loop("k", c, func(i Expr) Stmt {
			return put(i, Call(IntrSigFBSqrt, I64, wide(At(x, i)), CastTo(I32, shift)))
		}), nil
	case graph.SignalNoiseEstimate, graph.SignalSpectralSubtraction:
		a, ok := n.Attrs.(*graph.SignalSpectralSubtractionAttrs)
		if !ok || a == nil {
			return nil, k.errorf("missing *graph.SignalSpectralSubtractionAttrs")
		}
		e := k.in(1)
		i64 := func(v int64) Expr { return Imm(I64, v) }
		if n.Op == graph.SignalSpectralSubtraction {
			return Loop("k", c, func(i Expr) Stmt {
				return put(i, Call(IntrSigSubtract, I64, wide(At(x, i)), wide(At(e, i)), i64(int64(a.MinSignalRemaining)),
					C(int64(a.SmoothingBits)), C(int64(a.SpectralSubtractionBits))))
			}), nil
		}
		clamp := int64(0)
		if a.Clamping {
			clamp = 1
		}
		// Even channels smooth with one pair of coefficients, odd ones
		// with the alternate pair: a loop for each.
		half := func(first, count int, s, om uint32) Stmt {
			if count == 0 {
				return nil
			}
			return Loop("k", count, func(j Expr) Stmt {
				i := Add(Mul(j, C(2)), C(int64(first)))
				return put(i, Call(IntrSigNoise, I64, wide(At(x, i)), wide(At(e, i)), i64(int64(s)), i64(int64(om)),
					C(int64(a.SmoothingBits)), C(int64(a.SpectralSubtractionBits)), C(clamp)))
			})
		}
		return Block(
			half(0, (c+1)/2, a.Smoothing, a.OneMinusSmoothing),
			half(1, c/2, a.AlternateSmoothing, a.AlternateOneMinusSmoothing),
		), nil
	case graph.SignalPCAN:
		a, ok := n.Attrs.(*graph.SignalPCANAttrs)
		if !ok || a == nil {
			return nil, k.errorf("missing *graph.SignalPCANAttrs")
		}
		e, lut := k.in(1), k.in(2)
		if len(lut.Shape) != 1 {
			return nil, k.errorf("the gain table must be 1-D")
		}
		return Loop("k", c, func(i Expr) Stmt {
			return Let("idx", Call(IntrSigPCANIdx, I32, wide(At(e, i))), func(idx Expr) Stmt {
				gain := Call(IntrSigPCANGain, I32, wide(At(e, i)), At(lut, idx), At(lut, Add(idx, C(1))), At(lut, Add(idx, C(2))))
				return put(i, Call(IntrSigPCANOut, I64, wide(At(x, i)), gain, C(int64(a.SNRShift))))
			})
		}), nil
	case graph.SignalFilterBankLog:
		a, ok := n.Attrs.(*graph.SignalFilterBankLogAttrs)
		if !ok || a == nil {
			return nil, k.errorf("missing *graph.SignalFilterBankLogAttrs")
		}
		return Loop("k", c, func(i Expr) Stmt {
			return put(i, Call(IntrSigFBLog, I32, wide(At(x, i)), C(int64(int32(a.OutputScale))), C(int64(a.CorrectionBits))))
		}), nil
	}
	return nil, k.errorf("not a signal filter bank op")
}
