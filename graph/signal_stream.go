package graph

import "fmt"

// TFLite Micro's signal-library streaming ops (signal/micro/kernels
// framer.cc, stacker.cc, overlap_add.cc) and its inverse FFT (irfft.cc).
// Framer and Stacker hold their circular buffers as two states: a window
// of the latest samples (int16) and the number of samples (Framer) or
// frames (Stacker) the buffer holds, an int32 [1]; that count does not
// depend on the data, only on the inferences since a reset. OverlapAdd's
// buffer is one state. Each result is a node of its own (Part). (Delay is
// a Concat and Slices in the TFLite importer.)

// SignalStreamPart is which result of a SignalFramer, SignalStacker or
// SignalOverlapAdd node.
type SignalStreamPart int

const (
	// StreamOutput is the frames (int16), zero where TFLite Micro writes
	// nothing (a frame not yet valid).
	StreamOutput SignalStreamPart = iota
	// StreamValid is the bool scalar: every frame of the inference valid.
	StreamValid
	// StreamCount is the count's next value (int32 [1]).
	StreamCount
	// StreamWindow is the Stacker's next window (int16), OverlapAdd's next
	// buffer.
	StreamWindow
)

// SignalFramerAttrs are the attributes of SignalFramer. Its inputs: for
// StreamOutput the window (the state's Capacity samples then the input's
// Frames·FrameStep, per row, int16 [..., Capacity + Frames·FrameStep]) and
// the count; for StreamValid and StreamCount the count only. The count
// a (samples in the buffer) runs for each frame: a += FrameStep, and if
// a ≥ FrameSize the frame is the FrameSize samples starting a samples
// before the frame's end and a −= FrameStep; otherwise the frame is not
// valid.
type SignalFramerAttrs struct {
	FrameSize, FrameStep, Frames int
	Part                         SignalStreamPart
}

// Capacity is TFLite Micro's circular buffer capacity: the frame size
// rounded up to a multiple of the step.
func (a *SignalFramerAttrs) Capacity() int {
	return (a.FrameSize + a.FrameStep - 1) / a.FrameStep * a.FrameStep
}

// SignalStackerAttrs are the attributes of SignalStacker (Channels per
// frame, Left + Right + 1 frames stacked, Step frames dropped after each
// output). The count is the frames the buffer holds, −1 before the first
// frame (which TFLite Micro writes Left + 1 times). Inputs: StreamWindow
// the window (int16 [K·Channels], K = Left + Right + 1), the frame (int16
// [Channels]) and the count; StreamOutput the next window and the count;
// StreamValid and StreamCount the count.
type SignalStackerAttrs struct {
	Channels, Left, Right, Step int
	Part                        SignalStreamPart
}

// Frames is the number of frames stacked, Left + Right + 1.
func (a *SignalStackerAttrs) Frames() int { return a.Left + a.Right + 1 }

// Held is the count after the next frame is written, from the count c
// before it.
func (a *SignalStackerAttrs) Held(c int64) int64 {
	if c < 0 {
		return int64(a.Left) + 1
	}
	return c + 1
}

