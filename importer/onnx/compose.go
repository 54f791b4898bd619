package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Ops with no canonical counterpart that are exact compositions of
// canonical ops.

func init() {
	converters["PRelu"] = convPRelu
	converters["Mean"] = convMean
	converters["Upsample"] = convUpsample
	converters["DepthToSpace"] = convSpaceDepth
	converters["SpaceToDepth"] = convSpaceDepth
	paramSlots["Upsample"] = []int{1}
}

// constValue wraps a constant as a value.
func constValue(name string, d *graph.Data) *value {
	return &value{name: name, dt: d.DType, shape: slices.Clone(d.Shape), c: d}
}

// tmp emits a one-output node with an intermediate (unnamed in ONNX) result.
func (c *nodeCtx) tmp(op graph.Op, ins []string, attrs any, dt graph.DType, shape []int, l layout, suffix string) *value {
	ts := shape
	if l == nhwc {
		ts = permuteShape(shape, toNHWC)
	}
	t := c.im.newTensor(c.out(0)+"_"+suffix, dt, ts)
	v := &value{name: t.Name, dt: dt, shape: slices.Clone(shape), primary: l}
	v.tensors[l] = t.Name
	v.prod = c.im.emit(op, ins, attrs, t)
	return v
}

func needFloat(x *value, op string) error {
	if x.dt != graph.Float32 {
		return unsupportedf("%s on %s", op, x.dt)
	}
	return nil
}

// PRelu(x, slope) = Relu(x) + slope * Min(x, 0).
func convPRelu(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	slope, err := c.need(1)
	if err != nil {
		return err
	}
	if err := needFloat(x, "PRelu"); err != nil {
		return err
	}
	if im.opset < 7 && slope.c != nil && len(slope.shape) == 1 && len(x.shape) > 2 && slope.shape[0] == x.shape[1] && slope.shape[0] > 1 {
		// Before opset 7 a 1-D slope applies along the channel axis.
		s := []int{slope.shape[0]}
		for len(s) < len(x.shape)-1 {
			s = append(s, 1)
		}
		slope = constValue(slope.name+"_c", reshapeData(slope.c, s))
	}
	shape, err := broadcastShapes(x.shape, slope.shape)
	if err != nil || !slices.Equal(shape, x.shape) {
		return fmt.Errorf("slope %v does not broadcast to %v", slope.shape, x.shape)
	}
	l := pickLayout(len(x.shape), x, slope)
	xs := im.operand(x, l)
	r := c.tmp(graph.Relu, []string{xs}, nil, x.dt, x.shape, l, "relu")
	zero := im.g.AddConst(im.g.UniqueName(c.out(0)+"_zero"), scalarF(0)).Name
	n := c.tmp(graph.Minimum, []string{xs, zero}, &graph.BinaryAttrs{}, x.dt, x.shape, l, "neg")
	m := c.tmp(graph.Mul, []string{im.get(n, l), im.operand(slope, l)}, &graph.BinaryAttrs{}, x.dt, x.shape, l, "scaled")
	c.emit1(graph.Add, []string{im.get(r, l), im.get(m, l)}, &graph.BinaryAttrs{}, x.dt, x.shape, l)
	return nil
}

// Mean of n inputs = (x1 + ... + xn) / n.
func convMean(im *importer, c *nodeCtx) error {
	acc, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(acc, "Mean"); err != nil {
		return err
	}
	for i := 1; i < c.nIn(); i++ {
		b, err := c.need(i)
		if err != nil {
			return err
		}
		if acc, err = c.binary(graph.Add, acc, b, false); err != nil {
			return err
		}
	}
	n := constValue(c.out(0)+"_n", scalarF(float32(c.nIn())))
	_, err = c.binaryAs("Div", graph.Div, acc, n)
	return err
}

// binaryAs is binary for the final output with an explicit fold op name.
func (c *nodeCtx) binaryAs(fold string, op graph.Op, a, b *value) (*value, error) {
	if a.c != nil && b.c != nil {
		d, err := binaryData(fold, a.c, b.c)
		if err != nil {
			return nil, err
		}
		return nil, c.setConst(0, d)
	}
	return c.binary(op, a, b, true)
}

