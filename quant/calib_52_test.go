package quant

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// twoInputGraph52 is y = a + b, both [1 4].
func twoInputGraph52() *graph.Graph {
	g := graph.New("t", "onnx")
	for _, n := range []string{"a", "b", "y"} {
		g.AddTensor(&graph.Tensor{Name: n, DType: graph.Float32, Shape: []int{1, 4}})
	}
	g.AddNode(&graph.Node{Name: "add", Op: graph.Add, Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: &graph.BinaryAttrs{}})
	g.Inputs, g.Outputs = []string{"a", "b"}, []string{"y"}
	return g
}

// filled52 is a float32 value of shape whose elements are all v.
func filled52(v float32, shape ...int) *graph.Data {
	d := graph.NewData(graph.Float32, shape)
	for i := range d.F {
		d.F[i] = v
	}
	return d
}

// calibDir52 writes files (name → value) into a new directory.
func calibDir52(t *testing.T, files map[string]*graph.Data) string {
	t.Helper()
	dir := t.TempDir()
	for name, d := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeNpy(t, filepath.Join(dir, name), d)
	}
	return dir
}

// Review finding: in the test-vector layout, input_000.npy and
// input_000_0.npy (both vector 000's one input) kept one of them without
// a word.
func TestCalibVectorTwice52(t *testing.T) {
	g := oneInputGraph()
	dir := calibDir52(t, map[string]*graph.Data{
		"input_000.npy": filled52(1, 1, 4), "input_000_0.npy": filled52(2, 1, 4), "output_000.npy": filled52(1, 1, 4),
		"input_001.npy": filled52(3, 1, 4), "output_001.npy": filled52(3, 1, 4),
	})
	_, err := LoadCalib(dir, g)
	want := "quant: calibration dir " + dir + `: input_000.npy and input_000_0.npy are both vector 000's file for input "x": remove one`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// Without the second file: two vectors, in order.
	os.Remove(filepath.Join(dir, "input_000_0.npy"))
	s, err := LoadCalib(dir, g)
	if err != nil || len(s) != 2 || s[0]["x"].F[0] != 1 || s[1]["x"].F[0] != 3 {
		t.Errorf("vectors 000 and 001: %v %v", s, err)
	}
}

// Review finding: the files of several inputs were paired by their place
// in the file order, a_0.npy with b_1.npy; their numbers must pair up.
func TestCalibInputsPairByNumber52(t *testing.T) {
	g := twoInputGraph52()
	dir := calibDir52(t, map[string]*graph.Data{
		"a_0.npy": filled52(0, 1, 4), "a_1.npy": filled52(1, 1, 4), "b_1.npy": filled52(1, 1, 4), "b_7.npy": filled52(7, 1, 4),
	})
	_, err := LoadCalib(dir, g)
	want := "quant: calibration dir " + dir + `: a_0.npy has no file of input "b" with its number (0), and b_7.npy none of input "a" (7): the files of one sample are paired by the number in their names`
	if err == nil || err.Error() != want {
		t.Errorf("a_0, a_1, b_1, b_7: got %v\nwant %s", err, want)
	}

	// Two files of one input with the same number.
	dir = calibDir52(t, map[string]*graph.Data{
		"a_01.npy": filled52(1, 1, 4), "a_1.npy": filled52(1, 1, 4), "b_1.npy": filled52(1, 1, 4), "b_2.npy": filled52(2, 1, 4),
	})
	_, err = LoadCalib(dir, g)
	want = "quant: calibration dir " + dir + `: a_01.npy and a_1.npy are both sample 1 of input "a": remove one`
	if err == nil || err.Error() != want {
		t.Errorf("a_01 and a_1: got %v\nwant %s", err, want)
	}

	// Numbers that pair up (leading zeros aside) are taken, each a with
	// the b of its number.
	dir = calibDir52(t, map[string]*graph.Data{
		"a_2.npy": filled52(2, 1, 4), "a_10.npy": filled52(10, 1, 4), "b_002.npy": filled52(-2, 1, 4), "b_10.npy": filled52(-10, 1, 4),
	})
	s, err := LoadCalib(dir, g)
	if err != nil || len(s) != 2 {
		t.Fatalf("a_2, a_10, b_002, b_10: %d samples, %v", len(s), err)
	}
	for i, v := range []float32{2, 10} {
		if s[i]["a"].F[0] != v || s[i]["b"].F[3] != -v {
			t.Errorf("sample %d: a %v, b %v, want %v and %v", i, s[i]["a"].F, s[i]["b"].F, v, -v)
		}
	}
	// One stacked file per input has no numbers to pair.
	dir = calibDir52(t, map[string]*graph.Data{"a.npy": filled52(1, 3, 4), "b.npy": filled52(2, 3, 4)})
	if s, err := LoadCalib(dir, g); err != nil || len(s) != 3 {
		t.Errorf("a.npy, b.npy stacked: %d samples, %v", len(s), err)
	}
}

