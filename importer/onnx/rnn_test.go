package onnx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/onnx"
)

// rnnCase is one recurrent layer for TestRecurrentAgainstReference: what
// the ONNX backend tests leave out (both directions, reverse, sequence
// lengths, clip, linear_before_reset, batch-first layout, non-default
// activations, initial state computed at run time).
type rnnCase struct {
	op            string // RNN, GRU, LSTM
	dir           string
	layout        int
	t, b, i, h    int
	acts          []string
	alphas, betas []float32
	clip          float32
	lbr           bool
	lens          []int
	bias, peep    bool
	h0, c0        bool
}

func (c rnnCase) gates() int {
	return map[string]int{"RNN": 1, "GRU": 3, "LSTM": 4}[c.op]
}

func (c rnnCase) dirs() int {
	if c.dir == "bidirectional" {
		return 2
	}
	return 1
}

func randData(r *rand.Rand, scale float64, shape ...int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = float32((r.Float64()*2 - 1) * scale)
	}
	return d
}

// refAct is the activation written from the ONNX operator definitions.
func refAct(name string, alpha, beta float64, x float64) float64 {
	switch name {
	case "Sigmoid":
		return 1 / (1 + math.Exp(-x))
	case "Tanh":
		return math.Tanh(x)
	case "Relu":
		return math.Max(x, 0)
	case "LeakyRelu":
		if x < 0 {
			return alpha * x
		}
		return x
	case "HardSigmoid":
		return math.Max(0, math.Min(1, alpha*x+beta))
	case "Affine":
		return alpha*x + beta
	case "ScaledTanh":
		return alpha * math.Tanh(beta*x)
	case "ThresholdedRelu":
		if x > alpha {
			return x
		}
		return 0
	case "Elu":
		if x < 0 {
			return alpha * (math.Exp(x) - 1)
		}
		return x
	case "Softsign":
		return x / (1 + math.Abs(x))
	case "Softplus":
		return math.Log(1 + math.Exp(x))
	}
	panic(name)
}

