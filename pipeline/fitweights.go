package pipeline

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/emitc"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/tir"
)

// LeanWeights says which kernels the fit pass (fitWeights) gave int8
// weights in flash (knob dsp.weights = 8) because the int16 layout did not
// fit the board's flash, or the flash budget; and which of those it then
// packed as int4 (knob dsp.weights = 4) because int8 did not fit either.
type LeanWeights struct {
	// Kernels are the kernels kept int8, largest weight tensors first.
	Kernels []string `json:"kernels"`
	// Int4 are those of them whose weights (fully connected layers, every
	// weight in [−8, 7]) are packed int4, two a byte, largest first.
	Int4 []string `json:"int4_kernels,omitempty"`
	// int4Tried are the kernels the fit pass asked for int4 weights, in
	// order: Int4 less those whose schedule kept int8 (tir declines a
	// layer whose partial sums could leave int32).
	int4Tried []string
	// int4Pending is the kernel the last round packed int4, and
	// int4Before the constants' bytes before it: a kernel whose int4 form
	// saves nothing (a small K padded to eight, the unfused epilogue's
	// tables) goes back to int8 and into int4Rejected. int4Listed says
	// whether the int4 step put it in Kernels.
	int4Pending  string
	int4Before   int64
	int4Listed   bool
	int4Rejected []string
	// CKernels are those of them the C defines: a kernel whose C repeats
	// an earlier one's (layers sharing weights) is a call of that one.
	CKernels []string `json:"c_kernels"`
	// SavedBytes is how much smaller the lowered constants are than with
	// the int16 layout everywhere the build would otherwise have it.
	SavedBytes int64 `json:"saved_bytes"`
	// ConstBytes is the lowered constants' size in the end, and FlashBytes
	// the board's weights region, or the flash budget when Budget is set
	// (the budget was the tighter limit).
	ConstBytes int64 `json:"const_bytes"`
	FlashBytes int64 `json:"flash_bytes"`
	Budget     bool  `json:"budget,omitempty"`
}

// Summary is the one line compile prints.
func (l *LeanWeights) Summary() string {
	s, what := "s", "flash"
	if len(l.Kernels) == 1 {
		s = ""
	}
	if l.Budget {
		what = "the flash budget"
	}
	shared := ""
	if n := len(l.CKernels); n > 0 && n < len(l.Kernels) {
		shared = fmt.Sprintf(", %d distinct kernel%s in the C", n, map[bool]string{true: "", false: "s"}[n == 1])
	}
	four := ""
	if n := len(l.Int4); n > 0 {
		four = fmt.Sprintf(" (%d of them packed int4)", n)
	}
	return fmt.Sprintf("weights: %d layer%s kept int8%s to fit %s (%.1f KB saved; constants %s B of %s B%s)",
		len(l.Kernels), s, four, what, float64(l.SavedBytes)/1000, commas(l.ConstBytes), commas(l.FlashBytes), shared)
}

// Code headroom the fit pass leaves in a weights region that also holds
// code: an estimate (the kernels, the entry function and a small
// application), not a measurement; the linker still has the last word.
const (
	codeHeadroomBase   = 4096
	codeHeadroomKernel = 2048
)

// leanCandidate is a kernel whose weights are in the int16 layout.
type leanCandidate struct {
	name, op string
	bytes    int64 // of its int16 weights
	saves    int64 // with int8 weights instead
}

// leanCandidates lists the conv/FC kernels of m that hold widened packed
// weights (the dsp target's int16 ones, DSPPackWeights or Winograd's
// transformed ones, and ARMv6-M's int32 quads), largest first, then by name.
func leanCandidates(m *tir.Module) []leanCandidate {
	var out []leanCandidate
	for _, f := range m.Funcs {
		if (f.Op != "conv2d" && f.Op != "fully_connected") || (f.Knobs["weights"] != 16 && f.Knobs["weights"] != 32) {
			continue
		}
		var n, saves int64
		for _, c := range f.Consts() {
			b := int64(c.Len() * c.DType.Size())
			switch {
			case strings.HasSuffix(c.Name, "_weights_s16"):
				n, saves = n+b, saves+b/2 // the same values as bytes
			case strings.HasSuffix(c.Name, "_weights_wino"):
				n, saves = n+b, saves+b*23/32 // 16 int16 taps for 9 int8 ones
			case strings.HasSuffix(c.Name, "_weights_q32"):
				n, saves = n+b, saves+b*3/4 // ARMv6-M's int32 weights (tir.IntrGenQuad)
			}
		}
		if n > 0 {
			out = append(out, leanCandidate{f.Name, f.Op, n, saves})
		}
	}
	slices.SortFunc(out, func(a, b leanCandidate) int {
		return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name))
	})
	return out
}

