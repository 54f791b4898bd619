package graph

// Op names a canonical operation. Layout is NHWC for every 4-D activation.
type Op string

// The canonical op set. Inputs are listed as (name: shape) in order; [opt]
// marks an optional input that may be "".
const (
	// Conv2D: X [N,H,W,Cin], W [Cout,KH,KW,Cin/Group], B [Cout] [opt] -> Y [N,OH,OW,Cout].
	// Depthwise is Group == Cin (with Cout = Cin*multiplier). Attrs: *Conv2DAttrs.
	Conv2D Op = "Conv2D"
	// ConvTranspose2D: the transposed (fractionally strided) convolution,
	// NHWC; weights [Cout, KH, KW, Cin/Group] as Conv2D's; bias optional.
	// Attrs *ConvTransposeAttrs.
	ConvTranspose2D Op = "ConvTranspose2D"
	// FullyConnected: X [..., K], W [N,K], B [N] [opt] -> Y [rows, N] or [..., N] with KeepDims.
	FullyConnected Op = "FullyConnected"
	// BatchMatMul: A [..., M, K], B [..., K, N] with numpy broadcasting of the batch dims.
	BatchMatMul Op = "BatchMatMul"

	// Element-wise binary ops with numpy broadcasting. Attrs: *BinaryAttrs (may be nil).
	Add     Op = "Add"
	Sub     Op = "Sub"
	Mul     Op = "Mul"
	Div     Op = "Div"
	Maximum Op = "Maximum"
	Minimum Op = "Minimum"
	// SquaredDifference: (x − y)² element-wise with broadcasting, in
	// TFLite Micro's int8 arithmetic (each input less its zero point,
	// shifted left by 7, rescaled to twice the larger input scale; the
	// difference squared in int32 and requantized) or its int16 one (zero
	// points 0, no shift). Float SQUARED_DIFFERENCE imports as Sub and Mul.
	SquaredDifference Op = "SquaredDifference"
	// Pow: x^y element-wise with broadcasting (float32).
	Pow Op = "Pow"
	// Mod: the remainder of a / b with broadcasting; Attrs *ModAttrs (nil: integer
	// remainder with the divisor's sign, as Python's %).
	Mod Op = "Mod"
	// Compare: a bool tensor, a op b element-wise with broadcasting.
	// Attrs *CompareAttrs.
	Compare Op = "Compare"
	// Logic: And, Or, Xor of two bool tensors (broadcast) or Not of one.
	// Attrs *LogicAttrs.
	Logic Op = "Logic"
	// Where: cond ? x : y element-wise with broadcasting over all three.
	Where Op = "Where"
	// CumSum: running sums along Axis. Attrs *CumSumAttrs.
	CumSum Op = "CumSum"
	// Gather: elements of input 0 chosen by the run-time integer indices of
	// input 1 along Axis (ONNX Gather, or GatherElements with Elements).
	// Attrs *GatherAttrs.
	Gather Op = "Gather"
	// Scatter: a copy of input 0 (data) with the elements or slices that
	// input 1's run-time integer indices address replaced by, or combined
	// with, input 2 (updates): ONNX ScatterElements (and Scatter) and
	// ScatterND, TFLite SCATTER_ND. Attrs *ScatterAttrs.
	Scatter Op = "Scatter"
	// DFT: discrete Fourier transforms along one axis of a real ([..., 1])
	// or complex ([..., 2]) signal, or, framed, a short-time transform
	// (ONNX DFT and STFT); the output is complex, [..., 2]. Input 1, if
	// given, is the frames' window. Attrs *DFTAttrs.
	DFT Op = "DFT"
	// Cast: each element converted to the output's type (Attrs *CastAttrs):
	// CastData's rules (floats to integers truncate and saturate, NaN is
	// 0; integers wrap; anything non-zero is true).
	Cast Op = "Cast"

	// Pools over H and W of NHWC. Attrs: *PoolAttrs.
	MaxPool2D Op = "MaxPool2D"
	AvgPool2D Op = "AvgPool2D"
	// MaxPoolIndices is ONNX MaxPool's second output (Indices): for each
	// element of the MaxPool2D of the same window, the position of the
	// window's maximum as an int64 flat index into the input read in ONNX's
	// layout, [N, C, H, W] (n·C·H·W + c·H·W + h·W + w; with ColumnMajor,
	// n·C·H·W + c·H·W + w·H + h). The taps are scanned row by row; the
	// first inside the input is taken and a later one only if strictly
	// greater (so the first of equal maxima, and NaN only when first);
	// padding is never chosen, and a window wholly in the padding gives 0.
	// Float32 input; the output is NHWC [N, OH, OW, C] as MaxPool2D's.
	// Attrs *MaxPoolIndicesAttrs.
	MaxPoolIndices Op = "MaxPoolIndices"
	// Mean over Axes (no axes: every axis). Attrs: *MeanAttrs.
	Mean Op = "Mean"
	// Reduce: a sum, product, max, min or norm over Axes. Attrs: *ReduceAttrs.
	Reduce Op = "Reduce"
	// ArgMax: the index of the largest (or, with Min, smallest) element
	// along Axis, as int32 or int64 (the output tensor's dtype). Attrs *ArgAttrs.
	ArgMax Op = "ArgMax"
	// TopK: the K largest (or, without Largest, smallest) elements along
	// Axis, in order, the earlier of equal elements first; the output is
	// their values, or with Indices their positions (int32 or int64, the
	// output tensor's dtype). ONNX TopK and TFLite TOPK_V2 import as two
	// nodes, one per output. Attrs *TopKAttrs.
	TopK Op = "TopK"
	// DetectionPostProcess is TFLite's TFLite_Detection_PostProcess with
	// the fast non-max suppression: box encodings float32 [1, N, ≥4] and
	// class scores float32 [1, N, C] are decoded against the constant
	// anchors [N, 4] (y, x, h, w) and suppressed, and the one float32
	// output holds, in the order of DetectionLayout, the work area and the
	// results (the importer slices those into TFLite's four outputs).
	// Attrs *DetectionAttrs.
	DetectionPostProcess Op = "DetectionPostProcess"
	// SVDFFeature and SVDFTime are TFLite Micro's integer SVDF in two steps
	// (the float SVDF is a composition). SVDFFeature(x int8 [B, I],
	// weights_feature int8 [F, I], state [B, F·M]) is the state's next
	// value: each filter's M slots shifted one to the older end and the
	// newest (M − 1) set to clamp(requant(Σ_i w[f][i]·(x[b][i] − zx)),
	// state range) + zs, with state int16 or int8. SVDFTime(state [B, F·M],
	// weights_time [F, M] of the state's type, bias int32 [U] optional) is
	// the int8 output: clamp(requant(bias[u] + Σ_{r<Rank} Σ_t
	// wt[f][t]·(s[b][f][t] − zs)) + zy, −128, 127), f = u·Rank + r, with no
	// fused activation (TFLite's integer kernel applies none). The
	// multipliers are TFLite's, from float32 products of the scales.
	// Attrs *SVDFAttrs.
	SVDFFeature Op = "SVDFFeature"
	SVDFTime    Op = "SVDFTime"
	// SignalWindow, SignalFftAutoScale, SignalRfft and SignalEnergy are
	// TFLite Micro's signal-library audio front end ops (int16), bit-exact
	// with its kernels; see signal_front.go.
	SignalWindow       Op = "SignalWindow"
	SignalFftAutoScale Op = "SignalFftAutoScale"
	SignalRfft         Op = "SignalRfft"
	SignalEnergy       Op = "SignalEnergy"
	// SignalFilterBank, SignalFilterBankSqrt, SignalNoiseEstimate,
	// SignalSpectralSubtraction, SignalPCAN and SignalFilterBankLog are
	// the rest of that front end (TFLite Micro's FilterBank,
	// FilterBankSquareRoot, FilterBankSpectralSubtraction in two nodes,
	// PCAN and FilterBankLog), bit-exact with its kernels; their uint32
	// and uint64 tensors are int64 (or int32) here, read unsigned. See
	// signal_bank.go.
	SignalFilterBank          Op = "SignalFilterBank"
	SignalFilterBankSqrt      Op = "SignalFilterBankSqrt"
	SignalNoiseEstimate       Op = "SignalNoiseEstimate"
	SignalSpectralSubtraction Op = "SignalSpectralSubtraction"
	SignalPCAN                Op = "SignalPCAN"
	SignalFilterBankLog       Op = "SignalFilterBankLog"
	// SignalFramer and SignalStacker are TFLite Micro's Framer and
	// Stacker (their circular buffers as a window and a count carried
	// as states), one node per result; see signal_stream.go.
	SignalFramer  Op = "SignalFramer"
	SignalStacker Op = "SignalStacker"
	// SignalOverlapAdd is TFLite Micro's OverlapAdd (int16, saturated,
	// or float32), its buffer a state; see signal_stream.go.
	SignalOverlapAdd Op = "SignalOverlapAdd"
	// SignalIrfft is TFLite Micro's SignalIrfft (kiss_fftri in int16,
	// int32 or float32), Attrs *SignalRfftAttrs; see signal_stream.go.
	SignalIrfft Op = "SignalIrfft"

	// Reshape: a view with a new shape (the output tensor's shape). Flatten,
	// Squeeze, Unsqueeze and ExpandDims all import as Reshape.
	Reshape Op = "Reshape"
	// Transpose: Attrs *TransposeAttrs.
	Transpose Op = "Transpose"
	// Concat: any number of inputs. Attrs *ConcatAttrs.
	Concat Op = "Concat"
	// Pad: Attrs *PadAttrs.
	Pad Op = "Pad"
	// Slice: strided slice, Attrs *SliceAttrs.
	Slice Op = "Slice"

	// Softmax along Axis. Attrs *SoftmaxAttrs.
	Softmax Op = "Softmax"
	// L2Normalize: x / ‖x‖ along the last axis in TFLite's int8 arithmetic
	// (the sum of squares of x less its zero point, a fixed-point inverse
	// square root, the output at scale 1/128 and zero point 0). Float
	// L2_NORMALIZATION imports as a Reduce and a Div.
	L2Normalize Op = "L2Normalize"
	// Relu: max(x, 0).
	Relu Op = "Relu"
	// Clip: min(max(x, Min), Max); Relu6 is Clip{0, 6}. Attrs *ClipAttrs.
	Clip Op = "Clip"
	// LeakyRelu: x >= 0 ? x : Alpha*x. Attrs *LeakyReluAttrs.
	LeakyRelu Op = "LeakyRelu"
	// Sigmoid (TFLite LOGISTIC).
	Sigmoid Op = "Sigmoid"
	Tanh    Op = "Tanh"
	// HardSwish: x * relu6(x+3) / 6.
	HardSwish Op = "HardSwish"
	// HardSigmoid: max(0, min(1, Alpha*x + Beta)). Attrs *HardSigmoidAttrs.
	HardSigmoid Op = "HardSigmoid"
	// Resize of H and W of NHWC. Attrs *ResizeAttrs.
	Resize Op = "Resize"
	// Math: an element-wise function of one input (exp, log, sqrt, sin,
	// elu, ...), named by Attrs *MathAttrs.
	Math Op = "Math"

	// Quantize: float (or int, to requantize) -> int with the output tensor's Quant.
	// Attrs *QuantizeAttrs (may be nil).
	Quantize Op = "Quantize"
	// Dequantize: int with the input tensor's Quant -> float32.
	Dequantize Op = "Dequantize"
)

