package tir

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Flash-lean dsp micro-kernels (knob dsp.weights = 8): the weights stay
// int8 in flash and are widened in registers, as CMSIS-NN does, at the
// cost of two SXTB16 per four weights.
//
// The int8 layout holds, byte for byte, the values DSPPackWeights puts in
// its pair words, in the same channel blocks and interleave: channel j of a
// block of C, group g of four k (k = 4g..4g+3) is the four bytes
// w[4C·g + 4j .. 4C·g + 4j + 3] = w[k] in k order, where the int16 layout
// has the two words 2C·g + 2j + h. One LDR of those four bytes then gives
// both pair words: SXTB16 takes bytes 0 and 2, (w[4g], w[4g+2]), the h = 0
// word, and SXTB16 of the word rotated by 8 takes bytes 1 and 3,
// (w[4g+1], w[4g+3]), the h = 1 word; they pair with the activations'
// words (x0, x2), (x1, x3) that IntrDSPWiden makes. Word i of the int16
// layout is thus bytes 2i, 2i+2 (even i) or 2i−1, 2i+1 (odd i), and a
// channel block starting at oc0 begins at byte oc0·k4.

// DSPMacW8Name is DSPMacName with int8 weights:
//
//	dsp_mac_s8w_RxC_uU(acc *int32, x *int32, xs, w *int8, n), n % (2U) == 0:
//	acc[i·C + j] += Σ_{g < n/2} Σ_{h<2} dot2(x[i·xs + 2g + h], pack16(w[4C·g + 4j + h], w[4C·g + 4j + h + 2]))
func DSPMacW8Name(r, c, u int) string { return fmt.Sprintf("dsp_mac_s8w_%dx%d_u%d", r, c, u) }

// DSPGemmW8Name is DSPGemmName with int8 weights: block b's weights start
// at byte b·C·2n (2n bytes, n pair words of activations, per channel),
// laid out as DSPMacW8Name reads them:
//
//	dsp_gemm_s8pr_s8w_RxC_uU(y *int8, ys, x *int32, xs, w *int8, n, p *int32, nb, zr, lo, hi)
func DSPGemmW8Name(r, c, u int) string { return fmt.Sprintf("dsp_gemm_s8pr_s8w_%dx%d_u%d", r, c, u) }

// w8Pair is the pair word h of channel j, group g of an int8 weight block
// of c channels at w: what word 2c·g + 2j + h of the int16 layout holds.
// It panics on a buffer that is not int8 (the int16 layout passed where
// the int8 one is wanted).
func w8Pair(name string, w val, c, g, j, h int64) int64 {
	if w.p == nil || w.p.DType != graph.Int8 {
		panic(name + ": weights are not int8")
	}
	at := w.i + 4*c*g + 4*j + h
	return pack16(w.p.I[at], w.p.I[at+2])
}

func init() {
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			r, c := int64(b[0]), int64(b[1])
			name := DSPMacW8Name(b[0], b[1], u)
			extIntrinsics[name] = macIntrinsic(name, r, c, u, func(w val, c, g, j, h int64) int64 { return w8Pair(name, w, c, g, j, h) })
			gname := DSPGemmW8Name(b[0], b[1], u)
			extIntrinsics[gname] = gemmIntrinsic(gname, r, c, u, 2, func(w val, c, g, j, h int64) int64 { return w8Pair(gname, w, c, g, j, h) })
		}
	}
}

// DSPPackWeights8 lays out int8 weights w[oc][k] for DSPMacW8Name kernels:
// DSPPackWeights' channel blocks and interleave, as bytes (see above), K
// padded with zeros to k4.
func DSPPackWeights8(w []int64, cout, K, k4, c int) []int64 {
	return packBlocks(w, K, k4, channelBlocks(cout, c, nil), true)
}

// chanWeights returns output channel oc's k4 weights (zero padded) from the
// packed buffer, in either layout.
func (g *gemmSpec) chanWeights(oc int) []int64 {
	out := make([]int64, 0, g.K4)
	if g.w4 {
		base, bc, j, _ := blockOf(g.blocks(), oc)
		for k := 0; k < g.K4; k++ {
			G, b := k/8, k%8
			out = append(out, unibble(g.w.Data.I[base*g.K4/2+4*bc*G+4*j+b%4], int64(b/4))-8)
		}
		return out
	}
	if g.w8 {
		base, bc, j, _ := blockOf(g.blocks(), oc)
		for k := 0; k < g.K4; k++ {
			out = append(out, g.w.Data.I[base*g.K4+4*bc*(k/4)+4*j+k%4])
		}
		return out
	}
	for k := 0; k < g.K4/2; k++ {
		wv := g.w.Data.I[g.wordOf(oc, k)]
		out = append(out, int64(int16(wv)), int64(int16(wv>>16)))
	}
	return out
}

// macName and gemmName are the micro-kernel and fused-loop helpers for the
// spec's weight layout; wElems is how many weight elements a channel
// takes (pair words, or bytes for int8 weights).
func (g *gemmSpec) macName(r, c, u int) string {
	if g.w4 {
		return DSPMacW4Name(r, c, u)
	}
	if g.w8 {
		return DSPMacW8Name(r, c, u)
	}
	return DSPMacName(r, c, u)
}

func (g *gemmSpec) gemmName(r, c, u int) string {
	if g.w8 {
		return DSPGemmW8Name(r, c, u)
	}
	return DSPGemmName(r, c, u)
}

func (g *gemmSpec) wElems() int {
	if g.w4 {
		return g.K4 / 2 // bytes of two nibbles
	}
	if g.w8 {
		return g.K4
	}
	return g.K4 / 2
}

// dspWeights packs a conv/FC weight matrix for knob weights (16: int16 pair
// words, DSPPackWeights; 8: int8, DSPPackWeights8; 4: packed int4,
// packBlocks4, k4 then a multiple of 8), without the dead channels'
// (packBlocks) when dead is not nil.
func dspWeights(f *PrimFunc, w []int64, cout, K, k4, c, bits int, dead []bool) (*Buffer, error) {
	if bits != 16 && slices.ContainsFunc(w, func(v int64) bool { return v < -128 || v > 127 }) {
		return nil, fmt.Errorf("tir: %s: knob weights = %d, but the weights less their zero point exceed int8", f.Name, bits)
	}
	if bits == 4 {
		p := packBlocks4(w, K, k4, channelBlocks(cout, c, dead))
		return constBuf(f.Name+"_weights_s4", graph.Int8, []int{len(p)}, p), nil
	}
	if dead != nil && (bits == 8 || bits == 16) {
		p := packBlocks(w, K, k4, channelBlocks(cout, c, dead), bits == 8)
		if bits == 8 {
			return constBuf(f.Name+"_weights_s8", graph.Int8, []int{len(p)}, p), nil
		}
		return constBuf(f.Name+"_weights_s16", I32, []int{len(p)}, p), nil
	}
	switch bits {
	case 16:
		return constBuf(f.Name+"_weights_s16", I32, []int{cout * k4 / 2}, DSPPackWeights(w, cout, K, k4, c)), nil
	case 8:
		return constBuf(f.Name+"_weights_s8", graph.Int8, []int{cout * k4}, DSPPackWeights8(w, cout, K, k4, c)), nil
	}
	return nil, fmt.Errorf("tir: %s: knob weights = %d (want 16, 8, or 4 for a fully connected layer)", f.Name, bits)
}
