package onnx

import (
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
)

// Hostile models: attributes and shapes chosen to overflow the importer's
// arithmetic or to make it allocate without bound. Each must be refused
// quickly with one line naming the node and the reason; none may import
// (an import would be a silent miscompile), panic or run out of memory.

const huge = int64(1) << 62

// refused imports b's model and checks the error names node and says each
// of reasons.
func refused(t *testing.T, b *Builder, node string, reasons ...string) {
	t.Helper()
	start := time.Now()
	_, err := Import(b.Model().Graph.Name, b.Model(), Options{})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the import took %v", d)
	}
	if err == nil {
		t.Fatalf("imported; want an error naming node %q", node)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Contains(msg, "internal error") || !strings.Contains(msg, `node "`+node+`"`) {
		t.Fatalf("error %q: want one line naming node %q, no internal error", msg, node)
	}
	for _, r := range reasons {
		if !strings.Contains(msg, r) {
			t.Errorf("error %q does not say %q", msg, r)
		}
	}
}

// Window attributes whose overflows cancel passed the span check and the
// generated C indexed the input ~2^62 elements out of bounds.
func TestHostileConvWindow(t *testing.T) {
	conv := func(name string, op string, x []int, w []int, attrs ...*Attribute) *Builder {
		b := NewBuilder(name, 13, 1)
		ins := []string{b.Input("x", graph.Float32, x...)}
		if w != nil {
			ins = append(ins, b.Rand("w", 1, w...))
		}
		b.Output(b.Node(op, ins, attrs...), graph.Float32)
		return b
	}
	x4, w4 := []int{1, 1, 8, 8}, []int{1, 1, 3, 3}
	for _, c := range []struct {
		b          *Builder
		node, want string
	}{
		{conv("conv", "Conv", x4, w4, IntsAttr("dilations", huge, huge), IntsAttr("pads", huge, huge, huge, huge)), "Conv_1", "dilations"},
		{conv("conv_pads", "Conv", x4, w4, IntsAttr("pads", huge, huge, huge, huge)), "Conv_1", "pads"},
		{conv("conv_strides", "Conv", x4, w4, IntsAttr("strides", huge, 1)), "Conv_1", "strides"},
		{conv("conv1d", "Conv", []int{1, 1, 8}, []int{1, 1, 3}, IntsAttr("dilations", huge), IntsAttr("pads", huge, huge)), "Conv_1", "dilations"},
		{conv("maxpool", "MaxPool", x4, nil, IntsAttr("kernel_shape", 3, 3), IntsAttr("dilations", huge, huge), IntsAttr("pads", huge, huge, huge, huge)), "MaxPool_1", "dilations"},
		{conv("maxpool_kernel", "MaxPool", x4, nil, IntsAttr("kernel_shape", huge, huge), IntsAttr("pads", huge, huge, huge, huge)), "MaxPool_1", "kernel"},
		{conv("avgpool_pads", "AveragePool", x4, nil, IntsAttr("kernel_shape", 2, 2), IntsAttr("pads", 0, 0, huge, 0)), "AveragePool_1", "pads"},
		{conv("convt", "ConvTranspose", x4, w4, IntsAttr("dilations", huge, huge), IntsAttr("pads", huge, huge, huge, huge)), "ConvTranspose_1", "dilations"},
		{conv("convt_strides", "ConvTranspose", x4, w4, IntsAttr("strides", huge, huge)), "ConvTranspose_1", "strides"},
		{conv("convt_outpad", "ConvTranspose", x4, w4, IntsAttr("output_padding", huge, huge)), "ConvTranspose_1", "output_padding"},
		{conv("convt_pads", "ConvTranspose", x4, w4, IntsAttr("pads", huge, huge, huge, huge)), "ConvTranspose_1", "pads"},
		{conv("convt_outshape", "ConvTranspose", x4, w4, IntsAttr("output_shape", huge, huge)), "ConvTranspose_1", "output_shape"},
		{conv("convt1d", "ConvTranspose", []int{1, 1, 8}, []int{1, 1, 3}, IntsAttr("output_padding", huge)), "ConvTranspose_1", "output_padding"},
	} {
		t.Run(c.b.Model().Graph.Name, func(t *testing.T) { refused(t, c.b, c.node, c.want) })
	}
}

