package templates

import (
	"fmt"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
)

// harnessFiles are crt's test-harness files: the projects bring their own example
// program instead.
var harnessFiles = map[string]bool{"crt_harness.c": true, "mcugen_harness.h": true}

// Runtime returns crt's runtime for board b as Project.Runtime wants it: the platform
// layer (startup, output, exit, counter), mcugen_board.h and, for bare-metal boards, the
// linker script for layout l. crt's own test harness is left out.
func Runtime(b *boards.Board, l crt.Layout) (map[string][]byte, error) {
	files := map[string][]byte{crt.BoardHeaderFile: []byte(crt.BoardHeader(b))}
	for _, name := range crt.Files(b) {
		if harnessFiles[name] {
			continue
		}
		data, err := crt.Source(name)
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		files[name] = data
	}
	if b.BareMetal() {
		ld, err := crt.LinkerScript(b, l)
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		files[crt.LinkerFile] = []byte(ld)
	}
	return files, nil
}
