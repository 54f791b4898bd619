package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/runner"
)

// The share of a region the fit pass leaves for what links beside the
// model on a bare-metal board: mcugen's runtime (crt_startup.c,
// crt_baremetal.c, crt_semihost.c, crt_print.c) measured with the build's
// own compiler, the library routines it pulls in (64-bit division, memcpy
// and memset: 566 B with gcc, 829 B with clang for KWS's make project),
// and an application's main holding one input vector and its expected
// output (the templates' and the harness's main do: 641 B with gcc, 781 B
// with clang besides KWS's 502 B of vectors). The flat 4,096 B this
// replaces was 1,344 B short for clang's KWS project (5,396 B linked
// beside the model) and left gcc's 44 B: a project the fit pass passed
// did not link. codeHeadroomBase stays the least, and the figure where
// the runtime cannot be measured. An ARMv6-M or ARMv8-M Baseline core
// links libgcc's 32-bit division too (no divide instruction on the M0):
// 1,416 B of library code beside KWS's make project on the micro:bit, whose
// gcc build a board 14 B short of it passed with 1 KiB allowed (a review
// finding), so 2 KiB there.
const (
	runtimeLibAllowance       = 1024
	runtimeLibAllowanceThumb1 = 2048
	runtimeAppAllowance       = 1024
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
	lib := int64(runtimeLibAllowance)
	if b.Thumb1() {
		lib = runtimeLibAllowanceThumb1
	}
	return max(codeHeadroomBase, rt+lib+runtimeAppAllowance+io)
}

// runtimeFlash compiles the bare-metal runtime's C for b with the build's
// compiler (runner.ObjectFlash, as the model's code is measured) and
// returns its text and data, once per board and compiler in a process.
func runtimeFlash(b *boards.Board, compiler string) (int64, bool) {
	key := b.Name + "\x00" + compiler + "\x00" + strings.Join(b.GCCFlags(), " ") + "\x00" + b.OptLevel()
	if v, ok := runtimeFlashCache.Load(key); ok {
		n := v.(int64)
		return n, n >= 0
	}
	n := int64(-1)
	if dir, err := os.MkdirTemp("", "mcugen-rt-"); err == nil {
		defer os.RemoveAll(dir)
		var srcs []string
		files := map[string][]byte{crt.BoardHeaderFile: []byte(crt.BoardHeader(b))}
		ok := true
		for _, f := range crt.Files(b) {
			data, err := crt.Source(f)
			if err != nil {
				ok = false
				break
			}
			files[f] = data
			if strings.HasSuffix(f, ".c") && f != "crt_harness.c" {
				srcs = append(srcs, filepath.Join(dir, f))
			}
		}
		if ok && WriteFiles(dir, files) == nil {
			if flash, err := runner.ObjectFlash(b, srcs, dir, compiler); err == nil {
				n = int64(flash)
			}
		}
	}
	runtimeFlashCache.Store(key, n)
	return n, n >= 0
}
