package pipeline

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// KWS profiled per layer on mps2-an386: one count per kernel call, named after
// its kernel and node, with the graph's MACs; the four pointwise and the four
// depthwise layers, which run the same code on same-shaped data, count the
// same; the layers add up to the unprofiled run's count up to a few
// instructions of hook cost per layer; and the profiled build computes the
// same outputs.
func TestLayerProfileKWS(t *testing.T) {
	t.Parallel()
	s := compileKWS(t)
	in := RandomInputs(s.Graph, 2, 11)
	plain, err := s.Execute(in, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.ExecuteLayers(in, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !plain.AllMatch() || !x.AllMatch() {
		t.Fatal("outputs differ from the reference interpreter")
	}
	if len(x.Layers) != len(s.Module.Calls) || len(x.Layers) != 12 {
		t.Fatalf("%d layers for %d calls", len(x.Layers), len(s.Module.Calls))
	}
	var sum int64
	byOp := map[string][]int64{}
	for i, l := range x.Layers {
		c := s.Module.Calls[i]
		if l.Kernel != c.Func.Name || l.Node != c.Func.Node || l.Instructions <= 0 {
			t.Errorf("layer %d: %+v", i, l)
		}
		sum += l.Instructions
		if i >= 1 && i <= 8 {
			byOp[l.Op] = append(byOp[l.Op], l.Instructions)
		}
	}
	if x.Layers[0].MACs != 25*5*64*10*4 || x.Layers[2].MACs != 25*5*64*64 {
		t.Errorf("MACs: conv %d, pointwise %d", x.Layers[0].MACs, x.Layers[2].MACs)
	}
	// Layers of one shape count alike: since session 48 they call one
	// function with their arrays passed where their code is the same
	// (KWS's depthwise layers 1 and 3 share one; 5 and 7, whose shifts
	// differ, have their own, and gcc allocates registers apart), and
	// KWS's depthwise layers differ by up to 80 instructions (136,563 and
	// 136,643 since session 55's planes pass; 24 before; 187 of 132,097
	// in one of session 56's builds, 10 in its last), so within 0.25%: a
	// layer on another schedule differs by far more.
	for op, n := range byOp {
		if len(n) != 4 || slices.Max(n)-slices.Min(n) > slices.Max(n)/400 {
			t.Errorf("%s layers count %v", op, n)
		}
	}
	if d := plain.Instructions() - sum; d < -8*int64(len(x.Layers)) || d > 200 {
		t.Errorf("layers add up to %d, the unprofiled run counts %d", sum, plain.Instructions())
	}
	t.Logf("KWS per layer: %d layers add up to %d of %d instructions", len(x.Layers), sum, plain.Instructions())
}

// Per-layer MACs are what each kernel computes: VWW's late layers store
// their dead output channels (all-zero weights) as constants, and counting
// those made one layer report 9.4 MACs per instruction on the Cortex-M4,
// whose SMLAD peak is 2 (review finding). No layer may beat that bound.
func TestLayerMACsWithinSMLADPeak(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	s, err := Compile(filepath.Join(sharedDir(t), "vww/vww_96_int8.tflite"), Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.ExecuteLayers(RandomInputs(s.Graph, 1, 3), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dead := 0
	for i, l := range x.Layers {
		dead += s.Module.Calls[i].Func.DeadChannels
		if l.MACs > 2*l.Instructions {
			t.Errorf("layer %d (%s): %d MACs in %d instructions, over the SMLAD peak of 2 per instruction", i, l.Kernel, l.MACs, l.Instructions)
		}
	}
	if dead == 0 {
		t.Error("VWW's kernels report no dead channels: the case this test is for is gone")
	}
}
