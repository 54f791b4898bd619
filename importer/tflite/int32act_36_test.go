package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// TestInt32MulActivation: int32 MUL with a fused activation, which TFLite
// and TFLite Micro both clamp (CalculateActivationRange<int32>: RELU
// [0, 2^31 − 1], RELU6 [0, 6], RELU_N1_TO_1 [−1, 1]) and mcugen refused
// at compile time. a (3, −4, 7, 1000) · b (2, 5, −1, 1000) = (6, −20, −7,
// 1000000): RELU (6, 0, 0, 1000000), RELU6 (6, 0, 0, 6), RELU_N1_TO_1
// (1, −1, −1, 1). On the interpreter, the host with sanitizers and the M4.
func TestInt32MulActivation(t *testing.T) {
	mul := func(name string, act int, want ...float64) opCase {
		return opCase{name: name, code: tg.OpMul, opts: &tg.Options{Type: tg.OptMul, Fields: []tg.Field{tg.I8(0, act)}},
			ins: []spec{mathI32(4), mathI32(4)}, out: mathI32(4), feed: [][]float64{{3, -4, 7, 1000}, {2, 5, -1, 1000}}, want: want}
	}
	opCasesOnBoards(t, "i32act_", []opCase{
		mul("mul_relu", tg.ActRelu, 6, 0, 0, 1000000),
		mul("mul_relu6", tg.ActRelu6, 6, 0, 0, 6),
		mul("mul_relu_n1_to_1", tg.ActReluN1To1, 1, -1, -1, 1),
	})
}

// TestInt32AddActivationRefused: on int32 ADD and SUB TFLite applies a
// fused activation and TFLite Micro ignores it; mcugen refuses, saying so.
func TestInt32AddActivationRefused(t *testing.T) {
	for _, c := range []struct {
		code int32
		typ  uint8
		name string
	}{{tg.OpAdd, tg.OptAdd, "ADD"}, {tg.OpSub, tg.OptSub, "SUB"}} {
		oc := opCase{name: "i32", code: c.code, opts: &tg.Options{Type: c.typ, Fields: []tg.Field{tg.I8(0, tg.ActRelu)}},
			ins: []spec{mathI32(2), mathI32(2)}, out: mathI32(2)}
		_, err := tflite.Decode("i32", oc.model().Bytes())
		if err == nil || !strings.Contains(err.Error(), "int32 "+c.name+" with a fused RELU: TFLite applies it, TFLite Micro's int32 kernel ignores it") {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
}
