package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// More flash never makes a model fit worse (review finding): KWS on an
// M4 with 81 KiB of flash kept one layer's weights int8 and fitted, and with
// 82-84 KiB it was refused, as the code estimate let every layer keep int16
// weights and the measured code then overran. Over a sweep of flash sizes
// the sizes that fit are one run up to the largest, and a build that fits
// links and runs bit-exact on the smallest of them.
func TestMoreFlashNeverFitsWorse40(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles KWS many times, measuring its code")
	}
	needQEMU(t)
	model := filepath.Join(sharedModels(t), "kws", "kws_ref_model.tflite")
	dir := t.TempDir()
	var star strings.Builder
	sizes := []int{}
	for k := 78; k <= 88; k++ {
		sizes = append(sizes, k)
		fmt.Fprintf(&star, `board(name = "an386-%dk", description = "an AN386 with %d KiB of flash", inherits = ["mps2-an386"], memory = [
    region(name = "FLASH", origin = 0x00000000, length = %d * KiB, holds = ["code", "weights"]),
    region(name = "RAM", origin = 0x20000000, length = 4 * MiB, holds = ["data", "arena"]),
])
`, k, k, k)
	}
	bf := filepath.Join(dir, "flash.star")
	if err := os.WriteFile(bf, []byte(star.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, k := range sizes {
		code, _, errs := mcugen(t, "compile", model, "--boards", bf, "--board", fmt.Sprintf("an386-%dk", k), "-o", filepath.Join(dir, fmt.Sprint(k)))
		switch {
		case code == 0 && first == 0:
			first = k
		case code != 0 && first != 0:
			t.Errorf("%d KiB: refused where %d KiB fitted: %s", k, first, errs)
		case code != 0 && !strings.Contains(errs, "does not fit on"):
			t.Errorf("%d KiB: exit %d: %s", k, code, errs)
		}
	}
	if first == 0 || first > 82 {
		t.Fatalf("KWS fitted from %d KiB: want 82 KiB or less (one layer kept int8 fits 81 KiB)", first)
	}
	code, out, errs := mcugen(t, "run", model, "--boards", bf, "--board", fmt.Sprintf("an386-%dk", first))
	if code != 0 || !strings.Contains(out, "bit-exact") {
		t.Errorf("run on %d KiB: exit %d\n%s%s", first, code, out, errs)
	}
}