// reference computes Y, Y_h and Y_c in float64 from the operator
// definitions, ONNX's gate order and layouts, one sample and direction at
// a time.
func (c rnnCase) reference(x, w, r, bias, p, h0, c0 *graph.Data) (y, yh, yc []float64) {
	nd, g, H := c.dirs(), c.gates(), c.h
	acts := c.acts
	if acts == nil {
		acts = map[string][]string{"RNN": {"Tanh"}, "GRU": {"Sigmoid", "Tanh"}, "LSTM": {"Sigmoid", "Tanh", "Tanh"}}[c.op]
		if nd == 2 {
			acts = append(acts, acts...)
		}
	}
	// Constants consumed in order by the functions that take them.
	type fn struct {
		name        string
		alpha, beta float64
	}
	defaults := map[string][2]float64{"LeakyRelu": {0.01, 0}, "HardSigmoid": {0.2, 0.5}, "Affine": {1, 0}, "ScaledTanh": {1, 1}, "ThresholdedRelu": {1, 0}, "Elu": {1, 0}}
	takesBeta := map[string]bool{"HardSigmoid": true, "Affine": true, "ScaledTanh": true}
	var fns []fn
	ai, bi := 0, 0
	for _, a := range acts {
		f := fn{name: a}
		if d, ok := defaults[a]; ok {
			f.alpha, f.beta = d[0], d[1]
			if ai < len(c.alphas) {
				f.alpha = float64(c.alphas[ai])
				ai++
			}
			if takesBeta[a] && bi < len(c.betas) {
				f.beta = float64(c.betas[bi])
				bi++
			}
		}
		fns = append(fns, f)
	}
	na := len(fns) / nd
	xAt := func(t, b, k int) float64 {
		if c.layout == 1 {
			return float64(x.F[(b*c.t+t)*c.i+k])
		}
		return float64(x.F[(t*c.b+b)*c.i+k])
	}
	stAt := func(d *graph.Data, dir, b, k int) float64 {
		if d == nil {
			return 0
		}
		if c.layout == 1 {
			return float64(d.F[(b*nd+dir)*H+k])
		}
		return float64(d.F[(dir*c.b+b)*H+k])
	}
	y = make([]float64, c.t*nd*c.b*H)
	yh = make([]float64, nd*c.b*H)
	yc = make([]float64, nd*c.b*H)
	yAt := func(t, dir, b, k int) *float64 {
		if c.layout == 1 {
			return &y[((b*c.t+t)*nd+dir)*H+k]
		}
		return &y[((t*nd+dir)*c.b+b)*H+k]
	}
	stOut := func(s []float64, dir, b, k int) *float64 {
		if c.layout == 1 {
			return &s[(b*nd+dir)*H+k]
		}
		return &s[(dir*c.b+b)*H+k]
	}
	for dir := 0; dir < nd; dir++ {
		f := fns[dir*na : (dir+1)*na]
		act := func(j int, v float64, gate bool) float64 {
			if gate && c.clip > 0 {
				v = math.Max(-float64(c.clip), math.Min(float64(c.clip), v))
			}
			return refAct(f[j].name, f[j].alpha, f[j].beta, v)
		}
		// dot of row (gate, unit) of W with x_t, or of R with h.
		wx := func(gate, u, t, b int) float64 {
			s := 0.0
			for k := 0; k < c.i; k++ {
				s += float64(w.F[((dir*g+gate)*H+u)*c.i+k]) * xAt(t, b, k)
			}
			return s
		}
		rh := func(gate, u int, h []float64) float64 {
			s := 0.0
			for k := 0; k < H; k++ {
				s += float64(r.F[((dir*g+gate)*H+u)*H+k]) * h[k]
			}
			return s
		}
		bv := func(j int) float64 { // j indexes the 2*g*H biases
			if bias == nil {
				return 0
			}
			return float64(bias.F[dir*2*g*H+j])
		}
		for b := 0; b < c.b; b++ {
			h := make([]float64, H)
			cs := make([]float64, H)
			for k := range h {
				h[k], cs[k] = stAt(h0, dir, b, k), stAt(c0, dir, b, k)
			}
			n := c.t
			if c.lens != nil {
				n = c.lens[b]
			}
			for s := 0; s < n; s++ {
				t := s
				if c.dir == "reverse" || dir == 1 {
					t = n - 1 - s
				}
				nh := make([]float64, H)
				nc := make([]float64, H)
				switch c.op {
				case "RNN":
					for u := 0; u < H; u++ {
						nh[u] = act(0, wx(0, u, t, b)+rh(0, u, h)+bv(u)+bv(H+u), true)
					}
				case "GRU":
					z := make([]float64, H)
					rr := make([]float64, H)
					for u := 0; u < H; u++ {
						z[u] = act(0, wx(0, u, t, b)+rh(0, u, h)+bv(u)+bv(3*H+u), true)
						rr[u] = act(0, wx(1, u, t, b)+rh(1, u, h)+bv(H+u)+bv(4*H+u), true)
					}
					rhv := make([]float64, H)
					for k := range rhv {
						rhv[k] = rr[k] * h[k]
					}
					for u := 0; u < H; u++ {
						var pre float64
						if c.lbr {
							pre = wx(2, u, t, b) + rr[u]*(rh(2, u, h)+bv(5*H+u)) + bv(2*H+u)
						} else {
							pre = wx(2, u, t, b) + rh(2, u, rhv) + bv(2*H+u) + bv(5*H+u)
						}
						nh[u] = (1-z[u])*act(1, pre, true) + z[u]*h[u]
					}
				case "LSTM":
					pv := func(j, u int) float64 {
						if p == nil {
							return 0
						}
						return float64(p.F[dir*3*H+j*H+u])
					}
					for u := 0; u < H; u++ {
						gate := func(j int) float64 { return wx(j, u, t, b) + rh(j, u, h) + bv(j*H+u) + bv((4+j)*H+u) }
						i := act(0, gate(0)+pv(0, u)*cs[u], true)
						fg := act(0, gate(2)+pv(2, u)*cs[u], true)
						cc := act(1, gate(3), true)
						nc[u] = fg*cs[u] + i*cc
						o := act(0, gate(1)+pv(1, u)*nc[u], true)
						nh[u] = o * act(2, nc[u], false)
					}
				}
				h, cs = nh, nc
				for u := 0; u < H; u++ {
					*yAt(t, dir, b, u) = h[u]
				}
			}
			for u := 0; u < H; u++ {
				*stOut(yh, dir, b, u) = h[u]
				*stOut(yc, dir, b, u) = cs[u]
			}
		}
	}
	return y, yh, yc
}

