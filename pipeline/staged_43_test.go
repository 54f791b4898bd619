package pipeline

import (
	"path/filepath"
	"testing"
)

// TestInPlaceNeedsNoArenaScratch: every kernel that runs in place stages its
// input on its own stack, so the plan reserves no arena scratch for it (a
// review finding: VWW's plan held 576 B, KWS's 64 B, that no kernel used).
// KWS and VWW, with the inputs and outputs in the caller's buffers, get an
// arena exactly at the in-place lower bound (8,064 and 36,864 B, as the plan
// table shows), and run bit-exact against the reference interpreter on the
// M4 (dsp), the M55 (mve) and the M3 (generic, row staging) with the arena
// external and guarded: a kernel writing past the 36,864 B would damage
// the harness's guard bytes.
func TestInPlaceNeedsNoArenaScratch(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	want := map[string]int{"kws": 8064, "vww": 36864}
	for _, board := range []string{"mps2-an386", "mps3-an547", "mps2-an385"} {
		b := qemuBoard(t, board)
		for _, m := range mlperfModels[:2] {
			t.Run(board+"/"+m.name, func(t *testing.T) {
				s, err := Compile(filepath.Join(dir, m.file), Options{Board: b, ArenaExternal: true, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				p := s.Plan
				if len(p.InPlace) == 0 || p.ScratchBytes != 0 || len(p.Scratch) != 0 ||
					p.ArenaBytes != p.LowerBoundBytes || p.ArenaBytes != want[m.name] {
					t.Fatalf("%d in place, scratch %d B in %d buffers, arena %d B, bound %d B; want some in place, no scratch, arena = bound = %d B",
						len(p.InPlace), p.ScratchBytes, len(p.Scratch), p.ArenaBytes, p.LowerBoundBytes, want[m.name])
				}
				runCount(t, s)
			})
		}
	}
}
