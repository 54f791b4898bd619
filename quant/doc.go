// Package quant is mcugen's INT8 post-training quantization: it calibrates a
// float graph on sample inputs (per-tensor min/max and histograms), chooses
// activation ranges (minmax, percentile, entropy, mse), rewrites the graph
// into the TFLite int8 scheme (int8 symmetric per-channel weights, int8
// asymmetric per-tensor activations, int32 biases), folds QDQ graphs into the
// same form, writes QDQ ONNX models and reports per-layer SQNR.
package quant
