package tflite

import (
	"fmt"
	"slices"

	"github.com/mcugen/mcugen/graph"
)

// hybridOps are the operators TFLite runs with dynamic-range ("hybrid")
// kernels: a float32 output from int8 constant weights. TFLite's converter
// writes them when it is asked to optimize without a representative
// dataset; TFLite Micro refuses them.
var hybridOps = []int32{opFullyConnected, opConv2D, opDepthwiseConv2D, opTransposeConv, opBatchMatMul,
	opEmbeddingLookup, opSVDF, opLSTM, opUnidirectionalSequenceLSTM, opBidirectionalSequenceLSTM,
	opRNN, opUnidirectionalSequenceRNN, opBidirectionalSequenceRNN}

const opEmbeddingLookup = 7

// dequantizeHybrid reads a hybrid operator's int8 constant inputs as
// float32 constants, scale·q (TFLite's hybrid kernels take the weights'
// zero point to be 0, so one that is not is refused), so that the
// operator imports as its float form; DecodeWith notes the model as
// dynamic-range quantized. Each weight tensor is dequantized once,
// however many operators read it.
func (c *opctx) dequantizeHybrid() error {
	if !slices.Contains(hybridOps, c.code) || len(c.outs) == 0 || c.outs[0] < 0 || int(c.outs[0]) >= len(c.d.tensors) {
		return nil
	}
	if c.d.tensors[c.outs[0]].i8(tensorType, 0) != ttFloat32 {
		return nil
	}
	if err := c.d.check(); err != nil {
		return err
	}
	hybrid := false
	for i, ti := range c.ins {
		if ti < 0 {
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
			return c.errorf("int8 weights %q without a scale in a float operator", x.Name)
		}
		for _, z := range x.Quant.ZeroPoint {
			if z != 0 {
				return c.errorf("int8 weights %q with zero point %d in a float operator (TFLite's hybrid kernels take it to be 0)", x.Name, z)
			}
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
