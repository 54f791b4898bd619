package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// recurrentModels writes three small ONNX recurrent models: a
// bidirectional LSTM with peepholes and sequence lengths, a reverse GRU
// with linear_before_reset in the batch-first layout, and an RNN whose
// initial state is an input.
func recurrentModels(t *testing.T, dir string) []string {
	type spec struct {
		name, op    string
		in, hidden  int
		x           []int
		attrs       []*onnx.Attribute
		bias, lens  bool
		peep, h0    bool
		batch, dirs int
	}
	specs := []spec{
		{name: "lstm_bidi", op: "LSTM", in: 6, hidden: 8, x: []int{5, 2, 6}, batch: 2, dirs: 2, bias: true, lens: true, peep: true,
			attrs: []*onnx.Attribute{onnx.StringAttr("direction", "bidirectional")}},
		{name: "gru_rev", op: "GRU", in: 4, hidden: 6, x: []int{2, 4, 4}, batch: 2, dirs: 1, bias: true,
			attrs: []*onnx.Attribute{onnx.StringAttr("direction", "reverse"), onnx.IntAttr("linear_before_reset", 1), onnx.IntAttr("layout", 1)}},
		{name: "rnn_h0", op: "RNN", in: 3, hidden: 5, x: []int{4, 1, 3}, batch: 1, dirs: 1, h0: true},
	}
	var paths []string
	for i, s := range specs {
		g := map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[s.op]
		b := onnx.NewBuilder(s.name, 14, uint64(i+1))
		in := []string{b.Input("x", graph.Float32, s.x...), b.Rand("w", 0.5, s.dirs, g*s.hidden, s.in), b.Rand("r", 0.4, s.dirs, g*s.hidden, s.hidden), "", "", "", "", ""}
		if s.bias {
			in[3] = b.Rand("b", 0.3, s.dirs, 2*g*s.hidden)
		}
		if s.lens {
			in[4] = b.Ints("lens", 5, 3)
		}
		if s.h0 {
			in[5] = b.Input("h0", graph.Float32, s.dirs, s.batch, s.hidden)
		}
		if s.peep {
			in[7] = b.Rand("p", 0.5, s.dirs, 3*s.hidden)
		}
		for in[len(in)-1] == "" {
			in = in[:len(in)-1]
		}
		attrs := append([]*onnx.Attribute{onnx.IntAttr("hidden_size", int64(s.hidden))}, s.attrs...)
		outs := b.NodeN(s.op, in, 2, attrs...)
		for _, o := range outs {
			b.Output(o, graph.Float32)
		}
		p := filepath.Join(dir, s.name+".onnx")
		if err := os.WriteFile(p, b.Model().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestRecurrentC runs unrolled LSTM, GRU and RNN layers (ONNX, and TFLite's
// sequence LSTM with peepholes, projection and CIFG) as generated C:
// float on the host under ASan and UBSan, and INT8 (random calibration) on
// the host and on the Cortex-M4, every output compared with the reference
// interpreter (bit-exact for int8).
func TestRecurrentC(t *testing.T) {
	t.Parallel()
	needTools(t, "host")
	dir := t.TempDir()
	models := append(recurrentModels(t, dir), "../testdata/tflite/seq_lstm_peep_proj_clips.tflite", "../testdata/tflite/seq_lstm_cifg_time_major.tflite")
	san := []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}
	runs := []struct {
		board string
		quant bool
	}{{"host", false}, {"host", true}, {"mps2-an386", true}}
	for _, r := range runs {
		if r.board != "host" {
			if testing.Short() {
				continue
			}
			needTools(t, r.board)
		}
		b, err := LoadBoard(r.board, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range models {
			t.Run(fmt.Sprintf("%s_%s_int8=%v", filepath.Base(m), r.board, r.quant), func(t *testing.T) {
				opt := Options{Board: b, Version: "test"}
				if r.board == "host" {
					opt.CFlags = san
				}
				if r.quant {
					opt.Quantize, opt.CalibRandom = "int8", 8
				}
				s, err := Compile(m, opt)
				if err != nil {
					t.Fatal(err)
				}
				if r.quant {
					if !hasInt8(s.Graph) {
						t.Fatal("the quantized build has no int8 tensor")
					}
					// Every step shares its parameters with the others, yet
					// the int8 layer must stay close to the float one.
					t.Logf("output SQNR %.1f dB", s.QuantReport.OutputSQNRdB)
					if s.QuantReport.OutputSQNRdB < 25 {
						t.Errorf("int8 output SQNR %.1f dB against float, want at least 25", s.QuantReport.OutputSQNRdB)
					}
				}
				x, err := s.Execute(RandomInputs(s.Graph, 3, 5), t.TempDir(), 2*time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !x.AllMatch() {
					t.Fatalf("outputs differ from the reference interpreter (max |diff| %g)", x.MaxAbsDiff)
				}
			})
		}
	}
}

func hasInt8(g *graph.Graph) bool {
	for _, t := range g.Tensors {
		if t.DType == graph.Int8 && !t.IsConst() {
			return true
		}
	}
	return false
}

// TestRecurrentKWSScale compiles a keyword-spotting-sized int8 LSTM (49
// steps of 10 features, 64 cells, over a thousand unrolled layers) for the
// Cortex-M4: the steps share their kernels and one copy of the weights
// (so the weights keep their int16 layout), and the firmware is bit-exact.
func TestRecurrentKWSScale(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1,000-layer firmware build")
	}
	needTools(t, "mps2-an386")
	b := onnx.NewBuilder("lstm_kws", 14, 3)
	const steps, in, hidden = 49, 10, 64
	x := b.Input("x", graph.Float32, steps, 1, in)
	outs := b.NodeN("LSTM", []string{x, b.Rand("w", 0.3, 1, 4*hidden, in), b.Rand("r", 0.2, 1, 4*hidden, hidden), b.Rand("b", 0.2, 1, 8*hidden)}, 2, onnx.IntAttr("hidden_size", hidden))
	h := b.Node("Reshape", []string{outs[1], b.Ints("s", 1, hidden)})
	b.Output(b.Node("Gemm", []string{h, b.Rand("fw", 0.3, 12, hidden)}, onnx.IntAttr("transB", 1)), graph.Float32)
	path := writeONNX(t, b, "lstm_kws")
	board, err := LoadBoard("mps2-an386", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(path, Options{Board: board, Version: "test", Quantize: "int8", CalibRandom: 8})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lean != nil {
		t.Errorf("weights kept int8 to fit flash: %s", s.Lean.Summary())
	}
	if n, d := len(s.Module.Funcs), s.Module.DistinctFuncs(); n < 1000 || d > 100 {
		t.Errorf("%d kernels, %d distinct: want over 1,000 layers and at most 100 distinct kernels", n, d)
	}
	x2, err := s.Execute(RandomInputs(s.Graph, 2, 1), t.TempDir(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x2.AllMatch() {
		t.Fatalf("outputs differ from the reference interpreter")
	}
	t.Logf("%d layers, %d distinct kernels; %d instructions per inference, arena %d B, flash %d B (text+data), output SQNR %.1f dB",
		len(s.Module.Funcs), s.Module.DistinctFuncs(), x2.Instructions(), s.Module.ArenaBytes, x2.Firmware.Text+x2.Firmware.Data, s.QuantReport.OutputSQNRdB)
}
