package tflite

import (
	"encoding/binary"
	"sort"

	"github.com/mcugen/mcugen/graph"
)

// signalOps maps the custom codes of TFLite Micro's signal library
// (signal/micro/kernels: SignalWindow, SignalRfft, SignalEnergy,
// SignalFilterBank … the audio front end of its micro_speech example) to
// their importers, each given the operator's FlexBuffers options. Each op's
// file registers its own entry in an init function.
var signalOps = map[string]func(c *opctx, opts []byte) error{}

// signalOptions reads the custom options' integer (or bool) entries named
// keys, all required.
func (c *opctx) signalOptions(opts []byte, keys ...string) (map[string]int64, error) {
	m, err := flexMapOf(opts)
	if err != nil {
		return nil, c.errorf("%v", err)
	}
	out := map[string]int64{}
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return nil, c.errorf("option %q is missing", k)
		}
		switch v.typ {
		case flexInt, flexUint, flexBool:
		default:
			return nil, c.errorf("option %q is of FlexBuffers type %d, not an integer", k, v.typ)
		}
		out[k] = v.i
	}
	if err := c.signalCheckPositions(opts, m, keys); err != nil {
		return nil, err
	}
	return out, nil
}

// signalIO imports the operator's inputs and outputs, checking each one's
// file type and rank (rank -1, or no ranks: any); it wants exactly that
// many of each.
func (c *opctx) signalIO(inTypes, outTypes []int8, inRanks, outRanks []int) (ins, outs []*graph.Tensor, err error) {
	if len(c.ins) != len(inTypes) || len(c.outs) != len(outTypes) {
		return nil, nil, c.errorf("%d inputs and %d outputs, want %d and %d", len(c.ins), len(c.outs), len(inTypes), len(outTypes))
	}
	names := map[int8]string{ttUInt32: "uint32", ttUInt64: "uint64", ttInt16: "int16", ttInt32: "int32", ttBool: "bool", ttFloat32: "float32"}
	check := func(what string, i int, idx int32, t *graph.Tensor, want int8, rank int) error {
		if got := c.d.tensors[idx].i8(tensorType, 0); got != want {
			return c.errorf("%s %d (%q) is of TFLite type %d, want %s", what, i, t.Name, got, names[want])
		}
		if rank >= 0 && len(t.Shape) != rank {
			return c.errorf("%s %d (%q) has shape %v, want rank %d", what, i, t.Name, t.Shape, rank)
		}
		return nil
	}
	for i, want := range inTypes {
		t, err := c.in(i)
		if err != nil {
			return nil, nil, err
		}
		if err := check("input", i, c.ins[i], t, want, rankOf(inRanks, i)); err != nil {
			return nil, nil, err
		}
		ins = append(ins, t)
	}
	for i, want := range outTypes {
		t, err := c.out(i)
		if err != nil {
			return nil, nil, err
		}
		if err := check("output", i, c.outs[i], t, want, rankOf(outRanks, i)); err != nil {
			return nil, nil, err
		}
		outs = append(outs, t)
	}
	return ins, outs, nil
}

// rankOf is rank i of ranks, -1 (any) when ranks are not given.
func rankOf(ranks []int, i int) int {
	if ranks == nil {
		return -1
	}
	return ranks[i]
}

// signalPlain refuses quantization parameters on the front ops' tensors:
// the signal library's tensors are plain integers.
func (c *opctx) signalPlain(ins, outs []*graph.Tensor) error {
	for _, io := range []struct {
		what string
		ts   []*graph.Tensor
	}{{"input", ins}, {"output", outs}} {
		for j, t := range io.ts {
			if t.Quant != nil && len(t.Quant.Scale) > 0 {
				return c.errorf("%s %d (%q) is quantized: the signal library's tensors are plain integers", io.what, j, t.Name)
			}
		}
	}
	return nil
}

// signalPositional is what TFLite Micro's FlexbufferWrapper reads as
// option i (ElementAsInt64): the root map's values vector taken as a
// vector, element i's bytes sign-extended from the vector's byte width,
// whatever the value's type (an indirect value gives its offset, a uint
// with its top bit set a negative number). ok is false when the buffer
// has no element i.
func signalPositional(b []byte, i int) (v int64, ok bool) {
	n := len(b)
	if n < 3 {
		return 0, false
	}
	rootW, packed := int(b[n-1]), b[n-2]
	u := func(at, w int) (uint64, bool) {
		if at < 0 || at+w > n {
			return 0, false
		}
		switch w {
		case 1:
			return uint64(b[at]), true
		case 2:
			return uint64(binary.LittleEndian.Uint16(b[at:])), true
		case 4:
			return uint64(binary.LittleEndian.Uint32(b[at:])), true
		case 8:
			return binary.LittleEndian.Uint64(b[at:]), true
		}
		return 0, false
	}
	off, ok := u(n-2-rootW, rootW)
	if !ok || off > uint64(n) {
		return 0, false
	}
	vec := n - 2 - rootW - int(off)
	w := 1 << (packed & 3)
	count, ok := u(vec-w, w)
	if !ok || uint64(i) >= count {
		return 0, false
	}
	raw, ok := u(vec+i*w, w)
	if !ok {
		return 0, false
	}
	shift := 64 - 8*uint(w)
	return int64(raw<<shift) >> shift, true
}

// signalCheckPositions refuses options that TFLite Micro would read
// differently from their map entries: its kernels read option i of their
// alphabetical list by position (keys lists them in that order from
// position 0), so an extra key sorting before them, an indirect value or
// an unsigned one past the signed range of the map's width means other
// values there.
func (c *opctx) signalCheckPositions(opts []byte, m map[string]flexScalar, keys []string) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range keys {
		if i >= len(names) || names[i] != k {
			return c.errorf("option %q is not at position %d of the sorted options %q: TFLite Micro reads its options by position", k, i, names)
		}
		got, ok := signalPositional(opts, i)
		if !ok {
			return c.errorf("option %q: TFLite Micro reads its options by position and finds no element %d", k, i)
		}
		same := got == m[k].i
		if m[k].typ == flexBool {
			same = (got != 0) == (m[k].i != 0)
		}
		if !same {
			return c.errorf("option %q is %d, but TFLite Micro reads the raw bytes at its position as %d (an indirect or unsigned FlexBuffers value)", k, m[k].i, got)
		}
	}
	return nil
}
