package tir

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// RunModule interprets a whole module on Go values: a byte arena of
// m.ArenaBytes, the caller's input and output buffers, and every kernel call
// in order, exactly as the generated entry function does. It is how tests
// check lowering and schedules without a C compiler.
func RunModule(m *Module, inputs map[string]*graph.Data) (map[string]*graph.Data, error) {
	arena := make([]byte, m.ArenaBytes)
	ins := make([][]byte, len(m.Inputs))
	outs := make([][]byte, len(m.Outputs))
	for i, in := range m.Inputs {
		d, ok := inputs[in.Name]
		if !ok {
			return nil, fmt.Errorf("tir: input %q: no value", in.Name)
		}
		b := encode(d)
		if len(b) != in.Bytes {
			return nil, fmt.Errorf("tir: input %q: %d bytes, want %d", in.Name, len(b), in.Bytes)
		}
		if m.IOInArena {
			copy(arena[in.Offset:], b)
		}
		ins[i] = b
	}
	for i, o := range m.Outputs {
		outs[i] = make([]byte, o.Bytes)
	}
	mem := func(w Where, n int) ([]byte, error) {
		switch {
		case w.Arena:
			if w.Offset < 0 || w.Offset+n > len(arena) {
				return nil, fmt.Errorf("arena+%d: %d bytes outside the %d-byte arena", w.Offset, n, len(arena))
			}
			return arena[w.Offset : w.Offset+n], nil
		case w.Output:
			return outs[w.IO], nil
		}
		return ins[w.IO], nil
	}
	for _, c := range m.Calls {
		args := make([]*graph.Data, len(c.Args))
		for i, p := range c.Func.Params {
			b, err := mem(c.Args[i], c.Bytes[i])
			if err != nil {
				return nil, fmt.Errorf("tir: %s: %v", c.Func.Name, err)
			}
			args[i] = decode(p.DType, b)
		}
		if err := Run(c.Func, args); err != nil {
			return nil, err
		}
		for i, p := range c.Func.Params {
			if p.Writes {
				b, _ := mem(c.Args[i], c.Bytes[i])
				copy(b, encode(args[i]))
			}
		}
	}
	res := map[string]*graph.Data{}
	for i, o := range m.Outputs {
		b := outs[i]
		if m.IOInArena {
			b = arena[o.Offset : o.Offset+o.Bytes]
		}
		if o.CopyFrom != nil {
			src, err := mem(*o.CopyFrom, o.Bytes)
			if err != nil {
				return nil, err
			}
			b = src
		}
		d := decode(o.DType, b)
		d.Shape = append([]int{}, o.Shape...)
		res[o.Name] = d
	}
	return res, nil
}

func encode(d *graph.Data) []byte {
	n := d.Len()
	b := make([]byte, n*d.DType.Size())
	for i := 0; i < n; i++ {
		switch d.DType {
		case graph.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(d.F[i]))
		case graph.Int8, graph.UInt8, graph.Bool:
			b[i] = byte(d.I[i])
		case graph.Int16:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(d.I[i]))
		case graph.Int32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(d.I[i]))
		case graph.Int64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(d.I[i]))
		}
	}
	return b
}

func decode(dt DType, b []byte) *graph.Data {
	sz := dt.Size()
	n := len(b) / sz
	d := graph.NewData(dt, []int{n})
	for i := 0; i < n; i++ {
		switch dt {
		case graph.Float32:
			d.F[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case graph.Int8:
			d.I[i] = int64(int8(b[i]))
		case graph.UInt8, graph.Bool:
			d.I[i] = int64(b[i])
		case graph.Int16:
			d.I[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case graph.Int32:
			d.I[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case graph.Int64:
			d.I[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return d
}
