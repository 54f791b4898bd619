package tflite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

const (
	codeReshape = 22
	codeCast    = 53
	ttUInt32    = 15 // TFLite's uint32 (tflitegen names no constant for it)
)

// frontCase is the front half of TFLite Micro's micro_speech audio
// preprocessor at a smaller size: SignalWindow (shift 12) of a [1, L] frame,
// a RESHAPE to [L], SignalFftAutoScale, the int16 SignalRfft of fftLen
// points, SignalEnergy of bins start to end − 1 and a CAST of the uint32
// energies to int32. Its outputs are the window's output, the exponent,
// the spectrum and the energies.
type frontCase struct {
	name             string
	l, fftLen        int
	start, end       int
	seed             uint32
	loud             bool
	window, spectrum []int64
	bits             int64
	energy           []int64
}

// frontInput is L pseudo-random samples (a linear congruential generator):
// loud, every fifth one full scale and the rest a sixteenth of it; else
// all an eighth of it.
func frontInput(l int, seed uint32, loud bool) []int16 {
	x := make([]int16, l)
	for i := range x {
		seed = seed*1103515245 + 12345
		x[i] = int16(seed >> 16)
		switch {
		case !loud:
			x[i] >>= 3
		case i%5 != 0:
			x[i] >>= 4
		}
	}
	return x
}

// frontWindow is a Hann-like int16 window of L values (integer arithmetic).
func frontWindow(l int) []int16 {
	w := make([]int16, l)
	for i := range w {
		w[i] = int16(4096 * i * (l - 1 - i) * 4 / ((l - 1) * (l - 1)))
	}
	return w
}

func (c frontCase) model() *tg.Model {
	m := &tg.Model{}
	l, bins := int32(c.l), int32(c.fftLen/2+1)
	x := m.AddTensor(tg.Tensor{Name: "audio", Type: tg.Int16, Shape: []int32{1, l}})
	w := m.AddTensor(tg.Tensor{Name: "window", Type: tg.Int16, Shape: []int32{l}, Data: tg.I16Bytes(frontWindow(c.l)...)})
	win := m.AddTensor(tg.Tensor{Name: "signal_window", Type: tg.Int16, Shape: []int32{1, l}})
	shape := m.AddTensor(tg.Tensor{Name: "shape", Type: tg.Int32, Shape: []int32{1}, Data: tg.I32Bytes(-1)})
	flat := m.AddTensor(tg.Tensor{Name: "flat", Type: tg.Int16, Shape: []int32{l}})
	scaled := m.AddTensor(tg.Tensor{Name: "scaled", Type: tg.Int16, Shape: []int32{l}})
	bits := m.AddTensor(tg.Tensor{Name: "scale_bits", Type: tg.Int32, Shape: []int32{}})
	spec := m.AddTensor(tg.Tensor{Name: "spectrum", Type: tg.Int16, Shape: []int32{2 * bins}})
	energy := m.AddTensor(tg.Tensor{Name: "energy", Type: ttUInt32, Shape: []int32{bins}})
	e32 := m.AddTensor(tg.Tensor{Name: "energy_int32", Type: tg.Int32, Shape: []int32{bins}})
	custom := func(name string, opts map[string]tg.FlexValue, ins []int32, outs ...int32) {
		m.Ops = append(m.Ops, tg.Operator{Code: opCustomCode, Custom: name, Inputs: ins, Outputs: outs, CustomOptions: tg.FlexMap(opts)})
	}
	custom("SignalWindow", map[string]tg.FlexValue{"shift": tg.FlexInt(12)}, []int32{x, w}, win)
	m.AddOp(codeReshape, nil, []int32{win, shape}, flat)
	custom("SignalFftAutoScale", map[string]tg.FlexValue{}, []int32{flat}, scaled, bits)
	custom("SignalRfft", map[string]tg.FlexValue{"T": tg.FlexInt(int32(tg.Int16)), "fft_length": tg.FlexInt(int32(c.fftLen))}, []int32{scaled}, spec)
	custom("SignalEnergy", map[string]tg.FlexValue{"start_index": tg.FlexInt(int32(c.start)), "end_index": tg.FlexInt(int32(c.end))}, []int32{spec}, energy)
	m.AddOp(codeCast, nil, []int32{energy}, e32)
	m.Inputs, m.Outputs = []int32{x}, []int32{win, bits, spec, e32}
	return m
}

