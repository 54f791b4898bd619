package tir

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The int8 layout holds the int16 layout's pair words byte for byte: word
// i (h = i mod 2) is bytes 2(i−h) + h and 2(i−h) + h + 2, for every block
// shape, padded K and a tail of single channels.
func TestDSPPackWeights8(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range []struct{ cout, K, k4, c int }{
		{1, 5, 8, 4}, {2, 4, 4, 2}, {7, 9, 12, 4}, {5, 27, 32, 2}, {3, 3, 4, 1}, {6, 16, 16, 4},
	} {
		w := make([]int64, c.cout*c.K)
		for i := range w {
			w[i] = int64(r.Intn(256) - 128)
		}
		w[0], w[len(w)-1] = -128, 127
		s16 := DSPPackWeights(w, c.cout, c.K, c.k4, c.c)
		s8 := DSPPackWeights8(w, c.cout, c.K, c.k4, c.c)
		if len(s8) != 2*len(s16) {
			t.Fatalf("%v: %d bytes for %d words", c, len(s8), len(s16))
		}
		for i, word := range s16 {
			h := i % 2
			if got := pack16(s8[2*(i-h)+h], s8[2*(i-h)+h+2]); got != word {
				t.Fatalf("%v: word %d = %#x from the bytes, %#x in the int16 layout", c, i, got, word)
			}
		}
	}
}

// The int8-weight micro-kernels give the int16 ones' sums on the same
// weights, at the extremes (weights −128 and 127, activations at the int16
// limits), for every block shape and unroll; and they panic on a bad
// length or on weights that are not int8.
func TestDSPMacW8Intrinsics(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, b := range DSPMacBlocks {
		for _, u := range DSPMacUnrolls {
			R, Cc := b[0], b[1]
			n := 2 * u * 2 // pair words per row: two iterations
			K := 2 * n
			nb := 2
			cout := nb * Cc
			w := make([]int64, cout*K)
			for i := range w {
				w[i] = []int64{-128, 127, int64(r.Intn(256) - 128)}[r.Intn(3)]
			}
			w16 := &graph.Data{DType: graph.Int32, Shape: []int{cout * K / 2}, I: DSPPackWeights(w, cout, K, K, Cc)}
			w8 := &graph.Data{DType: graph.Int8, Shape: []int{cout * K}, I: DSPPackWeights8(w, cout, K, K, Cc)}
			x := graph.NewData(graph.Int32, []int{R * n})
			for i := range x.I {
				// |sum| <= K·32768·128 < 2^31 for K <= 128.
				x.I[i] = pack16([]int64{-255, 255, -32768, 32767}[r.Intn(4)], []int64{-255, 255, -1, 1}[r.Intn(4)])
			}
			for bl := 0; bl < nb; bl++ {
				a16 := graph.NewData(graph.Int32, []int{R * Cc})
				a8 := graph.NewData(graph.Int32, []int{R * Cc})
				for i := range a16.I {
					a16.I[i], a8.I[i] = int64(i*1000-7), int64(i*1000-7)
				}
				extIntrinsics[DSPMacName(R, Cc, u)]([]val{{p: a16}, {p: x}, {i: int64(n)}, {p: w16, i: int64(bl * Cc * n)}, {i: int64(n)}})
				extIntrinsics[DSPMacW8Name(R, Cc, u)]([]val{{p: a8}, {p: x}, {i: int64(n)}, {p: w8, i: int64(bl * Cc * K)}, {i: int64(n)}})
				for i := range a16.I {
					if a8.I[i] != a16.I[i] {
						t.Fatalf("%s block %d: acc[%d] = %d, int16 weights give %d", DSPMacW8Name(R, Cc, u), bl, i, a8.I[i], a16.I[i])
					}
				}
			}
			// The fused loop against the int16 one, every output.
			var p []int64
			for o := 0; o < cout; o++ {
				e := int64(8 + o)
				k0 := dspRequantK0(e, 0) + int64(o-3)*1<<20
				p = append(p, int64(int32(uint32(k0))), k0>>32, 1<<30+int64(o), e-1)
			}
			pd := &graph.Data{DType: graph.Int32, Shape: []int{len(p)}, I: p}
			y16 := graph.NewData(graph.Int8, []int{R * cout})
			y8 := graph.NewData(graph.Int8, []int{R * cout})
			args := func(y, w *graph.Data) []val {
				return []val{{p: y}, {i: int64(cout)}, {p: x}, {i: int64(n)}, {p: w}, {i: int64(n)}, {p: pd}, {i: int64(nb)}, {i: 3}, {i: -128}, {i: 127}}
			}
			extIntrinsics[DSPGemmName(R, Cc, u)](args(y16, w16))
			extIntrinsics[DSPGemmW8Name(R, Cc, u)](args(y8, w8))
			for i := range y16.I {
				if y8.I[i] != y16.I[i] {
					t.Fatalf("%s: y[%d] = %d, int16 weights give %d", DSPGemmW8Name(R, Cc, u), i, y8.I[i], y16.I[i])
				}
			}
			// Inconsistent arguments.
			for what, a := range map[string][]val{
				"odd n":         {{p: graph.NewData(graph.Int32, []int{R * Cc})}, {p: x}, {i: int64(n)}, {p: w8}, {i: int64(2*u + 1)}},
				"int16 weights": {{p: graph.NewData(graph.Int32, []int{R * Cc})}, {p: x}, {i: int64(n)}, {p: w16}, {i: int64(n)}},
			} {
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s with %s: no panic", DSPMacW8Name(R, Cc, u), what)
						}
					}()
					extIntrinsics[DSPMacW8Name(R, Cc, u)](a)
				}()
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s with int16 weights: no panic", DSPGemmW8Name(R, Cc, u))
					}
				}()
				extIntrinsics[DSPGemmW8Name(R, Cc, u)](args(y8, w16))
			}()
		}
	}
}

