package tflite_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Session 35: the signal library's streaming ops with a state (TFLite
// Micro's SignalDelay, SignalFramer, SignalStacker, SignalOverlapAdd).

const s35Bool int8 = 6 // TFLite's BOOL

func s35Shape(v ...int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func s35Custom(m *tg.Model, code string, opts map[string]tg.FlexValue, ins []int32, outs ...int32) {
	m.Ops = append(m.Ops, tg.Operator{Code: bankCustom, Custom: code, Inputs: ins, Outputs: outs, CustomOptions: tg.FlexMap(opts)})
}

// s35Delay: x int16 shape → SignalDelay(delay_length d) → y.
func s35Delay(d int, shape ...int) func() *tg.Model {
	return func() *tg.Model {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int16, Shape: s35Shape(shape...)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int16, Shape: s35Shape(shape...)})
		s35Custom(m, "SignalDelay", map[string]tg.FlexValue{"delay_length": tg.FlexInt(int32(d))}, []int32{x}, y)
		m.Inputs, m.Outputs = []int32{x}, []int32{y}
		return m
	}
}

// s35Framer: x int16 shape → SignalFramer → the frames and the flag.
func s35Framer(size, step int, prefill bool, shape ...int) func() *tg.Model {
	return func() *tg.Model {
		m := &tg.Model{}
		r := len(shape)
		ys := append(append([]int(nil), shape[:r-1]...), shape[r-1]/step, size)
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int16, Shape: s35Shape(shape...)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int16, Shape: s35Shape(ys...)})
		v := m.AddTensor(tg.Tensor{Name: "valid", Type: s35Bool, Shape: []int32{}})
		s35Custom(m, "SignalFramer", map[string]tg.FlexValue{"frame_size": tg.FlexInt(int32(size)), "frame_step": tg.FlexInt(int32(step)),
			"prefill": tg.FlexBool(prefill)}, []int32{x}, y, v)
		m.Inputs, m.Outputs = []int32{x}, []int32{y, v}
		return m
	}
}

// s35Stacker: x int16 [channels] → SignalStacker → the stack and the flag.
func s35Stacker(channels, left, right, step int) func() *tg.Model {
	return func() *tg.Model {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int16, Shape: s35Shape(channels)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int16, Shape: s35Shape(channels * (left + right + 1))})
		v := m.AddTensor(tg.Tensor{Name: "valid", Type: s35Bool, Shape: []int32{}})
		s35Custom(m, "SignalStacker", map[string]tg.FlexValue{"num_channels": tg.FlexInt(int32(channels)),
			"stacker_left_context": tg.FlexInt(int32(left)), "stacker_right_context": tg.FlexInt(int32(right)),
			"stacker_step": tg.FlexInt(int32(step))}, []int32{x}, y, v)
		m.Inputs, m.Outputs = []int32{x}, []int32{y, v}
		return m
	}
}

// s35OverlapAdd: x of TFLite type typ (int16 7 or float32 0) and shape
// [..., frames, frame size] → SignalOverlapAdd(frame_step) → y.
func s35OverlapAdd(typ int8, step int, shape ...int) func() *tg.Model {
	return func() *tg.Model {
		m := &tg.Model{}
		r := len(shape)
		ys := append(append([]int(nil), shape[:r-2]...), shape[r-2]*step)
		x := m.AddTensor(tg.Tensor{Name: "x", Type: typ, Shape: s35Shape(shape...)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: typ, Shape: s35Shape(ys...)})
		s35Custom(m, "SignalOverlapAdd", map[string]tg.FlexValue{"T": tg.FlexInt(int32(typ)), "frame_step": tg.FlexInt(int32(step))}, []int32{x}, y)
		m.Inputs, m.Outputs = []int32{x}, []int32{y}
		return m
	}
}

// s35Irfft: x int16 [frames, 2·(n/2 + 1)] (frames 1: [2·(n/2 + 1)]) →
// SignalIrfft(T int16, fft_length n) → y int16 [frames, n].
func s35Irfft(n, frames int) func() *tg.Model {
	return s35IrfftTyped(tg.Int16, n, frames)
}

