package memplan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The simulator runs a graph twice with simple integer kernels (arbitrary
// but deterministic functions with each op's data dependences): once with
// every tensor in its own buffer (the reference), once in one byte arena laid
// out by a plan, with in-place nodes running the loops InPlaceLoop documents
// through their scratch at its planned offset. Before each node it checks
// that every input still holds the reference bytes, so any overlap of live
// buffers, a wrong view, a wrong lifetime or an illegal in-place loop shows
// up as a corrupted tensor.

type acc func(i int) int64

// view is a tensor's storage: es-byte little-endian integers from off.
type view struct {
	buf    []byte
	off, n int
	es     int
}

func (v view) get(i int) int64 {
	p := v.off + i*v.es
	switch v.es {
	case 1:
		return int64(int8(v.buf[p]))
	case 2:
		return int64(int16(uint16(v.buf[p]) | uint16(v.buf[p+1])<<8))
	case 4:
		return int64(int32(uint32(v.buf[p]) | uint32(v.buf[p+1])<<8 | uint32(v.buf[p+2])<<16 | uint32(v.buf[p+3])<<24))
	}
	var x uint64
	for k := 0; k < 8; k++ {
		x |= uint64(v.buf[p+k]) << (8 * k)
	}
	return int64(x)
}

func (v view) set(i int, x int64) {
	p := v.off + i*v.es
	for k := 0; k < v.es; k++ {
		v.buf[p+k] = byte(x >> (8 * k))
	}
}

func trunc(x int64, es int) int64 {
	switch es {
	case 1:
		return int64(int8(x))
	case 2:
		return int64(int16(x))
	case 4:
		return int64(int32(x))
	}
	return x
}

// constAcc gives constants deterministic small values in [-3, 3].
func constAcc(name string) acc {
	h := uint64(nameHash(name))
	return func(i int) int64 {
		x := (uint64(i)*0x9e3779b97f4a7c15 + h) >> 29
		return int64(x%7) - 3
	}
}

// coords decodes a row-major index.
func coords(i int, shape []int) []int {
	c := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			c[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return c
}

// broadcastIndex maps an output coordinate to an index into a tensor of
// shape in (numpy broadcasting, right-aligned).
func broadcastIndex(oc []int, in []int) int {
	idx := 0
	for k := range in {
		c := oc[len(oc)-len(in)+k]
		if in[k] == 1 {
			c = 0
		}
		idx = idx*in[k] + c
	}
	return idx
}

// outElem computes output element o of n from its inputs.
func outElem(t testing.TB, g *graph.Graph, n *graph.Node, ins []acc, o int) int64 {
	shape := func(i int) []int { return g.Tensors[n.Inputs[i]].Shape }
	ys := g.Tensors[n.Outputs[0]].Shape
	switch {
	case elementwiseUnary[n.Op] || n.Op == graph.Reshape:
		v := ins[0](o)
		if n.Op == graph.Reshape {
			return v
		}
		return v*3 + int64(len(n.Op)) - v*v%5
	case elementwiseBinary[n.Op]:
		oc := coords(o, ys)
		a, b := ins[0](broadcastIndex(oc, shape(0))), ins[1](broadcastIndex(oc, shape(1)))
		return 2*a - b + a*b%3
	case n.Op == graph.Conv2D:
		at := n.Attrs.(*graph.Conv2DAttrs)
		xs, ws := shape(0), shape(1)
		oc := coords(o, ys)
		cinG := ws[3]
		coutG := ys[3] / at.Group
		grp := oc[3] / coutG
		dh, dw := max(at.Dilation[0], 1), max(at.Dilation[1], 1)
		var sum int64
		for kh := 0; kh < ws[1]; kh++ {
			ih := oc[1]*at.Stride[0] - at.Pad.Top + kh*dh
			if ih < 0 || ih >= xs[1] {
				continue
			}
			for kw := 0; kw < ws[2]; kw++ {
				iw := oc[2]*at.Stride[1] - at.Pad.Left + kw*dw
				if iw < 0 || iw >= xs[2] {
					continue
				}
				for ci := 0; ci < cinG; ci++ {
					x := ins[0](((oc[0]*xs[1]+ih)*xs[2]+iw)*xs[3] + grp*cinG + ci)
					sum += x * ins[1](((oc[3]*ws[1]+kh)*ws[2]+kw)*ws[3]+ci)
				}
			}
		}
		return sum + 1
	case n.Op == graph.FullyConnected:
		k := g.Tensors[n.Inputs[1]].Shape[1]
		nOut := g.Tensors[n.Inputs[1]].Shape[0]
		r, j := o/nOut, o%nOut
		var sum int64
		for i := 0; i < k; i++ {
			sum += ins[0](r*k+i) * ins[1](j*k+i)
		}
		return sum
	case n.Op == graph.MaxPool2D || n.Op == graph.AvgPool2D:
		at := n.Attrs.(*graph.PoolAttrs)
		xs := shape(0)
		oc := coords(o, ys)
		var sum, cnt int64
		best := int64(-1 << 62)
		for kh := 0; kh < at.Kernel[0]; kh++ {
			ih := oc[1]*at.Stride[0] - at.Pad.Top + kh
			for kw := 0; kw < at.Kernel[1]; kw++ {
				iw := oc[2]*at.Stride[1] - at.Pad.Left + kw
				if ih < 0 || ih >= xs[1] || iw < 0 || iw >= xs[2] {
					continue
				}
				v := ins[0](((oc[0]*xs[1]+ih)*xs[2]+iw)*xs[3] + oc[3])
				sum, cnt, best = sum+v, cnt+1, max(best, v)
			}
		}
		if n.Op == graph.MaxPool2D {
			return best
		}
		return sum / max(cnt, 1)
	case n.Op == graph.Mean:
		xs := shape(0)
		oc := coords(o, ys)
		var sum int64
		for h := 0; h < xs[1]; h++ {
			for w := 0; w < xs[2]; w++ {
				sum += ins[0](((oc[0]*xs[1]+h)*xs[2]+w)*xs[3] + oc[3])
			}
		}
		return sum / int64(xs[1]*xs[2])
	case n.Op == graph.Softmax:
		c := ys[len(ys)-1]
		row := o / c
		m := int64(-1 << 62)
		for i := 0; i < c; i++ {
			m = max(m, ins[0](row*c+i))
		}
		return ins[0](o) - m
	case n.Op == graph.Concat:
		at := n.Attrs.(*graph.ConcatAttrs)
		oc := coords(o, ys)
		for i := range n.Inputs {
			s := shape(i)
			if oc[at.Axis] < s[at.Axis] {
				return ins[i](broadcastIndex(oc, s))
			}
			oc[at.Axis] -= s[at.Axis]
		}
	}
	t.Fatalf("simulator: op %s not supported", n.Op)
	return 0
}

// simulate checks plan p of g; kernel is the Options.Scratch the plan used.
func simulate(t testing.TB, g *graph.Graph, p *Plan, kernel func(*graph.Node) int) {
	t.Helper()
	es := func(name string) int { return g.Tensors[name].DType.Size() }
	numel := func(name string) int { return g.Tensors[name].NumElements() }
	// The reference run.
	ref := map[string][]int64{}
	for _, in := range g.Inputs {
		v := make([]int64, numel(in))
		for i := range v {
			v[i] = trunc(int64(nameHash(fmt.Sprint(in, i))%256-128), es(in))
		}
		ref[in] = v
	}
	refAcc := func(name string) acc {
		if g.Tensors[name].IsConst() {
			return constAcc(name)
		}
		v := ref[name]
		return func(i int) int64 { return v[i] }
	}
	for _, ni := range p.Order {
		n := g.Nodes[ni]
		var ins []acc
		for _, in := range n.Inputs {
			if in != "" {
				ins = append(ins, refAcc(in))
			}
		}
		out := n.Outputs[0]
		v := make([]int64, numel(out))
		for o := range v {
			v[o] = trunc(outElem(t, g, n, ins, o), es(out))
		}
		ref[out] = v
	}
	// The arena run.
	arena := make([]byte, p.ArenaBytes)
	for i := range arena {
		arena[i] = 0xEE
	}
	own := map[string][]byte{} // tensors outside the arena
	var store func(name string) view
	store = func(name string) view {
		b := p.Buffer(name)
		if b == nil {
			t.Fatalf("no buffer for %q", name)
		}
		if b.Offset >= 0 {
			return view{arena, b.Offset, numel(name), es(name)}
		}
		if b.AliasOf != "" {
			v := store(b.AliasOf)
			return view{v.buf, v.off, numel(name), es(name)}
		}
		if own[name] == nil {
			own[name] = make([]byte, b.Size)
		}
		return view{own[name], 0, numel(name), es(name)}
	}
	arenaAcc := func(name string) acc {
		if g.Tensors[name].IsConst() {
			return constAcc(name)
		}
		return store(name).get
	}
	check := func(name, when string) {
		v := store(name)
		for i, want := range ref[name] {
			if got := v.get(i); got != want {
				t.Fatalf("%s: tensor %q element %d is %d, want %d (%s)\n%s", g.Name, name, i, got, want, when, p.Table())
			}
		}
	}
	for _, in := range g.Inputs {
		v := store(in)
		for i, x := range ref[in] {
			v.set(i, x)
		}
	}
	scratchOf := map[string]Buffer{}
	for _, s := range p.Scratch {
		scratchOf[s.Node] = s
	}
	for step, ni := range p.Order {
		n := g.Nodes[ni]
		when := fmt.Sprintf("before node %q (%s) at step %d", n.Name, n.Op, step)
		var ins []acc
		for _, in := range n.Inputs {
			if in == "" {
				continue
			}
			if !g.Tensors[in].IsConst() {
				check(in, when)
			}
			ins = append(ins, arenaAcc(in))
		}
		var sc view
		if s, ok := scratchOf[n.Name]; ok {
			for i := s.Offset; i < s.Offset+s.Size; i++ {
				arena[i] = 0xA5
			}
			k := 0
			if kernel != nil {
				k = roundUp(kernel(n), p.Align)
			}
			sc = view{arena, s.Offset + k, 0, 0}
		}
		out := n.Outputs[0]
		y := store(out)
		if p.InPlace[n.Name] {
			runInPlace(t, g, n, ins, y, sc)
		} else if b := p.Buffer(out); b.AliasOf == "" {
			vals := make([]int64, y.n)
			for o := range vals {
				vals[o] = outElem(t, g, n, ins, o)
			}
			for o, x := range vals {
				y.set(o, x)
			}
		}
		check(out, fmt.Sprintf("right after node %q (%s) at step %d", n.Name, n.Op, step))
	}
	for _, o := range g.Outputs {
		check(o, "at the end")
	}
}

// runInPlace runs n over its first input, in the loop order InPlaceLoop names.
func runInPlace(t testing.TB, g *graph.Graph, n *graph.Node, ins []acc, y view, sc view) {
	loop, _ := InPlaceLoop(g, n)
	x := g.Tensors[n.Inputs[0]]
	ys := g.Tensors[n.Outputs[0]].Shape
	sc.es = y.es
	with := func(redirect func(i int) (int64, bool)) []acc {
		r := slices.Clone(ins)
		orig := ins[0]
		r[0] = func(i int) int64 {
			if v, ok := redirect(i); ok {
				return v
			}
			return orig(i)
		}
		return r
	}
	switch loop {
	case "elementwise":
		for o := 0; o < y.n; o++ {
			y.set(o, outElem(t, g, n, ins, o))
		}
	case "depthwise-channel":
		c := x.Shape[3]
		inCh := x.Shape[0] * x.Shape[1] * x.Shape[2]
		outCh := ys[0] * ys[1] * ys[2]
		for ch := 0; ch < c; ch++ {
			if outCh <= inCh { // compute the output channel into scratch, then store it
				for q := 0; q < outCh; q++ {
					sc.set(q, outElem(t, g, n, ins, q*c+ch))
				}
				for q := 0; q < outCh; q++ {
					y.set(q*c+ch, sc.get(q))
				}
			} else { // copy the input channel in, compute straight into the arena
				for q := 0; q < inCh; q++ {
					sc.set(q, ins[0](q*c+ch))
				}
				r := with(func(i int) (int64, bool) {
					if i%c == ch {
						return sc.get(i / c), true
					}
					return 0, false
				})
				for q := 0; q < outCh; q++ {
					y.set(q*c+ch, outElem(t, g, n, r, q*c+ch))
				}
			}
		}
	case "pointwise-forward", "pointwise-backward":
		cin, cout := x.Shape[3], ys[3]
		pixels := x.NumElements() / cin
		for k := 0; k < pixels; k++ {
			p := k
			if loop == "pointwise-backward" {
				p = pixels - 1 - k
			}
			if cin <= cout { // copy the input pixel in
				for ci := 0; ci < cin; ci++ {
					sc.set(ci, ins[0](p*cin+ci))
				}
				r := with(func(i int) (int64, bool) {
					if i/cin == p {
						return sc.get(i % cin), true
					}
					return 0, false
				})
				for co := 0; co < cout; co++ {
					y.set(p*cout+co, outElem(t, g, n, r, p*cout+co))
				}
			} else { // compute the output pixel into scratch, then store it
				for co := 0; co < cout; co++ {
					sc.set(co, outElem(t, g, n, ins, p*cout+co))
				}
				for co := 0; co < cout; co++ {
					y.set(p*cout+co, sc.get(co))
				}
			}
		}
	default:
		t.Fatalf("node %q runs in place but InPlaceLoop says %q", n.Name, loop)
	}
}

// TestSimulateRandom runs random graphs in their planned arenas.
func TestSimulateRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	count := 400
	if testing.Short() {
		count = 150
	}
	for i := range count {
		g := randomGraph(rng)
		g.Name = fmt.Sprintf("random%d", i)
		opt := DefaultOptions()
		opt.Algorithm = Algorithms[rng.IntN(len(Algorithms))]
		opt.IOInArena = rng.IntN(4) != 0
		opt.OrderSearch = rng.IntN(2) == 0
		opt.Align = []int{4, 16}[rng.IntN(2)]
		if rng.IntN(3) == 0 {
			opt.Scratch = func(n *graph.Node) int { return nameHash(n.Name) % 100 }
		}
		p := mustPlan(t, g, opt)
		simulate(t, g, p, opt.Scratch)
	}
}

// TestSimulateMLPerf runs the four MLPerf Tiny graphs in their planned arenas
// (every in-place rule on; and with inputs and outputs outside).
func TestSimulateMLPerf(t *testing.T) {
	for _, c := range mlperfCases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && (c.name == "vww" || c.name == "ic") {
				t.Skip("skipping the larger models in -short mode")
			}
			g := loadMLPerf(t, c)
			simulate(t, g, mustPlan(t, g, DefaultOptions()), nil)
			opt := DefaultOptions()
			opt.IOInArena = false
			simulate(t, g, mustPlan(t, g, opt), nil)
		})
	}
}
