package tir

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// Hand-worked channel plans: the runs of live channels in blocks of c,
// then (c = 4) a pair where two or three are left, then singles, each
// block's packed index counting only live channels.
func TestChannelBlocks(t *testing.T) {
	dead := func(cout int, ds ...int) []bool {
		d := make([]bool, cout)
		for _, i := range ds {
			d[i] = true
		}
		return d
	}
	for _, c := range []struct {
		cout, c int
		dead    []bool
		want    []gemmBlock
	}{
		{5, 2, nil, []gemmBlock{{2, 0, 2, 0}, {1, 4, 1, 4}}},
		{9, 2, dead(9, 2, 3, 6), []gemmBlock{{2, 0, 1, 0}, {2, 4, 1, 2}, {2, 7, 1, 4}}},
		{8, 4, dead(8, 1), []gemmBlock{{1, 0, 1, 0}, {4, 2, 1, 1}, {2, 6, 1, 5}}},
		{7, 4, nil, []gemmBlock{{4, 0, 1, 0}, {2, 4, 1, 4}, {1, 6, 1, 6}}},
		{2, 4, nil, []gemmBlock{{2, 0, 1, 0}}},
		{4, 2, dead(4, 0, 1, 2, 3), nil},
		{6, 4, dead(6, 5), []gemmBlock{{4, 0, 1, 0}, {1, 4, 1, 4}}},
	} {
		if got := channelBlocks(c.cout, c.c, c.dead); !reflect.DeepEqual(got, c.want) {
			t.Errorf("cout %d c %d dead %v: %v, want %v", c.cout, c.c, c.dead, got, c.want)
		}
	}
}

// refBlock is the block of channel oc when every channel is live: c wide
// from oc/c·c, or past the last whole block a pair (c = 4, two or three
// left) and then single channels.
func refBlock(oc, cout, c int) (bc, oc0 int) {
	full := cout / c * c
	switch {
	case oc < full:
		return c, oc / c * c
	case c == 4 && cout-full >= 2 && oc < full+2:
		return 2, full
	}
	return 1, oc
}

// refPack16 and refPack8 are the layouts the micro-kernels read, written
// out per channel (refBlock's blocks; word 2·bc·g + 2j + h holds k = 4g+h and 4g+h+2 of the j-th
// channel of its block; bytes 4·bc·(k/4) + 4j + k%4 for int8).
func refPack16(w []int64, cout, K, k4, c int) []int64 {
	out := make([]int64, cout*k4/2)
	at := func(oc, k int) int64 {
		if k >= K {
			return 0
		}
		return w[oc*K+k]
	}
	for oc := 0; oc < cout; oc++ {
		bc, oc0 := refBlock(oc, cout, c)
		j := oc - oc0
		for g := 0; g < k4/4; g++ {
			for h := 0; h < 2; h++ {
				out[oc0*k4/2+2*bc*g+2*j+h] = pack16(at(oc, 4*g+h), at(oc, 4*g+h+2))
			}
		}
	}
	return out
}

func refPack8(w []int64, cout, K, k4, c int) []int64 {
	out := make([]int64, cout*k4)
	for oc := 0; oc < cout; oc++ {
		bc, oc0 := refBlock(oc, cout, c)
		for k := 0; k < K; k++ {
			out[oc0*k4+4*bc*(k/4)+4*(oc-oc0)+k%4] = w[oc*K+k]
		}
	}
	return out
}

// With every channel live, packBlocks (DSPPackWeights, DSPPackWeights8) is
// the reference layout; with dead channels it drops their weights and keeps
// every live channel's where its block says.
func TestPackBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, c := range []struct{ cout, K, k4, c int }{{7, 9, 12, 2}, {8, 16, 16, 4}, {5, 4, 8, 1}, {3, 27, 32, 2}, {7, 12, 12, 4}, {6, 8, 8, 4}} {
		w := make([]int64, c.cout*c.K)
		for i := range w {
			w[i] = int64(r.Intn(255) - 127)
		}
		all := channelBlocks(c.cout, c.c, nil)
		if got, want := packBlocks(w, c.K, c.k4, all, false), refPack16(w, c.cout, c.K, c.k4, c.c); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: int16 layout differs", c)
		}
		if got, want := packBlocks(w, c.K, c.k4, all, true), refPack8(w, c.cout, c.K, c.k4, c.c); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: int8 layout differs", c)
		}
		dead := make([]bool, c.cout)
		dead[1] = true
		blocks := channelBlocks(c.cout, c.c, dead)
		p := packBlocks(w, c.K, c.k4, blocks, false)
		if len(p) != (c.cout-1)*c.k4/2 {
			t.Fatalf("%+v: %d words for %d live channels", c, len(p), c.cout-1)
		}
		g := &gemmSpec{Cout: c.cout, C: c.c, K4: c.k4, dead: dead, w: &Buffer{Data: &graph.Data{I: p}}}
		for oc := 0; oc < c.cout; oc++ {
			if dead[oc] {
				continue
			}
			// chanWeights gives each pair word's (lo, hi): word 2g+h holds
			// k = 4g+h and 4g+h+2.
			got := g.chanWeights(oc)
			at := func(k int) int64 {
				if k < c.K {
					return w[oc*c.K+k]
				}
				return 0
			}
			for word := 0; word < c.k4/2; word++ {
				k := 4*(word/2) + word%2
				if got[2*word] != at(k) || got[2*word+1] != at(k+2) {
					t.Fatalf("%+v: channel %d word %d = (%d, %d), want (%d, %d)", c, oc, word, got[2*word], got[2*word+1], at(k), at(k+2))
				}
			}
		}
	}
}

