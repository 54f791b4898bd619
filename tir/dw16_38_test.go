package tir_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
	"github.com/mcugen/mcugen/internal/needtool"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tir"
)

// dw16Spec is one 16x8 depthwise convolution (int16 input and output, int8
// weights with per-channel scales, int64 bias).
type dw16Spec struct {
	N, H, W, C             int
	KH, KW, sh, sw, dh, dw int
	pt, pb, pl, pr         int
	act                    graph.Activation
	sy                     float32 // output scale (the requantization's shift)
	bias                   int64   // bias magnitude
	fast                   bool    // takes IntrDW16Row on dsp and mve
}

func (c dw16Spec) name() string {
	return fmt.Sprintf("%dx%dx%dx%d_k%dx%d_s%dx%d_d%dx%d_p%d%d%d%d_a%d_b%d_sy%g", c.N, c.H, c.W, c.C, c.KH, c.KW, c.sh, c.sw, c.dh, c.dw, c.pt, c.pb, c.pl, c.pr, c.act, c.bias, c.sy)
}

func dw16Graph(c dw16Spec, r *rand.Rand) *graph.Graph {
	g := graph.New("dw16_"+c.name(), "tflite")
	OH := (c.H+c.pt+c.pb-((c.KH-1)*c.dh+1))/c.sh + 1
	OW := (c.W+c.pl+c.pr-((c.KW-1)*c.dw+1))/c.sw + 1
	wshape := []int{c.C, c.KH, c.KW, 1}
	w := graph.NewData(graph.Int8, wshape)
	for i := range w.I {
		w.I[i] = int64(r.Intn(255) - 127)
	}
	ws := make([]float32, c.C)
	for i := range ws {
		ws[i] = 0.002 * float32(1+r.Intn(5))
	}
	sx := float32(0.001)
	b := graph.NewData(graph.Int64, []int{c.C})
	bs := make([]float32, c.C)
	for i := range b.I {
		b.I[i] = r.Int63n(2*c.bias+1) - c.bias
		bs[i] = sx * ws[i]
	}
	if c.bias > 1<<30 {
		b.I[0] = -c.bias // (so that one channel's sum could leave int32)
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int16, Shape: []int{c.N, c.H, c.W, c.C}, Quant: &graph.Quant{Scale: []float32{sx}, ZeroPoint: []int32{0}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int16, Shape: []int{c.N, OH, OW, c.C}, Quant: &graph.Quant{Scale: []float32{c.sy}, ZeroPoint: []int32{0}}})
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.Int8, Shape: wshape, Data: w, Quant: &graph.Quant{Scale: ws, ZeroPoint: make([]int32, c.C), Axis: 0}})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int64, Shape: []int{c.C}, Data: b, Quant: &graph.Quant{Scale: bs, ZeroPoint: make([]int32, c.C)}})
	g.AddNode(&graph.Node{Name: "dw", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.Conv2DAttrs{Stride: [2]int{c.sh, c.sw}, Dilation: [2]int{c.dh, c.dw},
			Pad: graph.Padding{Top: c.pt, Bottom: c.pb, Left: c.pl, Right: c.pr}, Group: c.C, Act: c.act}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

func dw16Inputs(c dw16Spec, r *rand.Rand) []*graph.Data {
	return int16Inputs([]int{c.N, c.H, c.W, c.C}, r)
}

// int16Inputs are four int16 tensors of the shape: all 32767, all −32768,
// the two at random, and random values.
func int16Inputs(shape []int, r *rand.Rand) []*graph.Data {
	var out []*graph.Data
	for kind := 0; kind < 4; kind++ {
		x := graph.NewData(graph.Int16, shape)
		for i := range x.I {
			switch kind {
			case 0:
				x.I[i] = 32767
			case 1:
				x.I[i] = -32768
			case 2:
				x.I[i] = []int64{-32768, 32767}[r.Intn(2)]
			default:
				x.I[i] = r.Int63n(65536) - 32768
			}
		}
		out = append(out, x)
	}
	return out
}

var dw16Specs = []dw16Spec{
	// KWS's depthwise shape, ReLU: 3x3, SAME.
	{N: 1, H: 25, W: 5, C: 64, KH: 3, KW: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1, act: graph.ActRelu, sy: 0.01, bias: 2000, fast: true},
	// Stride 2, asymmetric padding, no activation, batch 2.
	{N: 2, H: 7, W: 6, C: 8, KH: 3, KW: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 0, pb: 1, pl: 1, pr: 0, sy: 0.02, bias: 100000, fast: true},
	// Dilation, a 5x2 window, padding wider than one tap, stride (1, 3).
	{N: 1, H: 6, W: 9, C: 4, KH: 5, KW: 2, sh: 1, sw: 3, dh: 2, dw: 3, pt: 3, pb: 4, pl: 2, pr: 3, act: graph.ActRelu6, sy: 0.01, bias: 500, fast: true},
	// 1x1 and a window as large as the image, no padding; ReLU N1 to 1.
	{N: 1, H: 4, W: 4, C: 12, KH: 1, KW: 1, sh: 1, sw: 1, dh: 1, dw: 1, act: graph.ActReluN1To1, sy: 0.0001, bias: 0, fast: true},
	{N: 1, H: 3, W: 4, C: 4, KH: 3, KW: 4, sh: 1, sw: 1, dh: 1, dw: 1, sy: 0.05, bias: 7, fast: true},
	// Windows wholly outside the image (padding past the kernel): bias only.
	{N: 1, H: 2, W: 2, C: 4, KH: 2, KW: 2, sh: 3, sw: 3, dh: 1, dw: 1, pt: 3, pb: 3, pl: 3, pr: 3, sy: 0.01, bias: 30000, fast: true},
	// Channels a multiple of 4 but not of 8 (Helium takes quads then).
	{N: 1, H: 3, W: 7, C: 20, KH: 2, KW: 3, sh: 1, sw: 2, dh: 2, dw: 1, pt: 1, pb: 2, pl: 2, pr: 0, sy: 0.01, bias: 900, fast: true},
	// Kept on the patch form: channels not a multiple of 4 (a plain-C
	// tail measured up to 2.7 times slower than the patch form); a bias
	// that with the taps could leave int32; a multiplier of 0.5 or more
	// (the requantization's shift outside the SMMULR range).
	{N: 1, H: 4, W: 5, C: 6, KH: 3, KW: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1, sy: 0.01, bias: 2000},
	{N: 1, H: 8, W: 8, C: 10, KH: 3, KW: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 0, pb: 0, pl: 1, pr: 1, act: graph.ActRelu, sy: 0.03, bias: 0},
	{N: 1, H: 3, W: 7, C: 13, KH: 2, KW: 3, sh: 1, sw: 2, dh: 2, dw: 1, pt: 1, pb: 2, pl: 2, pr: 0, sy: 0.01, bias: 900},
	{N: 1, H: 2, W: 3, C: 1, KH: 3, KW: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1, sy: 0.01, bias: 10},
	{N: 1, H: 4, W: 5, C: 4, KH: 3, KW: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1, sy: 0.01, bias: 2140000000},
	{N: 1, H: 4, W: 5, C: 4, KH: 3, KW: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1, sy: 0.000001, bias: 2000},
}

// usesDW16 reports whether the lowered module calls IntrDW16Row.
func usesDW16(m *tir.Module) bool {
	return strings.Contains(m.String(), tir.IntrDW16Row)
}

// TestDW16RowsMatchInterp38: 16x8 depthwise convolutions against
// graph/interp (TFLite's reference 16x8 depthwise: a 64-bit sum, the 64-bit
// requantization) on the generic, dsp and mve targets, on the input's
// extremes and random values: every stride, dilation, padding and fused
// activation here, windows partly and wholly outside the image. The dsp and
// mve targets take the row form exactly where its conditions hold, and mve
// its Helium form where the channels divide by 8.
func TestDW16RowsMatchInterp38(t *testing.T) {
	for i, c := range dw16Specs {
		t.Run(c.name(), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(3800 + i)))
			g := dw16Graph(c, r)
			ins := dw16Inputs(c, r)
			for _, target := range []tir.Target{*tir.Generic, *tir.DSP, *tir.MVE, *tir.NEON} {
				m := lowerRequant(t, g, target)
				want := c.fast && target.Name != tir.Generic.Name && (target.Name != tir.NEON.Name || c.C%8 == 0)
				if got := usesDW16(m); got != want {
					t.Errorf("%s: row form %v, want %v", target.Name, got, want)
				}
				// Helium and NEON take channel octets where the channels divide by 8.
				wantMVE := want && target.Name == tir.MVE.Name && c.C%8 == 0
				if got := strings.Contains(m.String(), tir.IntrMVEDW16Row); got != wantMVE {
					t.Errorf("%s: Helium row form %v, want %v", target.Name, got, wantMVE)
				}
				if target.Name != tir.NEON.Name {
					continue
				}
				// (matchesInterpOnTargets runs generic, dsp and mve.)
				for v, x := range ins {
					want, err := interp.Run(g, map[string]*graph.Data{"x": x})
					if err != nil {
						t.Fatal(err)
					}
					got, err := tir.RunModule(m, map[string]*graph.Data{"x": x})
					if err != nil {
						t.Fatal(err)
					}
					if err := same(want["y"], got["y"]); err != nil {
						t.Fatalf("neon, input %d: %v", v, err)
					}
				}
			}
			matchesInterpOnTargets(t, g, ins)
		})
	}
}

