// Package interp is mcugen's reference interpreter: it runs a graph.Graph on
// graph.Data values, op by op, written for clarity rather than speed. It is the
// oracle every later stage is checked against. Float kernels follow the ONNX
// operator definitions; integer kernels follow TFLite's reference kernels
// bit for bit (and ONNX's for its QLinear ops, see graph.RequantFloat).
package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// Kernel computes the outputs of one node from its input values. ins[i] is
// nil for an absent optional input. It returns one value per node output.
type Kernel func(g *graph.Graph, n *graph.Node, ins []*graph.Data) ([]*graph.Data, error)

// Class selects a kernel table: float kernels run when the node's first input
// is float32, integer kernels otherwise.
type Class uint8

const (
	FloatClass Class = iota
	IntClass
)

type key struct {
	op    graph.Op
	class Class
}

var kernels = map[key]Kernel{}

// Register installs the kernel for op and class. Registering twice panics, so
// two files never silently disagree about an op.
func Register(op graph.Op, class Class, k Kernel) {
	kk := key{op, class}
	if _, dup := kernels[kk]; dup {
		panic(fmt.Sprintf("interp: kernel for %s/%d registered twice", op, class))
	}
	kernels[kk] = k
}

// Supported reports whether a kernel exists for n given its first input's dtype.
func Supported(g *graph.Graph, n *graph.Node) bool {
	_, ok := kernels[key{n.Op, classOf(g, n)}]
	return ok
}

func classOf(g *graph.Graph, n *graph.Node) Class {
	if t := g.In(n, 0); t != nil && t.DType != graph.Float32 {
		return IntClass
	}
	return FloatClass
}

// Run executes g on inputs (keyed by graph input name) and returns the graph outputs.
func Run(g *graph.Graph, inputs map[string]*graph.Data) (map[string]*graph.Data, error) {
	vals, err := RunAll(g, inputs, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*graph.Data, len(g.Outputs))
	for _, name := range g.Outputs {
		out[name] = vals[name]
	}
	return out, nil
}

// Session runs a graph inference after inference, carrying its states
// (graph.State) from each one to the next as the generated code does;
// Run alone starts every inference from the states' initial values.
type Session struct {
	g     *graph.Graph
	state map[string]*graph.Data // by the state's In tensor
}

// NewSession starts a session of g with every state at its initial value.
func NewSession(g *graph.Graph) *Session {
	s := &Session{g: g}
	s.Reset()
	return s
}

// Reset puts every state back to its initial value.
func (s *Session) Reset() {
	s.state = map[string]*graph.Data{}
	for _, st := range s.g.States {
		s.state[st.In] = st.InitData(s.g.Tensors[st.In])
	}
}

// Run runs one inference on inputs (the application's, UserInputs) and
// returns every graph output, the states' next values included, which
// become the states for the next Run.
func (s *Session) Run(inputs map[string]*graph.Data) (map[string]*graph.Data, error) {
	vals, err := s.RunAll(inputs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*graph.Data, len(s.g.Outputs))
	for _, name := range s.g.Outputs {
		out[name] = vals[name]
	}
	return out, nil
}

// RunAll is Run returning every tensor's value (as RunAll does).
func (s *Session) RunAll(inputs map[string]*graph.Data) (map[string]*graph.Data, error) {
	all := inputs
	if len(s.g.States) > 0 {
		all = make(map[string]*graph.Data, len(inputs)+len(s.state))
		for k, v := range inputs {
			all[k] = v
		}
		for k, v := range s.state {
			all[k] = v
		}
	}
	vals, err := RunAll(s.g, all, nil)
	if err != nil {
		return nil, err
	}
	for _, st := range s.g.States {
		s.state[st.In] = vals[st.Out]
	}
	return vals, nil
}

// RunAll executes g and returns the value of every tensor (constants
// included). If visit is not nil it is called after each node.
func RunAll(g *graph.Graph, inputs map[string]*graph.Data, visit func(n *graph.Node, vals map[string]*graph.Data)) (map[string]*graph.Data, error) {
	vals := make(map[string]*graph.Data, len(g.Tensors))
	for name, t := range g.Tensors {
		if t.Data != nil {
			vals[name] = t.Data
		}
	}
	for _, name := range g.Inputs {
		d, ok := inputs[name]
		if !ok {
			if k := g.StateOf(name); k >= 0 {
				d, ok = g.States[k].InitData(g.Tensors[name]), true
			}
		}
		if !ok {
			return nil, fmt.Errorf("input %q: no value given", name)
		}
		t := g.Tensors[name]
		if d.DType != t.DType {
			return nil, fmt.Errorf("input %q: dtype %s, model wants %s", name, d.DType, t.DType)
		}
		if graph.NumElements(d.Shape) != t.NumElements() || d.Len() != t.NumElements() {
			return nil, fmt.Errorf("input %q: shape %v, model wants %v", name, d.Shape, t.Shape)
		}
		v := d.Clone()
		v.Shape = append([]int(nil), t.Shape...)
		vals[name] = v
	}
	for _, n := range g.Nodes {
		k, ok := kernels[key{n.Op, classOf(g, n)}]
		if !ok {
			return nil, fmt.Errorf("node %q (%s): no reference kernel for this op and dtype", n.Name, n.Op)
		}
		ins := make([]*graph.Data, len(n.Inputs))
		for i, name := range n.Inputs {
			if name == "" {
				continue
			}
			v, ok := vals[name]
			if !ok {
				return nil, fmt.Errorf("node %q (%s): input %q has no value yet", n.Name, n.Op, name)
			}
			ins[i] = v
		}
		outs, err := k(g, n, ins)
		if err != nil {
			return nil, fmt.Errorf("node %q (%s): %w", n.Name, n.Op, err)
		}
		if len(outs) != len(n.Outputs) {
			return nil, fmt.Errorf("node %q (%s): kernel gave %d outputs, node has %d", n.Name, n.Op, len(outs), len(n.Outputs))
		}
		for i, name := range n.Outputs {
			t := g.Tensors[name]
			if t != nil && graph.NumElements(t.Shape) != outs[i].Len() {
				return nil, fmt.Errorf("node %q (%s): output %q has %d elements, shape %v wants %d", n.Name, n.Op, name, outs[i].Len(), t.Shape, graph.NumElements(t.Shape))
			}
			vals[name] = outs[i]
		}
		if visit != nil {
			visit(n, vals)
		}
	}
	return vals, nil
}
