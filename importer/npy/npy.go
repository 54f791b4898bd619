// Package npy reads and writes numpy's .npy tensor files (format versions 1,
// 2 and 3) as graph.Data values: int8, uint8, int16, int32, int64, bool,
// float32 (and float64, read as float32).
package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
)

const magic = "\x93NUMPY"

// maxHeader bounds the header length we accept.
const maxHeader = 1 << 16

// Read decodes one .npy file.
func Read(r io.Reader) (*graph.Data, error) {
	descr, fortran, shape, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	if fortran {
		return nil, fmt.Errorf(".npy in Fortran order is not supported")
	}
	dt, size, order, err := parseDescr(descr)
	if err != nil {
		return nil, err
	}
	if err := graph.CheckShape(shape); err != nil && len(shape) > 0 {
		return nil, fmt.Errorf(".npy %v", err)
	}
	n := graph.NumElements(shape)
	raw := make([]byte, 0, min(n*size, 1<<20))
	buf := bytes.NewBuffer(raw)
	if got, err := io.CopyN(buf, r, int64(n*size)); err != nil {
		return nil, fmt.Errorf(".npy data truncated: shape %v needs %d bytes, file has %d", shape, n*size, got)
	}
	return decode(buf.Bytes(), dt, descr, size, order, shape), nil
}

// readHeader reads the magic, the version and the header dict of a .npy file.
func readHeader(r io.Reader) (descr string, fortran bool, shape []int, err error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return "", false, nil, fmt.Errorf("not a .npy file: too short")
	}
	if string(pre[:6]) != magic {
		return "", false, nil, fmt.Errorf("not a .npy file: bad magic")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", false, nil, fmt.Errorf("truncated .npy header")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", false, nil, fmt.Errorf("truncated .npy header")
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return "", false, nil, fmt.Errorf(".npy format version %d.%d not supported", pre[6], pre[7])
	}
	if hlen > maxHeader {
		return "", false, nil, fmt.Errorf(".npy header of %d bytes is too long", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return "", false, nil, fmt.Errorf("truncated .npy header")
	}
	return parseHeader(string(hdr))
}

// Header is what a .npy file declares about its array.
type Header struct {
	// DType is the file's element type as numpy names it ("int8",
	// "float64", ...; the raw descr, such as "<c8", for types numpy has no
	// plainer name for here). Read may convert it: float64 is read as float32.
	DType string
	Shape []int
}

// numpyNames are the numpy names of the descr types (without byte order).
var numpyNames = map[string]string{"i1": "int8", "u1": "uint8", "b1": "bool", "i2": "int16", "u2": "uint16",
	"i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64"}

// ReadHeader reads only the header of a .npy file: the element type as the
// file stores it, before any conversion Read makes, and the shape.
func ReadHeader(r io.Reader) (Header, error) {
	descr, _, shape, err := readHeader(r)
	if err != nil {
		return Header{}, err
	}
	h := Header{DType: descr, Shape: shape}
	if len(descr) >= 3 {
		if n, ok := numpyNames[descr[1:]]; ok {
			h.DType = n
		}
	}
	return h, nil
}

func decode(b []byte, dt graph.DType, descr string, size int, order binary.ByteOrder, shape []int) *graph.Data {
	d := graph.NewData(dt, shape)
	kind := descr[1]
	for i := 0; i < len(b)/size; i++ {
		p := b[i*size : (i+1)*size]
		switch {
		case kind == 'f' && size == 4:
			d.F[i] = math.Float32frombits(order.Uint32(p))
		case kind == 'f' && size == 8:
			d.F[i] = float32(math.Float64frombits(order.Uint64(p)))
		case kind == 'b' || kind == 'u' && size == 1:
			d.I[i] = int64(p[0])
		case kind == 'i' && size == 1:
			d.I[i] = int64(int8(p[0]))
		case kind == 'i' && size == 2:
			d.I[i] = int64(int16(order.Uint16(p)))
		case kind == 'i' && size == 4:
			d.I[i] = int64(int32(order.Uint32(p)))
		case kind == 'i' && size == 8:
			d.I[i] = int64(order.Uint64(p))
		}
	}
	return d
}

