package tflite_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/tflite"
)

// sharedModels is ../shared/models/mlperf_tiny relative to the repo root.
var sharedModels = filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny")

type mlperfModel struct {
	dir, file, vectors string
	macs               int64
	ops                map[string]int
}

var mlperfModels = []mlperfModel{
	{"kws", "kws_ref_model.tflite", "vectors", 2656768, map[string]int{"Conv2D": 9, "AvgPool2D": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1}},
	{"vww", "vww_96_int8.tflite", "vectors_int8", 7489664, map[string]int{"Conv2D": 27, "AvgPool2D": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1}},
	{"ic", "pretrainedResnet_quant.tflite", "vectors_int8", 12501632, map[string]int{"Conv2D": 9, "Add": 3, "AvgPool2D": 1, "Reshape": 1, "FullyConnected": 1, "Softmax": 1}},
	{"ad", "ad01_int8.tflite", "vectors_int8", 264192, map[string]int{"FullyConnected": 10}},
}

func needShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedModels); err != nil {
		t.Skipf("skipping: the MLPerf Tiny reference models are not here (%s absent)", sharedModels)
	}
}

func readNpy(t *testing.T, path string) *graph.Data {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := npy.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// TestMLPerfBitExact runs each int8 MLPerf Tiny model on every reference
// input and requires every output byte to equal TFLite Micro's output.
func TestMLPerfBitExact(t *testing.T) {
	needShared(t)
	for _, m := range mlperfModels {
		t.Run(m.dir, func(t *testing.T) {
			g, err := tflite.Load(filepath.Join(sharedModels, m.dir, m.file))
			if err != nil {
				t.Fatal(err)
			}
			ins, _ := filepath.Glob(filepath.Join(sharedModels, m.dir, m.vectors, "input_*.npy"))
			if len(ins) == 0 {
				t.Fatal("no input vectors")
			}
			if testing.Short() && len(ins) > 2 {
				ins = ins[:2]
			}
			matched, bytes, diff := 0, 0, 0
			for _, in := range ins {
				want := readNpy(t, filepath.Join(filepath.Dir(in), "output_"+filepath.Base(in)[len("input_"):]))
				out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: readNpy(t, in)})
				if err != nil {
					t.Fatal(err)
				}
				got := out[g.Outputs[0]]
				if got.Len() != want.Len() {
					t.Fatalf("%s: %d outputs, want %d", in, got.Len(), want.Len())
				}
				ok := true
				for i := range want.I {
					bytes++
					if got.I[i] != want.I[i] {
						diff++
						if ok {
							t.Errorf("%s: output[%d] = %d, TFLite Micro gives %d", filepath.Base(in), i, got.I[i], want.I[i])
						}
						ok = false
					}
				}
				if ok {
					matched++
				}
			}
			t.Logf("%s: %d/%d vectors bit-exact (%d of %d output bytes differ)", m.dir, matched, len(ins), diff, bytes)
			if matched != len(ins) {
				t.Fail()
			}
		})
	}
}

// TestMLPerfMACsAndOps checks the MAC count and op counts of the four models.
func TestMLPerfMACsAndOps(t *testing.T) {
	needShared(t)
	for _, m := range mlperfModels {
		g, err := tflite.Load(filepath.Join(sharedModels, m.dir, m.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := graph.TotalMACs(g); got != m.macs {
			t.Errorf("%s: %d MACs, want %d", m.dir, got, m.macs)
		}
		got := graph.OpCounts(g)
		if len(got) != len(m.ops) {
			t.Errorf("%s: ops %v, want %v", m.dir, got, m.ops)
		}
		for op, c := range m.ops {
			if got[op] != c {
				t.Errorf("%s: %d %s, want %d", m.dir, got[op], op, c)
			}
		}
	}
}

// TestMLPerfFloat runs the float32 MLPerf Tiny models (imported by this
// package, computed by the float kernels) on the float vectors and compares
// with TFLite Micro's float outputs.
func TestMLPerfFloat(t *testing.T) {
	needShared(t)
	for _, m := range []struct{ dir, file string }{
		{"vww", "vww_96_float.tflite"}, {"ic", "pretrainedResnet.tflite"}, {"ad", "ad01_fp32.tflite"},
	} {
		t.Run(m.dir, func(t *testing.T) {
			g, err := tflite.Load(filepath.Join(sharedModels, m.dir, m.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range g.Nodes {
				if !interp.Supported(g, n) {
					t.Skipf("no float kernel for %s yet", n.Op)
				}
			}
			ins, _ := filepath.Glob(filepath.Join(sharedModels, m.dir, "vectors_float", "input_*.npy"))
			if testing.Short() && len(ins) > 2 {
				ins = ins[:2]
			}
			worst := 0.0
			for _, in := range ins {
				want := readNpy(t, filepath.Join(filepath.Dir(in), "output_"+filepath.Base(in)[len("input_"):]))
				out, err := interp.Run(g, map[string]*graph.Data{g.Inputs[0]: readNpy(t, in)})
				if err != nil {
					t.Fatal(err)
				}
				got := out[g.Outputs[0]]
				for i, w := range want.F {
					d := math.Abs(float64(got.F[i]) - float64(w))
					worst = math.Max(worst, d/math.Max(1, math.Abs(float64(w))))
				}
			}
			t.Logf("%s: %d float vectors, largest relative difference %.2g", m.dir, len(ins), worst)
			if worst > 1e-4 {
				t.Errorf("%s: float outputs differ from TFLite Micro's by %.2g", m.dir, worst)
			}
		})
	}
}