// extremeWeights sets a node's weights to −128, 127 and ±1 in turn.
func extremeWeights(g *graph.Graph) {
	w := g.Tensor("w").Data
	for i := range w.I {
		w.I[i] = []int64{-128, 127, 1, -1, 127, -128, 0}[i%7]
	}
}

// runExtremes runs f and g on inputs all −128, all 127 and alternating,
// and requires identical outputs.
func runExtremes(t *testing.T, what string, f, g *PrimFunc) {
	t.Helper()
	for _, fill := range []func(j int) int64{
		func(int) int64 { return -128 },
		func(int) int64 { return 127 },
		func(j int) int64 { return []int64{-128, 127}[j%2] },
	} {
		a := make([]*graph.Data, len(f.Params))
		for i, p := range f.Params {
			a[i] = graph.NewData(p.DType, []int{p.span()})
			if !p.Writes {
				for j := range a[i].I {
					a[i].I[j] = fill(j)
				}
			}
		}
		b := cloneArgs(a)
		if err := Run(f, a); err != nil {
			t.Fatalf("%s: before: %v", what, err)
		}
		if err := Run(g, b); err != nil {
			t.Fatalf("%s: after: %v", what, err)
		}
		for i, p := range f.Params {
			if p.Writes && !slices.Equal(a[i].I, b[i].I) {
				t.Fatalf("%s: %s differs on extreme inputs", what, p.Name)
			}
		}
	}
}

// weightConsts reports whether f holds int16 and int8 packed weights.
func weightConsts(f *PrimFunc) (s16, s8 bool) {
	for _, c := range f.Consts() {
		s16 = s16 || strings.HasSuffix(c.Name, "_weights_s16")
		s8 = s8 || strings.HasSuffix(c.Name, "_weights_s8")
	}
	return s16, s8
}

