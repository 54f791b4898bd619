package memplan

import (
	"fmt"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// builder makes small graphs for tests.
type builder struct {
	g  *graph.Graph
	dt graph.DType
	k  int
}

func newBuilder(dt graph.DType) *builder {
	return &builder{g: graph.New("test", "test"), dt: dt}
}

func (b *builder) name(p string) string {
	b.k++
	return fmt.Sprintf("%s%d", p, b.k)
}

func (b *builder) input(shape ...int) string {
	n := b.name("in")
	b.g.AddTensor(&graph.Tensor{Name: n, DType: b.dt, Shape: shape})
	b.g.Inputs = append(b.g.Inputs, n)
	return n
}

func (b *builder) konst(shape ...int) string {
	n := b.name("w")
	b.g.AddConst(n, graph.NewData(b.dt, shape))
	return n
}

// op adds a node with activation or constant inputs and one output of shape.
func (b *builder) op(op graph.Op, attrs any, ins []string, shape ...int) string {
	return b.opT(op, attrs, ins, b.dt, shape...)
}

func (b *builder) opT(op graph.Op, attrs any, ins []string, dt graph.DType, shape ...int) string {
	out := b.name("t")
	b.g.AddTensor(&graph.Tensor{Name: out, DType: dt, Shape: shape})
	b.g.AddNode(&graph.Node{Name: b.name(string(op) + "_"), Op: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs})
	return out
}

func (b *builder) fc(x string, k, n int) string {
	return b.op(graph.FullyConnected, &graph.FullyConnectedAttrs{}, []string{x, b.konst(n, k), ""}, 1, n)
}

func (b *builder) depthwise(x string, h, w, c, stride int) string {
	oh, ow := (h+stride-1)/stride, (w+stride-1)/stride
	at := &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{1, 1}, Group: c,
		Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}
	return b.op(graph.Conv2D, at, []string{x, b.konst(c, 3, 3, 1), ""}, 1, oh, ow, c)
}

func (b *builder) conv(x string, h, w, cin, cout, stride int) string {
	oh, ow := (h+stride-1)/stride, (w+stride-1)/stride
	at := &graph.Conv2DAttrs{Stride: [2]int{stride, stride}, Dilation: [2]int{1, 1}, Group: 1,
		Pad: graph.Padding{Top: 1, Left: 1, Bottom: 1, Right: 1}}
	return b.op(graph.Conv2D, at, []string{x, b.konst(cout, 3, 3, cin), ""}, 1, oh, ow, cout)
}

func (b *builder) output(names ...string) *graph.Graph {
	b.g.Outputs = append(b.g.Outputs, names...)
	return b.g
}

func mustPlan(t *testing.T, g *graph.Graph, opt Options) *Plan {
	t.Helper()
	p, err := Build(g, opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := p.Validate(g); err != nil {
		t.Fatalf("Validate (%s): %v\n%s", opt.Algorithm, err, p.Table())
	}
	return p
}
