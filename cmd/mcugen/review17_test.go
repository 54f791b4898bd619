package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Zephyr and Arduino projects build with their own linker scripts: the
// model's C names no section, neither for the weights nor (review finding:
// every Arm board was refused) for the static arena.
func TestZephyrArduinoProjectsOnArmBoards(t *testing.T) {
	model, _ := filepath.Abs("../../testdata/tflite/cnn_int8.tflite")
	for _, c := range []struct{ board, kind string }{
		{"nrf52840dk", "zephyr"}, {"nucleo-f746zg", "zephyr"}, {"microbit", "zephyr"}, {"nucleo-f746zg", "arduino"}, {"portenta-h7", "arduino"},
	} {
		dir := filepath.Join(t.TempDir(), "p")
		code, _, stderr := mcugen(t, "compile", model, "--board", c.board, "--project", c.kind, "-o", dir)
		if code != 0 {
			t.Errorf("%s on %s: exit %d, %s", c.kind, c.board, code, stderr)
			continue
		}
		var src []byte
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, "cnn_int8.c") {
				src, _ = os.ReadFile(p)
			}
			return nil
		})
		if len(src) == 0 || strings.Contains(string(src), "section(") {
			t.Errorf("%s on %s: model source %d B, names a section: %v", c.kind, c.board, len(src), strings.Contains(string(src), "section("))
		}
	}
}