// Activation is an activation fused into a compute op (TFLite's fused_activation_function).
type Activation uint8

// Fused activations.
const (
	ActNone Activation = iota
	ActRelu
	ActRelu6
	ActReluN1To1
)

func (a Activation) String() string {
	return [...]string{"none", "relu", "relu6", "relu_n1_to_1"}[a]
}

// Bounds is the float clamp range of the activation.
func (a Activation) Bounds() (lo, hi float64, ok bool) {
	switch a {
	case ActRelu:
		return 0, inf, true
	case ActRelu6:
		return 0, 6, true
	case ActReluN1To1:
		return -1, 1, true
	}
	return -inf, inf, false
}

// RequantMode says how an integer op maps its int32 accumulator to the output.
type RequantMode uint8

const (
	// RequantFixedPoint is TFLite's: Q31 multiplier and shift, double rounding.
	RequantFixedPoint RequantMode = iota
	// RequantFloat is ONNX's QLinear semantics: float multiply, round half to even.
	RequantFloat
)

// Padding is explicit spatial padding in elements.
type Padding struct{ Top, Left, Bottom, Right int }

// Conv2DAttrs are the attributes of Conv2D.
type Conv2DAttrs struct {
	Stride   [2]int // H, W
	Dilation [2]int // H, W
	Pad      Padding
	Group    int
	Act      Activation
	Requant  RequantMode
	// ZeroTaps are taps of weight 0 a rewrite appended to each window
	// (ColumnConvAsRow's even K): computed, not counted as MACs.
	ZeroTaps int
}

