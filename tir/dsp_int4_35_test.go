package tir

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// int4Weights sets a node's weights to random values in [−8, 7], the
// extremes among them.
func int4Weights(r *rand.Rand, g *graph.Graph) {
	w := g.Tensor("w").Data
	for i := range w.I {
		w.I[i] = []int64{-8, 7, int64(r.Intn(16) - 8)}[r.Intn(3)]
	}
}

// The packed layout: every channel's k8 weights come back from the bytes,
// nibble by nibble, for blocks, single-channel tails and padded K.
func TestDSPPackWeights4(t *testing.T) {
	r := rand.New(rand.NewSource(35))
	for _, c := range []struct{ cout, K, c int }{{1, 5, 4}, {7, 9, 4}, {5, 27, 2}, {3, 3, 1}, {6, 16, 4}, {9, 640, 4}} {
		K8 := (c.K + 7) / 8 * 8
		w := make([]int64, c.cout*c.K)
		for i := range w {
			w[i] = int64(r.Intn(16) - 8)
		}
		p := DSPPackWeights4(w, c.cout, c.K, K8, c.c)
		if len(p) != c.cout*K8/2 {
			t.Fatalf("%v: %d bytes", c, len(p))
		}
		wb := constBuf("w", graph.Int8, []int{len(p)}, p)
		g := &gemmSpec{C: c.c, K4: K8, Cout: c.cout, w: wb, w4: true}
		for oc := 0; oc < c.cout; oc++ {
			got := g.chanWeights(oc)
			for k := 0; k < K8; k++ {
				want := int64(0)
				if k < c.K {
					want = w[oc*c.K+k]
				}
				if got[k] != want {
					t.Fatalf("%v: channel %d k %d = %d, want %d", c, oc, k, got[k], want)
				}
			}
		}
		for _, b := range p {
			if b < -128 || b > 127 {
				t.Fatalf("%v: byte %d", c, b)
			}
		}
	}
}

// The int4 micro-kernels give the int8 ones' sums on the same weights plus
// 8·Σx of the row (the weights are stored plus 8: the schedule starts the
// accumulators that much lower, from IntrDSPSumPairs), at the extremes
// (weights −8 and 7, activations at ±255), for every block shape and even
// unroll; they panic on an n that is not whole words.
func TestDSPMacW4Intrinsics(t *testing.T) {
	r := rand.New(rand.NewSource(36))
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			if u%2 != 0 {
				if _, ok := extIntrinsics[DSPMacW4Name(b[0], b[1], u)]; ok {
					t.Fatalf("%s: an odd unroll has a semantics", DSPMacW4Name(b[0], b[1], u))
				}
				continue
			}
			R, Cc := b[0], b[1]
			n := 2 * u * 2
			K := 2 * n
			nb := 2
			cout := nb * Cc
			w := make([]int64, cout*K)
			for i := range w {
				w[i] = []int64{-8, 7, int64(r.Intn(16) - 8)}[r.Intn(3)]
			}
			w8 := &graph.Data{DType: graph.Int8, Shape: []int{cout * K}, I: DSPPackWeights8(w, cout, K, K, Cc)}
			w4 := &graph.Data{DType: graph.Int8, Shape: []int{cout * K / 2}, I: DSPPackWeights4(w, cout, K, K, Cc)}
			x := graph.NewData(graph.Int32, []int{R * n})
			for i := range x.I {
				x.I[i] = pack16([]int64{-255, 255, int64(r.Intn(511) - 255)}[r.Intn(3)], []int64{-255, 255, -1, 1}[r.Intn(4)])
			}
			for bl := 0; bl < nb; bl++ {
				a8 := graph.NewData(graph.Int32, []int{R * Cc})
				a4 := graph.NewData(graph.Int32, []int{R * Cc})
				for i := range a8.I {
					a8.I[i], a4.I[i] = int64(i*1000-7), int64(i*1000-7)
				}
				extIntrinsics[DSPMacW8Name(R, Cc, u)]([]val{{p: a8}, {p: x}, {i: int64(n)}, {p: w8, i: int64(bl * Cc * K)}, {i: int64(n)}})
				extIntrinsics[DSPMacW4Name(R, Cc, u)]([]val{{p: a4}, {p: x}, {i: int64(n)}, {p: w4, i: int64(bl * Cc * K / 2)}, {i: int64(n)}})
				for i := range a8.I {
					sum := extIntrinsics[IntrDSPSumPairs]([]val{{p: x, i: int64(i / Cc * n)}, {i: int64(n)}}).i
					if a4.I[i] != a8.I[i]+8*sum {
						t.Fatalf("%s block %d: acc[%d] = %d, int8 weights give %d + 8·%d", DSPMacW4Name(R, Cc, u), bl, i, a4.I[i], a8.I[i], sum)
					}
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with n = %d: no panic", DSPMacW4Name(R, Cc, u), 2*u+2)
					}
				}()
				extIntrinsics[DSPMacW4Name(R, Cc, u)]([]val{{p: graph.NewData(graph.Int32, []int{R * Cc})}, {p: x}, {i: int64(n)}, {p: w4}, {i: int64(2*u + 2)}})
			}()
		}
	}
}

