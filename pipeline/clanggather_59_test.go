package pipeline

import (
	"testing"

	"github.com/mcugen/mcugen/importer/tflite"
	"github.com/mcugen/mcugen/runner"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// A clang build for the Cortex-M55 of three int8 → float DEQUANTIZE layers
// of one shape, which share one kernel and read its float table through a
// pointer argument (T[x + 128]): clang 14 vectorized that lookup into a
// Helium gather whose immediate offset (#512, past VLDRW's ±508) it
// encoded as #0, and the firmware read 512 bytes low (a BusFault at the
// review's model). With runner.ClangNoMVEGathers it runs bit-exact.
func TestClangM55TableLookups59(t *testing.T) {
	needClang(t)
	b := qemuBoard(t, "mps3-an547")
	m := &tg.Model{}
	var ins, outs []int32
	for i, name := range []string{"a", "b", "c"} {
		// Scales apart: three tables, which the shared kernel takes as an argument.
		x := m.AddTensor(tg.Tensor{Name: name, Type: tg.Int8, Shape: []int32{1, 128}, Scale: []float32{0.05 * float32(i+1)}, ZeroPoint: []int64{3}})
		y := m.AddTensor(tg.Tensor{Name: name + "f", Type: tg.Float32, Shape: []int32{1, 128}})
		m.AddOp(tg.OpDequantize, nil, []int32{x}, y)
		ins, outs = append(ins, x), append(outs, y)
	}
	m.Inputs, m.Outputs = ins, outs
	g, err := tflite.Decode("deq3", m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Board: b, Version: "test", Compiler: runner.CompilerClang}
	s, err := CompileGraph(g, "deq3", o)
	if err != nil {
		t.Fatal(err)
	}
	if !cContains(s.Files, "const float *restrict const0") {
		t.Fatal("the three layers do not share a kernel taking its table as an argument")
	}
	checkedRun(t, g, "deq3", o, 2, 59)
}
