package tflite_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/graph/qmath"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

const opSVDF, optSVDF = 27, 6

// svdfModel is one SVDF operator: batch 2, one input feature, two filters
// (weights_feature [[1], [2]]), memory 2 (weights_time [[1, 10], [100,
// 1000]]), rank 2 so one unit, bias 0.5, and the given fused activation.
// state, when not nil, is the variable's buffer (its initial value).
func svdfModel(act int, state []float32) *tg.Model {
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{2, 1}})
	wf := m.AddTensor(tg.Tensor{Name: "wf", Type: tg.Float32, Shape: []int32{2, 1}, Data: tg.F32Bytes(1, 2)})
	wt := m.AddTensor(tg.Tensor{Name: "wt", Type: tg.Float32, Shape: []int32{2, 2}, Data: tg.F32Bytes(1, 10, 100, 1000)})
	b := m.AddTensor(tg.Tensor{Name: "b", Type: tg.Float32, Shape: []int32{1}, Data: tg.F32Bytes(0.5)})
	st := tg.Tensor{Name: "state", Type: tg.Float32, Shape: []int32{2, 4}, Variable: true}
	if state != nil {
		st.Data = tg.F32Bytes(state...)
	}
	s := m.AddTensor(st)
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{2, 1}})
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(opSVDF, &tg.Options{Type: optSVDF, Fields: []tg.Field{tg.I32(0, 2), tg.I8(1, act)}}, []int32{x, wf, wt, b, s}, y)
	return m
}

// Worked by hand. Batch row 0 gets 1, 3, -1; row 1 gets 2, 0, 1. Each
// inference shifts each filter's two slots (older first) and puts
// weights_feature · x in the newest: row 0's filter 0 holds [0 1], then
// [1 3], then [3 -1], filter 1 twice that. Filter 0 weighs its slots by
// (1, 10), filter 1 by (100, 1000); the unit sums both and adds 0.5:
// row 0: 10 + 2000 + 0.5 = 2010.5; 31 + 6200 + 0.5 = 6231.5; -7 - 1400 +
// 0.5 = -1406.5. Row 1: [0 2] → 4020.5, [2 0] → 402.5, [0 1] → 2010.5.
func TestSVDFFloatCarriesItsState(t *testing.T) {
	xs := [][]float32{{1, 2}, {3, 0}, {-1, 1}}
	for _, c := range []struct {
		name string
		act  int
		want [][]float32
	}{
		{"none", tg.ActNone, [][]float32{{2010.5, 4020.5}, {6231.5, 402.5}, {-1406.5, 2010.5}}},
		{"relu", tg.ActRelu, [][]float32{{2010.5, 4020.5}, {6231.5, 402.5}, {0, 2010.5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := tflite.Decode("svdf", svdfModel(c.act, nil).Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if u := g.UserInputs(); len(u) != 1 || u[0] != "x" || len(g.States) != 1 || g.States[0].In != "state" {
				t.Fatalf("inputs %v, states %+v: want x alone and the variable as a state", u, g.States)
			}
			s := interp.NewSession(g)
			for k, x := range xs {
				out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 1}, F: x}})
				if err != nil {
					t.Fatal(err)
				}
				got := out["y"].F
				if len(got) != 2 || got[0] != c.want[k][0] || got[1] != c.want[k][1] {
					t.Fatalf("inference %d: %v, want %v", k+1, got, c.want[k])
				}
			}
			// After a reset the sequence starts again.
			s.Reset()
			out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 1}, F: xs[0]}})
			if err != nil {
				t.Fatal(err)
			}
			if got := out["y"].F; got[0] != c.want[0][0] || got[1] != c.want[0][1] {
				t.Errorf("after reset: %v, want %v", got, c.want[0])
			}
		})
	}
}

