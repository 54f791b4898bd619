package interp

import (
	"fmt"
	"math/bits"

	"github.com/mcugen/mcugen/graph"
)

func init() { Register(graph.SignalFftAutoScale, IntClass, signalFftAutoScale) }

// signalFftAutoScale is TFLite Micro's SignalFftAutoScale
// (signal/src/fft_auto_scale.cc): the input times 2^s, or with Bits s
// itself, where s = 15 − msb(max |x|), and 0 when that is not positive.
func signalFftAutoScale(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalFftAutoScaleAttrs)
	if !ok || a == nil || len(in) != 1 {
		return nil, fmt.Errorf("needs SignalFftAutoScaleAttrs")
	}
	x := in[0]
	var m int16
	for _, v := range x.I {
		m = MaxAbsStep(m, int16(v))
	}
	s := FftScaleBits(m)
	if a.Bits {
		out := g.Out(n, 0)
		y := graph.NewData(graph.Int32, out.Shape)
		y.I[0] = int64(s)
		return []*graph.Data{y}, nil
	}
	y := graph.NewData(graph.Int16, x.Shape)
	for i, v := range x.I {
		y.I[i] = int64(int16(v << s))
	}
	return []*graph.Data{y}, nil
}

// MaxAbsStep is one step of TFLite Micro's MaxAbs16 (signal/src/max_abs.cc,
// the portable loop): v replaces m when v > m, or −v when −v > m, stored as
// int16 (so −32768 gives −32768, below every later value).
func MaxAbsStep(m, v int16) int16 {
	switch {
	case v > m:
		return v
	case -int32(v) > int32(m):
		return int16(-int32(v))
	}
	return m
}

// FftScaleBits is 16 − MostSignificantBit32(uint32(m)) − 1, at least 0,
// with TFLite Micro's GCC build's msb of 0 being 32 (signal/src/msb_32.cc).
func FftScaleBits(m int16) int {
	u := uint32(int32(m))
	msb := 32
	if u != 0 {
		msb = 32 - bits.LeadingZeros32(u)
	}
	return max(15-msb, 0)
}
