package measure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/tune"
)

// --resume trusted every journal line (a review finding): a count of 9e18
// went into the records, which tune's own parser then refused; a count of
// -1 without an error left the kernel with no record, "(0 failed)" and exit
// 0; a line whose code an older mcugen generated was replayed as measured.
// Now only a plausible count of the code these knobs generate now is taken.
func TestReplayJournalChecksLines(t *testing.T) {
	ad := filepath.Join("..", "..", "..", "shared", "models", "mlperf_tiny", "ad", "ad01_int8.tflite")
	if _, err := os.Stat(ad); err != nil {
		t.Skip("../shared/models is absent")
	}
	opt, s := compiledOn(t, ad, "mps2-an386")
	kernels, err := Kernels(s, opt)
	if err != nil || len(kernels) == 0 {
		t.Fatal(err)
	}
	k := kernels[0]
	key := tune.KeyFor(k.Signature, "dsp", opt.Board.CPU, k.Defaults)
	code := candidateCode(t, k, k.Space.At(0), opt)
	var notes []string
	cfg := Config{Opt: opt, Out: filepath.Join(t.TempDir(), "r.json"), Resume: true, Note: func(n string) { notes = append(notes, n) }}
	for _, c := range []struct {
		name string
		line journalLine
		want int // resumed
		note string
	}{
		{"measured now", journalLine{Instructions: 1000, Code: code}, 1, ""},
		{"huge", journalLine{Instructions: 9e18, Code: code}, 0, "1 measurement(s) with a count no kernel takes"},
		{"negative", journalLine{Instructions: -1, Code: code}, 0, "1 measurement(s) with a count no kernel takes"},
		{"zero", journalLine{Instructions: 0, Code: code}, 0, "1 measurement(s) with a count no kernel takes"},
		{"another build's code", journalLine{Instructions: 1000, Code: "from-an-older-mcugen"}, 0, "1 measurement(s) of code other than what their knobs generate now"},
		{"no code", journalLine{Instructions: 1000}, 0, "1 measurement(s) of code other than what their knobs generate now"},
		{"a failure", journalLine{Instructions: -1, Code: code, Err: "qemu: timeout"}, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			notes = nil
			l := c.line
			l.Key, l.Knobs = key, k.Space.At(0)
			js, _ := json.Marshal(l)
			if err := os.WriteFile(JournalPath(cfg.Out), append(js, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := &Report{}
			if err := replayJournal(cfg, map[string]*job{key: newJob(k, 4)}, nil, rep); err != nil {
				t.Fatal(err)
			}
			n := strings.Join(notes, "\n")
			if rep.Resumed != c.want || (c.note != "" && !strings.Contains(n, c.note)) || (c.note == "" && n != "") {
				t.Errorf("%d resumed, notes %q; want %d and %q", rep.Resumed, n, c.want, c.note)
			}
		})
	}
}
