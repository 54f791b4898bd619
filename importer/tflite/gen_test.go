package tflite_test

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

var update = flag.Bool("update", false, "rewrite the generated models under testdata/tflite")

var genDir = filepath.Join("..", "..", "testdata", "tflite")

// layer is one layer of the small test networks.
type layer struct {
	kind    string // conv, dw, add, avgpool, reshape, fc, softmax
	w       []float32
	wShape  []int32
	b       []float32
	opts    *tg.Options
	outDims []int32
	addFrom int // for add: index of the other operand's layer output (-1 = network input)
}

// network is a float network description that can be emitted as a float
// or as an int8 (per-channel) TFLite model.
type network struct {
	in     []int32
	layers []layer
}

func randn(r *tg.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float() * scale
	}
	return v
}

func cnn() network {
	r := tg.NewRand(1)
	return network{in: []int32{1, 8, 8, 3}, layers: []layer{
		{kind: "conv", w: randn(r, 8*3*3*3, 0.5), wShape: []int32{8, 3, 3, 3}, b: randn(r, 8, 0.1), opts: tg.Conv2DOptions(tg.Same, 2, 2, tg.ActRelu, 1, 1), outDims: []int32{1, 4, 4, 8}},
		{kind: "dw", w: randn(r, 3*3*8, 0.5), wShape: []int32{1, 3, 3, 8}, b: randn(r, 8, 0.1), opts: tg.DepthwiseOptions(tg.Same, 1, 1, 1, tg.ActRelu6, 1, 1), outDims: []int32{1, 4, 4, 8}},
		{kind: "conv", w: randn(r, 8*8, 0.5), wShape: []int32{8, 1, 1, 8}, b: randn(r, 8, 0.1), opts: tg.Conv2DOptions(tg.Valid, 1, 1, tg.ActNone, 1, 1), outDims: []int32{1, 4, 4, 8}},
		{kind: "add", addFrom: 1, opts: tg.ActOptions(tg.OptAdd, tg.ActRelu), outDims: []int32{1, 4, 4, 8}},
		{kind: "avgpool", opts: tg.Pool2DOptions(tg.Valid, 4, 4, 4, 4, tg.ActNone), outDims: []int32{1, 1, 1, 8}},
		{kind: "reshape", outDims: []int32{1, 8}},
		{kind: "fc", w: randn(r, 10*8, 0.5), wShape: []int32{10, 8}, b: randn(r, 10, 0.1), opts: tg.FullyConnectedOptions(tg.ActNone, false), outDims: []int32{1, 10}},
		{kind: "softmax", opts: &tg.Options{Type: tg.OptSoftmax, Fields: []tg.Field{tg.F32(0, 1)}}, outDims: []int32{1, 10}},
	}}
}

func mlp() network {
	r := tg.NewRand(2)
	return network{in: []int32{1, 16}, layers: []layer{
		{kind: "fc", w: randn(r, 32*16, 0.4), wShape: []int32{32, 16}, b: randn(r, 32, 0.1), opts: tg.FullyConnectedOptions(tg.ActRelu, false), outDims: []int32{1, 32}},
		{kind: "fc", w: randn(r, 8*32, 0.4), wShape: []int32{8, 32}, b: randn(r, 8, 0.1), opts: tg.FullyConnectedOptions(tg.ActNone, false), outDims: []int32{1, 8}},
	}}
}

var layerCodes = map[string]int32{"conv": tg.OpConv2D, "dw": tg.OpDepthwiseConv2D, "add": tg.OpAdd, "avgpool": tg.OpAveragePool2D, "reshape": tg.OpReshape, "fc": tg.OpFullyConnected, "softmax": tg.OpSoftmax}

