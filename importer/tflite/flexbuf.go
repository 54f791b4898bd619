package tflite

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A minimal FlexBuffers reader: a custom operator's options are a
// FlexBuffers map of scalars (TFLite_Detection_PostProcess's are). Every
// offset and width is checked against the buffer; a bad one is an error.

// FlexBuffers value types (the ones read here).
const (
	flexNull  = 0
	flexInt   = 1
	flexUint  = 2
	flexFloat = 3
	flexKey   = 4
	flexIInt  = 6
	flexIUint = 7
	flexIFlt  = 8
	flexMap   = 9
	flexBool  = 26
)

// flexScalar is one map value: its type and, for numbers, its value.
type flexScalar struct {
	typ int
	i   int64
	f   float64
}

// flexMapOf reads the root of b, which must be a map, into its keys'
// scalar values (values of other types are kept with their type only).
func flexMapOf(b []byte) (map[string]flexScalar, error) {
	n := len(b)
	if n < 3 {
		return nil, fmt.Errorf("custom options: %d bytes, too short for FlexBuffers", n)
	}
	rootW := int(b[n-1])
	packed := b[n-2]
	if rootW != 1 && rootW != 2 && rootW != 4 && rootW != 8 || n-2-rootW < 0 {
		return nil, fmt.Errorf("custom options: root width %d is not valid FlexBuffers", rootW)
	}
	if int(packed>>2) != flexMap {
		return nil, fmt.Errorf("custom options: the root is of FlexBuffers type %d, not a map", packed>>2)
	}
	at := n - 2 - rootW
	mapAt, err := flexIndirect(b, at, rootW)
	if err != nil {
		return nil, err
	}
	w := 1 << (packed & 3)
	// The map: [keys offset][keys width][length] before it, values, then a
	// type byte per value.
	if mapAt-3*w < 0 {
		return nil, fmt.Errorf("custom options: map header out of range")
	}
	keysAt, err := flexIndirect(b, mapAt-3*w, w)
	if err != nil {
		return nil, err
	}
	keysW, err := flexUintAt(b, mapAt-2*w, w)
	if err != nil {
		return nil, err
	}
	count, err := flexUintAt(b, mapAt-w, w)
	if err != nil {
		return nil, err
	}
	if keysW != 1 && keysW != 2 && keysW != 4 && keysW != 8 {
		return nil, fmt.Errorf("custom options: key width %d is not valid FlexBuffers", keysW)
	}
	if count > uint64(n) || mapAt+int(count)*w+int(count) > n {
		return nil, fmt.Errorf("custom options: a map of %d values does not fit %d bytes", count, n)
	}
	if keysAt-int(keysW) < 0 {
		return nil, fmt.Errorf("custom options: key vector out of range")
	}
	if nk, err := flexUintAt(b, keysAt-int(keysW), int(keysW)); err != nil || nk != count {
		return nil, fmt.Errorf("custom options: %d keys for %d values", nk, count)
	}
	out := map[string]flexScalar{}
	for i := 0; i < int(count); i++ {
		kAt, err := flexIndirect(b, keysAt+i*int(keysW), int(keysW))
		if err != nil {
			return nil, err
		}
		end := kAt
		for end < n && b[end] != 0 {
			end++
		}
		if end >= n {
			return nil, fmt.Errorf("custom options: key %d runs past the buffer", i)
		}
		key := string(b[kAt:end])
		vAt := mapAt + i*w
		vp := b[mapAt+int(count)*w+i]
		v := flexScalar{typ: int(vp >> 2)}
		switch v.typ {
		case flexInt, flexUint, flexBool, flexFloat:
			v, err = flexRead(b, vAt, w, v.typ)
		case flexIInt, flexIUint, flexIFlt:
			var to int
			if to, err = flexIndirect(b, vAt, w); err == nil {
				v, err = flexRead(b, to, 1<<(vp&3), v.typ-flexIInt+flexInt)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("custom options: %q: %w", key, err)
		}
		out[key] = v
	}
	return out, nil
}

// flexRead reads a scalar of type typ (int, uint, bool or float) and width w at at.
func flexRead(b []byte, at, w, typ int) (flexScalar, error) {
	v := flexScalar{typ: typ}
	u, err := flexUintAt(b, at, w)
	if err != nil {
		return v, err
	}
	switch typ {
	case flexInt:
		shift := 64 - 8*uint(w)
		v.i = int64(u<<shift) >> shift
		v.f = float64(v.i)
	case flexUint, flexBool:
		if u > math.MaxInt64 {
			return v, fmt.Errorf("value %d out of range", u)
		}
		v.i, v.f = int64(u), float64(u)
	case flexFloat:
		switch w {
		case 4:
			v.f = float64(math.Float32frombits(uint32(u)))
		case 8:
			v.f = math.Float64frombits(u)
		default:
			return v, fmt.Errorf("a float of %d bytes", w)
		}
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return v, fmt.Errorf("%v is not a finite number", v.f)
		}
		if math.Abs(v.f) < 1<<62 {
			v.i = int64(v.f)
		}
	}
	return v, nil
}

// flexUintAt reads a little-endian unsigned of width w at at.
func flexUintAt(b []byte, at, w int) (uint64, error) {
	if at < 0 || at+w > len(b) {
		return 0, fmt.Errorf("custom options: offset %d out of range", at)
	}
	switch w {
	case 1:
		return uint64(b[at]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[at:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[at:])), nil
	case 8:
		return binary.LittleEndian.Uint64(b[at:]), nil
	}
	return 0, fmt.Errorf("custom options: width %d is not valid FlexBuffers", w)
}

// flexIndirect follows the offset of width w stored at at (it points back).
func flexIndirect(b []byte, at, w int) (int, error) {
	off, err := flexUintAt(b, at, w)
	if err != nil {
		return 0, err
	}
	if off > uint64(at) {
		return 0, fmt.Errorf("custom options: offset %d at %d points before the buffer", off, at)
	}
	return at - int(off), nil
}
