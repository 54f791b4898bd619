package onnx

import "github.com/mcugen/mcugen/graph"

type converter func(im *importer, c *nodeCtx) error

var converters = map[string]converter{
	"Identity":           convIdentity,
	"Dropout":            convDropout,
	"Constant":           convConstant,
	"Shape":              convShape,
	"Size":               convSize,
	"Gather":             convGather,
	"Cast":               convCast,
	"ConstantOfShape":    convConstantOfShape,
	"Range":              convRange,
	"Expand":             convExpand,
	"Add":                convBinary(graph.Add),
	"Sub":                convBinary(graph.Sub),
	"Mul":                convBinary(graph.Mul),
	"Div":                convBinary(graph.Div),
	"Max":                convBinary(graph.Maximum),
	"Min":                convBinary(graph.Minimum),
	"Sum":                convBinary(graph.Add),
	"Relu":               convUnary(graph.Relu),
	"Sigmoid":            convUnary(graph.Sigmoid),
	"Tanh":               convUnary(graph.Tanh),
	"HardSwish":          convUnary(graph.HardSwish),
	"LeakyRelu":          convLeakyRelu,
	"HardSigmoid":        convHardSigmoid,
	"Clip":               convClip,
	"Softmax":            convSoftmax,
	"Conv":               lift1D(convConv, 1),
	"Gemm":               convGemm,
	"MatMul":             convMatMul,
	"MaxPool":            lift1D(convPool(graph.MaxPool2D), 0),
	"AveragePool":        lift1D(convPool(graph.AvgPool2D), 0),
	"GlobalAveragePool":  lift1D(convGlobalPool(graph.Mean), 0),
	"GlobalMaxPool":      lift1D(convGlobalPool(graph.MaxPool2D), 0),
	"ReduceMean":         convReduceMean,
	"BatchNormalization": convBatchNorm,
	"Flatten":            convReshapeLike,
	"Reshape":            convReshapeLike,
	"Squeeze":            convReshapeLike,
	"Unsqueeze":          convReshapeLike,
	"Transpose":          convTranspose,
	"Concat":             convConcat,
	"Pad":                convPad,
	"Slice":              convSlice,
	"Split":              convSplit,
	"Resize":             resizeLowRank,
	"QuantizeLinear":     convQuantize,
	"DequantizeLinear":   convDequantize,
	"QLinearConv":        lift1D(convQLinearConv, 3),
	"QLinearMatMul":      convQLinearMatMul,
	"ConvInteger":        lift1D(convConvInteger, 1),
	"MatMulInteger":      convMatMulInteger,
}

// paramSlots lists, per op, the inputs that must be compile-time constants.
var paramSlots = map[string][]int{
	"BatchNormalization": {1, 2, 3, 4},
	"QuantizeLinear":     {1, 2},
	"DequantizeLinear":   {1, 2},
	"Conv":               {1, 2},
	"QLinearConv":        {1, 2, 3, 4, 5, 6, 7, 8},
	"QLinearMatMul":      {1, 2, 4, 5, 6, 7},
	"ConvInteger":        {1, 2, 3},
	"MatMulInteger":      {2, 3},
	"Reshape":            {1},
	"Pad":                {1, 2, 3},
	"Slice":              {1, 2, 3, 4},
	"Resize":             {1, 2, 3},
	"Clip":               {1, 2},
	"Squeeze":            {1},
	"Unsqueeze":          {1},
	"ReduceMean":         {1},
	"Split":              {1},
	"Expand":             {1},
	"ConstantOfShape":    {0},
	"Range":              {0, 1, 2},
	"Gather":             {1},
}

// ParamInputs lists the graph inputs of m that feed inputs the importer needs
// as constants (weights of BatchNormalization, quantization parameters,
// shapes, pads, ...). The ONNX backend tests feed such values as inputs;
// bind them with Options.Consts.
func ParamInputs(m *Model) []string {
	if m.Graph == nil {
		return nil
	}
	isInput := map[string]bool{}
	for _, vi := range m.Graph.Input {
		isInput[vi.Name] = true
	}
	isInit := map[string]bool{}
	for _, t := range m.Graph.Initializer {
		delete(isInput, t.Name)
		isInit[t.Name] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		for _, s := range paramSlots[n.OpType] {
			if n.OpType == "Gather" && len(n.Input) > 0 && isInit[n.Input[0]] {
				continue // a table lookup (embedding): the indices are the data
			}
			if s < len(n.Input) && isInput[n.Input[s]] && !seen[n.Input[s]] {
				seen[n.Input[s]] = true
				out = append(out, n.Input[s])
			}
		}
	}
	return out
}
