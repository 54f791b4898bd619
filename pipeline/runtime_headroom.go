package pipeline

import (
	"strings"
	"sync"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/runner"
)

// The share of a region the fit pass leaves for what links beside the
// model on a bare-metal board: mcugen's runtime (crt_startup.c,
// crt_baremetal.c, crt_semihost.c, crt_print.c) measured with the build's
// own compiler; an allowance for an application's main and the library
// routines the two link (64-bit and, on ARMv6-M, 32-bit division, memcpy,
// memset); and the model's input and output bytes, one vector of each as
// the templates' and the harness's main hold them. The allowance is fitted
// to what those linked in session 56's make projects, beside the runtime
// and the vectors: gcc 1,207 B on the M4 (KWS), 2,065 B on the M0 (KWS),
// 1,487 B on the M0+ (AD); clang 1,610 B on the M4 and 2,887 B on the M0.
// 1.5 KiB, and 0.75 KiB more each for ARMv6-M (or v8-M Baseline) and for
// clang, covers every one of them by 185 B or more and leaves AD fitting
// an RP2040 of 280,000 B, which it does. The flat 4,096 B this replaces
// was 1,344 B short for clang's KWS project (5,396 B linked beside the
// model): a project the fit pass passed did not link. codeHeadroomBase
// stays the least, and the figure where the runtime cannot be measured.
const (
	runtimeAllowance       = 1536
	runtimeAllowanceThumb1 = 768
	runtimeAllowanceClang  = 768
)

var runtimeFlashCache sync.Map // board name, flags and compiler → int64 (-1: not measurable)

// runtimeHeadroom is the flash the fit pass leaves in a region holding the
// model's code for the runtime and the application (see above).
func (s *State) runtimeHeadroom() int64 {
	b := s.Opt.Board
	if b == nil || !b.BareMetal() || b.Toolchain == boards.ToolchainHost {
		return codeHeadroomBase
	}
	rt, ok := runtimeFlash(b, s.Opt.Compiler)
	if !ok {
		return codeHeadroomBase
	}
	var io int64
	for _, names := range [][]string{s.Graph.Inputs, s.Graph.Outputs} {
		for _, n := range names {
			if t := s.Graph.Tensors[n]; t != nil {
				io += int64(t.Bytes())
			}
		}
	}
	allow := int64(runtimeAllowance)
	if b.Thumb1() {
		allow += runtimeAllowanceThumb1
	}
	if s.Opt.Compiler == runner.CompilerClang {
		allow += runtimeAllowanceClang
	}
	return max(codeHeadroomBase, rt+allow+io)
}

// runtimeFlash compiles the bare-metal runtime's C for b with the build's
// compiler (measureFlash, as the model's code is measured) and
// returns its text and data, once per board and compiler in a process.
func runtimeFlash(b *boards.Board, compiler string) (int64, bool) {
	key := b.Name + "\x00" + compiler + "\x00" + strings.Join(b.GCCFlags(), " ") + "\x00" + b.OptLevel()
	if v, ok := runtimeFlashCache.Load(key); ok {
		n := v.(int64)
		return n, n >= 0
	}
	// The runtime's C and headers (not the harness, which a project's main
	// replaces), compiled as the model's code is (measureFlash).
	n := int64(-1)
	files := map[string][]byte{crt.BoardHeaderFile: []byte(crt.BoardHeader(b))}
	ok := true
	for _, f := range crt.Files(b) {
		data, err := crt.Source(f)
		if err != nil {
			ok = false
			break
		}
		if f != "crt_harness.c" {
			files[f] = data
		}
	}
	if ok {
		if flash, err := measureFlash(b, files, compiler); err == nil {
			n = int64(flash)
		}
	}
	runtimeFlashCache.Store(key, n)
	return n, n >= 0
}
