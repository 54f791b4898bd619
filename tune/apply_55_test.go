package tune_test

import (
	"bytes"
	"maps"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/tune"
)

// A record whose search found nothing faster than the defaults (its
// instructions equal its default_instructions) holds the defaults of the
// mcugen that wrote it: the kernel takes this version's defaults, not the
// record's values, so a default that got faster since (the 14-word RGB
// gather, session 55) is not pinned to the old form; the kernel counts as
// tuned and as one keeping its defaults (session 56), with no note. A
// record that beat its defaults applies its knobs as before.
func TestRecordOfDefaultsTakesTodaysDefaults55(t *testing.T) {
	base, _ := compileWith(t, "", nil)
	sig, alt := blockOCKernel(t, base)
	rec := func(ins, def int64) *tune.Records {
		rs := tune.NewRecords()
		rs.Put(&tune.Record{Kernel: sig, Target: base.Module.Target, Core: "cortex-m4", Knobs: tune.Knobs{"block_oc": alt},
			Instructions: ins, Default: def, Search: "exhaustive"})
		return rs
	}
	path := filepath.Join(t.TempDir(), "records.json")
	same, warns := compileWith(t, path, rec(5000, 5000))
	if len(warns) > 0 || same.Tuned != 1 || same.TunedDefaults != 1 {
		t.Fatalf("a record of the defaults: %d kernels tuned, %d keeping their defaults, warnings %q", same.Tuned, same.TunedDefaults, warns)
	}
	if !maps.EqualFunc(same.Files, base.Files, bytes.Equal) {
		t.Error("a record of the defaults changed the generated C: its block_oc was pinned")
	}
	better, warns := compileWith(t, path, rec(4000, 5000))
	if len(warns) > 0 || better.Tuned != 1 || better.TunedDefaults != 0 {
		t.Fatalf("a record that beat its defaults: %d kernels tuned, warnings %q", better.Tuned, warns)
	}
	if maps.EqualFunc(better.Files, base.Files, bytes.Equal) {
		t.Errorf("block_oc=%d from a record that beat its defaults did not apply", alt)
	}
}
