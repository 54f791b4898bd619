package interp

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// qtensor is an input of a quantized test node.
type qtensor struct {
	dt    graph.DType
	shape []int
	q     *graph.Quant
	konst bool
}

// qcase is a node whose integer kernel is checked against the float kernel
// run on the dequantized inputs (an independent implementation), with the
// float result quantized by plain rounding: the two may differ by tol steps
// (TFLite's fixed-point rounding), never more.
type qcase struct {
	name     string
	op       graph.Op
	attrs    any
	ins      []qtensor
	outShape []int
	outQ     *graph.Quant
	tol      int64
}

func perChannel(n int, base float32) *graph.Quant {
	q := &graph.Quant{}
	for i := 0; i < n; i++ {
		q.Scale = append(q.Scale, base*float32(1+i%3))
		q.ZeroPoint = append(q.ZeroPoint, 0)
	}
	return q
}

func (c qcase) run(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	gi, gf := graph.New("int", "test"), graph.New("float", "test")
	ni := &graph.Node{Name: "n", Op: c.op, Attrs: c.attrs, Outputs: []string{"y"}}
	nf := &graph.Node{Name: "n", Op: c.op, Attrs: c.attrs, Outputs: []string{"y"}}
	feedI, feedF := map[string]*graph.Data{}, map[string]*graph.Data{}
	for i, in := range c.ins {
		name := fmt.Sprintf("x%d", i)
		di := graph.NewData(in.dt, in.shape)
		df := graph.NewData(graph.Float32, in.shape)
		lo, hi := int64(-128), int64(127)
		if in.dt == graph.Int32 {
			lo, hi = -2000, 2000
		}
		ax := -1
		if in.q.PerAxis() {
			ax = in.q.Axis
		}
		for k := range di.I {
			di.I[k] = lo + r.Int63n(hi-lo+1)
			ch := 0
			if ax >= 0 {
				ch = (k / graph.NumElements(in.shape[ax+1:])) % in.shape[ax]
			}
			s, z := in.q.At(ch)
			df.F[k] = s * float32(di.I[k]-int64(z))
		}
		ti := &graph.Tensor{Name: name, DType: in.dt, Shape: in.shape, Quant: in.q}
		tf := &graph.Tensor{Name: name, DType: graph.Float32, Shape: in.shape}
		if in.konst {
			ti.Data, tf.Data = di, df
		} else {
			gi.Inputs, gf.Inputs = append(gi.Inputs, name), append(gf.Inputs, name)
			feedI[name], feedF[name] = di, df
		}
		gi.AddTensor(ti)
		gf.AddTensor(tf)
		ni.Inputs, nf.Inputs = append(ni.Inputs, name), append(nf.Inputs, name)
	}
	gi.AddTensor(&graph.Tensor{Name: "y", DType: graph.Int8, Shape: c.outShape, Quant: c.outQ})
	gf.AddTensor(&graph.Tensor{Name: "y", DType: graph.Float32, Shape: c.outShape})
	gi.Outputs, gf.Outputs = []string{"y"}, []string{"y"}
	gi.AddNode(ni)
	gf.AddNode(nf)
	if !Supported(gf, nf) {
		t.Skipf("no float kernel for %s yet", c.op)
	}
	yi, err := Run(gi, feedI)
	if err != nil {
		t.Fatal(err)
	}
	yf, err := Run(gf, feedF)
	if err != nil {
		t.Fatal(err)
	}
	s, z := c.outQ.At(0)
	worst := int64(0)
	for k, v := range yf["y"].F {
		want := int64(math.Max(-128, math.Min(127, math.Round(float64(v/s))+float64(z))))
		d := yi["y"].I[k] - want
		if d < 0 {
			d = -d
		}
		worst = max(worst, d)
		if d > c.tol {
			t.Fatalf("element %d: int kernel %d, float kernel quantized %d (float %g)", k, yi["y"].I[k], want, v)
		}
	}
	t.Logf("%s: worst difference %d step(s) over %d outputs", c.name, worst, len(yf["y"].F))
}