// ConvTransposeAttrs are the attributes of ConvTranspose2D. Input pixel
// (ih, iw) and tap (kh, kw) add into output (ih·s + kh·d − Pad.Top,
// iw·s + kw·d − Pad.Left); the output is (IH−1)·s + (KH−1)·d + 1 + OutPad −
// Pad.Top − Pad.Bottom high (and so wide).
type ConvTransposeAttrs struct {
	Stride   [2]int // H, W
	Dilation [2]int // H, W
	Pad      Padding
	OutPad   [2]int // extra rows and columns at the end (ONNX output_padding)
	Group    int
	Act      Activation
}

// ConvTransposeOut is the output height (or width) of ConvTranspose2D.
func ConvTransposeOut(in, k, stride, dil, padA, padB, outPad int) int {
	return (in-1)*max(stride, 1) + (k-1)*max(dil, 1) + 1 + outPad - padA - padB
}

// FullyConnectedAttrs are the attributes of FullyConnected.
type FullyConnectedAttrs struct {
	KeepDims bool
	Act      Activation
	Requant  RequantMode
}

// BatchMatMulAttrs are the attributes of BatchMatMul.
type BatchMatMulAttrs struct {
	AdjX, AdjY bool
	Requant    RequantMode
}

// BinaryAttrs are the attributes of the element-wise binary ops.
type BinaryAttrs struct {
	Act Activation
}