// Convolutions with channels of all-zero weights keep their results in every
// dsp form (pointwise, im2col, row-widened, fused or not, int8 weights, with
// and without a fused ReLU) wherever the dead channels are, and their packed
// weights hold only the live channels.
func TestDSPDeadChannelsKeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	patterns := map[string][]int{"first": {0}, "last": {7}, "scattered": {1, 4, 6}, "runs": {0, 1, 2, 5, 6}, "one-live": {0, 1, 2, 3, 4, 5, 7}, "all": {0, 1, 2, 3, 4, 5, 6, 7}}
	names := []string{"first", "last", "scattered", "runs", "one-live", "all"}
	for _, pn := range names {
		for _, sh := range []struct {
			h, w, cin, k, stride, pad int
			knobs                     map[string]int
		}{
			{3, 5, 8, 1, 1, 0, nil},                            // pointwise
			{3, 5, 8, 1, 1, 0, map[string]int{"gemm_fuse": 0}}, // pointwise, channel loop unfused
			{3, 4, 8, 1, 1, 0, map[string]int{"weights": 8}},
			{3, 4, 8, 1, 1, 0, map[string]int{"block_oc": 4, "block_px": 1}},
			{5, 5, 4, 3, 1, 1, map[string]int{"conv_rows": 1}},
			{5, 5, 4, 3, 2, 1, map[string]int{"conv_rows": 0}},
			{5, 6, 3, 3, 2, 1, nil}, // RGB, gathered rows
		} {
			for _, act := range []graph.Activation{graph.ActRelu, graph.ActNone} {
				name := fmt.Sprintf("%s_%dx%dx%d_k%d_s%d_%v_act%v", pn, sh.h, sh.w, sh.cin, sh.k, sh.stride, sh.knobs, act)
				g, n := int8ConvHW(r, sh.h, sh.w, sh.cin, 8, sh.k, sh.stride, sh.pad, -3, false)
				n.Attrs.(*graph.Conv2DAttrs).Act = act
				wd := g.Tensors["w"].Data
				per := len(wd.I) / 8
				for _, oc := range patterns[pn] {
					for k := 0; k < per; k++ {
						wd.I[oc*per+k] = 0
					}
				}
				f, s := dspKernel(t, g, n, sh.knobs)
				sameResult(t, name, f, s)
				live := 8 - len(patterns[pn])
				if got := weightElems(s); live == 0 && got != 0 {
					t.Errorf("%s: packed weights %d elements with no live channel", name, got)
				}
				if !strings.Contains(s.String(), "k_dead") {
					t.Errorf("%s: no constant row for the dead channels", name)
				}
				// Off: every channel computed.
				knobs := map[string]int{"skip_dead": 0, "small_k": 0} // the same GEMM, every channel
				for k, v := range sh.knobs {
					knobs[k] = v
				}
				s0 := dspSchedule(t, computeFunc(t, g, n), knobs)
				sameResult(t, name+"_off", f, s0)
				if live > 0 && weightElems(s0)*live != weightElems(s)*8 {
					t.Errorf("%s: %d weight elements with every channel, %d with %d live", name, weightElems(s0), weightElems(s), live)
				}
			}
		}
	}
}

// weightElems is the size of the schedule's packed weight buffer.
func weightElems(f *PrimFunc) int {
	n := 0
	seen := map[*Buffer]bool{}
	VisitExprs(f.Body, func(e Expr) {
		var b *Buffer
		switch x := e.(type) {
		case *Ptr:
			b = x.Buf
		case *Load:
			b = x.Buf
		}
		if b != nil && !seen[b] && b.Scope == ScopeConst && strings.Contains(b.Name, "_weights_s") {
			seen[b] = true
			n += b.Len()
		}
	})
	return n
}

