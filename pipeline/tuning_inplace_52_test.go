package pipeline

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tune"
)

// A model whose plan runs a convolution in place that its kernel declines
// compiles with tuning records as it does without: the records' lowering
// takes that layer out of place too, and the build plans again and warns
// (review finding: `compile --tuning` failed with "the plan runs it in
// place, its kernel cannot", and `tune` at its last step, on an ONNX
// QOperator model of three layers).
func TestTuningWithDeclinedInPlace52(t *testing.T) {
	u8 := graph.UInt8
	bl, x := msModel("qw", []int{1, 8, 10, 10}, 0.02, u8, 128)
	mk := func(name string, shape []int, mul int) string {
		w := graph.NewData(u8, shape)
		for i := range w.I {
			w.I[i] = int64(i * mul % 256)
		}
		return bl.Init(name, w)
	}
	c1 := bl.Node("QLinearConv", []string{x, "qw_xs", "qw_xz", mk("w1", []int{16, 8, 1, 1}, 53), bl.Scalar("ws1", graph.Float32, 0.003), bl.Scalar("wz1", u8, 100),
		bl.Scalar("ys1", graph.Float32, 0.05), bl.Scalar("yz1", u8, 120)})
	c2 := bl.Node("QLinearConv", []string{c1, "ys1", "yz1", mk("w2", []int{16, 1, 3, 3}, 71), bl.Scalar("ws2", graph.Float32, 0.004), bl.Scalar("wz2", u8, 0),
		bl.Scalar("ys2", graph.Float32, 0.05), bl.Scalar("yz2", u8, 128)}, onnx.IntsAttr("pads", 1, 1, 1, 1), onnx.IntAttr("group", 16))
	c3 := bl.Node("QLinearConv", []string{c2, "ys2", "yz2", mk("w3", []int{8, 16, 3, 3}, 29), bl.Scalar("ws3", graph.Float32, 0.002), bl.Scalar("wz3", u8, 255),
		bl.Scalar("ys3", graph.Float32, 0.08), bl.Scalar("yz3", u8, 128)}, onnx.IntsAttr("pads", 1, 1, 1, 1), onnx.IntsAttr("strides", 2, 2))
	msOut(bl, c3, 0.08, u8, 128)
	b := qemuBoard(t, "mps2-an386")
	compile := func(recs string) (*State, []string) {
		t.Helper()
		g, err := onnx.Import("qw", bl.Model(), onnx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var warns []string
		s, err := CompileGraph(g, "qw", Options{Board: b, Version: "test", Tuning: recs, Warn: func(w string) { warns = append(warns, w) }})
		if err != nil {
			t.Fatalf("tuning %q: %v", recs, err)
		}
		return s, warns
	}
	plain, warns := compile("")
	if !strings.Contains(strings.Join(warns, "\n"), "run out of place") {
		t.Fatalf("the plan declined no in-place run (the case this test is for): %q", warns)
	}
	// A record for the first layer (the pointwise one), at its defaults
	// but for block_oc.
	rs := tune.NewRecords()
	fi := slices.IndexFunc(plain.Module.Funcs, func(f *tir.PrimFunc) bool { return f.Op == "conv2d" })
	if fi < 0 {
		t.Fatal("no conv2d kernel")
	}
	f := plain.Module.Funcs[fi]
	var n *graph.Node
	for _, m := range plain.Graph.Nodes {
		if m.Name == strings.Split(f.Node, " + ")[0] {
			n = m
		}
	}
	if n == nil {
		t.Fatalf("kernel %s has no node", f.Name)
	}
	k := tune.Knobs(f.Knobs).Clone()
	k["block_oc"] = 4
	rs.Put(&tune.Record{Kernel: tune.Signature(plain.Graph, n), Target: "dsp", Core: "cortex-m4", Knobs: k, Instructions: 1, Default: 2, Search: "none", Version: "test"})
	recs := filepath.Join(t.TempDir(), "records.json")
	if err := rs.Save(recs); err != nil {
		t.Fatal(err)
	}
	tuned, warns := compile(recs)
	if tuned.Tuned != 1 || tuned.Module.Funcs[fi].Knobs["block_oc"] != 4 {
		t.Errorf("the record did not apply: %d tuned, block_oc %d", tuned.Tuned, tuned.Module.Funcs[fi].Knobs["block_oc"])
	}
	if !strings.Contains(strings.Join(warns, "\n"), "run out of place") {
		t.Errorf("with records, no out-of-place warning: %q", warns)
	}
	if tuned.Plan.ArenaBytes != plain.Plan.ArenaBytes {
		t.Errorf("arena %d B with records, %d B without", tuned.Plan.ArenaBytes, plain.Plan.ArenaBytes)
	}
	x2, err := tuned.Execute(append(RandomInputs(tuned.Graph, 2, 52), ExtremeInputs(tuned.Graph)...), t.TempDir(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !x2.AllMatch() {
		t.Error("the tuned build's outputs differ from the reference interpreter")
	}
}
