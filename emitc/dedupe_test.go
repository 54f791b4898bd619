package emitc

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir"
)

// TestSharedKernelsAndArrays: constants with equal values are one array,
// and a kernel whose C would repeat an earlier kernel's (same body, same
// arrays) is that kernel, called twice; a kernel that reads other values
// stays its own. The C still computes what the interpreter does.
func TestSharedKernelsAndArrays(t *testing.T) {
	// w1 and w2 hold the same values in two Data; w3 differs.
	g := fcTanhChain([]string{"w1", "w2", "w3"}, []float32{0, 0, 0.125})
	m, files := checkModel(t, g, Options{Prefix: "dd"}, 3)
	src := string(files["dd.c"])
	defs := regexp.MustCompile(`(?m)^static DD_KERNEL void dd_\w+\(`).FindAllString(src, -1)
	arrays := regexp.MustCompile(`(?m)^static const float \w+\[16\]`).FindAllString(src, -1)
	calls := regexp.MustCompile(`(?m)^    dd_\w+\(`).FindAllString(src, -1)
	// Six layers: FC(w1), FC(w2) = FC(w1), FC(w3); three tanh, one kernel.
	if len(m.Calls) != 6 || len(calls) != 6 {
		t.Fatalf("%d layers, %d calls, want 6", len(m.Calls), len(calls))
	}
	// FC(w3) differs from FC(w1) in its array only: one function, the
	// array passed by each call (session 48; before, a definition of its own).
	if len(defs) != 2 {
		t.Errorf("%d kernel definitions, want 2 (FC, its weights a parameter; tanh): %v", len(defs), defs)
	}
	if len(arrays) != 2 {
		t.Errorf("%d weight arrays, want 2 (w1 = w2, w3): %v", len(arrays), arrays)
	}
	fcCalls := regexp.MustCompile(`(?m)^    dd_fully_connected_0_f32\((\w+), .*\);$`).FindAllStringSubmatch(src, -1)
	if len(fcCalls) != 3 {
		t.Fatalf("%d calls of the FC kernel with an array argument, want 3:\n%s", len(fcCalls), src)
	}
	if fcCalls[0][1] != fcCalls[1][1] || fcCalls[0][1] == fcCalls[2][1] {
		t.Errorf("FC calls pass %s, %s, %s: want w1's array twice, then w3's", fcCalls[0][1], fcCalls[1][1], fcCalls[2][1])
	}
}

// fcTanhChain is float FC+tanh layers, one a weight name: weights
// i%5*0.25 - 0.5 plus the layer's salt.
func fcTanhChain(names []string, salts []float32) *graph.Graph {
	g := graph.New("dd", "test")
	x := g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.Inputs = []string{x.Name}
	cur := x.Name
	for i, wn := range names {
		d := graph.NewData(graph.Float32, []int{4, 4})
		for k := range d.F {
			d.F[k] = float32(k%5)*0.25 - 0.5 + salts[i]
		}
		g.AddConst(wn, d)
		fc := g.AddTensor(&graph.Tensor{Name: "fc" + string(rune('0'+i)), DType: graph.Float32, Shape: []int{1, 4}})
		g.AddNode(&graph.Node{Name: fc.Name, Op: graph.FullyConnected, Inputs: []string{cur, wn, ""}, Outputs: []string{fc.Name}, Attrs: &graph.FullyConnectedAttrs{}})
		th := g.AddTensor(&graph.Tensor{Name: "tanh" + string(rune('0'+i)), DType: graph.Float32, Shape: []int{1, 4}})
		g.AddNode(&graph.Node{Name: th.Name, Op: graph.Tanh, Inputs: []string{fc.Name}, Outputs: []string{th.Name}})
		cur = th.Name
	}
	g.Outputs = []string{cur}
	return g
}

// sharedFCGraph is two float FC+tanh layers whose weights (named a and b,
// different values) make one shared FC kernel.
func sharedFCGraph(a, b string) *graph.Graph {
	return fcTanhChain([]string{a, b}, []float32{0, 0.125})
}

// A shared kernel's call passes arrays by name in the entry function, whose
// own names they must not take (session 48 review: weights named "arena"
// became arena_, the external arena's parameter, and the call passed the
// arena as the weights; "workspace_pools", microTVM's parameter, did not
// build), and the arrays are replaced as identifiers only (a constant
// named f is not a float literal's suffix). Each builds warning-free and
// computes what the interpreter does.
func TestSharedKernelArgumentNames48(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		opts       Options
	}{
		{"arena external", "w1", "arena", Options{Prefix: "dd", ArenaExternal: true}},
		{"arena_ external", "w1", "arena_", Options{Prefix: "dd", ArenaExternal: true}},
		{"f", "f", "w2", Options{Prefix: "dd"}},
		{"e", "e", "u", Options{Prefix: "dd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, files := checkModel(t, sharedFCGraph(c.a, c.b), c.opts, 3)
			var src string
			for n, f := range files {
				if strings.HasSuffix(n, ".c") {
					src = string(f)
				}
			}
			defs := regexp.MustCompile(`(?m)^static \w+_KERNEL void \w+_fully_connected_\w+\(`).FindAllString(src, -1)
			if len(defs) != 1 {
				t.Errorf("%d FC kernel definitions, want 1 (shared)", len(defs))
			}
		})
	}
	// microTVM's entry takes workspace_pools: the C builds (-Werror) and
	// no call passes it (the host harness speaks the plain API only).
	t.Run("microTVM", func(t *testing.T) {
		g := sharedFCGraph("w1", "workspace_pools")
		opts := Options{Prefix: "tvmgen_default", ArenaExternal: true}
		m, err := tir.Lower(g, planFor(t, g, false), *tir.Generic)
		if err != nil {
			t.Fatal(err)
		}
		files, err := Emit(m, opts)
		if err != nil {
			t.Fatal(err)
		}
		src := string(files["tvmgen_default.c"])
		if regexp.MustCompile(`(?m)^    tvmgen_default_fully_connected_\w+\(workspace_pools,`).MatchString(src) {
			t.Errorf("a call passes workspace_pools as its weights:\n%s", src)
		}
		crossCompile(t, files, "tvmgen_default")
	})
}
