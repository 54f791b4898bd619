package runner

import (
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
)

// layersModel is testdata/layers: three layers looping as often as the input says, each
// followed by the per-layer hook.
func layersModel(t *testing.T) Model {
	t.Helper()
	dir, err := filepath.Abs("testdata/layers")
	if err != nil {
		t.Fatal(err)
	}
	return Model{
		Prefix:  "layers",
		Sources: []string{filepath.Join(dir, "layers.c")},
		Inputs:  []IO{{Name: "input", CName: "input", Size: 16}},
		Outputs: []IO{{Name: "output", CName: "output", Size: 4}},
		Layers:  3,
	}
}

func layersVector(n0, n1, n2 uint32) [][]byte {
	v := make([]byte, 16)
	binary.LittleEndian.PutUint32(v, n0)
	binary.LittleEndian.PutUint32(v[4:], n1)
	binary.LittleEndian.PutUint32(v[8:], n2)
	binary.LittleEndian.PutUint32(v[12:], 12345)
	return [][]byte{v}
}

// layersChecksum is what layers_run computes.
func layersChecksum(n [3]uint32) uint32 {
	acc := uint32(12345)
	for _, c := range n {
		for i := range c {
			acc = acc*33 + (i ^ (acc >> 7))
		}
	}
	return acc
}

// Per-layer counts, read by the firmware (a counter peripheral under -icount) or by the
// counting plugin (qemu-aarch64), agree with the whole-run count, which the harness reads
// independently around the call: changing one layer's loop count changes that layer's
// count by exactly what it changes the whole run's, the other layers' counts not at all,
// and the layers add up to the whole run up to the hooks' own cost.
func TestLayerProfile(t *testing.T) {
	counts := [][3]uint32{{0, 0, 0}, {10, 3, 7}, {20, 3, 7}, {10, 3, 70}}
	var vectors [][][]byte
	for _, c := range counts {
		vectors = append(vectors, layersVector(c[0], c[1], c[2]))
	}
	onBoards(t, []string{"mps2-an386", "mps2-an385", "aarch64-linux"}, func(t *testing.T, b *boards.Board) {
		fw, err := BuildWith(b, layersModel(t), vectors, t.TempDir(), Options{Layers: true, CFlags: []string{"-Werror"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(fw, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if res.LayerOverhead <= 0 || res.LayerOverhead > 40 {
			t.Errorf("hook overhead %d instructions", res.LayerOverhead)
		}
		for v, c := range counts {
			r := res.Vectors[v]
			if got, want := binary.LittleEndian.Uint32(r.Outputs[0]), layersChecksum(c); got != want {
				t.Errorf("vector %d: checksum %d, want %d", v, got, want)
			}
			if len(r.Layers) != 3 {
				t.Fatalf("vector %d: %d layer counts", v, len(r.Layers))
			}
			var sum int64
			for _, n := range r.Layers {
				if n <= res.LayerOverhead {
					t.Errorf("vector %d: layer counts %v, overhead %d", v, r.Layers, res.LayerOverhead)
				}
				sum += n
			}
			// The whole run adds the entry function's own work and the first hook;
			// each layer's count holds one hook's cost.
			if rest := r.Instructions - sum; rest < 0 || rest > 120 {
				t.Errorf("vector %d: whole run %d, layers %v add up to %d", v, r.Instructions, r.Layers, sum)
			}
		}
		l := func(v, i int) int64 { return res.Vectors[v].Layers[i] }
		whole := func(v int) int64 { return res.Vectors[v].Instructions }
		// Vectors 1 and 2 differ only in layer 0's loop, 1 and 3 only in layer 2's.
		if d, dw := l(2, 0)-l(1, 0), whole(2)-whole(1); d <= 0 || d != dw || l(2, 1) != l(1, 1) || l(2, 2) != l(1, 2) {
			t.Errorf("10 more iterations of layer 0: layers %v -> %v, whole run %d -> %d", res.Vectors[1].Layers, res.Vectors[2].Layers, whole(1), whole(2))
		}
		if d, dw := l(3, 2)-l(1, 2), whole(3)-whole(1); d <= 0 || d != dw || l(3, 0) != l(1, 0) || l(3, 1) != l(1, 1) {
			t.Errorf("63 more iterations of layer 2: layers %v -> %v, whole run %d -> %d", res.Vectors[1].Layers, res.Vectors[3].Layers, whole(1), whole(3))
		}
		// The loop's cost per iteration is the same in layers 0 and 2.
		if per0, per2 := (l(2, 0)-l(1, 0))/10, (l(3, 2)-l(1, 2))/63; per0 != per2 || (l(2, 0)-l(1, 0))%10 != 0 {
			t.Errorf("per iteration: layer 0 %d, layer 2 %d", per0, per2)
		}
	})
}

// Without Options.Layers the same model builds no profile: no per-layer counts, no hook
// in the harness.
func TestLayerProfileOff(t *testing.T) {
	b := board(t, "mps2-an386")
	needTools(t, b)
	fw, err := BuildWith(b, layersModel(t), [][][]byte{layersVector(1, 2, 3)}, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fw, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fw.Layers != 0 || res.Vectors[0].Layers != nil || res.LayerOverhead != -1 {
		t.Errorf("unprofiled build: layers %d, counts %v, overhead %d", fw.Layers, res.Vectors[0].Layers, res.LayerOverhead)
	}
	if _, ok := elfSymbols(t, fw.Path)["crt_layer_mark"]; ok {
		t.Error("crt_layer_mark linked into an unprofiled harness")
	}
}
