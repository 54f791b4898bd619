package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A Zephyr project whose example cannot fit the board's RAM is warned
// about as a make project is: on the 16 KiB micro:bit, cnn.onnx's arena
// (11,264 B), its input and output buffers (3,112 B) and the 4,096 B main
// stack prj.conf sets are 18,472 B before Zephyr's own (review: no word);
// on nrf52840dk (256 KiB) the same project gets no warning.
func TestZephyrRAMWarning58(t *testing.T) {
	for _, c := range []struct {
		board string
		warn  bool
	}{{"microbit", true}, {"nrf52840dk", false}} {
		out := filepath.Join(t.TempDir(), "z")
		code, _, stderr := mcugen(t, "compile", "../../testdata/onnx/cnn.onnx", "--board", c.board, "--project", "zephyr", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.board, code, stderr)
		}
		got := strings.Contains(stderr, "the example program may not link: with its stack (4,096 B), input and output buffers (3,112 B)") && strings.Contains(stderr, "before Zephyr's own")
		if got != c.warn {
			t.Errorf("%s: stderr %q; want the RAM warning: %v", c.board, stderr, c.warn)
		}
	}
}

// A CMake project written where the path holds a character CMake's
// generators take as syntax is warned about (review: "#" refused, "$" and
// "%" mangled, ";" split, ":" a make rule); a path without one is not.
func TestCMakePathWarning58(t *testing.T) {
	for _, c := range []struct {
		dir  string
		warn bool
	}{{"a#b", true}, {"a;b", true}, {"a b(1)", false}} {
		out := filepath.Join(t.TempDir(), c.dir, "p")
		code, _, stderr := mcugen(t, "compile", "../../testdata/tflite/cnn_int8.tflite", "--board", "mps2-an386", "--project", "cmake", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.dir, code, stderr)
		}
		if got := strings.Contains(stderr, "which CMake's builds cannot take"); got != c.warn {
			t.Errorf("%q: stderr %q; want the path warning: %v", c.dir, stderr, c.warn)
		}
	}
}

// compile's summary counts the inputs and outputs the caller's buffers hold
// beside the arena (cnn_int8: 8·8·3 + 10 = 202 bytes; review: a 12.6 KB
// input that the summary never named overflowed the micro:bit's RAM at
// test time), and says nothing of them when they are in the arena.
func TestCompileSummaryIO58(t *testing.T) {
	for _, c := range []struct {
		io   string
		want bool
	}{{"separate", true}, {"in-arena", false}} {
		out := filepath.Join(t.TempDir(), "o")
		code, stdout, stderr := mcugen(t, "compile", "../../testdata/tflite/cnn_int8.tflite", "--board", "mps2-an386", "--io", c.io, "-o", out)
		if code != 0 {
			t.Fatalf("--io %s: exit %d: %s", c.io, code, stderr)
		}
		if got := strings.Contains(stdout, ", inputs and outputs 202 B (the caller's buffers), constants "); got != c.want {
			t.Errorf("--io %s: summary %q; want the I/O bytes: %v", c.io, stdout, c.want)
		}
	}
}
