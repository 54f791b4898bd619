package main

import (
	"math"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An output that is 0 where the reference has +Inf is a differing element
// (session 48 review: the tolerance of an infinite reference was infinite,
// no element was counted, and the report said the output "differs in
// size"); equal infinities still match.
func TestFirstMismatchInfinity48(t *testing.T) {
	f := func(v ...float32) *graph.Data {
		d := graph.NewData(graph.Float32, []int{len(v)})
		copy(d.F, v)
		return d
	}
	inf := float32(math.Inf(1))
	m := firstMismatch([]string{"y"}, []*graph.Data{f(0, 1, inf)}, []*graph.Data{f(inf, 1, inf)}, "the reference interpreter")
	if m == nil || m.Index != 0 || m.Differ != 1 || float64(m.Want) != math.Inf(1) {
		t.Fatalf("mismatch %+v, want element 0, one differing", m)
	}
	if s := m.String(); s == "" || strings.Contains(s, "differs in size") {
		t.Errorf("report %q", s)
	}
}
