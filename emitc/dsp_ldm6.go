package emitc

import (
	"fmt"
	"strings"
)

// ldm6Regs are the registers writeMacLDM6 streams the weights through:
// ascending, as LDM loads them, and neither r7 (a Thumb frame pointer)
// nor r9 (a platform register where one is reserved).
var ldm6Regs = []string{"r4", "r5", "r6", "r8", "r10", "r11"}[:ldm6N]

const ldm6N = 6

// ldm6MaxOperands bounds the registers one asm statement of writeMacLDM6
// names. Its six fixed weight registers leave gcc few others: at twelve a
// statement (what writeMacLDM3 keeps to) gcc 12.2 reported "impossible
// constraints" with a frame pointer (-O1 to -O3 -fno-omit-frame-pointer),
// at eleven with a frame pointer and -ffixed-r9; at ten the one-row GEMV
// builds under every flag set, and AD takes the same instructions as at
// twelve. The 1x4 blocks of wide pointwise and multi-row fully connected
// layers, inlined with their block loops, still did not with a frame
// pointer at -O1 and -O3 (with -fdata-sections) or at -O2 with -ffixed-r9
// (session 58 review): a build that keeps a frame pointer sets knob stream
// 0 and keeps those layers off them (boards.KeepsFramePointer).
const ldm6MaxOperands = 10

// writeMacLDM6 prints the one-row, four-channel block's loop body (int16
// weights, u >= 2 groups of four k) with the weights streamed through six
// registers: the group's eight weight words follow one another in memory,
// so one LDM of six words serves six SMLADs whatever group they belong to,
// and three groups take four LDMs where writeMacLDM takes six (31
// instructions for 48 MACs against 33: 1.55 MACs an instruction against
// 1.45). A group's LDRD of the two activation words comes after the last
// SMLAD of the group before, so that a word of the next group can wait in
// its register. The stream is split into asm statements of at most
// ldm6MaxOperands registers each; the weight registers are local register
// variables that keep their words from one statement to the next (as in
// writeMacLDM3), the activation words d0 and d1 likewise.
func writeMacLDM6(b *strings.Builder, u int, in string) {
	type op struct {
		text string
		acc  int  // accumulator a0<acc> the SMLAD adds to, or -1
		ldrd bool // loads d0, d1 from x0
		ldm  bool // loads weight registers from w
		wreg int  // weight register the SMLAD reads, or -1
	}
	var ops []op
	words := 8 * u
	for t := 0; t < words; t++ {
		if t%8 == 0 {
			ops = append(ops, op{text: fmt.Sprintf("ldrd %%[d0], %%[d1], [%%[x0], #%d]", t), acc: -1, ldrd: true, wreg: -1})
		}
		if t%ldm6N == 0 {
			n := min(ldm6N, words-t)
			ops = append(ops, op{text: fmt.Sprintf("ldmia %%[w]!, {%s}", strings.Join(ldm6Regs[:n], ", ")), acc: -1, ldm: true, wreg: -1})
		}
		j, h := (t%8)/2, t%2
		ops = append(ops, op{text: fmt.Sprintf("smlad %%[a0%d], %%[d%d], %s, %%[a0%d]", j, h, ldm6Regs[t%ldm6N], j), acc: j, wreg: t % ldm6N})
	}
	b.WriteString(in + "int32_t d0;\n" + in + "int32_t d1;\n")
	for k, r := range ldm6Regs {
		fmt.Fprintf(b, "%sregister int32_t w%d __asm__(\"%s\");\n", in, k, r)
	}
	// One statement: its ops, and the operands they need.
	type stmt struct {
		ops  []op
		accs [4]bool
		ldrd bool
		ldm  bool
		read [ldm6N]bool // weight registers read before any LDM of the statement
	}
	count := func(s *stmt) int {
		n := 2 // d0, d1
		for _, a := range s.accs {
			if a {
				n++
			}
		}
		if s.ldrd {
			n++ // x0
		}
		if s.ldm {
			n += 1 + len(ldm6Regs) // w, every weight register
		} else {
			for _, r := range s.read {
				if r {
					n++
				}
			}
		}
		return n
	}
	// with is s with o after its ops, and the operands o adds.
	with := func(s stmt, o op) stmt {
		s.ops = append(append([]op(nil), s.ops...), o)
		switch {
		case o.acc >= 0:
			s.accs[o.acc] = true
			if !s.ldm {
				s.read[o.wreg] = true
			}
		case o.ldrd:
			s.ldrd = true
		case o.ldm:
			s.ldm = true
		}
		return s
	}
	var stmts []stmt
	var cur stmt
	for _, o := range ops {
		next := with(cur, o)
		if len(cur.ops) > 0 && count(&next) > ldm6MaxOperands {
			stmts = append(stmts, cur)
			next = with(stmt{}, o)
		}
		cur = next
	}
	stmts = append(stmts, cur)
	for i, s := range stmts {
		lines := make([]string, len(s.ops))
		for k, o := range s.ops {
			lines[k] = o.text
		}
		var outs, ins []string
		for j, a := range s.accs {
			if a {
				outs = append(outs, fmt.Sprintf(`[a0%d] "+r"(a0%d)`, j, j))
			}
		}
		if s.ldm {
			outs = append(outs, `[w] "+r"(w)`)
		}
		// The first statement starts with the first group's LDRD and LDM:
		// d0, d1 and the weight registers are written before they are read,
		// and early-clobber, since x0 and w are read after.
		first := i == 0
		if first {
			outs = append(outs, `[d0] "=&r"(d0)`, `[d1] "=&r"(d1)`)
		} else {
			outs = append(outs, `[d0] "+r"(d0)`, `[d1] "+r"(d1)`)
		}
		for k := range ldm6Regs {
			switch {
			case s.ldm && first:
				outs = append(outs, fmt.Sprintf(`"=&r"(w%d)`, k))
			case s.ldm:
				outs = append(outs, fmt.Sprintf(`"+r"(w%d)`, k))
			case s.read[k]:
				ins = append(ins, fmt.Sprintf(`"r"(w%d)`, k))
			}
		}
		if s.ldrd {
			ins = append(ins, `[x0] "r"(x0)`)
		}
		fmt.Fprintf(b, "%s__asm__(\"%s\"\n%s        : %s\n%s        : %s\n%s        : \"memory\");\n",
			in, strings.Join(lines, "\\n\\t"), in, strings.Join(outs, ", "), in, strings.Join(ins, ", "), in)
	}
}
