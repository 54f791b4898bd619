package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
)

func TestChooseParamsHandWorked(t *testing.T) {
	cases := []struct {
		lo, hi float64
		s      float32
		z      int32
	}{
		{-1, 2, 3.0 / 255, -43},   // -128 + 1/(3/255) = -128 + 85
		{0, 6, 6.0 / 255, -128},   // relu6
		{-4, -2, 4.0 / 255, 127},  // range widened to [-4, 0]
		{-0.5, 0.5, 1.0 / 255, 0}, // -128 + 127.5 = -0.5 rounds away to -1? see below
		{0, 0, 1.0 / 255, -128},   // empty range
	}
	// -0.5 rounds half away from zero to -1.
	cases[3].z = -1
	for _, c := range cases {
		s, z := ChooseParams(c.lo, c.hi)
		if math.Abs(float64(s-c.s)) > 1e-9 || z != c.z {
			t.Errorf("ChooseParams(%v, %v) = %v, %d; want %v, %d", c.lo, c.hi, s, z, c.s, c.z)
		}
	}
}

func TestQuantizeValueRoundsAwayAndSaturates(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want int64
	}{{0.25, 1}, {-0.25, -1}, {0.2, 0}, {100, 127}, {-100, -128}} {
		// scale 0.5, zp 0: 0.25/0.5 = 0.5 rounds away from zero.
		if got := QuantizeValue(c.x, 0.5, 0); got != c.want {
			t.Errorf("QuantizeValue(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

// A 2-channel 1x1 conv: weights per channel, bias with scale s_in*s_w[c].
func TestWeightsAndBiasTwoChannels(t *testing.T) {
	w := &graph.Data{DType: graph.Float32, Shape: []int{2, 1, 1, 2}, F: []float32{0.3, -2, 0.5, 0.2}}
	wd, wq := SymmetricWeights(w, false)
	// ch0: s = 2/127, 0.3*127/2 = 19.05 -> 19, -2 -> -127
	// ch1: s = 0.5/127, 0.5 -> 127, 0.2*127/0.5 = 50.8 -> 51
	wantW := []int64{19, -127, 127, 51}
	for i, v := range wantW {
		if wd.I[i] != v {
			t.Fatalf("weights = %v, want %v", wd.I, wantW)
		}
	}
	if !close32(wq.Scale[0], 2.0/127) || !close32(wq.Scale[1], 0.5/127) || wq.Axis != 0 {
		t.Fatalf("weight scales %v axis %d", wq.Scale, wq.Axis)
	}
	b := &graph.Data{DType: graph.Float32, Shape: []int{2}, F: []float32{1, -1}}
	bd, bq := Bias(b, 0.5, wq)
	// ch0: 1/(0.5*2/127) = 127; ch1: -1/(0.5*0.5/127) = -508
	if bd.I[0] != 127 || bd.I[1] != -508 || bd.DType != graph.Int32 {
		t.Fatalf("bias = %v (%s), want [127 -508] int32", bd.I, bd.DType)
	}
	if !close32(bq.Scale[0], 1.0/127) || !close32(bq.Scale[1], 0.25/127) {
		t.Fatalf("bias scales %v", bq.Scale)
	}
	// Per tensor: one scale 2/127; 0.5*127/2 = 31.75 -> 32, 0.2*63.5 = 12.7 -> 13.
	pd, pq := SymmetricWeights(w, true)
	if len(pq.Scale) != 1 || pd.I[2] != 32 || pd.I[3] != 13 {
		t.Fatalf("per-tensor weights %v scales %v", pd.I, pq.Scale)
	}
}

func close32(a float32, b float64) bool { return math.Abs(float64(a)-b) < 1e-7*math.Abs(b)+1e-12 }

// statsOf builds TensorStats directly from values (independent of Calibrate).
func statsOf(xs []float64) *TensorStats {
	t := &TensorStats{Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		t.Min, t.Max = math.Min(t.Min, x), math.Max(t.Max, x)
	}
	t.Lo, t.Hi = math.Min(t.Min, 0), math.Max(t.Max, 0)
	t.Hist = make([]float64, DefaultBins)
	f := make([]float32, len(xs))
	for i, x := range xs {
		f[i] = float32(x)
	}
	t.add(f)
	return t
}

func TestRangeMethodsClipOutlier(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 0, 100001)
	for i := 0; i < 100000; i++ {
		xs = append(xs, r.Float64()) // uniform [0, 1)
	}
	xs = append(xs, 100) // one outlier
	st := statsOf(xs)
	lo, hi, _ := st.Range(MinMax, 0)
	if lo != st.Min || hi != 100 {
		t.Errorf("minmax = [%v, %v], want [0, 100]", lo, hi)
	}
	lo, hi, _ = st.Range(Percentile, 99.99)
	// 10 values (0.01%) may be clipped: the outlier goes, [0,1) stays
	// (within one bin of 100/2048).
	if lo != st.Min || hi < 1 || hi > 1+2*100.0/2048 {
		t.Errorf("percentile = [%v, %v], want [0, ~1]", lo, hi)
	}
	lo, hi, _ = st.Range(Entropy, 0)
	if lo != st.Min || hi > 50 || hi < 0.5 {
		t.Errorf("entropy = [%v, %v], want the outlier clipped and [0, 0.5] kept", lo, hi)
	}
	// MSE: clipping the outlier at 1 costs 99² while a step of 100/255
	// costs only ~1280 over 1e5 uniform values, so the optimum lies in
	// between; check it against the true error of other ranges.
	lo, hi, _ = st.Range(MSE, 0)
	if hi >= 100 || hi < 1 {
		t.Errorf("mse = [%v, %v]", lo, hi)
	}
	best := quantErr(xs, lo, hi)
	for _, h := range []float64{1, 10, 50, 70, 100} {
		if e := quantErr(xs, 0, h); e < best*0.98 {
			t.Errorf("mse range [0, %v] has error %v, range [0, %v] has %v", hi, best, h, e)
		}
	}
	// Without outliers every method keeps (nearly) the whole range.
	st = statsOf(xs[:100000])
	for _, m := range Methods {
		lo, hi, _ = st.Range(m, 99.99)
		if lo != st.Min || hi < 0.9 || hi > 1 {
			t.Errorf("%s on uniform [0,1) = [%v, %v]", m, lo, hi)
		}
	}
}

func quantErr(xs []float64, lo, hi float64) float64 {
	s, z := ChooseParams(lo, hi)
	e := 0.0
	for _, x := range xs {
		d := x - float64(s)*float64(QuantizeValue(x, s, z)-int64(z))
		e += d * d
	}
	return e
}

func TestParseMethod(t *testing.T) {
	if _, err := ParseMethod("kl"); err == nil || !strings.Contains(err.Error(), "minmax") {
		t.Errorf("ParseMethod(kl) error = %v", err)
	}
	if m, err := ParseMethod("entropy"); err != nil || m != Entropy {
		t.Errorf("ParseMethod(entropy) = %v, %v", m, err)
	}
}

func writeNpy(t *testing.T, path string, d *graph.Data) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := npy.Write(f, d); err != nil {
		t.Fatal(err)
	}
}

func oneInputGraph() *graph.Graph {
	g := graph.New("t", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 4}})
	g.AddNode(&graph.Node{Name: "relu", Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	return g
}

func TestLoadCalibLayouts(t *testing.T) {
	g := oneInputGraph()
	dir := t.TempDir()
	// Stacked: [3, 1, 4] (batch kept) and [2, 4] (batch dropped) -> 5 samples.
	st := &graph.Data{DType: graph.Float32, Shape: []int{3, 1, 4}, F: make([]float32, 12)}
	for i := range st.F {
		st.F[i] = float32(i)
	}
	writeNpy(t, filepath.Join(dir, "a.npy"), st)
	writeNpy(t, filepath.Join(dir, "b.npy"), &graph.Data{DType: graph.Float32, Shape: []int{2, 4}, F: []float32{-1, -2, -3, -4, 5, 6, 7, 8}})
	s, err := LoadCalib(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 5 || s[1]["x"].F[0] != 4 || s[3]["x"].F[3] != -4 || s[4]["x"].Shape[1] != 4 {
		t.Fatalf("got %d samples: %v", len(s), s)
	}
	// Per-sample subdirectories.
	dir2 := t.TempDir()
	for _, sub := range []string{"s0", "s1"} {
		os.Mkdir(filepath.Join(dir2, sub), 0o755)
		writeNpy(t, filepath.Join(dir2, sub, "x.npy"), &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, 2, 3, 4}})
	}
	if s, err := LoadCalib(dir2, g); err != nil || len(s) != 2 {
		t.Fatalf("subdirs: %d samples, %v", len(s), err)
	}
	// Hidden files and directories are skipped (macOS's AppleDouble
	// ._x.npy is not a .npy file: a user journey), and .NPY counts.
	dir3 := t.TempDir()
	writeNpy(t, filepath.Join(dir3, "X.NPY"), &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{1, 2, 3, 4}})
	os.WriteFile(filepath.Join(dir3, "._X.NPY"), []byte("\x00\x05\x16\x07Mac OS X"), 0o644)
	os.Mkdir(filepath.Join(dir3, ".git"), 0o755)
	if s, err := LoadCalib(dir3, g); err != nil || len(s) != 1 {
		t.Fatalf("hidden files: %d samples, %v", len(s), err)
	}
}

