package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcugen/mcugen/boards"
)

// ClangFlags are the flags a clang build of b's firmware adds to the
// board's gcc flags (which clang takes as they are): the target triple, and
// for the bare-metal boards the ABI and code generation that
// arm-none-eabi-gcc has by default and clang does not.
//
//   - -fshort-enums: the arm-none-eabi ABI's enums, as newlib was built with
//     (clang's 32-bit ones make the linker warn about every object).
//   - -fomit-frame-pointer: clang keeps r7 as a frame pointer on Thumb; the
//     dsp micro-kernels' asm blocks need every register (KWS's pointwise
//     layers take 39% more instructions with it).
//   - -munaligned-access where gcc allows unaligned word accesses for the
//     core (gcc's __ARM_FEATURE_UNALIGNED): clang's bare-metal default is
//     strict alignment, which turns every word read of int8 data into four
//     byte loads.
//   - on a Helium core (__ARM_FEATURE_MVE), no vectorized gathers
//     (ClangNoMVEGathers: clang 14 misencodes their offsets).
//   - newlib-nano's headers, then newlib's, as gcc has them under
//     --specs=nano.specs, the library the link takes (clang has its own
//     stddef.h, stdint.h and arm_acle.h and takes only the C library's from
//     arm-none-eabi-gcc's search list).
func ClangFlags(b *boards.Board) ([]string, error) {
	switch b.Toolchain {
	case boards.ToolchainArmNoneEABI:
		gcc, err := LookTool("arm-none-eabi-gcc")
		if err != nil {
			return nil, err
		}
		// newlib-nano's headers, as the link takes its library (--specs=nano.specs).
		facts := armGCCFacts(gcc, append(b.GCCFlags(), "--specs=nano.specs"))
		if facts.err != nil {
			return nil, facts.err
		}
		f := []string{"--target=arm-none-eabi", "-fshort-enums", "-fomit-frame-pointer"}
		if facts.unaligned {
			f = append(f, "-munaligned-access")
		}
		if facts.mve {
			f = append(f, ClangNoMVEGathers...)
		}
		for _, d := range facts.inc {
			f = append(f, "-isystem", d)
		}
		return f, nil
	case boards.ToolchainAArch64:
		return []string{"--target=aarch64-linux-gnu"}, nil
	}
	return nil, nil
}

// clangObjects matches the objects of a clang build (clangObject) in its
// directory.
const clangObjects = "clang[0-9][0-9]_*.o"

// clangObject is the object clang compiles source i, src, into.
func clangObject(dir string, i int, src string) string {
	return filepath.Join(dir, fmt.Sprintf("clang%02d_%s.o", i, strings.TrimSuffix(filepath.Base(src), ".c")))
}

// ClangOnly is flags without the gcc-only ones (boards.ClangOnly).
func ClangOnly(flags []string) []string { return boards.ClangOnly(flags) }

var gccFacts sync.Map // gcc + flags -> armFacts

type armFacts struct {
	inc       []string
	unaligned bool
	mve       bool // Helium (__ARM_FEATURE_MVE)
	err       error
}

// ClangNoMVEGathers keeps clang from vectorizing loops into Helium gathers:
// clang 14 encodes a gather's immediate offset past VLDRW's ±508 as #0
// (a table lookup T[x + 128] of a float table read through a pointer
// argument, vldrw.u32 q1, [q0, #512], read 512 bytes low: a BusFault on
// mps3-an547, a review's model). The loops it would gather in are the
// generic ones (the Helium kernels are intrinsics); they take scalar loads
// instead.
var ClangNoMVEGathers = []string{"-mllvm", "-enable-arm-maskedgatscat=false"}

// armGCCFacts asks gcc (with the board's flags) for its C library's include
// directories (those outside gcc's own tree), whether the core takes
// unaligned word accesses and whether it has Helium.
func armGCCFacts(gcc string, flags []string) armFacts {
	key := gcc + "\x00" + strings.Join(flags, "\x00")
	if v, ok := gccFacts.Load(key); ok {
		return v.(armFacts)
	}
	var f armFacts
	args := append(append([]string{}, flags...), "-E", "-dM", "-v", "-x", "c", "-")
	cmd := exec.Command(gcc, args...)
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		f.err = fmt.Errorf("runner: %s %s: %v\n%s", gcc, strings.Join(args, " "), err, tail(errb.String(), 10))
	} else {
		f.unaligned = strings.Contains(out.String(), "#define __ARM_FEATURE_UNALIGNED 1")
		f.mve = strings.Contains(out.String(), "#define __ARM_FEATURE_MVE ")
		in := false
		sc := bufio.NewScanner(&errb)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "#include <...> search starts here"):
				in = true
			case strings.HasPrefix(line, "End of search list"):
				in = false
			case in:
				d := filepath.Clean(strings.TrimSpace(line))
				if !strings.Contains(d, "/lib/gcc/") {
					f.inc = append(f.inc, d)
				}
			}
		}
		if len(f.inc) == 0 {
			f.err = fmt.Errorf("runner: %s names no C library headers outside its own (install libnewlib-arm-none-eabi)", gcc)
		}
	}
	gccFacts.Store(key, f)
	return f
}