// A variable's buffer in the file is ignored: TFLite and TFLite Micro
// reset variable tensors to zero when they allocate them, so the first
// outputs are those from the zero state.
func TestSVDFInitialState(t *testing.T) {
	g, err := tflite.Decode("svdf", svdfModel(tg.ActNone, []float32{5, 7, 0, 0, 0, 0, 0, 0}).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.NewSession(g).Run(map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 1}, F: []float32{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["y"].F; got[0] != 2010.5 || got[1] != 4020.5 {
		t.Errorf("%v, want [2010.5 4020.5]", got)
	}
}

func TestSVDFRefusals(t *testing.T) {
	m := svdfModel(tg.ActNone, nil)
	m.Tensors[4].Variable = false
	decodeErr(t, "not variable", m, "SVDF", "not a variable tensor")
	m = svdfModel(tg.ActNone, nil)
	m.Ops[0].Options.Fields[0] = tg.I32(0, 3)
	decodeErr(t, "rank 3", m, "SVDF", "rank 3 does not divide the 2 filters")
	m = svdfModel(tg.ActNone, nil)
	m.Tensors[0].Type, m.Tensors[5].Type = tg.Int8, tg.Int8
	if _, err := tflite.Decode("int8", m.Bytes()); err == nil || !strings.Contains(err.Error(), "int16 or int8 weights_time") {
		t.Errorf("int8 SVDF with float weights: %v", err)
	}
	// The state as a subgraph output.
	m = svdfModel(tg.ActNone, nil)
	m.Outputs = append(m.Outputs, 4)
	if _, err := tflite.Decode("state out", m.Bytes()); err == nil || !strings.Contains(err.Error(), "also a subgraph output") {
		t.Errorf("the state as an output: %v", err)
	}
	// Per-axis (or missing) quantization is refused by name.
	im := svdfIntModel()
	im.Tensors[1].Scale, im.Tensors[1].ZeroPoint = []float32{0.1, 0.2, 0.3, 0.4}, []int64{0, 0, 0, 0}
	decodeErr(t, "per-axis", im, "SVDF", `tensor "wf" needs one positive scale`)
}

// TFLite's own SVDF test vectors (tensorflow/lite/kernels/svdf_test.cc,
// BlackBoxTestRank1 and BlackBoxTestRank2): batch 2, 4 units, 3 inputs,
// memory 10, no bias, no activation. Ten inferences, each on the next six
// input values (three per batch row); each output, 2x4, must be within
// 1e-5 of the golden one, as there.
var (
	svdfGoldenInput = []float32{
		0.12609188, -0.46347019, -0.89598465, 0.35867718, 0.36897406, 0.73463392,
		0.14278367, -1.64410412, -0.75222826, -0.57290924, 0.12729003, 0.7567004,
		0.49837467, 0.19278903, 0.26584083, 0.17660543, 0.52949083, -0.77931279,
		-0.11186574, 0.13164264, -0.05349274, -0.72674477, -0.5683046, 0.55900657,
		-0.68892461, 0.37783599, 0.18263303, -0.63690937, 0.44483393, -0.71817774,
		-0.81299269, -0.86831826, 1.43940818, -0.95760226, 1.82078898, 0.71135032,
		-1.45006323, -0.82251364, -1.69082689, -1.65087092, -1.89238167, 1.54172635,
		0.03966608, -0.24936394, -0.77526885, 2.06740379, -1.51439476, 1.43768692,
		0.11771342, -0.23761693, -0.65898693, 0.31088525, -1.55601168, -0.87661445,
		-0.89477462, 1.67204106, -0.53235275, -0.6230064, 0.29819036, 1.06939757,
	}
	svdfGoldenTime = []float32{
		-0.31930989, 0.37613347, 0.27901134, -0.36137494, -0.36118156, 0.22197971, 0.27557442, -0.06634006, 0.0079667, 0.12416199,
		0.3905206, -0.10640851, -0.0976817, 0.15294972, 0.39635518, -0.02702999, 0.39296314, 0.15785322, 0.21931258, 0.31053296,
		-0.36916667, 0.38031587, -0.21580373, 0.27072677, 0.23622236, 0.34936687, 0.18174365, 0.35907319, -0.17493086, 0.324846,
		-0.10781813, 0.27201805, 0.14324132, -0.23681851, -0.27115166, -0.01580888, -0.14943552, 0.15465137, 0.09784451, -0.0337657,
		-0.14884081, 0.19931212, -0.36002168, 0.34663299, -0.11405486, 0.12672701, 0.39463779, -0.07886535, -0.06384811, 0.08249187,
		-0.26816407, -0.19905911, 0.29211238, 0.31264046, -0.28664589, 0.05698794, 0.11613581, 0.14078894, 0.02187902, -0.21781836,
		-0.15567942, 0.08693647, -0.38256618, 0.36580828, -0.22922277, -0.0226903, 0.12878349, -0.28122205, -0.10850525, -0.11955214,
		0.27179423, -0.04710215, 0.31069002, 0.22672787, 0.09580326, 0.08682203, 0.1258215, 0.1851041, 0.29228821, 0.12366763,
	}
	svdfGoldenCases = []struct {
		rank    int
		feature []float32
		golden  []float32
	}{
		{1, []float32{
			-0.31930989, -0.36118156, 0.0079667, 0.37613347, 0.22197971, 0.12416199,
			0.27901134, 0.27557442, 0.3905206, -0.36137494, -0.06634006, -0.10640851,
		}, []float32{
			0.014899, -0.0517661, -0.143725, -0.00271883, -0.03004015, 0.09565311, 0.1587342, 0.00784263,
			0.068281, -0.162217, -0.152268, 0.00323521, 0.01582633, 0.03858774, -0.03001583, -0.02671271,
			-0.0317821, -0.0333089, 0.0609602, 0.0333759, -0.01432795, 0.05524484, 0.1101355, -0.02382665,
			-0.00623099, -0.077701, -0.391193, -0.0136691, -0.02333033, 0.02293761, 0.12338032, 0.04326871,
			0.201551, -0.164607, -0.179462, -0.0592739, 0.01064911, -0.17503069, 0.07821996, -0.00224009,
			0.0886511, -0.0875401, -0.269283, 0.0281379, -0.02282338, 0.09741908, 0.32973239, 0.12281385,
			-0.201174, -0.586145, -0.628624, -0.0330412, 0.24780814, -0.39304617, -0.22473189, 0.02589256,
			-0.0839096, -0.299329, 0.108746, 0.109808, 0.10084175, -0.06416984, 0.28936723, 0.0026358,
			0.419114, -0.237824, -0.422627, 0.175115, -0.2314795, -0.18584411, -0.4228974, -0.12928449,
			0.36726, -0.522303, -0.456502, -0.175475, 0.17012937, -0.34447709, 0.38505614, -0.28158101,
		}},
		{2, []float32{
			-0.31930989, 0.0079667, 0.39296314, 0.37613347, 0.12416199, 0.15785322, 0.27901134, 0.3905206, 0.21931258,
			-0.36137494, -0.10640851, 0.31053296, -0.36118156, -0.0976817, -0.36916667, 0.22197971, 0.15294972, 0.38031587,
			0.27557442, 0.39635518, -0.21580373, -0.06634006, -0.02702999, 0.27072677,
		}, []float32{
			-0.09623547, -0.10193135, 0.11083051, -0.0347917, 0.1141196, 0.12965347, -0.12652366, 0.01007236,
			-0.16396809, -0.21247184, 0.11259045, -0.04156673, 0.10132131, -0.06143532, -0.00924693, 0.10084561,
			0.01257364, 0.0506071, -0.19287863, -0.07162561, -0.02033747, 0.22673416, 0.15487903, 0.02525555,
			-0.1411963, -0.37054959, 0.01774767, 0.05867489, 0.09607603, -0.0141301, -0.08995658, 0.12867066,
			-0.27142537, -0.16955489, 0.18521598, -0.12528358, 0.00331409, 0.11167502, 0.02218599, -0.07309391,
			0.09593632, -0.28361851, -0.0773851, 0.17199151, -0.00075242, 0.33691186, -0.1536046, 0.16572715,
			-0.27916506, -0.27626723, 0.42615682, 0.3225764, -0.37472126, -0.55655634, -0.05013514, 0.289112,
			-0.24418658, 0.07540751, -0.1940318, -0.08911639, 0.00732617, 0.46737891, 0.26449674, 0.24888524,
			-0.17225097, -0.54660404, -0.38795233, 0.08389944, 0.07736043, -0.28260678, 0.15666828, 1.14949894,
			-0.57454878, -0.64704704, 0.73235172, -0.34616736, 0.21120001, -0.22927976, 0.02455296, -0.35906726,
		}},
	}
)

// svdfGoldenModel is TFLite's black-box SVDF test model for rank (1 or 2).
func svdfGoldenModel(i int) *tg.Model {
	c := svdfGoldenCases[i]
	filters := int32(4 * c.rank)
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{2, 3}})
	wf := m.AddTensor(tg.Tensor{Name: "wf", Type: tg.Float32, Shape: []int32{filters, 3}, Data: tg.F32Bytes(c.feature...)})
	wt := m.AddTensor(tg.Tensor{Name: "wt", Type: tg.Float32, Shape: []int32{filters, 10}, Data: tg.F32Bytes(svdfGoldenTime[:filters*10]...)})
	s := m.AddTensor(tg.Tensor{Name: "state", Type: tg.Float32, Shape: []int32{2, 10 * filters}, Variable: true})
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{2, 4}})
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(opSVDF, &tg.Options{Type: optSVDF, Fields: []tg.Field{tg.I32(0, c.rank)}}, []int32{x, wf, wt, -1, s}, y)
	return m
}

