package interp

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

func init() {
	Register(graph.SignalFramer, IntClass, signalFramer)
	Register(graph.SignalStacker, IntClass, signalStacker)
	Register(graph.SignalOverlapAdd, IntClass, signalOverlapAdd)
	Register(graph.SignalOverlapAdd, FloatClass, signalOverlapAdd)
}

// signalFramer is TFLite Micro's Framer (signal/micro/kernels/framer.cc)
// on its circular buffer held as a window and a count (graph.SignalFramerAttrs).
func signalFramer(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalFramerAttrs)
	if !ok || a == nil || len(in) == 0 || in[len(in)-1] == nil || len(in[len(in)-1].I) != 1 {
		return nil, fmt.Errorf("needs SignalFramerAttrs and the count")
	}
	count := in[len(in)-1].I[0]
	step, fs := int64(a.FrameStep), int64(a.FrameSize)
	switch a.Part {
	case graph.StreamValid, graph.StreamCount:
		valid := int64(1)
		for range a.Frames {
			if count += step; count >= fs {
				count -= step
			} else {
				valid = 0
			}
		}
		if a.Part == graph.StreamValid {
			y := graph.NewData(graph.Bool, []int{})
			y.I[0] = valid
			return []*graph.Data{y}, nil
		}
		y := graph.NewData(graph.Int32, []int{1})
		y.I[0] = count
		return []*graph.Data{y}, nil
	case graph.StreamOutput:
		w := in[0]
		r := len(w.Shape)
		wl := a.Capacity() + a.Frames*a.FrameStep
		if r < 1 || w.Shape[r-1] != wl {
			return nil, fmt.Errorf("window %v, want [..., %d]", w.Shape, wl)
		}
		rows := len(w.I) / wl
		y := graph.NewData(graph.Int16, append(append([]int(nil), w.Shape[:r-1]...), a.Frames, a.FrameSize))
		for f := range a.Frames {
			if count += step; count < fs {
				continue
			}
			// The buffer holds the count samples ending with this
			// frame's step; the frame is the oldest FrameSize of them.
			start := int64(a.Capacity()+(f+1)*a.FrameStep) - count
			for row := range rows {
				copy(y.I[(row*a.Frames+f)*a.FrameSize:][:a.FrameSize], w.I[row*wl+int(start):][:a.FrameSize])
			}
			count -= step
		}
		return []*graph.Data{y}, nil
	}
	return nil, fmt.Errorf("SignalFramer part %d", a.Part)
}

// signalStacker is TFLite Micro's Stacker (signal/micro/kernels/stacker.cc)
// on its circular buffer held as a window and a count (graph.SignalStackerAttrs).
func signalStacker(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalStackerAttrs)
	if !ok || a == nil || len(in) == 0 || in[len(in)-1] == nil || len(in[len(in)-1].I) != 1 {
		return nil, fmt.Errorf("needs SignalStackerAttrs and the count")
	}
	held := a.Held(in[len(in)-1].I[0])
	full := held >= int64(a.Frames())
	size := a.Frames() * a.Channels
	switch a.Part {
	case graph.StreamValid:
		y := graph.NewData(graph.Bool, []int{})
		if full {
			y.I[0] = 1
		}
		return []*graph.Data{y}, nil
	case graph.StreamCount:
		y := graph.NewData(graph.Int32, []int{1})
		y.I[0] = held
		if full {
			y.I[0] -= int64(a.Step)
		}
		return []*graph.Data{y}, nil
	case graph.StreamOutput:
		y := graph.NewData(graph.Int16, []int{size})
		if len(in[0].I) != size {
			return nil, fmt.Errorf("window of %d values, want %d", len(in[0].I), size)
		}
		if full {
			copy(y.I, in[0].I)
		}
		return []*graph.Data{y}, nil
	case graph.StreamWindow:
		if len(in) != 3 || len(in[0].I) != size || len(in[1].I) != a.Channels {
			return nil, fmt.Errorf("needs the window, the frame and the count")
		}
		// The frame is written once, or Left + 1 times first.
		rep := 1
		if in[2].I[0] < 0 {
			rep = a.Left + 1
		}
		all := append([]int64(nil), in[0].I...)
		for range rep {
			all = append(all, in[1].I...)
		}
		y := graph.NewData(graph.Int16, []int{size})
		copy(y.I, all[len(all)-size:])
		return []*graph.Data{y}, nil
	}
	return nil, fmt.Errorf("SignalStacker part %d", a.Part)
}

// signalOverlapAdd is TFLite Micro's OverlapAdd (signal/src/overlap_add.cc)
// run on each row's buffer, frame after frame: the frame added to the
// buffer (int16 saturated, or float32), the buffer's first FrameStep
// values out, the rest moved down and zeros after.
func signalOverlapAdd(g *graph.Graph, n *graph.Node, in []*graph.Data) ([]*graph.Data, error) {
	a, ok := n.Attrs.(*graph.SignalOverlapAddAttrs)
	if !ok || a == nil || len(in) < 1 || len(in) > 2 {
		return nil, fmt.Errorf("needs SignalOverlapAddAttrs, the frames and the buffer")
	}
	x := in[0]
	r := len(x.Shape)
	if r < 2 {
		return nil, fmt.Errorf("frames %v: want rank 2 or more", x.Shape)
	}
	nf, fs, step := x.Shape[r-2], x.Shape[r-1], a.FrameStep
	if step < 1 || step > fs || nf*fs == 0 {
		return nil, fmt.Errorf("frame step %d, frames of %d", step, fs)
	}
	rows := x.Len() / (nf * fs)
	fl := x.DType == graph.Float32
	st := graph.NewData(x.DType, []int{rows * fs}) // no buffer: zeros, none read
	if len(in) == 2 && in[1] != nil {
		st = in[1]
	}
	if st.Len() != rows*fs {
		return nil, fmt.Errorf("buffer of %d values, want %d", st.Len(), rows*fs)
	}
	lead := x.Shape[:r-2]
	y := graph.NewData(x.DType, append(append([]int(nil), lead...), nf*step))
	next := graph.NewData(x.DType, append(append([]int(nil), lead...), fs))
	for row := range rows {
		var bi []int64
		var bf []float32
		if fl {
			bf = append([]float32(nil), st.F[row*fs:][:fs]...)
		} else {
			bi = append([]int64(nil), st.I[row*fs:][:fs]...)
		}
		for f := range nf {
			at := (row*nf + f) * fs
			out := (row*nf + f) * step
			if fl {
				for i := range fs {
					bf[i] += x.F[at+i]
				}
				copy(y.F[out:][:step], bf)
				copy(bf, bf[step:])
				clear(bf[fs-step:])
			} else {
				for i := range fs {
					bi[i] = min(max(bi[i]+x.I[at+i], -32768), 32767)
				}
				copy(y.I[out:][:step], bi)
				copy(bi, bi[step:])
				clear(bi[fs-step:])
			}
		}
		if fl {
			copy(next.F[row*fs:], bf)
		} else {
			copy(next.I[row*fs:], bi)
		}
	}
	if a.Part == graph.StreamWindow {
		return []*graph.Data{next}, nil
	}
	return []*graph.Data{y}, nil
}
