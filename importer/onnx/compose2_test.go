package onnx_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// runOne imports the model built by bl and runs it in the interpreter on
// inputs; it returns the graph outputs in order.
func runOne(t *testing.T, bl *onnx.Builder, inputs map[string]*graph.Data) []*graph.Data {
	t.Helper()
	g, err := onnx.Import("m", bl.Model(), onnx.Options{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if err := graph.Validate(g); err != nil {
		t.Fatalf("validate: %v", err)
	}
	out, err := interp.Run(g, inputs)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	res := make([]*graph.Data, len(g.Outputs))
	for i, nm := range g.Outputs {
		res[i] = out[nm]
	}
	return res
}

func i64(shape []int, v ...int64) *graph.Data {
	return &graph.Data{DType: graph.Int64, Shape: shape, I: v}
}

func f32(shape []int, v ...float32) *graph.Data {
	return &graph.Data{DType: graph.Float32, Shape: shape, F: v}
}

func seqF(shape ...int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32(i)
	}
	return d
}

func checkData(t *testing.T, what string, got *graph.Data, dt graph.DType, shape []int, want []float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no output", what)
	}
	if got.DType != dt || !slices.Equal(got.Shape, shape) {
		t.Fatalf("%s: %s %v, want %s %v", what, got.DType, got.Shape, dt, shape)
	}
	for i, w := range want {
		if math.Abs(got.Float(i)-w) > 1e-6*max(1, math.Abs(w)) {
			vals := make([]float64, got.Len())
			for j := range vals {
				vals[j] = got.Float(j)
			}
			t.Fatalf("%s = %v, want %v", what, vals, want)
		}
	}
}

// TestGatherND: batch_dims 1 with negative indices, with the indices given
// at run time (Mod, Mul, Slice, Add) and as a constant (folded flat
// indices); batch_dims 0 picking rows.
func TestGatherND(t *testing.T) {
	// data[b][i][j] = 6b + 2i + j; per batch, rows of (i, j).
	// b0: (-1, 0) -> (2, 0) = 4; (1, -1) -> (1, 1) = 3.
	// b1: (0, 1) = 7; (-3, -2) -> (0, 0) = 6.
	idx := i64([]int{2, 2, 2}, -1, 0, 1, -1, 0, 1, -3, -2)
	want := []float64{4, 3, 7, 6}
	for _, constIdx := range []bool{false, true} {
		bl := onnx.NewBuilder("gnd", 13, 1)
		x := bl.Input("x", graph.Float32, 2, 3, 2)
		in := map[string]*graph.Data{"x": seqF(2, 3, 2)}
		var ix string
		if constIdx {
			ix = bl.Init("idx", idx)
		} else {
			ix = bl.Input("idx", graph.Int64, 2, 2, 2)
			in["idx"] = idx
		}
		y := bl.Node("GatherND", []string{x, ix}, onnx.IntAttr("batch_dims", 1))
		bl.Output(y, graph.Float32)
		got := runOne(t, bl, in)
		checkData(t, fmt.Sprintf("GatherND batch_dims=1 (constant indices %v)", constIdx), got[0], graph.Float32, []int{2, 2}, want)
	}
	// batch_dims 0, k = 1 of data [3, 2] int32: rows -1 and 0.
	bl := onnx.NewBuilder("gnd", 13, 1)
	x := bl.Input("x", graph.Int32, 3, 2)
	ix := bl.Input("idx", graph.Int64, 2, 1)
	bl.Output(bl.Node("GatherND", []string{x, ix}), graph.Int32)
	xd := &graph.Data{DType: graph.Int32, Shape: []int{3, 2}, I: []int64{0, 1, 2, 3, 4, 5}}
	got := runOne(t, bl, map[string]*graph.Data{"x": xd, "idx": i64([]int{2, 1}, -1, 0)})
	checkData(t, "GatherND rows", got[0], graph.Int32, []int{2, 2}, []float64{4, 5, 0, 1})
	// A single index row gives a slice of the data: data[1] of [2, 2, 2].
	bl = onnx.NewBuilder("gnd", 13, 1)
	x = bl.Input("x", graph.Float32, 2, 2, 2)
	bl.Output(bl.Node("GatherND", []string{x, bl.Ints("idx", -1, 0)}), graph.Float32)
	got = runOne(t, bl, map[string]*graph.Data{"x": seqF(2, 2, 2)})
	checkData(t, "GatherND one row", got[0], graph.Float32, []int{2}, []float64{4, 5})
}