func TestSVDFTFLiteGoldens(t *testing.T) {
	for i, c := range svdfGoldenCases {
		t.Run(fmt.Sprintf("rank%d", c.rank), func(t *testing.T) {
			g, err := tflite.Decode("svdf", svdfGoldenModel(i).Bytes())
			if err != nil {
				t.Fatal(err)
			}
			s := interp.NewSession(g)
			for k := 0; k < 10; k++ {
				out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Float32, Shape: []int{2, 3}, F: svdfGoldenInput[6*k : 6*k+6]}})
				if err != nil {
					t.Fatal(err)
				}
				for j, want := range c.golden[8*k : 8*k+8] {
					if got := out["y"].F[j]; math.Abs(float64(got-want)) > 1e-5 {
						t.Fatalf("inference %d, output %d: %v, TFLite's golden value %v", k+1, j, got, want)
					}
				}
			}
		})
	}
}

// svdfIntModel is TFLite's full-integer SVDF test model
// (tensorflow/lite/kernels/svdf_test.cc, BlackBoxTestInteger): batch 2, 4
// units, 3 inputs, memory 10, rank 1, int16 weights_time and state. Its
// state's zero point is 0: TFLite's kernel ignores the file's -1, TFLite
// Micro's uses it, and with 0 both compute the test's values.
func svdfIntModel() *tg.Model {
	m := &tg.Model{}
	q := func(t tg.Tensor, s float32, z int64) int32 {
		t.Scale, t.ZeroPoint = []float32{s}, []int64{z}
		return m.AddTensor(t)
	}
	x := q(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{2, 3}}, 0.007843137718737125, 0)
	wf := q(tg.Tensor{Name: "wf", Type: tg.Int8, Shape: []int32{4, 3}, Data: tg.I8Bytes(-81, -92, 2, 96, 57, 32, 71, 70, 100, -92, -17, -27)}, 0.003921568859368563, 0)
	wt := q(tg.Tensor{Name: "wt", Type: tg.Int16, Shape: []int32{4, 10}, Data: tg.I16Bytes(
		-10464, 12324, 9142, -11842, -11836, 7273, 9029, -2175, 260, 4067,
		12795, -3488, -3202, 5011, 12987, -887, 12875, 5171, 7185, 10174,
		-12098, 12461, -7072, 8870, 7739, 11447, 5954, 11765, -5733, 10643,
		-3534, 8912, 4693, -7761, -8886, -519, -4898, 5067, 3205, -1107)}, 3.051804378628731e-05, -1)
	b := q(tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{4}, Data: tg.I32Bytes(-409707, 641518, 1662434, -113372)}, 2.384185791015625e-07, 0)
	s := q(tg.Tensor{Name: "state", Type: tg.Int16, Shape: []int32{2, 40}, Variable: true}, 0.0004882887005805969, 0)
	y := q(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{2, 4}}, 0.003921568859368563, 0)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(opSVDF, &tg.Options{Type: optSVDF, Fields: []tg.Field{tg.I32(0, 1), tg.I8(1, tg.ActRelu)}}, []int32{x, wf, wt, b, s}, y)
	return m
}