// SplitDeadTail on a convolution and a fully connected layer whose last
// channels are dead: the same results, the live loop shortened to the live
// channels with their weights only, and after every target's schedule
// (generic blocking, the MVE and NEON tensorized kernels, dsp) still the
// same results.
func TestSplitDeadTail(t *testing.T) {
	for _, c := range []struct {
		tail string
		dead []int
	}{
		{"conv", []int{5, 6, 7}},
		{"conv", []int{7}},
		{"conv", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"fc", []int{1, 2, 3}}, // the FC's own rows: none dead, its input reordered
	} {
		g := tirtest.DeadChain(9, c.dead, c.tail)
		n := g.Nodes[0]
		if c.tail == "fc" {
			n = g.Nodes[len(g.Nodes)-1]
			w := g.Tensors[n.Inputs[1]].Data
			for k := 0; k < 8; k++ {
				w.I[3*8+k] = 0 // FC row 3 (of 4) dead: a tail of one
			}
		}
		name := fmt.Sprintf("%s_dead%v", c.tail, c.dead)
		f := Finalize(computeFunc(t, g, n))
		s := SplitDeadTail(computeFunc(t, g, n))
		if !strings.Contains(s.String(), "_dead") {
			t.Fatalf("%s: no dead tail:\n%s", name, s)
		}
		sameResult(t, name+"_split", f, Finalize(s))
		for _, tg := range []*Target{Generic, MVE, NEON, DSP} {
			k, err := tg.schedule(computeFunc(t, g, n))
			if err != nil {
				t.Fatalf("%s %s: %v", name, tg.Name, err)
			}
			sameResult(t, name+"_"+tg.Name, f, Finalize(k))
			if (tg == MVE || tg == NEON) && len(c.dead) < 8 && k.Knobs["simd"] != 1 {
				t.Errorf("%s %s: the live loop fell back to the generic schedule", name, tg.Name)
			}
		}
	}
	// A multiple of four live channels: 8 channels with the last three dead
	// keep 8 (the split would leave 5 live), with the last one dead keep 8
	// too; with all dead, none (0 is a multiple). DeadChain's convolution
	// has 8 output channels.
	for _, c := range []struct {
		dead []int
		live int64 // -1: no split
	}{{[]int{5, 6, 7}, -1}, {[]int{7}, -1}, {[]int{0, 1, 2, 3, 4, 5, 6, 7}, 0}, {[]int{4, 5, 6, 7}, 4}} {
		g := tirtest.DeadChain(9, c.dead, "conv")
		f := computeFunc(t, g, g.Nodes[0])
		s := SplitDeadTailMultiple(f, 4)
		if c.live < 0 {
			if s != f {
				t.Errorf("dead %v: split though the live channels round up to all", c.dead)
			}
			continue
		}
		if s.DeadChannels != int(8-c.live) {
			t.Errorf("dead %v: %d channels split off, want %d", c.dead, s.DeadChannels, 8-c.live)
		}
		sameResult(t, fmt.Sprintf("dead%v_mult4", c.dead), Finalize(computeFunc(t, g, g.Nodes[0])), Finalize(s))
	}
	// No dead tail (a dead channel before a live one): unchanged.
	g := tirtest.DeadChain(9, []int{2}, "conv")
	if f := computeFunc(t, g, g.Nodes[0]); SplitDeadTail(f) != f {
		t.Error("split without a dead tail")
	}
}

// Fully connected layers with dead output rows keep their results on dsp,
// every row dead or some, int16 or int8 weights, and pack only the live rows.
func TestDSPDeadRowsFC(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	for _, c := range []struct {
		rows, k, n int
		dead       []int
		knobs      map[string]int
	}{
		{2, 16, 10, []int{0, 3, 4, 9}, nil},
		{3, 12, 9, []int{8}, map[string]int{"gemm_fuse": 0}},
		{1, 20, 6, []int{1, 2}, map[string]int{"weights": 8}},
		{2, 8, 4, []int{0, 1, 2, 3}, nil},
	} {
		g, n := int8FC(r, c.rows, c.k, c.n, -5)
		w := g.Tensors[n.Inputs[1]].Data
		for _, j := range c.dead {
			for k := 0; k < c.k; k++ {
				w.I[j*c.k+k] = 0
			}
		}
		name := fmt.Sprintf("fc_%dx%dx%d_dead%v_%v", c.rows, c.k, c.n, c.dead, c.knobs)
		f, s := dspKernel(t, g, n, c.knobs)
		sameResult(t, name, f, s)
		knobs := map[string]int{"skip_dead": 0}
		for k, v := range c.knobs {
			knobs[k] = v
		}
		s0 := dspSchedule(t, computeFunc(t, g, n), knobs)
		live := c.n - len(c.dead)
		if weightElems(s0)*live != weightElems(s)*c.n {
			t.Errorf("%s: %d weight elements with every row, %d with %d live", name, weightElems(s0), weightElems(s), live)
		}
	}
}

// Pointwise convolutions over 4, 8 and 16 input channels default to two
// pixels by two channels (session 6: the LDM 2x2 block beats session 4's
// one by four for K <= 8) and keep their results.
func TestDSPSmallKBlockDefault(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for _, c := range []struct{ cin, px, oc int }{{8, 2, 2}, {4, 2, 2}, {16, 2, 2}} {
		g, n := int8ConvHW(r, 4, 6, c.cin, 12, 1, 1, 0, -3, false)
		f, s := dspKernel(t, g, n, nil)
		if s.Knobs["block_px"] != c.px || s.Knobs["block_oc"] != c.oc {
			t.Errorf("cin %d: block %dx%d, want %dx%d", c.cin, s.Knobs["block_px"], s.Knobs["block_oc"], c.px, c.oc)
		}
		sameResult(t, fmt.Sprintf("pointwise cin %d", c.cin), f, s)
	}
}
