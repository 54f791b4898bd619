package tflite

import "github.com/mcugen/mcugen/graph"

import (
	"fmt"
	"strings"
)

// Field ids of the tables read from the TFLite schema (schema.fbs). A union
// occupies two ids: its type, then its value.
const (
	modelVersion       = 0
	modelOperatorCodes = 1
	modelSubgraphs     = 2
	modelBuffers       = 4

	subgraphTensors   = 0
	subgraphInputs    = 1
	subgraphOutputs   = 2
	subgraphOperators = 3

	tensorShape        = 0
	tensorType         = 1
	tensorBuffer       = 2
	tensorName         = 3
	tensorQuantization = 4
	tensorSparsity     = 6
	tensorSignature    = 7 // shape_signature: -1 where a dimension is dynamic

	quantScale     = 2
	quantZeroPoint = 3
	quantDimension = 6

	opcodeDeprecatedBuiltin = 0
	opcodeCustom            = 1
	opcodeBuiltin           = 3

	operatorOpcodeIndex = 0
	operatorInputs      = 1
	operatorOutputs     = 2
	operatorOptionsType = 3
	operatorOptions     = 4
	operatorCustomOpts  = 5
	bufferData          = 0
	bufferOffset        = 1
	bufferSize          = 2
)

// TFLite tensor types (TensorType).
const (
	ttFloat32 = 0
	ttFloat16 = 1
	ttInt32   = 2
	ttUInt8   = 3
	ttInt64   = 4
	ttBool    = 6
	ttInt16   = 7
	ttInt8    = 9
	ttUInt64  = 12
	ttUInt32  = 15
	ttInt4    = 17
)

// Builtin operator codes used by the importer.
const (
	opAdd                   = 0
	opAveragePool2D         = 1
	opConcatenation         = 2
	opConv2D                = 3
	opDepthwiseConv2D       = 4
	opDequantize            = 6
	opFullyConnected        = 9
	opLogistic              = 14
	opMaxPool2D             = 17
	opMul                   = 18
	opRelu                  = 19
	opReluN1To1             = 20
	opRelu6                 = 21
	opReshape               = 22
	opSoftmax               = 25
	opCustom                = 32
	opPad                   = 34
	opTranspose             = 39
	opMean                  = 40
	opSub                   = 41
	opSqueeze               = 43
	opStridedSlice          = 45
	opTanh                  = 28
	opMaximum               = 55
	opMinimum               = 57
	opPadV2                 = 60
	opExpandDims            = 70
	opResizeNearestNeighbor = 97
	opLeakyRelu             = 98
	opQuantize              = 114
	opHardSwish             = 117
	opBatchMatMul           = 126
	opFloor                 = 8
	opExp                   = 47
	opArgMax                = 56
	opNeg                   = 59
	opSin                   = 66
	opLog                   = 73
	opSum                   = 74
	opSqrt                  = 75
	opRsqrt                 = 76
	opArgMin                = 79
	opReduceProd            = 81
	opReduceMax             = 82
	opReduceMin             = 89
	opSquare                = 92
	opAbs                   = 101
	opCeil                  = 104
	opCos                   = 108
	opElu                   = 111
	opRound                 = 116
	opTransposeConv         = 67
	opCast                  = 53
)

// floatMath are the element-wise TFLite operators that map to graph.Math on
// float32 tensors (their int8 forms have TFLite-specific arithmetic that
// mcugen does not reproduce, so they are refused).
var floatMath = map[int32]graph.MathFn{
	opFloor: graph.MathFloor, opExp: graph.MathExp, opNeg: graph.MathNeg, opSin: graph.MathSin,
	opLog: graph.MathLog, opSqrt: graph.MathSqrt, opRsqrt: graph.MathRsqrt, opSquare: graph.MathSquare,
	opAbs: graph.MathAbs, opCeil: graph.MathCeil, opCos: graph.MathCos, opElu: graph.MathElu,
	opRound: graph.MathRound,
}

