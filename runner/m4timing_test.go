package runner

import (
	"strings"
	"testing"
)

// Each key the plugin can print maps to the class and cycles of the Cortex-M4 TRM's
// tables (zero wait states), with P = 2 and Div = 7 as CortexM4 states.
func TestM4Cost(t *testing.T) {
	cases := []struct {
		key      string
		class    string
		cycles   int64
		perTaken int64
	}{
		{"adds", ClassALU, 1, 2},
		{"lsls", ClassALU, 1, 2},  // "ls" is also a condition: lsl + s
		{"movs", ClassALU, 1, 2},  // "vs" is also a condition: mov + s
		{"addeq", ClassALU, 1, 2}, // in an IT block
		{"movseq.w", ClassALU, 1, 2},
		{"sxtb16", ClassALU, 1, 2},
		{"qadd8", ClassALU, 1, 2},
		{"ssat", ClassALU, 1, 2},
		{"smlad", ClassMul, 1, 2},
		{"smlabb", ClassMul, 1, 2},
		{"smlal", ClassMul, 1, 2},
		{"umull", ClassMul, 1, 2},
		{"mla", ClassMul, 1, 2},
		{"sdiv", ClassDiv, 7, 2},
		{"ldr", ClassLoad, 2, 2},
		{"ldrb.w^", ClassLoadPipelined, 1, 2},
		{"ldrsh~", ClassLoadStall, 3, 2},
		{"ldrhs", ClassLoad, 2, 2}, // ldr with condition hs
		{"str", ClassStore, 1, 2},
		{"strb^", ClassStore, 1, 2},
		{"str~", ClassStoreStall, 2, 2},
		{"ldrd", ClassDouble, 3, 2},
		{"push{5}", ClassMultiple, 6, 2},
		{"pop{3}", ClassMultiple, 4, 2}, // + P when it loads pc (taken)
		{"ldmia.w{4}", ClassMultiple, 5, 2},
		{"b", ClassBranch, 1, 2},
		{"bne.w", ClassBranch, 1, 2},
		{"bls", ClassBranch, 1, 2},
		{"cbz", ClassBranch, 1, 2},
		{"tbb", ClassTableBranch, 2, 2},
		{"itte", ClassIT, 1, 2},
		{"it^", ClassIT, 0, 2},
		{"vadd.f32", ClassFP, 1, 2},
		{"vmov.f32", ClassFP, 1, 2},
		{"vmov{r}", ClassFP, 2, 2},
		{"vfma.f32", ClassFPMAC, 3, 2},
		{"vdiv.f32", ClassFPDiv, 14, 2},
		{"vsqrt.f32", ClassFPDiv, 14, 2},
		{"vldr", ClassFPMem, 2, 2},
		{"vldr{2}", ClassFPMem, 3, 2},
		{"vpush{16}", ClassFPMem, 17, 2},
		{"isb", ClassSystem, 3, 2},
	}
	for _, c := range cases {
		class, cyc, pt, ok := CortexM4.Cost(c.key)
		if !ok || class != c.class || cyc != c.cycles || pt != c.perTaken {
			t.Errorf("%s: %s %d (+%d taken) ok=%v, want %s %d (+%d)", c.key, class, cyc, pt, ok, c.class, c.cycles, c.perTaken)
		}
	}
	for _, k := range []string{"frobnicate", "add{", ""} {
		if class, cyc, _, ok := CortexM4.Cost(k); ok || class != ClassOther || cyc != 1 {
			t.Errorf("%q: %s %d ok=%v, want unknown", k, class, cyc, ok)
		}
	}
}

// A hand-built mix, costed by hand: 10 smlad (10), 4 ldr (8), 4 ldr^ (4), pop{5} once
// returning (6 + P), bne 5 times, 4 taken (5 + 4P), 1 unknown key (1).
func TestM4Estimate(t *testing.T) {
	mix := map[string]MixCount{
		"smlad": {Count: 10}, "ldr": {Count: 4}, "ldr^": {Count: 4},
		"pop{5}": {Count: 1, Taken: 1}, "bne": {Count: 5, Taken: 4}, "mystery": {Count: 1},
	}
	e := M4Timing{P: 3, Div: 12}.Estimate(mix)
	if want := int64(10 + 8 + 4 + (6 + 3) + (5 + 4*3) + 1); e.Cycles != want {
		t.Errorf("cycles %d, want %d", e.Cycles, want)
	}
	if e.Instructions != 25 || len(e.Unknown) != 1 || e.Unknown[0] != "mystery" {
		t.Errorf("instructions %d, unknown %v", e.Instructions, e.Unknown)
	}
	if c := e.Class(ClassBranch); c.Instructions != 5 || c.Taken != 4 || c.Cycles != 17 {
		t.Errorf("branch class %+v", c)
	}
	var order []string
	for _, c := range e.Classes {
		order = append(order, c.Class)
	}
	if got := strings.Join(order, ","); got != "mul,load,load-pipelined,ldm/stm,branch,other" {
		t.Errorf("class order %s", got)
	}
}

// Mix lines: counts must add up to the total; malformed fields are errors.
func TestParseMix(t *testing.T) {
	m, err := parseMix(strings.Fields("total=7 ldr=3 bne=4/3"))
	if err != nil || m["ldr"] != (MixCount{Count: 3}) || m["bne"] != (MixCount{Count: 4, Taken: 3}) {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"total=8 ldr=3 bne=4/3", "total=3 ldr=3/4", "total=3 ldr", "total=6 ldr=3 ldr=3", "total=x", "ldr=3"} {
		if _, err := parseMix(strings.Fields(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
