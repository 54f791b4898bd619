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

// TFLite's uint32 and uint64 tensor types and the CAST and CUSTOM codes
// (tflitegen names no constant for them).
const (
	bankU32    int8  = 15
	bankU64    int8  = 12
	bankCast   int32 = 53
	bankCustom int32 = 32
)

// bankCase is a model of the signal library's filter bank ops (TFLite
// Micro's micro_speech front end after the FFT), its input vectors, run in
// this order as one session (the spectral subtraction's noise estimate
// carries over), and TFLite Micro's outputs for each: every want comes from
// its signal/src kernels (FilterbankAccumulateChannels, FilterbankSqrt,
// FilterbankSpectralSubtraction, ApplyPcanAutoGainControlFixed,
// FilterbankLog), run on these inputs. The models take and give int32,
// int64 or int16: uint32 and uint64 tensors are CASTs away.
type bankCase struct {
	name  string
	model func() *tg.Model
	vecs  []map[string]*graph.Data
	want  [][][]int64 // [vector][output]
}

func bankVec(dt graph.DType, v ...int64) *graph.Data {
	return &graph.Data{DType: dt, Shape: []int{len(v)}, I: v}
}

// bankU64s turns uint64 values into the int64 bit patterns mcugen holds.
func bankU64s(v ...uint64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// bankModel helps build a model: typed tensors, casts and custom ops.
type bankModel struct{ m *tg.Model }

func (b bankModel) t(name string, typ int8, n int) int32 {
	return b.m.AddTensor(tg.Tensor{Name: name, Type: typ, Shape: []int32{int32(n)}})
}

func (b bankModel) cast(x int32, name string, typ int8, n int) int32 {
	y := b.t(name, typ, n)
	b.m.AddOp(bankCast, nil, []int32{x}, y)
	return y
}

func (b bankModel) custom(code string, opts map[string]tg.FlexValue, ins []int32, outs ...int32) {
	b.m.Ops = append(b.m.Ops, tg.Operator{Code: bankCustom, Custom: code, Inputs: ins, Outputs: outs, CustomOptions: tg.FlexMap(opts)})
}

func bankI16(name string, v ...int16) tg.Tensor {
	return tg.Tensor{Name: name, Type: tg.Int16, Shape: []int32{int32(len(v))}, Data: tg.I16Bytes(v...)}
}

// bankFilterBankModel: x int32 [12] as uint32 → SignalFilterBank (4
// channels) → uint64, given as int64 (output 0) and through
// SignalFilterBankSquareRoot, shifted by the int32 scalar input "shift",
// as int32 (output 1). A weight of −30000 makes channel 2's sum negative
// for the first vector: modulo 2^64, as TFLite Micro's uint64 sum.
func bankFilterBankModel() *tg.Model {
	b := bankModel{&tg.Model{}}
	x := b.t("x", tg.Int32, 12)
	shift := b.m.AddTensor(tg.Tensor{Name: "shift", Type: tg.Int32, Shape: []int32{}})
	xu := b.cast(x, "x_u32", bankU32, 12)
	w := b.m.AddTensor(bankI16("weights", 4096, 2048, 1000, 3000, 4096, 512, 100, 4000, -30000, 2500, 1234, 3999, 16, 4095))
	u := b.m.AddTensor(bankI16("unweights", 0, 2048, 3096, 1096, 0, 3584, 3996, 96, 7, 1596, 2862, 97, 4080, 1))
	fs := b.m.AddTensor(bankI16("freq_starts", 0, 2, 4, 7, 9))
	ws := b.m.AddTensor(bankI16("weight_starts", 0, 2, 5, 8, 11))
	wd := b.m.AddTensor(bankI16("widths", 2, 3, 3, 3, 2))
	fb := b.t("fb", bankU64, 4)
	b.custom("SignalFilterBank", map[string]tg.FlexValue{"num_channels": tg.FlexInt(4)}, []int32{xu, w, u, fs, ws, wd}, fb)
	sq := b.t("sqrt", bankU32, 4)
	b.custom("SignalFilterBankSquareRoot", map[string]tg.FlexValue{}, []int32{fb, shift}, sq)
	y0 := b.cast(fb, "fb_i64", tg.Int64, 4)
	y1 := b.cast(sq, "sqrt_i32", tg.Int32, 4)
	b.m.Inputs, b.m.Outputs = []int32{x, shift}, []int32{y0, y1}
	return b.m
}

// bankSpectralModel: x int32 [5] as uint32 → SignalFilterBankSpectralSubtraction
// → the output and the noise estimate, each as int32.
func bankSpectralModel(opts map[string]tg.FlexValue) func() *tg.Model {
	return func() *tg.Model {
		b := bankModel{&tg.Model{}}
		x := b.t("x", tg.Int32, 5)
		xu := b.cast(x, "x_u32", bankU32, 5)
		y, est := b.t("y", bankU32, 5), b.t("noise", bankU32, 5)
		b.custom("SignalFilterBankSpectralSubtraction", opts, []int32{xu}, y, est)
		b.m.Inputs, b.m.Outputs = []int32{x}, []int32{b.cast(y, "y_i32", tg.Int32, 5), b.cast(est, "noise_i32", tg.Int32, 5)}
		return b.m
	}
}

func bankSpectralOptions(s, oms, as, aoms, minSig, sb, ssb int32, clamp bool) map[string]tg.FlexValue {
	return map[string]tg.FlexValue{
		"alternate_one_minus_smoothing": tg.FlexInt(aoms), "alternate_smoothing": tg.FlexInt(as), "clamping": tg.FlexBool(clamp),
		"min_signal_remaining": tg.FlexInt(minSig), "num_channels": tg.FlexInt(5), "one_minus_smoothing": tg.FlexInt(oms),
		"smoothing": tg.FlexInt(s), "smoothing_bits": tg.FlexInt(sb), "spectral_subtraction_bits": tg.FlexInt(ssb),
	}
}

// bankPCANLUT is a made-up gain table of 125 entries, both signs.
func bankPCANLUT() []int16 {
	lut := make([]int16, 125)
	for i := range lut {
		lut[i] = int16(uint32(i+1) * 2654435761 >> 16)
	}
	return lut
}

// bankPCANModel: x and the noise estimate int32 [8] as uint32 → SignalPCAN
// (snr_shift 6, bankPCANLUT) → int32.
func bankPCANModel() *tg.Model {
	b := bankModel{&tg.Model{}}
	x, e := b.t("x", tg.Int32, 8), b.t("noise", tg.Int32, 8)
	lut := b.m.AddTensor(bankI16("gain_lut", bankPCANLUT()...))
	y := b.t("y", bankU32, 8)
	b.custom("SignalPCAN", map[string]tg.FlexValue{"snr_shift": tg.FlexInt(6)}, []int32{b.cast(x, "x_u32", bankU32, 8), b.cast(e, "noise_u32", bankU32, 8), lut}, y)
	b.m.Inputs, b.m.Outputs = []int32{x, e}, []int32{b.cast(y, "y_i32", tg.Int32, 8)}
	return b.m
}

// bankLogModel: x int32 [8] as uint32 → SignalFilterBankLog → int16.
func bankLogModel(corr, scale int32) func() *tg.Model {
	return func() *tg.Model {
		b := bankModel{&tg.Model{}}
		x := b.t("x", tg.Int32, 8)
		y := b.t("y", tg.Int16, 8)
		b.custom("SignalFilterBankLog", map[string]tg.FlexValue{"input_correction_bits": tg.FlexInt(corr), "output_scale": tg.FlexInt(scale)},
			[]int32{b.cast(x, "x_u32", bankU32, 8)}, y)
		b.m.Inputs, b.m.Outputs = []int32{x}, []int32{y}
		return b.m
	}
}

// The uint32 inputs are given as int32 (4000000000 is −294967296,
// 0xFFFFFFFF is −1, 3000000000 is −1294967296).
var (
	bankSpectralIn = []map[string]*graph.Data{
		{"x": bankVec(graph.Int32, 1000, 50000, 0, 123456789, 7)},
		{"x": bankVec(graph.Int32, 900, 60000, 5, 123, 70000)},
		{"x": bankVec(graph.Int32, 20000, 10, 300000, -294967296, 7)},
	}
	bankCases = []bankCase{
		{
			name:  "filter_bank_sqrt",
			model: bankFilterBankModel,
			vecs: []map[string]*graph.Data{
				{"x": bankVec(graph.Int32, 0, 1, 70000, -294967296, 123456, 99, 2147483647, -1294967296, 65535, 1048576, 3, 77777),
					"shift": {DType: graph.Int32, Shape: []int{}, I: []int64{0}}},
				{"x": bankVec(graph.Int32, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
					"shift": {DType: graph.Int32, Shape: []int{}, I: []int64{3}}},
			},
			want: [][][]int64{
				{bankU64s(12000575677824, 12974214527372, 18446654281768623920, 28298873844), {3464185, 3601974, 4294956843 - 1<<32, 168223}},
				{bankU64s(43568148240480, 37812892065180, 18446664230267537566, 36421322661600), {825077, 768652, 536869750, 754376}},
			},
		},
		{
			// micro_speech's settings (audio_preprocessor_int8.tflite).
			name:  "spectral_subtraction",
			model: bankSpectralModel(bankSpectralOptions(409, 15975, 983, 15401, 819, 10, 14, false)),
			vecs:  bankSpectralIn,
			want: [][][]int64{
				{{975, 47000, 0, 6171332, 6}, {25562, 3071875, 0, 111937466, 178}},
				{{853, 53580, 4, 6, 68252}, {47930, 6573819, 127, 105229048, 1789548}},
				{{19455, 0, 292510, 199951171, 0}, {557983, 6180020, 7668873, 272678506, 1745053}},
			},
		},
		{
			name:  "spectral_subtraction_clamped",
			model: bankSpectralModel(bankSpectralOptions(5000, 11384, 3000, 13384, 2000, 4, 14, true)),
			vecs:  bankSpectralIn,
			want: [][][]int64{
				{{694, 40844, 0, 100851175, 4}, {4882, 146484, 0, 361689811, 34}},
				{{413, 41534, 3, 15, 48636}, {7786, 295443, 24, 1968, 341820}},
				{{13558, 1, 208446, 488281250, 0}, {103066, 160, 1464860, 708703607, 112}},
			},
		},
		{
			name:  "pcan",
			model: bankPCANModel,
			vecs: []map[string]*graph.Data{
				{"x": bankVec(graph.Int32, 5, 1000, 123456, -294967296, 77, 0, 65535, 3000000),
					"noise": bankVec(graph.Int32, 0, 1, 2, 3, 1500, 2048, 123456789, -1)},
				{"x": bankVec(graph.Int32, 100, 200, 300, 400, 500, 600, 700, 800),
					"noise": bankVec(graph.Int32, 7, 70, 700, 7000, 70000, 700000, 7000000, 70000000)},
			},
			want: [][][]int64{
				{{5242785, 3712, 66820595, 32242113, 13, 0, 65864882, 62715733}},
				{{14, 585, 46135862, 16776851, 54525142, 2782, 268, 33550132}},
			},
		},
		{
			// micro_speech's settings.
			name:  "log",
			model: bankLogModel(3, 64),
			vecs:  []map[string]*graph.Data{{"x": bankVec(graph.Int32, 0, 1, 2, 5, 1000, 123456, -294967296, 77)}},
			want:  [][][]int64{{{0, 133, 177, 236, 575, 883, 1369, 411}}},
		},
		{
			// A negative scale is a large uint32 (TFLite Micro's Log32
			// takes it so); the product wraps.
			name:  "log_wide_scale",
			model: bankLogModel(0, -2000000),
			vecs:  []map[string]*graph.Data{{"x": bankVec(graph.Int32, 0, 1, 2, 5, 1000, 123456, -294967296, 536870911)}},
			want:  [][][]int64{{{0, 0, 32767, 32767, 12605, 14378, 16768, 32767}}},
		},
		{
			name:  "log_shifted",
			model: bankLogModel(10, 1000000),
			vecs:  []map[string]*graph.Data{{"x": bankVec(graph.Int32, 3, 65535, 4194303, 4194304, 12345678, 1, 2, 7)}},
			want:  [][][]int64{{{32767, 854, 30961, 0, 32767, 32767, 22427, 30005}}},
		},
	}
)

func (c bankCase) decode(t *testing.T) *graph.Graph {
	t.Helper()
	g, err := tflite.Decode("signal_bank_"+c.name, c.model().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSignalBankMatchesTFLM runs each model in the reference interpreter,
// vector after vector in one session: every output is TFLite Micro's. A
// new session (a reset) starts the noise estimate from zero again, as
// TFLite Micro's Reset does.
func TestSignalBankMatchesTFLM(t *testing.T) {
	for _, c := range bankCases {
		t.Run(c.name, func(t *testing.T) {
			g := c.decode(t)
			if strings.HasPrefix(c.name, "spectral") && len(g.States) != 1 {
				t.Fatalf("states %+v: want the noise estimate", g.States)
			}
			s := interp.NewSession(g)
			for v, in := range c.vecs {
				out, err := s.Run(in)
				if err != nil {
					t.Fatal(err)
				}
				for i, name := range g.UserOutputs() {
					if got := out[name].I; !slices.Equal(got, c.want[v][i]) {
						t.Fatalf("vector %d output %d: %v, TFLite Micro's %v", v, i, got, c.want[v][i])
					}
				}
			}
			s.Reset()
			out, err := s.Run(c.vecs[0])
			if err != nil {
				t.Fatal(err)
			}
			if got := out[g.UserOutputs()[0]].I; !slices.Equal(got, c.want[0][0]) {
				t.Fatalf("after a reset: %v, TFLite Micro's %v", got, c.want[0][0])
			}
		})
	}
}

// TestSignalBankGeneratedC compiles each model to C (strict C99, every
// warning an error) and runs its vectors on the host with the sanitizers
// and, outside -short, on the Cortex-M4 under QEMU: the firmware's outputs
// are TFLite Micro's, the noise estimate carried from one inference to the
// next.
func TestSignalBankGeneratedC(t *testing.T) {
	var fc []firmwareCase
	for _, c := range bankCases {
		fc = append(fc, firmwareCase{name: c.name, graph: c.decode, vecs: c.vecs, want: c.want})
	}
	matchesOnBoards(t, "signal_bank_", fc)
}

// TestSignalBankRefusals: forms mcugen does not take are refused with one
// line naming the operator and the reason.
func TestSignalBankRefusals(t *testing.T) {
	custom := func(m *tg.Model, code string) *tg.Operator {
		for i := range m.Ops {
			if m.Ops[i].Custom == code {
				return &m.Ops[i]
			}
		}
		t.Fatalf("no %s", code)
		return nil
	}
	spectral := bankSpectralModel(bankSpectralOptions(409, 15975, 983, 15401, 819, 10, 14, false))
	for _, c := range []struct {
		name  string
		model func() *tg.Model
		edit  func(m *tg.Model)
		want  string
	}{
		{"channels", bankFilterBankModel, func(m *tg.Model) {
			custom(m, "SignalFilterBank").CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"num_channels": tg.FlexInt(5)})
		}, `"SignalFilterBank"): output "fb" has shape [4] for 5 channels`},
		{"no options", bankFilterBankModel, func(m *tg.Model) {
			custom(m, "SignalFilterBank").CustomOptions = tg.FlexMap(map[string]tg.FlexValue{"channels": tg.FlexInt(4)})
		}, `option "num_channels" is missing`},
		{"weights not constant", bankFilterBankModel, func(m *tg.Model) {
			m.Tensors[custom(m, "SignalFilterBank").Inputs[1]].Data = nil
		}, `input 1 ("weights") must be a constant`},
		{"out of range", bankFilterBankModel, func(m *tg.Model) {
			m.Tensors[custom(m, "SignalFilterBank").Inputs[5]].Data = tg.I16Bytes(2, 3, 3, 3, 4)
		}, "channel 4 (start 9, weight start 11, width 4) reads outside 12 bins"},
		{"uint32 input", bankLogModel(3, 64), func(m *tg.Model) {
			// Drop the CAST: the uint32 tensor is the input.
			m.Ops, m.Inputs = m.Ops[1:], []int32{custom(m, "SignalFilterBankLog").Inputs[0]}
		}, `subgraph input "x_u32": uint32 model inputs and outputs are not supported`},
		{"smoothing bits", spectral, func(m *tg.Model) {
			custom(m, "SignalFilterBankSpectralSubtraction").CustomOptions = tg.FlexMap(bankSpectralOptions(409, 15975, 983, 15401, 819, 40, 14, false))
		}, "smoothing_bits 40 must be in [0, 31]"},
		{"num_channels", spectral, func(m *tg.Model) {
			o := bankSpectralOptions(409, 15975, 983, 15401, 819, 10, 14, false)
			o["num_channels"] = tg.FlexInt(4)
			custom(m, "SignalFilterBankSpectralSubtraction").CustomOptions = tg.FlexMap(o)
		}, "num_channels 4, input [5] and outputs [5], [5]: mcugen wants one length"},
		{"short gain table", bankPCANModel, func(m *tg.Model) {
			lut := m.Tensors[custom(m, "SignalPCAN").Inputs[2]]
			lut.Shape, lut.Data = []int32{124}, tg.I16Bytes(bankPCANLUT()[:124]...)
			m.Tensors[custom(m, "SignalPCAN").Inputs[2]] = lut
		}, `gain table "gain_lut" has 124 entries: TFLite Micro reads up to 125`},
		{"correction bits", bankLogModel(32, 64), nil, "input_correction_bits 32 is not in [0, 31]"},
		{"cast to float", bankFilterBankModel, func(m *tg.Model) {
			m.Tensors[m.Outputs[1]].Type = tg.Float32
		}, "CAST from uint32 to float32 is not supported"},
		{"builtin on uint32", bankLogModel(3, 64), func(m *tg.Model) {
			m.Ops[0].Code = 22 // RESHAPE to the uint32 tensor
		}, "uint32 and uint64 tensors are supported only as the signal library's operands and CASTs"},
		{"log output type", bankLogModel(3, 64), func(m *tg.Model) {
			m.Tensors[custom(m, "SignalFilterBankLog").Outputs[0]].Type = tg.Int32
		}, `output 0 ("y") is of TFLite type 2, want int16`},
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