// PoolAttrs are the attributes of MaxPool2D and AvgPool2D.
type PoolAttrs struct {
	Kernel          [2]int
	Stride          [2]int
	Dilation        [2]int
	Pad             Padding
	CountIncludePad bool // AvgPool: padded elements count in the divisor
	Act             Activation
}

// MaxPoolIndicesAttrs are the attributes of MaxPoolIndices: the window of
// the MaxPool2D whose maxima it locates, and ONNX's storage_order (false:
// row major, true: column major).
type MaxPoolIndicesAttrs struct {
	Kernel      [2]int
	Stride      [2]int
	Dilation    [2]int
	Pad         Padding
	ColumnMajor bool
}

// Window is the pool window of a as PoolAttrs.
func (a *MaxPoolIndicesAttrs) Window() *PoolAttrs {
	return &PoolAttrs{Kernel: a.Kernel, Stride: a.Stride, Dilation: a.Dilation, Pad: a.Pad}
}

// MeanAttrs are the attributes of Mean.
type MeanAttrs struct {
	Axes     []int
	KeepDims bool
}

// ReduceKind is what Reduce computes over its axes (ONNX's ReduceX).
type ReduceKind string

// The reductions of Reduce.
const (
	ReduceSum       ReduceKind = "Sum"
	ReduceMax       ReduceKind = "Max"
	ReduceMin       ReduceKind = "Min"
	ReduceProd      ReduceKind = "Prod"
	ReduceL1        ReduceKind = "L1"        // Σ|x|
	ReduceL2        ReduceKind = "L2"        // sqrt(Σx²)
	ReduceLogSum    ReduceKind = "LogSum"    // log(Σx)
	ReduceLogSumExp ReduceKind = "LogSumExp" // log(Σexp(x))
	ReduceSumSquare ReduceKind = "SumSquare" // Σx²
)

