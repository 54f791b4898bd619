package npy

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// f4Data is float32 [1.5, -2] as little-endian bytes, worked by hand:
// 1.5 = 0x3FC00000, -2 = 0xC0000000.
var f4Data = []byte{0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0xC0}

// padded is hdr as numpy writes it: spaces, then a newline, so that the
// 10-byte preamble and the header fill a multiple of 64 bytes.
func padded(hdr string) string {
	return hdr + strings.Repeat(" ", (64-(10+len(hdr)+1)%64)%64) + "\n"
}

// npyV writes a .npy file of format version v (1, 2 or 3) whose header
// length field says hlen.
func npyV(v byte, hlen int, hdr string, data []byte) []byte {
	b := []byte{0x93, 'N', 'U', 'M', 'P', 'Y', v, 0}
	if v == 1 {
		b = append(b, byte(hlen), byte(hlen>>8))
	} else {
		b = append(b, byte(hlen), byte(hlen>>8), byte(hlen>>16), byte(hlen>>24))
	}
	return append(append(b, hdr...), data...)
}

const f4Hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"

// Review finding: Read took the n×itemsize bytes the header asks for and
// never looked past them, so a file with bytes after its data, or whose
// header length is short of the real header (its padding then read as
// data, every value shifted), gave wrong values without a word.
func TestReadEndsAtData52(t *testing.T) {
	h := padded(f4Hdr)
	// The well-formed file reads (the reference for the cases below).
	d, err := Read(bytes.NewReader(npyV(1, len(h), h, f4Data)))
	if err != nil || !reflect.DeepEqual(d.F, []float32{1.5, -2}) {
		t.Fatalf("well-formed file: %v %v", d, err)
	}
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"3 bytes after the data", npyV(1, len(h), h, append(append([]byte{}, f4Data...), 1, 2, 3)),
			".npy file has 3 bytes after its data (shape [2] needs 8): the header's length or shape is wrong"},
		// The length field 4 short: the header's last 4 bytes ("   \n")
		// would be the first data bytes, and f4Data's last 4 left over.
		{"header length 4 short", npyV(1, len(h)-4, h, f4Data),
			fmt.Sprintf(".npy header of %d bytes does not end in a newline, as numpy's does: the header length is wrong", len(h)-4)},
		// 4 long: the header swallows the first value.
		{"header length 4 long", npyV(1, len(h)+4, h, f4Data),
			fmt.Sprintf(".npy header of %d bytes does not end in a newline, as numpy's does: the header length is wrong", len(h)+4)},
		{"version 2, 1 byte after the data", npyV(2, len(h), h, append(append([]byte{}, f4Data...), 0)),
			".npy file has 1 byte after its data (shape [2] needs 8): the header's length or shape is wrong"},
	} {
		_, err := Read(bytes.NewReader(c.file))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// Everything numpy (and older writers) write still reads: versions 1, 2
// and 3, headers padded or not, a trailing comma or none, Python 2's 3L,
// a scalar's ().
func TestReadValidHeaders52(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     byte
		hdr   string
		data  []byte
		shape []int
	}{
		{"version 1, padded", 1, padded(f4Hdr), f4Data, []int{2}},
		{"version 2, padded", 2, padded(f4Hdr), f4Data, []int{2}},
		{"version 3, padded", 3, padded(f4Hdr), f4Data, []int{2}},
		{"not padded to 64", 1, f4Hdr + "\n", f4Data, []int{2}},
		{"no trailing comma, no spaces", 1, "{'descr':'<f4','fortran_order':False,'shape':(1,2)}\n", f4Data, []int{1, 2}},
		{"trailing comma in the shape", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2,), }\n", f4Data, []int{1, 2}},
		{"Python 2 long", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n", f4Data, []int{2}},
		{"keys in another order", 1, "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}\n", f4Data, []int{2}},
		{"scalar", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", f4Data[:4], []int{}},
	} {
		d, err := Read(bytes.NewReader(npyV(c.v, len(c.hdr), c.hdr, c.data)))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := []float32{1.5, -2}[:len(c.data)/4]
		if fmt.Sprint(d.Shape) != fmt.Sprint(c.shape) || !reflect.DeepEqual(d.F, want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, d.Shape, d.F, c.shape, want)
		}
	}
}

// Headers numpy refuses are refused: a shape that is not a tuple of
// dimensions ("(1,,64)" was read as [1 64], "(2)" as [2]), a key numpy
// does not write, text after the dict.
func TestReadRefusesHeaders52(t *testing.T) {
	for _, c := range []struct {
		name, hdr string
		data      []byte
		want      string
	}{
		{"empty dimension", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,2), }", f4Data,
			".npy header has a bad shape (1,,2): a dimension is empty"},
		{"(,)", "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", nil,
			".npy header has a bad shape (,): a dimension is empty"},
		{"not a tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", f4Data,
			".npy header has a bad shape (2): not a tuple (numpy writes (2,))"},
		{"unknown key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'order': 'C', }", f4Data,
			`.npy header has the key "order", which numpy does not write (it writes descr, fortran_order and shape)`},
		{"brace inside", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} }", f4Data,
			`.npy header has "} }" after the value of "shape": the dict does not close there`},
		{"two values", "{'descr': '<f4', 'fortran_order': False False, 'shape': (2,)}", f4Data,
			`.npy header's fortran_order is not True or False: "False False"`},
		{"quote left out", "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", f4Data,
			`.npy header has "fortran_order': Fals" after the value of "descr": the dict does not close there`},
		{"unclosed descr", "{'fortran_order': False, 'shape': (2,), 'descr': '<f4}", f4Data,
			".npy header has a bad descr"},
		{"unquoted key", "{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", f4Data,
			`.npy header is not a dict of quoted keys: "descr: '<f4', 'fortran_order': False, 's"`},
	} {
		h := padded(c.hdr)
		_, err := Read(bytes.NewReader(npyV(1, len(h), h, c.data)))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// Review finding: a bool byte of 2 stayed 2 (logical ops on it then went
// wrong); numpy reads any nonzero byte as True. The same through
// FromBytes, which raw .bin inputs take.
func TestBoolNonzeroIsTrue52(t *testing.T) {
	h := padded("{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }")
	raw := []byte{0, 1, 2, 0x80, 0xFF}
	want := []int64{0, 1, 1, 1, 1}
	d, err := Read(bytes.NewReader(npyV(1, len(h), h, raw)))
	if err != nil || d.DType != graph.Bool || !reflect.DeepEqual(d.I, want) {
		t.Errorf("Read |b1 %v: %v %v, want %v", raw, d, err, want)
	}
	d, err = FromBytes(raw, graph.Bool, []int{5})
	if err != nil || !reflect.DeepEqual(d.I, want) {
		t.Errorf("FromBytes bool %v: %v %v, want %v", raw, d, err, want)
	}
	// uint8 keeps its bytes.
	d, err = FromBytes(raw, graph.UInt8, []int{5})
	if err != nil || !reflect.DeepEqual(d.I, []int64{0, 1, 2, 128, 255}) {
		t.Errorf("FromBytes uint8 %v: %v %v", raw, d, err)
	}
}