func s35IrfftTyped(typ int8, n, frames int) func() *tg.Model {
	return func() *tg.Model {
		m := &tg.Model{}
		xs, ys := []int{frames, 2 * (n/2 + 1)}, []int{frames, n}
		if frames == 1 {
			xs, ys = xs[1:], ys[1:]
		}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: typ, Shape: s35Shape(xs...)})
		y := m.AddTensor(tg.Tensor{Name: "y", Type: typ, Shape: s35Shape(ys...)})
		s35Custom(m, "SignalIrfft", map[string]tg.FlexValue{"T": tg.FlexInt(int32(typ)), "fft_length": tg.FlexInt(int32(n))}, []int32{x}, y)
		m.Inputs, m.Outputs = []int32{x}, []int32{y}
		return m
	}
}

// s35Case is a model, its input vectors run in this order as one session
// (the ops' buffers carry over), and TFLite Micro's outputs for each
// (want: [vector][output] for int16 and bool outputs, the flag as 0 or 1;
// wantF for float32). Every expected value was produced by a C++ program
// built on TFLite Micro's signal/src (circular_buffer.cc, overlap_add.cc)
// driving its buffers as the kernels' Prepare and Eval do
// (signal/micro/kernels delay.cc, framer.cc, stacker.cc, overlap_add.cc),
// on these inputs; the "oracle case" comment is its case line. The
// SignalIrfft cases come from TFLite Micro's signal/src/irfft_int16.cc
// (kiss_fftri of kissfft v130 with TFLite Micro's patch, 16-bit fixed
// point), applied frame by frame as its kernel's Eval. Where
// TFLite Micro writes no frame (a flag of false) the output is zero: the
// oracle zeroes it before each invocation, as mcugen gives it.
type s35Case struct {
	name  string
	model func() *tg.Model
	in    [][]int64
	inF   [][]float32
	want  [][][]int64
	wantF [][]float32
}

