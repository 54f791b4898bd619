package tflite_test

import (
	"math"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// Session 36: the int32 and float32 forms of TFLite Micro's SignalRfft and
// SignalIrfft (kiss_fftr and kiss_fftri of kissfft v130 with TFLite
// Micro's patch, FIXED_POINT 32 and float).
//
// Every expected value was produced by a C++ program built on TFLite
// Micro's signal/src (rfft_int32.cc, rfft_float.cc, irfft_int32.cc,
// irfft_float.cc and their kiss_fft_wrappers), compiled for x86-64 with
// g++ -O2 (no fused multiply-add), applied frame by frame as the kernels'
// Eval (each rfft frame zero-padded to fft_length). Floats are compared
// bit for bit (want holds their IEEE bits: the signs of zeros count).
// The hand-checkable cases: an impulse gives every bin (1, 0) in float
// (kissfft writes some imaginary parts as -0) and 2^24/8 in int32 (each
// of the two radix-4 and split stages divides by its radix); a constant
// 0.5 gives bin 0 = 4; a cosine at bin 1 of 16 points gives bin 1 = 8
// (the others within float rounding of 0); the float inverse of bin 0 =
// 8 is 1 everywhere (kiss_fftri's 8 divided by the length); the int32
// inverse of bin 0 = 2^20 is 2^20/8 (halved by the split, divided by 4).
type s36Case struct {
	name     string
	op       string // rfft or irfft
	typ      int8
	n        int // fft_length
	frameLen int // the input's last dimension
	frames   int
	in       []float64
	want     []int64
}

var s36Cases = []s36Case{
	{name: "rfft float impulse", op: "rfft", typ: tg.Float32, n: 8, frameLen: 8, frames: 1,
		in:   []float64{1, 0, 0, 0, 0, 0, 0, 0},
		want: []int64{0x3f800000, 0x00000000, 0x3f800000, 0x00000000, 0x3f800000, 0x80000000, 0x3f800000, 0x80000000, 0x3f800000, 0x00000000}},
	{name: "rfft float constant", op: "rfft", typ: tg.Float32, n: 8, frameLen: 8, frames: 1,
		in:   []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
		want: []int64{0x40800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x80000000, 0x00000000, 0x80000000, 0x00000000, 0x00000000}},
	{name: "rfft float cosine at bin 1", op: "rfft", typ: tg.Float32, n: 16, frameLen: 16, frames: 1,
		in:   []float64{1, 0.923879504, 0.707106769, 0.382683426, 6.12323426e-17, -0.382683426, -0.707106769, -0.923879504, -1, -0.923879504, -0.707106769, -0.382683426, -1.83697015e-16, 0.382683426, 0.707106769, 0.923879504},
		want: []int64{0xa50d3131, 0x00000000, 0x41000000, 0xb4000000, 0x250d3131, 0x00000000, 0x00000000, 0x00000000, 0xa50d3131, 0x80000000, 0x00000000, 0x80000000, 0x250d3131, 0x80000000, 0x34800000, 0xb4000000, 0xa50d3131, 0x00000000}},
	{name: "rfft float random", op: "rfft", typ: tg.Float32, n: 30, frameLen: 24, frames: 2,
		in:   []float64{48.8778419, 85.5815811, 73.3685226, -39.1912079, -81.4535904, 4.53267527, -28.0161972, -64.5964279, 41.5607147, 94.8408432, 103.278595, -93.8370209, -20.2818489, 46.406456, 204.641479, 19.2560616, -27.4641304, 152.010773, -105.394508, 34.9399414, -64.7484207, 19.5753193, -167.741669, 59.4318466, -67.4413757, -117.753036, -67.7681961, -28.9763603, -205.473053, 119.45105, 176.507156, -130.041824, 22.5347271, 88.9196777, -6.13461399, -34.1813011, 107.179359, -210.917007, -71.2000504, -71.6928635, 31.4615841, 67.3413315, -47.3283005, 25.0150528, 6.49628448, 73.2014008, -0.990021944, -171.933243},
		want: []int64{0x4393c9ef, 0x00000000, 0xc327b2d0, 0xc34ae267, 0x43f56708, 0x4386ace9, 0x41a1dadc, 0x4202c862, 0x43b9b178, 0xc3b4cc3b, 0xc2ff902b, 0xc3b0d740, 0x43437bf5, 0x4396203e, 0x42e09324, 0xc3e875fb, 0xc411ea3a, 0xc2f2bb9c, 0x439afd3c, 0xc2c6ada6, 0xc3234a15, 0x43c1fe72, 0x41c39410, 0xc2e07b63, 0xc2828fef, 0x431210aa, 0x435ddc4b, 0xc4085498, 0x42eb8a5d, 0x441296fb, 0xc3ab297b, 0x00000000, 0xc4006e50, 0x00000000, 0xc32fd96b, 0xc1f74e90, 0xc3e20145, 0xc22c162c, 0x42f024e2, 0x442781f3, 0xc378e79e, 0x431a1736, 0x41d3efe0, 0x43949978, 0x43ab99c0, 0xc4020350, 0x4209c598, 0x43120116, 0xc41bffb2, 0xc279da88, 0xc40777d0, 0x43ee0d76, 0x44169a8d, 0x43d24272, 0x44040e52, 0xc3836513, 0xc306a4a5, 0x435c8a95, 0xc2bca84c, 0xc407ce7e, 0xc3885a9e, 0x42d85380, 0x4386b490, 0x00000000}},
	{name: "rfft int32 impulse", op: "rfft", typ: tg.Int32, n: 8, frameLen: 8, frames: 1,
		in:   []float64{16777216, 0, 0, 0, 0, 0, 0, 0},
		want: []int64{2097152, 0, 2097152, 0, 2097152, 0, 2097152, 0, 2097152, 0}},
	{name: "rfft int32 random", op: "rfft", typ: tg.Int32, n: 40, frameLen: 40, frames: 1,
		in:   []float64{1731752333, 537021052, 1846940811, 1369335941, 1829238611, 801229977, -1840519453, -593533245, -1571480431, -994178986, 484745618, 1809750126, -35989956, -259241164, 741761740, 827639168, -1251045068, 1114970322, 1821729373, -1849806999, 1852573211, -1791772133, 335555317, -1890766270, 1672073362, 244705335, -239574719, 1913237778, 149153783, -2071447799, -1017612726, 1164622963, -486432937, -892470480, -305942293, -196487542, -803367073, -1210560953, 1827084939, -644163618},
		want: []int64{103218198, 0, 55458378, -100061225, 185587611, -52159208, 284761162, -147956611, -5819589, -143221530, -66061484, -243261943, -54744200, 192593630, -62179403, 113709717, 17497826, -15409989, 70862422, -31728411, -14192319, 160789328, -80265518, 113219028, -25189205, -415885674, -35911700, 67448670, 15416461, -9264697, -78775582, -65180495, 226427159, 67063343, -41798998, -147187095, 382581525, 22850852, -76294497, -92992061, 233814024, 0}},
	{name: "irfft float dc", op: "irfft", typ: tg.Float32, n: 8, frameLen: 10, frames: 1,
		in:   []float64{8, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		want: []int64{0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000}},
	{name: "irfft float random", op: "irfft", typ: tg.Float32, n: 24, frameLen: 26, frames: 1,
		in:   []float64{5.01032305, 7.08992052, -9.96126938, -5.65148449, -17.3310947, -6.6869092, 8.71845245, 6.39038944, 3.72924829, -0.768076956, 15.8370495, -5.10285234, -21.8993435, 11.0761719, 2.75599194, -2.06577206, -11.5816441, -0.483664304, 3.97978544, -16.3981762, 0.331218749, 0.432522565, -4.6257925, -7.45824385, -3.87403703, -8.50223255},
		want: []int64{0xc01d3901, 0x3f3e26cb, 0xc00de15b, 0x3de92ae5, 0xbfbead20, 0x4033c413, 0x40945b60, 0x403fcff8, 0xbf319428, 0xbd3b3880, 0x3fc0760d, 0x3fcfc37d, 0xc0a7b353, 0xc01ae149, 0x40c89203, 0x3f768f3d, 0x3f7df5c0, 0x3e80a53b, 0x3f220cb3, 0x4044bd18, 0xbfe376b8, 0xc094eef7, 0x3ed1f029, 0xbf818b36}},
	{name: "irfft int32 dc", op: "irfft", typ: tg.Int32, n: 8, frameLen: 10, frames: 1,
		in:   []float64{1048576, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		want: []int64{131072, 131072, 131072, 131072, 131072, 131072, 131072, 131072}},
	{name: "irfft int32 random", op: "irfft", typ: tg.Int32, n: 20, frameLen: 22, frames: 2,
		in:   []float64{-49273883, -99793739, -282763743, 2125858650, -1435609839, 1352642097, 118642748, 347269707, -540910824, -141008684, -294180640, 251563018, 1861365621, 396323967, -1842440155, 1279741503, 1711556305, -1221389724, 1149794740, -287209842, 552565781, 1239736818, 83880257, 552816407, -1429480304, -570630694, -803390645, -781153098, 11961793, -636017468, 1122969959, -1490417263, -456402185, 1153105236, -405993996, -1573023918, -1530003601, 407762042, -1532313433, 1999089283, -2100310855, -1833535104, 343187056, -706179939},
		want: []int64{69710016, 233482721, 474248269, 299640537, 354697731, -216671440, -19069234, -124364287, -221921577, -734315912, 299899426, -156357751, -230010103, 493869557, -167307671, -389474892, 6256588, -52606353, -314857497, 345877990, -261446230, 444898179, 330224843, -497889178, 323102495, -239156373, -221081688, 152319725, -497806367, -555946273, -19592660, 181132647, -28759181, -412277308, 484390457, 373233925, 343475016, 121102461, -238973031, 302928795}},
}

// model: x [frames, frameLen] → SignalRfft or SignalIrfft → y.
func (c s36Case) model() *tg.Model {
	if c.op == "irfft" {
		return s35IrfftTyped(c.typ, c.n, c.frames)()
	}
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: c.typ, Shape: s35Shape(c.frames, c.frameLen)})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: c.typ, Shape: s35Shape(c.frames, 2*(c.n/2+1))})
	s35Custom(m, "SignalRfft", map[string]tg.FlexValue{"T": tg.FlexInt(int32(c.typ)), "fft_length": tg.FlexInt(int32(c.n))}, []int32{x}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	return m
}