// TFLite's exact expectations for that model: twelve inferences on the
// inputs A, B, C, A, B, C, ... (three values per batch row), the state
// carried through (no activation is applied: the negative outputs are
// TFLite's too). The effective multipliers are the test's as well.
func TestSVDFInt8TFLiteVectors(t *testing.T) {
	if m, s := qmath.SVDFMultiplier(0.007843137718737125, 0.003921568859368563, 0.0004882887005805969); m != 1082163456 || s != -3 {
		t.Errorf("first multiplier (%d, %d), TFLite's (1082163456, -3)", m, s)
	}
	if m, s := qmath.SVDFMultiplier(0.0004882887005805969, 3.051804378628731e-05, 0.003921568859368563); m != 2139160192 || s != -18 {
		t.Errorf("second multiplier (%d, %d), TFLite's (2139160192, -18)", m, s)
	}
	g, err := tflite.Decode("svdf_int", svdfIntModel().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]int64{{64, 25, 34, 23, 68, -99}, {16, -59, -114, 46, 47, 94}, {18, -128, -96, -73, 16, 96}}
	want := [][]int64{
		{-9, 24, 31, 1, -10, 10, -3, 0}, {2, 4, -44, -7, -10, 32, 52, 1}, {12, -17, 9, -8, 7, 16, -11, -8},
		{-26, 29, 28, 16, -23, 26, 30, -6}, {-8, -25, -86, -5, -44, 59, 81, 15}, {62, -16, -37, 3, 27, 14, 34, -10},
		{1, 24, -25, 23, 31, 61, 67, 11}, {-64, -65, -128, -25, -53, 59, 127, 20}, {20, -29, -20, -15, -28, 0, 8, -27},
		{54, 61, -67, 38, 38, 64, 115, 0}, {-44, -75, -128, -20, -19, 93, 101, 35}, {-5, -56, 30, -18, -40, -9, -8, -31},
	}
	s := interp.NewSession(g)
	for k, w := range want {
		out, err := s.Run(map[string]*graph.Data{"x": {DType: graph.Int8, Shape: []int{2, 3}, I: inputs[k%3]}})
		if err != nil {
			t.Fatal(err)
		}
		if got := out["y"].I; !slices.Equal(got, w) {
			t.Fatalf("inference %d: %v, TFLite's %v", k+1, got, w)
		}
	}
}