// TestDW16RequantIdentity38: the row form's requantization, SMMULR of the
// 32-bit sum with m16·2^(32−t), is TFLite's 64-bit MultiplyByQuantizedMultiplier
// for every shift it is taken for (t = 15 − shift in [16, 32]), on sums at
// and near int32's ends and random ones, for multipliers across their range.
func TestDW16RequantIdentity38(t *testing.T) {
	r := rand.New(rand.NewSource(38))
	accs := []int64{0, 1, -1, 1 << 30, -(1 << 30), 1<<31 - 1, -(1 << 31), 12345, -12345}
	for i := 0; i < 2000; i++ {
		accs = append(accs, r.Int63n(1<<32)-(1<<31))
	}
	mults := []int32{0, 1 << 30, 1<<31 - 1, 0x7FFF0000, 0x7FFEFFFF, 0x40008000, 0x40007FFF}
	for i := 0; i < 50; i++ {
		mults = append(mults, int32(1<<30+r.Int63n(1<<30)))
	}
	for shift := -17; shift <= -1; shift++ {
		for _, m := range mults {
			m16 := int64(0x7FFF)
			if m < 0x7FFF0000 {
				m16 = (int64(m) + 1<<15) >> 16
			}
			mp := m16 << (32 - (15 - shift))
			for _, a := range accs {
				want := qmath.MultiplyByQuantizedMultiplier64(a, m, shift)
				if got := int32((a*mp + 1<<31) >> 32); got != want {
					t.Fatalf("acc %d, multiplier %d, shift %d: smmulr gives %d, TFLite %d", a, m, shift, got, want)
				}
			}
		}
	}
}