var s35Cases = []s35Case{
	{
		// oracle case: delay 3 2 2 4
		name: "delay", model: s35Delay(3, 2, 4),
		in:   [][]int64{{4631, -30902, -21528, 32767, 2235, -13806, 16, -15324}, {18277, -32768, 3553, 32767, 65, -32768, 32767, 5913}, {2244, 16, 32767, 6786, 15007, -14665, 12144, 4}},
		want: [][][]int64{{{0, 0, 0, 4631, 0, 0, 0, 2235}}, {{-30902, -21528, 32767, 18277, -13806, 16, -15324, 65}}, {{-32768, 3553, 32767, 2244, -32768, 32767, 5913, 15007}}},
	},
	{
		// oracle case: delay 7 1 3
		name: "delay_longer_than_frame", model: s35Delay(7, 3),
		in:   [][]int64{{35, -40, 46}, {5160, -32768, 1857}, {-32768, -38, -29}, {-541, -2, 25848}},
		want: [][][]int64{{{0, 0, 0}}, {{0, 0, 0}}, {{0, 35, -40}}, {{46, 5160, -32768}}},
	},
	{
		// oracle case: framer 5 2 0 2 2 4
		name: "framer", model: s35Framer(5, 2, false, 2, 4),
		in:   [][]int64{{-65, -21566, 32767, 25898, -1248, -83, -27435, 25126}, {-24, 37, -30, 5490, -27534, 25102, 9851, 32767}, {-10712, -29, -914, -32768, 16907, -15662, -5552, 92}, {-8716, 18905, -14426, 32767, -32768, -92, -18820, -32768}},
		want: [][][]int64{{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0}}, {{-65, -21566, 32767, 25898, -24, 32767, 25898, -24, 37, -30, -1248, -83, -27435, 25126, -27534, -27435, 25126, -27534, 25102, 9851}, {1}}, {{-24, 37, -30, 5490, -10712, -30, 5490, -10712, -29, -914, -27534, 25102, 9851, 32767, 16907, 9851, 32767, 16907, -15662, -5552}, {1}}, {{-10712, -29, -914, -32768, -8716, -914, -32768, -8716, 18905, -14426, 16907, -15662, -5552, 92, -32768, -5552, 92, -32768, -92, -18820}, {1}}},
	},
	{
		// oracle case: framer 6 4 1 1 8
		name: "framer_prefill", model: s35Framer(6, 4, true, 8),
		in:   [][]int64{{-32768, 57, -4622, -21, -32768, 17834, 32767, 19}, {-6837, 70, -19916, -28259, 32767, -34, 64, -3847}, {32767, 46, 17, -16932, -32768, 52, -24694, 32767}},
		want: [][][]int64{{{0, 0, -32768, 57, -4622, -21, -4622, -21, -32768, 17834, 32767, 19}, {1}}, {{32767, 19, -6837, 70, -19916, -28259, -19916, -28259, 32767, -34, 64, -3847}, {1}}, {{64, -3847, 32767, 46, 17, -16932, 17, -16932, -32768, 52, -24694, 32767}, {1}}},
	},
	{
		// oracle case: stacker 3 2 1 2
		name: "stacker", model: s35Stacker(3, 2, 1, 2),
		in:   [][]int64{{-33, 23550, -25842}, {2335, -28595, -41}, {-32621, -3204, 77}, {5050, 32767, 94}, {85, 32767, 8}},
		want: [][][]int64{{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0}}, {{-33, 23550, -25842, -33, 23550, -25842, -33, 23550, -25842, 2335, -28595, -41}, {1}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0}}, {{-33, 23550, -25842, 2335, -28595, -41, -32621, -3204, 77, 5050, 32767, 94}, {1}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0}}},
	},
	{
		// oracle case: stacker 2 0 0 1
		name: "stacker_no_context", model: s35Stacker(2, 0, 0, 1),
		in:   [][]int64{{29773, -10}, {22, -32768}, {21078, 32564}},
		want: [][][]int64{{{29773, -10}, {1}}, {{22, -32768}, {1}}, {{21078, 32564}, {1}}},
	},
	{
		// oracle case: overlap16 3 3 2 2 4
		name: "overlap_add_int16", model: s35OverlapAdd(7, 3, 2, 2, 4),
		in:   [][]int64{{16697, 4155, 32767, 80, -23, -32768, 32767, 39, 32767, -51, 6538, 30865, 41, 32767, 14080, -32768}, {-27415, 32767, -35, -13, -41, -36, -35, -14455, 85, 84, -7502, -540, 19269, -27846, -2696, 9045}, {32078, 17, -30073, 70, -10567, -15678, 21965, 32767, 44, -29, -32768, -32768, -32768, 47, -25542, -20025}},
		want: [][][]int64{{{16697, 4155, 32767, 57, -32768, 32767, 32767, -51, 6538, 30906, 32767, 14080}}, {{-27376, 32767, -35, -54, -36, -35, -32683, 84, -7502, 18729, -27846, -2696}}, {{17623, 17, -30073, -10497, -15678, 21965, 9089, -29, -32768, -32768, 47, -25542}}},
	},
	{
		// oracle case: overlapf 2 2 3 5
		name: "overlap_add_float", model: s35OverlapAdd(0, 2, 3, 5),
		inF:   [][]float32{{-0x1.59f9e8p-2, 0x1.93f7c8p-1, -0x1.f3d402p+0, 0x1.f9c794p+0, -0x1.ce75e6p+0, -0x1.3345ccp+0, 0x1.2acb1p-1, 0x1.21ecf8p-1, 0x1.ff834p+0, 0x1.ee39bp-1, 0x1.560fcp-2, -0x1.b24fa8p-1, 0x1.28b07p-1, -0x1.9cd8cp+0, -0x1.74602cp+0}, {-0x1.9696c8p-2, 0x1.bff35cp+0, 0x1.78d63cp+0, 0x1.8ab948p+0, 0x1.b9e548p-1, -0x1.3faddp-3, 0x1.604c8p-4, -0x1.d1576p-3, 0x1.321cdcp+0, 0x1.baa41cp+0, -0x1.9d8784p+0, 0x1.156528p-1, -0x1.c57b4cp-1, 0x1.bfc4dp-2, 0x1.3550c8p-1}, {-0x1.8412c8p+0, 0x1.2e31e8p-1, 0x1.71c75p-1, 0x1.4bf56p-1, 0x1.9fbde8p+0, 0x1.e8e6ep-3, -0x1.00ce4p-5, 0x1.cee5f8p-1, -0x1.b7fe9ep+0, 0x1.c357c4p+0, -0x1.2e124p-2, 0x1.ec36c8p+0, -0x1.1598a4p+0, 0x1.5e79f8p-1, -0x1.e53716p+0}},
		wantF: [][]float32{{-0x1.59f9e8p-2, 0x1.93f7c8p-1, -0x1.938ce8p+1, 0x1.47968ep+1, -0x1.cff6f4p-1, 0x1.265b6cp+0}, {0x1.25cf5ep+0, 0x1.18d4ep-3, -0x1.1bfd5p-3, 0x1.a0be1p+0, -0x1.f57f98p-1, 0x1.bccf7p+0}, {-0x1.5858a4p-1, 0x1.070a28p+0, 0x1.90a8e8p+0, 0x1.3be87cp-1, 0x1.1dd62ap+1, 0x1.a1c15p-3}},
	},
	{
		// oracle cases (two vectors): irfft 8 2
		name: "irfft_8", model: s35Irfft(8, 2),
		in:   [][]int64{{22291, 13688, -17602, 22802, -32768, -15237, 32767, -32768, -17822, -17331, 12453, -23046, -32768, 9812, -26083, 32767, 25076, 24237, 32767, 4377}, {-5674, -18104, 18797, 16392, 19977, -32768, -8822, 32577, -10443, 352, 2578, -16428, 20495, -20143, -27509, -26597, -9833, 18712, -32768, 28711}},
		want: [][][]int64{{{-3842, -1709, -5142, -7905, -11424, 2973, 22640, -6067, -10982, -10589, -8795, 9856, -7136, -10869, 16757, 1446}}, {{5472, 5013, -2961, -21132, 486, 12561, -11053, 5942, -7984, 8489, 12815, -15528, -13314, -2739, -6609, -5314}}},
	},
	{
		// oracle cases (two vectors): irfft 12 1
		name: "irfft_12", model: s35Irfft(12, 1),
		in:   [][]int64{{114, -81, -63, -120, -112, -226, -66, 245, -64, -152, 284, -122, 162, -234}, {1460, -1690, 2227, 316, -1838, -409, 1527, -212, -1301, 2294, -937, 2505, 1839, -32768}},
		want: [][][]int64{{{20, -24, 79, 85, -3, -32, -32, 116, 19, -77, 57, -92}}, {{221, -91, 1094, -448, 609, -460, -717, -605, 758, 562, -315, 852}}},
	},
	{
		// oracle cases (two vectors): irfft 16 1
		name: "irfft_16", model: s35Irfft(16, 1),
		in:   [][]int64{{32767, 2835, 2153, 1131, -1833, 208, 1640, 2346, 188, 762, -2558, 2237, -2926, -130, -386, 872, 32767, 135}, {27272, -2244, -15990, 32767, -32768, 30742, 25226, -27694, 3487, 28906, -11591, 21051, -19100, -3797, -13882, -32768, 32767, 32767}},
		want: [][][]int64{{{-465, -136, 140, -382, 598, 167, -251, -921, -677, 126, -270, 366, 636, -537, 289, 1317}}, {{-229, -16586, -4631, 1443, 8673, 4290, 106, 558, -12551, 1496, -5559, 2749, 4475, -5024, 6968, 8326}}},
	},
	{
		// oracle cases (two vectors): irfft 40 1
		name: "irfft_40", model: s35Irfft(40, 1),
		in:   [][]int64{{20199, 7089, 27720, -11609, 7891, -23728, -5973, -26298, -99, -32142, 9275, 28970, 29325, -32768, -21307, 8514, -16687, 31397, 32767, 28857, 17246, -27748, 32703, -437, -27976, 25326, 32767, 27522, -32768, 32767, 9951, 4221, 1905, 8355, -24875, 26012, -32768, 33, -32493, -3176, 32767, 31215}, {-2032, 494, 32767, 427, -1442, 1139, -2581, 866, -2755, -775, -645, -416, -688, -32768, -2371, -32768, 1676, 62, 2651, 1669, -2214, 755, 32767, 998, 1282, 2055, -32768, -1162, -1115, -2986, -91, 2607, 32767, -2340, -2443, 32767, 32767, 2504, 2172, 1054, -32768, 2055}},
		want: [][][]int64{{{15, -8031, -8881, 450, -46, -1583, -5453, 6905, -2920, -2074, -1196, -190, -313, 6416, -2271, -6230, 2683, -4185, -6984, 1574, 515, 1511, 4029, -132, 136, 4469, -2839, -8365, -1662, 1044, 3942, -2162, 7629, 9198, 7837, -7720, -563, 3961, 58, -1136}}, {{5254, -1743, 4889, 1501, 5764, 227, -3144, 3715, 1980, 2902, 1301, 2766, -6312, -808, 1084, 4113, 662, -3871, 283, -6955, 2308, -123, 3027, 357, -7574, 885, 114, 1405, 378, 1722, 801, -3584, 2780, 4994, -1438, 5027, 1332, 3115, 1871, -281}}},
	},
}

