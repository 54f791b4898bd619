package memplan

import (
	"math/rand/v2"
	"slices"
	"time"
)

// interval is an open range (lo, hi) of offsets a buffer may not start in.
type interval struct{ lo, hi int }

// firstFit is the lowest offset >= 0 outside every interval. An interval
// (off_j - size, off_j + size_j) forbids overlapping buffer j. Since the
// offsets and sizes are multiples of the alignment, so is the result.
func firstFit(ivs []interval) int {
	slices.SortFunc(ivs, func(a, b interval) int { return a.lo - b.lo })
	x := 0
	for _, iv := range ivs {
		if x <= iv.lo {
			break
		}
		x = max(x, iv.hi)
	}
	return x
}

// conflict says slot j is live at the same time as the slot it belongs to:
// the slot may not start in (off_j - sa, off_j + sb).
type conflict struct{ j, sa, sb int }

type placer struct {
	slots []slot
	conf  [][]conflict
	ivs   []interval
}

func newPlacer(slots []slot) *placer {
	pl := &placer{slots: slots, conf: make([][]conflict, len(slots))}
	for i := range slots {
		for j := i + 1; j < len(slots); j++ {
			a, b := &slots[i], &slots[j]
			if a.last < b.first || b.last < a.first {
				continue
			}
			sa, sb := 0, 0
			for _, ra := range a.members {
				for _, rb := range b.members {
					if ra.size == 0 || rb.size == 0 || ra.last < rb.first || rb.last < ra.first {
						continue
					}
					// Every member starts at its slot's offset, so the union of
					// the forbidden ranges is one range around off_j.
					sa, sb = max(sa, ra.size), max(sb, rb.size)
				}
			}
			if sa > 0 {
				pl.conf[i] = append(pl.conf[i], conflict{j, sa, sb})
				pl.conf[j] = append(pl.conf[j], conflict{i, sb, sa})
			}
		}
	}
	return pl
}

// fit is the first-fit offset of slot i against the placed slots.
func (pl *placer) fit(i int, off []int, placed []bool) int {
	ivs := pl.ivs[:0]
	for _, c := range pl.conf[i] {
		if placed[c.j] {
			ivs = append(ivs, interval{off[c.j] - c.sa, off[c.j] + c.sb})
		}
	}
	pl.ivs = ivs
	return firstFit(ivs)
}

// height is the arena the offsets need.
func (pl *placer) height(off []int) int {
	h := 0
	for i := range pl.slots {
		h = max(h, off[i]+pl.slots[i].maxSize)
	}
	return h
}

// greedy places the slots first-fit in the given order.
func (pl *placer) greedy(order []int) []int {
	off := make([]int, len(pl.slots))
	placed := make([]bool, len(pl.slots))
	for _, i := range order {
		off[i] = pl.fit(i, off, placed)
		placed[i] = true
	}
	return off
}

// sizeOrder is largest first, then earliest first (TFLite Micro's order).
func (pl *placer) sizeOrder() []int {
	o := pl.identity()
	slices.SortStableFunc(o, func(x, y int) int {
		a, b := &pl.slots[x], &pl.slots[y]
		if a.maxSize != b.maxSize {
			return b.maxSize - a.maxSize
		}
		return a.first - b.first
	})
	return o
}

// conflictOrder is most conflicts first, then largest first.
func (pl *placer) conflictOrder() []int {
	o := pl.identity()
	slices.SortStableFunc(o, func(x, y int) int {
		if cx, cy := len(pl.conf[x]), len(pl.conf[y]); cx != cy {
			return cy - cx
		}
		return pl.slots[y].maxSize - pl.slots[x].maxSize
	})
	return o
}

func (pl *placer) identity() []int {
	o := make([]int, len(pl.slots))
	for i := range o {
		o[i] = i
	}
	return o
}

