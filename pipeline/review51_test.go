package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A lowering error names a depthwise layer as one: the graph holds it as a
// Conv2D in groups, and the message said "(Conv2D)" for a model's
// DEPTHWISE_CONV_2D (review).
func TestDepthwiseErrorNamesDepthwise51(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, bias := range []int64{math.MaxInt32, math.MinInt32} {
		g := tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5) // depthwise: 8 groups of one channel
		g.Tensors["b"].Data.I[0] = bias
		_, err := CompileGraph(g, "dw", Options{Board: b, Version: "test"})
		if err == nil {
			continue // the bound stayed inside int32 for this sign
		}
		if !strings.Contains(err.Error(), `node "conv" (depthwise Conv2D): 9 products of up to`) {
			t.Errorf("bias %d: %v", bias, err)
		}
		return
	}
	t.Fatal("neither extreme bias overflowed the accumulator")
}
