package graph

import (
	"fmt"
	"slices"
)

// State is a tensor carried from one inference to the next: a TFLite
// variable tensor (SVDF's activation state) or resource variable. Inside the
// graph it is a pair, graph input In (the value at the start of the
// inference) and graph output Out (its value at the end); both are in
// Inputs and Outputs so every pass, the planner and the kernels see plain
// I/O. The application never sees them: the generated code keeps the value
// in a static buffer that starts from Init, takes Out's value after each
// inference and goes back to Init on <prefix>_reset().
type State struct {
	In, Out string
	// Init is the value at start-up and after a reset; nil means zeros.
	Init *Data
}

// InitData is the state's value at start-up and after a reset, shaped as
// tensor t (In).
func (s State) InitData(t *Tensor) *Data {
	if s.Init != nil {
		d := s.Init.Clone()
		d.Shape = slices.Clone(t.Shape)
		return d
	}
	return NewData(t.DType, t.Shape)
}

// StateOf returns the index in g.States of the state whose In or Out is
// name, or -1.
func (g *Graph) StateOf(name string) int {
	for i, s := range g.States {
		if s.In == name || s.Out == name {
			return i
		}
	}
	return -1
}

// UserInputs are the graph inputs the application supplies: Inputs without
// the states' In tensors, in order.
func (g *Graph) UserInputs() []string {
	return g.withoutStates(g.Inputs, func(s State) string { return s.In })
}

// UserOutputs are the graph outputs the application reads: Outputs without
// the states' Out tensors, in order.
func (g *Graph) UserOutputs() []string {
	return g.withoutStates(g.Outputs, func(s State) string { return s.Out })
}

// withoutStates is names less those that are a state's tensor of the role
// role picks.
func (g *Graph) withoutStates(names []string, role func(State) string) []string {
	if len(g.States) == 0 {
		return names
	}
	var out []string
	for _, n := range names {
		if !slices.ContainsFunc(g.States, func(s State) bool { return role(s) == n }) {
			out = append(out, n)
		}
	}
	return out
}

// StateBytes is the static memory the states take (one copy of each).
func (g *Graph) StateBytes() int {
	n := 0
	for _, s := range g.States {
		if t := g.Tensors[s.In]; t != nil {
			n += t.NumElements() * t.DType.Size()
		}
	}
	return n
}

// validateStates checks that each state is an input/output pair of one
// dtype, shape and quantization, with an initial value that fits.
func validateStates(g *Graph) error {
	seen := map[string]bool{}
	for i, s := range g.States {
		if s.In == "" || s.Out == "" || s.In == s.Out {
			return fmt.Errorf("state %d: needs two distinct tensors (in %q, out %q)", i, s.In, s.Out)
		}
		if seen[s.In] || seen[s.Out] {
			return fmt.Errorf("state %d: tensor %q or %q belongs to another state", i, s.In, s.Out)
		}
		seen[s.In], seen[s.Out] = true, true
		if !slices.Contains(g.Inputs, s.In) {
			return fmt.Errorf("state %d: %q is not a graph input", i, s.In)
		}
		if !slices.Contains(g.Outputs, s.Out) {
			return fmt.Errorf("state %d: %q is not a graph output", i, s.Out)
		}
		// The application neither reads a state nor writes its next value:
		// each is a tensor of its own (a copy where the model shares one).
		if slices.Contains(g.Outputs, s.In) || slices.Contains(g.Inputs, s.Out) {
			return fmt.Errorf("state %d: %q or its next value %q is also an application input or output", i, s.In, s.Out)
		}
		in, out := g.Tensors[s.In], g.Tensors[s.Out]
		if in.DType != out.DType || !slices.Equal(in.Shape, out.Shape) {
			return fmt.Errorf("state %d: %q is %s %v but its next value %q is %s %v", i, s.In, in.DType, in.Shape, s.Out, out.DType, out.Shape)
		}
		if !in.Quant.Equal(out.Quant) {
			return fmt.Errorf("state %d: %q and its next value %q are quantized differently", i, s.In, s.Out)
		}
		if s.Init != nil && (s.Init.DType != in.DType || s.Init.Len() != in.NumElements()) {
			return fmt.Errorf("state %d: initial value is %s of %d elements, %q is %s %v", i, s.Init.DType, s.Init.Len(), s.In, in.DType, in.Shape)
		}
	}
	return nil
}
