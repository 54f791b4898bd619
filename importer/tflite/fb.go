package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// A bounds-checked view of a flatbuffer. The flatbuffers Go runtime reads
// without checks (and panics on a bad offset), so every access here checks the
// offsets first and records the first problem in errp; accessors then return
// zero values and the decoder reports that one error.

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("malformed flatbuffer (corrupt or truncated file): "+format, a...)
	}
}

// in reports whether [off, off+n) lies inside the buffer.
func (r *reader) in(off, n uint64) bool {
	return off <= uint64(len(r.b)) && n <= uint64(len(r.b))-off
}

func (r *reader) u32(off uint64, what string) uint32 {
	if !r.in(off, 4) {
		r.fail("%s: offset %d outside the %d-byte file", what, off, len(r.b))
		return 0
	}
	return flatbuffers.GetUint32(r.b[off:])
}

// table is a flatbuffer table at pos (0 = absent).
type table struct {
	r    *reader
	pos  uint64
	what string
}

func (r *reader) root() table {
	if len(r.b) < 8 {
		r.fail("file of %d byte(s) is too short", len(r.b))
		return table{r: r}
	}
	return r.tableAt(uint64(r.u32(0, "root")), "model")
}

func (r *reader) tableAt(pos uint64, what string) table {
	t := table{r: r, pos: pos, what: what}
	if !r.in(pos, 4) {
		r.fail("%s: table offset %d outside the %d-byte file", what, pos, len(r.b))
		t.pos = 0
	}
	return t
}

func (t table) ok() bool { return t.pos != 0 && t.r.err == nil }

// field returns the absolute position of field id, or 0 when absent.
func (t table) field(id int, size uint64) uint64 {
	if !t.ok() {
		return 0
	}
	r := t.r
	soff := int32(r.u32(t.pos, t.what))
	vt := int64(t.pos) - int64(soff)
	if vt < 0 || !r.in(uint64(vt), 4) {
		r.fail("%s: vtable offset %d outside the file", t.what, vt)
		return 0
	}
	vtLen := uint64(flatbuffers.GetUint16(r.b[vt:]))
	objLen := uint64(flatbuffers.GetUint16(r.b[vt+2:]))
	if vtLen < 4 || !r.in(uint64(vt), vtLen) || !r.in(t.pos, objLen) {
		r.fail("%s: malformed vtable", t.what)
		return 0
	}
	vo := uint64(4 + 2*id)
	if vo+2 > vtLen {
		return 0
	}
	fo := uint64(flatbuffers.GetUint16(r.b[uint64(vt)+vo:]))
	if fo == 0 {
		return 0
	}
	if fo+size > objLen || !r.in(t.pos+fo, size) {
		r.fail("%s: field %d outside its table", t.what, id)
		return 0
	}
	return t.pos + fo
}

func (t table) i8(id int, def int8) int8 {
	if p := t.field(id, 1); p != 0 {
		return int8(t.r.b[p])
	}
	return def
}

func (t table) u8(id int, def uint8) uint8 {
	if p := t.field(id, 1); p != 0 {
		return t.r.b[p]
	}
	return def
}

func (t table) boolean(id int) bool { return t.u8(id, 0) != 0 }

func (t table) i32(id int, def int32) int32 {
	if p := t.field(id, 4); p != 0 {
		return flatbuffers.GetInt32(t.r.b[p:])
	}
	return def
}

func (t table) u32(id int, def uint32) uint32 {
	if p := t.field(id, 4); p != 0 {
		return flatbuffers.GetUint32(t.r.b[p:])
	}
	return def
}

func (t table) u64(id int, def uint64) uint64 {
	if p := t.field(id, 8); p != 0 {
		return flatbuffers.GetUint64(t.r.b[p:])
	}
	return def
}

func (t table) f32(id int, def float32) float32 {
	if p := t.field(id, 4); p != 0 {
		return flatbuffers.GetFloat32(t.r.b[p:])
	}
	return def
}

// indirect follows the uoffset stored at p.
func (t table) indirect(p uint64) uint64 {
	if p == 0 {
		return 0
	}
	target := p + uint64(t.r.u32(p, t.what))
	if !t.r.in(target, 4) {
		t.r.fail("%s: offset %d outside the %d-byte file", t.what, target, len(t.r.b))
		return 0
	}
	return target
}

// sub returns the table in field id (pos 0 when absent).
func (t table) sub(id int, what string) table {
	p := t.indirect(t.field(id, 4))
	if p == 0 {
		return table{r: t.r, what: what}
	}
	return t.r.tableAt(p, what)
}

// vector returns the start of the elements and their count for a vector
// field with elements of elemSize bytes (count 0 when absent).
func (t table) vector(id int, elemSize uint64) (start uint64, n int) {
	p := t.indirect(t.field(id, 4))
	if p == 0 {
		return 0, 0
	}
	cnt := uint64(t.r.u32(p, t.what))
	if cnt > uint64(len(t.r.b)) || !t.r.in(p+4, cnt*elemSize) {
		t.r.fail("%s: vector of %d elements runs past the end of the file", t.what, cnt)
		return 0, 0
	}
	return p + 4, int(cnt)
}

func (t table) bytes(id int) []byte {
	s, n := t.vector(id, 1)
	if n == 0 {
		return nil
	}
	return t.r.b[s : s+uint64(n)]
}

func (t table) str(id int) string { return string(t.bytes(id)) }

func (t table) ints(id int) []int32 {
	s, n := t.vector(id, 4)
	out := make([]int32, n)
	for i := range out {
		out[i] = flatbuffers.GetInt32(t.r.b[s+4*uint64(i):])
	}
	return out
}

func (t table) int64s(id int) []int64 {
	s, n := t.vector(id, 8)
	out := make([]int64, n)
	for i := range out {
		out[i] = flatbuffers.GetInt64(t.r.b[s+8*uint64(i):])
	}
	return out
}

func (t table) floats(id int) []float32 {
	s, n := t.vector(id, 4)
	out := make([]float32, n)
	for i := range out {
		out[i] = flatbuffers.GetFloat32(t.r.b[s+4*uint64(i):])
	}
	return out
}

// tables returns the tables of a vector-of-tables field.
func (t table) tables(id int, what string) []table {
	s, n := t.vector(id, 4)
	out := make([]table, 0, n)
	for i := 0; i < n; i++ {
		p := t.indirect(s + 4*uint64(i))
		if p == 0 {
			return out
		}
		out = append(out, t.r.tableAt(p, fmt.Sprintf("%s %d", what, i)))
	}
	return out
}
