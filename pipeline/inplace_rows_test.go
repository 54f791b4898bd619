package pipeline

import (
	"path/filepath"
	"testing"
	"time"
)

// KWS on the micro:bit (Cortex-M0, 16 KiB of RAM, generic schedules): its
// pointwise and depthwise layers run in place by row staging
// (tir/inplace_rows.go), so the arena is 8,064 B, about half the live-set
// bound of 16,000 B, and fits beside the board's 2 KiB stack (out of place
// it does not: TestArenaAndStackFitRAM); the firmware matches TFLite
// Micro's reference vectors and the reference interpreter on random inputs
// under QEMU.
func TestKWSOnMicrobitInPlace(t *testing.T) {
	b := qemuBoard(t, "microbit")
	shared := sharedDir(t)
	s, err := Compile(filepath.Join(shared, "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan.ArenaBytes > 8192 || len(s.Plan.InPlace) < 8 {
		t.Fatalf("arena %d B with %d nodes in place; want at most 8,192 B, the eight convolutions in place", s.Plan.ArenaBytes, len(s.Plan.InPlace))
	}
	vecs, want := loadVectors(t, s, filepath.Join(shared, "kws/vectors"))
	vecs = append(vecs, RandomInputs(s.Graph, 3, 19)...)
	x, err := s.Execute(vecs, t.TempDir(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, x, len(vecs), want)
	t.Logf("KWS on microbit: arena %d B, %d instructions, %d B of flash", s.Plan.ArenaBytes, x.Instructions(), x.Firmware.FlashBytes())
}
