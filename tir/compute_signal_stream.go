package tir

import (
	"github.com/mcugen/mcugen/graph"
)

func init() {
	register(graph.SignalFramer, computeSignalFramer)
	register(graph.SignalStacker, computeSignalStacker)
}

// computeSignalFramer lowers SignalFramer (interp.signalFramer): the count
// of samples in TFLite Micro's buffer run frame by frame from the state,
// each complete frame copied from the window, the others zero.
func computeSignalFramer(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalFramerAttrs)
	if !ok || a == nil || a.FrameStep < 1 || a.FrameSize < 1 {
		return nil, k.errorf("needs SignalFramerAttrs")
	}
	y, yt := k.output()
	cnt := k.in(len(k.n.Inputs) - 1)
	viewAs(cnt, []int{1})
	step, fs := C(int64(a.FrameStep)), C(int64(a.FrameSize))
	k.f.Op = "signal_framer"
	// run walks the frames: each adds a step to the count a, and a
	// complete one (a ≥ frame size) runs done(f, a) and takes a step off.
	run := func(body func(a *Buffer) Stmt, done, notDone func(f, a Expr) Stmt) Stmt {
		return Scalar("a", I32, func(ab *Buffer) Stmt {
			frames := Loop("f", a.Frames, func(f Expr) Stmt {
				cur := At(ab)
				var then Stmt = Put(ab, Sub(cur, step))
				if done != nil {
					then = Block(done(f, cur), then)
				}
				s := &IfThenElse{Cond: GE(cur, fs), Then: then}
				if notDone != nil {
					s.Else = notDone(f, cur)
				}
				return Block(Put(ab, Add(cur, step)), s)
			})
			return Block(Put(ab, At(cnt, C(0))), frames, body(ab))
		})
	}
	switch a.Part {
	case graph.StreamCount:
		viewAs(y, []int{1})
		return run(func(ab *Buffer) Stmt { return Put(y, At(ab), C(0)) }, nil, nil), nil
	case graph.StreamValid:
		viewAs(y, []int{1})
		return Scalar("v", I32, func(v *Buffer) Stmt {
			return Block(Put(v, C(1)), run(func(*Buffer) Stmt {
				return Put(y, CastTo(graph.Bool, At(v)), C(0))
			}, nil, func(_, _ Expr) Stmt { return Put(v, C(0)) }))
		}), nil
	case graph.StreamOutput:
		wt := k.g.In(k.n, 0)
		wl := a.Capacity() + a.Frames*a.FrameStep
		if wt == nil || wt.DType != I16 || len(wt.Shape) < 1 || wt.Shape[len(wt.Shape)-1] != wl || yt.DType != I16 {
			return nil, k.errorf("needs an int16 window [..., %d]", wl)
		}
		rows := graph.NumElements(wt.Shape) / wl
		w := k.in(0)
		viewAs(w, []int{rows, wl})
		viewAs(y, []int{rows, a.Frames, a.FrameSize})
		zero := Loops([]string{"r", "f", "i"}, []int{rows, a.Frames, a.FrameSize}, func(iv []Expr) Stmt {
			return Put(y, Imm(I16, 0), iv...)
		})
		copyFrame := func(f, cur Expr) Stmt {
			start := Sub(Add(C(int64(a.Capacity())), Mul(Add(f, C(1)), step)), cur)
			return Loops([]string{"r", "i"}, []int{rows, a.FrameSize}, func(iv []Expr) Stmt {
				return Put(y, At(w, iv[0], Add(start, iv[1])), iv[0], f, iv[1])
			})
		}
		return Block(zero, run(func(*Buffer) Stmt { return nil }, copyFrame, nil)), nil
	}
	return nil, k.errorf("SignalFramer part %d", a.Part)
}

// computeSignalStacker lowers SignalStacker (interp.signalStacker): the
// frames held after this one (graph.SignalStackerAttrs.Held) decide the
// output, the flag and the next count; the window takes the frame once, or
// Left + 1 times when the count is −1.
func computeSignalStacker(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalStackerAttrs)
	if !ok || a == nil || a.Channels < 1 {
		return nil, k.errorf("needs SignalStackerAttrs")
	}
	y, _ := k.output()
	cnt := k.in(len(k.n.Inputs) - 1)
	viewAs(cnt, []int{1})
	c := At(cnt, C(0))
	size := a.Frames() * a.Channels
	held := Sel(LT(c, C(0)), C(int64(a.Left+1)), Add(c, C(1)))
	k.f.Op = "signal_stacker"
	if a.Part < graph.StreamOutput || a.Part > graph.StreamWindow {
		return nil, k.errorf("SignalStacker part %d", a.Part)
	}
	if a.Part == graph.StreamWindow {
		w, x := k.in(0), k.in(1)
		viewAs(w, []int{size})
		viewAs(x, []int{a.Channels})
		viewAs(y, []int{a.Frames(), a.Channels})
		rep := Sel(LT(c, C(0)), C(int64(a.Left+1)), C(1))
		return Let("shift", Mul(rep, C(int64(a.Channels))), func(sh Expr) Stmt {
			return Loops([]string{"f", "ch"}, []int{a.Frames(), a.Channels}, func(iv []Expr) Stmt {
				idx := Add(Add(Mul(iv[0], C(int64(a.Channels))), iv[1]), sh)
				old := At(w, Min(idx, C(int64(size-1))))
				return Put(y, Sel(LT(idx, C(int64(size))), old, At(x, iv[1])), iv...)
			})
		}), nil
	}
	return Let("held", held, func(h Expr) Stmt {
		full := GE(h, C(int64(a.Frames())))
		switch a.Part {
		case graph.StreamValid:
			viewAs(y, []int{1})
			return Put(y, CastTo(graph.Bool, full), C(0))
		case graph.StreamCount:
			viewAs(y, []int{1})
			return Put(y, Sub(h, Sel(full, C(int64(a.Step)), C(0))), C(0))
		case graph.StreamOutput:
			w := k.in(0)
			viewAs(w, []int{size})
			viewAs(y, []int{size})
			return Loop("j", size, func(j Expr) Stmt {
				return Put(y, Sel(full, At(w, j), Imm(I16, 0)), j)
			})
		}
		return nil
	}), nil
}