// TestDW16RowsHostC38: the dsp target's C (the helper's plain-C path) on
// the host under ASan and UBSan, bit-exact with graph/interp.
func TestDW16RowsHostC38(t *testing.T) {
	for i, c := range dw16Specs {
		r := rand.New(rand.NewSource(int64(3800 + i)))
		g := dw16Graph(c, r)
		var vecs []map[string]*graph.Data
		for _, x := range dw16Inputs(c, r) {
			vecs = append(vecs, map[string]*graph.Data{"x": x})
		}
		s := sanitizedHostStateMatches(t, g, fmt.Sprintf("dw16_%d", i), "dsp", vecs)
		if got := strings.Contains(string(s.Files[fmt.Sprintf("dw16_%d.c", i)]), "dw16_row_s16s8("); got != c.fast {
			t.Errorf("%s: C calls dw16_row_s16s8: %v, want %v", c.name(), got, c.fast)
		}
	}
}

// TestDW16RowsOnCores38: the row form on the Cortex-M4 (SMLABB, SMLATT,
// SMMULR, USAT/SSAT), the M55 (Helium) and AArch64 (NEON) under QEMU,
// bit-exact with graph/interp, and its C warning-free (-Wall -Wextra -Werror
// -std=c99 -pedantic) at -O0, -O2, -Os and -O3 for each.
func TestDW16RowsOnCores38(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU runs: not in -short")
	}
	needARMGCC(t)
	for _, bn := range []string{"mps2-an386", "mps3-an547", "aarch64-linux"} {
		b, err := pipeline.LoadBoard(bn, "")
		if err != nil {
			t.Fatal(err)
		}
		cc := b.Toolchain + "-gcc"
		if _, err := exec.LookPath(cc); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed", cc)
			}
			t.Logf("%s not installed: %s skipped", cc, bn)
			continue
		}
		for i, c := range dw16Specs {
			r := rand.New(rand.NewSource(int64(3800 + i)))
			g := dw16Graph(c, r)
			var vecs []map[string]*graph.Data
			for _, x := range dw16Inputs(c, r) {
				vecs = append(vecs, map[string]*graph.Data{"x": x})
			}
			name := fmt.Sprintf("dw16_%d", i)
			s, err := pipeline.CompileGraph(g, name, pipeline.Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			what := bn + " " + c.name()
			t.Logf("%s: %d instructions", what, executeMatches(t, s, what, vecs))
			strictCompiles(t, s, b, cc, name, what, "-O0", "-O2", "-Os", "-O3")
		}
	}
}