// float emits the float32 model.
func (nw network) float() *tg.Model {
	m := &tg.Model{}
	in := m.AddTensor(tg.Tensor{Name: "input", Type: tg.Float32, Shape: nw.in})
	m.Inputs = []int32{in}
	outs := []int32{}
	prev := in
	for i, l := range nw.layers {
		ins := []int32{prev}
		switch l.kind {
		case "conv", "dw", "fc":
			ins = append(ins,
				m.AddTensor(tg.Tensor{Name: fmt.Sprintf("w%d", i), Type: tg.Float32, Shape: l.wShape, Data: tg.F32Bytes(l.w...)}),
				m.AddTensor(tg.Tensor{Name: fmt.Sprintf("b%d", i), Type: tg.Float32, Shape: []int32{int32(len(l.b))}, Data: tg.F32Bytes(l.b...)}))
		case "add":
			ins = append(ins, outs[l.addFrom])
		case "reshape":
			ins = append(ins, m.AddTensor(tg.Tensor{Name: fmt.Sprintf("shape%d", i), Type: tg.Int32, Shape: []int32{int32(len(l.outDims))}, Data: tg.I32Bytes(l.outDims...)}))
		}
		out := m.AddTensor(tg.Tensor{Name: fmt.Sprintf("act%d_%s", i, l.kind), Type: tg.Float32, Shape: l.outDims})
		m.AddOp(layerCodes[l.kind], l.opts, ins, out)
		outs = append(outs, out)
		prev = out
	}
	m.Outputs = []int32{prev}
	return m
}

// calibInput is the deterministic input used to calibrate and to compare.
func calibInput(shape []int32) *graph.Data {
	s := make([]int, len(shape))
	for i, d := range shape {
		s[i] = int(d)
	}
	d := graph.NewData(graph.Float32, s)
	r := tg.NewRand(99)
	for i := range d.F {
		d.F[i] = r.Float()
	}
	return d
}

// pow2Quant returns asymmetric int8 parameters covering [lo, hi] with a
// power-of-two scale (robust to tiny float differences).
func pow2Quant(lo, hi float64) (float32, int64) {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	s := math.Exp2(math.Ceil(math.Log2(math.Max(hi-lo, 1e-6) / 255)))
	zp := math.Round(-128 - lo/s)
	return float32(s), int64(math.Max(-128, math.Min(127, zp)))
}

