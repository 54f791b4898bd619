package graph

import (
	"strings"
	"testing"
)

// Window attributes out of range are refused whatever importer made them: a
// hostile dilation and pad whose overflows cancel would otherwise pass every
// shape check and index the input far out of bounds in the generated C.
func TestValidateWindowBounds(t *testing.T) {
	const huge = 1 << 62
	for _, c := range []struct {
		name, node, want string
		edit             func(g *Graph)
	}{
		{"conv dilation", "conv", "dilation", func(g *Graph) {
			a := g.Nodes[0].Attrs.(*Conv2DAttrs)
			a.Dilation = [2]int{huge, huge}
			a.Pad = Padding{huge, huge, huge, huge}
		}},
		{"conv stride", "conv", "stride", func(g *Graph) { g.Nodes[0].Attrs.(*Conv2DAttrs).Stride = [2]int{1, -1} }},
		{"conv negative pad", "conv", "padding", func(g *Graph) { g.Nodes[0].Attrs.(*Conv2DAttrs).Pad.Left = -1 }},
		{"pool kernel", "pool", "kernel", func(g *Graph) { g.Nodes[1].Attrs.(*PoolAttrs).Kernel = [2]int{huge, 2} }},
		{"pool pad", "pool", "padding", func(g *Graph) { g.Nodes[1].Attrs.(*PoolAttrs).Pad.Bottom = huge }},
		{"conv transpose output padding", "conv", "output padding", func(g *Graph) {
			g.Nodes[0].Op = ConvTranspose2D
			g.Nodes[0].Attrs = &ConvTransposeAttrs{Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, OutPad: [2]int{0, huge}, Group: 1}
		}},
	} {
		g := convGraph()
		if err := InferShapes(g); err != nil {
			t.Fatal(err)
		}
		c.edit(g)
		err := Validate(g)
		if err == nil || !strings.Contains(err.Error(), `node "`+c.node+`"`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming node %q and %q", c.name, err, c.node, c.want)
		}
	}
	// Zero strides and dilations mean 1, as the kernels read them.
	g := convGraph()
	if err := InferShapes(g); err != nil {
		t.Fatal(err)
	}
	g.Nodes[1].Attrs.(*PoolAttrs).Dilation = [2]int{}
	if err := Validate(g); err != nil {
		t.Errorf("default dilation: %v", err)
	}
}
