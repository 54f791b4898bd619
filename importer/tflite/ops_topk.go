package tflite

import "github.com/mcugen/mcugen/graph"

const codeTopKV2 = 48

func init() { register((*opctx).topK, codeTopKV2) }

// topK maps TOPK_V2 (input, k; outputs values and int32 indices) to one
// graph.TopK node per output: the k largest along the last axis, sorted,
// the earlier of equal values first (TFLite's comparator). Quantized values
// are copied, so their output keeps the input's quantization.
func (c *opctx) topK(_ *graph.Node) error {
	x, err := c.in(0)
	if err != nil {
		return err
	}
	if len(x.Shape) == 0 {
		return c.errorf("input is a scalar")
	}
	if x.DType == graph.Int64 {
		return c.errorf("int64 input is not supported")
	}
	k, err := c.constInts(1, "k")
	if err != nil {
		return err
	}
	ax := len(x.Shape) - 1
	if len(k) != 1 || k[0] < 1 || k[0] > x.Shape[ax] {
		return c.errorf("k %v out of range for a last axis of %d", k, x.Shape[ax])
	}
	if len(c.outs) != 2 {
		return c.errorf("%d outputs, want 2 (values, indices)", len(c.outs))
	}
	for i := range 2 {
		out, err := c.out(i)
		if err != nil {
			return err
		}
		if i == 0 {
			if err := c.copyOK(x, out); err != nil {
				return err
			}
		} else if out.DType != graph.Int32 && out.DType != graph.Int64 {
			return c.errorf("indices output is %s, want int32", out.DType)
		}
		c.emit(graph.TopK, &graph.TopKAttrs{Axis: ax, K: k[0], Largest: true, Indices: i == 1}, []string{x.Name}, out)
	}
	c.done = true
	return nil
}
