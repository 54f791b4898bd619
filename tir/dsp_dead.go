package tir

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// Dead output channels (dsp knob skip_dead, default on). A convolution
// channel whose weights are all zero computes acc = init (its bias) for
// every pixel, so its output is one compile-time constant: the schedule's
// own epilogue applied to the bias. Trained and pruned models have them:
// VWW's pointwise layers 14 to 26 have 71 to 234 of their 128 or 256
// channels dead (TFLite gives them multiplier 0). The gemm then runs over the runs of live channels only
// (channelBlocks), their weights packed without the dead ones (less flash
// too), and each pixel's dead channels are copied from a constant row.

// deadInfo is a kernel's dead channels and their constant row (both nil
// when it has none).
type deadInfo struct {
	dead []bool
	vals *Buffer
}

// newDeadInfo finds the dead channels of a cout×K weight matrix and
// computes their values with the kernel's epilogue store; a kernel whose
// store cannot be evaluated that way keeps every channel.
func newDeadInfo(name string, w []int64, cout, K int, store *Store, acc *Buffer, init Expr, ocVar *Var) deadInfo {
	dead := deadChannels(w, cout, K)
	if dead == nil {
		return deadInfo{}
	}
	vals, err := deadRow(name, store, acc, init, ocVar, dead)
	if err != nil {
		return deadInfo{}
	}
	return deadInfo{dead: dead, vals: vals}
}

// count is how many channels are dead.
func (dd deadInfo) count() int {
	n := 0
	for _, d := range dd.dead {
		if d {
			n++
		}
	}
	return n
}

// deadSplitsLive reports dead channels between live ones (the live
// channels in more than one run).
func deadSplitsLive(dead []bool) bool {
	live, gap := false, false
	for _, d := range dead {
		switch {
		case !d && gap:
			return true
		case !d:
			live = true
		case live:
			gap = true
		}
	}
	return false
}

// deadChannels reports, per output channel of a cout×K weight matrix,
// whether its weights are all zero; nil when none is.
func deadChannels(w []int64, cout, K int) []bool {
	if len(w) != cout*K {
		return nil
	}
	return graph.ZeroRows(w, cout)
}

// channelBlocks is the gemm's channel plan: over every run of live
// channels (all cout channels when dead is nil), blocks of c channels, then
// for the rest of the run a block of two where c is 4 and two or three are
// left, and single channels. Each block's at is how many live channels
// come before it: its weights start at channel at of the packed buffer
// (packBlocks). (The pair: a 1280 → 2 layer in blocks of four ran as two
// single channels, 4,614 instructions, where a block of two took 3,921;
// tune found it, session 57's review.)
func channelBlocks(cout, c int, dead []bool) []gemmBlock {
	var out []gemmBlock
	at := 0
	for oc := 0; oc < cout; {
		if dead != nil && dead[oc] {
			oc++
			continue
		}
		end := oc
		for end < cout && (dead == nil || !dead[end]) {
			end++
		}
		n := end - oc
		if full := n / c; full > 0 {
			out = append(out, gemmBlock{c: c, from: oc, count: full, at: at})
		}
		rem := n % c
		if c == 4 && rem >= 2 {
			out = append(out, gemmBlock{c: 2, from: end - rem, count: 1, at: at + n - rem})
			rem -= 2
		}
		if rem > 0 {
			out = append(out, gemmBlock{c: 1, from: end - rem, count: rem, at: at + n - rem})
		}
		at += n
		oc = end
	}
	return out
}

// liveCount is how many channels the plan computes.
func liveCount(blocks []gemmBlock) int {
	n := 0
	for _, b := range blocks {
		n += b.c * b.count
	}
	return n
}

// blockOf finds channel oc in the plan: the packed index of its block's
// first channel, the block width, and oc's position in the block.
func blockOf(blocks []gemmBlock, oc int) (base, bc, j int, ok bool) {
	for _, b := range blocks {
		if oc >= b.from && oc < b.from+b.c*b.count {
			k := (oc - b.from) / b.c
			return b.at + k*b.c, b.c, oc - b.from - k*b.c, true
		}
	}
	return 0, 0, 0, false
}