// TestOneHot: negative indices count from the end, indices outside
// [-depth, depth) give all off, on the first and on the last axis, with
// run-time and constant indices and values.
func TestOneHot(t *testing.T) {
	// Indices -1, 1, 3, -4 with depth 3 on axis 0: columns hit rows 2, 1,
	// none and none.
	want := []float64{
		0, 0, 0, 0,
		0, 5, 0, 0,
		5, 0, 0, 0,
	}
	for _, constIdx := range []bool{false, true} {
		bl := onnx.NewBuilder("oh", 11, 1)
		in := map[string]*graph.Data{}
		idx := i64([]int{4}, -1, 1, 3, -4)
		var ix, vals string
		if constIdx {
			// Constant indices fold; the values come at run time.
			ix = bl.Init("idx", idx)
			vals = bl.Input("vals", graph.Float32, 2)
			in["vals"] = f32([]int{2}, 0, 5)
		} else {
			ix = bl.Input("idx", graph.Int64, 4)
			in["idx"] = idx
			vals = bl.Floats("vals", 0, 5)
		}
		y := bl.Node("OneHot", []string{ix, bl.Scalar("depth", graph.Float32, 3), vals}, onnx.IntAttr("axis", 0))
		bl.Output(y, graph.Float32)
		got := runOne(t, bl, in)
		checkData(t, fmt.Sprintf("OneHot axis 0 (constant indices %v)", constIdx), got[0], graph.Float32, []int{3, 4}, want)
	}
	// int32 indices [[0, -3], [2, -2]], depth 3, int32 values off -1, on 7,
	// default axis -1.
	bl := onnx.NewBuilder("oh", 11, 1)
	ix := bl.Input("idx", graph.Int32, 2, 2)
	vals := bl.Init("vals", &graph.Data{DType: graph.Int32, Shape: []int{2}, I: []int64{-1, 7}})
	bl.Output(bl.Node("OneHot", []string{ix, bl.Scalar("depth", graph.Int64, 3), vals}), graph.Int32)
	got := runOne(t, bl, map[string]*graph.Data{"idx": {DType: graph.Int32, Shape: []int{2, 2}, I: []int64{0, -3, 2, -2}}})
	checkData(t, "OneHot int32", got[0], graph.Int32, []int{2, 2, 3}, []float64{
		7, -1, -1, 7, -1, -1,
		-1, -1, 7, -1, 7, -1,
	})
	// Float indices are cast to int64 first (truncating): 1.7 is class 1,
	// -0.5 is class 0, -1.2 is -1, so class 2 of depth 3.
	bl = onnx.NewBuilder("oh", 11, 1)
	fx := bl.Input("idx", graph.Float32, 3)
	bl.Output(bl.Node("OneHot", []string{fx, bl.Scalar("depth", graph.Int64, 3), bl.Floats("vals", 0, 1)}), graph.Float32)
	got = runOne(t, bl, map[string]*graph.Data{"idx": f32([]int{3}, 1.7, -0.5, -1.2)})
	checkData(t, "OneHot float indices", got[0], graph.Float32, []int{3, 3}, []float64{
		0, 1, 0,
		1, 0, 0,
		0, 0, 1,
	})
}