// int4Candidates lists the dsp fully connected kernels of m that hold int8
// weights (knob weights = 8) all in [−8, 7], which packed int4 weights
// (knob weights = 4) hold in half the bytes, largest first, then by name;
// tried, the kernels the schedule declined (kept int8 with the knob asking
// for 4) are left out.
func int4Candidates(m *tir.Module, tried []string) []leanCandidate {
	if m.Target != "dsp" {
		return nil
	}
	var out []leanCandidate
	for _, f := range m.Funcs {
		if f.Op != "fully_connected" || f.Knobs["weights"] != 8 || slices.Contains(tried, f.Name) {
			continue
		}
		var n int64
		ok := true
		for _, c := range f.Consts() {
			if strings.HasSuffix(c.Name, "_weights_s8") {
				n += int64(c.Len() * c.DType.Size())
				ok = ok && c.Data != nil && tir.Int4Range(c.Data.I)
			}
		}
		if ok && n > 0 {
			// Half, less the padding of K to eight (n/2 is an upper bound).
			out = append(out, leanCandidate{f.Name, f.Op, n, n / 2})
		}
	}
	slices.SortFunc(out, func(a, b leanCandidate) int {
		return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name))
	})
	return out
}

// int4Bytes is how many bytes of the graph's weights packed int4 weights
// could save on the dsp target (half of each int8 fully connected weight
// tensor whose values are all in [−8, 7]; 0 on other targets), so that
// checkFits's lower bound stays one.
func int4Bytes(s *State) int64 {
	if s.targetName() != "dsp" {
		return 0
	}
	seen := map[string]bool{}
	var n int64
	for _, nd := range s.Graph.Nodes {
		if nd.Op != graph.FullyConnected || len(nd.Inputs) < 2 || seen[nd.Inputs[1]] {
			continue
		}
		seen[nd.Inputs[1]] = true
		t := s.Graph.Tensors[nd.Inputs[1]]
		if t == nil || !t.IsConst() || t.DType != graph.Int8 || t.Data == nil || !tir.Int4Range(t.Data.I) {
			continue
		}
		n += int64(t.Bytes()) / 2
	}
	return n
}

