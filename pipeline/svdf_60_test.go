package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// svdfModel60 is an int8 TFLite SVDF layer of rank 2 over 16 inputs, 8
// filters and a memory of 8 (4 units), batch 2, with random weights:
// an int8 state (zero point 3) with int8 time weights, or TFLite's
// integer form: an int16 state (zero point 0) with int16 time weights.
func svdfModel60(state16 bool) *tg.Model {
	const opSVDF, optSVDF = 27, 6
	r := rand.New(rand.NewPCG(60, 1))
	m := &tg.Model{}
	q := func(t tg.Tensor, s float32, z int64) int32 {
		t.Scale, t.ZeroPoint = []float32{s}, []int64{z}
		return m.AddTensor(t)
	}
	i8 := func(n int) []int8 {
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(r.IntN(255) - 127)
		}
		return v
	}
	x := q(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{2, 16}}, 0.02, -5)
	wf := q(tg.Tensor{Name: "wf", Type: tg.Int8, Shape: []int32{8, 16}, Data: tg.I8Bytes(i8(128)...)}, 0.004, 0)
	sType, sScale, sZero := tg.Int8, float32(0.1), int64(3)
	if state16 {
		sType, sScale, sZero = tg.Int16, 0.0005, 0
	}
	wtT := tg.Tensor{Name: "wt", Type: tg.Int8, Shape: []int32{8, 8}, Data: tg.I8Bytes(i8(64)...)}
	wScale := float32(0.008)
	if state16 {
		v := make([]int16, 64)
		for i := range v {
			v[i] = int16(r.IntN(20001) - 10000)
		}
		wtT.Type, wtT.Data, wScale = tg.Int16, tg.I16Bytes(v...), 3e-5
	}
	wt := q(wtT, wScale, 0)
	b := q(tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{4}, Data: tg.I32Bytes(-4097, 15000, 3, -220)}, sScale*wScale, 0)
	s := q(tg.Tensor{Name: "state", Type: sType, Shape: []int32{2, 64}, Variable: true}, sScale, sZero)
	y := q(tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{2, 4}}, 0.05, -2)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	m.AddOp(opSVDF, &tg.Options{Type: optSVDF, Fields: []tg.Field{tg.I32(0, 2), tg.I8(1, tg.ActNone)}}, []int32{x, wf, wt, b, s}, y)
	return m
}

// SVDF on the dsp and mve targets: the feature step moves the state with
// one copy (gen_copy_s8 or gen_copy_s16), its sums take the fully
// connected layers' multiply-accumulate kernels (the input widened once),
// an int8 state's time step too (the state widened once a batch), and an
// int16 state's time step one 16x16 inner product a unit (dot_s16s16: a
// first version took the 16x8 ones, which hold int8 weights, for int16
// weights and was off by 133). Each firmware runs a sequence of 12 random
// and the extreme inputs, its state carried, and agrees with the
// reference session.
func TestSVDFKernels60(t *testing.T) {
	for _, board := range []string{"mps2-an386", "mps3-an547"} {
		b := qemuBoard(t, board)
		for _, c := range []struct {
			state16       bool
			feature, time string // the calls the C makes
		}{
			{false, "dsp_mac_s16_1x4_", "dsp_mac_s16_1x1_"},
			{true, "dsp_mac_s16_1x4_", "dot_s16s16("},
		} {
			t.Run(fmt.Sprintf("%s/state16=%v", board, c.state16), func(t *testing.T) {
				t.Parallel()
				g, err := tflite.Decode("svdf60", svdfModel60(c.state16).Bytes())
				if err != nil {
					t.Fatal(err)
				}
				s, err := CompileGraph(g, "svdf60", Options{Board: b, Version: "test"})
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				x, err := s.Execute(append(RandomInputs(s.Graph, 12, 60), ExtremeInputs(s.Graph)...), dir, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Errorf("the firmware disagrees with the reference session: %v (max abs diff %g)", x.Match, x.MaxAbsDiff)
				}
				feat, tim := kernelBody60(s.Files, "svdf_feature_"), kernelBody60(s.Files, "svdf_time_")
				copyK := map[bool]string{false: "gen_copy_s8(", true: "gen_copy_s16("}[c.state16]
				for _, call := range []string{c.feature, copyK} {
					if !strings.Contains(feat, call) {
						t.Errorf("the feature step does not call %s:\n%s", call, feat)
					}
				}
				if !strings.Contains(tim, c.time) {
					t.Errorf("the time step does not call %s:\n%s", c.time, tim)
				}
				if c.state16 && (strings.Contains(tim, "dsp_mac") || strings.Contains(tim, "dot_s16s8(")) {
					t.Errorf("int16 time weights took a kernel of int8 ones:\n%s", tim)
				}
				t.Logf("%d instructions", x.Instructions())
			})
		}
	}
}

// kernelBody60 is the body of the first kernel function in files whose
// name contains name ("" where none does).
func kernelBody60(files map[string][]byte, name string) string {
	for _, src := range files {
		text := string(src)
		for i := 0; ; {
			j := strings.Index(text[i:], name)
			if j < 0 {
				break
			}
			i += j
			line := text[strings.LastIndex(text[:i], "\n")+1:]
			line = line[:strings.Index(line, "\n")]
			if strings.HasPrefix(line, "static ") && strings.HasSuffix(line, ")") {
				end := strings.Index(text[i:], "\n}\n")
				return text[i : i+end]
			}
			i += len(name)
		}
	}
	return ""
}
