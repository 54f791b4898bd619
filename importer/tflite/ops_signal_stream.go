package tflite

import (
	"github.com/mcugen/mcugen/graph"
)

// TFLite Micro's signal-library streaming ops whose circular buffers carry
// samples from one invocation to the next (signal/micro/kernels delay.cc,
// framer.cc, stacker.cc): the buffers become states (graph.State), reset
// as TFLite Micro's Reset does.
func init() {
	signalOps["SignalDelay"] = (*opctx).signalDelay
	signalOps["SignalFramer"] = (*opctx).signalFramer
	signalOps["SignalStacker"] = (*opctx).signalStacker
	signalOps["SignalOverlapAdd"] = (*opctx).signalOverlapAdd
	signalOps["SignalIrfft"] = (*opctx).signalIrfft
}

// signalStreamMax bounds the streaming ops' lengths (options and buffers).
const signalStreamMax = 1 << 20

// streamState adds the value of a new state at the start of the inference:
// a graph tensor that the caller pairs with its next value.
func (c *opctx) streamState(suffix string, dt graph.DType, shape []int) *graph.Tensor {
	return c.temp(suffix, dt, shape, nil)
}

// streamWindow concatenates the state prev and x on their last axis, and
// makes the last keep values of that its next value: the window of the
// latest samples of each row.
func (c *opctx) streamWindow(prev, x *graph.Tensor, keep int) *graph.Tensor {
	r := len(x.Shape)
	ws := append([]int(nil), x.Shape...)
	ws[r-1] += prev.Shape[r-1]
	w := c.step(graph.Concat, &graph.ConcatAttrs{Axis: r - 1}, []string{prev.Name, x.Name}, "window", graph.Int16, ws, nil)
	begin, stride := make([]int, r), make([]int, r)
	for i := range stride {
		stride[i] = 1
	}
	begin[r-1] = ws[r-1] - keep
	next := c.step(graph.Slice, &graph.SliceAttrs{Begin: begin, End: ws, Stride: stride}, []string{w.Name}, "window_next", graph.Int16, prev.Shape, nil)
	c.d.states = append(c.d.states, graph.State{In: prev.Name, Out: next.Name})
	return w
}

// streamCount adds the int32 [1] count state (starting at init) and its
// next value, computed by op with the count as its only input.
func (c *opctx) streamCount(op graph.Op, attrs any, init int64) *graph.Tensor {
	count := c.streamState("count", graph.Int32, []int{1})
	next := c.step(op, attrs, []string{count.Name}, "count_next", graph.Int32, []int{1}, nil)
	s := graph.State{In: count.Name, Out: next.Name}
	if init != 0 {
		s.Init = &graph.Data{DType: graph.Int32, Shape: []int{1}, I: []int64{init}}
	}
	c.d.states = append(c.d.states, s)
	return count
}