// hillClimb starts from the greedy-by-size order and swaps two slots of the
// placement order at a time (fixed seed), keeping a swap when the arena does
// not grow, until the lower bound is reached or the iterations run out.
func (pl *placer) hillClimb(lb int) []int {
	n := len(pl.slots)
	perm := pl.sizeOrder()
	bestOff := pl.greedy(perm)
	cur := pl.height(bestOff)
	best := cur
	if n < 2 {
		return bestOff
	}
	rng := rand.New(rand.NewPCG(0x6d656d706c616e, 1))
	iters := min(200+40*n, 4000, 50+4_000_000/(n*n)) // about 4e6 first-fit probes at most
	for it := 0; it < iters && best > lb; it++ {
		i, j := rng.IntN(n), rng.IntN(n-1)
		if j >= i {
			j++
		}
		perm[i], perm[j] = perm[j], perm[i]
		off := pl.greedy(perm)
		h := pl.height(off)
		if h <= cur {
			cur = h
			if h < best {
				best, bestOff = h, off
			}
		} else {
			perm[i], perm[j] = perm[j], perm[i]
		}
	}
	return bestOff
}

// exactNodesPerSecond converts the time budget into a node limit. It is
// below what a slow, loaded machine manages (about 300,000 nodes per second
// measured on 40-slot instances), so the node limit, which is deterministic,
// normally ends an unfinished search before the clock does.
const exactNodesPerSecond = 250_000

// exact is branch and bound over placement orders. Take any optimal layout
// and place its slots first-fit in increasing order of their offsets (ties by
// index): every slot lands at or below its offset there, so the result is
// optimal too; repeating this reaches a layout that first fit reproduces
// from its own sorted order. So searching only the orders in which the
// first-fit offsets never decrease (ties broken by index) is complete. The
// search starts from the better greedy layout and stops at the lower bound,
// at the time budget or at the node limit derived from it. seeds are layouts
// to start from (the better one bounds the search from the outset).
func (pl *placer) exact(lb int, budget time.Duration, seeds ...[]int) []int {
	n := len(pl.slots)
	var cands []int // zero-size slots stay at offset 0
	for _, i := range pl.sizeOrder() {
		if pl.slots[i].maxSize > 0 {
			cands = append(cands, i)
		}
	}
	rank := make([]int, n)
	for r, i := range cands {
		rank[i] = r
	}
	bestOff := pl.greedy(cands)
	best := pl.height(bestOff)
	seeds = append(seeds, pl.greedy(pl.conflictOrder()))
	for _, o := range seeds {
		if h := pl.height(o); h < best {
			bestOff, best = o, h
		}
	}
	nodeLimit := max(10_000, int(budget.Seconds()*exactNodesPerSecond))
	off := make([]int, n)
	placed := make([]bool, n)
	for i := range placed {
		placed[i] = pl.slots[i].maxSize == 0
	}
	deadline := time.Now().Add(budget)
	nodes := 0
	stop := false
	var dfs func(depth, h, prevOff, prevRank int)
	dfs = func(depth, h, prevOff, prevRank int) {
		if stop {
			return
		}
		if depth == len(cands) {
			if h < best {
				best = h
				bestOff = append([]int(nil), off...)
				if best <= lb {
					stop = true
				}
			}
			return
		}
		nodes++
		if nodes&1023 == 0 && (nodes >= nodeLimit || time.Now().After(deadline)) {
			stop = true
			return
		}
		// Every unplaced slot will start at prevOff or higher.
		for _, i := range cands {
			if !placed[i] && prevOff+pl.slots[i].maxSize >= best {
				return
			}
		}
		for _, i := range cands {
			if placed[i] {
				continue
			}
			o := pl.fit(i, off, placed)
			if o < prevOff || (o == prevOff && rank[i] < prevRank) {
				continue
			}
			nh := max(h, o+pl.slots[i].maxSize)
			if nh >= best {
				continue
			}
			off[i] = o
			placed[i] = true
			dfs(depth+1, nh, o, rank[i])
			placed[i] = false
			if stop {
				return
			}
		}
	}
	if best > lb {
		dfs(0, 0, 0, -1)
	}
	return bestOff
}