func signalStreamShape(g *Graph, n *Node, x *Tensor) ([]int, error) {
	countShape := func(i int) error {
		c := g.In(n, i)
		if c == nil || c.DType != Int32 || NumElements(c.Shape) != 1 {
			return fmt.Errorf("input %d (the count) must be int32 [1]", i)
		}
		return nil
	}
	switch n.Op {
	case SignalIrfft:
		a, ok := n.Attrs.(*SignalRfftAttrs)
		r := len(x.Shape)
		if !ok || a == nil || (x.DType != Int16 && x.DType != Int32 && x.DType != Float32) || r < 1 {
			return nil, fmt.Errorf("needs SignalRfftAttrs and an int16, int32 or float32 input of rank 1 or more")
		}
		if err := RfftLengthOK(a.FFTLength); err != nil {
			return nil, err
		}
		if x.Shape[r-1] != 2*(a.FFTLength/2+1) {
			return nil, fmt.Errorf("frames of %d values, want the %d of %d complex bins", x.Shape[r-1], 2*(a.FFTLength/2+1), a.FFTLength/2+1)
		}
		s := append([]int(nil), x.Shape...)
		s[r-1] = a.FFTLength
		return s, nil
	case SignalOverlapAdd:
		return signalOverlapAddShape(g, n, x)
	case SignalFramer:
		a, ok := n.Attrs.(*SignalFramerAttrs)
		if !ok || a == nil || a.FrameSize < 1 || a.FrameStep < 1 || a.Frames < 1 {
			return nil, fmt.Errorf("needs SignalFramerAttrs with a positive frame size, step and frame count")
		}
		switch a.Part {
		case StreamValid:
			return []int{}, countShape(0)
		case StreamCount:
			return []int{1}, countShape(0)
		case StreamOutput:
			r := len(x.Shape)
			if x.DType != Int16 || r < 1 || x.Shape[r-1] != a.Capacity()+a.Frames*a.FrameStep {
				return nil, fmt.Errorf("window %s %v: want int16 [..., %d]", x.DType, x.Shape, a.Capacity()+a.Frames*a.FrameStep)
			}
			s := append(append([]int(nil), x.Shape[:r-1]...), a.Frames, a.FrameSize)
			return s, countShape(1)
		}
	case SignalStacker:
		a, ok := n.Attrs.(*SignalStackerAttrs)
		if !ok || a == nil || a.Channels < 1 || a.Left < 0 || a.Right < 0 || a.Step < 1 || a.Step > a.Frames() {
			return nil, fmt.Errorf("needs SignalStackerAttrs with channels ≥ 1, contexts ≥ 0 and a step in [1, frames]")
		}
		size := a.Frames() * a.Channels
		switch a.Part {
		case StreamValid:
			return []int{}, countShape(0)
		case StreamCount:
			return []int{1}, countShape(0)
		case StreamOutput, StreamWindow:
			if x.DType != Int16 || NumElements(x.Shape) != size {
				return nil, fmt.Errorf("window %s %v: want int16 [%d]", x.DType, x.Shape, size)
			}
			if a.Part == StreamWindow {
				f := g.In(n, 1)
				if f == nil || f.DType != Int16 || NumElements(f.Shape) != a.Channels {
					return nil, fmt.Errorf("the frame must be int16 [%d]", a.Channels)
				}
				return []int{size}, countShape(2)
			}
			return []int{size}, countShape(1)
		}
	}
	return nil, fmt.Errorf("not a signal streaming op")
}

// SignalOverlapAddAttrs are the attributes of SignalOverlapAdd. Inputs:
// the frames (int16 or float32 [..., n, frame size]) and the buffer, a
// state of the input's type [..., frame size]. Part StreamOutput gives
// [..., n·FrameStep]: for each frame the buffer plus the frame (int16
// sums saturated), its first FrameStep values out, the buffer shifted by
// FrameStep with zeros after; StreamWindow gives the buffer after the
// last frame (a node may leave the buffer out when the frames' steps
// cover it, n·FrameStep ≥ frame size: then none of it is read).
type SignalOverlapAddAttrs struct {
	FrameStep int
	Part      SignalStreamPart
}

func signalOverlapAddShape(g *Graph, n *Node, x *Tensor) ([]int, error) {
	a, ok := n.Attrs.(*SignalOverlapAddAttrs)
	r := len(x.Shape)
	if !ok || a == nil || r < 2 || (x.DType != Int16 && x.DType != Float32) {
		return nil, fmt.Errorf("needs SignalOverlapAddAttrs and int16 or float32 frames of rank 2 or more")
	}
	fs := x.Shape[r-1]
	if a.FrameStep < 1 || a.FrameStep > fs {
		return nil, fmt.Errorf("frame step %d is not in [1, %d]", a.FrameStep, fs)
	}
	b := g.In(n, 1)
	want := append(append([]int(nil), x.Shape[:r-2]...), fs)
	// The next buffer need not read the buffer: a node may omit it then.
	optional := a.Part == StreamWindow && x.Shape[r-2]*a.FrameStep >= fs
	if (b == nil && !optional) || (b != nil && (b.DType != x.DType || NumElements(b.Shape) != NumElements(want))) {
		return nil, fmt.Errorf("the buffer (input 1) must be %s %v", x.DType, want)
	}
	switch a.Part {
	case StreamWindow:
		return want, nil
	case StreamOutput:
		return append(append([]int(nil), x.Shape[:r-2]...), x.Shape[r-2]*a.FrameStep), nil
	}
	return nil, fmt.Errorf("SignalOverlapAdd part %d", a.Part)
}
