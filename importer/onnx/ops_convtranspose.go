package onnx

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	converters["ConvTranspose"] = lift1D(convConvTranspose, 1)
	paramSlots["ConvTranspose"] = []int{1, 2}
}

// convConvTranspose maps ONNX ConvTranspose (2-D, float): weights
// [Cin, Cout/g, KH, KW] become [Cout, KH, KW, Cin/g]; pads come from pads,
// or from output_shape / auto_pad as ONNX computes them, and a negative end
// pad (an output larger than the scatter covers) becomes OutPad.
func convConvTranspose(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("ConvTranspose on %s", x.dt)
	}
	if err := need4(x, "ConvTranspose"); err != nil {
		return err
	}
	if len(w.shape) != 4 {
		return fmt.Errorf("weights must be of rank 4, have %v", w.shape)
	}
	group := int(c.int("group", 1))
	if w.c == nil && group != 1 {
		// A DequantizeLinear's output (a QDQ model) is laid out by a
		// Transpose below, which FoldQDQ folds into the constant; a
		// grouped layout would take a Reshape of the channels too.
		return unsupportedf("ConvTranspose with group %d and weights that are not a constant (%q: a DequantizeLinear's output?)", group, w.name)
	}
	cin, cog, kh, kw := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	if group < 1 || x.shape[1] != cin || cin%group != 0 {
		return fmt.Errorf("group %d does not fit input %v and weights %v", group, x.shape, w.shape)
	}
	if k, ok := c.ints("kernel_shape"); ok && (len(k) != 2 || k[0] != kh || k[1] != kw) {
		return fmt.Errorf("kernel_shape %v disagrees with weights %v", k, w.shape)
	}
	pair := func(name string, def int) ([2]int, error) {
		v, ok := c.ints(name)
		if !ok {
			return [2]int{def, def}, nil
		}
		if len(v) != 2 {
			return [2]int{}, fmt.Errorf("%s %v: want 2 values", name, v)
		}
		return [2]int{v[0], v[1]}, nil
	}
	stride, err := pair("strides", 1)
	if err != nil {
		return err
	}
	dil, err := pair("dilations", 1)
	if err != nil {
		return err
	}
	outPad, err := pair("output_padding", 0)
	if err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		if stride[i] < 1 || dil[i] < 1 || outPad[i] < 0 {
			return fmt.Errorf("strides %v, dilations %v, output_padding %v", stride, dil, outPad)
		}
	}
	// Bounded before any arithmetic, so that no product or sum of them
	// can wrap into a plausible output size.
	for _, a := range []struct {
		name   string
		v      []int
		lo, hi int
	}{
		{"kernel", []int{kh, kw}, 1, maxElements},
		{"strides", stride[:], 1, maxWindow},
		{"dilations", dil[:], 1, maxWindow},
		{"output_padding", outPad[:], 0, maxWindow},
	} {
		if err := checkRange(a.name, a.v, a.lo, a.hi); err != nil {
			return err
		}
	}
	in := [2]int{x.shape[2], x.shape[3]}
	k := [2]int{kh, kw}
	var pb, pe [2]int
	if v, ok := c.ints("pads"); ok {
		if len(v) != 4 {
			return fmt.Errorf("pads %v: want 4 values", v)
		}
		if err := checkRange("pads", v, -maxWindow, maxWindow); err != nil {
			return err
		}
		pb, pe = [2]int{v[0], v[1]}, [2]int{v[2], v[3]}
	}
	ap := c.str("auto_pad", "NOTSET")
	outShape, hasOut := c.ints("output_shape")
	if hasOut && len(outShape) == 4 {
		outShape = outShape[2:]
	}
	if hasOut && len(outShape) != 2 {
		return fmt.Errorf("output_shape %v", outShape)
	}
	if hasOut {
		if err := checkRange("output_shape", outShape, 1, maxElements); err != nil {
			return err
		}
	}
	same := ap == "SAME_UPPER" || ap == "SAME_LOWER"
	switch {
	case same && !hasOut:
		// SAME without output_shape: the output is the input times the stride.
		hasOut, outShape = true, []int{in[0] * stride[0], in[1] * stride[1]}
	case same:
		// SAME with output_shape: the padding that gives that shape,
		// split as auto_pad says (below; it was refused: review finding).
	case ap == "VALID":
		pb, pe = [2]int{}, [2]int{}
	case ap != "NOTSET" && ap != "":
		return fmt.Errorf("auto_pad %q: one of NOTSET, SAME_UPPER, SAME_LOWER and VALID", ap)
	}
	if hasOut {
		for i := 0; i < 2; i++ {
			total := stride[i]*(in[i]-1) + outPad[i] + (k[i]-1)*dil[i] + 1 - outShape[i]
			half := total >> 1 // floor(total/2), as ONNX's reference computes it
			if ap == "SAME_UPPER" {
				pb[i], pe[i] = half, total-half
			} else {
				pb[i], pe[i] = total-half, half
			}
		}
	}
	for i := 0; i < 2; i++ {
		if pe[i] < 0 {
			outPad[i] += -pe[i]
			pe[i] = 0
		}
		if pb[i] < 0 {
			return unsupportedf("ConvTranspose with a negative leading pad")
		}
	}
	// [Cin, Cout/g, KH, KW] -> [Cout, KH, KW, Cin/g].
	cig, cout := cin/group, cog*group
	var wname string
	if w.c == nil {
		// Weights dequantized at run time (a QDQ model: it was refused
		// as "not a constant of rank 4", review finding): a Transpose,
		// which FoldQDQ folds into the int8 constant with its axis.
		t := im.newTensor(w.name+"_ohwi", graph.Float32, []int{cout, kh, kw, cig})
		im.emit(graph.Transpose, []string{im.get(w, asIs)}, &graph.TransposeAttrs{Perm: []int{1, 2, 3, 0}}, t)
		wname = t.Name
	}
	wd := graph.NewData(graph.Float32, []int{cout, kh, kw, cig})
	for ci := 0; ci < cin && w.c != nil; ci++ {
		gi := ci / cig
		for o := 0; o < cog; o++ {
			for y := 0; y < kh; y++ {
				for z := 0; z < kw; z++ {
					wd.F[((gi*cog+o)*kh+y)*kw*cig+z*cig+ci%cig] = w.c.F[((ci*cog+o)*kh+y)*kw+z]
				}
			}
		}
	}
	if w.c != nil {
		wname = im.g.AddConst(im.g.UniqueName(w.name+"_ohwi"), wd).Name
	}
	ins := []string{im.get(x, nhwc), wname, ""}
	if b := c.in(2); b != nil {
		if len(b.shape) != 1 || b.shape[0] != cout {
			return fmt.Errorf("bias of shape %v for %d output channels", b.shape, cout)
		}
		ins[2] = im.get(b, asIs)
	}
	attrs := &graph.ConvTransposeAttrs{Stride: stride, Dilation: dil, OutPad: outPad, Group: group,
		Pad: graph.Padding{Top: pb[0], Left: pb[1], Bottom: pe[0], Right: pe[1]}}
	oh := graph.ConvTransposeOut(in[0], kh, stride[0], dil[0], pb[0], pe[0], outPad[0])
	ow := graph.ConvTransposeOut(in[1], kw, stride[1], dil[1], pb[1], pe[1], outPad[1])
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("ConvTranspose output %dx%d", oh, ow)
	}
	c.emit1(graph.ConvTranspose2D, ins, attrs, x.dt, []int{x.shape[0], cout, oh, ow}, nhwc)
	return nil
}
