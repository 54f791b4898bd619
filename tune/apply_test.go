package tune_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

const cnnModel = "../testdata/tflite/cnn_int8.tflite"

func an386(t *testing.T) *boards.Board {
	t.Helper()
	cat, err := boards.Load("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := cat.Get("mps2-an386")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compileWith builds cnn_int8 for mps2-an386 with the records rs (none when
// nil) written to path, and returns the build and its warnings.
func compileWith(t *testing.T, path string, rs *tune.Records) (*pipeline.State, []string) {
	t.Helper()
	var warns []string
	opt := pipeline.Options{Board: an386(t), Version: "test", Warn: func(w string) { warns = append(warns, w) }}
	if rs != nil {
		if err := rs.Save(path); err != nil {
			t.Fatal(err)
		}
		opt.Tuning = path
	}
	s, err := pipeline.Compile(cnnModel, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s, warns
}

// A record's knobs that its kernel's schedule does not read, or whose values
// are not among those the tuner tries, are ignored with one note per kernel
// naming the records file, the kernel and the knobs; the record's other
// knobs apply, and the generated C is the build without the ignored knobs.
func TestOverridesIgnoreUnknownKnobs(t *testing.T) {
	base, warns := compileWith(t, "", nil)
	if len(warns) > 0 {
		t.Fatalf("untuned build warned: %q", warns)
	}
	sig, alt := blockOCKernel(t, base)
	target, core := base.Module.Target, "cortex-m4"
	rec := func(k tune.Knobs) *tune.Records {
		rs := tune.NewRecords()
		rs.Put(&tune.Record{Kernel: sig, Target: target, Core: core, Knobs: k, Search: "exhaustive"})
		return rs
	}
	path := filepath.Join(t.TempDir(), "records.json")

	good, warns := compileWith(t, path, rec(tune.Knobs{"block_oc": alt}))
	if len(warns) > 0 || good.Tuned != 1 {
		t.Fatalf("a valid record: %d kernels tuned, warnings %q", good.Tuned, warns)
	}
	if maps.EqualFunc(good.Files, base.Files, bytes.Equal) {
		t.Fatalf("block_oc=%d did not change the generated C: the test shows nothing", alt)
	}

	// The valid knob applies, the bogus name and the out-of-range value not.
	mixed, warns := compileWith(t, path, rec(tune.Knobs{"block_oc": alt, "bogus": 3, "unroll_k": -5}))
	if len(warns) != 1 {
		t.Fatalf("want one note for the kernel, got %q", warns)
	}
	w := warns[0]
	for _, frag := range []string{"tuning records " + path + ": ", sig, "ignored ", "knob bogus=3 (its schedule does not read it)", "knob unroll_k=-5 (not one of "} {
		if !strings.Contains(w, frag) {
			t.Errorf("note %q lacks %q", w, frag)
		}
	}
	if strings.Contains(w, "block_oc") || strings.Contains(w, "\n") {
		t.Errorf("note %q: names the valid knob or is more than one line", w)
	}
	if mixed.Tuned != 1 || !maps.EqualFunc(mixed.Files, good.Files, bytes.Equal) {
		t.Errorf("with ignored knobs the C differs from the build with the valid knob alone (%d kernels tuned)", mixed.Tuned)
	}

	// Nothing valid: the build is the untuned one.
	bad, warns := compileWith(t, path, rec(tune.Knobs{"block_oc": 1000, "bogus": 3}))
	if len(warns) != 1 || !strings.Contains(warns[0], "knob block_oc=1000 (not one of ") || !strings.Contains(warns[0], "knob bogus=3") ||
		!strings.Contains(warns[0], path) || !strings.Contains(warns[0], sig) {
		t.Fatalf("want one note naming block_oc=1000 and bogus, got %q", warns)
	}
	if bad.Tuned != 0 || !maps.EqualFunc(bad.Files, base.Files, bytes.Equal) {
		t.Errorf("a record of ignored knobs changed the generated C (%d kernels tuned)", bad.Tuned)
	}

	// Records of other kernels only (another model, or the same one
	// quantized otherwise): each note names the file, and one says that
	// nothing applied.
	rs := tune.NewRecords()
	rs.Put(&tune.Record{Kernel: sig + "x", Target: target, Core: core, Knobs: tune.Knobs{"block_oc": alt}, Search: "exhaustive"})
	none, warns := compileWith(t, path, rs)
	if len(warns) != 2 || !strings.Contains(warns[0], path+": 1 record(s) for kernels this model does not have ignored") ||
		!strings.Contains(warns[1], path+": no record applies to this build") || none.Tuned != 0 {
		t.Errorf("records of other kernels: %d tuned, notes %q", none.Tuned, warns)
	}
}

// Check keeps what the tuner could have written: every point of a kernel's
// space, the fit pass's int8 weights, and nothing else.
func TestCheck(t *testing.T) {
	read := tune.Knobs{"block_oc": 2, "unroll_k": 24, "weights": 16, "dw_planar": 1}
	sp := tune.SpaceFor("dsp", "", read)
	for i := 0; i < sp.Size(); i++ {
		p := sp.At(i)
		if keep, bad := tune.CheckOp("dsp", "", read, p); len(bad) > 0 || keep.String() != p.String() {
			t.Fatalf("point %v of the space: kept %v, flagged %q", p, keep, bad)
		}
	}
	// A kernel the fit pass keeps int8 is tuned with weights 8 held fixed.
	if keep, bad := tune.CheckOp("dsp", "", read, tune.Knobs{"weights": 8, "block_oc": 4}); len(bad) > 0 || keep["weights"] != 8 {
		t.Errorf("lean weights: kept %v, flagged %q", keep, bad)
	}
	keep, bad := tune.CheckOp("dsp", "", read, tune.Knobs{"weights": 32, "block_oc": 3, "unroll_k": 24, "nope": 1})
	want := []string{"knob block_oc=3 (not one of 1,2,4)", "knob nope=1 (its schedule does not read it)", "knob weights=32 (not one of 16)"}
	if !slices.Equal(bad, want) || keep.String() != "unroll_k=24" {
		t.Errorf("flagged %q, want %q; kept %v", bad, want, keep)
	}
}

// Records written without Load name no file; Load remembers its path.
func TestLoadKeepsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte(`{"format": "mcugen-tuning-records", "version": 1, "records": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, _, err := tune.Load(path)
	if err != nil || rs.Path != path {
		t.Fatalf("Load: %v, path %q", err, rs.Path)
	}
	b, _ := rs.Marshal()
	if bytes.Contains(b, []byte(path)) {
		t.Errorf("the path was written into the records: %s", b)
	}
}

// blockOCKernel is the signature of a kernel of base that reads block_oc,
// and a value of it other than its default.
func blockOCKernel(t *testing.T, base *pipeline.State) (sig string, alt int) {
	t.Helper()
	for _, f := range base.Module.Funcs {
		def, ok := f.Knobs["block_oc"]
		if !ok {
			continue
		}
		node, _, _ := strings.Cut(f.Node, " + ")
		for _, n := range base.Graph.Nodes {
			if n.Name == node {
				sig = tune.Signature(base.Graph, n)
			}
		}
		for _, v := range tune.SpaceFor(base.Module.Target, f.Op, f.Knobs).Values("block_oc") {
			if v != def {
				alt = v
			}
		}
		if sig != "" && alt != 0 {
			return sig, alt
		}
	}
	t.Fatal("no cnn_int8 kernel reads block_oc with a second value")
	return "", 0
}