func TestRecurrentAgainstReference(t *testing.T) {
	cases := []rnnCase{
		{op: "LSTM", dir: "bidirectional", t: 4, b: 2, i: 3, h: 5, bias: true, peep: true, h0: true, c0: true, clip: 0.6,
			acts: []string{"HardSigmoid", "Tanh", "Softsign", "Sigmoid", "ScaledTanh", "Tanh"}, alphas: []float32{0.3, 0.8}, betas: []float32{0.4, 1.2}},
		{op: "LSTM", dir: "forward", layout: 1, t: 5, b: 3, i: 2, h: 4, bias: true, peep: true, lens: []int{5, 2, 0}},
		{op: "LSTM", dir: "reverse", t: 3, b: 2, i: 4, h: 3, h0: true, lens: []int{1, 3}},
		{op: "GRU", dir: "reverse", layout: 1, t: 4, b: 2, i: 3, h: 4, bias: true, lbr: true, lens: []int{4, 2}, h0: true},
		{op: "GRU", dir: "bidirectional", t: 3, b: 2, i: 2, h: 3, bias: true, lbr: true, acts: []string{"Sigmoid", "Elu", "HardSigmoid", "Softplus"}, alphas: []float32{0.7}},
		{op: "GRU", dir: "forward", t: 4, b: 1, i: 3, h: 6, bias: true, clip: 0.5, h0: true},
		{op: "RNN", dir: "bidirectional", layout: 1, t: 3, b: 2, i: 3, h: 4, bias: true, lens: []int{3, 1},
			acts: []string{"Relu", "LeakyRelu"}, alphas: []float32{0.2}},
		{op: "RNN", dir: "forward", t: 6, b: 2, i: 2, h: 3, acts: []string{"Affine"}, alphas: []float32{0.5}, betas: []float32{0.1}, h0: true},
		{op: "RNN", dir: "reverse", t: 2, b: 3, i: 2, h: 2, acts: []string{"ThresholdedRelu"}, alphas: []float32{0.1}},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("%d_%s_%s", ci, c.op, c.dir), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			nd, g := c.dirs(), c.gates()
			bl := onnx.NewBuilder("rnn", 14, 1)
			xs := []int{c.t, c.b, c.i}
			st := []int{nd, c.b, c.h}
			if c.layout == 1 {
				xs, st = []int{c.b, c.t, c.i}, []int{c.b, nd, c.h}
			}
			x := randData(rng, 1.5, xs...)
			w := randData(rng, 0.8, nd, g*c.h, c.i)
			r := randData(rng, 0.6, nd, g*c.h, c.h)
			in := []string{bl.Input("x", graph.Float32, xs...), bl.Init("w", w), bl.Init("r", r), "", "", "", "", ""}
			var bias, p, h0, c0 *graph.Data
			if c.bias {
				bias = randData(rng, 0.5, nd, 2*g*c.h)
				in[3] = bl.Init("b", bias)
			}
			if c.lens != nil {
				l := graph.NewData(graph.Int32, []int{c.b})
				for k, v := range c.lens {
					l.I[k] = int64(v)
				}
				in[4] = bl.Init("lens", l)
			}
			feeds := map[string]*graph.Data{"x": x}
			if c.h0 {
				h0 = randData(rng, 0.9, st...)
				in[5] = bl.Input("h0", graph.Float32, st...)
				feeds["h0"] = h0
			}
			if c.c0 {
				c0 = randData(rng, 2.5, st...)
				in[6] = bl.Input("c0", graph.Float32, st...)
				feeds["c0"] = c0
			}
			if c.peep {
				p = randData(rng, 0.7, nd, 3*c.h)
				in[7] = bl.Init("p", p)
			}
			for len(in) > 3 && in[len(in)-1] == "" {
				in = in[:len(in)-1]
			}
			attrs := []*onnx.Attribute{onnx.IntAttr("hidden_size", int64(c.h)), onnx.StringAttr("direction", c.dir), onnx.IntAttr("layout", int64(c.layout))}
			if c.acts != nil {
				s := &onnx.Attribute{Name: "activations", Type: onnx.AttrStrings}
				for _, a := range c.acts {
					s.Strings = append(s.Strings, []byte(a))
				}
				attrs = append(attrs, s)
			}
			if c.alphas != nil {
				attrs = append(attrs, &onnx.Attribute{Name: "activation_alpha", Type: onnx.AttrFloats, Floats: c.alphas})
			}
			if c.betas != nil {
				attrs = append(attrs, &onnx.Attribute{Name: "activation_beta", Type: onnx.AttrFloats, Floats: c.betas})
			}
			if c.clip > 0 {
				attrs = append(attrs, onnx.FloatAttr("clip", c.clip))
			}
			if c.lbr {
				attrs = append(attrs, onnx.IntAttr("linear_before_reset", 1))
			}
			nout := 2
			if c.op == "LSTM" {
				nout = 3
			}
			outs := bl.NodeN(c.op, in, nout, attrs...)
			for _, o := range outs {
				bl.Output(o, graph.Float32)
			}
			gr, err := onnx.Import("rnn", bl.Model(), onnx.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := interp.Run(gr, feeds)
			if err != nil {
				t.Fatal(err)
			}
			wy, wyh, wyc := c.reference(x, w, r, bias, p, h0, c0)
			want := [][]float64{wy, wyh, wyc}
			for k := range gr.Outputs {
				gv := got[gr.Outputs[k]]
				if gv.Len() != len(want[k]) {
					t.Fatalf("output %d: %d values, want %d", k, gv.Len(), len(want[k]))
				}
				for j, v := range want[k] {
					if d := math.Abs(float64(gv.F[j]) - v); d > 2e-5*(1+math.Abs(v)) {
						t.Fatalf("output %d [%d] = %v, want %v (shape %v)", k, j, gv.F[j], v, gv.Shape)
					}
				}
			}
		})
	}
}