// fitWeights checks the lowered module's constants against the board's
// weights region and the flash budget, whichever leaves the constants less
// room. When they (with headroom for code, where the limit holds code too)
// do not fit and dsp kernels hold int16 weights, it gives the largest of
// those int8 weights (knob weights = 8, which wins over tuning records and
// Options.Knobs), as few as the estimate needs, in *t and returns true:
// the caller lowers again and calls it again. Where every such kernel is
// int8 and the constants still do not fit, the dsp fully connected layers
// whose weights are all in [−8, 7] take packed int4 weights (knob weights
// = 4), largest first, one a round, each kept only where the constants
// shrink, as few as needed. Constants that do
// not fit then are a FitError, before any code is emitted.
//
// The flash budget (Options.FlashBudget) covers the model's code as well
// as its weights, so the code headroom always applies to it, as it does to
// a region that also holds code. It applies on any board, bare metal or
// not; the board's region on any board that declares one.
func (s *State) fitWeights(t *tir.Target) (bool, error) {
	b := s.Opt.Board
	s.codeUnsure = nil
	code := codeHeadroomBase + codeHeadroomKernel*int64(s.Module.DistinctFuncs())
	var lim *limit
	var headroom int64
	if b != nil {
		if r := s.weightsRegion(); r != nil {
			lim = &limit{region: r, bytes: int64(r.Length)}
			if slices.Contains(r.Holds, boards.HoldsCode) || b.RegionFor(boards.HoldsCode) == r {
				headroom = code
			}
		}
	}
	// The budget binds where it leaves the constants less room than the
	// region (on a tie the region, whose messages are the usual ones).
	if bud := s.Opt.FlashBudget; bud > 0 && (lim == nil || bud-code < lim.bytes-headroom) {
		lim, headroom = &limit{budget: "flash", bytes: bud}, code
	}
	if lim == nil {
		return false, nil
	}
	// A weights region that also holds the arena (and, on bare metal,
	// the data and stack) holds them beside the constants: a board with
	// its weights in RAM passed this check 2 KB short and failed to link
	// (review finding).
	var reserved int64
	if r := lim.region; r != nil && b != nil {
		if b.RegionFor(boards.HoldsArena) == r {
			reserved += s.ModelRAM()
		}
		if b.BareMetal() && b.RegionFor(boards.HoldsData) == r && b.StackBytes > 0 {
			reserved += int64(b.StackBytes)
		}
	}
	// What the constants and code may take of the region.
	fit := *lim
	fit.bytes -= reserved
	have := fit.bytes
	need := s.Module.ConstBytes()
	if l := s.Lean; l != nil && l.int4Pending != "" {
		c := l.int4Pending
		l.int4Pending = ""
		if need >= l.int4Before {
			// Packed, it saved nothing: back to int8, and never again
			// (review finding: a 4→4000 layer grew the constants and
			// the budget a later layer's int4 form met was refused).
			l.int4Tried = slices.DeleteFunc(l.int4Tried, func(k string) bool { return k == c })
			l.int4Rejected = append(l.int4Rejected, c)
			if l.int4Listed {
				l.Kernels = slices.DeleteFunc(l.Kernels, func(k string) bool { return k == c })
			}
			l.Int4 = slices.DeleteFunc(l.Int4, func(k string) bool { return k == c })
			return true, nil
		}
	}
	if s.Lean != nil && len(s.Lean.int4Tried) > 0 {
		s.Lean.Int4 = nil
		for _, f := range s.Module.Funcs {
			if f.Knobs["weights"] == 4 && slices.Contains(s.Lean.int4Tried, f.Name) {
				s.Lean.Int4 = append(s.Lean.Int4, f.Name)
			}
		}
		slices.SortStableFunc(s.Lean.Int4, func(a, b string) int {
			return cmp.Compare(slices.Index(s.Lean.int4Tried, a), slices.Index(s.Lean.int4Tried, b))
		})
	}
	if s.Lean != nil {
		s.Lean.SavedBytes, s.Lean.ConstBytes = s.leanFrom-need, need
		// Which limit binds can change as kernels' code changes (a region
		// without code beside the budget): say the one that binds now.
		s.Lean.FlashBytes, s.Lean.Budget = have, lim.region == nil
	}
	if need+headroom <= have {
		if need+2*headroom <= have {
			return false, nil
		}
		// Within twice the estimate of the region's end: the estimate
		// can be short (KWS's M0+ code took 29 KB where it allowed 28:
		// review finding), so the code is measured here; where it
		// cannot be, checkCode tries once the C is emitted, and says so.
		flash, ok := s.measuredFlash()
		if !ok {
			s.codeUnsure = &codeCheck{lim: fit, consts: need, estimate: headroom}
			return false, nil
		}
		total := flash
		if lim.region != nil {
			total += s.runtimeHeadroom()
		}
		if total <= have {
			// The module is final: these are the emitted C's figures.
			s.codeMeasured = flash
			return false, nil
		}
		// The code as measured leaves the constants less room than the
		// estimate: layers keep int8 weights for it, as for a short
		// estimate (review finding: KWS fitted a board of 81 KiB of flash
		// with a layer kept int8, and was refused on one of 82 KiB, where
		// the estimate let every layer keep int16 weights and the
		// measured code then did not fit).
		headroom = total - need
	}
	cands := leanCandidates(s.Module)
	var four []leanCandidate
	if len(cands) == 0 {
		// Every widened kernel is int8: int4 where the weights allow.
		var tried []string
		if s.Lean != nil {
			tried = append(slices.Clone(s.Lean.int4Tried), s.Lean.int4Rejected...)
		}
		four = int4Candidates(s.Module, tried)
		if len(four) > 0 && need <= have && s.measuredFits(fit) {
			// Only the estimate was short, and the code as it is fits.
			return false, nil
		}
	}
	if len(four) > 0 {
		if s.Lean == nil {
			// Int8 weights from the knobs (Options.Knobs, KeepInt8).
			s.Lean = &LeanWeights{FlashBytes: have, Budget: lim.region == nil}
			s.leanFrom = need
		}
		// One layer a round, largest first, each measured as lowered:
		// the last resort, so the rounds cost little, and the layers
		// packed are as few as the constants need (and none whose int4
		// form saves nothing).
		c := four[0]
		*t = t.WithKnobs(c.name, map[string]int{"weights": 4})
		l := s.Lean
		l.int4Tried = append(l.int4Tried, c.name)
		l.Int4 = append(l.Int4, c.name)
		l.int4Pending, l.int4Before, l.int4Listed = c.name, need, !slices.Contains(l.Kernels, c.name)
		if l.int4Listed {
			l.Kernels = append(l.Kernels, c.name)
		}
		return true, nil
	}
	if len(cands) > 0 && need <= have && s.Lean == nil && s.measuredFits(fit) {
		// Only the estimate was short, and the code as it is fits.
		return false, nil
	}
	if len(cands) == 0 {
		if need <= have {
			// Only the code estimate is short: checkCode measures the
			// code once the C is emitted (the estimate, a flat 2 KiB a
			// kernel, refused a 14-layer model whose code was 6 KB
			// against a 32 KiB budget: user-journey finding).
			s.codeUnsure = &codeCheck{lim: fit, consts: need, estimate: headroom}
			return false, nil
		}
		consts := "the lowered constants"
		if s.Lean != nil {
			consts += fmt.Sprintf(", even with %d layer(s) kept int8", len(s.Lean.Kernels))
			if n := len(s.Lean.Int4); n > 0 {
				consts += fmt.Sprintf(" (%d of them packed int4)", n)
			}
		}
		if lim.region == nil {
			// A budget: the constants alone are over it. The shortfall is
			// the measured code's and constants' where the board's
			// compiler can measure them (review finding: "72 B short" for
			// the weights alone, and a budget 100 B larger was then 45,688
			// B short with the code); else the constants' alone, the
			// code's estimate only named (CI journey: "28,320 B short"
			// counted a 24,576 B estimate of code that measured 2,224 B).
			if flash, ok := s.measuredFlash(); ok && flash > need {
				what := fmt.Sprintf("the model's code and constants (measured with the board's compiler at -O2; %s: %s B)", consts, commas(need))
				return false, s.weightsFitError(*lim, what, flash)
			}
			what := fmt.Sprintf("weights (%s) alone, before its code (estimated at %s B)", consts, commas(headroom))
			return false, s.weightsFitError(*lim, what, need)
		}
		if reserved > 0 {
			what := fmt.Sprintf("weights (%s, %s B) and what shares the region with them (the arena, and the stack where it is there: %s B)", consts, commas(need), commas(reserved))
			return false, s.weightsFitError(*lim, what, need+reserved)
		}
		return false, s.weightsFitError(*lim, "weights ("+consts+")", need)
	}
	if s.Lean == nil {
		s.Lean = &LeanWeights{FlashBytes: have, Budget: lim.region == nil}
		s.leanFrom = need
	}
	// As few kernels as needed, largest first.
	est := need
	var forced []string
	for _, c := range cands {
		if est+headroom <= have {
			break
		}
		est -= c.saves
		// Knobs the caller gave (Options.Knobs) are overridden here;
		// tuning records are not: a kernel kept int8 takes the records
		// tuned with int8 weights (tune.KeyFor), and tune.Overrides notes
		// the int16 ones it leaves.
		if s.Opt.Knobs[c.name]["weights"] == 16 || s.Opt.Knobs[c.op]["weights"] == 16 {
			name := c.name
			if t.Knobs[c.name]["winograd"] == 1 || t.Knobs[c.op]["winograd"] == 1 {
				name += " (its Winograd off: int8 weights take the direct form)"
			}
			forced = append(forced, name)
		}
		*t = t.WithKnobs(c.name, map[string]int{"weights": 8})
		s.Lean.Kernels = append(s.Lean.Kernels, c.name)
	}
	if len(forced) > 0 {
		who := "the flash budget"
		if lim.region != nil {
			who = b.Name + "'s flash"
		}
		s.Opt.Warn(fmt.Sprintf("%d kernel(s) asked for int16 weights (knob weights=16) keep int8 weights: %s needs them (the fit pass wins): %s",
			len(forced), who, strings.Join(forced, ", ")))
	}
	return true, nil
}

