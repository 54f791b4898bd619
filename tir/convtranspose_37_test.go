package tir_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tir"
)

// ctGraph is one ConvTranspose2D: int8 (zero points, per-channel weight
// scales), 16x8 (int64 bias) or float, with strides, dilations, padding,
// output padding and groups as given.
type ctSpec struct {
	dt                     graph.DType
	N, H, W, Cin, Cout, G  int
	KH, KW, sh, sw, dh, dw int
	pt, pb, pl, pr, oph    int
}

func (c ctSpec) name() string {
	return fmt.Sprintf("%s_%dx%dx%d_k%dx%d_s%dx%d_d%dx%d_p%d%d%d%d_g%d_co%d", c.dt, c.H, c.W, c.Cin, c.KH, c.KW, c.sh, c.sw, c.dh, c.dw, c.pt, c.pb, c.pl, c.pr, c.G, c.Cout)
}

func ctGraph(c ctSpec, r *rand.Rand) *graph.Graph {
	g := graph.New("ct_"+c.name(), "tflite")
	Cg := c.Cin / c.G
	OH := graph.ConvTransposeOut(c.H, c.KH, c.sh, c.dh, c.pt, c.pb, c.oph)
	OW := graph.ConvTransposeOut(c.W, c.KW, c.sw, c.dw, c.pl, c.pr, 0)
	wshape := []int{c.Cout, c.KH, c.KW, Cg}
	w := graph.NewData(c.dt, wshape)
	bdt := graph.Int32
	if c.dt == graph.Int16 {
		bdt = graph.Int64
	}
	if c.dt == graph.Float32 {
		bdt = graph.Float32
	}
	b := graph.NewData(bdt, []int{c.Cout})
	x := &graph.Tensor{Name: "x", DType: c.dt, Shape: []int{c.N, c.H, c.W, c.Cin}}
	y := &graph.Tensor{Name: "y", DType: c.dt, Shape: []int{c.N, OH, OW, c.Cout}}
	wt := &graph.Tensor{Name: "w", DType: c.dt, Shape: wshape, Data: w}
	bt := &graph.Tensor{Name: "b", DType: bdt, Shape: []int{c.Cout}, Data: b}
	if c.dt == graph.Float32 {
		w.DType = graph.Float32
		for i := range w.F {
			w.F[i] = float32(r.NormFloat64())
		}
		for i := range b.F {
			b.F[i] = float32(r.NormFloat64())
		}
	} else {
		wt.DType, w.DType = graph.Int8, graph.Int8
		ws := make([]float32, c.Cout)
		for i := range w.I {
			w.I[i] = int64(r.Intn(255) - 127)
		}
		for i := range ws {
			ws[i] = 0.002 * float32(1+r.Intn(5))
		}
		wt.Quant = &graph.Quant{Scale: ws, ZeroPoint: make([]int32, c.Cout), Axis: 0}
		sx, sy := float32(0.05), float32(0.4)
		var zx, zy int32 = 3, -7
		if c.dt == graph.Int16 {
			sx, sy, zx, zy = 0.001, 0.01, 0, 0
		}
		x.Quant = &graph.Quant{Scale: []float32{sx}, ZeroPoint: []int32{zx}}
		y.Quant = &graph.Quant{Scale: []float32{sy}, ZeroPoint: []int32{zy}}
		bs := make([]float32, c.Cout)
		for i := range bs {
			bs[i] = sx * ws[i]
			b.I[i] = int64(r.Intn(4001) - 2000)
		}
		bt.Quant = &graph.Quant{Scale: bs, ZeroPoint: make([]int32, c.Cout)}
	}
	for _, t := range []*graph.Tensor{x, y, wt, bt} {
		g.AddTensor(t)
	}
	g.AddNode(&graph.Node{Name: "ct", Op: graph.ConvTranspose2D, Inputs: []string{"x", "w", "b"}, Outputs: []string{"y"},
		Attrs: &graph.ConvTransposeAttrs{Stride: [2]int{c.sh, c.sw}, Dilation: [2]int{c.dh, c.dw},
			Pad: graph.Padding{Top: c.pt, Bottom: c.pb, Left: c.pl, Right: c.pr}, OutPad: [2]int{c.oph, 0}, Group: c.G}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

func ctInputs(c ctSpec, r *rand.Rand) []*graph.Data {
	var out []*graph.Data
	for kind := 0; kind < 3; kind++ {
		x := graph.NewData(c.dt, []int{c.N, c.H, c.W, c.Cin})
		for i := range x.F {
			x.F[i] = float32(r.NormFloat64())
		}
		lo, hi := int64(-128), int64(127)
		if c.dt == graph.Int16 {
			lo, hi = -32768, 32767
		}
		for i := range x.I {
			switch kind {
			case 0:
				x.I[i] = hi
			case 1:
				x.I[i] = lo
			default:
				x.I[i] = lo + r.Int63n(hi-lo+1)
			}
		}
		out = append(out, x)
	}
	return out
}

var ctSpecs = []ctSpec{
	// seanet's decoder: one input row, 3x4 kernel, stride (1, 2).
	{dt: graph.Int16, N: 1, H: 1, W: 5, Cin: 8, Cout: 4, G: 1, KH: 3, KW: 4, sh: 1, sw: 2, dh: 1, dw: 1},
	{dt: graph.Int16, N: 2, H: 3, W: 4, Cin: 6, Cout: 4, G: 2, KH: 3, KW: 3, sh: 2, sw: 3, dh: 2, dw: 1, pt: 1, pb: 2, pl: 0, pr: 1, oph: 1},
	{dt: graph.Int16, N: 1, H: 2, W: 2, Cin: 4, Cout: 3, G: 1, KH: 2, KW: 2, sh: 3, sw: 3, dh: 1, dw: 1},
	{dt: graph.Int8, N: 1, H: 3, W: 3, Cin: 4, Cout: 5, G: 1, KH: 3, KW: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1},
	{dt: graph.Int8, N: 1, H: 4, W: 3, Cin: 6, Cout: 6, G: 3, KH: 3, KW: 2, sh: 2, sw: 1, dh: 2, dw: 3, pt: 2, pb: 0, pl: 1, pr: 2, oph: 1},
	{dt: graph.Int8, N: 1, H: 2, W: 3, Cin: 3, Cout: 2, G: 1, KH: 4, KW: 1, sh: 4, sw: 2, dh: 1, dw: 1},
	{dt: graph.Float32, N: 1, H: 3, W: 4, Cin: 4, Cout: 3, G: 1, KH: 3, KW: 3, sh: 2, sw: 2, dh: 1, dw: 2, pt: 1, pb: 0, pl: 2, pr: 1},
	{dt: graph.Float32, N: 2, H: 2, W: 2, Cin: 2, Cout: 4, G: 2, KH: 2, KW: 3, sh: 3, sw: 1, dh: 2, dw: 1, oph: 2},
	// Review findings: phases without taps (a stride above the kernel,
	// a stride sharing a factor with the dilation) store no weights and
	// give the bias; a Cg of 1 and groups under a stride of 5x4 with
	// padding past the kernel (its C warned of an unset patch).
	{dt: graph.Int8, N: 1, H: 3, W: 2, Cin: 4, Cout: 4, G: 1, KH: 1, KW: 2, sh: 8, sw: 3, dh: 1, dw: 1},
	{dt: graph.Int16, N: 1, H: 3, W: 3, Cin: 4, Cout: 5, G: 1, KH: 3, KW: 3, sh: 2, sw: 2, dh: 2, dw: 2, pt: 1, pb: 1},
	{dt: graph.Int16, N: 1, H: 3, W: 3, Cin: 2, Cout: 14, G: 2, KH: 5, KW: 4, sh: 5, sw: 4, dh: 3, dw: 1, pt: 5, pb: 4, pl: 4, pr: 4},
	{dt: graph.Float32, N: 1, H: 2, W: 3, Cin: 3, Cout: 2, G: 1, KH: 1, KW: 1, sh: 4, sw: 2, dh: 1, dw: 1},
}

// ctWeightBytes is how many values the lowered kernel's phase weights
// hold.
func ctWeightValues(m *tir.Module) int {
	for _, c := range m.Consts {
		if strings.HasSuffix(c.Name, "_wphase") {
			n := 1
			for _, d := range c.Shape {
				n *= d
			}
			return n
		}
	}
	return -1
}

// TestConvTransposePhases37: the phase form on the generic, dsp and mve
// targets against graph/interp's scatter, on extreme and random inputs:
// strides above and below the kernel, dilations, asymmetric and output
// padding, groups, batch 2; int8 with zero points and per-channel scales,
// 16x8 with int64 biases, and float. Each lowered kernel is the phase form
// (its per-phase weights), not the old per-tap gather.
func TestConvTransposePhases37(t *testing.T) {
	for i, c := range ctSpecs {
		t.Run(c.name(), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(37 + i)))
			g := ctGraph(c, r)
			m := lowerRequant(t, g, *tir.Generic)
			// The phase form, its weights about the original's size:
			// one slot per tap of a phase, padded to the longest phase.
			orig := c.Cout * c.KH * c.KW * (c.Cin / c.G)
			if n := ctWeightValues(m); n < orig || n > 2*orig {
				t.Fatalf("phase weights of %d values for %d weights:\n%s", n, orig, m)
			}
			matchesInterpOnTargets(t, g, ctInputs(c, r))
		})
	}
}

