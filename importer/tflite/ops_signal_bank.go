package tflite

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// The back half of TFLite Micro's signal-library audio front end:
// SignalFilterBank, SignalFilterBankSquareRoot,
// SignalFilterBankSpectralSubtraction, SignalPCAN and SignalFilterBankLog
// (signal/micro/kernels), each read with its FlexBuffers options into the
// graph op of the same arithmetic (graph/signal_bank.go). Their uint32 and
// uint64 tensors are int64 in the graph (dtypeOf).
//
// SignalFilterBankSpectralSubtraction keeps its noise estimate from one
// invocation to the next: it becomes a state (graph.State) that starts at
// zero, as TFLite Micro's Prepare and Reset leave it, and goes back to zero
// on <prefix>_reset(). The op's second output, the estimate after this
// invocation, is the state's next value.
func init() {
	signalOps["SignalFilterBank"] = (*opctx).signalFilterBank
	signalOps["SignalFilterBankSquareRoot"] = (*opctx).signalFilterBankSqrt
	signalOps["SignalFilterBankSpectralSubtraction"] = (*opctx).signalSpectralSubtraction
	signalOps["SignalPCAN"] = (*opctx).signalPCAN
	signalOps["SignalFilterBankLog"] = (*opctx).signalFilterBankLog
}

// noWideUnsigned refuses tensor i as an application input or output when
// the file says uint32 or uint64 (the graph holds those as int64).
func (d *decoder) noWideUnsigned(i int) error {
	if i < 0 || i >= len(d.tensors) {
		return nil
	}
	switch d.tensors[i].i8(tensorType, 0) {
	case ttUInt32:
		return fmt.Errorf("uint32 model inputs and outputs are not supported (only inside the graph, for the signal library's ops)")
	case ttUInt64:
		return fmt.Errorf("uint64 model inputs and outputs are not supported (only inside the graph, for the signal library's ops)")
	}
	return nil
}

// signalSame checks that the output is as long as the first input.
func (c *opctx) signalSame(ins []*graph.Tensor, out *graph.Tensor) error {
	if out.Shape[0] != ins[0].Shape[0] {
		return c.errorf("output %q has shape %v, input %q %v", out.Name, out.Shape, ins[0].Name, ins[0].Shape)
	}
	return nil
}

func (c *opctx) signalFilterBank(opts []byte) error {
	o, err := c.signalOptions(opts, "num_channels")
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttUInt32, ttInt16, ttInt16, ttInt16, ttInt16, ttInt16}, []int8{ttUInt64},
		[]int{1, 1, 1, 1, 1, 1}, []int{1})
	if err != nil {
		return err
	}
	ch := o["num_channels"]
	if ch < 1 || ch > math.MaxInt16 {
		return c.errorf("num_channels %d is not in [1, 32767]", ch)
	}
	for i, t := range ins[1:] {
		if !t.IsConst() {
			return c.errorf("input %d (%q) must be a constant: mcugen builds the filter bank at compile time", i+1, t.Name)
		}
	}
	if int64(outs[0].Shape[0]) != ch {
		return c.errorf("output %q has shape %v for %d channels", outs[0].Name, outs[0].Shape, ch)
	}
	a := &graph.SignalFilterBankAttrs{Channels: int(ch)}
	for i := 3; i <= 5; i++ {
		if int64(ins[i].Shape[0]) < ch+1 {
			return c.errorf("input %d (%q) has %d entries for %d channels, want channels + 1", i, ins[i].Name, ins[i].Shape[0], ch)
		}
	}
	if err := graph.SignalFilterBankCheck(a.Channels, ins[0].Shape[0], ins[1].Data.I, ins[2].Data.I, ins[3].Data.I, ins[4].Data.I, ins[5].Data.I); err != nil {
		return c.errorf("%v", err)
	}
	c.emit(graph.SignalFilterBank, a, []string{ins[0].Name, ins[1].Name, ins[2].Name, ins[3].Name, ins[4].Name, ins[5].Name}, outs[0])
	return nil
}

