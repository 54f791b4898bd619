package onnx

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Marshal encodes m as a ModelProto.
func (m *Model) Marshal() []byte {
	var b []byte
	b = appendInt(b, 1, m.IRVersion)
	b = appendStr(b, 2, m.ProducerName)
	b = appendStr(b, 3, m.ProducerVersion)
	b = appendStr(b, 4, m.Domain)
	b = appendInt(b, 5, m.ModelVersion)
	b = appendStr(b, 6, m.DocString)
	if m.Graph != nil {
		b = appendMsg(b, 7, m.Graph.marshal())
	}
	for _, o := range m.OpsetImport {
		var ob []byte
		ob = appendStr(ob, 1, o.Domain)
		ob = protowire.AppendTag(ob, 2, protowire.VarintType)
		ob = protowire.AppendVarint(ob, uint64(o.Version))
		b = appendMsg(b, 8, ob)
	}
	return b
}

func (g *Graph) marshal() []byte {
	var b []byte
	for _, n := range g.Nodes {
		b = appendMsg(b, 1, n.marshal())
	}
	b = appendStr(b, 2, g.Name)
	for _, t := range g.Initializer {
		b = appendMsg(b, 5, t.Marshal())
	}
	b = appendStr(b, 10, g.DocString)
	for _, v := range g.Input {
		b = appendMsg(b, 11, v.marshal())
	}
	for _, v := range g.Output {
		b = appendMsg(b, 12, v.marshal())
	}
	for _, v := range g.ValueInfo {
		b = appendMsg(b, 13, v.marshal())
	}
	return b
}

func (n *Node) marshal() []byte {
	var b []byte
	for _, s := range n.Input {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	for _, s := range n.Output {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	b = appendStr(b, 3, n.Name)
	b = appendStr(b, 4, n.OpType)
	for _, a := range n.Attribute {
		b = appendMsg(b, 5, a.marshal())
	}
	b = appendStr(b, 6, n.DocString)
	b = appendStr(b, 7, n.Domain)
	return b
}

func (a *Attribute) marshal() []byte {
	var b []byte
	b = appendStr(b, 1, a.Name)
	switch a.Type {
	case AttrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	case AttrInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.I))
	case AttrString:
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, a.S)
	case AttrTensor:
		if a.T != nil {
			b = appendMsg(b, 5, a.T.Marshal())
		}
	case AttrGraph:
		if a.G != nil {
			b = appendMsg(b, 6, a.G.marshal())
		}
	case AttrFloats:
		var p []byte
		for _, f := range a.Floats {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = appendMsg(b, 7, p)
	case AttrInts:
		var p []byte
		for _, v := range a.Ints {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMsg(b, 8, p)
	case AttrStrings:
		for _, s := range a.Strings {
			b = protowire.AppendTag(b, 9, protowire.BytesType)
			b = protowire.AppendBytes(b, s)
		}
	case AttrTensors:
		for _, t := range a.Tensors {
			b = appendMsg(b, 10, t.Marshal())
		}
	case AttrGraphs:
		for _, g := range a.Graphs {
			b = appendMsg(b, 11, g.marshal())
		}
	}
	b = appendStr(b, 13, a.DocString)
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(a.Type))
	b = appendStr(b, 21, a.RefAttrName)
	return b
}

// Marshal encodes t as a TensorProto (the format of ONNX's .pb tensor files).
func (t *Tensor) Marshal() []byte {
	var b []byte
	if len(t.Dims) > 0 {
		var p []byte
		for _, d := range t.Dims {
			p = protowire.AppendVarint(p, uint64(d))
		}
		b = appendMsg(b, 1, p)
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.DataType))
	if len(t.FloatData) > 0 {
		var p []byte
		for _, f := range t.FloatData {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = appendMsg(b, 4, p)
	}
	if len(t.Int32Data) > 0 {
		var p []byte
		for _, v := range t.Int32Data {
			p = protowire.AppendVarint(p, uint64(int64(v)))
		}
		b = appendMsg(b, 5, p)
	}
	for _, s := range t.StringData {
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	if len(t.Int64Data) > 0 {
		var p []byte
		for _, v := range t.Int64Data {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMsg(b, 7, p)
	}
	b = appendStr(b, 8, t.Name)
	if t.RawData != nil {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, t.RawData)
	}
	if len(t.DoubleData) > 0 {
		var p []byte
		for _, f := range t.DoubleData {
			p = protowire.AppendFixed64(p, math.Float64bits(f))
		}
		b = appendMsg(b, 10, p)
	}
	if len(t.Uint64Data) > 0 {
		var p []byte
		for _, v := range t.Uint64Data {
			p = protowire.AppendVarint(p, v)
		}
		b = appendMsg(b, 11, p)
	}
	b = appendStr(b, 12, t.DocString)
	for _, kv := range t.ExternalData {
		var p []byte
		p = appendStr(p, 1, kv.Key)
		p = appendStr(p, 2, kv.Value)
		b = appendMsg(b, 13, p)
	}
	if t.DataLocation != 0 {
		b = protowire.AppendTag(b, 14, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(t.DataLocation))
	}
	return b
}

func (v *ValueInfo) marshal() []byte {
	var b []byte
	b = appendStr(b, 1, v.Name)
	if v.Type != nil {
		var tt []byte
		tt = protowire.AppendTag(tt, 1, protowire.VarintType)
		tt = protowire.AppendVarint(tt, uint64(v.Type.ElemType))
		if v.Type.HasShape || v.Type.Shape != nil {
			var sh []byte
			for _, d := range v.Type.Shape {
				var db []byte
				if d.HasValue {
					db = protowire.AppendTag(db, 1, protowire.VarintType)
					db = protowire.AppendVarint(db, uint64(d.Value))
				}
				db = appendStr(db, 2, d.Param)
				sh = appendMsg(sh, 1, db)
			}
			tt = appendMsg(tt, 2, sh)
		}
		var tp []byte
		tp = appendMsg(tp, 1, tt)
		b = appendMsg(b, 2, tp)
	}
	b = appendStr(b, 3, v.DocString)
	return b
}

func appendStr(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendInt(b []byte, num protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendMsg(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}