// TestConvTransposePhasesHostC37: the same kernels' C under ASan and UBSan.
// A stride past maxCTStride keeps the per-tap gather (the phase form's
// tables have a stride's entries), with the same values.
func TestConvTransposeWideStride37(t *testing.T) {
	c := ctSpec{dt: graph.Int8, N: 1, H: 2, W: 2, Cin: 4, Cout: 4, G: 1, KH: 2, KW: 2, sh: 70, sw: 1, dh: 1, dw: 1}
	r := rand.New(rand.NewSource(70))
	g := ctGraph(c, r)
	if m := lowerRequant(t, g, *tir.Generic); ctWeightValues(m) != -1 {
		t.Fatalf("stride 70 took the phase form")
	}
	matchesInterpOnTargets(t, g, ctInputs(c, r))
}

func TestConvTransposePhasesHostC37(t *testing.T) {
	for i, c := range ctSpecs {
		t.Run(c.name(), func(t *testing.T) {
			r := rand.New(rand.NewSource(int64(37 + i)))
			g := ctGraph(c, r)
			var vecs []map[string]*graph.Data
			for _, x := range ctInputs(c, r) {
				vecs = append(vecs, map[string]*graph.Data{"x": x})
			}
			sanitizedHostMatches(t, g, fmt.Sprintf("ct37_%d", i), vecs)
		})
	}
}