func (c *opctx) signalFilterBankSqrt(opts []byte) error {
	ins, outs, err := c.signalIO([]int8{ttUInt64, ttInt32}, []int8{ttUInt32}, []int{1, 0}, []int{1})
	if err != nil {
		return err
	}
	if err := c.signalSame(ins, outs[0]); err != nil {
		return err
	}
	c.emit(graph.SignalFilterBankSqrt, nil, []string{ins[0].Name, ins[1].Name}, outs[0])
	return nil
}

func (c *opctx) signalSpectralSubtraction(opts []byte) error {
	keys := []string{"alternate_one_minus_smoothing", "alternate_smoothing", "clamping", "min_signal_remaining", "num_channels",
		"one_minus_smoothing", "smoothing", "smoothing_bits", "spectral_subtraction_bits"}
	o, err := c.signalOptions(opts, keys...)
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttUInt32}, []int8{ttUInt32, ttUInt32}, []int{1}, []int{1, 1})
	if err != nil {
		return err
	}
	x, y, est := ins[0], outs[0], outs[1]
	n := x.Shape[0]
	// TFLite Micro runs num_channels channels and keeps that many
	// estimates; mcugen wants them to be the input's and outputs' length.
	if o["num_channels"] != int64(n) || y.Shape[0] != n || est.Shape[0] != n {
		return c.errorf("num_channels %d, input %v and outputs %v, %v: mcugen wants one length", o["num_channels"], x.Shape, y.Shape, est.Shape)
	}
	// The coefficients are uint32 (TFLite Micro reads them as int32 and
	// converts); the shifts must be valid C shifts.
	u32 := func(k string) uint32 { return uint32(int32(o[k])) }
	a := &graph.SignalSpectralSubtractionAttrs{
		Smoothing: u32("smoothing"), OneMinusSmoothing: u32("one_minus_smoothing"),
		AlternateSmoothing: u32("alternate_smoothing"), AlternateOneMinusSmoothing: u32("alternate_one_minus_smoothing"),
		MinSignalRemaining: u32("min_signal_remaining"),
		SmoothingBits:      int(o["smoothing_bits"]), SpectralSubtractionBits: int(o["spectral_subtraction_bits"]),
		Clamping: o["clamping"] != 0,
	}
	if o["smoothing_bits"] < 0 || o["smoothing_bits"] > 31 || o["spectral_subtraction_bits"] < 0 || o["spectral_subtraction_bits"] > 63 {
		return c.errorf("smoothing_bits %d must be in [0, 31] and spectral_subtraction_bits %d in [0, 63] (C shifts)", o["smoothing_bits"], o["spectral_subtraction_bits"])
	}
	// The state: its value at the start of the inference (a new graph
	// input) and its next value, which is the op's second output.
	g := c.d.g
	prev := g.AddTensor(&graph.Tensor{Name: g.UniqueName(est.Name + "/noise_prev"), DType: est.DType, Shape: []int{n}})
	next := c.step(graph.SignalNoiseEstimate, a, []string{x.Name, prev.Name}, "noise_next", est.DType, []int{n}, nil)
	c.emit(graph.Reshape, nil, []string{next.Name}, est)
	c.emit(graph.SignalSpectralSubtraction, a, []string{x.Name, next.Name}, y)
	c.d.states = append(c.d.states, graph.State{In: prev.Name, Out: next.Name})
	return nil
}