func TestIntKernelsAgainstFloatKernels(t *testing.T) {
	conv := func(stride, dil [2]int, pad graph.Padding, group int, act graph.Activation) *graph.Conv2DAttrs {
		return &graph.Conv2DAttrs{Stride: stride, Dilation: dil, Pad: pad, Group: group, Act: act}
	}
	in := func(scale float32, zp int32, shape ...int) qtensor {
		return qtensor{dt: graph.Int8, shape: shape, q: pq(scale, zp)}
	}
	w := func(q *graph.Quant, shape ...int) qtensor {
		return qtensor{dt: graph.Int8, shape: shape, q: q, konst: true}
	}
	bias := func(q *graph.Quant, n int) qtensor {
		return qtensor{dt: graph.Int32, shape: []int{n}, q: q, konst: true}
	}
	biasQ := func(sx float32, wq *graph.Quant) *graph.Quant {
		q := &graph.Quant{}
		for _, s := range wq.Scale {
			q.Scale = append(q.Scale, sx*s)
			q.ZeroPoint = append(q.ZeroPoint, 0)
		}
		return q
	}
	w4, w6, w7 := perChannel(4, 0.01), perChannel(6, 0.02), perChannel(7, 0.005)
	cases := []qcase{
		{name: "conv_stride2_pad1", op: graph.Conv2D, attrs: conv([2]int{2, 2}, [2]int{1, 1}, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, 1, graph.ActNone),
			ins: []qtensor{in(0.05, 3, 1, 7, 7, 3), w(w4, 4, 3, 3, 3), bias(biasQ(0.05, w4), 4)}, outShape: []int{1, 4, 4, 4}, outQ: pq(0.2, -5), tol: 1},
		{name: "conv_dilated_asymmetric_relu", op: graph.Conv2D, attrs: conv([2]int{1, 2}, [2]int{2, 2}, graph.Padding{Top: 0, Left: 1, Bottom: 2, Right: 0}, 1, graph.ActRelu),
			ins: []qtensor{in(0.05, -2, 1, 7, 6, 3), w(w4, 4, 3, 3, 3), bias(biasQ(0.05, w4), 4)}, outShape: []int{1, 5, 2, 4}, outQ: pq(0.1, -128), tol: 1},
		{name: "conv_grouped", op: graph.Conv2D, attrs: conv([2]int{1, 1}, [2]int{1, 1}, graph.Padding{}, 2, graph.ActRelu6),
			ins: []qtensor{in(0.05, 0, 1, 5, 5, 4), w(w6, 6, 3, 3, 2)}, outShape: []int{1, 3, 3, 6}, outQ: pq(0.05, -100), tol: 1},
		{name: "depthwise_mult2", op: graph.Conv2D, attrs: conv([2]int{2, 2}, [2]int{1, 1}, graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}, 3, graph.ActNone),
			ins: []qtensor{in(0.05, 5, 1, 6, 6, 3), w(w6, 6, 3, 3, 1), bias(biasQ(0.05, w6), 6)}, outShape: []int{1, 3, 3, 6}, outQ: pq(0.05, 0), tol: 1},
		{name: "fully_connected", op: graph.FullyConnected, attrs: &graph.FullyConnectedAttrs{},
			ins: []qtensor{in(0.05, -7, 2, 20), w(w7, 7, 20), bias(biasQ(0.05, w7), 7)}, outShape: []int{2, 7}, outQ: pq(0.1, 2), tol: 1},
		{name: "avg_pool_pad", op: graph.AvgPool2D, attrs: &graph.PoolAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}, Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}},
			ins: []qtensor{in(0.1, 0, 1, 7, 7, 3)}, outShape: []int{1, 4, 4, 3}, outQ: pq(0.1, 0), tol: 1},
		{name: "max_pool", op: graph.MaxPool2D, attrs: &graph.PoolAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Dilation: [2]int{1, 1}},
			ins: []qtensor{in(0.1, 4, 1, 6, 6, 3)}, outShape: []int{1, 3, 3, 3}, outQ: pq(0.1, 4), tol: 0},
		{name: "add_broadcast", op: graph.Add, attrs: &graph.BinaryAttrs{},
			ins: []qtensor{in(0.05, 3, 1, 4, 4, 3), in(0.02, -9, 3)}, outShape: []int{1, 4, 4, 3}, outQ: pq(0.07, 1), tol: 1},
		{name: "sub_broadcast_relu", op: graph.Sub, attrs: &graph.BinaryAttrs{Act: graph.ActRelu},
			ins: []qtensor{in(0.05, 3, 1, 4, 4, 3), in(0.02, -9, 1, 4, 1, 1)}, outShape: []int{1, 4, 4, 3}, outQ: pq(0.04, -128), tol: 1},
		{name: "mul_broadcast", op: graph.Mul, attrs: &graph.BinaryAttrs{},
			ins: []qtensor{in(0.05, 3, 2, 3, 4), in(0.03, 1, 3, 1)}, outShape: []int{2, 3, 4}, outQ: pq(0.1, 0), tol: 1},
		{name: "mean_hw_keepdims", op: graph.Mean, attrs: &graph.MeanAttrs{Axes: []int{1, 2}, KeepDims: true},
			ins: []qtensor{in(0.05, 3, 1, 5, 3, 4)}, outShape: []int{1, 1, 1, 4}, outQ: pq(0.02, -3), tol: 1},
		{name: "mean_last_axis", op: graph.Mean, attrs: &graph.MeanAttrs{Axes: []int{-1}},
			ins: []qtensor{in(0.05, 3, 2, 3, 7)}, outShape: []int{2, 3}, outQ: pq(0.05, 3), tol: 1},
		{name: "concat_mixed_scales", op: graph.Concat, attrs: &graph.ConcatAttrs{Axis: 3},
			ins: []qtensor{in(0.05, 3, 1, 2, 2, 3), in(0.1, -4, 1, 2, 2, 2), in(0.08, 0, 1, 2, 2, 1)}, outShape: []int{1, 2, 2, 6}, outQ: pq(0.08, 0), tol: 1},
		{name: "batch_matmul_broadcast", op: graph.BatchMatMul, attrs: &graph.BatchMatMulAttrs{},
			ins: []qtensor{in(0.05, 3, 2, 3, 4), in(0.04, -2, 4, 5)}, outShape: []int{2, 3, 5}, outQ: pq(0.2, 0), tol: 1},
		{name: "batch_matmul_adj", op: graph.BatchMatMul, attrs: &graph.BatchMatMulAttrs{AdjX: true, AdjY: true},
			ins: []qtensor{in(0.05, 3, 2, 4, 3), in(0.04, -2, 2, 5, 4)}, outShape: []int{2, 3, 5}, outQ: pq(0.2, 0), tol: 1},
		{name: "softmax", op: graph.Softmax, attrs: &graph.SoftmaxAttrs{Axis: 1, Beta: 1},
			ins: []qtensor{in(0.1, 0, 3, 10)}, outShape: []int{3, 10}, outQ: pq(1.0/256, -128), tol: 1},
		{name: "resize_nearest", op: graph.Resize, attrs: &graph.ResizeAttrs{Mode: "nearest", Coord: "asymmetric", Nearest: "floor"},
			ins: []qtensor{in(0.1, 0, 1, 3, 2, 2)}, outShape: []int{1, 7, 5, 2}, outQ: pq(0.1, 0), tol: 0},
		// TFLite's 10-bit integer bilinear against the float kernel: within a
		// step (the weights are rounded to 1/1024).
		{name: "resize_bilinear_half_pixel", op: graph.Resize, attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "half_pixel"},
			ins: []qtensor{in(0.1, 3, 1, 3, 4, 2)}, outShape: []int{1, 7, 9, 2}, outQ: pq(0.1, 3), tol: 1},
		{name: "resize_bilinear_asymmetric", op: graph.Resize, attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "asymmetric"},
			ins: []qtensor{in(0.1, -5, 1, 4, 3, 3)}, outShape: []int{1, 8, 5, 3}, outQ: pq(0.1, -5), tol: 1},
		{name: "resize_bilinear_align_corners", op: graph.Resize, attrs: &graph.ResizeAttrs{Mode: "bilinear", Coord: "align_corners"},
			ins: []qtensor{in(0.1, 0, 1, 5, 6, 1)}, outShape: []int{1, 3, 11, 1}, outQ: pq(0.1, 0), tol: 1},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}