// ReduceAttrs are the attributes of Reduce; the axes and KeepDims mean what
// they mean for Mean (no axes: every axis).
type ReduceAttrs struct {
	Kind     ReduceKind
	Axes     []int
	KeepDims bool
}

// ModAttrs are the attributes of Mod: Fmod takes the dividend's sign (C's
// fmod and %), as floats always do.
type ModAttrs struct{ Fmod bool }

// CumSumAttrs are the attributes of CumSum: the axis, whether each sum
// leaves out its own element, and whether the sums run from the end.
type CumSumAttrs struct {
	Axis               int
	Exclusive, Reverse bool
	// TFLiteInt8 selects TFLite Micro's int8 CUMSUM (qmath.SumInt8Params):
	// its sums start at the input's rescaled −zero point, not at 0. A
	// quantized CumSum needs it.
	TFLiteInt8 bool
}

// GatherAttrs are the attributes of Gather. Negative indices count from
// the end; indices outside the axis are clamped to it (ONNX calls them an
// error; generated code must not read outside the tensor).
type GatherAttrs struct {
	Axis     int
	Elements bool
}

// ScatterAttrs are the attributes of Scatter. Without ND (ONNX
// ScatterElements) the indices and updates have one shape, of the data's
// rank, and each update goes to its own position with the index replacing
// the coordinate along Axis. With ND (ScatterND) the indices are
// [..., k]: each row of k indices addresses a slice data[i0, ..., ik-1, :]
// and the updates are [..., data.shape[k:]...]. Updates apply in order, so
// of two to one place without a reduction the later wins. Reduction
// combines the old value and the update: "" (replace), "add", "mul", "max"
// or "min"; plain integers wrap. Negative indices count from the end; an
// update whose index is outside its axis is skipped (ONNX calls it an
// error; generated code must not write outside the tensor).
type ScatterAttrs struct {
	Axis      int
	ND        bool
	Reduction string
}

// ScatterReductions are the values ScatterAttrs.Reduction may take.
var ScatterReductions = []string{"", "add", "mul", "max", "min"}

// DFTAttrs are the attributes of DFT. The input's last axis holds the real
// part (size 1) or the real and imaginary parts (size 2); Axis is one of
// the others. Each transform takes N samples along Axis (the first N, zeros
// past the end of a shorter axis) and gives N bins, or N/2+1 when Onesided
// (real input only), y[k] = sum_m x[m] e^(-2 pi i k m / N); Inverse uses
// e^(+...) and divides by N. Framed (Frames > 0, ONNX STFT): the input is
// [batch, signal, 1 or 2], frame f holds samples f*Step ... f*Step+N-1,
// multiplied by the window (input 1) when there is one, and the output is
// [batch, Frames, bins, 2].
type DFTAttrs struct {
	Axis, N           int
	Inverse, Onesided bool
	Frames, Step      int
	// Power makes the output each bin's squared magnitude, re² + im², with
	// no last axis (a DFT followed by a sum of squares over re and im,
	// fused: FuseDFTPower).
	Power bool
}

// DFTBins is the number of bins a transform of N samples gives.
func (a *DFTAttrs) DFTBins() int {
	if a.Onesided {
		return a.N/2 + 1
	}
	return a.N
}

