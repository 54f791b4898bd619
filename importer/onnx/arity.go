package onnx

import "fmt"

// How many inputs a standard operator takes, checked before its converter
// runs (review: an Add of one input became an identity, a Relu of three
// was taken, and a ReduceMean's axes input at opset 17, where that input
// does not exist, was ignored so that every axis was reduced). Operators
// not listed are checked by their converters alone.

// unaryOps take exactly one input at every opset.
var unaryOps = []string{
	"Abs", "Acos", "Acosh", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "Ceil",
	"Celu", "Cos", "Cosh", "DepthToSpace", "Elu", "Erf", "Exp", "Flatten", "Floor",
	"GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "HardSigmoid", "HardSwish",
	"Identity", "IsInf", "IsNaN", "LRN", "LeakyRelu", "Log", "LogSoftmax", "LpNormalization",
	"MeanVarianceNormalization", "Mish", "Neg", "Not", "Reciprocal", "Relu", "Round", "Selu",
	"Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Softmax", "Softplus",
	"Softsign", "SpaceToDepth", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Transpose",
}

// binaryOps take exactly two.
var binaryOps = []string{
	"Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal",
	"Greater", "GreaterOrEqual", "Less", "LessOrEqual", "MatMul", "Mod", "Mul", "Or",
	"PRelu", "Pow", "Sub", "Xor",
}

var fixedArity = func() map[string]int {
	m := map[string]int{"Where": 3, "BatchNormalization": 5, "InstanceNormalization": 3}
	for _, op := range unaryOps {
		m[op] = 1
	}
	for _, op := range binaryOps {
		m[op] = 2
	}
	return m
}()

// inputRange gives the fewest and most inputs op takes at opset, and
// whether the op is checked at all.
func inputRange(op string, opset int64) (lo, hi int, ok bool) {
	if n, ok := fixedArity[op]; ok {
		return n, n, true
	}
	// Inputs that opset v turned attributes into: one input before it.
	since := func(v int64, after int) (int, int, bool) {
		if opset >= v {
			return 1, after, true
		}
		return 1, 1, true
	}
	switch op {
	case "ReduceSum":
		return since(13, 2)
	case "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
		"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp":
		return since(18, 2)
	case "Unsqueeze":
		if opset >= 13 {
			return 2, 2, true // the axes became an input
		}
		return 1, 1, true
	case "Squeeze":
		return since(13, 2)
	case "Split":
		if opset < 2 {
			return 1, 2, true // Split-1 had an optional split input; 2 to 12 do not
		}
		return since(13, 2)
	case "Clip":
		return since(11, 3)
	case "Gemm":
		if opset < 11 {
			return 3, 3, true // C became optional at opset 11
		}
		return 2, 3, true
	case "Conv":
		return 2, 3, true
	case "Concat", "Sum", "Max", "Min", "Mean":
		return 1, -1, true
	}
	return 0, 0, false
}

// checkArity refuses a standard-domain node with too few or too many
// inputs. Trailing empty names (optional inputs left out) do not count.
func checkArity(n *Node, opset int64) error {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return nil
	}
	lo, hi, ok := inputRange(n.OpType, opset)
	if !ok {
		return nil
	}
	k := len(n.Input)
	for k > 0 && n.Input[k-1] == "" {
		k--
	}
	switch {
	case k < lo:
		return fmt.Errorf("%d input(s), where %s at opset %d takes %s", k, n.OpType, opset, arityText(lo, hi))
	case hi >= 0 && k > hi:
		return fmt.Errorf("%d inputs, where %s at opset %d takes %s", k, n.OpType, opset, arityText(lo, hi))
	case n.OpType == "Split" && opset < 2 && k == 2:
		return unsupportedf("Split-1's split input (opset 1; opsets 2 to 12 take the attribute)")
	}
	return nil
}

func arityText(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
