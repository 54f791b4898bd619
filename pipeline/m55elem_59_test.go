package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// elemModel59 is an int8 TFLite model of MUL and of ADD and SUB with a
// broadcast operand (a per-channel row [1,1,1,32] against [1,8,8,32]):
//
//	s = x − b;  m = s · x;  n = m · b;  y = n + b
func elemModel59() *tg.Model {
	m := &tg.Model{}
	act := func(name string, scale float32, zp int64, shape ...int32) int32 {
		return m.AddTensor(tg.Tensor{Name: name, Type: tg.Int8, Shape: shape, Scale: []float32{scale}, ZeroPoint: []int64{zp}})
	}
	x := act("x", 0.05, 3, 1, 8, 8, 32)
	b := act("b", 0.03, -7, 1, 1, 1, 32)
	s := act("s", 0.07, 1, 1, 8, 8, 32)
	m.AddOp(tg.OpSub, tg.ActOptions(tg.OptSub, tg.ActNone), []int32{x, b}, s)
	mm := act("m", 0.2, -5, 1, 8, 8, 32)
	m.AddOp(tg.OpMul, tg.ActOptions(tg.OptMul, tg.ActNone), []int32{s, x}, mm)
	n := act("n", 0.3, 2, 1, 8, 8, 32)
	m.AddOp(tg.OpMul, tg.ActOptions(tg.OptMul, tg.ActRelu), []int32{mm, b}, n)
	y := act("y", 0.25, -20, 1, 8, 8, 32)
	m.AddOp(tg.OpAdd, tg.ActOptions(tg.OptAdd, tg.ActNone), []int32{n, b}, y)
	m.Inputs, m.Outputs = []int32{x, b}, []int32{y}
	return m
}

// On the Cortex-M55, MUL and a broadcast ADD or SUB take the dsp target's
// table and SMMLA forms (the M55 has the DSP extension): bit-exact against
// the reference interpreter, and in at most 0.7 times the instructions of
// the generic loops they took before (knob lut 0; a review measured 2 to
// 4.4 times the Cortex-M4's instructions there).
func TestM55ElementwiseDSP59(t *testing.T) {
	b := qemuBoard(t, "mps3-an547")
	g, err := tflite.Decode("elem59", elemModel59().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Board: b, Version: "test"}
	n := checkedRun(t, g, "elem59", o, 3, 59)
	o.Knobs = map[string]map[string]int{"mul": {"lut": 0}, "add": {"lut": 0}, "sub": {"lut": 0}}
	n0 := checkedRun(t, g, "elem59-generic", o, 1, 59)
	t.Logf("mps3-an547: %d instructions, %d in the generic loops", n, n0)
	if 10*n > 7*n0 {
		t.Errorf("mps3-an547: %d instructions, %d in the generic loops: want at most 0.7 times", n, n0)
	}
}
