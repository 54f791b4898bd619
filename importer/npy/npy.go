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
	"slices"
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
	// The data ends the file: bytes after it are a header length or a
	// shape that does not match the file (review finding: a header
	// length short of the real header read its last bytes as data,
	// every value shifted, and the rest went unread).
	if extra, _ := io.Copy(io.Discard, r); extra > 0 {
		unit := "bytes"
		if extra == 1 {
			unit = "byte"
		}
		return nil, fmt.Errorf(".npy file has %d %s after its data (shape %v needs %d): the header's length or shape is wrong", extra, unit, shape, n*size)
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
	// numpy ends the header with a newline (after its padding): a header
	// length that ends elsewhere lands inside the header or the data.
	if hlen == 0 || hdr[hlen-1] != '\n' {
		return "", false, nil, fmt.Errorf(".npy header of %d bytes does not end in a newline, as numpy's does: the header length is wrong", hlen)
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
		case kind == 'b':
			// numpy reads any nonzero byte as True (review finding: 2
			// stayed 2, and logical ops on it went wrong).
			if p[0] != 0 {
				d.I[i] = 1
			}
		case kind == 'u' && size == 1:
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

// headerKeys are the keys of a .npy header dict: numpy refuses a header
// with another key, or without one of them.
var headerKeys = []string{"descr", "fortran_order", "shape"}

// parseHeader reads the Python dict literal of a .npy header.
func parseHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, fmt.Errorf(".npy header is not a dict: %.40q", h)
	}
	// Keys and strings in either Python quote (numpy writes '; a header
	// written with " was "has no descr": quantizer review).
	vals, bad, err := headerDict(h)
	if err != nil {
		return "", false, nil, err
	}
	d, ok := vals["descr"]
	if ok && strings.HasPrefix(d, "[") {
		return "", false, nil, fmt.Errorf(".npy holds a structured array (named fields); only plain numeric arrays are read")
	}
	if !ok || len(d) < 2 || (d[0] != '\'' && d[0] != '"') {
		return "", false, nil, fmt.Errorf(".npy header has no descr")
	}
	if bad == "descr" || d[len(d)-1] != d[0] {
		return "", false, nil, fmt.Errorf(".npy header has a bad descr")
	}
	descr = d[1 : len(d)-1]
	// fortran_order is True or False, as numpy requires: another value
	// (1, 'True') was read as C order, a Fortran array's values then in
	// the wrong places (adversarial journey).
	switch f, ok := vals["fortran_order"]; {
	case !ok:
		return "", false, nil, fmt.Errorf(".npy header has no fortran_order")
	case f == "True":
		fortran = true
	case f == "False":
	default:
		return "", false, nil, fmt.Errorf(".npy header's fortran_order is not True or False: %.20q", f)
	}
	s, ok := vals["shape"]
	if !ok {
		return "", false, nil, fmt.Errorf(".npy header has no shape")
	}
	if bad == "shape" || !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false, nil, fmt.Errorf(".npy header has a bad shape")
	}
	// Keys numpy does not write: numpy refuses the file (review finding).
	for k := range vals {
		if !slices.Contains(headerKeys, k) {
			return "", false, nil, fmt.Errorf(".npy header has the key %q, which numpy does not write (it writes descr, fortran_order and shape)", k)
		}
	}
	// A Python tuple: (), (3,), (1, 64) or (1, 64,). "(1,,64)" was read
	// as [1 64] and "(3)", the number 3, as [3]; numpy refuses both.
	shape = []int{}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return descr, fortran, shape, nil
	}
	parts := strings.Split(inner, ",")
	if len(parts) == 1 {
		return "", false, nil, fmt.Errorf(".npy header has a bad shape %s: not a tuple (numpy writes (%s,))", s, inner)
	}
	if strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1]
	}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return "", false, nil, fmt.Errorf(".npy header has a bad shape %s: a dimension is empty", s)
		}
		v, err := strconv.Atoi(strings.TrimSuffix(part, "L"))
		if err != nil || v < 0 {
			return "", false, nil, fmt.Errorf(".npy header has a bad dimension %q", part)
		}
		shape = append(shape, v)
	}
	return descr, fortran, shape, nil
}

// headerDict splits the dict literal h ("{...}") into its keys and the
// text of their values (a string with its quotes, a tuple or list with
// its brackets, or a name or number). A value that does not end (an
// unclosed quote or bracket) is named by its key in bad, with the values
// read up to it.
func headerDict(h string) (vals map[string]string, bad string, err error) {
	vals = map[string]string{}
	i := 1
	ws := func() {
		for i < len(h) && strings.IndexByte(" \t\r\n", h[i]) >= 0 {
			i++
		}
	}
	for {
		ws()
		if i == len(h)-1 && h[i] == '}' {
			return vals, "", nil
		}
		if i >= len(h) || h[i] != '\'' && h[i] != '"' {
			return nil, "", fmt.Errorf(".npy header is not a dict of quoted keys: %.40q", h[min(i, len(h)):])
		}
		end := quoted(h, i)
		if end < 0 {
			return nil, "", fmt.Errorf(".npy header is not a dict of quoted keys: %.40q", h[i:])
		}
		key := h[i+1 : end-1]
		i = end
		ws()
		if i >= len(h) || h[i] != ':' {
			return nil, "", fmt.Errorf(".npy header has no value for %q", key)
		}
		i++
		ws()
		start := i
		switch {
		case i < len(h) && (h[i] == '\'' || h[i] == '"'):
			i = quoted(h, i)
		case i < len(h) && (h[i] == '(' || h[i] == '['):
			i = bracketed(h, i)
		default:
			for i < len(h) && h[i] != ',' && h[i] != '}' {
				i++
			}
		}
		if _, dup := vals[key]; dup {
			// numpy's dict takes the last; a file that says two
			// things is refused (adversarial journey).
			return nil, "", fmt.Errorf(".npy header gives %s twice", key)
		}
		if i < 0 {
			vals[key] = h[start:]
			return vals, key, nil
		}
		vals[key] = strings.TrimSpace(h[start:i])
		ws()
		switch {
		case i < len(h)-1 && h[i] == ',':
			i++
		case i == len(h)-1:
			// The closing brace.
		default:
			return nil, "", fmt.Errorf(".npy header has %.20q after the value of %q: the dict does not close there", h[i:], key)
		}
	}
}

// quoted returns the index after the Python string that starts at h[i],
// or -1 when it does not end.
func quoted(h string, i int) int {
	q := h[i]
	for j := i + 1; j < len(h); j++ {
		switch h[j] {
		case '\\':
			j++
		case q:
			return j + 1
		}
	}
	return -1
}

// bracketed returns the index after the tuple or list that starts at h[i]
// (nested brackets and strings included), or -1 when it does not close.
func bracketed(h string, i int) int {
	depth := 0
	for j := i; j < len(h); j++ {
		switch h[j] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '\'', '"':
			if j = quoted(h, j); j < 0 {
				return -1
			}
			j--
		}
	}
	return -1
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
