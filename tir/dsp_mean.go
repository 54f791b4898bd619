package tir

// scheduleMeanDSP is TFLite's int8 MEAN over the axes of a window of
// each channel (a global average at a network's head: MEAN over H and
// W, as TensorFlow's converter writes GlobalAveragePooling2D): the
// channels' sums four at a time through the SIMD sum pool's helper
// (IntrSumPool's dsp form, SXTAB16 adds in int16 lanes), then each
// output's requantization as one SMLAL (fastRequant) instead of TFLite's
// two roundings in portable C. Where the sum pool's match fails (channels
// not contiguous, more than two reduced loops) the layer keeps the
// generic loops, as before. Measured on mps2-an386: MEAN over 7×7×96
// 24,230 → 8,216 instructions, over 3×3×576 31,718 → 19,088.
func scheduleMeanDSP(f *PrimFunc) (*PrimFunc, error) { return simdMean("dsp", IntrDSPRequant)(f) }

// simdMean is scheduleMeanDSP for the target whose sum pool helper is
// prefix's (the M55's and the Cortex-A's vector forms), requantizing with
// rq (IntrDSPRequant, or its portable twin IntrRequantFast where the core
// has no DSP extension).
func simdMean(prefix, rq string) ScheduleFunc {
	return func(f *PrimFunc) (*PrimFunc, error) {
		if floatKernel(f) || knob(f, "simd", 1) == 0 {
			return f, nil
		}
		// int8 in and out only: the helpers sum int8 lanes (TFLite's int16
		// MEAN keeps the loops).
		for _, p := range f.Params {
			if p.DType != I8 {
				f.Knobs["simd"] = 0
				return f, nil
			}
		}
		g, err := simdPoolKind(f, prefix, false)
		if err != nil {
			f.Knobs["simd"] = 0
			return f, nil
		}
		// Windows of fewer than four taps (a global average over a 1×1
		// or 1×2 map, a MEAN over a batch of two) and channels under a
		// vector cost more through the helper's array and second loop than
		// they save (a review: a 1×1×1280 MEAN 23,078 → 30,482).
		taps, chans := int64(0), int64(0)
		VisitExprs(g.Body, func(e Expr) {
			if in, ok := e.(*Intrinsic); ok && in.Name == prefix+"_"+KSumPool {
				kh, _ := IsConst(in.Args[4])
				kw, _ := IsConst(in.Args[5])
				taps = kh * kw
				chans, _ = IsConst(in.Args[6])
			}
		})
		minC := int64(4)
		if prefix == "neon" {
			minC = 8
		}
		if taps < 4 || chans < minC {
			f.Knobs["simd"] = 0
			return f, nil
		}
		g.Knobs["simd"] = 1
		g.Body = RewriteStmt(g.Body, func(s Stmt) Stmt {
			if st, ok := s.(*Store); ok && st.Buf.Scope == ScopeParam {
				return fastRequantAs(st, rq, nil)
			}
			return s
		}, nil)
		return g, nil
	}
}
