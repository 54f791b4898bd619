package tune

import (
	"strings"
	"testing"
)

// One file holds gcc's and clang's records for one kernel on one core:
// each build finds its own compiler's (a gcc record written with no
// compiler, or with "gcc"); a record naming another compiler, or a core
// carrying the compiler's suffix, is skipped with its reason, and a record
// of this mcugen's writing keeps its compiler through a save.
func TestRecordsPerCompiler40(t *testing.T) {
	const kernel = "Conv2D int8 1x8x8x4,c8x3x3x4,c8:int32->1x8x8x8 #00000001"
	data := `{"format": "mcugen-tuning-records", "version": 2, "records": [
 {"kernel": "` + kernel + `", "target": "dsp", "core": "cortex-m4",
  "knobs": {"block_oc": 4}, "instructions": 900, "default_instructions": 1000, "trials": 4, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"},
 {"kernel": "` + kernel + `", "target": "dsp", "core": "cortex-m4", "compiler": "clang",
  "knobs": {"block_oc": 2}, "instructions": 950, "default_instructions": 1100, "trials": 4, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"},
 {"kernel": "` + kernel + `", "target": "dsp", "core": "cortex-m7", "compiler": "gcc",
  "knobs": {"block_oc": 1}, "instructions": 800, "default_instructions": 1000, "trials": 4, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"},
 {"kernel": "` + kernel + `", "target": "dsp", "core": "cortex-m4", "compiler": "icc",
  "knobs": {"block_oc": 1}, "instructions": 800, "default_instructions": 1000, "trials": 4, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"},
 {"kernel": "` + kernel + `", "target": "dsp", "core": "cortex-m33+clang",
  "knobs": {"block_oc": 1}, "instructions": 800, "default_instructions": 1000, "trials": 4, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"}
]}`
	rs, notes, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 3 {
		t.Fatalf("%d records read, want 3 (gcc's and clang's on the M4, gcc's on the M7)", rs.Len())
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{`compiler "icc" (want gcc or clang)`, `core "cortex-m33+clang" (the compiler goes in "compiler")`} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q: want %q", joined, want)
		}
	}
	for _, c := range []struct {
		core, compiler string
		oc             int
	}{
		{"cortex-m4", "", 4}, {"cortex-m4", CompilerGCC, 4}, {"cortex-m4", CompilerClang, 2},
		{"cortex-m7", "", 1}, {"cortex-m7", CompilerClang, 0},
	} {
		r := rs.Get(kernel, "dsp", ToolCore(c.core, c.compiler), nil)
		got := 0
		if r != nil {
			got = r.Knobs["block_oc"]
		}
		if got != c.oc {
			t.Errorf("%s with %q: block_oc %d, want %d (0: none)", c.core, c.compiler, got, c.oc)
		}
	}
	// "gcc" is read as the default and written as it: no compiler.
	b, err := rs.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"compiler": "clang"`); n != 1 {
		t.Errorf("%d clang records written, want 1:\n%s", n, b)
	}
	if strings.Contains(string(b), `"compiler": "gcc"`) {
		t.Errorf("gcc written as a compiler:\n%s", b)
	}
	// With a clang record the file is version 3, which an mcugen reading up
	// to version 2 refuses (it would apply clang's records to gcc builds);
	// without one it stays version 2.
	if !strings.Contains(string(b), `"version": 3`) {
		t.Errorf("a file with a clang record is not version 3:\n%s", b)
	}
	gccOnly := NewRecords()
	gccOnly.Put(&Record{Kernel: kernel, Target: "dsp", Core: "cortex-m4", Knobs: Knobs{"block_oc": 4}})
	if g, _ := gccOnly.Marshal(); !strings.Contains(string(g), `"version": 2`) {
		t.Errorf("a gcc-only file is not version 2:\n%s", g)
	}
	if c, cc := SplitToolCore(ToolCore("cortex-m55", CompilerClang)); c != "cortex-m55" || cc != CompilerClang {
		t.Errorf("SplitToolCore(ToolCore(m55, clang)) = %q, %q", c, cc)
	}
	if c, cc := SplitToolCore(ToolCore("", CompilerClang)); c != "" || cc != CompilerClang {
		t.Errorf("the host's clang core splits to %q, %q", c, cc)
	}
}
