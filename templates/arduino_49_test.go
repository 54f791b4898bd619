package templates

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// arduinoStub is the little of Arduino.h the example sketch uses, to
// compile it as the IDE would (a C++ file with Arduino.h included).
const arduinoStub = `#pragma once
#include <stdint.h>
#include <stddef.h>
#include <string.h>
class StubSerial {
public:
    void begin(unsigned long) {}
    operator bool() { return true; }
    size_t print(char) { return 1; }
    size_t print(const char *) { return 1; }
    size_t print(unsigned int) { return 1; }
    size_t print(int) { return 1; }
    size_t print(long) { return 1; }
    size_t print(unsigned long) { return 1; }
    void flush() {}
};
extern StubSerial Serial;
unsigned long micros(void);
`

// The example sketch of a model whose outputs are all float32 defined the
// byte comparison it never called: -Wextra (the IDE's "All" warnings)
// warned "defined but not used" (templates review). Both kinds of model's
// sketches compile warning-free for the Cortex-M4.
func TestArduinoExampleWarningFree49(t *testing.T) {
	needTool(t, "arm-none-eabi-g++")
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "Arduino.h"), []byte(arduinoStub), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, name string }{{"../testdata/tflite/op_float_abs.tflite", "op_float_abs"}, {"../testdata/tflite/cnn_int8.tflite", "cnn_int8"}} {
		p := emitcProjectOf(t, c.model, Arduino, board(t, "arduino-nano-33-ble"), 2)
		lib := t.TempDir()
		if _, err := Write(lib, p); err != nil {
			t.Fatal(err)
		}
		ino := filepath.Join("examples", c.name, c.name+".ino")
		args := []string{"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2", "-Wall", "-Wextra", "-Werror",
			"-std=c++11", "-fno-exceptions", "-Isrc", "-I", stub, "-include", "Arduino.h", "-x", "c++", "-c", ino, "-o", filepath.Join(t.TempDir(), "sketch.o")}
		mustRun(t, lib, time.Minute, "arm-none-eabi-g++", args...)
	}
}