func (c frontCase) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode(c.name, c.model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (c frontCase) input() map[string]*graph.Data {
	d := graph.NewData(graph.Int16, []int{1, c.l})
	for i, v := range frontInput(c.l, c.seed, c.loud) {
		d.I[i] = int64(v)
	}
	return map[string]*graph.Data{"audio": d}
}

// want is the expected value of each output, in the model's order.
func (c frontCase) want() [][]int64 {
	return [][]int64{c.window, {c.bits}, c.spectrum, c.energy}
}

// The expected outputs come from TFLite Micro's kernels (signal/src
// window.cc, fft_auto_scale.cc, rfft_int16.cc over kissfft v130 with TFLite
// Micro's patch, energy.cc) run on the same inputs.
var frontCases = []frontCase{
	// 64 points: kissfft's 32-point complex FFT is radix 4, 4, 2.
	{name: "fft64", l: 48, fftLen: 64, start: 2, end: 30, seed: 7,
		window:   []int64{0, 101, 221, 677, 1265, -1398, 1783, 2013, 563, -1692, 938, -664, 2816, -690, -3349, 34, 1592, 2729, -1610, -3048, -3975, 2281, 631, -389, 2255, 1820, 3908, -1772, -758, -2087, -2170, 1448, 2913, -2957, 2735, -828, -1077, -2457, -1761, -203, -806, -1068, -1518, -156, -835, 319, -202, 0},
		bits:     3,
		spectrum: []int64{-553, 0, 1127, -967, 447, 820, -399, -1851, -397, 169, 134, 741, -188, -1733, -1301, 1963, 2164, -710, -1686, -376, 300, 454, 508, 805, 1263, -1088, -1386, -2476, -2333, 2373, 1159, 620, 543, 277, -618, -213, 1169, 905, -363, -800, 835, 940, 573, -1375, 105, -166, -1434, -1450, 104, 1723, -239, -1034, -60, 1333, 569, -1131, -456, -306, -1924, 1103, 1877, 542, -548, 431, 1443, 0},
		energy:   []int64{0, 0, 872209, 3585402, 186170, 567037, 3038633, 5545970, 5186996, 2983972, 296116, 906089, 2778913, 8051572, 11074018, 1727681, 371578, 427293, 2185586, 771769, 1580825, 2218954, 38581, 4158856, 2979545, 1126277, 1780489, 1602922, 301572, 4918385, 0, 0, 0},
	},
	// 60 points: 30 = radix 2, 3, 5; frames of 60, no zero padding.
	{name: "fft60", l: 60, fftLen: 60, start: 0, end: 31, seed: 99, loud: true,
		window:   []int64{0, 26, 183, -90, 181, -6324, 398, 320, -263, -854, -6714, -414, 688, 356, 435, 15360, -6, 914, -957, -1035, -24263, -860, 1802, 1865, 691, 17891, -402, -1443, -901, -364, -10428, 876, 1519, 462, 5, 2347, 85, -1423, 1739, 1030, -1343, 6, -451, 1186, 1276, -4529, -411, -86, 523, 511, 2314, 852, -11, -504, -335, -3177, 221, 198, -94, 0},
		bits:     0,
		spectrum: []int64{-191, 0, -115, 81, -53, 47, -145, 114, 155, 439, 837, -851, -1054, -170, 692, 1107, 271, -517, -291, -52, -17, -120, 34, -125, -379, 30, -138, 12, 53, 4, -145, 201, 119, 478, 782, -874, -1049, 27, 844, 779, 104, -400, -150, -140, 21, -103, -171, 75, -312, -7, -5, -11, -78, 73, -169, 117, 186, 514, 741, -865, -959, 0},
		energy:   []int64{36481, 19786, 5018, 34021, 216746, 1424770, 1139816, 1704313, 340730, 87385, 14689, 16781, 144541, 19188, 2825, 61426, 242645, 1375400, 1101130, 1319177, 170816, 42100, 11050, 34866, 97393, 146, 11413, 42250, 298792, 1297306, 919681},
	},
}

// TestSignalFrontMatchesTFLM runs the front end in the reference
// interpreter.
func TestSignalFrontMatchesTFLM(t *testing.T) {
	for _, c := range frontCases {
		t.Run(c.name, func(t *testing.T) {
			g := c.decode(t)
			res, err := interp.Run(g, c.input())
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want() {
				if got := res[g.Outputs[i]].I; !slices.Equal(got, w) {
					t.Errorf("output %s: got %v, TFLite Micro %v", g.Outputs[i], got, w)
				}
			}
		})
	}
}

// TestSignalFrontGeneratedC compiles the front end to C and runs it on the
// host (with the sanitizers) and, outside -short, on the Cortex-M4 under
// QEMU: its outputs are TFLite Micro's.
func TestSignalFrontGeneratedC(t *testing.T) {
	var fc []firmwareCase
	for _, c := range frontCases {
		fc = append(fc, firmwareCase{name: c.name, graph: c.decode, vecs: []map[string]*graph.Data{c.input()}, want: [][][]int64{c.want()}})
	}
	matchesOnBoards(t, "signal_front_", fc)
}

// TestSignalFrontRefusals: forms TFLite Micro's kernels do not take, or
// mcugen does not run, are refused with one line naming the operator.
func TestSignalFrontRefusals(t *testing.T) {
	base := frontCases[0]
	for _, r := range []struct {
		name, want string
		edit       func(m *tg.Model)
	}{
		{"rfft int8", "SignalRfft runs int16, int32 or float32", func(m *tg.Model) {
			m.Ops[3].CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"T": tg.FlexInt(int32(tg.Int8)), "fft_length": tg.FlexInt(64)})
		}},
		{"rfft T and tensors", "is of TFLite type 7, want int32", func(m *tg.Model) {
			m.Ops[3].CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"T": tg.FlexInt(int32(tg.Int32)), "fft_length": tg.FlexInt(64)})
		}},
		{"rfft radix 7", "radices 2 to 5", func(m *tg.Model) {
			m.Ops[3].CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"T": tg.FlexInt(int32(tg.Int16)), "fft_length": tg.FlexInt(56)})
		}},
		{"window shift", "shift 40", func(m *tg.Model) {
			m.Ops[0].CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"shift": tg.FlexInt(40)})
		}},
		{"window weights", "divide the input", func(m *tg.Model) {
			m.Tensors[1].Shape, m.Tensors[1].Data = []int32{5}, tg.I16Bytes(1, 2, 3, 4, 5)
		}},
		{"energy range", "end_index 40", func(m *tg.Model) {
			m.Ops[4].CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"start_index": tg.FlexInt(0), "end_index": tg.FlexInt(40)})
		}},
		{"energy type", "want uint32", func(m *tg.Model) { m.Tensors[8].Type = tg.Int32 }},
	} {
		t.Run(r.name, func(t *testing.T) {
			m := base.model()
			r.edit(m)
			_, err := tflite.Decode("refused", m.Bytes())
			if err == nil || !strings.Contains(err.Error(), r.want) || !strings.Contains(err.Error(), "Signal") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line naming the op and %q", err, r.want)
			}
		})
	}
}