// signalDelay: SignalDelay(input int16 [..., n]) with option delay_length
// d: each row delayed by d samples, the first d zeros (a state of the last
// d samples of each row). A Concat and two Slices.
func (c *opctx) signalDelay(opts []byte) error {
	v, err := c.signalOptions(opts, "delay_length")
	if err != nil {
		return err
	}
	ins, outs, err := c.frontIO([]int8{ttInt16}, []int8{ttInt16})
	if err != nil {
		return err
	}
	x, y := ins[0], outs[0]
	d := v["delay_length"]
	if d < 0 || d > signalStreamMax {
		return c.errorf("delay_length %d is not in [0, %d]", d, signalStreamMax)
	}
	r := len(x.Shape)
	if r < 1 || x.Shape[r-1] < 1 || !sameShape(x.Shape, y.Shape) {
		return c.errorf("input %v and output %v: want one shape of rank 1 or more", x.Shape, y.Shape)
	}
	c.done = true
	if d == 0 {
		c.emit(graph.Reshape, nil, []string{x.Name}, y)
		return nil
	}
	ps := append([]int(nil), x.Shape...)
	ps[r-1] = int(d)
	prev := c.streamState("delay", graph.Int16, ps)
	w := c.streamWindow(prev, x, int(d))
	begin, stride := make([]int, r), make([]int, r)
	for i := range stride {
		stride[i] = 1
	}
	c.emit(graph.Slice, &graph.SliceAttrs{Begin: begin, End: append([]int(nil), x.Shape...), Stride: stride}, []string{w.Name}, y)
	return nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// signalFramer: SignalFramer(input int16 [..., n·frame_step]) with options
// frame_size, frame_step and prefill gives the frames int16 [..., n,
// frame_size] and a bool scalar, true when every frame was complete. A
// frame not complete is left unwritten by TFLite Micro; mcugen gives
// zeros there.
func (c *opctx) signalFramer(opts []byte) error {
	v, err := c.signalOptions(opts, "frame_size", "frame_step", "prefill")
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttInt16}, []int8{ttInt16, ttBool}, nil, nil)
	if err != nil {
		return err
	}
	if err := c.signalPlain(ins, outs[:1]); err != nil {
		return err
	}
	x, y, valid := ins[0], outs[0], outs[1]
	fs, step, prefill := v["frame_size"], v["frame_step"], v["prefill"] != 0
	if fs < 1 || step < 1 || fs > signalStreamMax || step > signalStreamMax {
		return c.errorf("frame_size %d and frame_step %d must be in [1, %d]", fs, step, signalStreamMax)
	}
	if prefill && fs < step {
		// TFLite Micro would write frame_size − frame_step zeros, a
		// negative count, into its buffer.
		return c.errorf("prefill with frame_size %d below frame_step %d: TFLite Micro's buffer overflows", fs, step)
	}
	r := len(x.Shape)
	if r < 1 || x.Shape[r-1] < int(step) || x.Shape[r-1]%int(step) != 0 || x.Shape[r-1] > signalStreamMax {
		return c.errorf("input %v: its last dimension must be a positive multiple of frame_step %d", x.Shape, step)
	}
	a := &graph.SignalFramerAttrs{FrameSize: int(fs), FrameStep: int(step), Frames: x.Shape[r-1] / int(step)}
	want := append(append([]int(nil), x.Shape[:r-1]...), a.Frames, a.FrameSize)
	if !sameShape(y.Shape, want) || len(valid.Shape) != 0 {
		return c.errorf("outputs %v and %v: want %v and a scalar", y.Shape, valid.Shape, want)
	}
	init := int64(0)
	if prefill {
		init = fs - step
	}
	ps := append([]int(nil), x.Shape...)
	ps[r-1] = a.Capacity()
	prev := c.streamState("framer", graph.Int16, ps)
	w := c.streamWindow(prev, x, a.Capacity())
	part := func(p graph.SignalStreamPart) *graph.SignalFramerAttrs { b := *a; b.Part = p; return &b }
	count := c.streamCount(graph.SignalFramer, part(graph.StreamCount), init)
	c.emit(graph.SignalFramer, part(graph.StreamOutput), []string{w.Name, count.Name}, y)
	c.emit(graph.SignalFramer, part(graph.StreamValid), []string{count.Name}, valid)
	c.done = true
	return nil
}

// signalStacker: SignalStacker(input int16 [num_channels]) with options
// num_channels, stacker_left_context, stacker_right_context and
// stacker_step gives the last left + right + 1 frames, int16
// [num_channels·(left + right + 1)], and a bool scalar, true when they
// were there (the first frame counts left + 1 times). When it is false
// TFLite Micro leaves the output unwritten; mcugen gives zeros.
func (c *opctx) signalStacker(opts []byte) error {
	v, err := c.signalOptions(opts, "num_channels", "stacker_left_context", "stacker_right_context", "stacker_step")
	if err != nil {
		return err
	}
	ins, outs, err := c.signalIO([]int8{ttInt16}, []int8{ttInt16, ttBool}, []int{1}, []int{1, 0})
	if err != nil {
		return err
	}
	if err := c.signalPlain(ins, outs[:1]); err != nil {
		return err
	}
	x, y, valid := ins[0], outs[0], outs[1]
	nc, left, right, step := v["num_channels"], v["stacker_left_context"], v["stacker_right_context"], v["stacker_step"]
	if nc < 1 || left < 0 || right < 0 || nc > signalStreamMax || left > signalStreamMax || right > signalStreamMax ||
		nc*(left+right+1) > signalStreamMax {
		return c.errorf("num_channels %d, stacker_left_context %d and stacker_right_context %d: want a positive number of channels, contexts of 0 or more and at most %d values", nc, left, right, signalStreamMax)
	}
	if step < 1 || step > left+right+1 {
		// TFLite Micro asserts (or discards what its buffer lacks).
		return c.errorf("stacker_step %d is not in [1, %d]: TFLite Micro's buffer would discard what it does not hold", step, left+right+1)
	}
	a := &graph.SignalStackerAttrs{Channels: int(nc), Left: int(left), Right: int(right), Step: int(step)}
	size := a.Frames() * a.Channels
	if x.Shape[0] != a.Channels || y.Shape[0] != size {
		return c.errorf("input %v and output %v: want [%d] and [%d]", x.Shape, y.Shape, a.Channels, size)
	}
	part := func(p graph.SignalStreamPart) *graph.SignalStackerAttrs { b := *a; b.Part = p; return &b }
	count := c.streamCount(graph.SignalStacker, part(graph.StreamCount), -1)
	prev := c.streamState("stacker", graph.Int16, []int{size})
	next := c.step(graph.SignalStacker, part(graph.StreamWindow), []string{prev.Name, x.Name, count.Name}, "window_next", graph.Int16, []int{size}, nil)
	c.d.states = append(c.d.states, graph.State{In: prev.Name, Out: next.Name})
	c.emit(graph.SignalStacker, part(graph.StreamOutput), []string{next.Name, count.Name}, y)
	c.emit(graph.SignalStacker, part(graph.StreamValid), []string{count.Name}, valid)
	c.done = true
	return nil
}