// Tile's output size was formed (and allocated) before any check: repeats
// of 2^31 and more ran out of memory or hit makeslice; a run-time Tile of
// 2^22 copies made a Concat of 2^22 inputs.
func TestHostileTile(t *testing.T) {
	for _, r := range []int{1 << 31, 1 << 40, 1 << 62} {
		b := NewBuilder("tile", 13, 1)
		x := b.Input("x", graph.Float32, 1, 1)
		b.Output(b.Node("Tile", []string{x, b.Ints("r", 1, r)}), graph.Float32)
		refused(t, b, "Tile_1", "repeats", "more than 16777216 elements")

		b = NewBuilder("tile_const", 13, 1)
		x = b.Input("x", graph.Float32, 1)
		y := b.Node("Tile", []string{b.Floats("c", 1), b.Ints("r", r)})
		b.Output(b.Node("Add", []string{x, y}), graph.Float32)
		refused(t, b, "Tile_1", "repeats", "more than 16777216 elements")
	}
	b := NewBuilder("tile_copies", 13, 1)
	x := b.Input("x", graph.Float32, 1, 1)
	b.Output(b.Node("Tile", []string{x, b.Ints("r", 1, 1<<22)}), graph.Float32)
	refused(t, b, "Tile_1", "4194304 copies of a run-time value", "at most 4096")

	// A constant tiled many times is fine (no Concat is made for it).
	b = NewBuilder("tile_const_ok", 13, 1)
	x = b.Input("x", graph.Float32, 1, 8192)
	y := b.Node("Tile", []string{b.Floats("c", 2), b.Ints("r", 1<<13)})
	b.Output(b.Node("Add", []string{x, b.Node("Unsqueeze", []string{y, b.Ints("a", 0)})}), graph.Float32)
	if _, err := Import("tile_const_ok", b.Model(), Options{}); err != nil {
		t.Errorf("a constant Tile of 8192 copies: %v", err)
	}
}

