package emitc

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/tflite"
	"github.com/mcugen/mcugen/tir"
)

// sharedModels is ../shared/models/mlperf_tiny relative to the repo root.
var sharedModels = filepath.Join("..", "..", "shared", "models", "mlperf_tiny")

type mlperfModel struct{ dir, file, vectors string }

var mlperfInt8 = []mlperfModel{
	{"kws", "kws_ref_model.tflite", "vectors"},
	{"vww", "vww_96_int8.tflite", "vectors_int8"},
	{"ic", "pretrainedResnet_quant.tflite", "vectors_int8"},
	{"ad", "ad01_int8.tflite", "vectors_int8"},
}

var mlperfFloat = []mlperfModel{
	{"vww", "vww_96_float.tflite", "vectors_float"},
	{"ic", "pretrainedResnet.tflite", "vectors_float"},
	{"ad", "ad01_fp32.tflite", "vectors_float"},
}

func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sharedModels); err != nil {
		t.Skipf("skipping: the MLPerf Tiny reference models are not here (%s absent)", sharedModels)
	}
}

func readNpy(t testing.TB, path string) *graph.Data {
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

func loadModel(t testing.TB, m mlperfModel) *graph.Graph {
	t.Helper()
	g, err := tflite.Load(filepath.Join(sharedModels, m.dir, m.file))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// vectors reads input_NNN.npy / output_NNN.npy pairs.
func vectors(t testing.TB, g *graph.Graph, dir string) (ins, outs []map[string]*graph.Data) {
	t.Helper()
	for i := 0; ; i++ {
		ip := filepath.Join(dir, fmt.Sprintf("input_%03d.npy", i))
		if _, err := os.Stat(ip); err != nil {
			break
		}
		ins = append(ins, map[string]*graph.Data{g.Inputs[0]: readNpy(t, ip)})
		outs = append(outs, map[string]*graph.Data{g.Outputs[0]: readNpy(t, filepath.Join(dir, fmt.Sprintf("output_%03d.npy", i)))})
	}
	if len(ins) == 0 {
		t.Fatalf("no vectors in %s", dir)
	}
	return ins, outs
}

// TestMLPerfInt8BitExact compiles each int8 MLPerf Tiny model to C, builds it
// for the host with sanitizers (and for a Cortex-M4), and requires every
// output byte on every reference vector to equal TFLite Micro's.
func TestMLPerfInt8BitExact(t *testing.T) {
	needShared(t)
	if testing.Short() {
		t.Skip("long: compiles four models with sanitizers")
	}
	for _, mm := range mlperfInt8 {
		t.Run(mm.dir, func(t *testing.T) {
			g := loadModel(t, mm)
			opts := Options{Prefix: mm.dir, Model: mm.file}
			plan := planFor(t, g, false)
			m, err := tir.Lower(g, plan, *tir.Generic)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Emit(m, opts)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Emit(m, opts)
			if err != nil {
				t.Fatal(err)
			}
			for name, b := range files {
				if !bytes.Equal(b, again[name]) {
					t.Errorf("%s: emitting twice gave different bytes", name)
				}
			}
			if m.ArenaBytes != plan.ArenaBytes {
				t.Errorf("arena %d, plan says %d", m.ArenaBytes, plan.ArenaBytes)
			}
			exe := buildHost(t, m, files, opts)
			crossCompile(t, files, mm.dir)
			ins, want := vectors(t, g, filepath.Join(sharedModels, mm.dir, mm.vectors))
			got := runHost(t, exe, g, ins)
			for i := range ins {
				for _, name := range g.Outputs {
					compare(t, fmt.Sprintf("vector %d output %q", i, name), want[i][name], got[i][name])
				}
			}
			// 20 random inputs against the reference interpreter.
			r := rand.New(rand.NewSource(9))
			var rnd []map[string]*graph.Data
			for i := 0; i < 20; i++ {
				c := map[string]*graph.Data{}
				for _, name := range g.Inputs {
					c[name] = randomInput(r, g.Tensor(name))
				}
				rnd = append(rnd, c)
			}
			gotR := runHost(t, exe, g, rnd)
			for i, c := range rnd {
				wantR, err := interp.Run(g, c)
				if err != nil {
					t.Fatalf("reference: %v", err)
				}
				for _, name := range g.Outputs {
					compare(t, fmt.Sprintf("random %d output %q", i, name), wantR[name], gotR[i][name])
				}
			}
			t.Logf("%s: %d vectors and 20 random inputs bit-exact, arena %d bytes", mm.dir, len(ins), m.ArenaBytes)
		})
	}
}

// TestMLPerfFloat compiles the float MLPerf models and compares with the
// reference interpreter on the float vectors' inputs.
func TestMLPerfFloat(t *testing.T) {
	needShared(t)
	if testing.Short() {
		t.Skip("long")
	}
	for _, mm := range mlperfFloat {
		t.Run(mm.dir, func(t *testing.T) {
			g := loadModel(t, mm)
			ins, _ := vectors(t, g, filepath.Join(sharedModels, mm.dir, mm.vectors))
			for _, n := range g.Nodes {
				if !interp.Supported(g, n) {
					t.Skipf("reference interpreter lacks %s", n.Op)
				}
			}
			checkModel(t, g, Options{Prefix: mm.dir}, 20, ins...)
		})
	}
}

// BenchmarkCompile measures Lower + Emit for each MLPerf Tiny int8 model
// (the issue asks for under a second each).
func BenchmarkCompile(b *testing.B) {
	needShared(b)
	for _, mm := range mlperfInt8 {
		b.Run(mm.dir, func(b *testing.B) {
			g := loadModel(b, mm)
			plan := planFor(b, g, false)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := Compile(g, plan, Options{Prefix: mm.dir}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
