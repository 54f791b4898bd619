package runner

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// MixCount is how often one instruction key of the mix plugin executed in one inference,
// and how often it ended a block with a jump (a taken branch, or a load or move to pc).
type MixCount struct {
	Count int64
	Taken int64
}

// M4Timing is a Cortex-M4 timing model: the instruction timings published in the
// Cortex-M4 Technical Reference Manual (Arm DDI 0439, r0p1: Table 3-1 "Processor
// instruction set summary", section 3.3.2 "Load/store timings", and the FPU chapter's
// instruction table, reproduced in TI SWCU192 Table 3-27), for a system with zero wait
// states. Where the manual gives a range, the value used here is a choice, stated in the
// field. Applied to instruction counts it gives an ESTIMATE of cycles, not a measurement:
// QEMU executes instructions, not cycles, and the model ignores wait states, bus
// contention, fetch stalls on unaligned 32-bit instructions, and the data-dependent cost of
// division.
type M4Timing struct {
	// P is the pipeline refill after a taken branch or a write to pc: "1 to 3 depending
	// on the alignment and width of the target instruction, and whether the processor
	// manages to speculate the address early". Default 2, the middle of the range.
	P int64
	// Div is SDIV/UDIV: "2 to 12" (early termination on the operands' leading zeros and
	// ones). Default 7, the middle of the range.
	Div int64
}

// CortexM4 is the timing model the bench uses.
var CortexM4 = M4Timing{P: 2, Div: 7}

// Timing classes of M4Timing, in the order reports list them.
const (
	ClassALU           = "alu"            // data processing, shifts, extends, bit fields, saturation, SIMD add/sub: 1
	ClassMul           = "mul"            // MUL, MLA, MLS, long and DSP multiplies (SMLAD, SMLAL, ...): 1
	ClassDiv           = "div"            // SDIV, UDIV: Div
	ClassLoad          = "load"           // LDR/LDRB/LDRH/LDRSB/LDRSH/LDREX: 2
	ClassLoadPipelined = "load-pipelined" // a single load right after a single load, address independent of it: 1
	ClassLoadStall     = "load-stalled"   // a single load whose address the data-processing instruction before it wrote: 2 + 1
	ClassStore         = "store"          // STR/STRB/STRH: 1
	ClassStoreStall    = "store-stalled"  // a store whose address the instruction before it wrote: 1 + 1
	ClassDouble        = "ldrd/strd"      // 1 + N, N = 2
	ClassMultiple      = "ldm/stm"        // LDM, STM, PUSH, POP: 1 + N
	ClassBranch        = "branch"         // B, BL, BX, BLX, CBZ, CBNZ: 1, + P when taken
	ClassTableBranch   = "tbb/tbh"        // 2 + P
	ClassIT            = "it"             // IT: 1, 0 when folded onto a preceding 16-bit instruction
	ClassFP            = "fpu"            // VADD, VSUB, VMUL, VNMUL, VABS, VNEG, VCMP, VCVT, VMOV, VMRS, VMSR: 1 (VMOV with core registers 2)
	ClassFPMAC         = "fpu-mac"        // VMLA, VMLS, VNMLA, VNMLS, VFMA, VFMS, VFNMA, VFNMS: 3
	ClassFPDiv         = "fpu-div/sqrt"   // VDIV, VSQRT: 14
	ClassFPMem         = "fpu-load/store" // VLDR/VSTR: 2 (double 3); VLDM/VSTM/VPUSH/VPOP: 1 + N words
	ClassSystem        = "system"         // barriers, hints, MRS/MSR, CPS, SVC, BKPT: 1 (ISB 1 + P)
	ClassOther         = "other"          // not in the table: 1 each, listed in M4Estimate.Unknown
)

var classOrder = []string{ClassALU, ClassMul, ClassDiv, ClassLoad, ClassLoadPipelined, ClassLoadStall, ClassStore, ClassStoreStall,
	ClassDouble, ClassMultiple, ClassBranch, ClassTableBranch, ClassIT, ClassFP, ClassFPMAC, ClassFPDiv, ClassFPMem, ClassSystem, ClassOther}