func (c *opctx) signalPCAN(opts []byte) error {
	o, err := c.signalOptions(opts, "snr_shift")
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttUInt32, ttUInt32, ttInt16}, []int8{ttUInt32}, []int{1, 1, -1}, []int{1})
	if err != nil {
		return err
	}
	if err := c.signalSame(ins, outs[0]); err != nil {
		return err
	}
	if ins[1].Shape[0] != ins[0].Shape[0] {
		return c.errorf("noise estimate %q has shape %v, input %v", ins[1].Name, ins[1].Shape, ins[0].Shape)
	}
	if s := o["snr_shift"]; s < 0 || s > 63 {
		return c.errorf("snr_shift %d is not in [0, 63]", s)
	}
	if ins[2].NumElements() < graph.SignalPCANLUTLen {
		return c.errorf("gain table %q has %d entries: TFLite Micro reads up to %d", ins[2].Name, ins[2].NumElements(), graph.SignalPCANLUTLen)
	}
	lut := ins[2].Name
	if len(ins[2].Shape) != 1 {
		lut = c.step(graph.Reshape, nil, []string{lut}, "lut", graph.Int16, []int{ins[2].NumElements()}, nil).Name
	}
	c.emit(graph.SignalPCAN, &graph.SignalPCANAttrs{SNRShift: int(o["snr_shift"])}, []string{ins[0].Name, ins[1].Name, lut}, outs[0])
	return nil
}

func (c *opctx) signalFilterBankLog(opts []byte) error {
	o, err := c.signalOptions(opts, "input_correction_bits", "output_scale")
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttUInt32}, []int8{ttInt16}, []int{1}, []int{1})
	if err != nil {
		return err
	}
	if err := c.signalSame(ins, outs[0]); err != nil {
		return err
	}
	if b := o["input_correction_bits"]; b < 0 || b > 31 {
		return c.errorf("input_correction_bits %d is not in [0, 31]", b)
	}
	a := &graph.SignalFilterBankLogAttrs{CorrectionBits: int(o["input_correction_bits"]), OutputScale: int(int32(o["output_scale"]))}
	c.emit(graph.SignalFilterBankLog, a, []string{ins[0].Name}, outs[0])
	return nil
}

// wideUnsignedBuiltin refuses a builtin operator on uint32 or uint64
// tensors other than the CASTs the signal library's models put around
// them. mcugen holds those tensors as int64 and their consumers read the
// low 32 bits of a uint32 (a CAST from a signed type leaves it
// sign-extended), so only casts that keep the low bits (uint32 or uint64
// to a narrower integer, uint64 to int64, any integer to uint32, a signed
// integer or uint8 to uint64) mean what TFLite's do.
func (c *opctx) wideUnsignedBuiltin() error {
	typ := func(idx int32) int8 {
		if idx < 0 || int(idx) >= len(c.d.tensors) {
			return -1
		}
		return c.d.tensors[idx].i8(tensorType, 0)
	}
	wide := func(t int8) bool { return t == ttUInt32 || t == ttUInt64 }
	var any bool
	for _, i := range append(append([]int32{}, c.ins...), c.outs...) {
		any = any || wide(typ(i))
	}
	if !any {
		return nil
	}
	if c.code != opCast || len(c.ins) != 1 || len(c.outs) != 1 {
		return c.errorf("uint32 and uint64 tensors are supported only as the signal library's operands and CASTs to and from them")
	}
	from, to := typ(c.ins[0]), typ(c.outs[0])
	narrow := map[int8]bool{ttInt8: true, ttUInt8: true, ttInt16: true, ttInt32: true}
	switch {
	case wide(from) && narrow[to], from == ttUInt64 && to == ttInt64, to == ttUInt32 && (narrow[from] || wide(from) || from == ttInt64),
		to == ttUInt64 && (narrow[from] || from == ttInt64 || from == ttUInt64):
		return nil
	}
	names := map[int8]string{ttUInt32: "uint32", ttUInt64: "uint64", ttInt64: "int64", ttFloat32: "float32", ttBool: "bool"}
	name := func(t int8) string {
		if s, ok := names[t]; ok {
			return s
		}
		return fmt.Sprintf("TFLite type %d", t)
	}
	return c.errorf("CAST from %s to %s is not supported (mcugen holds uint32 and uint64 as int64: only casts that keep the low bits are exact)", name(from), name(to))
}
