package tflitegen

import (
	"encoding/binary"
	"math"
	"sort"
)

// FlexValue is one scalar of a FlexBuffers map: an int, a float or a bool.
type FlexValue struct {
	Kind byte // 'i', 'f' or 'b'
	I    int32
	F    float32
}

// FlexInt, FlexFloat and FlexBool make map values.
func FlexInt(v int32) FlexValue     { return FlexValue{Kind: 'i', I: v} }
func FlexFloat(v float32) FlexValue { return FlexValue{Kind: 'f', F: v} }
func FlexBool(v bool) FlexValue {
	if v {
		return FlexValue{Kind: 'b', I: 1}
	}
	return FlexValue{Kind: 'b'}
}

// FlexMap serializes a FlexBuffers map of scalars with every element four
// bytes wide, laid out as the FlexBuffers builder lays it out: the keys,
// the key vector, the map (key vector offset, key width, length, values,
// a type byte per value) and the root (offset, packed type, width).
func FlexMap(m map[string]FlexValue) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	align := func() {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	at := make([]int, len(keys))
	for i, k := range keys {
		at[i] = len(b)
		b = append(append(b, k...), 0)
	}
	align()
	u32(uint32(len(keys)))
	kv := len(b)
	for i := range keys {
		u32(uint32(len(b) - at[i]))
	}
	align()
	u32(uint32(len(b) - kv))
	u32(4)
	u32(uint32(len(keys)))
	mp := len(b)
	types := make([]byte, len(keys))
	for i, k := range keys {
		v := m[k]
		switch v.Kind {
		case 'i':
			u32(uint32(v.I))
			types[i] = 1<<2 | 2
		case 'f':
			u32(math.Float32bits(v.F))
			types[i] = 3<<2 | 2
		case 'b':
			u32(uint32(v.I))
			types[i] = 26<<2 | 2
		}
	}
	b = append(b, types...)
	align()
	u32(uint32(len(b) - mp))
	return append(b, 9<<2|2, 4)
}
