package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes worked by hand: K and KB are 1000, KiB 1024, M and MB 1000², MiB
// 1024², in any case; a bare number is bytes; no sign, fraction or unknown
// suffix.
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"12", 12}, {"0", 0}, {"262144", 262144}, {"200KiB", 204800}, {"200kib", 204800}, {"1MB", 1000000},
		{"1mb", 1000000}, {"2M", 2000000}, {"400KB", 400000}, {"400K", 400000}, {"3MiB", 3145728},
		{"48 KB", 48000}, {"100B", 100}, {" 64 ", 64},
	} {
		got, err := parseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "12Q", "-5", "+5", "KB", "0.5MiB", "1GB", "1 000", "99999999999999999999", "9223372036854775807KiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// A malformed budget is bad usage: exit 2, one line naming the flag and
// the value, nothing written.
func TestBudgetUsage(t *testing.T) {
	dir := sharedModels(t)
	model := filepath.Join(dir, "kws/kws_ref_model.tflite")
	out := filepath.Join(t.TempDir(), "o")
	for _, args := range [][]string{{"--flash-budget", "12Q"}, {"--ram-budget=-5"}, {"--ram-budget="}, {"--flash-budget", "0.5MiB"}} {
		code, stdout, errs := mcugen(t, append([]string{"compile", model, "--board", "mps2-an386", "-o", out}, args...)...)
		flag := strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0]
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "mcugen: --"+flag) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output directory was written", args)
		}
	}
}

type budgetReport struct {
	WeightsBytes int64  `json:"weights_bytes"`
	ArenaBytes   int64  `json:"arena_bytes"`
	FlashBudget  *int64 `json:"flash_budget"`
	RAMBudget    *int64 `json:"ram_budget"`
	Int8         *struct {
		Kernels    []string `json:"kernels"`
		ConstBytes int64    `json:"const_bytes"`
		FlashBytes int64    `json:"flash_bytes"`
		Budget     bool     `json:"budget"`
	} `json:"int8_weights"`
}

// compile AD for the 4 MiB Cortex-M4 with a flash budget below its int16
// weights (2 × 264,192 B, worked by hand): some layers keep int8 weights,
// the constants are within the budget, and the text and JSON reports say
// so. Below AD's all-int8 constants (270,880 B) it fails: exit 1, one line
// naming --flash-budget, no output directory.
func TestCompileFlashBudget(t *testing.T) {
	dir := sharedModels(t)
	tmp := t.TempDir()
	model := filepath.Join(dir, "ad/ad01_int8.tflite")
	code, out, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--flash-budget", "400KB", "-o", filepath.Join(tmp, "a"))
	if code != 0 || errs != "" || strings.Count(out, "kept int8 to fit the flash budget (") != 1 ||
		!strings.Contains(out, " B of 400,000 B)\nbudget: flash 400,000 B (code and constants ") {
		t.Fatalf("compile: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--flash-budget", "400KB", "-o", filepath.Join(tmp, "b"), "--json")
	var r budgetReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("compile --json: exit %d %v\n%s\n%s", code, err, out, errs)
	}
	if r.FlashBudget == nil || *r.FlashBudget != 400000 || r.RAMBudget != nil || r.Int8 == nil || !r.Int8.Budget ||
		r.Int8.FlashBytes != 400000 || len(r.Int8.Kernels) == 0 || len(r.Int8.Kernels) >= 10 ||
		r.WeightsBytes > 400000 || r.WeightsBytes < 270880 || r.Int8.ConstBytes != r.WeightsBytes {
		t.Errorf("report %s", out)
	}
	if !strings.Contains(out, `"flash_budget": 400000`) || strings.Contains(out, "ram_budget") {
		t.Errorf("JSON fields:\n%s", out)
	}
	code, out, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--flash-budget", "256KiB", "-o", filepath.Join(tmp, "c"))
	if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "mcugen: "+model+": ad01_int8 does not fit the flash budget: needs ") ||
		!strings.Contains(errs, "; --flash-budget is 262,144 B (") {
		t.Errorf("256 KiB: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(tmp, "c")); !os.IsNotExist(err) {
		t.Errorf("256 KiB: the output directory was written")
	}
	// No budget: no such line, no such fields.
	code, out, _ = mcugen(t, "compile", model, "--board", "mps2-an386", "-o", filepath.Join(tmp, "d"), "--json")
	if code != 0 || strings.Contains(out, "budget") {
		t.Errorf("no budget: exit %d\n%s", code, out)
	}
}

