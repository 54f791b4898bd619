package tflite

import (
	"github.com/mcugen/mcugen/graph"
)

// The front half of TFLite Micro's signal-library audio front end:
// SignalWindow, SignalFftAutoScale, SignalRfft (int16, int32, float32) and
// SignalEnergy (signal/micro/kernels), each into the graph op of the same
// arithmetic (graph/signal_front.go).
func init() {
	signalOps["SignalWindow"] = (*opctx).signalWindow
	signalOps["SignalFftAutoScale"] = (*opctx).signalFftAutoScale
	signalOps["SignalRfft"] = (*opctx).signalRfft
	signalOps["SignalEnergy"] = (*opctx).signalEnergy
}

// frontIO imports the front op's inputs and outputs of the given file
// types (signalIO, any rank) and refuses quantized ones (signalPlain).
func (c *opctx) frontIO(inTypes, outTypes []int8) (ins, outs []*graph.Tensor, err error) {
	if ins, outs, err = c.signalIO(inTypes, outTypes, nil, nil); err != nil {
		return nil, nil, err
	}
	return ins, outs, c.signalPlain(ins, outs)
}

// signalWindow: SignalWindow(input int16 [..., n], weights int16 [W]) with
// option shift; the input's size must be a multiple of W.
func (c *opctx) signalWindow(opts []byte) error {
	ins, outs, err := c.frontIO([]int8{ttInt16, ttInt16}, []int8{ttInt16})
	if err != nil {
		return err
	}
	v, err := c.signalOptions(opts, "shift")
	if err != nil {
		return err
	}
	x, w, y := ins[0], ins[1], outs[0]
	if v["shift"] < 0 || v["shift"] > 31 {
		return c.errorf("shift %d is not in [0, 31]", v["shift"])
	}
	if len(x.Shape) < 1 || len(w.Shape) != 1 || x.NumElements()%w.Shape[0] != 0 {
		return c.errorf("weights %v must be 1-D and divide the input %v", w.Shape, x.Shape)
	}
	if len(y.Shape) != len(x.Shape) || y.NumElements() != x.NumElements() {
		return c.errorf("output %v does not match input %v", y.Shape, x.Shape)
	}
	c.emit(graph.SignalWindow, &graph.SignalWindowAttrs{Shift: int(v["shift"])}, []string{x.Name, w.Name}, y)
	c.done = true
	return nil
}

// signalFftAutoScale: SignalFftAutoScale(input int16 [n]) gives the scaled
// input int16 [n] and the exponent int32 []; one node per output.
func (c *opctx) signalFftAutoScale(_ []byte) error {
	ins, outs, err := c.frontIO([]int8{ttInt16}, []int8{ttInt16, ttInt32})
	if err != nil {
		return err
	}
	x := ins[0]
	if len(x.Shape) != 1 || len(outs[0].Shape) != 1 || outs[0].Shape[0] != x.Shape[0] || len(outs[1].Shape) != 0 {
		return c.errorf("input %v, outputs %v and %v: want [n], [n] and a scalar", x.Shape, outs[0].Shape, outs[1].Shape)
	}
	for i, out := range outs {
		c.emit(graph.SignalFftAutoScale, &graph.SignalFftAutoScaleAttrs{Bits: i == 1}, []string{x.Name}, out)
	}
	c.done = true
	return nil
}

// signalFftIO reads SignalRfft's or SignalIrfft's (op) options T, which
// must be int16, int32 or float32 (the types TFLite Micro's kernels
// register), and fft_length, which must be a length TFLite Micro's
// kissfft takes, and their input and output of type T.
func (c *opctx) signalFftIO(opts []byte, op string) (n int, x, y *graph.Tensor, err error) {
	v, err := c.signalOptions(opts, "T", "fft_length")
	if err != nil {
		return 0, nil, nil, err
	}
	t := int8(v["T"])
	if int64(t) != v["T"] || (t != ttInt16 && t != ttInt32 && t != ttFloat32) {
		return 0, nil, nil, c.errorf("T is TFLite type %d: %s runs int16, int32 or float32", v["T"], op)
	}
	ins, outs, err := c.frontIO([]int8{t}, []int8{t})
	if err != nil {
		return 0, nil, nil, err
	}
	if v["fft_length"] > 1<<15 {
		return 0, nil, nil, c.errorf("fft_length %d is above 32768", v["fft_length"])
	}
	n = int(v["fft_length"])
	if err := graph.RfftLengthOK(n); err != nil {
		return 0, nil, nil, c.errorf("%v (TFLite Micro's kissfft runs radices 2 to 5 only)", err)
	}
	return n, ins[0], outs[0], nil
}

// signalRfft: SignalRfft(input [..., l]) with options T and fft_length
// (int16, int32 or float32): [..., 2·(fft_length/2 + 1)] of (re, im)
// pairs.
func (c *opctx) signalRfft(opts []byte) error {
	n, x, y, err := c.signalFftIO(opts, "SignalRfft")
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r < 1 || x.Shape[r-1] > n {
		return c.errorf("input %v: frames longer than fft_length %d", x.Shape, n)
	}
	want := append([]int(nil), x.Shape...)
	want[r-1] = 2 * (n/2 + 1)
	if len(y.Shape) != r || y.NumElements() != graph.NumElements(want) || y.Shape[r-1] != want[r-1] {
		return c.errorf("output %v, want %v", y.Shape, want)
	}
	c.emit(graph.SignalRfft, &graph.SignalRfftAttrs{FFTLength: n}, []string{x.Name}, y)
	c.done = true
	return nil
}

// signalEnergy: SignalEnergy(input int16 [2·n] of (re, im) pairs) with
// options start_index and end_index gives uint32 [n] (int64 here).
func (c *opctx) signalEnergy(opts []byte) error {
	v, err := c.signalOptions(opts, "end_index", "start_index")
	if err != nil {
		return err
	}
	ins, outs, err := c.frontIO([]int8{ttInt16}, []int8{ttUInt32})
	if err != nil {
		return err
	}
	x, y := ins[0], outs[0]
	if len(x.Shape) != 1 || x.Shape[0]%2 != 0 || len(y.Shape) != 1 || y.Shape[0] != x.Shape[0]/2 {
		return c.errorf("input %v and output %v: want [2n] and [n]", x.Shape, y.Shape)
	}
	end, start := v["end_index"], v["start_index"]
	if start < 0 || start > end || end > int64(y.Shape[0]) {
		return c.errorf("start_index %d and end_index %d are not within the %d bins", start, end, y.Shape[0])
	}
	c.emit(graph.SignalEnergy, &graph.SignalEnergyAttrs{Start: int(start), End: int(end)}, []string{x.Name}, y)
	c.done = true
	return nil
}
