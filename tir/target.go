package tir

import (
	"fmt"
	"maps"
	"sort"
)

// ScheduleFunc transforms one kernel's loop nest for a target. It reads its
// tunable choices from f.Knobs (filling in defaults) and must not change
// what f computes.
type ScheduleFunc func(f *PrimFunc) (*PrimFunc, error)

// Target names a schedule set: a schedule per kernel op (PrimFunc.Op), with
// a fallback for ops it does not list. Targets inherit: a "dsp" target lists
// the ops it speeds up and falls back to "generic" for the rest.
type Target struct {
	Name      string
	Schedules map[string]ScheduleFunc
	Fallback  *Target
	// Knobs override schedule defaults, keyed by kernel name
	// ("conv2d_3_s8") or by op ("conv2d"); the kernel name wins. Tuning
	// records load into this.
	Knobs map[string]map[string]int
	// CoreKnobs are default overrides for one core of the target's family
	// (core → op → knobs), where a schedule's default measured worse on
	// that core; the pipeline applies them before any other knobs.
	CoreKnobs map[string]map[string]map[string]int
	// StackBytes is the stack a kernel's local arrays may take (0: no
	// limit known); a row-staged in-place kernel (inplace_rows.go) that
	// would need more is not offered, and schedules see it as
	// PrimFunc.StackBytes (the dsp planar depthwise form declines past it).
	StackBytes int
}

// ForCore returns t with the knob defaults of CoreKnobs[core] applied (op
// level, so kernel-level knobs and tuning records still win).
func (t Target) ForCore(core string) Target {
	for op, k := range t.CoreKnobs[core] {
		t = t.WithKnobs(op, k)
	}
	return t
}

// WithKnobs returns a copy of t with knob overrides for a kernel name or
// op, merged over the ones t already has for that key (a later value of
// the same knob wins).
func (t Target) WithKnobs(key string, knobs map[string]int) Target {
	c := t
	c.Knobs = maps.Clone(t.Knobs)
	if c.Knobs == nil {
		c.Knobs = map[string]map[string]int{}
	}
	merged := maps.Clone(t.Knobs[key])
	if merged == nil {
		merged = map[string]int{}
	}
	maps.Copy(merged, knobs)
	c.Knobs[key] = merged
	return c
}

var targets = map[string]*Target{}

// RegisterTarget adds a target to the table TargetByName reads.
func RegisterTarget(t *Target) { targets[t.Name] = t }

// TargetByName returns a registered target ("generic" is always there).
func TargetByName(name string) (Target, error) {
	t, ok := targets[name]
	if !ok {
		names := make([]string, 0, len(targets))
		for n := range targets {
			names = append(names, n)
		}
		sort.Strings(names)
		return Target{}, fmt.Errorf("tir: unknown target %q (have %v)", name, names)
	}
	return *t, nil
}

// Generic is the plain-C schedule set every target falls back to.
var Generic = &Target{Name: "generic", Schedules: map[string]ScheduleFunc{
	"conv2d":           scheduleConvBlocked,
	"depthwise_conv2d": scheduleConvBlocked,
	"fully_connected":  scheduleFCBlocked,
	"avg_pool2d":       scheduleHoist,
	"max_pool2d":       scheduleHoist,
}}

func init() {
	RegisterTarget(Generic)
	// The Cortex-M3 has SMLAL and no SIMD: channel pairs in one 64-bit
	// accumulator (generic_pairs.go). Elsewhere a 64-bit multiply is a
	// library call (Cortex-M0) or the core has faster targets.
	Generic.CoreKnobs = map[string]map[string]map[string]int{"cortex-m3": {
		"conv2d": {"pairs": 1}, "fully_connected": {"pairs": 1},
	}}
	// ARMv6-M (and v8-M Baseline): eight low registers for MULS and the
	// byte loads, so fully connected layers in blocks of two rows over a
	// reduction not unrolled spill less than with eight rows. mcugen tune
	// on the rp2040 (M0+ code on mps2-an385) chose this on every fully
	// connected layer of AD and KWS but one (AD 1,923,376 → 1,445,086
	// untuned). Convolutions in blocks of two channels were mixed (KWS
	// −0.5%, IC −1.7%, VWW +0.6%): they keep the default.
	//
	// Knob quad on both (generic_pairs.go): four channels a step over int32
	// weights, one LDM and a MULS, ADD pair per multiply-accumulate, with the
	// accumulators in high registers (KWS's pointwise layers on the M0+: 7.2
	// → 4.1 instructions per MAC). The block knobs above are the fallback's,
	// where the fit pass keeps a kernel's weights int8.
	v6m := map[string]map[string]int{
		"fully_connected": {"block_oc": 2, "unroll_k": 0, "quad": 1},
		"conv2d":          {"quad": 1},
	}
	// copy_min, copy_aligned (copyruns.go): the data-movement kernels'
	// run copies call memcpy only for aligned runs of 16 bytes or more.
	for _, op := range []string{"concat", "slice", "pad", "reshape"} {
		v6m[op] = map[string]int{"copy_min": 16, "copy_aligned": 1}
	}
	for _, core := range []string{"cortex-m0", "cortex-m0plus", "cortex-m1", "cortex-m23"} {
		Generic.CoreKnobs[core] = v6m
	}
}

func (t Target) schedule(f *PrimFunc) (*PrimFunc, error) {
	if f.Knobs == nil {
		f.Knobs = map[string]int{}
	}
	f.StackBytes = t.StackBytes
	for _, key := range []string{f.Op, f.Name} {
		for k, v := range t.Knobs[key] {
			f.Knobs[k] = v
		}
	}
	for cur := &t; cur != nil; cur = cur.next() {
		if s, ok := cur.Schedules[f.Op]; ok {
			g, err := s(f)
			if err == nil && g != nil {
				shortCopiesAsLoops(g)
			}
			return g, err
		}
	}
	shortCopiesAsLoops(f)
	return f, nil
}