func (c s35Case) vecs(g *graph.Graph) []map[string]*graph.Data {
	x := g.Tensors[g.UserInputs()[0]]
	var vs []map[string]*graph.Data
	for i := range max(len(c.in), len(c.inF)) {
		d := graph.NewData(x.DType, x.Shape)
		if c.inF != nil {
			copy(d.F, c.inF[i])
		} else {
			copy(d.I, c.in[i])
		}
		vs = append(vs, map[string]*graph.Data{x.Name: d})
	}
	return vs
}

func (c s35Case) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode("signal35_"+c.name, c.model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// check compares vector v's outputs (in the graph's output order) with
// TFLite Micro's, float32 bit for bit.
func (c s35Case) check(t *testing.T, who string, v int, outs []*graph.Data) {
	t.Helper()
	if c.wantF != nil {
		got := outs[0].F
		same := len(got) == len(c.wantF[v])
		for i := 0; same && i < len(got); i++ {
			same = math.Float32bits(got[i]) == math.Float32bits(c.wantF[v][i])
		}
		if !same {
			t.Fatalf("vector %d: %s gives %v, TFLite Micro %v", v, who, got, c.wantF[v])
		}
		return
	}
	for i, want := range c.want[v] {
		if got := outs[i].I; !slices.Equal(got, want) {
			t.Fatalf("vector %d output %d: %s gives %v, TFLite Micro %v", v, i, who, got, want)
		}
	}
}

// TestSignal35MatchesTFLM runs each model in the reference interpreter,
// vector after vector in one session, then once more after a reset (the
// first vector's outputs again, as after TFLite Micro's Reset).
func TestSignal35MatchesTFLM(t *testing.T) {
	states := map[string]int{"delay": 1, "delay_longer_than_frame": 1, "framer": 2, "framer_prefill": 2, "stacker": 2,
		"stacker_no_context": 2, "overlap_add_int16": 1, "overlap_add_float": 1}
	for _, c := range s35Cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.decode(t)
			if len(g.States) != states[c.name] {
				t.Fatalf("states %+v: want %d", g.States, states[c.name])
			}
			s := interp.NewSession(g)
			vecs := c.vecs(g)
			run := func(v int) {
				out, err := s.Run(vecs[v])
				if err != nil {
					t.Fatal(err)
				}
				var outs []*graph.Data
				for _, name := range g.UserOutputs() {
					outs = append(outs, out[name])
				}
				c.check(t, "the interpreter", v, outs)
			}
			for v := range vecs {
				run(v)
			}
			s.Reset()
			run(0)
		})
	}
}