// A RAM budget below KWS's arena on the Cortex-M4 (8,064 B) fails: exit 1,
// the one line below, no output directory; exactly the arena compiles.
// run, test, bench and tune take the flag and fail on it the same way
// before they build anything (test in its table, then with exit 1).
func TestCompileRAMBudget(t *testing.T) {
	dir := sharedModels(t)
	tmp := t.TempDir()
	model := filepath.Join(dir, "kws/kws_ref_model.tflite")
	code, out, errs := mcugen(t, "compile", model, "--board", "mps2-an386", "--ram-budget", "8000", "-o", filepath.Join(tmp, "a"))
	want := "mcugen: " + model + ": kws_ref_model does not fit the RAM budget: needs 8,064 B for activations (the arena); --ram-budget is 8,000 B (64 B short)\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("8,000 B: exit %d\nstderr %q\nwant   %q", code, errs, want)
	}
	if _, err := os.Stat(filepath.Join(tmp, "a")); !os.IsNotExist(err) {
		t.Errorf("8,000 B: the output directory was written")
	}
	code, out, errs = mcugen(t, "compile", model, "--board", "mps2-an386", "--ram-budget", "8064", "-o", filepath.Join(tmp, "b"))
	if code != 0 || errs != "" || !strings.Contains(out, "\nbudget: RAM 8,064 B (arena 8,064 B used; the kernels' 3,072 B of stack scratch is not counted)\n") {
		t.Errorf("8,064 B: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = mcugen(t, "compile", model, "--board", "mps2-an386", "--ram-budget", "8064", "-o", filepath.Join(tmp, "c"), "--json")
	var r budgetReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.RAMBudget == nil || *r.RAMBudget != 8064 || r.FlashBudget != nil || r.ArenaBytes != 8064 {
		t.Errorf("8,064 B --json: exit %d %v\n%s", code, err, out)
	}
	for _, args := range [][]string{
		{"run", model, "--out", filepath.Join(tmp, "run")},
		{"test", model},
		{"bench", model},
		{"tune", model, "-o", filepath.Join(tmp, "tune.json")},
	} {
		// test reports each case's error in its table, then fails.
		code, out, errs := mcugen(t, append(args, "--board", "mps2-an386", "--ram-budget", "8000")...)
		if code != 1 || !strings.Contains(out+errs, "does not fit the RAM budget: needs 8,064 B for activations (the arena); --ram-budget is 8,000 B (64 B short)") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "tune.json")); !os.IsNotExist(err) {
		t.Errorf("tune wrote its records file")
	}
}

// Budgets apply on the host too, where the board has no regions: AD's
// constants there are its int8 weights and biases (270,880 B by hand) and
// its arena two 128-value activations (256 B).
func TestCompileBudgetsOnHost(t *testing.T) {
	dir := sharedModels(t)
	tmp := t.TempDir()
	model := filepath.Join(dir, "ad/ad01_int8.tflite")
	// The budget covers code too: at least 4,096 B of it.
	code, out, errs := mcugen(t, "compile", model, "--board", "host", "--flash-budget", "274975", "-o", filepath.Join(tmp, "a"))
	if code != 1 || out != "" || errs != "mcugen: "+model+": ad01_int8 does not fit the flash budget: needs 274,976 B for weights (int8, 270,880 B) and code (at least 4,096 B); --flash-budget is 274,975 B (1 B short)\n" {
		t.Errorf("flash 1 B short: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "compile", model, "--board", "host", "--ram-budget", "255", "-o", filepath.Join(tmp, "b"))
	if code != 1 || !strings.HasSuffix(errs, "needs 256 B for activations (the arena); --ram-budget is 255 B (1 B short)\n") {
		t.Errorf("RAM 1 B short: exit %d, stderr %q", code, errs)
	}
	for _, d := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(tmp, d)); !os.IsNotExist(err) {
			t.Errorf("%s: the output directory was written", d)
		}
	}
	code, out, errs = mcugen(t, "compile", model, "--board", "host", "--flash-budget", "1MiB", "--ram-budget", "256", "-o", filepath.Join(tmp, "c"))
	if code != 0 || errs != "" || !strings.Contains(out, "\nbudget: flash 1,048,576 B (weights 270,880 B and code estimated at 24,576 B used), RAM 256 B (arena 256 B used)\n") {
		t.Errorf("within both: exit %d\n%s\n%s", code, out, errs)
	}
}

// A negative size after a space ("--ram-budget -5") is read as the flag's
// value, not as a short flag: kong said "expected value value but got "-5"
// (short flag)" (user-journey finding).
func TestNegativeBudgetSaysWhatASizeIs(t *testing.T) {
	for _, args := range [][]string{{"--ram-budget", "-5"}, {"--flash-budget", "-50"}, {"--ram-budget=-5"}} {
		code, _, errs := mcugen(t, append([]string{"compile", "../../testdata/onnx/mlp.onnx", "-o", filepath.Join(t.TempDir(), "o")}, args...)...)
		oneErrorLine(t, strings.Join(args, " "), code, errs, 2, "is not a size: want a whole number of bytes") // a usage error
	}
}
