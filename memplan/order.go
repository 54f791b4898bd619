package memplan

import (
	"slices"
)

// bitset is a set of node indices.
type bitset []uint64

func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }

func (b bitset) clear(i int) { b[i>>6] &^= 1 << (uint(i) & 63) }

// setKey identifies a bitset in a map without allocating for up to 256 nodes.
type setKey struct {
	w    [4]uint64
	rest string
}

func (b bitset) key() setKey {
	var k setKey
	copy(k.w[:], b)
	if len(b) > 4 {
		buf := make([]byte, 0, 8*(len(b)-4))
		for _, w := range b[4:] {
			for s := 0; s < 64; s += 8 {
				buf = append(buf, byte(w>>s))
			}
		}
		k.rest = string(buf)
	}
	return k
}

// orderState is a set of executed nodes reached by the best order found.
type orderState struct {
	done     bitset
	peak     int // the highest step cost so far
	resident int // bytes live after the set has run (a function of the set)
	parent   int // index in the previous level
	node     int // the node added last
}

// searchTransitions caps the work of one order search; it sets the beam width.
const searchTransitions = 1_000_000

// searchOrder returns a topological order with a low peak of live bytes.
//
// The bytes live after a set S of nodes has run depend only on S, and the
// cost of running node n next (live bytes during n, in-place counted) only on
// S and n. So the best order is a shortest path (minimizing the maximum step
// cost) through the lattice of executed sets; it is found level by level
// (|S| = 0, 1, 2, ...) keeping for each set the lowest peak. When a level
// holds more sets than the beam width, only the best (by peak, then resident
// bytes) are kept, and the search is a heuristic.
func (a *analysis) searchOrder() []int {
	nn := len(a.g.Nodes)
	words := (nn + 63) / 64
	width := max(8, min(4096, searchTransitions/max(1, nn*nn)))
	resident0, extra0, outBytes := a.startBytes()
	level := []orderState{{done: make(bitset, words), resident: resident0, parent: -1, node: -1}}
	var levels [][]orderState
	for depth := 0; depth < nn; depth++ {
		next := []orderState{}
		index := map[setKey]int{}
		for si := range level {
			st := &level[si]
			for n := 0; n < nn; n++ {
				if st.done.has(n) || !a.ready(st.done, n) {
					continue
				}
				cost, after := a.stepCost(st.done, st.resident, n, outBytes[n])
				if depth == 0 {
					cost += extra0
				}
				peak := max(st.peak, cost)
				st.done.set(n)
				k := st.done.key()
				if j, ok := index[k]; ok {
					st.done.clear(n)
					if peak < next[j].peak {
						next[j].peak, next[j].parent, next[j].node = peak, si, n
					}
					continue
				}
				done := slices.Clone(st.done)
				st.done.clear(n)
				index[k] = len(next)
				next = append(next, orderState{done: done, peak: peak, resident: after, parent: si, node: n})
			}
		}
		if len(next) > width {
			slices.SortStableFunc(next, func(x, y orderState) int {
				if x.peak != y.peak {
					return x.peak - y.peak
				}
				return x.resident - y.resident
			})
			next = next[:width]
		}
		levels = append(levels, level)
		level = next
	}
	// The final level has one set (all nodes); walk the parents back.
	order := make([]int, nn)
	si := 0
	for depth := nn - 1; depth >= 0; depth-- {
		st := level[si]
		order[depth] = st.node
		si = st.parent
		level = levels[depth]
	}
	return order
}

func (a *analysis) ready(done bitset, n int) bool {
	for _, p := range a.preds[n] {
		if !done.has(p) {
			return false
		}
	}
	return true
}

// startBytes is what an order search starts from: the live bytes before
// anything runs (inputs that something still needs: resident; those that
// nothing reads: extra, live during the first step only), and the bytes of
// each node's outputs that the arena holds.
func (a *analysis) startBytes() (resident, extra int, outBytes []int) {
	for id := range a.ts {
		t := &a.ts[id]
		if !t.input || t.root != id || a.outside[id] {
			continue
		}
		if len(a.groupCons[id]) > 0 || a.groupOut[id] {
			resident += t.size
		} else {
			extra += t.size
		}
	}
	outBytes = make([]int, len(a.g.Nodes))
	for n := range outBytes {
		for _, o := range a.outs[n] {
			if a.ts[o].root == o && !a.outside[o] {
				outBytes[n] += a.ts[o].size
			}
		}
	}
	return resident, extra, outBytes
}

// stepCost is the live bytes while n runs after the set done, and the live
// bytes after it.
func (a *analysis) stepCost(done bitset, resident, n, out int) (cost, after int) {
	return a.stepCostBy(func(r int) bool {
		for _, c := range a.groupCons[r] {
			if c != n && !done.has(c) {
				return false
			}
		}
		return true
	}, resident, n, out)
}

// stepCostBy is stepCost with allDone saying whether every reader of root r
// other than n has run.
func (a *analysis) stepCostBy(allDone func(r int) bool, resident, n, out int) (cost, after int) {
	cost = resident + out
	if x, y, ok := a.inPlaceAt(n, allDone); ok {
		cost -= min(a.ts[x].size, a.ts[y].size)
	}
	after = resident + out
	for k, in := range a.ins[n] {
		r := a.ts[in].root
		if a.outside[r] || a.groupOut[r] || a.rootSeen(n, k, r) {
			continue
		}
		if allDone(r) {
			after -= a.ts[r].size
		}
	}
	for _, o := range a.outs[n] {
		if a.ts[o].root == o && !a.outside[o] && len(a.groupCons[o]) == 0 && !a.groupOut[o] {
			after -= a.ts[o].size
		}
	}
	return cost, after
}

// rootSeen reports whether an earlier input of n has root r.
func (a *analysis) rootSeen(n, k, r int) bool {
	for _, in := range a.ins[n][:k] {
		if a.ts[in].root == r {
			return true
		}
	}
	return false
}