// CastAttrs are the attributes of Cast: the output's element type.
type CastAttrs struct{ To DType }

// CompareAttrs name the comparison of Compare: Equal, Less, Greater,
// LessOrEqual or GreaterOrEqual (ONNX's names).
type CompareAttrs struct{ Kind string }

// LogicAttrs name the operator of Logic: And, Or, Xor or Not.
type LogicAttrs struct{ Kind string }

// ArgAttrs are the attributes of ArgMax: the axis, whether it stays as a
// dimension of 1, whether the smallest element is sought, and whether ties
// go to the last index instead of the first.
type ArgAttrs struct {
	Axis       int
	KeepDims   bool
	Min        bool
	SelectLast bool
}

// SVDFAttrs are the attributes of SVDFFeature and SVDFTime: the rank and
// the memory size (time slots per filter).
type SVDFAttrs struct {
	Rank, Memory int
}

// TopKAttrs are the attributes of TopK. NaN ranks above every number (so
// first when Largest, last otherwise), as numpy's sort orders it.
type TopKAttrs struct {
	Axis, K          int
	Largest, Indices bool
}

// DetectionAttrs are the attributes of DetectionPostProcess: at most
// MaxDetections boxes; class LabelOffset+c of the scores is class c (the
// background, when there is one, is class column 0 and never detected);
// boxes at or above ScoreThreshold are candidates, and a box whose
// intersection over union with a kept one is above IoUThreshold is
// suppressed; Scale is the box encodings' y, x, h and w scale.
type DetectionAttrs struct {
	MaxDetections, NumClasses, LabelOffset int
	ScoreThreshold, IoUThreshold           float32
	Scale                                  [4]float32
}

// DetectionLayout gives the offsets, in floats, of DetectionPostProcess's
// output for n anchors and d detections: the decoded boxes [n, 4] (ymin,
// xmin, ymax, xmax), each anchor's best score [n] and its class [n] (or −1
// once the anchor is kept or suppressed), then the results: boxes [d, 4],
// classes [d], scores [d] and the count [1]. Size is the whole length.
type DetectionLayout struct {
	Decoded, Best, Class, Boxes, Classes, Scores, Count, Size int
}

// Layout is DetectionLayout for n anchors and a.MaxDetections.
func (a *DetectionAttrs) Layout(n int) DetectionLayout {
	d := a.MaxDetections
	l := DetectionLayout{Decoded: 0, Best: 4 * n, Class: 5 * n, Boxes: 6 * n}
	l.Classes = l.Boxes + 4*d
	l.Scores = l.Classes + d
	l.Count = l.Scores + d
	l.Size = l.Count + 1
	return l
}

// TransposeAttrs are the attributes of Transpose.
type TransposeAttrs struct{ Perm []int }

// ConcatAttrs are the attributes of Concat.
type ConcatAttrs struct {
	Axis int
	Act  Activation
}

// PadAttrs are the attributes of Pad. Pads holds the before-counts of every
// axis then the after-counts (ONNX order). Value is the constant for
// Mode "constant"; for an int tensor it is the stored integer value.
type PadAttrs struct {
	Pads  []int
	Value float64
	Mode  string // "constant", "reflect" or "edge"
}

// SliceAttrs are the attributes of Slice: for every axis, elements
// Begin, Begin+Stride, ... while < End (or > End for negative Stride).
// Begin and End are already clamped to the axis.
type SliceAttrs struct {
	Begin, End, Stride []int
}

// SoftmaxAttrs are the attributes of Softmax.
type SoftmaxAttrs struct {
	Axis int
	Beta float32
	Mode SoftmaxMode
}

// SoftmaxMode selects the function of a Softmax node along its axis.
type SoftmaxMode string

// The Softmax modes: exp(x)/Σexp(x) (the default), its logarithm (ONNX
// LogSoftmax), and 1 at the first largest element, 0 elsewhere (ONNX Hardmax).
const (
	SoftmaxPlain SoftmaxMode = ""
	SoftmaxLog   SoftmaxMode = "log"
	SoftmaxHard  SoftmaxMode = "hard"
)