// conv16Graph is a 16x8 convolution (group 1, Cin → Cout, KxK SAME, int64
// bias of magnitude up to bias, output scale sy) or, with fc, a fully
// connected layer over Cin·K·K inputs.
func conv16Graph(fc bool, Cin, Cout, K int, bias int64, sy float32, r *rand.Rand) *graph.Graph {
	g := graph.New("c16", "tflite")
	H, W := 4, 5
	wshape := []int{Cout, K, K, Cin}
	xshape, yshape := []int{1, H, W, Cin}, []int{1, H, W, Cout}
	if fc {
		wshape, xshape, yshape = []int{Cout, Cin * K * K}, []int{1, Cin * K * K}, []int{1, Cout}
	}
	w := graph.NewData(graph.Int8, wshape)
	for i := range w.I {
		w.I[i] = int64(r.Intn(255) - 127)
	}
	ws := make([]float32, Cout)
	for i := range ws {
		ws[i] = 0.002 * float32(1+r.Intn(5))
	}
	sx := float32(0.001)
	b := graph.NewData(graph.Int64, []int{Cout})
	bs := make([]float32, Cout)
	for i := range b.I {
		b.I[i] = r.Int63n(2*bias+1) - bias
		bs[i] = sx * ws[i]
	}
	if bias > 1<<30 {
		b.I[0] = bias
	}
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Int16, Shape: xshape, Quant: &graph.Quant{Scale: []float32{sx}, ZeroPoint: []int32{0}}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int16, Shape: yshape, Quant: &graph.Quant{Scale: []float32{sy}, ZeroPoint: []int32{0}}})
	g.AddTensor(&graph.Tensor{Name: "w", DType: graph.Int8, Shape: wshape, Data: w, Quant: &graph.Quant{Scale: ws, ZeroPoint: make([]int32, Cout), Axis: 0}})
	g.AddTensor(&graph.Tensor{Name: "b", DType: graph.Int64, Shape: []int{Cout}, Data: b, Quant: &graph.Quant{Scale: bs, ZeroPoint: make([]int32, Cout)}})
	if fc {
		g.AddNode(&graph.Node{Name: "fc", Op: graph.FullyConnected, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"}, Attrs: &graph.FullyConnectedAttrs{}})
	} else {
		p := K / 2
		g.AddNode(&graph.Node{Name: "conv", Op: graph.Conv2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
			Attrs: &graph.Conv2DAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: p, Bottom: K - 1 - p, Left: p, Right: K - 1 - p}, Group: 1}})
	}
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

// TestNarrow64Requant38: 16x8 convolutions and fully connected layers
// requantize with IntrSMMULR exactly where narrow64's conditions hold
// (every channel's Σ|w|·2^15 + |bias| in int32, the shift in range), and
// keep TFLite's 64-bit requantization otherwise; on every target the
// values are graph/interp's, on the input's extremes and random ones.
func TestNarrow64Requant38(t *testing.T) {
	for i, c := range []struct {
		fc         bool
		Cin, Cout  int
		K          int
		bias       int64
		sy         float32
		wantSMMULR bool
	}{
		{false, 8, 8, 3, 5000, 0.01, true},
		{false, 3, 6, 1, 0, 0.02, true},
		{true, 16, 4, 1, 100000, 0.01, true},
		{true, 5, 3, 1, 7, 0.05, true},
		{false, 4, 4, 3, 2140000000, 0.01, false}, // a bias that could leave int32 with the taps
		{true, 16, 4, 1, 5000, 0.000001, false},   // a multiplier above 0.5
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(3850 + i)))
			g := conv16Graph(c.fc, c.Cin, c.Cout, c.K, c.bias, c.sy, r)
			for _, target := range []tir.Target{*tir.Generic, *tir.DSP, *tir.MVE} {
				m := lowerRequant(t, g, target)
				if got := strings.Contains(m.String(), tir.IntrSMMULR); got != c.wantSMMULR {
					t.Errorf("%s: SMMULR %v, want %v", target.Name, got, c.wantSMMULR)
				}
			}
			matchesInterpOnTargets(t, g, int16Inputs(g.Tensors["x"].Shape, r))
		})
	}
}