// svdfInt8StateModel is svdfIntModel with int8 weights_time (the int16
// ones / 256) and an int8 state whose zero point, 3, is also where TFLite
// Micro resets it: the generated code starts it there and the
// reference session too.
func svdfInt8StateModel() *tg.Model {
	m := svdfIntModel()
	wt := &m.Tensors[2]
	var w8 []int8
	for i := 0; i < len(wt.Data); i += 2 {
		v := int16(uint16(wt.Data[i]) | uint16(wt.Data[i+1])<<8)
		w8 = append(w8, int8(v/256))
	}
	wt.Type, wt.Data, wt.Scale, wt.ZeroPoint = tg.Int8, tg.I8Bytes(w8...), []float32{0.0078125}, []int64{0}
	st := &m.Tensors[4]
	st.Type, st.Scale, st.ZeroPoint = tg.Int8, []float32{0.125}, []int64{3}
	m.Tensors[3].Scale = []float32{0.125 * 0.0078125}
	return m
}

func TestSVDFInt8State(t *testing.T) {
	g, err := tflite.Decode("svdf_int8_state", svdfInt8StateModel().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	init := g.States[0].Init
	if init == nil || init.Len() != 80 || init.I[0] != 3 || init.I[79] != 3 {
		t.Fatalf("initial state %v, want 80 values at the zero point 3", init)
	}
	// One inference by hand: batch row 0 is x = (64, 25, 34) (zero point 0);
	// filter 0's newest slot is requant(-81·64 − 92·25 + 2·34 = -7416) with
	// the multiplier of 0.0078431377 · 0.0039215689 / 0.125 (float32
	// products), that is -7416 · 0.000246059… = -1.8248 → -2, stored at
	// the zero point as 1; its older slots hold 3 (the reset value).
	out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Int8, Shape: []int{2, 3}, I: []int64{64, 25, 34, 23, 68, -99}}})
	if err != nil {
		t.Fatal(err)
	}
	next := out[g.States[0].Out].I
	if next[9] != 1 || next[0] != 3 || next[8] != 3 {
		t.Errorf("filter 0 of row 0: %v, want nine 3s then 1", next[:10])
	}
}

// TFLite Micro stores an int8 state as (int8)(zero point + clamped value):
// at the top of the range the cast wraps. With the state's scale 0.001
// the first multiplier is 0.0078431 · 0.0039216 / 0.001 = 0.0307578;
// filter 0 of x = (-128, -128, 127) is -81·-128 − 92·-128 + 2·127 =
// 22398 → 688.9, clamped to 127, plus the zero point 3: 130, stored -126.
func TestSVDFInt8StateWraps(t *testing.T) {
	m := svdfInt8StateModel()
	m.Tensors[4].Scale = []float32{0.001}
	m.Tensors[3].Scale = []float32{0.001 * 0.0078125}
	g, err := tflite.Decode("svdf_wrap", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := interp.Run(g, map[string]*graph.Data{"x": {DType: graph.Int8, Shape: []int{2, 3}, I: []int64{-128, -128, 127, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[g.States[0].Out].I[9]; got != -126 {
		t.Errorf("filter 0's newest slot: %d, want -126 (130 wrapped)", got)
	}
}
