package tflite

// signalOps maps the custom codes of TFLite Micro's signal library
// (signal/micro/kernels: SignalWindow, SignalRfft, SignalEnergy,
// SignalFilterBank … the audio front end of its micro_speech example) to
// their importers, each given the operator's FlexBuffers options. Each op's
// file registers its own entry in an init function.
var signalOps = map[string]func(c *opctx, opts []byte) error{}