// ClassCost is one timing class in an estimate.
type ClassCost struct {
	Class        string
	Instructions int64
	Taken        int64 // of them, how many jumped (each costs P more)
	Cycles       int64 // estimated
}

// M4Estimate is a Cortex-M4 cycle estimate for one inference: a model applied to the
// exact instruction mix, not a measurement.
type M4Estimate struct {
	Cycles       int64
	Instructions int64
	Classes      []ClassCost // in the order of the class constants, only classes that occur
	Unknown      []string    // plugin keys the table does not know (costed at 1 cycle)
}

// Class returns the cost entry of a class (zero when it did not occur).
func (e *M4Estimate) Class(name string) ClassCost {
	for _, c := range e.Classes {
		if c.Class == name {
			return c
		}
	}
	return ClassCost{Class: name}
}

var conds = map[string]bool{"eq": true, "ne": true, "cs": true, "hs": true, "cc": true, "lo": true, "mi": true, "pl": true,
	"vs": true, "vc": true, "hi": true, "ls": true, "ge": true, "lt": true, "gt": true, "le": true, "al": true}

var (
	simdRE   = regexp.MustCompile(`^(s|u|q|sh|uq|uh)(add|sub|asx|sax)(8|16)?$`)
	dspMulRE = regexp.MustCompile(`^(sm|um)(ul|la|ls|aal|uad|usd|mul|mla|mls)`)
	itRE     = regexp.MustCompile(`^it[te]{0,3}$`)
	keyRE    = regexp.MustCompile(`^([a-z0-9.]+)(\{([0-9]+|r)\})?([\^~]?)$`)
)

var baseClass = map[string]string{}

func init() {
	add := func(class string, names string) {
		for _, n := range strings.Fields(names) {
			baseClass[n] = class
		}
	}
	add(ClassALU, `mov movw movt mvn add addw adc adr sub subw sbc rsb rsc neg and orr orn eor bic cmp cmn tst teq
		lsl lsr asr ror rrx clz rev rev16 revsh rbit sxtb sxth uxtb uxth sxtab sxtah sxtb16 sxtab16 uxtab uxtah uxtb16 uxtab16
		bfi bfc ubfx sbfx ssat usat ssat16 usat16 qadd qsub qdadd qdsub pkhbt pkhtb sel usad8 usada8 nop cpy`)
	add(ClassMul, `mul mla mls`)
	add(ClassDiv, `sdiv udiv`)
	add(ClassLoad, `ldr ldrb ldrh ldrsb ldrsh ldrt ldrbt ldrht ldrsbt ldrsht ldrex ldrexb ldrexh pld pli`)
	add(ClassStore, `str strb strh strt strbt strht strex strexb strexh`)
	add(ClassDouble, `ldrd strd`)
	add(ClassMultiple, `ldm ldmia ldmfd ldmdb ldmea stm stmia stmea stmdb stmfd push pop`)
	add(ClassBranch, `b bl bx blx cbz cbnz`)
	add(ClassTableBranch, `tbb tbh`)
	add(ClassFP, `vadd vsub vmul vnmul vabs vneg vcmp vcmpe vcvt vcvtr vcvtb vcvtt vmov vmrs vmsr`)
	add(ClassFPMAC, `vmla vmls vnmla vnmls vfma vfms vfnma vfnms`)
	add(ClassFPDiv, `vdiv vsqrt`)
	add(ClassFPMem, `vldr vstr vldm vldmia vldmdb vstm vstmia vstmdb vpush vpop`)
	add(ClassSystem, `dmb dsb isb mrs msr cpsid cpsie svc bkpt wfi wfe sev yield clrex`)
}

func known(m string) (string, bool) {
	if c, ok := baseClass[m]; ok {
		return c, true
	}
	switch {
	case simdRE.MatchString(m):
		return ClassALU, true
	case dspMulRE.MatchString(m):
		return ClassMul, true
	case itRE.MatchString(m):
		return ClassIT, true
	}
	return "", false
}