// codeCheck is a region whose constants fit but whose code, estimated,
// might not (State.codeUnsure).
type codeCheck struct {
	lim              limit
	consts, estimate int64
}

// checkCode, where the fit pass could not tell from its estimate, compiles
// the emitted C once with the board's compiler and counts its text and
// data: a model whose code and constants leave less than runtimeHeadroom
// of the region for the runtime and application is
// a FitError with the measured figures (it was reported as fitting, and
// the link failed: user-journey finding). Without the compiler it warns.
func checkCode(s *State) error {
	c := s.codeUnsure
	if c == nil {
		return nil
	}
	b := s.Opt.Board
	unmeasured := func(why string) error {
		if c.lim.region == nil {
			// No linker checks a budget, which covers the model's code as
			// well as its constants: unmeasured, the estimate decides.
			if c.consts+c.estimate <= c.lim.bytes {
				return nil
			}
			what := fmt.Sprintf("weights (the lowered constants, %s B) and code (estimated at %s B; it could not be measured: %s)", commas(c.consts), commas(c.estimate), why)
			return s.weightsFitError(c.lim, what, c.consts+c.estimate)
		}
		s.Opt.Warn(fmt.Sprintf("flash: the constants (%s B) leave %s B of %s's %s region for code, estimated at %s B, and it could not be measured (%s): the link may fail",
			commas(c.consts), commas(c.lim.bytes-c.consts), b.Name, c.lim.region.Name, commas(c.estimate), why))
		return nil
	}
	if b == nil || b.Toolchain == boards.ToolchainHost {
		// A board built by another compiler than mcugen runs (an AVR
		// Arduino board on the host toolchain): the host's gcc does not
		// measure its code (review finding).
		return unmeasured("mcugen does not build for this board")
	}
	flash, err := measureFlash(b, s.Files, s.Opt.Compiler)
	if err != nil {
		return unmeasured(firstLine(err))
	}
	s.codeMeasured = int64(flash)
	if c.lim.region == nil {
		// A budget is the model's alone: its code and constants.
		if need := int64(flash); need > c.lim.bytes {
			what := fmt.Sprintf("the model's code and constants (measured with the board's compiler at -O2; constants %s B)", commas(c.consts))
			return s.weightsFitError(c.lim, what, need)
		}
		return nil
	}
	if room := s.runtimeHeadroom(); int64(flash)+room > c.lim.bytes {
		need := int64(flash) + room
		what := fmt.Sprintf("the model's code and constants (%s B, measured with the board's compiler at -O2; constants %s B) and %s B for the runtime and application",
			commas(int64(flash)), commas(c.consts), commas(room))
		return s.weightsFitError(c.lim, what, need)
	}
	return nil
}