// Review finding: the files of one input could mix sample shapes ([1 4],
// [4], [4 1]) or single samples and stacks; a [1 4] sample is also a
// stack of one, and stacks with and without the batch of 1 mix (both
// stack whole samples).
func TestCalibOneLayout52(t *testing.T) {
	g := oneInputGraph() // x is [1 4]
	for _, c := range []struct {
		name  string
		files map[string]*graph.Data
		want  string // "" when accepted; the error after the directory
	}{
		{"[1 4] and [4]", map[string]*graph.Data{"x_0.npy": filled52(1, 1, 4), "x_1.npy": filled52(1, 4)},
			`: input "x": x_0.npy holds one sample of shape [1 4], but x_1.npy holds one sample of shape [4]: give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape`},
		{"[1 4] and [4 1]", map[string]*graph.Data{"x_0.npy": filled52(1, 1, 4), "x_1.npy": filled52(1, 4, 1)},
			`: input "x": x_0.npy holds one sample of shape [1 4], but x_1.npy holds one sample of shape [4 1]: give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape`},
		{"[4] and a stack", map[string]*graph.Data{"x_0.npy": filled52(1, 4), "x_1.npy": filled52(1, 5, 4)},
			`: input "x": x_0.npy holds one sample of shape [4], but x_1.npy holds a stack of samples (shape [5 4]): give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape`},
		// The third file disagrees with the first two, which agree as
		// stacks: it is named with the stack it disagrees with.
		{"[1 4], [5 4], [4]", map[string]*graph.Data{"x_0.npy": filled52(1, 1, 4), "x_1.npy": filled52(1, 5, 4), "x_2.npy": filled52(1, 4)},
			`: input "x": x_0.npy holds one sample of shape [1 4], but x_2.npy holds one sample of shape [4]: give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape`},
		{"sample subdirectories", map[string]*graph.Data{"s0/x.npy": filled52(1, 1, 4), "s1/x.npy": filled52(1, 4)},
			`: input "x": s0/x.npy holds one sample of shape [1 4], but s1/x.npy holds one sample of shape [4]: give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape`},
		// Accepted: one layout throughout.
		{"all [4]", map[string]*graph.Data{"x_0.npy": filled52(1, 4), "x_1.npy": filled52(1, 4)}, ""},
		{"all [4 1]", map[string]*graph.Data{"x_0.npy": filled52(1, 4, 1), "x_1.npy": filled52(1, 4, 1)}, ""},
		{"[1 4] and a stack", map[string]*graph.Data{"x_0.npy": filled52(1, 1, 4), "x_1.npy": filled52(1, 5, 4)}, ""},
		{"stacks with and without the batch", map[string]*graph.Data{"x_0.npy": filled52(1, 2, 1, 4), "x_1.npy": filled52(1, 5, 4)}, ""},
	} {
		dir := calibDir52(t, c.files)
		_, err := LoadCalib(dir, g)
		want := ""
		if c.want != "" {
			want = "quant: calibration dir " + dir + c.want
		}
		if got := errString52(err); got != want {
			t.Errorf("%s: got %s\nwant %s", c.name, got, want)
		}
	}
}

func errString52(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
