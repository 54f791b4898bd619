package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

func npyBytes(hdr string, data []byte) []byte {
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(b, hdr...), data...)
}

// Quantizer review: a header written with double quotes (a valid Python
// literal, which numpy reads) was "has no descr", and so was a structured
// array's, which is now named as such.
func TestHeaderQuotes49(t *testing.T) {
	data := make([]byte, 8)
	binary.LittleEndian.PutUint32(data, math.Float32bits(1.5))
	binary.LittleEndian.PutUint32(data[4:], math.Float32bits(-2))
	d, err := Read(bytes.NewReader(npyBytes(`{"descr": "<f4", "fortran_order": False, "shape": (2,), }`+"\n", data)))
	if err != nil || len(d.F) != 2 || d.F[0] != 1.5 || d.F[1] != -2 {
		t.Errorf("double-quoted header: %v %v", d, err)
	}
	_, err = Read(bytes.NewReader(npyBytes(`{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }`+"\n", data)))
	if err == nil || !strings.Contains(err.Error(), "structured array") {
		t.Errorf("structured dtype: %v", err)
	}
	_, err = Read(bytes.NewReader(npyBytes(`{'descr': '<f4', "descr": '<f8', 'fortran_order': False, 'shape': (2,), }`+"\n", data)))
	if err == nil || !strings.Contains(err.Error(), "descr twice") {
		t.Errorf("descr in both quotes: %v", err)
	}
}