// firstLine is err's message up to its first newline.
func firstLine(err error) string {
	m, _, _ := strings.Cut(err.Error(), "\n")
	return m
}

// measureFlash compiles the C of files with b's compiler (clang for a
// --cc clang build) at -O2 and returns their text and data: the model's
// code and constants as the board links them.
func measureFlash(b *boards.Board, files map[string][]byte, compiler string) (int, error) {
	dir, err := os.MkdirTemp("", "mcugen-fit-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := WriteFiles(dir, files); err != nil {
		return 0, err
	}
	var srcs []string
	for name := range files {
		if strings.HasSuffix(name, ".c") {
			srcs = append(srcs, filepath.Join(dir, name))
		}
	}
	slices.Sort(srcs)
	return runner.ObjectFlash(b, srcs, dir, compiler)
}

// measuredFits, before the fit pass keeps any layer's weights int8 on the
// strength of its code estimate alone, emits and measures the module as
// lowered: when the measured code and constants fit the limit (a budget
// whole, a region with runtimeHeadroom left for the runtime), no layer
// needs int8 weights (AD with int16 weights measured 566,228 B against the
// estimate's 575,584 B, and a budget of exactly that made a layer int8:
// review finding). It is false where it cannot measure.
func (s *State) measuredFits(lim limit) bool {
	flash, ok := s.measuredFlash()
	if !ok {
		return false
	}
	need := flash
	if lim.region != nil {
		need += s.runtimeHeadroom()
	}
	if need > lim.bytes {
		return false
	}
	s.codeMeasured = flash
	return true
}

// measuredFlash emits the module as lowered and measures its code and
// constants with the board's compiler at -O2 (measureFlash); false where it
// cannot (no board compiler mcugen runs, or the build fails).
func (s *State) measuredFlash() (int64, bool) {
	b := s.Opt.Board
	if b == nil || b.Toolchain == boards.ToolchainHost {
		return 0, false
	}
	files, err := emitc.Emit(s.Module, s.emitOptions())
	if err != nil {
		return 0, false
	}
	flash, err := measureFlash(b, files, s.Opt.Compiler)
	if err != nil {
		return 0, false
	}
	return int64(flash), true
}