func (c s36Case) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode(c.name, c.model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (c s36Case) input(g *graph.Graph) map[string]*graph.Data {
	x := g.Tensors[g.Inputs[0]]
	d := graph.NewData(x.DType, x.Shape)
	for i, v := range c.in {
		if x.DType == graph.Float32 {
			d.F[i] = float32(v)
		} else {
			d.I[i] = int64(v)
		}
	}
	return map[string]*graph.Data{g.Inputs[0]: d}
}

// check compares y with want, floats by their bits.
func (c s36Case) check(t *testing.T, who string, y *graph.Data) {
	t.Helper()
	n := len(y.I)
	if y.DType == graph.Float32 {
		n = len(y.F)
	}
	if n != len(c.want) {
		t.Fatalf("%s gives %d values, want %d", who, n, len(c.want))
	}
	for i, w := range c.want {
		got := int64(0)
		if y.DType == graph.Float32 {
			got = int64(math.Float32bits(y.F[i]))
		} else {
			got = y.I[i]
		}
		if got != w {
			t.Fatalf("%s: value %d is %#x, TFLite Micro's %#x", who, i, got, w)
		}
	}
}

// TestSignal36Interp runs each case through the reference interpreter.
func TestSignal36Interp(t *testing.T) {
	for _, c := range s36Cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.decode(t)
			res, err := interp.Run(g, c.input(g))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, "the interpreter", res[g.Outputs[0]])
		})
	}
}

// TestSignal36GeneratedC compiles each case to C (strict C99) and runs it
// on the host with the sanitizers and, outside -short, on the Cortex-M4
// under QEMU (gcc -std=c99 contracts no product into a sum there: the
// float results are bit for bit TFLite Micro's unfused ones).
func TestSignal36GeneratedC(t *testing.T) {
	var cases []firmwareCase
	for _, c := range s36Cases {
		g := c.decode(t)
		cases = append(cases, firmwareCase{name: c.name, graph: c.decode, vecs: []map[string]*graph.Data{c.input(g)},
			check: func(t *testing.T, v int, outs []*graph.Data) { c.check(t, "the firmware", outs[0]) }})
	}
	matchesOnBoards(t, "signal36_", cases)
}