// TestRecurrentRefusals: malformed or unsupported recurrent nodes get one
// error naming the problem, never a panic.
func TestRecurrentRefusals(t *testing.T) {
	type bad struct {
		name, want string
		build      func(b *onnx.Builder) []string
		attrs      []*onnx.Attribute
		op         string
	}
	w := func(b *onnx.Builder, g, h, in int) string { return b.Rand("w", 0.5, 1, g*h, in) }
	r := func(b *onnx.Builder, g, h int) string { return b.Rand("r", 0.5, 1, g*h, h) }
	cases := []bad{
		{name: "runtime weights", op: "LSTM", want: "must be a constant", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), b.Input("w", graph.Float32, 1, 8, 3), r(b, 4, 2)}
		}},
		{name: "W rows", op: "GRU", want: "W of shape", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 4, 2, 3), r(b, 3, 2)}
		}},
		{name: "input size", op: "RNN", want: "W of shape", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 4), w(b, 1, 2, 3), r(b, 1, 2)}
		}},
		{name: "X rank", op: "RNN", want: "want [seq_length", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 3), w(b, 1, 2, 3), r(b, 1, 2)}
		}},
		{name: "activation", op: "RNN", want: "activation \"Gelu\" is not supported", attrs: []*onnx.Attribute{{Name: "activations", Type: onnx.AttrStrings, Strings: [][]byte{[]byte("Gelu")}}},
			build: func(b *onnx.Builder) []string {
				return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 1, 2, 3), r(b, 1, 2)}
			}},
		{name: "activation count", op: "GRU", want: "1 activations: want 2", attrs: []*onnx.Attribute{{Name: "activations", Type: onnx.AttrStrings, Strings: [][]byte{[]byte("Tanh")}}},
			build: func(b *onnx.Builder) []string {
				return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 3, 2, 3), r(b, 3, 2)}
			}},
		{name: "sequence length", op: "RNN", want: "sequence length 5 outside [0, 2]", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 1, 2, 3), r(b, 1, 2), "", b.Ints("lens", 5)}
		}},
		{name: "initial state shape", op: "LSTM", want: "initial_h of shape", build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 4, 2, 3), r(b, 4, 2), "", "", b.Input("h0", graph.Float32, 1, 1, 3)}
		}},
		{name: "input_forget", op: "LSTM", want: "input_forget", attrs: []*onnx.Attribute{onnx.IntAttr("input_forget", 1)}, build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 4, 2, 3), r(b, 4, 2)}
		}},
		{name: "direction", op: "GRU", want: "direction \"sideways\"", attrs: []*onnx.Attribute{onnx.StringAttr("direction", "sideways")}, build: func(b *onnx.Builder) []string {
			return []string{b.Input("x", graph.Float32, 2, 1, 3), w(b, 3, 2, 3), r(b, 3, 2)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := onnx.NewBuilder("bad", 14, 1)
			outs := b.NodeN(c.op, c.build(b), 2, append([]*onnx.Attribute{onnx.IntAttr("hidden_size", 2)}, c.attrs...)...)
			b.Output(outs[1], graph.Float32)
			_, err := onnx.Import("bad", b.Model(), onnx.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestRecurrentGroupsPerLayer: two LSTM nodes with the same name (ONNX does
// not require unique node names) keep apart quantization groups.
func TestRecurrentGroupsPerLayer(t *testing.T) {
	b := onnx.NewBuilder("two", 14, 2)
	var outs []string
	for i := 0; i < 2; i++ {
		x := b.Input(fmt.Sprintf("x%d", i), graph.Float32, 3, 1, 2)
		o := b.NodeN("LSTM", []string{x, b.Rand(fmt.Sprintf("w%d", i), 0.5, 1, 12, 2), b.Rand(fmt.Sprintf("r%d", i), 0.5, 1, 12, 3)}, 2, onnx.IntAttr("hidden_size", 3))
		outs = append(outs, o[1])
	}
	for _, n := range b.Model().Graph.Nodes {
		n.Name = "lstm"
	}
	for _, o := range outs {
		b.Output(o, graph.Float32)
	}
	g, err := onnx.Import("two", b.Model(), onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Each group's tensors all descend from one input.
	from := map[string]string{} // tensor -> the input it descends from
	for _, in := range g.Inputs {
		from[in] = in
	}
	for _, n := range g.Nodes {
		src := ""
		for _, i := range n.Inputs {
			if f := from[i]; f != "" {
				src = f
			}
		}
		for _, o := range n.Outputs {
			from[o] = src
		}
	}
	groups := map[string]string{}
	for name, tt := range g.Tensors {
		if tt.QuantGroup == "" {
			continue
		}
		if s, ok := groups[tt.QuantGroup]; ok && s != from[name] {
			t.Fatalf("group %q holds tensors of both layers (%s and %s)", tt.QuantGroup, s, from[name])
		}
		groups[tt.QuantGroup] = from[name]
	}
	if len(groups) == 0 {
		t.Fatal("no quantization groups")
	}
}
