package tir

import "testing"

// Every tap an output index takes in a transposed convolution, k with
// o + pad − k·d ≥ 0 and divisible by s, is in the list of o's phase
// (o + pad) mod s exactly once, and its slot reads input (o + pad − k·d)/s
// as q − dq; every other slot of the phase is a tap not taken or the skip.
func TestCTPhasesCoverEveryTap(t *testing.T) {
	for K := 1; K <= 5; K++ {
		for s := 1; s <= 4; s++ {
			for d := 1; d <= 3; d++ {
				p := ctPhasesOf(K, s, d)
				seen := map[int]int{}
				for r := range p.taps {
					for _, k := range p.taps[r] {
						seen[k]++
					}
				}
				for k := 0; k < K; k++ {
					if seen[k] > 1 {
						t.Fatalf("K %d s %d d %d: tap %d in %d phases", K, s, d, k, seen[k])
					}
				}
				for pad := 0; pad <= 3; pad++ {
					for o := 0; o < 20; o++ {
						tt := o + pad
						r, q := tt%s, tt/s
						want := map[int]int{} // tap → input index
						for k := 0; k < K; k++ {
							if tt-k*d >= 0 && (tt-k*d)%s == 0 {
								want[k] = (tt - k*d) / s
							}
						}
						got := map[int]int{}
						for j := 0; j < p.m; j++ {
							in := q - int(p.dq[r*p.m+j])
							if j >= len(p.taps[r]) {
								if in >= -ctSkip/2 {
									t.Fatalf("K %d s %d d %d: empty slot %d of phase %d reads %d", K, s, d, j, r, in)
								}
								continue
							}
							if in >= 0 {
								got[p.taps[r][j]] = in
							}
						}
						if len(got) != len(want) {
							t.Fatalf("K %d s %d d %d pad %d o %d: taps %v, want %v", K, s, d, pad, o, got, want)
						}
						for k, in := range want {
							if got[k] != in {
								t.Fatalf("K %d s %d d %d pad %d o %d: tap %d reads %d, want %d", K, s, d, pad, o, k, got[k], in)
							}
						}
					}
				}
			}
		}
	}
}
