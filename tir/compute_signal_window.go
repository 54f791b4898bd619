package tir

import (
	"github.com/mcugen/mcugen/graph"
)

func init() { register(graph.SignalWindow, computeSignalWindow) }

// computeSignalWindow lowers SignalWindow (interp.WindowSample): each run
// of W samples times the window, (x·w) >> shift saturated to int16.
func computeSignalWindow(k *kctx) (Stmt, error) {
	a, ok := k.n.Attrs.(*graph.SignalWindowAttrs)
	xt, wt := k.g.In(k.n, 0), k.g.In(k.n, 1)
	if !ok || a == nil || xt == nil || wt == nil || xt.DType != I16 || wt.DType != I16 || len(wt.Shape) != 1 {
		return nil, k.errorf("needs SignalWindowAttrs, an int16 input and 1-D int16 weights")
	}
	w := wt.Shape[0]
	frames := graph.NumElements(xt.Shape) / w
	x, win := k.in(0), k.in(1)
	y, _ := k.output()
	viewAs(x, []int{frames, w})
	viewAs(y, []int{frames, w})
	k.f.Op = "signal_window"
	return Loops([]string{"f", "i"}, []int{frames, w}, func(iv []Expr) Stmt {
		p := Mul(CastTo(I32, At(x, iv...)), CastTo(I32, At(win, iv[1])))
		return Put(y, CastTo(I16, Clamp(Shr(p, C(int64(a.Shift))), C(-32768), C(32767))), iv...)
	}), nil
}