// ClipAttrs are the attributes of Clip (float bounds).
type ClipAttrs struct{ Min, Max float32 }

// LeakyReluAttrs are the attributes of LeakyRelu.
type LeakyReluAttrs struct{ Alpha float32 }

// MathFn names the function of a Math node. The names, and the defaults of
// the constants, are those of ONNX's operators of the same name.
type MathFn string

// The functions of Math.
const (
	MathExp             MathFn = "Exp"
	MathLog             MathFn = "Log"
	MathSqrt            MathFn = "Sqrt"
	MathAbs             MathFn = "Abs"
	MathNeg             MathFn = "Neg"
	MathReciprocal      MathFn = "Reciprocal"
	MathFloor           MathFn = "Floor"
	MathCeil            MathFn = "Ceil"
	MathRound           MathFn = "Round" // half to even
	MathSign            MathFn = "Sign"
	MathErf             MathFn = "Erf"
	MathSin             MathFn = "Sin"
	MathCos             MathFn = "Cos"
	MathTan             MathFn = "Tan"
	MathAsin            MathFn = "Asin"
	MathAcos            MathFn = "Acos"
	MathAtan            MathFn = "Atan"
	MathSinh            MathFn = "Sinh"
	MathCosh            MathFn = "Cosh"
	MathAsinh           MathFn = "Asinh"
	MathAcosh           MathFn = "Acosh"
	MathAtanh           MathFn = "Atanh"
	MathSoftplus        MathFn = "Softplus"        // log(exp(x) + 1)
	MathSoftsign        MathFn = "Softsign"        // x / (1 + |x|)
	MathElu             MathFn = "Elu"             // x < 0 ? Alpha*(exp(x) - 1) : x
	MathSelu            MathFn = "Selu"            // x > 0 ? Gamma*x : Gamma*Alpha*(exp(x) - 1)
	MathCelu            MathFn = "Celu"            // max(0, x) + min(0, Alpha*(exp(x/Alpha) - 1))
	MathThresholdedRelu MathFn = "ThresholdedRelu" // x > Alpha ? x : 0
	MathSquare          MathFn = "Square"          // x * x (TFLite SQUARE)
	MathRsqrt           MathFn = "Rsqrt"           // 1 / sqrt(x) (TFLite RSQRT)
	MathShrink          MathFn = "Shrink"          // x < -Alpha ? x + Beta : x > Alpha ? x - Beta : 0
	MathGelu            MathFn = "Gelu"            // x·(1 + erf(x/√2))/2 (TFLite int8 GELU; float GELU is a composition)
	MathGeluTanh        MathFn = "GeluTanh"        // x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2, GELU's approximation
	// Sigmoid and Tanh as Math functions: the int8 table, for a folded QDQ
	// layer whose output parameters TFLite's LOGISTIC and TANH kernels do
	// not take (ONNX Runtime's calibrated scale 1/255, say). The Sigmoid
	// and Tanh ops are TFLite's.
	MathSigmoid MathFn = "Sigmoid" // 1 / (1 + exp(-x))
	MathTanh    MathFn = "Tanh"    // tanh(x)
)

// MathAttrs are the attributes of Math: the function and its constants.
type MathAttrs struct {
	Fn                 MathFn
	Alpha, Beta, Gamma float32
	// TFLiteInt8 selects TFLite's own int8 kernel instead of the table of
	// rounded real values mcugen's quantizer gives other integer Math
	// nodes: for Rsqrt TFLite Micro's fixed point (qmath.RsqrtInt8), for
	// Abs its requantization of |q − zero point| (qmath.AbsInt8), for
	// Gelu, GeluTanh and Elu TFLite's table built in float32
	// (qmath.LUTPopulateInt8 of qmath.GeluF32, GeluTanhF32, EluF32).
	TFLiteInt8 bool
	// Float32Island builds the integer table as the float nodes of a
	// folded QDQ model computed each value: the Dequantize in float32,
	// the function rounded to float32, and the Quantize's x / scale in
	// float32, rounded half to even where HalfEven (ONNX's
	// QuantizeLinear); not the real value computed in float64 and rounded
	// half away from zero, which differs at ties (a Sqrt of 0.25 at output
	// scale 1 is 0.5: 1 that way, 0 by ONNX's QuantizeLinear) and where
	// float32 rounding moves a quotient across one.
	Float32Island, HalfEven bool
}

