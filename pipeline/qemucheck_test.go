package pipeline

import (
	"bytes"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
)

// cContains reports whether any generated file contains one of subs.
func cContains(files map[string][]byte, subs ...string) bool {
	for _, src := range files {
		for _, s := range subs {
			if bytes.Contains(src, []byte(s)) {
				return true
			}
		}
	}
	return false
}

// checkGraphUnderQEMU compiles g for b with target and knobs, the arena
// external and guarded and the inputs and outputs in it, requires the C to
// contain one of calls (the form under test was taken), then runs nRandom
// random inputs (seed) and the extreme ones and requires every output to
// equal the reference interpreter's.
func checkGraphUnderQEMU(t *testing.T, b *boards.Board, g *graph.Graph, name, target string, knobs map[string]map[string]int,
	nRandom int, seed uint64, calls ...string) {
	t.Helper()
	checkGraphUnderQEMUFlags(t, b, g, name, target, knobs, nil, nRandom, seed, calls...)
}

// checkGraphUnderQEMUFlags is checkGraphUnderQEMU with extra compiler
// flags for the firmware (-DMCUGEN_NO_ASM: the C forms beside the asm).
func checkGraphUnderQEMUFlags(t *testing.T, b *boards.Board, g *graph.Graph, name, target string, knobs map[string]map[string]int,
	cflags []string, nRandom int, seed uint64, calls ...string) {
	t.Helper()
	checkGraphUnderQEMUOpts(t, b, g, name, Options{Target: target, Knobs: knobs, CFlags: cflags}, nRandom, seed, calls...)
}

// checkGraphUnderQEMUOpts is checkGraphUnderQEMU with more of the options
// (board, arena and I/O placement and version are set here).
func checkGraphUnderQEMUOpts(t *testing.T, b *boards.Board, g *graph.Graph, name string, o Options, nRandom int, seed uint64, calls ...string) {
	t.Helper()
	o.Board, o.ArenaExternal, o.IOInArena, o.Version = b, true, true, "test"
	s, err := CompileGraph(g, name, o)
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, calls...) {
		t.Fatalf("the C contains none of %q", calls)
	}
	vecs := append(RandomInputs(s.Graph, nRandom, seed), ExtremeInputs(s.Graph)...)
	x, err := s.Execute(vecs, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("outputs differ from the reference interpreter")
	}
}

// checkedRun compiles g with o, runs it on nRandom random and the extreme
// inputs, fails the test where an output differs from the reference
// interpreter, and returns the instructions of the first vector.
func checkedRun(t *testing.T, g *graph.Graph, name string, o Options, nRandom int, seed uint64) int64 {
	t.Helper()
	s, err := CompileGraph(g, name, o)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Execute(append(RandomInputs(s.Graph, nRandom, seed), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x.AllMatch() {
		t.Errorf("%s: outputs differ from the reference interpreter", name)
	}
	return x.Instructions()
}

// defaultTakesFewer runs g's conv2d kernel on board b with its default knobs
// plus def and with alt instead (each checked by checkedRun) and fails the
// test unless the default takes fewer instructions.
func defaultTakesFewer(t *testing.T, b *boards.Board, g func() *graph.Graph, def, alt map[string]int, defName, altName string) {
	t.Helper()
	opt := func(kn map[string]int) Options {
		return Options{Board: b, Target: "dsp", Knobs: map[string]map[string]int{"conv2d": kn}, Version: "test"}
	}
	d := checkedRun(t, g(), "default", opt(def), 3, 5)
	a := checkedRun(t, g(), altName, opt(alt), 3, 5)
	if d >= a {
		t.Errorf("default (%s) %d instructions, %s %d: the default should take fewer", defName, d, altName, a)
	}
	t.Logf("default (%s) %d, %s %d", defName, d, altName, a)
}

// checkVectors requires each of the n vectors' outputs to equal the
// reference interpreter's and, for the first len(want), TFLite Micro's.
func checkVectors(t *testing.T, x *Execution, n int, want []*graph.Data) {
	t.Helper()
	if len(x.Match) != n {
		t.Fatalf("%d results for %d vectors", len(x.Match), n)
	}
	for v := range x.Match {
		if !x.Match[v] {
			t.Errorf("vector %d differs from the reference interpreter", v)
		}
		if v < len(want) {
			if ok, _ := Compare(x.Outputs[v][0], want[v]); !ok {
				t.Errorf("vector %d differs from TFLite Micro's output", v)
			}
		}
	}
}