func TestLoadCalibErrors(t *testing.T) {
	g := oneInputGraph()
	cases := []struct {
		name string
		data *graph.Data
		want string
	}{
		// The input is [1 4]: the message names all three layouts taken.
		{"shape", &graph.Data{DType: graph.Float32, Shape: []int{1, 5}, F: make([]float32, 5)}, `shape [1 5], input "x" wants [1 4], [N 1 4] or [N 4]`},
		{"dtype", &graph.Data{DType: graph.Int8, Shape: []int{1, 4}, I: make([]int64, 4)}, "dtype int8"},
		{"nan", &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{0, float32(math.NaN()), 0, 0}}, "element 1 is NaN"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		file := filepath.Join(dir, c.name+".npy")
		writeNpy(t, file, c.data)
		_, err := LoadCalib(dir, g)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line naming %s and %q", c.name, err, file, c.want)
		}
	}
	dir := t.TempDir()
	if _, err := LoadCalib(dir, g); err == nil || !strings.Contains(err.Error(), "no .npy files") {
		t.Errorf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "junk.npy"), []byte("hello"), 0o644)
	if _, err := LoadCalib(dir, g); err == nil || !strings.Contains(err.Error(), "junk.npy") {
		t.Errorf("junk file: %v", err)
	}
}

func TestRandomCalibInRange(t *testing.T) {
	g := oneInputGraph()
	g.Tensors["x"].Quant = &graph.Quant{Scale: []float32{0.1}, ZeroPoint: []int32{-28}} // [-10, 15.5]
	s := RandomCalib(g, 50, 7)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range s {
		for _, v := range m["x"].F {
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
	}
	if len(s) != 50 || lo < -10 || hi > 15.5 || lo > -9 || hi < 14.5 {
		t.Errorf("%d samples in [%v, %v], want 50 spread over [-10, 15.5]", len(s), lo, hi)
	}
	if RandomCalib(g, 3, 7)[2]["x"].F[1] != RandomCalib(g, 3, 7)[2]["x"].F[1] {
		t.Error("RandomCalib is not deterministic for a seed")
	}
	// Integer inputs (indices) of every width get values in [0, 255] or
	// their type's range: int64's range once made rand panic.
	for _, dt := range []graph.DType{graph.Int64, graph.Int32, graph.Int16, graph.Int8, graph.UInt8} {
		gi := oneInputGraph()
		gi.Tensors["x"].DType = dt
		lo, hi := dt.Range()
		lo, hi = max(lo, 0), min(hi, 255)
		if dt == graph.Int8 || dt == graph.Int16 {
			lo, hi = dt.Range()
		}
		for _, v := range RandomCalib(gi, 4, 7)[3]["x"].I {
			if v < lo || v > hi {
				t.Errorf("%s input: %d outside [%d, %d]", dt, v, lo, hi)
			}
		}
	}
}

// A sample of the input's size in another shape (transposed, flattened)
// was taken as one sample (user-journey finding); shapes that differ only
// in dimensions of 1 still are.
func TestLoadCalibRefusesAnotherShapeOfTheSameSize(t *testing.T) {
	g := graph.New("t", "onnx")
	g.AddTensor(&graph.Tensor{Name: "x", DType: graph.Float32, Shape: []int{1, 2, 3}})
	g.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: []int{1, 2, 3}})
	g.AddNode(&graph.Node{Name: "relu", Op: graph.Relu, Inputs: []string{"x"}, Outputs: []string{"y"}})
	g.Inputs, g.Outputs = []string{"x"}, []string{"y"}
	for _, c := range []struct {
		shape []int
		ok    bool
	}{{[]int{1, 3, 2}, false}, {[]int{6}, false}, {[]int{3, 2}, false}, {[]int{2, 3}, true}, {[]int{1, 2, 3}, true}, {[]int{1, 1, 2, 3}, true}} {
		dir := t.TempDir()
		file := filepath.Join(dir, "x.npy")
		writeNpy(t, file, &graph.Data{DType: graph.Float32, Shape: c.shape, F: []float32{1, 2, 3, 4, 5, 6}})
		s, err := LoadCalib(dir, g)
		if c.ok && (err != nil || len(s) != 1) {
			t.Errorf("%v: %d samples, %v", c.shape, len(s), err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("shape %v, input \"x\" wants [1 2 3]", c.shape))) {
			t.Errorf("%v: error %v, want a shape error", c.shape, err)
		}
	}
}