// TestNarrow64OnCores38: those layers' C under ASan and UBSan on the host
// (the generic target: SMMULR's plain C), on the Cortex-M4 and M55 under
// QEMU, and warning-free at -O0, -O2, -Os and -O3 for the M3, M4, M7, M33
// and M55 (dot4_s16s8's one-statement step takes eleven registers).
func TestNarrow64OnCores38(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU and sanitizer runs: not in -short")
	}
	needARMGCC(t)
	for i, c := range []struct {
		fc           bool
		Cin, Cout, K int
		bias         int64
		sy           float32
	}{
		{false, 8, 8, 3, 5000, 0.01},
		{false, 2, 8, 7, 300, 0.01}, // seanet conv0's shape: 98 taps, eight channels
		{true, 16, 4, 1, 100000, 0.01},
		{true, 5, 3, 1, 7, 0.05},
	} {
		r := rand.New(rand.NewSource(int64(3860 + i)))
		g := conv16Graph(c.fc, c.Cin, c.Cout, c.K, c.bias, c.sy, r)
		var vecs []map[string]*graph.Data
		for _, x := range int16Inputs(g.Tensors["x"].Shape, r) {
			vecs = append(vecs, map[string]*graph.Data{"x": x})
		}
		name := fmt.Sprintf("n64_%d", i)
		sanitizedHostMatches(t, g, name, vecs)
		for _, bn := range []string{"mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547"} {
			b, err := pipeline.LoadBoard(bn, "")
			if err != nil {
				t.Fatal(err)
			}
			s, err := pipeline.CompileGraph(g, name, pipeline.Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s case %d", bn, i)
			if bn == "mps2-an386" || bn == "mps3-an547" {
				t.Logf("%s: %d instructions", what, executeMatches(t, s, what, vecs))
			}
			strictCompiles(t, s, b, "arm-none-eabi-gcc", name, what, "-O0", "-O1", "-O2", "-Os", "-O3")
		}
	}
}

// executeMatches runs s on vecs (QEMU, or natively for the host) and
// fails on any vector that differs from graph/interp; it returns the
// instruction count.
func executeMatches(t *testing.T, s *pipeline.State, what string, vecs []map[string]*graph.Data) int64 {
	t.Helper()
	x, err := s.Execute(vecs, t.TempDir(), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for v, ok := range x.Match {
		if !ok {
			t.Errorf("%s vector %d differs from graph/interp", what, v)
		}
	}
	return x.Instructions()
}

// strictCompiles compiles s's C file name.c with cc and b's flags at each
// optimization level under -Wall -Wextra -Werror -std=c99 -pedantic.
func strictCompiles(t *testing.T, s *pipeline.State, b *boards.Board, cc, name, what string, levels ...string) {
	t.Helper()
	dir := t.TempDir()
	for fn, data := range s.Files {
		if err := os.WriteFile(filepath.Join(dir, fn), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, opt := range levels {
		args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", opt, "-c", "-o", "/dev/null", name + ".c"}, b.GCCFlags()...)
		cmd := exec.Command(cc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", what, opt, err, out)
		}
	}
}

// needARMGCC fails in CI, and skips elsewhere, without arm-none-eabi-gcc.
func needARMGCC(t *testing.T) {
	t.Helper()
	needtool.Need(t, "arm-none-eabi-gcc", "gcc-arm-none-eabi")
}

// TestDot4UnalignedTrap38: a 16x8 1x1 convolution over 13 channels (odd
// strides: dot4_s16s8's loads unaligned) on an mps2-an386 that traps
// unaligned accesses, built with -mno-unaligned-access: bit-exact, no
// UsageFault. (Review: the one-statement asm step made word loads whatever
// the flag said, and faulted.)
func TestDot4UnalignedTrap38(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU runs: not in -short")
	}
	needARMGCC(t)
	b, err := pipeline.LoadBoard("an386-unaligned-trap", "testdata/unaligned_trap.star")
	if err != nil {
		t.Fatal(err)
	}
	g := conv16Graph(false, 13, 8, 1, 900, 0.01, rand.New(rand.NewSource(3813)))
	s, err := pipeline.CompileGraph(g, "c13", pipeline.Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s.Files["c13.c"]), "dot4_s16s8(") {
		t.Fatal("the kernel takes no dot4_s16s8")
	}
	var vecs []map[string]*graph.Data
	for _, x := range int16Inputs(g.Tensors["x"].Shape, rand.New(rand.NewSource(13))) {
		vecs = append(vecs, map[string]*graph.Data{"x": x})
	}
	executeMatches(t, s, "c13 with unaligned traps", vecs)
}
