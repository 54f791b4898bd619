package tune

import "testing"

// A knob declared with its default alone (dsp.weights, a flash choice) is
// no search dimension but is in every point, so records carry it and the
// space's size and search are those without it.
func TestSpaceFixedKnob(t *testing.T) {
	with := SpaceFor("dsp", "", Knobs{"block_oc": 2, "unroll_k": 8, "weights": 16})
	without := SpaceFor("dsp", "", Knobs{"block_oc": 2, "unroll_k": 8})
	if with.Size() != without.Size() || len(with.Dims) != len(without.Dims) {
		t.Fatalf("dims %v, want %v", with.Dims, without.Dims)
	}
	for _, d := range with.Dims {
		if d.Name == "weights" {
			t.Fatalf("weights is a dimension: %v", d.Values)
		}
	}
	def := Knobs{"block_oc": 2, "unroll_k": 8, "weights": 16}
	i := with.Index(def)
	if i < 0 || with.At(i).String() != def.String() {
		t.Errorf("default point %d: %v", i, with.At(i))
	}
	if k := without.At(0); len(k) != 2 {
		t.Errorf("no fixed knobs: %v", k)
	}
}
