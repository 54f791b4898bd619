package onnx

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["IsNaN"] = convIsNaN
	converters["IsInf"] = convIsInf
	converters["EyeLike"] = convEyeLike
	for _, w := range []string{"HannWindow", "HammingWindow", "BlackmanWindow"} {
		converters[w] = convWindow
		paramSlots[w] = []int{0}
	}
}

// IsNaN(x) = Not(x == x).
func convIsNaN(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "IsNaN"); err != nil {
		return err
	}
	xs := im.get(x, asIs)
	eq := c.tmp(graph.Compare, []string{xs, xs}, &graph.CompareAttrs{Kind: "Equal"}, graph.Bool, x.shape, asIs, "self_equal")
	c.emit1(graph.Logic, []string{im.get(eq, asIs)}, &graph.LogicAttrs{Kind: "Not"}, graph.Bool, x.shape, asIs)
	return nil
}

// IsInf(x): |x| > the largest float (constants are finite), or x > it or
// x < -it alone, or x < x (false everywhere, NaN included), as
// detect_positive and detect_negative say.
func convIsInf(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if err := needFloat(x, "IsInf"); err != nil {
		return err
	}
	pos, neg := c.int("detect_positive", 1) != 0, c.int("detect_negative", 1) != 0
	limit := func(v float32) string {
		return im.g.AddConst(im.g.UniqueName(c.out(0)+"_max_float"), scalarF(v)).Name
	}
	xs := im.get(x, asIs)
	kind, ref := "Greater", ""
	switch {
	case pos && neg:
		xs = im.get(c.tmp(graph.Math, []string{xs}, &graph.MathAttrs{Fn: graph.MathAbs}, graph.Float32, x.shape, asIs, "abs"), asIs)
		ref = limit(math.MaxFloat32)
	case pos:
		ref = limit(math.MaxFloat32)
	case neg:
		kind, ref = "Less", limit(-math.MaxFloat32)
	default:
		kind, ref = "Less", xs
	}
	c.emit1(graph.Compare, []string{xs, ref}, &graph.CompareAttrs{Kind: kind}, graph.Bool, x.shape, asIs)
	return nil
}

// EyeLike depends only on its input's (static) shape: a constant with ones
// on diagonal k.
func convEyeLike(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if len(x.shape) != 2 {
		return fmt.Errorf("input of rank %d: want 2", len(x.shape))
	}
	dt := x.dt
	if a := c.attr("dtype"); a != nil {
		var ok bool
		if dt, ok = graphDType(int32(a.I)); !ok {
			return unsupportedf("EyeLike to %s", DTypeName(int32(a.I)))
		}
	}
	k := int(c.int("k", 0))
	d := graph.NewData(dt, x.shape)
	for i := 0; i < x.shape[0]; i++ {
		if j := i + k; j >= 0 && j < x.shape[1] {
			if dt == graph.Float32 {
				d.F[i*x.shape[1]+j] = 1
			} else {
				d.I[i*x.shape[1]+j] = 1
			}
		}
	}
	return c.setConst(0, d)
}

// The window functions of a constant size N, folded: with periodic (the
// default) the cosines run over N, symmetric over N - 1.
func convWindow(im *importer, c *nodeCtx) error {
	sd, err := c.constIn(0, "size")
	if err != nil {
		return err
	}
	if sd == nil || sd.Len() != 1 || sd.DType == graph.Float32 {
		return fmt.Errorf("size must be one integer")
	}
	n := sd.Ints()[0]
	if n < 0 || n > 1<<20 {
		return fmt.Errorf("size %d out of range", n)
	}
	dt := graph.Float32
	if a := c.attr("output_datatype"); a != nil {
		var ok bool
		if dt, ok = graphDType(int32(a.I)); !ok {
			return unsupportedf("%s to %s", c.n.OpType, DTypeName(int32(a.I)))
		}
	}
	den := float64(n)
	if c.int("periodic", 1) == 0 {
		den = float64(n - 1)
	}
	w := graph.NewData(graph.Float32, []int{n})
	for i := range w.F {
		t := 2 * math.Pi * float64(i) / den
		var v float64
		switch c.n.OpType {
		case "HannWindow":
			v = 0.5 - 0.5*math.Cos(t)
		case "HammingWindow":
			v = 25.0/46 - 21.0/46*math.Cos(t)
		default:
			v = 0.42 - 0.5*math.Cos(t) + 0.08*math.Cos(2*t)
		}
		w.F[i] = float32(v)
	}
	if dt != graph.Float32 {
		w = graph.CastData(w, dt)
	}
	return c.setConst(0, w)
}
