package tir

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// maxAccs is the largest number of scalar accumulators live at once in s.
func maxAccs(s Stmt) int {
	switch x := s.(type) {
	case *Allocate:
		n := 0
		if len(x.Buf.Shape) == 0 {
			n = 1
		}
		return n + maxAccs(x.Body)
	case *For:
		return maxAccs(x.Body)
	case *Seq:
		m := 0
		for _, c := range x.Stmts {
			m = max(m, maxAccs(c))
		}
		return m
	case *IfThenElse:
		return max(maxAccs(x.Then), maxAccs(x.Else))
	case *LetStmt:
		return maxAccs(x.Body)
	}
	return 0
}

func withKnobs(f *PrimFunc, knobs map[string]int) *PrimFunc {
	f.Knobs = map[string]int{}
	for k, v := range knobs {
		f.Knobs[k] = v
	}
	return f
}

// Register blocks compute what the compute definition computes: convs with
// odd widths and channel counts (tail loops), padding, strides, groups and
// depthwise, for several block shapes; and the blocks are really there.
func TestGenericBlockedConvKeepsResults(t *testing.T) {
	must := musts(t)
	r := rand.New(rand.NewSource(8))
	// full: the channels divide into blocks and some run of output columns
	// is long enough for a pixel block, so a whole block must appear.
	for _, c := range []struct {
		cin, cout, group, k, stride, pad, boc, bpx int
		full                                       bool
	}{
		{3, 5, 1, 3, 1, 1, 2, 2, false}, {8, 8, 1, 1, 1, 0, 2, 2, true}, {4, 6, 1, 3, 2, 1, 3, 2, false},
		{4, 4, 4, 3, 1, 1, 2, 2, true}, {6, 6, 6, 3, 2, 1, 2, 3, false}, {6, 4, 2, 1, 1, 0, 4, 1, true},
		{5, 7, 1, 3, 1, 0, 4, 4, false}, {3, 8, 1, 3, 1, 1, 4, 2, true},
	} {
		name := fmt.Sprintf("conv%+v", c)
		g, n := int8Conv(r, c.cin, c.cout, c.group, c.k, c.stride, c.pad)
		base := computeFunc(t, g, n)
		s := must(scheduleConvBlocked(withKnobs(computeFunc(t, g, n), map[string]int{"block_oc": c.boc, "block_px": c.bpx})))
		want := c.boc
		if c.full {
			want *= c.bpx
		}
		if got := maxAccs(s.Body); got < want {
			t.Errorf("%s: %d accumulators at most, want a %d×%d block", name, got, c.boc, c.bpx)
		}
		sameResult(t, name, base, Finalize(s))
	}
}

func TestGenericBlockedFCKeepsResults(t *testing.T) {
	must := musts(t)
	r := rand.New(rand.NewSource(9))
	for _, c := range []struct{ rows, k, n, boc int }{
		{1, 64, 12, 4}, {1, 40, 7, 4}, {3, 24, 9, 2}, {1, 10, 5, 3}, {2, 16, 3, 4},
	} {
		name := fmt.Sprintf("fc%+v", c)
		g, n := int8FC(r, c.rows, c.k, c.n, 11)
		base := computeFunc(t, g, n)
		s := must(scheduleFCBlocked(withKnobs(computeFunc(t, g, n), map[string]int{"block_oc": c.boc})))
		want := c.boc
		if c.n < c.boc {
			want = 1
		}
		if maxAccs(s.Body) < want {
			t.Errorf("%s: no block of %d rows:\n%s", name, want, s)
		}
		sameResult(t, name, base, Finalize(s))
	}
}

// JamLoop leaves loops it cannot block alone: a reduction that writes
// something other than its accumulator.
func TestJamLoopRefusesOtherWrites(t *testing.T) {
	y := NewBuffer("y", I32, []int{4}, ScopeParam)
	y.Writes = true
	z := NewBuffer("z", I32, []int{4}, ScopeParam)
	z.Writes = true
	f := &PrimFunc{Name: "k", Params: []*Buffer{y, z}, Body: Loop("j", 4, func(j Expr) Stmt {
		return Scalar("acc", I32, func(acc *Buffer) Stmt {
			return Block(Put(acc, C(1)), Loop("k", 3, func(k Expr) Stmt {
				return Block(Put(acc, Add(At(acc), k)), Put(z, Add(At(z, j), C(1)), j))
			}), Put(y, At(acc), j))
		})
	})}
	if g := JamLoop(f, "j", 2); maxAccs(g.Body) != 1 {
		t.Fatalf("blocked a reduction with side writes:\n%s", g)
	}
	sameResult(t, "jam with side writes", f, JamLoop(f, "j", 2))
}

// FoldConstTaps turns the padded taps of the border pieces into tables and
// keeps the results; without padding there is nothing to fold.
func TestFoldConstTapsKeepsResults(t *testing.T) {
	must := musts(t)
	r := rand.New(rand.NewSource(10))
	for _, c := range []struct{ cin, cout, k, stride, pad int }{
		{3, 5, 3, 1, 1}, {4, 6, 3, 2, 1}, {2, 4, 5, 1, 2}, {8, 8, 1, 1, 0},
	} {
		name := fmt.Sprintf("conv%+v", c)
		g, n := int8Conv(r, c.cin, c.cout, 1, c.k, c.stride, c.pad)
		base := computeFunc(t, g, n)
		s := must(scheduleConvGeneric(computeFunc(t, g, n)))
		folded := must(FoldConstTaps(s, "oc"))
		tables := 0
		for _, b := range folded.Consts() {
			if strings.Contains(b.Name, "_taps") {
				tables++
			}
		}
		if (tables > 0) != (c.pad > 0) {
			t.Errorf("%s: %d tap tables", name, tables)
		}
		sameResult(t, name, base, Finalize(folded))
	}
}
