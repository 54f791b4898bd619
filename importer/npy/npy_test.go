package npy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// The files under testdata were written by numpy's np.save; the expected
// values are the ones passed to it.
func TestReadNumpyFiles(t *testing.T) {
	cases := []struct {
		file  string
		dt    graph.DType
		shape []int
		ints  []int64
		flts  []float32
	}{
		{"i8.npy", graph.Int8, []int{2, 3}, []int64{-128, -1, 0, 1, 2, 127}, nil},
		{"f4.npy", graph.Float32, []int{3}, nil, []float32{1.5, -2.25, 3.0e-8}},
		{"i4be.npy", graph.Int32, []int{2}, []int64{-70000, 5}, nil},
		{"u1.npy", graph.UInt8, []int{1, 1, 2}, []int64{0, 255}, nil},
		{"scalar_i8.npy", graph.Int64, []int{}, []int64{7}, nil},
		{"f8.npy", graph.Float32, []int{2}, nil, []float32{0.5, 1e-3}},
	}
	for _, c := range cases {
		f, err := os.Open(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if d.DType != c.dt || fmt.Sprint(d.Shape) != fmt.Sprint(c.shape) {
			t.Errorf("%s: %s%v, want %s%v", c.file, d.DType, d.Shape, c.dt, c.shape)
		}
		if c.ints != nil && !reflect.DeepEqual(d.I, c.ints) {
			t.Errorf("%s: %v, want %v", c.file, d.I, c.ints)
		}
		if c.flts != nil && !reflect.DeepEqual(d.F, c.flts) {
			t.Errorf("%s: %v, want %v", c.file, d.F, c.flts)
		}
	}
}

// What Write produces for int8 is byte-identical to numpy's own file.
func TestWriteMatchesNumpy(t *testing.T) {
	want, err := os.ReadFile("testdata/i8.npy")
	if err != nil {
		t.Fatal(err)
	}
	d := &graph.Data{DType: graph.Int8, Shape: []int{2, 3}, I: []int64{-128, -1, 0, 1, 2, 127}}
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Write differs from numpy:\n%q\n%q", b.Bytes(), want)
	}
}

func TestRoundTripAndNumpyReadsIt(t *testing.T) {
	vals := []*graph.Data{
		{DType: graph.Float32, Shape: []int{1, 2}, F: []float32{-1.25, 7}},
		{DType: graph.Int16, Shape: []int{3}, I: []int64{-32768, 0, 32767}},
		{DType: graph.Int32, Shape: []int{1}, I: []int64{-5}},
		{DType: graph.Int64, Shape: []int{2}, I: []int64{1 << 40, -3}},
	}
	dir := t.TempDir()
	for i, d := range vals {
		var b bytes.Buffer
		if err := Write(&b, d); err != nil {
			t.Fatal(err)
		}
		back, err := Read(bytes.NewReader(b.Bytes()))
		if err != nil || !reflect.DeepEqual(back, d) {
			t.Errorf("round trip %d: %+v, %v", i, back, err)
		}
		os.WriteFile(filepath.Join(dir, d.DType.String()+".npy"), b.Bytes(), 0o644)
	}
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil || exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("python3-numpy not installed: numpy cross-check skipped")
	}
	out, err := exec.Command(py, "-c", `import numpy as np,sys
for n in ["float32","int16","int32","int64"]:
    a=np.load(sys.argv[1]+"/"+n+".npy"); print(a.dtype, a.shape, a.ravel().tolist())`, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy failed: %v\n%s", err, out)
	}
	want := "float32 (1, 2) [-1.25, 7.0]\nint16 (3,) [-32768, 0, 32767]\nint32 (1,) [-5]\nint64 (2,) [1099511627776, -3]\n"
	if string(out) != want {
		t.Errorf("numpy read:\n%s\nwant:\n%s", out, want)
	}
}

func TestReadRejects(t *testing.T) {
	good, _ := os.ReadFile("testdata/f4.npy")
	cases := map[string][]byte{
		"too short":        good[:4],
		"bad magic":        append([]byte("XNUMPY"), good[6:]...),
		"data truncated":   good[:len(good)-1],
		"not supported":    bytes.Replace(good, []byte("<f4"), []byte("<c8"), 1),
		"bad dimension":    bytes.Replace(good, []byte("(3,)"), []byte("(x,)"), 1),
		"header truncated": good[:20],
		// numpy refuses these: fortran_order must be True or False, and a
		// key given twice says two things (adversarial journey: 1 was
		// read as C order).
		"fortran_order is not True or False":            bytes.Replace(good, []byte("'fortran_order': False"), []byte("'fortran_order': 1    "), 1),
		"fortran_order is not True or False (a string)": bytes.Replace(good, []byte("'fortran_order': False"), []byte("'fortran_order':'True'"), 1),
		"no fortran_order":                              bytes.Replace(good, []byte("'fortran_order': False"), []byte("'fortran_xxxxx': False"), 1),
		"gives shape twice":                             bytes.Replace(good, []byte("'shape': (3,), }             "), []byte("'shape': (3,), 'shape': (3,)}"), 1),
	}
	for want, b := range cases {
		_, err := Read(bytes.NewReader(b))
		if err == nil || !strings.Contains(err.Error(), strings.Fields(want)[0]) || strings.Contains(want, "fortran") && !strings.Contains(err.Error(), strings.SplitN(want, " (", 2)[0]) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, name := range []string{"i8.npy", "f4.npy", "i4be.npy", "u1.npy", "scalar_i8.npy", "f8.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		if d.Len() != graph.NumElements(d.Shape) {
			t.Fatalf("decoded %d elements for shape %v", d.Len(), d.Shape)
		}
	})
}

// ReadHeader gives the element type the file stores, by numpy's name,
// before Read's conversion: f8.npy (np.save of float64 [0.5, 1e-3]) is
// float64 though Read returns float32; the other types read as stored.
func TestReadHeader(t *testing.T) {
	for _, c := range []struct {
		file, dtype string
		shape       []int
	}{
		{"f8.npy", "float64", []int{2}},
		{"f4.npy", "float32", []int{3}},
		{"i8.npy", "int8", []int{2, 3}},
		{"i4be.npy", "int32", []int{2}},
		{"u1.npy", "uint8", []int{1, 1, 2}},
		{"scalar_i8.npy", "int64", []int{}},
	} {
		f, err := os.Open(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		h, err := ReadHeader(f)
		f.Close()
		if err != nil || h.DType != c.dtype || fmt.Sprint(h.Shape) != fmt.Sprint(c.shape) {
			t.Errorf("%s: %+v %v, want %s%v", c.file, h, err, c.dtype, c.shape)
		}
	}
	// A type mcugen does not read keeps numpy's descr.
	hdr := "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), 0)
	h, err := ReadHeader(bytes.NewReader(append(b, hdr...)))
	if err != nil || h.DType != "<c8" {
		t.Errorf("complex64: %+v %v, want <c8", h, err)
	}
	if _, err := ReadHeader(strings.NewReader("PK\x03\x04")); err == nil {
		t.Error("a zip file read as a .npy header")
	}
}
