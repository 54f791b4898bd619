package measure

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
)

// testdata/mlperf_an386.json holds the records `mcugen tune` produced for the
// four MLPerf Tiny int8 models on mps2-an386, for the dsp and the generic
// target (docs/PERFORMANCE.md, "Tuning").
const mlperfRecords = "testdata/mlperf_an386.json"

// TestMLPerfTunedBitExact builds each MLPerf Tiny model with and without
// the committed tuning records and runs TFLite Micro's vectors through
// both: the tuned build must take knobs from the records, match TFLite
// Micro's outputs byte for byte. The instruction counts are logged, not
// asserted: schedules' defaults keep improving, and a committed record can
// go stale (re-run mcugen tune to refresh it); the fresh-records check is
// TestTuneEndToEnd.
func TestMLPerfTunedBitExact(t *testing.T) {
	if testing.Short() {
		t.Skip("QEMU suite: not in -short")
	}
	shared, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny runs skipped")
	}
	b := board(t, "mps2-an386")
	if err := runner.CheckTools(b); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	models := []struct{ name, file, vectors string }{
		{"kws", "kws/kws_ref_model.tflite", "kws/vectors"},
		{"vww", "vww/vww_96_int8.tflite", "vww/vectors_int8"},
		{"ic", "ic/pretrainedResnet_quant.tflite", "ic/vectors_int8"},
		{"ad", "ad/ad01_int8.tflite", "ad/vectors_int8"},
	}
	for _, target := range []string{"dsp", "generic"} {
		for _, m := range models {
			t.Run(target+"/"+m.name, func(t *testing.T) {
				model := filepath.Join(shared, m.file)
				opt := pipeline.Options{Board: b, Target: target, Version: "test"}
				base, err := pipeline.Compile(model, opt)
				if err != nil {
					t.Fatal(err)
				}
				opt.Tuning = mlperfRecords
				tuned, err := pipeline.Compile(model, opt)
				if err != nil {
					t.Fatal(err)
				}
				if tuned.Tuned == 0 {
					t.Fatal("no kernel took knobs from the records")
				}
				vecs, want := vectors(t, base, filepath.Join(shared, m.vectors))
				var counts [2]int64
				for i, s := range []*pipeline.State{base, tuned} {
					x, err := s.Execute(vecs, t.TempDir(), 60*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					for v := range vecs {
						if ok, _ := pipeline.Compare(x.Outputs[v][0], want[v]); !ok || !x.Match[v] {
							t.Fatalf("build %d vector %d differs from TFLite Micro's output", i, v)
						}
					}
					counts[i] = x.Instructions()
					// The measured stack (Winograd's tiles are the largest local
					// arrays) within what compile checked against the board.
					locals, kernel := s.Module.ScratchBytes()
					if st := x.StackBytes(); st <= 0 || st > int64(locals+pipeline.StackFrames) {
						t.Errorf("build %d: the run took %d B of stack; kernel %s's local arrays are %d B, compile allows %d B of frames on top", i, st, kernel, locals, pipeline.StackFrames)
					}
				}
				if counts[1] > counts[0] {
					t.Logf("%s %s: the committed records are stale (tuned %d > untuned %d): refresh testdata/mlperf_an386.json", m.name, target, counts[1], counts[0])
				}
				t.Logf("%s %s: untuned %d, tuned %d instructions (%d kernels tuned)", m.name, target, counts[0], counts[1], tuned.Tuned)
			})
		}
	}
}

// vectors reads input_NNN.npy/output_NNN.npy pairs (outputs from TFLite
// Micro's reference kernels).
func vectors(t *testing.T, s *pipeline.State, dir string) ([]map[string]*graph.Data, []*graph.Data) {
	ins, _ := filepath.Glob(filepath.Join(dir, "input_*.npy"))
	sort.Strings(ins)
	if len(ins) == 0 {
		t.Fatalf("%s: no vectors", dir)
	}
	read := func(p string, shape []int) *graph.Data {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := npy.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		d.Shape = shape
		return d
	}
	var vecs []map[string]*graph.Data
	var outs []*graph.Data
	for _, in := range ins {
		x := read(in, s.Graph.Tensors[s.Graph.Inputs[0]].Shape)
		y := read(filepath.Join(dir, "output_"+in[len(in)-7:]), s.Graph.Tensors[s.Graph.Outputs[0]].Shape)
		vecs = append(vecs, map[string]*graph.Data{s.Graph.Inputs[0]: x})
		outs = append(outs, y)
	}
	return vecs, outs
}
