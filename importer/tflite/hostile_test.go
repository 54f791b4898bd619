package tflite_test

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// RESIZE_NEAREST_NEIGHBOR's size input must give the output's height and
// width: [-4, 4] and [2^20, 2^20] imported with the file's output shape
// (review finding).
func TestResizeNearestChecksSize(t *testing.T) {
	for _, size := range [][]int64{{-4, 4}, {1 << 20, 1 << 20}, {4, 2}} {
		c := opCase{name: "resize_nearest_bad", code: tg.OpResizeNearestNeighbor, opts: &tg.Options{Type: tg.OptResizeNearestNeighbor},
			ins: []spec{fin(1, 2, 2, 1), i32c([]int32{2}, size...)}, out: fin(1, 4, 4, 1)}
		_, err := tflite.Decode(c.name, c.model().Bytes())
		if err == nil || !strings.Contains(err.Error(), "do not give the output shape [1 4 4 1]") {
			t.Errorf("size %v: %v", size, err)
		}
	}
}