func (t *Target) next() *Target {
	if t.Fallback != nil {
		return t.Fallback
	}
	if t.Name != Generic.Name {
		return Generic
	}
	return nil
}

func knob(f *PrimFunc, name string, def int) int {
	if f.Knobs == nil {
		f.Knobs = map[string]int{}
	}
	v, ok := f.Knobs[name]
	if !ok {
		f.Knobs[name] = def
		return def
	}
	return v
}

// scheduleHoist moves padding checks out of the loops they do not depend on,
// drops the checks that always hold and, with knob partition (default 1),
// splits the output rows and columns into border and interior so the
// interior runs without checks (then the kernel rows and columns of the
// border pieces likewise).
func scheduleHoist(f *PrimFunc) (*PrimFunc, error) {
	f = PruneConditions(Simplify(HoistInvariantIf(Simplify(f))))
	if knob(f, "partition", 1) != 0 {
		for _, l := range []string{"ow", "oh", "kh", "kw"} {
			f = PartitionLoop(f, l)
		}
	}
	return f, nil
}

// scheduleConvGeneric: padding checks hoisted and removed where the window
// is always inside the image; knob tensorize_dot (default 0) turns the int8
// channel reduction into the dot intrinsic; knobs unroll_kw and unroll_kh
// unroll the kernel-width and -height loops when they are at most that long
// (0 = never).
func scheduleConvGeneric(f *PrimFunc) (*PrimFunc, error) {
	// Knob fold_offset (default 1): padded int8 convs read the zero point at
	// padded taps and fold the input offset into the bias (FoldInputOffset);
	// tensorize_dot wants the unfolded form.
	if knob(f, "fold_offset", 1) != 0 && knob(f, "tensorize_dot", 0) == 0 {
		g, err := FoldInputOffset(f)
		if err != nil {
			return nil, err
		}
		f = g
	}
	f, err := scheduleHoist(f)
	if err != nil {
		return nil, err
	}
	if knob(f, "tensorize_dot", 0) != 0 && findLoop(f.Body, "ic") != nil {
		if g, err := Tensorize(f, "ic", DotIntrin); err == nil {
			f = g
		}
	}
	// Knob unroll_ic: the channel reduction split by this factor and the
	// inner part unrolled, when it divides the channel count (0 = never).
	if u := knob(f, "unroll_ic", 4); u > 1 {
		if l := findLoop(f.Body, "ic"); l != nil {
			if n, ok := IsConst(l.Extent); ok && n > int64(u) && n%int64(u) == 0 {
				f = splitUnrollAll(f, "ic", u)
			}
		}
	}
	if u := knob(f, "unroll_kw", 4); u > 0 {
		f = unrollAll(f, "kw", u)
	}
	// Knob unroll_kh: the kernel-height loop unrolled too when it is at
	// most that long (0 = never). Depthwise default 3: a 3×3 window in
	// straight-line code (KWS and VWW on a Cortex-M3 −6%); a convolution's
	// window repeats for each channel block, so there unrolling costs more
	// flash than it saves (IC: −2% instructions for +17% flash).
	if u := knob(f, "unroll_kh", 3*int(b2i(f.Op == "depthwise_conv2d"))); u > 0 {
		f = unrollAll(f, "kh", u)
	}
	return f, nil
}

// scheduleFCGeneric: knob split_k splits the reduction and unrolls the inner
// part by that factor when it divides K (0 = leave it).
func scheduleFCGeneric(f *PrimFunc) (*PrimFunc, error) {
	s := knob(f, "unroll_k", 4)
	l := findLoop(f.Body, "k")
	if s <= 1 || l == nil {
		return f, nil
	}
	n, ok := IsConst(l.Extent)
	if !ok || n%int64(s) != 0 || n <= int64(s) {
		return f, nil
	}
	f, err := Split(f, "k", s)
	if err != nil {
		return nil, err
	}
	return Unroll(f, "k_i")
}

// splitUnrollAll splits every loop named name by factor and unrolls the
// inner part (loops whose extent the factor does not divide stay as they are).
func splitUnrollAll(f *PrimFunc, name string, factor int) *PrimFunc {
	g := *f
	fc := int64(factor)
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != name {
			return s
		}
		n, ok := IsConst(l.Extent)
		if !ok || n%fc != 0 || n <= fc {
			return s
		}
		outer, inner := NewVar(name+"_o"), NewVar(name+"_i")
		body := Substitute(l.Body, map[*Var]Expr{l.Var: Add(Add(Mul(outer, C(fc)), inner), l.Min)})
		return &For{Var: outer, Min: C(0), Extent: C(n / fc), Body: &For{Var: inner, Min: C(0), Extent: C(fc), Kind: Unrolled, Body: body}}
	}, nil)
	return &g
}

// unrollAll marks every loop named name with a constant extent of at most
// limit as unrolled.
func unrollAll(f *PrimFunc, name string, limit int) *PrimFunc {
	g := *f
	g.Body = RewriteStmt(f.Body, func(s Stmt) Stmt {
		l, ok := s.(*For)
		if !ok || l.Var.Name != name {
			return s
		}
		if n, ok := IsConst(l.Extent); ok && n <= int64(limit) {
			c := *l
			c.Kind = Unrolled
			return &c
		}
		return s
	}, nil)
	return &g
}