// TestEinsum: equations the backend tests do not cover (a product with a
// transposed output, an implicit output, an outer product, a broadcast
// batch, a full contraction), and the refusals.
func TestEinsum(t *testing.T) {
	a := f32([]int{2, 2}, 1, 2, 3, 4)
	b := f32([]int{2, 2}, 5, 6, 7, 8)
	cases := []struct {
		eq    string
		x, y  *graph.Data
		shape []int
		want  []float64
	}{
		// A·B = [[19, 22], [43, 50]].
		{"ij,jk->ki", a, b, []int{2, 2}, []float64{19, 43, 22, 50}},
		{"ij,jk", a, b, []int{2, 2}, []float64{19, 22, 43, 50}},
		// A·Bᵀ = [[17, 23], [39, 53]].
		{"ik, jk -> ij", a, b, []int{2, 2}, []float64{17, 23, 39, 53}},
		{"i,j->ij", f32([]int{2}, 1, 2), f32([]int{3}, 3, 4, 5), []int{2, 3}, []float64{3, 4, 5, 6, 8, 10}},
		// A [1, 2, 2] against B [2, 2, 1]: batch 0 picks column 0, batch 1 column 1.
		{"bij,bjk->bik", f32([]int{1, 2, 2}, 1, 2, 3, 4), f32([]int{2, 2, 1}, 1, 0, 0, 1), []int{2, 2, 1}, []float64{1, 3, 2, 4}},
		// Σ A∘B = 5 + 12 + 21 + 32.
		{"ij,ij->", a, b, []int{}, []float64{70}},
		// Row sums of A (3, 7) times row sums of B (11, 15).
		{"ij,kl->ik", a, b, []int{2, 2}, []float64{33, 45, 77, 105}},
		{"...ij->...ji", f32([]int{1, 2, 2}, 1, 2, 3, 4), nil, []int{1, 2, 2}, []float64{1, 3, 2, 4}},
		{"ij->", a, nil, []int{}, []float64{10}},
	}
	for _, c := range cases {
		bl := onnx.NewBuilder("es", 12, 1)
		ins := []string{bl.Input("x", graph.Float32, c.x.Shape...)}
		in := map[string]*graph.Data{"x": c.x}
		if c.y != nil {
			ins = append(ins, bl.Input("y", graph.Float32, c.y.Shape...))
			in["y"] = c.y
		}
		bl.Output(bl.Node("Einsum", ins, onnx.StringAttr("equation", c.eq)), graph.Float32)
		got := runOne(t, bl, in)
		checkData(t, "Einsum "+c.eq, got[0], graph.Float32, c.shape, c.want)
	}
	for _, c := range []struct {
		eq     string
		shapes [][]int
		msg    string
	}{
		{"ii->i", [][]int{{2, 2}}, "a diagonal"},
		{"ij,jk,kl->il", [][]int{{2, 2}, {2, 2}, {2, 2}}, "3 operands"},
	} {
		bl := onnx.NewBuilder("es", 12, 1)
		var ins []string
		for i, s := range c.shapes {
			ins = append(ins, bl.Input(fmt.Sprintf("x%d", i), graph.Float32, s...))
		}
		bl.Output(bl.Node("Einsum", ins, onnx.StringAttr("equation", c.eq)), graph.Float32)
		_, err := onnx.Import("es", bl.Model(), onnx.Options{})
		var ue *onnx.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Einsum %q: error %v, want unsupported (%s)", c.eq, err, c.msg)
		}
	}
}