// TestConvTransposePhasesStrictArm37: the kernels' C compiles without a
// warning (-Wall -Wextra -Werror -std=c99 -pedantic) for the Cortex-M3
// (plain C), M4 (DSP) and M55 (Helium) at -O0, -O2, -Os and -O3 (a review
// found -O2 and -O3 warning of an unset patch where the fill was guarded).
func TestConvTransposePhasesStrictArm37(t *testing.T) {
	if testing.Short() {
		t.Skip("cross builds: not in -short")
	}
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		t.Skip("arm-none-eabi-gcc not installed (Debian package gcc-arm-none-eabi)")
	}
	for _, bn := range []string{"mps2-an385", "mps2-an386", "mps3-an547"} {
		b, err := pipeline.LoadBoard(bn, "")
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range ctSpecs {
			g := ctGraph(c, rand.New(rand.NewSource(int64(37+i))))
			s, err := pipeline.CompileGraph(g, fmt.Sprintf("ct37_%d", i), pipeline.Options{Board: b, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var srcs []string
			for name, data := range s.Files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(name, ".c") {
					srcs = append(srcs, name)
				}
			}
			for _, opt := range []string{"-O0", "-O2", "-Os", "-O3"} {
				for _, src := range srcs {
					args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", opt, "-c", "-o", "/dev/null", src}, b.GCCFlags()...)
					cmd := exec.Command("arm-none-eabi-gcc", args...)
					cmd.Dir = dir
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("%s %s %s %s: %v\n%s", bn, c.name(), opt, src, err, out)
					}
				}
			}
		}
	}
}