// Fully connected layers with weights = 4 compute what the unscheduled
// definition does (bit for bit, the reference's arithmetic), on random and
// extreme inputs, for K a multiple of 8 and not (staged rows), odd output
// counts (single-channel tails), one and several rows, ReLU or not, dead
// channels; they keep only packed int4 weights, half the int8 bytes. Weights
// outside [−8, 7] take int8 weights instead, and the knob says so.
func TestDSPWeights4FullyConnected(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	for _, c := range []struct {
		rows, k, n int
		knobs      map[string]int
		dead       bool
	}{
		{1, 64, 12, nil, false}, {1, 40, 7, nil, false}, {3, 24, 9, nil, false}, {1, 10, 5, nil, false}, {2, 13, 3, nil, false},
		{1, 640, 9, nil, false}, {1, 1, 3, nil, false}, {1, 4, 1, nil, false}, {2, 36, 11, nil, true},
		{2, 16, 8, map[string]int{"block_rows": 2, "block_oc": 2}, false},
		{3, 33, 7, map[string]int{"block_rows": 2, "block_oc": 1}, false},
		{1, 32, 6, map[string]int{"block_oc": 1, "unroll_k": 1}, false},
		{1, 128, 5, map[string]int{"block_oc": 2, "unroll_k": 8}, true},
	} {
		for _, relu := range []bool{false, true} {
			kn := map[string]int{"weights": 4}
			for k, v := range c.knobs {
				kn[k] = v
			}
			name := fmt.Sprintf("fc_rows%d_k%d_n%d_relu%v_dead%v_%v", c.rows, c.k, c.n, relu, c.dead, kn)
			g, nd := int8FC(r, c.rows, c.k, c.n, 11)
			if relu {
				g.Tensor("y").Quant.ZeroPoint = []int32{-128}
				wq := g.Tensor("w").Quant
				wq.Scale, wq.ZeroPoint = make([]float32, c.n), make([]int32, c.n)
				for i := range wq.Scale {
					wq.Scale[i] = 0.02 + 0.04*r.Float32()
				}
			}
			int4Weights(r, g)
			if c.dead {
				w := g.Tensor("w").Data
				for _, oc := range []int{0, c.n / 2} {
					for k := 0; k < c.k; k++ {
						w.I[oc*c.k+k] = 0
					}
				}
			}
			f, s := dspKernel(t, g, nd, kn)
			if !usesIntrinsic(s, "dsp_mac_s4w_") {
				t.Fatalf("%s: no int4-weight kernel:\n%s", name, s)
			}
			if usesIntrinsic(s, "dsp_mac_s16") || usesIntrinsic(s, "dsp_mac_s8w") || usesIntrinsic(s, "dsp_gemm_") {
				t.Fatalf("%s: another weight form left:\n%s", name, s)
			}
			if s.Knobs["weights"] != 4 {
				t.Fatalf("%s: knob weights = %d", name, s.Knobs["weights"])
			}
			var b4 int
			for _, cb := range s.Consts() {
				if strings.HasSuffix(cb.Name, "_weights_s4") {
					b4 += cb.Len() * cb.DType.Size()
				}
				if strings.HasSuffix(cb.Name, "_weights_s8") || strings.HasSuffix(cb.Name, "_weights_s16") {
					t.Fatalf("%s: %s kept", name, cb.Name)
				}
			}
			live := c.n
			if c.dead {
				live -= 2
				if c.n/2 == 0 {
					live++
				}
			}
			if want := live * ((c.k + 7) / 8 * 4); b4 != want {
				t.Errorf("%s: %d B of int4 weights, want %d", name, b4, want)
			}
			sameResult(t, name, f, s)
			runExtremes(t, name, f, s)
		}
	}
	// Weights outside [−8, 7]: int8 weights, the knob set to 8.
	g, nd := int8FC(r, 1, 24, 5, 3)
	g.Tensor("w").Data.I[7] = 8
	f, s := dspKernel(t, g, nd, map[string]int{"weights": 4})
	if usesIntrinsic(s, "dsp_mac_s4w_") || s.Knobs["weights"] != 8 || !usesIntrinsic(s, "dsp_mac_s8w") {
		t.Fatalf("a weight of 8: knob %d\n%s", s.Knobs["weights"], s)
	}
	sameResult(t, "int8 fallback", f, s)
	// The default stays int16, and int4-range weights alone do not change it.
	g, nd = int8FC(r, 1, 24, 5, 3)
	int4Weights(r, g)
	_, s = dspKernel(t, g, nd, nil)
	if usesIntrinsic(s, "dsp_mac_s4w_") || s.Knobs["weights"] != 16 {
		t.Fatalf("default: knob %d\n%s", s.Knobs["weights"], s)
	}
	// Convolutions refuse the knob, as before.
	gc, nc := int8Conv(r, 16, 6, 1, 1, 1, 0)
	tg := DSP.WithKnobs("conv2d", map[string]int{"weights": 4})
	if _, err := tg.schedule(computeFunc(t, gc, nc)); err == nil || !strings.Contains(err.Error(), "weights = 4") {
		t.Errorf("conv weights = 4: %v", err)
	}
}

// The bound on the int4 kernel's partial sums (|init| + 23·K8·max|x|),
// and the int4 range.
func TestInt4Fits(t *testing.T) {
	if int4Fits(364728, 256, 0) || !int4Fits(364720, 256, 0) {
		t.Error("23·K8·256 against 2^31 − 1")
	}
	if !int4Fits(640, 256, 1<<30) || int4Fits(640, 256, 1<<31-1000) {
		t.Error("K = 640 with a large bias")
	}
	if Int4Range([]int64{-8, 7, 0}) != true || Int4Range([]int64{-9}) || Int4Range([]int64{8}) || Int4Range(nil) {
		t.Error("Int4Range")
	}
}