// floatReduce are the TFLite reducers other than MEAN (float32 only).
var floatReduce = map[int32]graph.ReduceKind{
	opSum: graph.ReduceSum, opReduceProd: graph.ReduceProd, opReduceMax: graph.ReduceMax, opReduceMin: graph.ReduceMin,
}

// BuiltinOptions union type ids (the 1-based position in the union).
const (
	optConv2D                = 1
	optDepthwiseConv2D       = 2
	optPool2D                = 5
	optFullyConnected        = 8
	optSoftmax               = 9
	optConcatenation         = 10
	optAdd                   = 11
	optMul                   = 21
	optReducer               = 27
	optSub                   = 28
	optStridedSlice          = 32
	optResizeNearestNeighbor = 74
	optLeakyRelu             = 75
	optBatchMatMul           = 101
	optTransposeConv         = 49
)

// builtinNames are the BuiltinOperator enum names, by code.
var builtinNames = strings.Fields(`ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D
DEPTH_TO_SPACE DEQUANTIZE EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP
L2_NORMALIZATION L2_POOL_2D LOCAL_RESPONSE_NORMALIZATION LOGISTIC LSH_PROJECTION LSTM
MAX_POOL_2D MUL RELU RELU_N1_TO_1 RELU6 RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH
SVDF TANH CONCAT_EMBEDDINGS SKIP_GRAM CALL CUSTOM EMBEDDING_LOOKUP_SPARSE PAD
UNIDIRECTIONAL_SEQUENCE_RNN GATHER BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB
DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE BIDIRECTIONAL_SEQUENCE_RNN EXP
TOPK_V2 SPLIT LOG_SOFTMAX DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM CAST PRELU MAXIMUM ARG_MAX
MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL LESS_EQUAL SELECT SLICE SIN TRANSPOSE_CONV
SPARSE_TO_DENSE TILE EXPAND_DIMS EQUAL NOT_EQUAL LOG SUM SQRT RSQRT SHAPE POW ARG_MIN
FAKE_QUANT REDUCE_PROD REDUCE_MAX PACK LOGICAL_OR ONE_HOT LOGICAL_AND LOGICAL_NOT UNPACK
REDUCE_MIN FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL FLOOR_MOD RANGE
RESIZE_NEAREST_NEIGHBOR LEAKY_RELU SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V UNIQUE CEIL
REVERSE_V2 ADD_N GATHER_ND COS WHERE RANK ELU REVERSE_SEQUENCE MATRIX_DIAG QUANTIZE
MATRIX_SET_DIAG ROUND HARD_SWISH IF WHILE NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5
SCATTER_ND SELECT_V2 DENSIFY SEGMENT_SUM BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES
CUMSUM CALL_ONCE BROADCAST_TO RFFT2D CONV_3D IMAG REAL COMPLEX_ABS HASHTABLE
HASHTABLE_FIND HASHTABLE_IMPORT HASHTABLE_SIZE REDUCE_ALL CONV_3D_TRANSPOSE VAR_HANDLE
READ_VARIABLE ASSIGN_VARIABLE BROADCAST_ARGS RANDOM_STANDARD_NORMAL BUCKETIZE
RANDOM_UNIFORM MULTINOMIAL GELU DYNAMIC_UPDATE_SLICE RELU_0_TO_1 UNSORTED_SEGMENT_PROD
UNSORTED_SEGMENT_MAX UNSORTED_SEGMENT_SUM ATAN2 UNSORTED_SEGMENT_MIN SIGN BITCAST
BITWISE_XOR RIGHT_SHIFT`)

// OpName is the BuiltinOperator name of a code (BUILTIN_<n> when unknown).
func OpName(code int32) string {
	if code >= 0 && int(code) < len(builtinNames) {
		return builtinNames[code]
	}
	return fmt.Sprintf("BUILTIN_%d", code)
}
