package tflite

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// builder maps one operator: it fills n (the node that takes the
// operator's outputs) or, for several outputs or outputs that fold to
// constants, adds every node itself and sets c.done.
type builder func(c *opctx, n *graph.Node) error

// moreOps are the operators mapped outside node()'s switch, registered by
// the file that implements them.
var moreOps = map[int32]builder{}

func register(b builder, codes ...int32) {
	for _, code := range codes {
		if _, dup := moreOps[code]; dup {
			panic(fmt.Sprintf("tflite: operator %s registered twice", OpName(code)))
		}
		moreOps[code] = b
	}
}

// out imports output i (it must be present and not a constant).
func (c *opctx) out(i int) (*graph.Tensor, error) {
	if i >= len(c.outs) || c.outs[i] < 0 {
		return nil, c.errorf("output %d is missing", i)
	}
	name, err := c.d.tensor(int(c.outs[i]))
	if err != nil {
		return nil, c.errorf("output: %v", err)
	}
	t := c.d.g.Tensors[name]
	if t.IsConst() {
		return nil, c.errorf("output %q is a constant", name)
	}
	return t, nil
}

// emit adds a node computing out (named after it) for an operator whose
// builder sets c.done; the file's shape of out is kept.
func (c *opctx) emit(op graph.Op, attrs any, ins []string, out *graph.Tensor) {
	c.d.fileSize[out.Name] = slices.Clone(out.Shape)
	c.d.g.AddNode(&graph.Node{Name: out.Name, Op: op, Attrs: attrs, Inputs: ins, Outputs: []string{out.Name}})
}

// temp adds an intermediate tensor of the operator: element type dt, the
// given shape and quantization q.
func (c *opctx) temp(suffix string, dt graph.DType, shape []int, q *graph.Quant) *graph.Tensor {
	base := c.name
	if len(c.outs) > 0 {
		if name, err := c.d.tensor(int(c.outs[0])); err == nil {
			base = name
		}
	}
	t := &graph.Tensor{Name: c.d.g.UniqueName(base + "/" + suffix), DType: dt, Shape: slices.Clone(shape), Quant: q}
	c.d.g.AddTensor(t)
	return t
}

// step adds an intermediate node (op on ins) with a new tensor of the given
// shape and quantization, and returns that tensor.
func (c *opctx) step(op graph.Op, attrs any, ins []string, suffix string, dt graph.DType, shape []int, q *graph.Quant) *graph.Tensor {
	if src := c.d.g.Tensors[ins[0]]; op == graph.Reshape && src.IsConst() && graph.NumElements(shape) == src.NumElements() {
		// A constant reshaped is a constant (generated code keeps no
		// node whose inputs are all constants).
		d := src.Data.Clone()
		d.Shape = slices.Clone(shape)
		t := c.d.g.AddConst(c.d.g.UniqueName(src.Name+"/"+suffix), d)
		t.Quant = q
		return t
	}
	t := c.temp(suffix, dt, shape, q)
	c.d.g.AddNode(&graph.Node{Name: t.Name, Op: op, Attrs: attrs, Inputs: ins, Outputs: []string{t.Name}})
	return t
}

// constOut makes output i the constant d (an operator that folds away).
func (c *opctx) constOut(i int, d *graph.Data) error {
	t, err := c.out(i)
	if err != nil {
		return err
	}
	if d.DType != t.DType {
		return c.errorf("output %q is %s, the operator gives %s", t.Name, t.DType, d.DType)
	}
	if graph.NumElements(d.Shape) != t.NumElements() {
		return c.errorf("output %q has shape %v, the operator gives %v", t.Name, t.Shape, d.Shape)
	}
	d.Shape = slices.Clone(t.Shape)
	t.Data = d
	c.done = true
	return nil
}

// axisArg reads a constant scalar axis (input i) for rank r, negative
// values counting from the end.
func (c *opctx) axisArg(i, r int) (int, error) {
	v, err := c.constInts(i, "axis")
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, c.errorf("axis has %d values, want 1", len(v))
	}
	return c.axis(v[0], r)
}

// axis normalises a possibly negative axis for rank r.
func (c *opctx) axis(ax, r int) (int, error) {
	if ax < -r || ax >= r {
		return 0, c.errorf("axis %d out of range for rank %d", ax, r)
	}
	if ax < 0 {
		ax += r
	}
	return ax, nil
}

// fullSlice is a Slice of every element of shape (to narrow one axis).
func fullSlice(shape []int) *graph.SliceAttrs {
	a := &graph.SliceAttrs{Begin: make([]int, len(shape)), End: slices.Clone(shape), Stride: make([]int, len(shape))}
	for i := range a.Stride {
		a.Stride[i] = 1
	}
	return a
}

// reducerAxes reads a reducer's constant axes (input 1), at least one,
// each counted from the end when negative, as axes of x.
func (c *opctx) reducerAxes(x *graph.Tensor) ([]int, error) {
	axes, err := c.constInts(1, "axes")
	if err != nil {
		return nil, err
	}
	if len(axes) == 0 {
		return nil, c.errorf("reducer with no axes")
	}
	for k, ax := range axes {
		if ax < 0 {
			ax += len(x.Shape)
		}
		if ax < 0 || ax >= len(x.Shape) {
			return nil, c.errorf("axis %d out of range for shape %v", axes[k], x.Shape)
		}
		axes[k] = ax
	}
	return axes, nil
}