func parseDescr(s string) (graph.DType, int, binary.ByteOrder, error) {
	if len(s) < 3 {
		return 0, 0, nil, fmt.Errorf(".npy dtype %q not supported", s)
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch s[0] {
	case '<', '|', '=':
	case '>':
		order = binary.BigEndian
	default:
		return 0, 0, nil, fmt.Errorf(".npy dtype %q not supported", s)
	}
	switch s[1:] {
	case "i1":
		return graph.Int8, 1, order, nil
	case "u1":
		return graph.UInt8, 1, order, nil
	case "b1":
		return graph.Bool, 1, order, nil
	case "i2":
		return graph.Int16, 2, order, nil
	case "i4":
		return graph.Int32, 4, order, nil
	case "i8":
		return graph.Int64, 8, order, nil
	case "f4", "f8":
		return graph.Float32, int(s[2] - '0'), order, nil
	}
	return 0, 0, nil, fmt.Errorf(".npy dtype %q not supported (want int8, uint8, int16, int32, int64, bool, float32, or float64, read as float32)", s)
}

// parseHeader reads the Python dict literal of a .npy header.
func parseHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, fmt.Errorf(".npy header is not a dict: %.40q", h)
	}
	body := h[1 : len(h)-1]
	// Keys and strings in either Python quote (numpy writes '; a header
	// written with " was "has no descr": quantizer review).
	get := func(key string) (string, bool) {
		sq, dq := "'"+key+"'", "\""+key+"\""
		if strings.Count(body, sq)+strings.Count(body, dq) > 1 {
			// numpy's dict takes the last; a file that says two
			// things is refused (adversarial journey).
			return "\x00dup", true
		}
		i := strings.Index(body, sq)
		if i < 0 {
			i = strings.Index(body, dq)
		}
		if i < 0 {
			return "", false
		}
		rest := strings.TrimSpace(body[i+len(key)+2:])
		if !strings.HasPrefix(rest, ":") {
			return "", false
		}
		return strings.TrimSpace(rest[1:]), true
	}
	d, ok := get("descr")
	if d == "\x00dup" {
		return "", false, nil, fmt.Errorf(".npy header gives descr twice")
	}
	if ok && strings.HasPrefix(d, "[") {
		return "", false, nil, fmt.Errorf(".npy holds a structured array (named fields); only plain numeric arrays are read")
	}
	if !ok || len(d) < 2 || (d[0] != '\'' && d[0] != '"') {
		return "", false, nil, fmt.Errorf(".npy header has no descr")
	}
	end := strings.IndexByte(d[1:], d[0])
	if end < 0 {
		return "", false, nil, fmt.Errorf(".npy header has a bad descr")
	}
	descr = d[1 : 1+end]
	// fortran_order is True or False, as numpy requires: another value
	// (1, 'True') was read as C order, a Fortran array's values then in
	// the wrong places (adversarial journey).
	switch f, ok := get("fortran_order"); {
	case !ok:
		return "", false, nil, fmt.Errorf(".npy header has no fortran_order")
	case f == "\x00dup":
		return "", false, nil, fmt.Errorf(".npy header gives fortran_order twice")
	case strings.HasPrefix(f, "True") && !isIdentChar(f, 4):
		fortran = true
	case strings.HasPrefix(f, "False") && !isIdentChar(f, 5):
	default:
		return "", false, nil, fmt.Errorf(".npy header's fortran_order is not True or False: %.20q", f)
	}
	s, ok := get("shape")
	if s == "\x00dup" {
		return "", false, nil, fmt.Errorf(".npy header gives shape twice")
	}
	if !ok || !strings.HasPrefix(s, "(") {
		return "", false, nil, fmt.Errorf(".npy header has no shape")
	}
	close := strings.IndexByte(s, ')')
	if close < 0 {
		return "", false, nil, fmt.Errorf(".npy header has a bad shape")
	}
	shape = []int{}
	for _, part := range strings.Split(s[1:close], ",") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "L"))
		if part == "" {
			continue
		}
		v, err := strconv.Atoi(part)
		if err != nil || v < 0 {
			return "", false, nil, fmt.Errorf(".npy header has a bad dimension %q", part)
		}
		shape = append(shape, v)
	}
	return descr, fortran, shape, nil
}

// Write encodes d as a version 1.0 .npy file.
func Write(w io.Writer, d *graph.Data) error {
	descr := ""
	switch d.DType {
	case graph.Float32:
		descr = "<f4"
	case graph.Int8:
		descr = "|i1"
	case graph.UInt8:
		descr = "|u1"
	case graph.Bool:
		descr = "|b1"
	case graph.Int16:
		descr = "<i2"
	case graph.Int32:
		descr = "<i4"
	case graph.Int64:
		descr = "<i8"
	default:
		return fmt.Errorf("cannot write %s as .npy", d.DType)
	}
	dims := make([]string, len(d.Shape))
	for i, v := range d.Shape {
		dims[i] = strconv.Itoa(v)
	}
	shape := strings.Join(dims, ", ")
	if len(d.Shape) == 1 {
		shape += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	// Pad so that magic+version+len+header+newline is a multiple of 64.
	total := 10 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(Bytes(d))
	_, err := w.Write(b.Bytes())
	return err
}

// Bytes returns the little-endian storage of d in its own dtype.
func Bytes(d *graph.Data) []byte {
	size := d.DType.Size()
	out := make([]byte, d.Len()*size)
	for i := 0; i < d.Len(); i++ {
		p := out[i*size : (i+1)*size]
		switch d.DType {
		case graph.Float32:
			binary.LittleEndian.PutUint32(p, math.Float32bits(d.F[i]))
		case graph.Int8, graph.UInt8, graph.Bool:
			p[0] = byte(d.I[i])
		case graph.Int16:
			binary.LittleEndian.PutUint16(p, uint16(d.I[i]))
		case graph.Int32:
			binary.LittleEndian.PutUint32(p, uint32(d.I[i]))
		case graph.Int64:
			binary.LittleEndian.PutUint64(p, uint64(d.I[i]))
		}
	}
	return out
}

// FromBytes decodes little-endian storage of dtype dt into a value of shape.
func FromBytes(b []byte, dt graph.DType, shape []int) (*graph.Data, error) {
	n := graph.NumElements(shape)
	if dt.Size() == 0 || len(b) != n*dt.Size() {
		return nil, fmt.Errorf("%d bytes do not hold %s%v (%d bytes)", len(b), dt, shape, n*dt.Size())
	}
	descr := map[graph.DType]string{graph.Float32: "<f4", graph.Int8: "|i1", graph.UInt8: "|u1", graph.Bool: "|b1", graph.Int16: "<i2", graph.Int32: "<i4", graph.Int64: "<i8"}[dt]
	return decode(b, dt, descr, dt.Size(), binary.LittleEndian, shape), nil
}

// isIdentChar reports whether s[i] continues a Python name (so that
// "Truex" is not True).
func isIdentChar(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