// int8 emits the int8 model: per-channel symmetric weights, int32 biases,
// activations quantized from the float model's ranges on calibInput.
func (nw network) int8(t *testing.T) *tg.Model {
	fm := nw.float()
	g, err := tflite.Decode("calib", fm.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	vals, err := interp.RunAll(g, map[string]*graph.Data{g.Inputs[0]: calibInput(nw.in)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rangeOf := func(name string) (float64, float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range vals[name].F {
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
		return lo, hi
	}
	m := &tg.Model{}
	is, iz := pow2Quant(-1, 1)
	in := m.AddTensor(tg.Tensor{Name: "input", Type: tg.Int8, Shape: nw.in, Scale: []float32{is}, ZeroPoint: []int64{iz}})
	m.Inputs = []int32{in}
	type q struct {
		s float32
		z int64
	}
	outs := []int32{}
	prev, prevQ := in, q{is, iz}
	for i, l := range nw.layers {
		ins := []int32{prev}
		name := fmt.Sprintf("act%d_%s", i, l.kind)
		var oq q
		switch l.kind {
		case "avgpool", "reshape":
			oq = prevQ
		case "softmax":
			oq = q{1.0 / 256, -128}
		default:
			oq.s, oq.z = pow2Quant(rangeOf(name))
		}
		switch l.kind {
		case "conv", "dw", "fc":
			axis, chans := 0, int(l.wShape[0])
			if l.kind == "dw" {
				axis, chans = 3, int(l.wShape[3])
			}
			per := len(l.w) / chans
			scales := make([]float32, chans)
			wq := make([]int8, len(l.w))
			for c := 0; c < chans; c++ {
				maxAbs := 0.0
				for k := 0; k < per; k++ {
					idx := c*per + k
					if axis == 3 {
						idx = k*chans + c
					}
					maxAbs = math.Max(maxAbs, math.Abs(float64(l.w[idx])))
				}
				scales[c] = float32(math.Max(maxAbs, 1e-6) / 127)
				for k := 0; k < per; k++ {
					idx := c*per + k
					if axis == 3 {
						idx = k*chans + c
					}
					wq[idx] = int8(math.Round(float64(l.w[idx] / scales[c])))
				}
			}
			bq := make([]int32, chans)
			bs := make([]float32, chans)
			zeros := make([]int64, chans)
			for c := range bq {
				bs[c] = prevQ.s * scales[c]
				bq[c] = int32(math.Round(float64(l.b[c]) / float64(bs[c])))
			}
			ins = append(ins,
				m.AddTensor(tg.Tensor{Name: fmt.Sprintf("w%d", i), Type: tg.Int8, Shape: l.wShape, Data: tg.I8Bytes(wq...), Scale: scales, ZeroPoint: zeros, QuantDim: int32(axis)}),
				m.AddTensor(tg.Tensor{Name: fmt.Sprintf("b%d", i), Type: tg.Int32, Shape: []int32{int32(chans)}, Data: tg.I32Bytes(bq...), Scale: bs, ZeroPoint: zeros}))
		case "add":
			ins = append(ins, outs[l.addFrom])
		case "reshape":
			ins = append(ins, m.AddTensor(tg.Tensor{Name: fmt.Sprintf("shape%d", i), Type: tg.Int32, Shape: []int32{int32(len(l.outDims))}, Data: tg.I32Bytes(l.outDims...)}))
		}
		out := m.AddTensor(tg.Tensor{Name: name, Type: tg.Int8, Shape: l.outDims, Scale: []float32{oq.s}, ZeroPoint: []int64{oq.z}})
		m.AddOp(layerCodes[l.kind], l.opts, ins, out)
		outs = append(outs, out)
		prev, prevQ = out, oq
	}
	m.Outputs = []int32{prev}
	return m
}

// generated lists every model written under testdata/tflite.
func generated(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	for _, c := range floatCases {
		files["op_float_"+c.name] = c.model().Bytes()
	}
	for _, c := range intCases {
		files["op_int8_"+c.name] = c.model().Bytes()
	}
	for _, c := range int16Cases {
		files["op_int16_"+c.name] = c.model().Bytes()
	}
	for _, cs := range []struct {
		prefix string
		cases  []opCase
	}{{"op_float_", moveFloatCases}, {"op_int8_", moveIntCases}, {"op_float_", mathFloatCases}, {"op_int8_", mathIntCases}, {"op_", topKCases}} {
		for _, c := range cs.cases {
			if _, dup := files[cs.prefix+c.name]; dup {
				t.Fatalf("two generated models named %s%s", cs.prefix, c.name)
			}
			files[cs.prefix+c.name] = c.model().Bytes()
		}
	}
	for i, c := range seqCases {
		m, _ := c.model(uint64(i + 1))
		files["seq_"+c.name] = m.Bytes()
	}
	files["op_float_svdf"] = svdfModel(tg.ActRelu, nil).Bytes()
	files["op_float_svdf_golden"] = svdfGoldenModel(1).Bytes()
	files["op_int8_svdf"] = svdfIntModel().Bytes()
	files["op_int8_svdf_int8_state"] = svdfInt8StateModel().Bytes()
	files["op_float_var_acc"] = accumulatorModel([]float32{10, 20, 30, 40}).Bytes()
	files["op_int8_var_acc"] = accumulatorInt8Model().Bytes()
	files["op_float_svdf_state"] = svdfModel(tg.ActNone, []float32{5, 7, 0, 0, -1, 0.5, 0, 3}).Bytes()
	files["op_float_detection_postprocess"] = detectionModel(false, 4, 0.3).Bytes()
	files["op_uint8_detection_postprocess"] = detectionModel(true, 4, 0.45).Bytes()
	files["cnn_float"] = cnn().float().Bytes()
	files["cnn_int8"] = cnn().int8(t).Bytes()
	files["mlp_float"] = mlp().float().Bytes()
	files["mlp_int8"] = mlp().int8(t).Bytes()
	ext := mlp().float()
	ext.External = true
	files["mlp_float_external"] = ext.Bytes()
	dyn := mlp().int8(t)
	dyn.Tensors[0].Shape = []int32{1, 16}
	dyn.Tensors[0].Signature = []int32{-1, 16}
	files["mlp_int8_dynamic_batch"] = dyn.Bytes()
	wide := mlp().int8(t)
	wide.Tensors[0].Shape = []int32{1, 16}
	wide.Tensors[0].Signature = []int32{1, -1}
	files["mlp_int8_dynamic_width"] = wide.Bytes()
	return files
}

// TestGeneratedModels keeps testdata/tflite in step with the generator:
// with -update it rewrites the files, otherwise every file must be
// byte-identical to what the generator produces now.
func TestGeneratedModels(t *testing.T) {
	files := generated(t)
	if *update {
		if err := os.MkdirAll(genDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(genDir, name+".tflite"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d models to %s", len(files), genDir)
		return
	}
	for name, b := range files {
		have, err := os.ReadFile(filepath.Join(genDir, name+".tflite"))
		if err != nil || !bytes.Equal(have, b) {
			t.Errorf("%s.tflite is missing or stale: run go test ./importer/tflite -run TestGeneratedModels -update", name)
		}
	}
}

func load(t *testing.T, name string) *graph.Graph {
	t.Helper()
	g, err := tflite.Load(filepath.Join(genDir, name+".tflite"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestInt8AgainstFloatNetworks runs the generated int8 networks and compares
// their dequantized outputs with the float networks' outputs (the int8
// models were quantized from the float ones independently of the kernels).
func TestInt8AgainstFloatNetworks(t *testing.T) {
	for _, tc := range []struct {
		name string
		nw   network
		tol  float64
	}{{"cnn", cnn(), 0.03}, {"mlp", mlp(), 0.1}} {
		gf, gq := load(t, tc.name+"_float"), load(t, tc.name+"_int8")
		x := calibInput(tc.nw.in)
		fo, err := interp.Run(gf, map[string]*graph.Data{gf.Inputs[0]: x})
		if err != nil {
			t.Fatal(err)
		}
		it := gq.Tensors[gq.Inputs[0]]
		xq := graph.NewData(graph.Int8, it.Shape)
		s, z := it.Quant.At(0)
		for i, v := range x.F {
			xq.I[i] = int64(math.Max(-128, math.Min(127, math.Round(float64(v/s))+float64(z))))
		}
		qo, err := interp.Run(gq, map[string]*graph.Data{gq.Inputs[0]: xq})
		if err != nil {
			t.Fatal(err)
		}
		ot := gq.Tensors[gq.Outputs[0]]
		so, oz := ot.Quant.At(0)
		worst := 0.0
		for i, v := range fo[gf.Outputs[0]].F {
			d := math.Abs(float64(so)*float64(qo[gq.Outputs[0]].I[i]-int64(oz)) - float64(v))
			worst = math.Max(worst, d)
		}
		t.Logf("%s: largest |int8 - float| = %.4f", tc.name, worst)
		if worst > tc.tol {
			t.Errorf("%s: int8 output differs from float by %.4f (> %.3f)", tc.name, worst, tc.tol)
		}
	}
}

// TestExternalBuffers: constants stored after the flatbuffer (offset/size
// buffers) decode to the same values as inline ones.
func TestExternalBuffers(t *testing.T) {
	a, b := load(t, "mlp_float"), load(t, "mlp_float_external")
	n := 0
	for name, ta := range a.Tensors {
		tb := b.Tensors[name]
		if ta.IsConst() {
			n++
			if tb == nil || !tb.IsConst() || fmt.Sprint(ta.Data.F) != fmt.Sprint(tb.Data.F) {
				t.Errorf("constant %q differs between inline and external buffers", name)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d constants, want 4", n)
	}
}

// TestDynamicBatch: a batch of -1 in shape_signature binds to 1.
func TestDynamicBatch(t *testing.T) {
	g := load(t, "mlp_int8_dynamic_batch")
	if s := g.Tensors[g.Inputs[0]].Shape; fmt.Sprint(s) != "[1 16]" {
		t.Errorf("input shape %v, want [1 16]", s)
	}
	raw := mlp().float()
	raw.Tensors[0].Shape = []int32{-1, 16}
	g, err := tflite.Decode("dyn", raw.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Tensors[g.Inputs[0]].Shape; fmt.Sprint(s) != "[1 16]" {
		t.Errorf("input shape %v with batch -1, want [1 16]", s)
	}
}