// Convolutions (pointwise, im2col, staged odd channel counts, single-channel
// tails) and fully connected layers with weights = 8 compute what the
// unscheduled definition does, fused and unfused, on random and extreme
// inputs with extreme weights, and keep only int8 weights; weights = 16
// stays the default.
func TestDSPWeights8KeepResults(t *testing.T) {
	r := rand.New(rand.NewSource(47))
	for _, c := range []struct {
		cin, cout, k, stride, pad int
		knobs                     map[string]int
	}{
		{8, 6, 1, 1, 0, nil},                                          // pointwise
		{16, 5, 1, 1, 0, map[string]int{"block_oc": 4}},               // a single-channel tail
		{32, 4, 1, 1, 0, map[string]int{"unroll_k": 8}},               // unrolled
		{8, 7, 1, 2, 0, nil},                                          // strided 1x1, odd channels
		{16, 4, 3, 1, 1, nil},                                         // padded 3x3, im2col
		{3, 8, 3, 2, 1, nil},                                          // Cin 3: staged im2col
		{1, 5, 3, 1, 1, map[string]int{"block_px": 1, "block_oc": 4}}, // Cin 1
		{5, 3, 2, 1, 0, map[string]int{"block_oc": 1, "pad_k": 16}},
		{8, 8, 3, 1, 1, map[string]int{"winograd": 1}}, // int8 weights win over Winograd
	} {
		for _, fuse := range []int{0, 1} {
			kn := map[string]int{"weights": 8, "gemm_fuse": fuse, "conv_rows": 0} // the im2col form
			for k, v := range c.knobs {
				kn[k] = v
			}
			name := fmt.Sprintf("conv_cin%d_cout%d_k%d_s%d_p%d_%v", c.cin, c.cout, c.k, c.stride, c.pad, kn)
			g, n := int8Conv(r, c.cin, c.cout, 1, c.k, c.stride, c.pad)
			extremeWeights(g)
			f, s := dspKernel(t, g, n, kn)
			if !usesIntrinsic(s, "dsp_mac_s8w") && !usesIntrinsic(s, "dsp_gemm_s8pr_s8w") {
				t.Fatalf("%s: no int8-weight kernel:\n%s", name, s)
			}
			if usesIntrinsic(s, "dsp_mac_s16") || usesIntrinsic(s, "dsp_gemm_s8pr_1") || usesIntrinsic(s, "dsp_gemm_s8pr_2") || usesIntrinsic(s, IntrDSPWinoIn) {
				t.Fatalf("%s: an int16-weight kernel left:\n%s", name, s)
			}
			if s16, s8 := weightConsts(s); s16 || !s8 {
				t.Fatalf("%s: int16 weights %v, int8 weights %v", name, s16, s8)
			}
			if fuse == 1 && !usesIntrinsic(s, "dsp_gemm_s8pr_s8w") {
				t.Errorf("%s: the ReLU form did not fuse", name)
			}
			sameResult(t, name, f, s)
			runExtremes(t, name, f, s)
		}
	}
	for _, c := range []struct {
		rows, k, n int
		knobs      map[string]int
	}{
		{1, 64, 12, nil}, {1, 40, 7, nil}, {3, 24, 9, nil}, {1, 10, 5, nil}, {2, 13, 3, nil},
		{2, 16, 8, map[string]int{"block_rows": 2, "block_oc": 2}},
		{1, 32, 6, map[string]int{"block_oc": 1, "unroll_k": 1}},
	} {
		for _, relu := range []bool{false, true} {
			kn := map[string]int{"weights": 8}
			for k, v := range c.knobs {
				kn[k] = v
			}
			name := fmt.Sprintf("fc_rows%d_k%d_n%d_relu%v_%v", c.rows, c.k, c.n, relu, kn)
			g, nd := int8FC(r, c.rows, c.k, c.n, 11)
			if relu {
				// Per-channel scales in the ReLU form: the fused loop.
				g.Tensor("y").Quant.ZeroPoint = []int32{-128}
				wq := g.Tensor("w").Quant
				wq.Scale, wq.ZeroPoint = make([]float32, c.n), make([]int32, c.n)
				for i := range wq.Scale {
					wq.Scale[i] = 0.002 + 0.004*r.Float32()
				}
			}
			extremeWeights(g)
			f, s := dspKernel(t, g, nd, kn)
			want := "dsp_mac_s8w"
			if relu {
				want = "dsp_gemm_s8pr_s8w"
			}
			if !usesIntrinsic(s, want) {
				t.Fatalf("%s: does not use %s:\n%s", name, want, s)
			}
			if s16, s8 := weightConsts(s); s16 || !s8 {
				t.Fatalf("%s: int16 weights %v, int8 weights %v", name, s16, s8)
			}
			sameResult(t, name, f, s)
			runExtremes(t, name, f, s)
		}
	}
	// The default stays int16; a value other than 8 or 16 is an error.
	g, n := int8Conv(r, 16, 6, 1, 1, 1, 0)
	s := dspSchedule(t, computeFunc(t, g, n), nil)
	if s16, s8 := weightConsts(s); !s16 || s8 || s.Knobs["weights"] != 16 {
		t.Errorf("default: int16 weights %v, int8 %v, knob %d", s16, s8, s.Knobs["weights"])
	}
	tg := DSP.WithKnobs("conv2d", map[string]int{"weights": 4})
	if _, err := tg.schedule(computeFunc(t, g, n)); err == nil || !strings.Contains(err.Error(), "weights = 4") {
		t.Errorf("weights = 4: %v", err)
	}
}