// signalOverlapAdd: SignalOverlapAdd(input T [..., n, frame_size]) with
// options T (int16 or float32) and frame_step gives T [..., n·frame_step]:
// each frame added into a buffer of frame_size values (a state, zero after
// a reset), its first frame_step values out.
func (c *opctx) signalOverlapAdd(opts []byte) error {
	v, err := c.signalOptions(opts, "T", "frame_step")
	if err != nil {
		return err
	}
	tt := int8(v["T"])
	if int64(tt) != v["T"] || (tt != ttInt16 && tt != ttFloat32) {
		return c.errorf("T is TFLite type %d: TFLite Micro's SignalOverlapAdd takes int16 (7) or float32 (0)", v["T"])
	}
	ins, outs, err := c.signalIO([]int8{tt}, []int8{tt}, nil, nil)
	if err != nil {
		return err
	}
	if err := c.signalPlain(ins, outs); err != nil {
		return err
	}
	x, y := ins[0], outs[0]
	r := len(x.Shape)
	if r < 2 || x.Shape[r-1] < 1 || x.Shape[r-2] < 1 || x.Shape[r-1] > signalStreamMax {
		return c.errorf("input %v: want [..., frames, frame_size] with positive sizes", x.Shape)
	}
	step, fs := v["frame_step"], int64(x.Shape[r-1])
	if step < 1 || step > fs {
		// TFLite Micro would move a negative count of values.
		return c.errorf("frame_step %d is not in [1, %d] (the frame size)", step, fs)
	}
	want := append(append([]int(nil), x.Shape[:r-2]...), x.Shape[r-2]*int(step))
	if !sameShape(y.Shape, want) {
		return c.errorf("output %v, want %v", y.Shape, want)
	}
	bs := append(append([]int(nil), x.Shape[:r-2]...), int(fs))
	prev := c.streamState("overlap", x.DType, bs)
	a := graph.SignalOverlapAddAttrs{FrameStep: int(step), Part: graph.StreamWindow}
	nextIns := []string{x.Name, prev.Name}
	if int64(x.Shape[r-2])*step >= fs {
		// The frames' steps cover the buffer: its next value reads
		// nothing of it.
		nextIns = nextIns[:1]
	}
	next := c.step(graph.SignalOverlapAdd, &a, nextIns, "overlap_next", x.DType, bs, nil)
	c.d.states = append(c.d.states, graph.State{In: prev.Name, Out: next.Name})
	b := a
	b.Part = graph.StreamOutput
	c.emit(graph.SignalOverlapAdd, &b, []string{x.Name, prev.Name}, y)
	c.done = true
	return nil
}

// signalIrfft: SignalIrfft(input [..., 2·(fft_length/2 + 1)] of (re, im)
// pairs) with options T and fft_length (int16, int32 or float32):
// [..., fft_length] samples, kiss_fftri in T (unscaled in fixed point,
// divided by fft_length in float32).
func (c *opctx) signalIrfft(opts []byte) error {
	n, x, y, err := c.signalFftIO(opts, "SignalIrfft")
	if err != nil {
		return err
	}
	r := len(x.Shape)
	if r < 1 || x.Shape[r-1] != 2*(n/2+1) {
		// TFLite Micro reads fft_length/2 + 1 bins a frame and writes
		// fft_length samples: other lengths read or leave other values.
		return c.errorf("input %v: want frames of %d values (%d complex bins)", x.Shape, 2*(n/2+1), n/2+1)
	}
	want := append([]int(nil), x.Shape...)
	want[r-1] = n
	if !sameShape(y.Shape, want) {
		return c.errorf("output %v, want %v", y.Shape, want)
	}
	c.emit(graph.SignalIrfft, &graph.SignalRfftAttrs{FFTLength: n}, []string{x.Name}, y)
	c.done = true
	return nil
}
