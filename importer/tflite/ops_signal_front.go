package tflite

import (
	"github.com/mcugen/mcugen/graph"
)

// The front half of TFLite Micro's signal-library audio front end:
// SignalWindow, SignalFftAutoScale, SignalRfft (its int16 form) and
// SignalEnergy (signal/micro/kernels), each into the graph op of the same
// arithmetic (graph/signal_front.go).
func init() {
	signalOps["SignalWindow"] = (*opctx).signalWindow
	signalOps["SignalFftAutoScale"] = (*opctx).signalFftAutoScale
	signalOps["SignalRfft"] = (*opctx).signalRfft
	signalOps["SignalEnergy"] = (*opctx).signalEnergy
}

// frontInts reads the custom options' integer entries named keys, all
// required.
func (c *opctx) frontInts(opts []byte, keys ...string) ([]int64, error) {
	m, err := flexMapOf(opts)
	if err != nil {
		return nil, c.errorf("%v", err)
	}
	var out []int64
	for _, k := range keys {
		v, ok := m[k]
		if !ok || (v.typ != flexInt && v.typ != flexUint) {
			return nil, c.errorf("option %q is missing or not an integer", k)
		}
		out = append(out, v.i)
	}
	if err := c.signalCheckPositions(opts, m, keys); err != nil {
		return nil, err
	}
	return out, nil
}

// frontIO imports nIn inputs and nOut outputs (exactly that many), each
// checked to be of the file type in types (inputs first).
func (c *opctx) frontIO(nIn, nOut int, types ...int8) (ins, outs []*graph.Tensor, err error) {
	if len(c.ins) != nIn || len(c.outs) != nOut {
		return nil, nil, c.errorf("%d inputs and %d outputs, want %d and %d", len(c.ins), len(c.outs), nIn, nOut)
	}
	names := map[int8]string{ttInt16: "int16", ttInt32: "int32", ttUInt32: "uint32"}
	for i := range nIn + nOut {
		var t *graph.Tensor
		idx := c.ins
		what, j := "input", i
		if i < nIn {
			t, err = c.in(i)
		} else {
			what, j, idx = "output", i-nIn, c.outs
			t, err = c.out(i - nIn)
		}
		if err != nil {
			return nil, nil, err
		}
		if got := c.d.tensors[idx[j]].i8(tensorType, 0); got != types[i] {
			return nil, nil, c.errorf("%s %d (%q) is of TFLite type %d, want %s", what, j, t.Name, got, names[types[i]])
		}
		if t.Quant != nil && len(t.Quant.Scale) > 0 {
			return nil, nil, c.errorf("%s %d (%q) is quantized: the signal library's tensors are plain integers", what, j, t.Name)
		}
		if i < nIn {
			ins = append(ins, t)
		} else {
			outs = append(outs, t)
		}
	}
	return ins, outs, nil
}

// signalWindow: SignalWindow(input int16 [..., n], weights int16 [W]) with
// option shift; the input's size must be a multiple of W.
func (c *opctx) signalWindow(opts []byte) error {
	ins, outs, err := c.frontIO(2, 1, ttInt16, ttInt16, ttInt16)
	if err != nil {
		return err
	}
	v, err := c.frontInts(opts, "shift")
	if err != nil {
		return err
	}
	x, w, y := ins[0], ins[1], outs[0]
	if v[0] < 0 || v[0] > 31 {
		return c.errorf("shift %d is not in [0, 31]", v[0])
	}
	if len(x.Shape) < 1 || len(w.Shape) != 1 || x.NumElements()%w.Shape[0] != 0 {
		return c.errorf("weights %v must be 1-D and divide the input %v", w.Shape, x.Shape)
	}
	if len(y.Shape) != len(x.Shape) || y.NumElements() != x.NumElements() {
		return c.errorf("output %v does not match input %v", y.Shape, x.Shape)
	}
	c.emit(graph.SignalWindow, &graph.SignalWindowAttrs{Shift: int(v[0])}, []string{x.Name, w.Name}, y)
	c.done = true
	return nil
}

// signalFftAutoScale: SignalFftAutoScale(input int16 [n]) gives the scaled
// input int16 [n] and the exponent int32 []; one node per output.
func (c *opctx) signalFftAutoScale(_ []byte) error {
	ins, outs, err := c.frontIO(1, 2, ttInt16, ttInt16, ttInt32)
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

// signalRfft: SignalRfft(input [..., l]) with options T and fft_length,
// int16 only: [..., 2·(fft_length/2 + 1)] of (re, im) pairs.
func (c *opctx) signalRfft(opts []byte) error {
	v, err := c.frontInts(opts, "T", "fft_length")
	if err != nil {
		return err
	}
	if v[0] != ttInt16 {
		return c.errorf("T is TFLite type %d: mcugen runs the int16 SignalRfft only", v[0])
	}
	ins, outs, err := c.frontIO(1, 1, ttInt16, ttInt16)
	if err != nil {
		return err
	}
	x, y := ins[0], outs[0]
	if v[1] > 1<<15 {
		return c.errorf("fft_length %d is above 32768", v[1])
	}
	n := int(v[1])
	if err := graph.RfftLengthOK(n); err != nil {
		return c.errorf("%v (TFLite Micro's kissfft runs radices 2 to 5 only)", err)
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
	v, err := c.frontInts(opts, "end_index", "start_index")
	if err != nil {
		return err
	}
	ins, outs, err := c.frontIO(1, 1, ttInt16, ttUInt32)
	if err != nil {
		return err
	}
	x, y := ins[0], outs[0]
	if len(x.Shape) != 1 || x.Shape[0]%2 != 0 || len(y.Shape) != 1 || y.Shape[0] != x.Shape[0]/2 {
		return c.errorf("input %v and output %v: want [2n] and [n]", x.Shape, y.Shape)
	}
	end, start := v[0], v[1]
	if start < 0 || start > end || end > int64(y.Shape[0]) {
		return c.errorf("start_index %d and end_index %d are not within the %d bins", start, end, y.Shape[0])
	}
	c.emit(graph.SignalEnergy, &graph.SignalEnergyAttrs{Start: int(start), End: int(end)}, []string{x.Name}, y)
	c.done = true
	return nil
}
