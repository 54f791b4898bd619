package tflite_test

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

func review34U32Bytes(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// review34ConstNoiseModel: SignalPCAN whose noise estimate is a constant
// uint32 tensor (4 bytes an element in the file).
func review34ConstNoiseModel() *tg.Model {
	b := bankModel{&tg.Model{}}
	x := b.t("x", tg.Int32, 8)
	e := b.m.AddTensor(tg.Tensor{Name: "noise", Type: bankU32, Shape: []int32{8},
		Data: review34U32Bytes(0, 1, 2, 3, 1500, 2048, 123456789, 4294967295)})
	lut := b.m.AddTensor(bankI16("gain_lut", bankPCANLUT()...))
	y := b.t("y", bankU32, 8)
	b.custom("SignalPCAN", map[string]tg.FlexValue{"snr_shift": tg.FlexInt(6)}, []int32{b.cast(x, "x_u32", bankU32, 8), e, lut}, y)
	b.m.Inputs, b.m.Outputs = []int32{x}, []int32{b.cast(y, "y_i32", tg.Int32, 8)}
	return b.m
}

func TestSignalReview34ConstUint32(t *testing.T) {
	g, err := tflite.Decode("const_u32", review34ConstNoiseModel().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.NewSession(g).Run(map[string]*graph.Data{"x": bankVec(graph.Int32, 5, 1000, 123456, -294967296, 77, 0, 65535, 3000000)})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{5242785, 3712, 66820595, 32242113, 13, 0, 65864882, 62715733}
	if got := out[g.UserOutputs()[0]].I; !slices.Equal(got, want) {
		t.Fatalf("%v, TFLite Micro's %v", got, want)
	}
}

// TestSignalReview34OptionsByPosition: TFLite Micro's signal kernels read
// their options by position in the map's sorted values (FlexbufferWrapper's
// ElementAsInt32(i)), not by name. With an extra key "a" sorting first,
// its SignalWindow reads "a" (3) as the shift and SignalEnergy reads "a"
// as end_index and "end_index" as start_index: mcugen, which reads by
// name, must refuse rather than compute with other values.
func TestSignalReview34OptionsByPosition(t *testing.T) {
	window := func(opts map[string]tg.FlexValue) *tg.Model {
		m := &tg.Model{}
		x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int16, Shape: []int32{1, 4}})
		w := m.AddTensor(bankI16("w", 4096, 8192, 8192, 4096))
		y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Int16, Shape: []int32{1, 4}})
		m.Ops = append(m.Ops, tg.Operator{Code: bankCustom, Custom: "SignalWindow", Inputs: []int32{x, w}, Outputs: []int32{y}, CustomOptions: tg.FlexMap(opts)})
		m.Inputs, m.Outputs = []int32{x}, []int32{y}
		return m
	}
	// The plain options still import; "zz" sorts after "shift" and
	// moves nothing.
	for _, opts := range []map[string]tg.FlexValue{
		{"shift": tg.FlexInt(12)},
		{"shift": tg.FlexInt(12), "zz": tg.FlexInt(3)},
	} {
		if _, err := tflite.Decode("window", window(opts).Bytes()); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
	_, err := tflite.Decode("window", window(map[string]tg.FlexValue{"shift": tg.FlexInt(12), "a": tg.FlexInt(3)}).Bytes())
	if err == nil || !strings.Contains(err.Error(), `CUSTOM "SignalWindow"`) || !strings.Contains(err.Error(), `option "shift" is not at position 0`) {
		t.Errorf("extra key before shift: %v", err)
	}
	// The spectral subtraction's nine options with an extra one first.
	o := bankSpectralOptions(409, 15975, 983, 15401, 819, 10, 14, false)
	o["a"] = tg.FlexInt(1)
	_, err = tflite.Decode("ss", bankSpectralModel(o)().Bytes())
	if err == nil || !strings.Contains(err.Error(), `option "alternate_one_minus_smoothing" is not at position 0`) {
		t.Errorf("extra key before the spectral subtraction's options: %v", err)
	}
}

// TestSignalReview34CastMessage: a CAST from uint32 to a type mcugen has
// no name for says which type (it said "to  is not supported").
func TestSignalReview34CastMessage(t *testing.T) {
	m := bankFilterBankModel()
	m.Tensors[m.Outputs[1]].Type = 16 // uint16
	_, err := tflite.Decode("cast", m.Bytes())
	if err == nil || !strings.Contains(err.Error(), "CAST from uint32 to TFLite type 16 is not supported") {
		t.Errorf("%v", err)
	}
}

// TestSignalReview34UnsignedOption: a FlexBuffers map one byte wide whose
// "output_scale" is the uint 200. TFLite Micro's ElementAsInt32 reads the
// byte sign-extended (ReadInt64 of width 1: −56, a scale of 2^32 − 56),
// mcugen's map reader 200: refused, not computed with another scale.
func TestSignalReview34UnsignedOption(t *testing.T) {
	var opts []byte
	opts = append(opts, "input_correction_bits\x00output_scale\x00"...) // keys at 0 and 22
	opts = append(opts, 2, 36-0, 37-22)                                 // key vector at 36
	opts = append(opts, 38-36, 1, 2)                                    // keys offset, width, length
	opts = append(opts, 3, 200)                                         // values at 41: int 3, uint 200
	opts = append(opts, 1<<2, 2<<2)                                     // types: int, uint (width 1)
	opts = append(opts, 45-41, 9<<2, 1)                                 // root: map at 41, width 1
	m := bankLogModel(3, 64)()
	for i := range m.Ops {
		if m.Ops[i].Custom == "SignalFilterBankLog" {
			m.Ops[i].CustomOptions = opts
		}
	}
	_, err := tflite.Decode("log", m.Bytes())
	if err == nil || !strings.Contains(err.Error(), `option "output_scale" is 200, but TFLite Micro reads the raw bytes at its position as -56`) {
		t.Fatalf("%v", err)
	}
	// The same map with an int 100 imports.
	opts[42], opts[44] = 100, 1<<2
	if _, err := tflite.Decode("log", m.Bytes()); err != nil {
		t.Fatal(err)
	}
}
