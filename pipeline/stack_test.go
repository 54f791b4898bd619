package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/tir"
)

// A build whose largest kernel's local arrays and frames exceed the board's
// stack is refused with a FitError naming the kernel; one byte more of
// stack and it compiles. The planar depthwise schedule (the default, and
// the in-place form) keeps three laid-out input rows on the stack, and the
// check counts them; on a stack too small for them the kernel runs them in
// slices of its channels, or takes another form (tir.Target.StackBytes),
// instead of the build being refused.
func TestStackCheck(t *testing.T) {
	b, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	const model = "../testdata/onnx/cnn.onnx" // quantized; a 3x3 depthwise convolution over 8x8x8
	opt := func(b *boardT, knobs map[string]map[string]int) Options {
		return Options{Board: b, Version: "test", Knobs: knobs, Quantize: "int8", CalibRandom: 4, Method: "minmax"}
	}
	planar := func(f *tir.PrimFunc) bool {
		alt := false
		tir.VisitExprs(f.Body, func(e tir.Expr) {
			if c, ok := e.(*tir.Intrinsic); ok && c.Name == tir.IntrDSPPlanes {
				alt = true
			}
		})
		return alt
	}
	for _, knobs := range []map[string]map[string]int{nil, {"depthwise_conv2d": {"dw_planar": 1}}} {
		s, err := Compile(model, opt(b, knobs))
		if err != nil {
			t.Fatal(err)
		}
		need, kernel := s.Module.ScratchBytes()
		if need == 0 || kernel == "" || s.Report.ScratchBytes != need {
			t.Fatalf("knobs %v: scratch %d in %q, report %d", knobs, need, kernel, s.Report.ScratchBytes)
		}
		t.Logf("knobs %v: %d B of local arrays in %s", knobs, need, kernel)
		// Its ring of three laid-out rows (8 channels, 5 words each) is
		// counted.
		ring := 0
		for _, f := range s.Module.Funcs {
			if planar(f) {
				ring = f.ScratchBytes()
				if ring < 3*8*5*4 {
					t.Errorf("%s: the planar schedule's local arrays count %d B, want at least %d", f.Name, ring, 3*8*5*4)
				}
			}
		}
		if ring == 0 {
			t.Fatalf("knobs %v: no kernel took the planar depthwise schedule", knobs)
		}
		// One byte short of the ring: the planar form in slices of its
		// channels, each ring smaller (session 53), or another form; the
		// build fits.
		small := *b
		small.StackBytes = ring + StackFrames - 1
		s, err = Compile(model, opt(&small, knobs))
		if err != nil {
			t.Fatalf("stack %d B: %v", small.StackBytes, err)
		}
		for _, f := range s.Module.Funcs {
			if planar(f) && f.ScratchBytes() >= ring {
				t.Errorf("stack %d B: %s keeps the planar form's whole ring (%d B)", small.StackBytes, f.Name, f.ScratchBytes())
			}
		}
		// A kernel whose arrays pass the stack takes the next target's
		// form where that fits (tir's lowerer: the generic loops, which
		// keep none), so the stack shrinks below each largest kernel's
		// arrays in turn, every build fitting, down to the frames and a
		// byte (the kernels' limit is the stack less the frames: at the
		// frames alone none is known); below the frames the build is
		// refused.
		for {
			need, kernel = s.Module.ScratchBytes()
			t.Logf("stack %d B: %d B of local arrays in %s", small.StackBytes, need, kernel)
			if need == 0 {
				small.StackBytes = StackFrames + 1
				if _, err := Compile(model, opt(&small, knobs)); err != nil {
					t.Fatalf("stack %d B: %v", small.StackBytes, err)
				}
				small.StackBytes = StackFrames - 1
				_, err := Compile(model, opt(&small, knobs))
				var fit *FitError
				if !errors.As(err, &fit) {
					t.Fatalf("stack %d B: got %v, want a FitError", small.StackBytes, err)
				}
				break
			}
			small.StackBytes = need + StackFrames - 1
			s2, err := Compile(model, opt(&small, knobs))
			if err == nil {
				if n2, _ := s2.Module.ScratchBytes(); n2 >= need {
					t.Fatalf("stack %d B: compiled with %d B of local arrays", small.StackBytes, n2)
				}
				s = s2
				continue
			}
			var fit *FitError
			if !errors.As(err, &fit) || !strings.Contains(err.Error(), kernel) || fit.Need-fit.Have != 1 {
				t.Fatalf("stack %d B: got %v, want a FitError 1 B short naming %s", small.StackBytes, err, kernel)
			}
			small.StackBytes++
			if _, err := Compile(model, opt(&small, knobs)); err != nil {
				t.Fatalf("stack %d B: %v", small.StackBytes, err)
			}
			break
		}
	}
}

type boardT = boards.Board
