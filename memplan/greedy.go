package memplan

// greedyReadyCap bounds the ready nodes greedyOrder weighs at one step, so
// that a graph of thousands of independent nodes stays quadratic at worst:
// half of them the first in the model's order, half the ones made ready
// last (the readers of what just ran, which free it: with the first 4,096
// alone, a fan-out of 5,000 multiplies ran them all before an add, a
// review found).
const greedyReadyCap = 1024

// greedyOrder is a topological order built one node at a time: of the nodes
// whose inputs are ready, the one whose step needs the fewest live bytes
// (in-place counted), then the one that leaves the fewest, then the first in
// the model. It is the order for graphs too large for searchOrder's beam (a
// review: past 600 nodes the model's own order stood, and a fan-out of 301
// multiplies summed by a chain took 77,056 B where 512 B do), and a
// candidate beside it for smaller ones. Readers are counted, not searched:
// each step costs the size of the ready list.
func (a *analysis) greedyOrder() []int {
	nn := len(a.g.Nodes)
	resident, extra, outBytes := a.startBytes()
	indeg := make([]int, nn)
	succs := make([][]int, nn)
	for n := range nn {
		for _, p := range a.preds[n] {
			indeg[n]++
			succs[p] = append(succs[p], n)
		}
	}
	// remaining[r]: readers of root r (its views' included) not yet run;
	// reads[n]: the roots node n reads.
	remaining := make([]int, len(a.ts))
	reads := make([][]int, nn)
	for r := range a.ts {
		remaining[r] = len(a.groupCons[r])
		for _, c := range a.groupCons[r] {
			reads[c] = append(reads[c], r)
		}
	}
	var ready []int
	for n := range nn {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	// ready holds the ready nodes in the order they became ready (the
	// first ones in model order).
	order := make([]int, 0, nn)
	for len(ready) > 0 {
		best, bestCost, bestAfter := -1, 0, 0
		for i, n := range ready {
			if half := greedyReadyCap / 2; i >= half && i < len(ready)-half {
				continue
			}
			allDone := func(r int) bool {
				left := remaining[r]
				for _, c := range reads[n] {
					if c == r {
						left--
						break
					}
				}
				return left == 0
			}
			cost, after := a.stepCostBy(allDone, resident, n, outBytes[n])
			if len(order) == 0 {
				cost += extra
			}
			if best < 0 || cost < bestCost || cost == bestCost && (after < bestAfter || after == bestAfter && n < ready[best]) {
				best, bestCost, bestAfter = i, cost, after
			}
		}
		n := ready[best]
		ready = append(ready[:best], ready[best+1:]...)
		order = append(order, n)
		resident = bestAfter
		for _, r := range reads[n] {
			remaining[r]--
		}
		for _, s := range succs[n] {
			if indeg[s]--; indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) != nn {
		return nil // a cycle: Build's analysis refuses those first
	}
	return order
}