// Upsample (opsets 7-9) is Resize with asymmetric coordinates and floor rounding.
func convUpsample(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := need4(x, "Upsample"); err != nil {
		return err
	}
	var scales []float32
	if a := c.attr("scales"); a != nil {
		scales = a.Floats
	} else {
		d, err := c.constIn(1, "Upsample scales")
		if err != nil {
			return err
		}
		if d == nil || d.DType != graph.Float32 {
			return fmt.Errorf("no scales")
		}
		scales = d.F
	}
	if len(scales) != 4 {
		return fmt.Errorf("%d scales for rank 4", len(scales))
	}
	mode := map[string]string{"nearest": "nearest", "linear": "bilinear", "bilinear": "bilinear"}[c.str("mode", "nearest")]
	if mode == "" {
		return unsupportedf("Upsample mode %q", c.str("mode", "nearest"))
	}
	out := slices.Clone(x.shape)
	for i, s := range scales {
		if err := checkScale(s, x.shape[i]); err != nil {
			return err
		}
		out[i] = int(math.Floor(float64(x.shape[i]) * float64(s)))
	}
	if out[0] != x.shape[0] || out[1] != x.shape[1] {
		return unsupportedf("Upsample of the batch or channel axis")
	}
	if out[2] <= 0 || out[3] <= 0 || checkShape(out) != nil {
		return fmt.Errorf("output shape %v: the sizes must be positive, at most %d elements in all", out, maxElements)
	}
	attrs := &graph.ResizeAttrs{Mode: mode, Coord: "asymmetric", Nearest: "floor", Scale: [2]float32{scales[2], scales[3]}}
	c.emit1(graph.Resize, []string{im.get(x, nhwc)}, attrs, x.dt, out, nhwc)
	return nil
}

// DepthToSpace and SpaceToDepth are Reshape, a rank-6 Transpose and Reshape.
func convSpaceDepth(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if len(x.shape) != 4 {
		return fmt.Errorf("input of rank %d", len(x.shape))
	}
	bs := int(c.int("blocksize", 0))
	if bs < 1 {
		return fmt.Errorf("blocksize %d", bs)
	}
	// Bounded before bs*bs is formed (it must divide the channels, or the
	// block must fit the spatial size, in any case).
	if bs > maxWindow {
		return fmt.Errorf("blocksize %d: must be at most %d", bs, maxWindow)
	}
	n, ch, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	var mid, perm, out []int
	if c.n.OpType == "DepthToSpace" {
		if ch%(bs*bs) != 0 {
			return fmt.Errorf("%d channels for blocksize %d", ch, bs)
		}
		cc := ch / (bs * bs)
		out = []int{n, cc, h * bs, w * bs}
		mode := c.str("mode", "DCR")
		if mode != "DCR" && mode != "CRD" {
			return fmt.Errorf("mode %q: want DCR or CRD", mode)
		}
		if mode == "CRD" {
			mid, perm = []int{n, cc, bs, bs, h, w}, []int{0, 1, 4, 2, 5, 3}
		} else {
			mid, perm = []int{n, bs, bs, cc, h, w}, []int{0, 3, 4, 1, 5, 2}
		}
	} else {
		if h%bs != 0 || w%bs != 0 {
			return fmt.Errorf("spatial %dx%d for blocksize %d", h, w, bs)
		}
		mid, perm = []int{n, ch, h / bs, bs, w / bs, bs}, []int{0, 3, 5, 1, 2, 4}
		out = []int{n, ch * bs * bs, h / bs, w / bs}
	}
	if x.c != nil {
		return c.setConst(0, reshapeData(transposeData(reshapeData(x.c, mid), perm), out))
	}
	r := c.tmp(graph.Reshape, []string{im.get(x, asIs)}, nil, x.dt, mid, asIs, "blocks")
	t := c.tmp(graph.Transpose, []string{im.get(r, asIs)}, &graph.TransposeAttrs{Perm: perm}, x.dt, permuteShape(mid, perm), asIs, "moved")
	c.emit1(graph.Reshape, []string{im.get(t, asIs)}, nil, x.dt, out, asIs)
	return nil
}