func init() { register(graph.SignalOverlapAdd, computeSignalOverlapAdd) }

// computeSignalOverlapAdd lowers SignalOverlapAdd (interp.signalOverlapAdd,
// which shifts the buffer frame by frame) in closed form: the value at
// position q of the buffer after frame f has added its frame is the
// state's value at q + f·step (zero past the buffer) plus, oldest first,
// frame g's value at q + (f − g)·step for each g ≤ f where that is inside
// the frame (int16: every sum saturated). The output of frame f is that
// value at q < step; the next buffer at p that of the last frame at p +
// step (zero past the buffer).
func computeSignalOverlapAdd(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalOverlapAddAttrs)
	xt := k.g.In(k.n, 0)
	if !ok || a == nil || xt == nil || len(xt.Shape) < 2 || (xt.DType != I16 && xt.DType != graph.Float32) {
		return nil, k.errorf("needs SignalOverlapAddAttrs and int16 or float32 frames")
	}
	r := len(xt.Shape)
	nf, fs, step := xt.Shape[r-2], xt.Shape[r-1], a.FrameStep
	if step < 1 || step > fs {
		return nil, k.errorf("frame step %d is not in [1, %d]", step, fs)
	}
	rows := graph.NumElements(xt.Shape) / (nf * fs)
	fl := xt.DType == graph.Float32
	// Without input 1 the buffer at the start is not read (the next
	// buffer's values all come from this inference's frames).
	x, st := k.in(0), k.in(1)
	y, _ := k.output()
	viewAs(x, []int{rows, nf, fs})
	if st != nil {
		viewAs(st, []int{rows, fs})
	}
	acc, zero := I32, Expr(C(0))
	if fl {
		acc, zero = graph.Float32, F(0)
	}
	add := func(v, e Expr) Expr {
		if fl {
			return Add(v, e)
		}
		return Clamp(Add(v, CastTo(I32, e)), C(-32768), C(32767))
	}
	out := func(e Expr) Expr {
		if fl {
			return e
		}
		return CastTo(I16, e)
	}
	// value puts V(f, q) of row into dst at idx.
	value := func(row, f, q Expr, put func(v Expr) Stmt) Stmt {
		return Scalar("v", acc, func(v *Buffer) Stmt {
			p0 := Add(q, Mul(f, C(int64(step))))
			var init Stmt = Put(v, zero)
			if st != nil {
				init = &IfThenElse{Cond: LT(p0, C(int64(fs))), Then: Put(v, CastTo(acc, At(st, row, Min(p0, C(int64(fs-1)))))), Else: init}
			}
			frames := Loop("g", nf, func(g Expr) Stmt {
				idx := Add(q, Mul(Sub(f, g), C(int64(step))))
				return If(And(LE(g, f), LT(idx, C(int64(fs)))), Put(v, add(At(v), At(x, row, g, Min(idx, C(int64(fs-1)))))))
			})
			return Block(init, frames, put(At(v)))
		})
	}
	switch a.Part {
	case graph.StreamOutput:
		k.f.Op = "signal_overlap_add"
		viewAs(y, []int{rows, nf, step})
		return Loops([]string{"r", "f", "q"}, []int{rows, nf, step}, func(iv []Expr) Stmt {
			return value(iv[0], iv[1], iv[2], func(v Expr) Stmt { return Put(y, out(v), iv...) })
		}), nil
	case graph.StreamWindow:
		k.f.Op = "signal_overlap_add_buffer"
		viewAs(y, []int{rows, fs})
		return Loops([]string{"r", "p"}, []int{rows, fs}, func(iv []Expr) Stmt {
			q := Add(iv[1], C(int64(step)))
			var z Expr = Imm(I16, 0)
			if fl {
				z = F(0)
			}
			return &IfThenElse{Cond: LT(q, C(int64(fs))),
				Then: value(iv[0], C(int64(nf-1)), q, func(v Expr) Stmt { return Put(y, out(v), iv...) }),
				Else: Put(y, z, iv...)}
		}), nil
	}
	return nil, k.errorf("SignalOverlapAdd part %d", a.Part)
}
