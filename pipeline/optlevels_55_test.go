package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// Session 55's dsp helpers build and run bit-exact at every optimization
// level of gcc and clang: the 14-word RGB gather (its stores' offsets are
// asm immediates, which a loop index was only once unrolled: gcc -O0/-Og
// and clang -O0/-O1/-Os/-Oz/-Og failed to build IC, a review), the rows
// form's widening of RGB rows, the ADD tables and the planes pass.
func TestSession55HelpersAtEveryOptLevel(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	b := qemuBoard(t, "mps2-an386")
	graphs := []struct {
		name  string
		g     func() *graph.Graph
		knobs map[string]map[string]int
		call  string
	}{
		{"rgb-col33", func() *graph.Graph {
			return tirtest.ConvRGBPad(10, 11, 8, 2, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, graph.ActRelu, -128)
		}, nil, "dsp_col33c3_s8("},
		{"rgb-rows", func() *graph.Graph { return tirtest.ConvRGB(9, 13, 8, 1, graph.ActNone, 3) },
			map[string]map[string]int{"conv2d": {"col33": 0}}, "dsp_widen3_s8("},
		{"add", func() *graph.Graph { return addGraph(graph.Add, []int{1, 3, 5, 7}, graph.ActNone, 0.1, 3) }, nil, "dsp_addlut_s8("},
		{"dw-planes", func() *graph.Graph { return tirtest.DepthwiseK(6, 9, 16, 3, 2, 1, graph.ActRelu6, -128) }, nil, "dsp_planes_s8("},
	}
	builds := []struct {
		cc   string
		opts []string
	}{
		{"", []string{"-O0", "-Og", "-Os"}},
		{runner.CompilerClang, []string{"-O0", "-O1", "-Os", "-Oz", "-Og"}},
	}
	// The M55's ADD tables (gathers) at the same levels.
	m55 := qemuBoard(t, "mps3-an547")
	for _, bd := range builds {
		for _, opt := range bd.opts {
			name := "add-m55-" + bd.cc + opt
			t.Run(name, func(t *testing.T) {
				if bd.cc == runner.CompilerClang {
					needClang(t)
				}
				// 2,050 elements: the tables' default from 2,048, and a tail of two.
				g := func() *graph.Graph { return addGraph(graph.Sub, []int{1, 5, 10, 41}, graph.ActNone, 0.1, 3) }
				o := Options{Board: m55, Version: "test", Compiler: bd.cc, CFlags: []string{opt}}
				s, err := CompileGraph(g(), name, o)
				if err != nil {
					t.Fatal(err)
				}
				if !cContains(s.Files, "mve_addlut_s8(") {
					t.Fatalf("%s: the C does not call mve_addlut_s8", name)
				}
				checkedRun(t, g(), name, o, 1, 55)
			})
		}
	}
	for _, bd := range builds {
		for _, opt := range bd.opts {
			for _, c := range graphs {
				name := c.name + "-" + bd.cc + opt
				t.Run(name, func(t *testing.T) {
					if bd.cc == runner.CompilerClang {
						needClang(t)
					}
					o := Options{Board: b, Version: "test", Compiler: bd.cc, CFlags: []string{opt}, Knobs: c.knobs}
					s, err := CompileGraph(c.g(), name, o)
					if err != nil {
						t.Fatal(err)
					}
					if !cContains(s.Files, c.call) {
						t.Fatalf("%s: the C does not call %s", name, c.call)
					}
					checkedRun(t, c.g(), name, o, 1, 55)
				})
			}
		}
	}
}
