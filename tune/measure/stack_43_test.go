package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/tune"
)

// tune on a board of the records' core with less stack than the board they
// were tuned on: IC's committed mps2-an386 records, on an AN386 with an
// 8 KiB stack, where conv2d_9_s8's Winograd record does not fit (see
// pipeline's TestRecordOverStackKeepsDefaults). tune measured nothing and
// reported the record's 920,751 instructions for that kernel and 19.6%
// fewer for the model; the build ran the layer in plain C. Now the report
// gives the kernel its defaults (the committed records' 1,655,243), as the
// build does, with a note, and the records file is left as it was.
func TestTuneRecordOverStack(t *testing.T) {
	shared, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	model := filepath.Join(shared, "ic/pretrainedResnet_quant.tflite")
	if _, err := os.Stat(model); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny checks skipped")
	}
	dir := t.TempDir()
	star := filepath.Join(dir, "st.star")
	if err := os.WriteFile(star, []byte(`board(name = "m4-8k", description = "an AN386 with an 8 KiB stack", inherits = ["mps2-an386"], stack_bytes = 8192)`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := pipeline.LoadBoard("m4-8k", star)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/mlperf_an386.json")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	if err := os.WriteFile(out, src, 0o644); err != nil {
		t.Fatal(err)
	}
	opt := pipeline.Options{Board: b, Version: "test", Warn: func(string) {}}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	rep, err := Run(s, Config{Opt: opt, Out: out, Trials: 4, Jobs: 1, Note: func(n string) { notes = append(notes, n) }, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const sig = "Conv2D int8 1x8x8x64,cp64x3x3x64,cp64:int32->1x8x8x64"
	found := false
	for _, k := range rep.Kernels {
		if !strings.HasPrefix(k.Kernel, sig) {
			continue
		}
		found = true
		if k.Instructions != 1655243 || k.Default != 1655243 || k.Knobs["winograd"] == 1 {
			t.Errorf("%s: %d instructions (default %d), knobs %v; want the defaults' 1,655,243", k.Kernel, k.Instructions, k.Default, k.Knobs)
		}
	}
	if !found || rep.Skipped != 14 || rep.Trials != 0 {
		t.Errorf("found %v, %d kernels from the records, %d measurements; want the kernel, 14, 0", found, rep.Skipped, rep.Trials)
	}
	if n := strings.Join(notes, "\n"); !strings.Contains(n, "(tuned on mps2-an386) takes more stack than m4-8k leaves its kernels: builds for this board keep its defaults") {
		t.Errorf("no note on the record over the stack:\n%s", n)
	}
	after, err := os.ReadFile(out)
	if err != nil || string(after) != string(src) {
		t.Errorf("the records file changed (%v)", err)
	}
	if rs, _, err := tune.Load(out); err != nil || rs.Len() == 0 {
		t.Errorf("records: %v", err)
	}
}

// candidateCode is the codeKey of kernel k's candidate knobs, as a journal
// line of this mcugen records it.
func candidateCode(t *testing.T, k *Kernel, knobs tune.Knobs, opt pipeline.Options) string {
	t.Helper()
	st, err := compileCandidate(k, knobs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return codeKey(st)
}

// compiledOn compiles model for the catalog board called name, with
// Version "test", and returns the options and the compiled state.
func compiledOn(t *testing.T, model, name string) (pipeline.Options, *pipeline.State) {
	t.Helper()
	opt := pipeline.Options{Board: board(t, name), Version: "test"}
	s, err := pipeline.Compile(model, opt)
	if err != nil {
		t.Fatal(err)
	}
	return opt, s
}
