package tir

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// ScratchBytes follows C's scopes as emitc prints them: arrays declared in
// one block add up to the block's end, blocks that follow each other
// (loop bodies, the branches of an if) share, an unrolled loop's bodies
// land in one block, and a one-element buffer is a scalar.
func TestScratchBytesScopes(t *testing.T) {
	arr := func(name string, n int, dt DType, body Stmt) Stmt {
		return &Allocate{Buf: NewBuffer(name, dt, []int{n}, ScopeLocal), Body: body}
	}
	nop := &Evaluate{X: C(0)}
	loop := func(body Stmt) Stmt { return &For{Var: NewVar("i"), Min: C(0), Extent: C(4), Body: body} }
	unrolled := func(body Stmt) Stmt {
		return &For{Var: NewVar("u"), Min: C(0), Extent: C(3), Kind: Unrolled, Body: body}
	}
	for _, c := range []struct {
		name      string
		body      Stmt
		want, sum int
	}{
		// int32[100] then int8[50] in one block: 400 + 50.
		{"one block", arr("a", 100, graph.Int32, arr("b", 50, graph.Int8, nop)), 450, 450},
		// Two loops one after the other: the larger body.
		{"two loops", Block(loop(arr("a", 100, graph.Int32, nop)), loop(arr("b", 30, graph.Int32, nop))), 400, 520},
		// An array before a loop stays live in it: 80 + max(400, 40).
		{"outer and inner", arr("o", 20, graph.Int32, Block(loop(arr("a", 100, graph.Int32, nop)), loop(arr("b", 10, graph.Int32, nop)))), 480, 520},
		// A loop's peak, then two more arrays of the block: 400 vs 8 + 12.
		{"peak before", Block(loop(arr("a", 100, graph.Int32, nop)), arr("c", 2, graph.Int32, arr("d", 3, graph.Int32, nop))), 400, 420},
		// if/else: the larger branch.
		{"branches", &IfThenElse{Cond: C(1), Then: arr("a", 10, graph.Int32, nop), Else: arr("b", 7, graph.Int32, nop)}, 40, 68},
		// An unrolled loop of 3 prints its body three times in the block
		// (the sum counts the IR as it is: a finalized kernel has no
		// unrolled loops left).
		{"unrolled", unrolled(arr("a", 5, graph.Int32, nop)), 60, 20},
		{"scalar", arr("s", 1, graph.Int32, nop), 0, 0},
	} {
		f := &PrimFunc{Name: c.name, Body: c.body}
		if got := f.ScratchBytes(); got != c.want {
			t.Errorf("%s: ScratchBytes %d, want %d", c.name, got, c.want)
		}
		if got := f.ScratchSumBytes(); got != c.sum {
			t.Errorf("%s: ScratchSumBytes %d, want %d", c.name, got, c.sum)
		}
	}
}