// An input whose batch is bound above 1 (--shape x=3,4) takes batch-1
// samples, one file each or stacked, grouped into batches in file order;
// the last batch is completed from the first rows (user-journey finding:
// they were refused). Whole batches still load; a mix is refused.
func TestLoadCalibBatchRows(t *testing.T) {
	g := oneInputGraph()
	g.Tensors["x"].Shape = []int{3, 4}
	g.Tensors["y"].Shape = []int{3, 4}
	dir := t.TempDir()
	row := func(v float32) *graph.Data {
		return &graph.Data{DType: graph.Float32, Shape: []int{1, 4}, F: []float32{v, v, v, v}}
	}
	writeNpy(t, filepath.Join(dir, "a.npy"), row(1))
	writeNpy(t, filepath.Join(dir, "b.npy"), &graph.Data{DType: graph.Float32, Shape: []int{2, 1, 4}, F: []float32{2, 2, 2, 2, 3, 3, 3, 3}})
	writeNpy(t, filepath.Join(dir, "c.npy"), row(4))
	s, err := LoadCalib(dir, g)
	if err != nil {
		t.Fatal(err)
	}
	// Rows 1, 2, 3 | 4, then 1 and 2 again.
	if len(s) != 2 || fmt.Sprint(s[0]["x"].Shape) != "[3 4]" ||
		fmt.Sprint(s[0]["x"].F) != "[1 1 1 1 2 2 2 2 3 3 3 3]" || fmt.Sprint(s[1]["x"].F) != "[4 4 4 4 1 1 1 1 2 2 2 2]" {
		t.Fatalf("got %d samples: %v", len(s), s)
	}
	whole := t.TempDir()
	writeNpy(t, filepath.Join(whole, "xw.npy"), &graph.Data{DType: graph.Float32, Shape: []int{3, 4}, F: make([]float32, 12)})
	if s, err := LoadCalib(whole, g); err != nil || len(s) != 1 {
		t.Errorf("a whole batch: %d samples, %v", len(s), err)
	}
	writeNpy(t, filepath.Join(whole, "x.npy"), row(5))
	if _, err := LoadCalib(whole, g); err == nil || !strings.Contains(err.Error(), "mix batch-1 samples and whole batches") {
		t.Errorf("a mix: %v", err)
	}
}
