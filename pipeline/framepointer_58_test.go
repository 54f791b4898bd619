package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A build that keeps a frame pointer takes the blocks from before the
// one-row-by-four-channel weight stream for wide pointwise and multi-row
// fully connected layers: those failed to build with gcc's "impossible
// constraints" at -O1 and -O3 with a frame pointer (the runner's
// -fdata-sections among the flags) and at -O2 with r9 reserved too
// (session 58 review). Each builds and is bit-exact; without a frame
// pointer the defaults keep the stream.
func TestFramePointerBuilds58(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	for _, flags := range [][]string{{"-O1", "-fno-omit-frame-pointer"}, {"-O3", "-fno-omit-frame-pointer"}, {"-O2", "-fno-omit-frame-pointer", "-ffixed-r9"}} {
		for _, c := range []struct {
			name string
			g    func() *graph.Graph
		}{
			{"pw 3x3 128->4", func() *graph.Graph { return tirtest.Conv1x1(3, 3, 128, 4, graph.ActNone, 5) }},
			{"pw 1x5 256->7", func() *graph.Graph { return tirtest.Conv1x1(1, 5, 256, 7, graph.ActRelu, -128) }},
			{"fc 8 rows 512->128", func() *graph.Graph { return fcGraph51(8, 512, 128) }},
		} {
			checkedRun(t, c.g(), "fp", Options{Board: b, Version: "test", CFlags: flags}, 1, 58)
		}
	}
	if !boards.KeepsFramePointer([]string{"-O2", "-fno-omit-frame-pointer"}) || boards.KeepsFramePointer([]string{"-fno-omit-frame-pointer", "-fomit-frame-pointer"}) || boards.KeepsFramePointer(b.GCCFlags()) {
		t.Error("KeepsFramePointer: the last of -f(no-)omit-frame-pointer decides, and mps2-an386 keeps none")
	}
}
