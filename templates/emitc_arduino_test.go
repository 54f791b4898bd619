package templates

import (
	"path/filepath"
	"testing"
	"time"
)

// TestEmitcArduino builds the Arduino library of the bundled model (emitc's real output,
// generic kernels) for the Mega 2560 with arduino-builder, runs the example under simavr
// and compares with the reference interpreter; and compiles the same sources for a
// Cortex-M4.
func TestEmitcArduino(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an Arduino sketch and runs simavr")
	}
	needTool(t, "arduino-builder", "avr-gcc", "simavr", "arm-none-eabi-gcc", "arm-none-eabi-g++")
	p := emitcProject(t, Arduino, avrBoard(t), 2) // generic C99 kernels, as for any board without DSP
	libs := t.TempDir()
	lib := filepath.Join(libs, "CnnInt8Model")
	if _, err := Write(lib, p); err != nil {
		t.Fatal(err)
	}
	out := arduinoBuildRun(t, libs, filepath.Join(lib, "examples", "cnn_int8", "cnn_int8.ino"))
	t.Logf("simavr:\n%s", out)
	checkEmitcOutput(t, out, p)
	cpu := []string{"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2", "-Wall", "-Wextra", "-Werror", "-Isrc", "-c"}
	obj := filepath.Join(t.TempDir(), "x.o")
	mustRun(t, lib, time.Minute, "arm-none-eabi-gcc", append(cpu, "-std=c99", "-pedantic", "src/cnn_int8.c", "-o", obj)...)
	mustRun(t, lib, time.Minute, "arm-none-eabi-g++", append(cpu, "-std=c++11", "-fno-exceptions", "src/CnnInt8Model.cpp", "-o", obj)...)
}

// A float model's Arduino sketch runs on the AVR: run's alignment check
// asks for the type's own alignment (1 on AVR, where the wrapper's buffers
// may sit at odd addresses), not its size (a review found every vector
// refused with -1 when the check used the size).
func TestEmitcArduinoFloat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an Arduino sketch and runs simavr")
	}
	needTool(t, "arduino-builder", "avr-gcc", "simavr")
	p := emitcProjectOf(t, "../testdata/tflite/op_float_abs.tflite", Arduino, avrBoard(t), 2)
	libs := t.TempDir()
	lib := filepath.Join(libs, "OpFloatAbsModel")
	if _, err := Write(lib, p); err != nil {
		t.Fatal(err)
	}
	out := arduinoBuildRun(t, libs, filepath.Join(lib, "examples", "op_float_abs", "op_float_abs.ino"))
	t.Logf("simavr:\n%s", out)
	checkEmitcOutput(t, out, p)
}