// Split ran a loop of num_outputs iterations before comparing it with the
// node's outputs.
func TestHostileSplit(t *testing.T) {
	b := NewBuilder("split", 18, 1)
	x := b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Split", []string{x}, IntAttr("axis", 1), IntAttr("num_outputs", 1<<40)), graph.Float32)
	refused(t, b, "Split_1", "num_outputs 1099511627776")

	b = NewBuilder("split_sizes", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	outs := b.NodeN("Split", []string{b.Floats("c", 1, 2, 3, 4), b.Ints("s", 2, 1<<63-1)}, 2)
	b.Output(b.Node("Add", []string{x, outs[0]}), graph.Float32)
	refused(t, b, "Split_1", "exceeds dimension 4")
}

// Concat of constants did not check its output size: doubling Concats of
// a large constant allocated gigabytes.
func TestHostileConcat(t *testing.T) {
	b := NewBuilder("concat", 13, 1)
	x := b.Input("x", graph.Float32, 1)
	c := b.Node("ConstantOfShape", []string{b.Ints("s", 1<<22)})
	for i := 0; i < 29; i++ {
		c = b.Node("Concat", []string{c, c}, IntAttr("axis", 0))
	}
	b.Output(b.Node("Add", []string{x, b.Node("ReduceSum", []string{c}, IntAttr("keepdims", 0))}), graph.Float32)
	// [2^22] doubles to [2^23], [2^24], then [2^25]: too large.
	refused(t, b, "Concat_4", "shape [33554432] is too large")
}

// Folded constants had no total budget: many ConstantOfShape nodes of
// 2^24 elements (a 20 KB file) allocated gigabytes.
func TestHostileFoldingBudget(t *testing.T) {
	b := NewBuilder("budget", 13, 1)
	x := b.Input("x", graph.Float32, 1)
	s := b.Ints("s", 1<<24)
	for i := 0; i < 200; i++ {
		b.Node("ConstantOfShape", []string{s})
	}
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	// 64 MiB each: the fifth passes 256 MiB.
	refused(t, b, "ConstantOfShape_5", "more than 256 MiB of constant data")

	// Reshapes and Identities of one constant share its data: no charge.
	b = NewBuilder("budget_shared", 13, 1)
	x = b.Input("x", graph.Float32, 1)
	c := b.Node("ConstantOfShape", []string{b.Ints("s", 1<<24)})
	sh := b.Ints("sh", 1<<12, 1<<12)
	for i := 0; i < 50; i++ {
		b.Node("Reshape", []string{b.Node("Identity", []string{c}), sh})
	}
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	if _, err := Import("budget_shared", b.Model(), Options{}); err != nil {
		t.Errorf("reshapes of one constant: %v", err)
	}
}

// Shape products wrapped: [4, 2^62] has "0" elements, passed the bound,
// and a Slice of it panicked.
func TestHostileShapeOverflow(t *testing.T) {
	b := NewBuilder("wrap", 13, 1)
	x := b.Input("x", graph.Float32, 1)
	c := b.Node("ConstantOfShape", []string{b.Ints("s", 4, 1<<62)})
	s := b.Node("Slice", []string{c, b.Ints("st", 0, 0), b.Ints("en", 1, 1)})
	b.Output(b.Node("Add", []string{x, b.Node("Reshape", []string{s, b.Ints("sh", 1)})}), graph.Float32)
	refused(t, b, "ConstantOfShape_1", "too large")

	b = NewBuilder("reshape", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Reshape", []string{x, b.Ints("s", 4, 1<<62)}), graph.Float32)
	refused(t, b, "Reshape_1", "bad shape [4 4611686018427387904]")

	b = NewBuilder("pad", 13, 1)
	x = b.Input("x", graph.Float32, 1, 4)
	b.Output(b.Node("Pad", []string{x, b.Ints("p", 0, 1<<62, 0, 1<<62)}), graph.Float32)
	refused(t, b, "Pad_1", "pads")

	b = NewBuilder("range", 13, 1)
	x = b.Input("x", graph.Float32, 1)
	r := b.Node("Range", []string{b.Scalar("a", graph.Float32, 0), b.Scalar("l", graph.Float32, 1e30), b.Scalar("d", graph.Float32, 1)})
	b.Output(b.Node("Add", []string{x, b.Node("ReduceSum", []string{r}, IntAttr("keepdims", 0))}), graph.Float32)
	refused(t, b, "Range_1", "more than 16777216 elements")

	b = NewBuilder("resize", 13, 1)
	x = b.Input("x", graph.Float32, 1, 1, 2, 2)
	b.Output(b.Node("Resize", []string{x, "", "", b.Ints("sz", 1, 1, 1<<32, 1<<32)}), graph.Float32)
	refused(t, b, "Resize_1", "output shape")

	// Graph input dimensions whose product wraps.
	b = NewBuilder("input", 13, 1)
	x = b.Input("x", graph.Float32, 1<<24, 1<<24, 1<<24, 1<<24)
	b.Output(b.Node("Relu", []string{x}), graph.Float32)
	if _, err := Import("input", b.Model(), Options{}); err == nil || !strings.Contains(err.Error(), `graph input "x"`) || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a graph input of 2^96 elements: %v", err)
	}

	// A step beyond the axis takes one element (its magnitude wrapped
	// the size arithmetic to an empty slice).
	b = NewBuilder("slice_step", 13, 1)
	x = b.Input("x", graph.Float32, 1)
	s = b.Node("Slice", []string{b.Floats("c", 1, 2, 3, 4, 5, 6, 7, 8), b.Ints("st", 7), b.Ints("en", -9), b.Ints("ax", 0), b.Ints("sp", -1<<63)})
	b.Output(b.Node("Add", []string{x, s}), graph.Float32)
	g, err := Import("slice_step", b.Model(), Options{})
	if err != nil {
		t.Fatalf("slice with step -2^63: %v", err)
	}
	var got []float32
	for _, tn := range g.Tensors {
		if tn.Data != nil && tn.DType == graph.Float32 {
			got = append(got, tn.Data.F...)
		}
	}
	if len(got) != 1 || got[0] != 8 {
		t.Errorf("slice with step -2^63 took %v, want [8]", got)
	}
}

// DepthToSpace's bs*bs wrapped to 0 for a blocksize of 2^32: a division
// by zero.
func TestHostileBlockSize(t *testing.T) {
	for _, op := range []string{"DepthToSpace", "SpaceToDepth"} {
		b := NewBuilder("blocks", 13, 1)
		x := b.Input("x", graph.Float32, 1, 4, 2, 2)
		b.Output(b.Node(op, []string{x}, IntAttr("blocksize", 1<<32)), graph.Float32)
		refused(t, b, op+"_1", "blocksize 4294967296")
	}
}
