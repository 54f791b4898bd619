package tflite

import (
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// Resource variables: VAR_HANDLE names a variable, READ_VARIABLE and
// ASSIGN_VARIABLE read and write it, and CALL_ONCE runs an initializing
// subgraph on the first inference. A variable that the model reads before
// it assigns it carries its value from one inference to the next: it
// becomes a state (graph.State) whose next value is the last one assigned.
// The others need no memory between inferences: a variable only ever read
// is a constant, and one assigned before every read is a plain tensor.
//
// The value at start-up is the initializing subgraph's (constants assigned
// by CALL_ONCE's subgraph), else TFLite Micro's default: the value tensor's
// zero point, or 0. <prefix>_reset() goes back to it, as a freshly loaded
// model would start; TFLite Micro's Reset() gives the defaults and does not
// run CALL_ONCE again.
const (
	opCallOnce       = 129
	opVarHandle      = 142
	opReadVariable   = 143
	opAssignVariable = 144

	optCallOnce  = 103
	optVarHandle = 111
)

// variable is one resource variable of the model.
type variable struct {
	name string // shared_name, for messages and tensor names
	// in is the state's input, made by a read before any assignment.
	in *graph.Tensor
	// cur is the tensor holding the variable's value at this point of
	// the inference ("" before the first read or assignment).
	cur string
	// init is the value the initializing subgraph assigns (nil: none).
	init *graph.Data
	// dt, elems and quant are its type, fixed by the first read or
	// assignment.
	dt    graph.DType
	elems int
	quant *graph.Quant
	typed bool
}

// varKey identifies a variable as TFLite Micro does: container and
// shared_name.
func varKey(o table) (string, string) {
	container, shared := o.str(0), o.str(1)
	return container + "\x00" + shared, shared
}

// resourceOp imports one of the four operators.
func (c *opctx) resourceOp() error {
	d := c.d
	if d.vars == nil {
		d.vars, d.handles = map[string]*variable{}, map[int]string{}
	}
	switch c.code {
	case opVarHandle:
		o, err := c.options(optVarHandle)
		if err != nil {
			return err
		}
		if len(c.outs) != 1 || c.outs[0] < 0 {
			return c.errorf("VAR_HANDLE has one output, the handle")
		}
		key, name := varKey(o)
		if name == "" {
			return c.errorf("the variable has no shared_name")
		}
		if d.vars[key] == nil {
			d.vars[key] = &variable{name: name}
			d.varOrder = append(d.varOrder, key)
		}
		d.handles[int(c.outs[0])] = key
		return nil
	case opCallOnce:
		o, err := c.options(optCallOnce)
		if err != nil {
			return err
		}
		for _, v := range d.vars {
			if v.cur != "" {
				return c.errorf("CALL_ONCE after the model has used variable %q: the initializer must run first", v.name)
			}
		}
		return c.callOnce(int(o.i32(0, 0)))
	}
	v, err := c.handle(0)
	if err != nil {
		return err
	}
	if c.code == opAssignVariable {
		if len(c.ins) != 2 {
			return c.errorf("ASSIGN_VARIABLE takes a handle and a value")
		}
		val, err := c.in(1)
		if err != nil {
			return err
		}
		if err := v.check(c, val); err != nil {
			return err
		}
		v.cur = val.Name
		return nil
	}
	// READ_VARIABLE
	y, err := c.out(0)
	if err != nil {
		return err
	}
	if err := v.check(c, y); err != nil {
		return err
	}
	if v.cur == "" {
		v.in = &graph.Tensor{Name: d.g.UniqueName("variable/" + v.name), DType: y.DType, Shape: slices.Clone(y.Shape), Quant: y.Quant}
		d.g.AddTensor(v.in)
		v.cur = v.in.Name
	}
	c.emit(graph.Reshape, nil, []string{v.cur}, y)
	c.done = true
	return nil
}

// handle returns the variable whose handle is input i.
func (c *opctx) handle(i int) (*variable, error) {
	if i >= len(c.ins) || c.ins[i] < 0 {
		return nil, c.errorf("input %d (the variable's handle) is missing", i)
	}
	key, ok := c.d.handles[int(c.ins[i])]
	if !ok {
		return nil, c.errorf("input %d is not the output of a VAR_HANDLE", i)
	}
	return c.d.vars[key], nil
}

// check fixes the variable's type from its first value and requires every
// later value to agree: TFLite Micro copies the bytes of each.
func (v *variable) check(c *opctx, t *graph.Tensor) error {
	if !v.typed {
		v.dt, v.elems, v.quant, v.typed = t.DType, t.NumElements(), t.Quant, true
		if v.init != nil && (v.init.DType != v.dt || v.init.Len() != v.elems) {
			return c.errorf("variable %q: the initializer assigns %s of %d values, the model uses %s %v", v.name, v.init.DType, v.init.Len(), t.DType, t.Shape)
		}
		return nil
	}
	if t.DType != v.dt || t.NumElements() != v.elems {
		return c.errorf("variable %q is %s of %d values; %q is %s %v", v.name, v.dt, v.elems, t.Name, t.DType, t.Shape)
	}
	if !t.Quant.Equal(v.quant) {
		return c.errorf("variable %q: %q is quantized differently from the variable's other values", v.name, t.Name)
	}
	return nil
}

// callOnce evaluates the initializing subgraph k: VAR_HANDLEs and
// ASSIGN_VARIABLEs of constants, each giving a variable its initial value.
func (c *opctx) callOnce(k int) error {
	d := c.d
	if k <= 0 || k >= len(d.subgraphs) {
		return c.errorf("init subgraph %d: the model has %d subgraphs (and 0 is the main one)", k, len(d.subgraphs))
	}
	sub := &decoder{r: d.r, g: graph.New("init", "tflite"), codes: d.codes, customs: d.customs, buffers: d.buffers,
		names: map[int]string{}, dwNames: map[int]string{}, fileSize: map[string][]int{}}
	sg := d.subgraphs[k]
	sub.tensors = sg.tables(subgraphTensors, "tensor")
	ops := sg.tables(subgraphOperators, "operator")
	if err := d.check(); err != nil {
		return c.errorf("init subgraph %d: %v", k, err)
	}
	handles := map[int]string{}
	for i, op := range ops {
		oi := int(op.u32(operatorOpcodeIndex, 0))
		ins, outs := op.ints(operatorInputs), op.ints(operatorOutputs)
		if err := d.check(); err != nil {
			return c.errorf("init subgraph %d, operator %d: %v", k, i, err)
		}
		if oi < 0 || oi >= len(d.codes) {
			return c.errorf("init subgraph %d, operator %d: opcode index %d out of range", k, i, oi)
		}
		switch code := d.codes[oi]; code {
		case opVarHandle:
			if op.u8(operatorOptionsType, 0) != optVarHandle || len(outs) != 1 {
				return c.errorf("init subgraph %d, operator %d: a VAR_HANDLE without its options or output", k, i)
			}
			key, name := varKey(op.sub(operatorOptions, "builtin options"))
			if name == "" {
				return c.errorf("init subgraph %d, operator %d: the variable has no shared_name", k, i)
			}
			if d.vars[key] == nil {
				d.vars[key] = &variable{name: name}
				d.varOrder = append(d.varOrder, key)
			}
			handles[int(outs[0])] = key
		case opAssignVariable:
			if len(ins) != 2 {
				return c.errorf("init subgraph %d, operator %d: ASSIGN_VARIABLE takes a handle and a value", k, i)
			}
			key, ok := handles[int(ins[0])]
			if !ok {
				return c.errorf("init subgraph %d, operator %d: the handle is not a VAR_HANDLE's", k, i)
			}
			name, err := sub.tensor(int(ins[1]))
			if err != nil {
				return c.errorf("init subgraph %d, operator %d: %v", k, i, err)
			}
			t := sub.g.Tensors[name]
			if !t.IsConst() {
				return c.errorf("init subgraph %d, operator %d: variable %q is assigned a computed value; mcugen takes initializers that assign constants", k, i, d.vars[key].name)
			}
			d.vars[key].init = t.Data
		default:
			return c.errorf("init subgraph %d, operator %d: %s is not supported in an initializer (VAR_HANDLE and ASSIGN_VARIABLE of constants are)", k, i, OpName(code))
		}
	}
	return nil
}

// finishVariables runs after the main subgraph's operators: a variable
// read before it is assigned becomes a state whose next value is a copy
// of the last value assigned, or, never assigned, a constant.
func (d *decoder) finishVariables() {
	for _, key := range d.varOrder {
		v := d.vars[key]
		if v.in == nil {
			continue
		}
		init := v.init
		if init == nil {
			init = graph.NewData(v.in.DType, v.in.Shape)
			if v.in.Quant != nil {
				if _, zp := v.in.Quant.At(0); zp != 0 && v.in.DType != graph.Float32 {
					for i := range init.I {
						init.I[i] = int64(zp)
					}
				}
			}
		}
		init = init.Clone()
		init.Shape = slices.Clone(v.in.Shape)
		if v.cur == v.in.Name {
			// Read only: every read is the same constant.
			kept := d.g.Nodes[:0]
			for _, n := range d.g.Nodes {
				if n.Op == graph.Reshape && n.Inputs[0] == v.in.Name {
					d.g.Tensors[n.Outputs[0]].Data = init
					continue
				}
				kept = append(kept, n)
			}
			d.g.Nodes = kept
			delete(d.g.Tensors, v.in.Name)
			continue
		}
		next := &graph.Tensor{Name: d.g.UniqueName(v.in.Name + "/next"), DType: v.in.DType, Shape: slices.Clone(v.in.Shape), Quant: v.in.Quant}
		d.g.AddTensor(next)
		d.g.AddNode(&graph.Node{Name: next.Name, Op: graph.Reshape, Inputs: []string{v.cur}, Outputs: []string{next.Name}})
		d.states = append(d.states, graph.State{In: v.in.Name, Out: next.Name, Init: init})
	}
}

// isResourceOp reports whether code is one of the resource-variable
// operators (some have no outputs).
func isResourceOp(code int32) bool {
	return code == opVarHandle || code == opReadVariable || code == opAssignVariable || code == opCallOnce
}
