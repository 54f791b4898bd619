package tflite

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// hybridOps are the operators TFLite runs with dynamic-range ("hybrid")
// kernels, a float32 activation in and out with int8 constant weights,
// each with the axis its weights' scales may run along: the output
// channels TFLite's per-channel hybrid kernels index them by, or -1 where
// they read a single scale. TFLite's converter writes such operators when
// it is asked to optimize without a representative dataset; TFLite Micro
// refuses them.
var hybridOps = map[int32]int{
	opFullyConnected: 0, opConv2D: 0, opDepthwiseConv2D: 3, opTransposeConv: 0, opEmbeddingLookup: 0,
	opBatchMatMul: -1, opSVDF: -1, opLSTM: -1, opUnidirectionalSequenceLSTM: -1, opBidirectionalSequenceLSTM: -1,
	opRNN: -1, opUnidirectionalSequenceRNN: -1, opBidirectionalSequenceRNN: -1,
}

const opEmbeddingLookup = 7

// dequantizeHybrid reads a hybrid operator's int8 constant inputs as
// float32 constants, scale·q, so that the operator imports as its float
// form; DecodeWith notes the model as dynamic-range quantized. What
// TFLite's hybrid kernels would read otherwise is refused: a zero point
// (they take it to be 0), scales along another axis than the one they
// index (per-channel scales where they read one). Variable tensors (an
// SVDF's state) are left to the operator. Each weight tensor is
// dequantized once, however many operators read it.
func (c *opctx) dequantizeHybrid() error {
	axis, ok := hybridOps[c.code]
	if !ok || len(c.outs) == 0 || !c.fileType(c.outs[0], ttFloat32) {
		return nil
	}
	// The activation: the ids of a lookup are integers, its table the weights.
	act := 0
	switch c.code {
	case opTransposeConv:
		act = 2
	case opEmbeddingLookup:
		act = -1
	}
	if act >= 0 && (act >= len(c.ins) || !c.fileType(c.ins[act], ttFloat32)) {
		return nil
	}
	if err := c.d.check(); err != nil {
		return err
	}
	hybrid := false
	for i, ti := range c.ins {
		if ti < 0 || i == act || int(ti) >= len(c.d.tensors) || c.d.tensors[ti].boolean(tensorIsVariable) {
			continue
		}
		x, err := c.in(i)
		if err != nil {
			return err
		}
		if !x.IsConst() || x.DType != graph.Int8 {
			continue
		}
		if x.Quant == nil {
			return c.errorf("integer weights %q without a scale in a float operator", x.Name)
		}
		for _, z := range x.Quant.ZeroPoint {
			if z != 0 {
				return c.errorf("integer weights %q with zero point %d in a float operator (TFLite's hybrid kernels take it to be 0)", x.Name, z)
			}
		}
		if x.Quant.PerAxis() && (axis < 0 || x.Quant.Axis != axis) {
			if axis < 0 {
				return c.errorf("integer weights %q with %d scales: TFLite's hybrid %s reads one", x.Name, len(x.Quant.Scale), c.name)
			}
			return c.errorf("integer weights %q with scales along dimension %d: TFLite's hybrid %s reads them along dimension %d", x.Name, x.Quant.Axis, c.name, axis)
		}
		name, ok := c.d.dequantized[int(ti)]
		if !ok {
			name = c.d.g.UniqueName(x.Name + "/dequantized")
			c.d.g.AddTensor(&graph.Tensor{Name: name, DType: graph.Float32, Shape: slices.Clone(x.Shape), Data: dequantized(x, x.Shape)})
			if c.d.dequantized == nil {
				c.d.dequantized = map[int]string{}
			}
			c.d.dequantized[int(ti)] = name
		}
		if c.subst == nil {
			c.subst = map[int]string{}
		}
		c.subst[i] = name
		hybrid = true
	}
	if hybrid {
		c.d.hybrid = append(c.d.hybrid, fmt.Sprintf("operator %d, %s", c.index, c.name))
	}
	return nil
}

// fileType says whether tensor ti has TFLite type tt in the file.
func (c *opctx) fileType(ti int32, tt int8) bool {
	return ti >= 0 && int(ti) < len(c.d.tensors) && c.d.tensors[ti].i8(tensorType, 0) == tt
}

// dropDequantizedOriginals removes the file's integer weights of hybrid
// operators that no node reads (every reader took the float copy), and
// the spare layouts no node reads, so that the graph's constants are what
// the model computes with.
func (d *decoder) dropDequantizedOriginals() {
	used := map[string]bool{}
	for _, n := range d.g.Nodes {
		for _, s := range n.Inputs {
			used[s] = true
		}
	}
	for _, s := range d.g.Outputs {
		used[s] = true
	}
	for _, name := range d.spare {
		if !used[name] {
			delete(d.g.Tensors, name)
		}
	}
	for ti := range d.dequantized {
		if name, ok := d.names[ti]; ok && !used[name] && d.g.Tensors[name] != nil && d.g.Tensors[name].IsConst() {
			delete(d.g.Tensors, name)
			delete(d.names, ti)
		}
	}
}