// TestEinsumBackendAsFloat runs the ONNX backend's Einsum tests (whose
// inputs are DOUBLE, which mcugen does not import) with their types
// declared FLOAT, against the expected outputs.
func TestEinsumBackendAsFloat(t *testing.T) {
	root := "/usr/share/libonnx-testdata/data/node"
	dirs, _ := filepath.Glob(filepath.Join(root, "test_einsum_*"))
	if len(dirs) == 0 {
		t.Skipf("ONNX backend tests not installed (Debian package libonnx-testdata, %s)", root)
	}
	pb := func(p string) *graph.Data {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, d, err := onnx.ReadTensorProto(raw)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, dir := range dirs {
		raw, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := onnx.Unmarshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]*graph.Data{}
		for i, vi := range slices.Concat(m.Graph.Input, m.Graph.Output) {
			if vi.Type.ElemType == onnx.TDouble {
				vi.Type.ElemType = onnx.TFloat
			}
			if i < len(m.Graph.Input) {
				in[vi.Name] = pb(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
			}
		}
		g, err := onnx.Import(filepath.Base(dir), m, onnx.Options{})
		if strings.HasSuffix(dir, "batch_diagonal") {
			var ue *onnx.UnsupportedError
			if !errors.As(err, &ue) {
				t.Errorf("%s: error %v, want unsupported (a diagonal)", filepath.Base(dir), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		out, err := interp.Run(g, in)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		want := pb(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
		got := out[g.Outputs[0]]
		if got.Len() != want.Len() {
			t.Fatalf("%s: %d values, want %d", filepath.Base(dir), got.Len(), want.Len())
		}
		for i := range want.F {
			if d := math.Abs(float64(got.F[i] - want.F[i])); d > 1e-5+1e-5*math.Abs(float64(want.F[i])) {
				t.Errorf("%s: element %d is %v, want %v", filepath.Base(dir), i, got.F[i], want.F[i])
				break
			}
		}
	}
}

// TestDynamicQuantizeLinear: x = [-1, 0, 1, 4] has range 5, so the scale
// is 5/255, the zero point 1/scale = 51 and y = x/scale + 51 saturated.
func TestDynamicQuantizeLinear(t *testing.T) {
	for _, constX := range []bool{false, true} {
		bl := onnx.NewBuilder("dql", 11, 1)
		xd := f32([]int{4}, -1, 0, 1, 4)
		in := map[string]*graph.Data{}
		var x string
		if constX {
			x = bl.Init("x", xd)
			// A run-time input so that the graph has one.
			bl.Input("unused", graph.Float32, 1)
			in["unused"] = f32([]int{1}, 0)
		} else {
			x = bl.Input("x", graph.Float32, 4)
			in["x"] = xd
		}
		outs := bl.NodeN("DynamicQuantizeLinear", []string{x}, 3)
		bl.Output(outs[0], graph.UInt8)
		bl.Output(outs[1], graph.Float32)
		bl.Output(outs[2], graph.UInt8)
		got := runOne(t, bl, in)
		what := fmt.Sprintf("DynamicQuantizeLinear (constant x %v)", constX)
		checkData(t, what+" y", got[0], graph.UInt8, []int{4}, []float64{0, 51, 102, 255})
		checkData(t, what+" y_scale", got[1], graph.Float32, []int{}, []float64{float64(float32(5) / 255)})
		checkData(t, what+" y_zero_point", got[2], graph.UInt8, []int{}, []float64{51})
	}
}

// TestCastLike: float to the type of an int32 (truncating) and of a uint8
// value; a float like a float is the input itself.
func TestCastLike(t *testing.T) {
	for _, c := range []struct {
		to   graph.DType
		want []float64
	}{
		{graph.Int32, []float64{1, -2, 3}},
		{graph.UInt8, []float64{1, 0, 3}},
		{graph.Float32, []float64{1.75, -2.5, 3}},
	} {
		bl := onnx.NewBuilder("cl", 15, 1)
		x := bl.Input("x", graph.Float32, 3)
		like := bl.Init("like", graph.NewData(c.to, []int{1}))
		bl.Output(bl.Node("CastLike", []string{x, like}), c.to)
		got := runOne(t, bl, map[string]*graph.Data{"x": f32([]int{3}, 1.75, -2.5, 3)})
		checkData(t, "CastLike to "+c.to.String(), got[0], c.to, []int{3}, c.want)
	}
}

// Expand of a run-time bool (an attention mask) or integer value: x OR
// false and x + 0 broadcast like Expand (only float imported before).
// Worked by hand: [[1] [0]] to [2, 3], and [5 -7] to [2, 2].
func TestExpandRuntimeBoolAndInt(t *testing.T) {
	b := onnx.NewBuilder("expand", 13, 1)
	m := b.Input("mask", graph.Bool, 2, 1)
	v := b.Input("v", graph.Int32, 2)
	b.Output(b.Node("Expand", []string{m, b.Ints("s1", 2, 3)}), graph.Bool)
	b.Output(b.Node("Expand", []string{v, b.Ints("s2", 2, 2)}), graph.Int32)
	out := runOne(t, b, map[string]*graph.Data{
		"mask": {DType: graph.Bool, Shape: []int{2, 1}, I: []int64{1, 0}},
		"v":    {DType: graph.Int32, Shape: []int{2}, I: []int64{5, -7}},
	})
	if fmt.Sprint(out[0].Shape, out[0].I) != "[2 3] [1 1 1 0 0 0]" || fmt.Sprint(out[1].Shape, out[1].I) != "[2 2] [5 -7 5 -7]" {
		t.Errorf("got %v %v and %v %v", out[0].Shape, out[0].I, out[1].Shape, out[1].I)
	}
}

// Expand's zeros are only as large as the broadcast needs (a mask
// [1,1,1,4] to [1,2,4,4]: zeros [1,2,4,1], 8 of them, not 32), and a
// quantized run-time value is refused: x + 0 would requantize, where
// Expand copies the stored codes (a review found [5 5 5 -1 -1 -1] read as
// [1 1 1 -2 -2 -2]).
func TestExpandZerosAndQuantized(t *testing.T) {
	b := onnx.NewBuilder("mask", 13, 1)
	m := b.Input("mask", graph.Bool, 1, 1, 1, 4)
	b.Output(b.Node("Expand", []string{m, b.Ints("s", 1, 2, 4, 4)}), graph.Bool)
	g, err := onnx.Import("m", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tn := range g.Tensors {
		if tn.IsConst() && strings.Contains(tn.Name, "zeros") {
			found++
			if tn.NumElements() != 8 {
				t.Errorf("zeros %s of %v (%d elements), want 8", tn.Name, tn.Shape, tn.NumElements())
			}
		}
	}
	if found != 1 {
		t.Errorf("%d zeros constants in the graph, want 1", found)
	}
	q := onnx.NewBuilder("q", 13, 1)
	x := q.Input("x", graph.Float32, 2, 1)
	xq := q.Node("QuantizeLinear", []string{x, q.Scalar("sc", graph.Float32, 0.5), q.Scalar("zp", graph.Int8, 3)})
	q.Output(q.Node("Expand", []string{xq, q.Ints("s2", 2, 3)}), graph.Int8)
	if _, err := onnx.Import("q", q.Model(), onnx.Options{}); err == nil || !strings.Contains(err.Error(), "Expand of a quantized run-time int8 value") {
		t.Errorf("a quantized Expand: %v", err)
	}
}