// packBlocks lays out int8 weights w[oc][k] (K per channel) for the plan's
// live channels only, each block as DSPPackWeights (pair words) or
// DSPPackWeights8 (bytes, w8) lays out a block, the blocks one after
// another. With the plan of all channels (channelBlocks with dead nil) it is
// exactly DSPPackWeights / DSPPackWeights8.
func packBlocks(w []int64, K, k4 int, blocks []gemmBlock, w8 bool) []int64 {
	at := func(oc, k int) int64 {
		if k >= K {
			return 0
		}
		return w[oc*K+k]
	}
	n := liveCount(blocks)
	if w8 {
		out := make([]int64, n*k4)
		for _, b := range blocks {
			for i := 0; i < b.count*b.c; i++ {
				oc, base := b.from+i, b.at+i/b.c*b.c
				j := i % b.c
				for k := 0; k < K; k++ {
					out[base*k4+4*b.c*(k/4)+4*j+k%4] = w[oc*K+k]
				}
			}
		}
		return out
	}
	out := make([]int64, n*k4/2)
	for _, b := range blocks {
		for i := 0; i < b.count*b.c; i++ {
			oc, base := b.from+i, b.at+i/b.c*b.c
			j := i % b.c
			for g := 0; g < k4/4; g++ {
				for h := 0; h < 2; h++ {
					out[base*k4/2+2*b.c*g+2*j+h] = pack16(at(oc, 4*g+h), at(oc, 4*g+h+2))
				}
			}
		}
	}
	return out
}

// deadRow computes, at compile time, the output value of every dead
// channel: store's value with the accumulator at init (the channel's
// bias), through the TIR interpreter, so it is what the kernel would have
// stored. The result is a constant row of cout values (0 where live).
func deadRow(name string, store *Store, acc *Buffer, init Expr, ocVar *Var, dead []bool) (*Buffer, error) {
	cout := len(dead)
	out := NewBuffer(name+"_dead", store.Buf.DType, []int{cout}, ScopeParam)
	var body []Stmt
	for oc, d := range dead {
		if !d {
			continue
		}
		m := map[*Var]Expr{ocVar: C(int64(oc))}
		bias := SubstituteExpr(init, m)
		v := SubstituteExpr(store.Value, m)
		v = RewriteExpr(v, func(e Expr) Expr {
			if l, ok := e.(*Load); ok && l.Buf == acc {
				return bias
			}
			return e
		})
		body = append(body, flatStore(out, C(int64(oc)), v))
	}
	f := &PrimFunc{Name: name + "_dead", Params: []*Buffer{out}, Body: Block(body...)}
	d := graph.NewData(store.Buf.DType, []int{cout})
	if err := Run(f, []*graph.Data{d}); err != nil {
		return nil, fmt.Errorf("tir: %s: dead channels: %v", name, err)
	}
	return constBuf(name+"_dead", store.Buf.DType, []int{cout}, d.I), nil
}

// deadStores copies the dead channels of pixel row i from the constant row:
// one loop per run of dead channels.
func (g *gemmSpec) deadStores(i int) []Stmt {
	var out []Stmt
	for oc := 0; oc < g.Cout; {
		if !g.dead[oc] {
			oc++
			continue
		}
		end := oc
		for end < g.Cout && g.dead[end] {
			end++
		}
		from := oc
		out = append(out, loopK("dc", end-from, Serial, func(j Expr) Stmt {
			ch := Add(C(int64(from)), j)
			st := Substitute(g.store, map[*Var]Expr{g.ocVar: ch}).(*Store)
			st = &Store{Buf: st.Buf, Indices: st.Indices, Value: &Load{Buf: g.deadVals, Indices: []Expr{ch}, Flat: true}, Flat: st.Flat}
			return g.pix(st, i)
		}))
		oc = end
	}
	return out
}

// SplitDeadTail rewrites a conv2d or fully_connected compute whose last
// output channels have all-zero weights (graph.PermuteDeadChannels puts a
// layer's dead channels last where it can): the channel loop stops at the
// last live channel, and a second loop (oc_dead / j_dead) stores the dead
// channels' constant values (deadRow). The generic and SIMD schedules then
// block and tensorize the shorter live loop as before. f is returned
// unchanged when it has no dead tail or another shape.
func SplitDeadTail(f *PrimFunc) *PrimFunc {
	return SplitDeadTailMultiple(f, 1)
}