// HardSigmoidAttrs are the attributes of HardSigmoid.
type HardSigmoidAttrs struct{ Alpha, Beta float32 }

// ResizeAttrs are the attributes of Resize. Output H and W come from the output shape.
type ResizeAttrs struct {
	Mode string // "nearest", "bilinear" or "cubic" (float only)
	// Coord is the coordinate transform: "half_pixel", "align_corners",
	// "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn".
	Coord string
	// Nearest is the rounding for "nearest": "round_prefer_floor",
	// "round_prefer_ceil", "floor", "ceil".
	Nearest string
	// Scale is the H, W scale factor the model gives (ONNX "scales"); 0 means
	// output size / input size.
	Scale [2]float32
	// CubicA is "cubic"'s coefficient a (ONNX cubic_coeff_a, which the
	// importer sets, -0.75 by default; 0 is a = 0). ExcludeOutside gives the taps outside the
	// input weight 0 and rescales the rest to sum to 1, where by default
	// they read the edge.
	CubicA         float32
	ExcludeOutside bool
}

// QuantizeAttrs are the attributes of Quantize.
type QuantizeAttrs struct {
	// RoundHalfEven selects ONNX's rounding; the default is TFLite's
	// round-half-away-from-zero.
	RoundHalfEven bool
}

// SignalWindowAttrs are the attributes of SignalWindow: x[i]·w[i mod W]
// shifted right by Shift (arithmetic), saturated to int16.
type SignalWindowAttrs struct{ Shift int }

// SignalFftAutoScaleAttrs are the attributes of SignalFftAutoScale: the
// input scaled up by the largest power of two that keeps it in int16, or
// with Bits the int32 exponent (the op's second output).
type SignalFftAutoScaleAttrs struct{ Bits bool }

// SignalRfftAttrs are the attributes of SignalRfft: kissfft's fixed-point
// real FFT of FFTLength points of each frame (the last axis, zero-padded).
type SignalRfftAttrs struct{ FFTLength int }

// SignalEnergyAttrs are the attributes of SignalEnergy: re² + im² of the
// complex bins Start to End − 1 (uint32 values, held as int64).
type SignalEnergyAttrs struct{ Start, End int }

// SignalFilterBankAttrs are the attributes of SignalFilterBank: Channels
// output channels (TFLite Micro's num_channels).
type SignalFilterBankAttrs struct{ Channels int }

// SignalSpectralSubtractionAttrs are the attributes of SignalNoiseEstimate
// and SignalSpectralSubtraction (TFLite Micro's SpectralSubtractionConfig):
// even channels smooth with Smoothing and OneMinusSmoothing, odd ones with
// the Alternate pair.
type SignalSpectralSubtractionAttrs struct {
	Smoothing, OneMinusSmoothing                   uint32
	AlternateSmoothing, AlternateOneMinusSmoothing uint32
	MinSignalRemaining                             uint32
	SmoothingBits, SpectralSubtractionBits         int
	Clamping                                       bool
}

// SignalPCANAttrs are the attributes of SignalPCAN: the SNR's shift.
type SignalPCANAttrs struct{ SNRShift int }

// SignalFilterBankLogAttrs are the attributes of SignalFilterBankLog: the
// input's left shift and the output's scale (Q16).
type SignalFilterBankLogAttrs struct{ CorrectionBits, OutputScale int }