// TestSignal35GeneratedC compiles each model to C (strict C99, every
// warning an error) and runs its vectors one after another on the host
// with the sanitizers and, outside -short, on the Cortex-M4 under QEMU:
// the outputs are TFLite Micro's, the buffers carried from one inference
// to the next.
func TestSignal35GeneratedC(t *testing.T) {
	var cases []firmwareCase
	for _, c := range s35Cases {
		cases = append(cases, firmwareCase{name: c.name, graph: c.decode, vecs: c.vecs(c.decode(t)),
			check: func(t *testing.T, v int, outs []*graph.Data) { c.check(t, "the firmware", v, outs) }})
	}
	matchesOnBoards(t, "signal35_", cases)
}

// TestSignal35Refusals: forms TFLite Micro would run wrongly (or that
// mcugen does not take) are refused with one line naming the operator and
// the reason.
func TestSignal35Refusals(t *testing.T) {
	opts := func(code string, o map[string]tg.FlexValue) func(m *tg.Model) {
		return func(m *tg.Model) {
			for i := range m.Ops {
				if m.Ops[i].Custom == code {
					m.Ops[i].CustomOptions = tg.FlexMap(o)
				}
			}
		}
	}
	for _, c := range []struct {
		name  string
		model func() *tg.Model
		edit  func(m *tg.Model)
		want  string
	}{
		{"negative delay", s35Delay(-1, 4), nil, `"SignalDelay"): delay_length -1 is not in [0, 1048576]`},
		{"delay output", s35Delay(2, 4), func(m *tg.Model) { m.Tensors[1].Shape = []int32{5} }, "input [4] and output [5]"},
		{"prefill short frame", s35Framer(2, 4, true, 8), nil, `"SignalFramer"): prefill with frame_size 2 below frame_step 4`},
		{"framer input", s35Framer(5, 3, false, 8), nil, "input [8]: its last dimension must be a positive multiple of frame_step 3"},
		{"framer extra option", s35Framer(5, 2, false, 4), opts("SignalFramer", map[string]tg.FlexValue{"a": tg.FlexInt(0),
			"frame_size": tg.FlexInt(5), "frame_step": tg.FlexInt(2), "prefill": tg.FlexBool(false)}),
			`option "frame_size" is not at position 0`},
		{"framer flag type", s35Framer(5, 2, false, 4), func(m *tg.Model) { m.Tensors[2].Type = tg.Int32 }, `output 1 ("valid") is of TFLite type 2, want bool`},
		{"stacker step", s35Stacker(3, 2, 1, 5), nil, `"SignalStacker"): stacker_step 5 is not in [1, 4]`},
		{"stacker channels", s35Stacker(3, 2, 1, 2), opts("SignalStacker", map[string]tg.FlexValue{"num_channels": tg.FlexInt(4),
			"stacker_left_context": tg.FlexInt(2), "stacker_right_context": tg.FlexInt(1), "stacker_step": tg.FlexInt(2)}),
			"input [3] and output [12]: want [4] and [16]"},
		{"overlap step", s35OverlapAdd(7, 5, 2, 4), nil, `"SignalOverlapAdd"): frame_step 5 is not in [1, 4]`},
		{"overlap int32", s35OverlapAdd(tg.Int32, 2, 2, 4), nil, "T is TFLite type 2: TFLite Micro's SignalOverlapAdd takes int16 (7) or float32 (0)"},
		{"irfft int8", s35IrfftTyped(tg.Int8, 8, 1), nil, `"SignalIrfft"): T is TFLite type 9: SignalIrfft runs int16, int32 or float32`},
		{"irfft T and tensors", s35IrfftTyped(tg.Float32, 8, 1), func(m *tg.Model) { m.Tensors[0].Type = tg.Int32 },
			`input 0 ("x") is of TFLite type 2, want float32`},
		{"irfft radix 7", s35Irfft(14, 1), nil, "FFT length 14: want an even length from 4 to 32768 whose half has no prime factor above 5"},
		{"irfft bins", s35Irfft(8, 1), func(m *tg.Model) { m.Tensors[0].Shape = []int32{8} }, "input [8]: want frames of 10 values (5 complex bins)"},
		{"overlap rank", s35OverlapAdd(7, 1, 2, 4), func(m *tg.Model) { m.Tensors[0].Shape = []int32{8} }, "input [8]: want [..., frames, frame_size]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.model()
			if c.edit != nil {
				c.edit(m)
			}
			_, err := tflite.Decode("bad", m.Bytes())
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
		})
	}
}