// SplitDeadTailMultiple is SplitDeadTail keeping a multiple of k channels in
// the live loop (as many dead channels as that takes are computed with it:
// exact, their zero weights give their constant value): the MVE schedule's
// blocked kernels take channels four at a time, and a live count of 27 would
// send a layer to the unblocked GEMV.
func SplitDeadTailMultiple(f *PrimFunc, k int) *PrimFunc {
	name := map[string]string{"conv2d": "oc", "fully_connected": "j"}[f.Op]
	if name == "" {
		return f
	}
	l := findLoop(f.Body, name)
	if l == nil {
		return f
	}
	n, ok := IsConst(l.Extent)
	if m, ok2 := IsConst(l.Min); !ok || !ok2 || m != 0 || n < 1 {
		return f
	}
	al, ok := l.Body.(*Allocate)
	if !ok || len(al.Buf.Shape) != 0 {
		return f
	}
	seq, ok := al.Body.(*Seq)
	if !ok || len(seq.Stmts) != 3 {
		return f
	}
	init, ok1 := seq.Stmts[0].(*Store)
	out, ok2 := seq.Stmts[2].(*Store)
	if !ok1 || !ok2 || init.Buf != al.Buf {
		return f
	}
	var w *Load
	bad := false
	VisitStmts(seq.Stmts[1], func(s Stmt) {
		st, ok := s.(*Store)
		if !ok {
			return
		}
		_, _, wl, ok := matchMAC(st, al.Buf)
		if !ok || (w != nil && wl.Buf != w.Buf) {
			bad = true
			return
		}
		w = wl
	})
	if bad || w == nil || w.Buf.Scope != ScopeConst || w.Buf.Data == nil || !rowMajor(w.Buf) ||
		len(w.Buf.Shape) < 2 || int64(w.Buf.Shape[0]) != n || len(w.Indices) == 0 || w.Indices[0] != Expr(l.Var) {
		return f
	}
	cout := int(n)
	dead := deadChannels(w.Buf.Data.I, cout, len(w.Buf.Data.I)/cout)
	live := cout
	for live > 0 && dead != nil && dead[live-1] {
		live--
	}
	if k > 1 {
		live = min(cout, (live+k-1)/k*k)
	}
	if live == cout {
		return f
	}
	for oc := range dead[:live] {
		dead[oc] = false
	}
	vals, err := deadRow(f.Name, out, al.Buf, init.Value, l.Var, dead)
	if err != nil {
		return f
	}
	dv := NewVar(name + "_dead")
	ch := Add(C(int64(live)), dv)
	st := Substitute(out, map[*Var]Expr{l.Var: ch}).(*Store)
	tail := &For{Var: dv, Min: C(0), Extent: C(int64(cout - live)),
		Body: &Store{Buf: st.Buf, Indices: st.Indices, Value: &Load{Buf: vals, Indices: []Expr{ch}, Flat: true}, Flat: st.Flat}}
	var repl Stmt = tail
	if live > 0 {
		// The live loop reads the first live channels' weights only: a
		// shorter constant (less flash).
		shape := append([]int{live}, w.Buf.Shape[1:]...)
		per := len(w.Buf.Data.I) / cout
		wl := constBuf(w.Buf.Name, w.Buf.DType, shape, w.Buf.Data.I[:live*per])
		wl.Data.DType = w.Buf.Data.DType
		head := *l
		head.Extent = C(int64(live))
		head.Body = RewriteStmt(l.Body, nil, func(e Expr) Expr {
			if x, ok := e.(*Load); ok && x.Buf == w.Buf {
				c := *x
				c.Buf = wl
				return &c
			}
			return e
		})
		repl = Block(&head, tail)
	}
	g := *f
	g.Body = replaceStmt(f.Body, l, func(Stmt) Stmt { return repl })
	g.DeadChannels = cout - live
	return &g
}
