package graph

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRNNQuantGroups: the tensors an unrolled layer puts in one
// quantization group are the same value at different steps, so they come
// from the same op with the same attributes (a group that mixed a gate's
// input with its sigmoid would give the input the sigmoid's fixed
// parameters), and every step after the first has the same groups.
func TestRNNQuantGroups(t *testing.T) {
	const batch, in, hidden, steps = 2, 3, 4, 4
	konst := func(g *Graph, name string, shape ...int) string {
		return g.AddConst(name, NewData(Float32, shape)).Name
	}
	layers := map[string]func(g *Graph) *RNNLayer{
		"lstm": func(g *Graph) *RNNLayer {
			l := &RNNLayer{Kind: RNNLSTM, Clip: 2, CellClip: 3}
			for k := range l.P {
				l.P[k] = konst(g, fmt.Sprintf("p%d", k), hidden)
			}
			return l
		},
		"lstm_cifg_proj": func(g *Graph) *RNNLayer {
			l := &RNNLayer{Kind: RNNLSTM, Proj: konst(g, "proj", hidden, hidden), ProjClip: 1}
			return l
		},
		"lstm_ln_cifg_peep": func(g *Graph) *RNNLayer {
			l := &RNNLayer{Kind: RNNLSTM, CellClip: 3}
			for k := 1; k < 4; k++ {
				l.LN[k] = konst(g, fmt.Sprintf("ln%d", k), hidden)
			}
			for k := 1; k < 3; k++ {
				l.P[k] = konst(g, fmt.Sprintf("p%d", k), hidden)
			}
			return l
		},
		"lstm_ln": func(g *Graph) *RNNLayer {
			l := &RNNLayer{Kind: RNNLSTM}
			for k := range l.LN {
				l.LN[k] = konst(g, fmt.Sprintf("ln%d", k), hidden)
			}
			return l
		},
		"gru": func(*Graph) *RNNLayer { return &RNNLayer{Kind: RNNGRU} },
		"gru_lbr": func(g *Graph) *RNNLayer {
			return &RNNLayer{Kind: RNNGRU, LinearBeforeReset: true, RBh: konst(g, "rbh", hidden)}
		},
		"rnn": func(*Graph) *RNNLayer { return &RNNLayer{Kind: RNNSimple} },
	}
	for name, mk := range layers {
		t.Run(name, func(t *testing.T) {
			g := New(name, "test")
			l := mk(g)
			l.Batch, l.Hidden = batch, hidden
			for k := 0; k < l.Kind.Gates(); k++ {
				w := konst(g, fmt.Sprintf("w%d", k), hidden, in)
				if strings.Contains(name, "cifg") && k == 0 {
					w = ""
				}
				l.W = append(l.W, w)
				l.R = append(l.R, konst(g, fmt.Sprintf("r%d", k), hidden, hidden))
				l.B = append(l.B, konst(g, fmt.Sprintf("b%d", k), hidden))
			}
			acts, err := ParseRNNActs(l.Kind.DefaultActs(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.Acts = acts
			prod := map[string]*Node{}
			emit := func(op Op, ins []string, attrs any, shape []int, suffix string) string {
				out := g.AddTensor(&Tensor{Name: g.UniqueName(name + "_" + suffix), DType: Float32, Shape: shape})
				prod[out.Name] = g.AddNode(&Node{Name: out.Name, Op: op, Inputs: ins, Outputs: []string{out.Name}, Attrs: attrs})
				return out.Name
			}
			var xs []string
			order := make([]int, steps)
			for s := 0; s < steps; s++ {
				xs = append(xs, g.AddTensor(&Tensor{Name: fmt.Sprintf("x%d", s), DType: Float32, Shape: []int{batch, in}}).Name)
				order[s] = s
			}
			ys, h, _ := l.Run(g, emit, name, xs, "", "", []int{4, 2}, order)
			if len(ys) != steps || h == "" {
				t.Fatalf("%d outputs, final state %q", len(ys), h)
			}
			groups := map[string][]*Node{}
			perStep := map[int]map[string]bool{}
			for tn, n := range prod {
				q := g.Tensor(tn).QuantGroup
				if q == "" {
					t.Errorf("tensor %q has no quantization group", tn)
					continue
				}
				groups[q] = append(groups[q], n)
				var s int
				fmt.Sscanf(tn[len(name)+2:], "%d", &s)
				if perStep[s] == nil {
					perStep[s] = map[string]bool{}
				}
				perStep[s][q] = true
			}
			for q, ns := range groups {
				for _, n := range ns[1:] {
					if n.Op != ns[0].Op || !reflect.DeepEqual(n.Attrs, ns[0].Attrs) {
						t.Errorf("group %q holds %s %v (%s) and %s %v (%s)", q, ns[0].Op, ns[0].Attrs, ns[0].Name, n.Op, n.Attrs, n.Name)
					}
				}
			}
			// Step 2 and 3 run the same nodes (step 0 has no state, step 1 may
			// still mask every sample the same way).
			if !reflect.DeepEqual(perStep[2], perStep[3]) {
				t.Errorf("steps 2 and 3 have different groups:\n%v\n%v", perStep[2], perStep[3])
			}
		})
	}
}