// resolve finds the class of a disassembled mnemonic: it drops a width or data-type
// suffix (".w", ".f32"), then a condition code (IT blocks) and a flag-setting "s".
func resolve(m string) (string, string, bool) {
	if i := strings.IndexByte(m, '.'); i > 0 {
		m = m[:i]
	}
	if c, ok := known(m); ok {
		return m, c, true
	}
	if n := len(m); n > 2 && conds[m[n-2:]] {
		if c, ok := known(m[:n-2]); ok {
			return m[:n-2], c, true
		}
		if c, ok := known(strings.TrimSuffix(m[:n-2], "s")); ok && strings.HasSuffix(m[:n-2], "s") {
			return m[:n-3], c, true
		}
	}
	if strings.HasSuffix(m, "s") {
		if c, ok := known(m[:len(m)-1]); ok {
			return m[:len(m)-1], c, true
		}
	}
	return m, "", false
}

// Cost gives the timing class of one plugin key and its cycles per execution and per
// taken jump; ok is false when the table does not know the key (then 1 and P are used).
func (t M4Timing) Cost(key string) (class string, cycles, perTaken int64, ok bool) {
	km := keyRE.FindStringSubmatch(key)
	if km == nil {
		return ClassOther, 1, t.P, false
	}
	words, flag := int64(0), km[4]
	if km[3] != "" && km[3] != "r" {
		words, _ = strconv.ParseInt(km[3], 10, 64)
	}
	m, class, ok := resolve(km[1])
	if !ok {
		return ClassOther, 1, t.P, false
	}
	perTaken = t.P
	switch class {
	case ClassALU, ClassMul, ClassBranch, ClassFPDiv:
		cycles = 1
		if class == ClassFPDiv {
			cycles = 14
		}
	case ClassDiv:
		cycles = t.Div
	case ClassLoad:
		switch flag {
		case "^":
			class, cycles = ClassLoadPipelined, 1
		case "~":
			class, cycles = ClassLoadStall, 3
		default:
			cycles = 2
		}
	case ClassStore:
		cycles = 1
		if flag == "~" {
			class, cycles = ClassStoreStall, 2
		}
	case ClassDouble:
		cycles = 1 + 2
	case ClassMultiple:
		cycles = 1 + words
	case ClassTableBranch:
		cycles = 2
	case ClassIT:
		cycles = 1
		if flag == "^" {
			cycles = 0
		}
	case ClassFP:
		cycles = 1
		if m == "vmov" && km[3] == "r" {
			cycles = 2
		}
	case ClassFPMAC:
		cycles = 3
	case ClassFPMem:
		switch m {
		case "vldr", "vstr":
			cycles = 2
			if words == 2 {
				cycles = 3
			}
		default:
			cycles = 1 + words
		}
	case ClassSystem:
		cycles = 1
		if m == "isb" {
			cycles = 1 + t.P
		}
	}
	return class, cycles, perTaken, true
}

// Estimate applies the model to one inference's instruction mix.
func (t M4Timing) Estimate(mix map[string]MixCount) *M4Estimate {
	e := &M4Estimate{}
	byClass := map[string]*ClassCost{}
	keys := make([]string, 0, len(mix))
	for k := range mix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		mc := mix[k]
		class, cyc, perTaken, ok := t.Cost(k)
		if !ok {
			e.Unknown = append(e.Unknown, k)
		}
		c := byClass[class]
		if c == nil {
			c = &ClassCost{Class: class}
			byClass[class] = c
		}
		c.Instructions += mc.Count
		c.Taken += mc.Taken
		c.Cycles += mc.Count*cyc + mc.Taken*perTaken
		e.Instructions += mc.Count
		e.Cycles += mc.Count*cyc + mc.Taken*perTaken
	}
	for _, name := range classOrder {
		if c := byClass[name]; c != nil {
			e.Classes = append(e.Classes, *c)
		}
	}
	return e
}
