package pipeline

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// A convolution with dead output channels, then a depthwise layer, a pool
// and a consuming convolution or fully connected layer, built and run on each
// target's board: the firmware skips the dead channels (the constant row is
// in the C; on the M55 only where a multiple of four live channels remains),
// and its outputs equal the reference interpreter's on the graph
// as built, before the plan pass reordered its channels.
func TestDeadChannelsUnderQEMU(t *testing.T) {
	t.Parallel()
	for _, bt := range []struct{ board, target string }{
		{"mps2-an386", "dsp"}, {"mps2-an385", "generic"}, {"mps3-an547", "mve"}, {"aarch64-linux", "neon"},
	} {
		for _, tail := range []string{"conv", "fc"} {
			for _, dead := range [][]int{{1, 4, 5}, {0, 2, 3, 4, 6, 7}} {
				name := fmt.Sprintf("%s/%s/%v", bt.board, tail, dead)
				t.Run(name, func(t *testing.T) {
					b := qemuBoard(t, bt.board)
					g := tirtest.DeadChain(11, dead, tail)
					pristine := tirtest.DeadChain(11, dead, tail)
					s, err := CompileGraph(g, "dead", Options{Board: b, Target: bt.target, Version: "test"})
					if err != nil {
						t.Fatal(err)
					}
					// The M55 keeps a multiple of four live channels (of 8):
					// three dead leave 5, rounded up to all 8, so none split.
					split := bt.target != "mve" || (8-len(dead)+3)/4*4 < 8
					if cContains(s.Files, "_dead[") != split {
						t.Fatalf("constant row for the dead channels in the C: %v, want %v", !split, split)
					}
					vecs := append(RandomInputs(pristine, 5, 3), ExtremeInputs(pristine)...)
					x, err := s.Execute(vecs, t.TempDir(), time.Minute)
					if err != nil {
						t.Fatal(err)
					}
					for v, vec := range vecs {
						want, err := interp.Run(pristine, vec)
						if err != nil {
							t.Fatal(err)
						}
						for i, out := range pristine.Outputs {
							if !slices.Equal(x.Outputs[v][i].I, want[out].I) {
								t.Errorf("vector %d output %s: %v, want %v", v, out, x.Outputs[v][i].I, want[out].I)
							}
						}
					}
				})
			}
		}
	}
}
