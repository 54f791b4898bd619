package tflite_test

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/tflite"
	tg "github.com/mcugen/mcugen/testdata/tflitegen"
)

// TFLM_DECODE is TFLite Micro's model compression operator
// (tensorflow/lite/micro/compression): an encoded constant and its
// ancillary constant (a 16-byte header, then the encoding's tables) per
// decoded output. mcugen refused it ("custom operator ... not supported");
// it now decodes the constants at import time (ops_decode.go). The
// expected values here are TFLite Micro's own test vectors
// (kernels/decode_state_{lut,prune,huffman}_test.cc), ported below, and
// models whose weights come out of TFLM_DECODE compared with the same
// model holding the dense weights.

const ttBool int8 = 6 // TensorType BOOL

// decodeOnly is a model whose one operator is TFLM_DECODE of (enc, anc)
// into out, the subgraph's output.
func decodeOnly(enc, anc []byte, out tg.Tensor) *tg.Model {
	m := &tg.Model{}
	e := m.AddTensor(tg.Tensor{Name: "enc", Type: tg.UInt8, Shape: []int32{int32(len(enc))}, Data: enc})
	a := m.AddTensor(tg.Tensor{Name: "anc", Type: tg.UInt8, Shape: []int32{int32(len(anc))}, Data: anc})
	out.Name = "decoded"
	o := m.AddTensor(out)
	m.Ops = append(m.Ops, tg.Operator{Code: tg.OpCustom, Custom: "TFLM_DECODE", Inputs: []int32{e, a}, Outputs: []int32{o}})
	m.Outputs = []int32{o}
	return m
}

// decoded imports m and returns the constant its output is copied from.
func decoded(t *testing.T, what string, m *tg.Model) *graph.Tensor {
	t.Helper()
	g, err := tflite.Decode(what, m.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, n := range g.Nodes {
		if n.Outputs[0] == g.Outputs[0] {
			c := g.Tensors[n.Inputs[0]]
			if !c.IsConst() {
				t.Fatalf("%s: output copied from %q, not a constant", what, c.Name)
			}
			if len(g.Tensors) != 2 {
				t.Fatalf("%s: %d tensors, want the decoded constant and the output (encoded and ancillary data dropped)", what, len(g.Tensors))
			}
			return c
		}
	}
	t.Fatalf("%s: no node writes the output", what)
	return nil
}

func dcm(typ byte, b4, b5, b6 byte) []byte {
	return []byte{typ, 1, 0, 0, b4, b5, b6, 0, 0, 0, 0, 0, 0, 0, 0, 0}
}

// lutGoldens ports decode_state_lut_test.cc's data generation
// (FillValueTable, FillGoldens, FillCompressed: TFLite Micro's own
// encoder of the test) for one configuration, returning the encoded
// indices, the value table (bytes) and the expected values (float32 as
// float64, bool as 0/1).
func lutGoldens(typ int8, bitWidth, total, tableElems, channels int, alt bool) (enc, table []byte, want []float64) {
	// FillValueTable: -1, -2, … in the type (int8 wraps); floats -1.1f,
	// -2.1f, … in float32; bools true, false, ….
	vals := make([]float64, tableElems)
	f := float32(-1.1)
	for i := range vals {
		switch typ {
		case tg.Float32:
			vals[i] = float64(f)
			f -= 1
		case ttBool:
			vals[i] = float64(1 - i%2)
		case tg.Int8:
			vals[i] = float64(int8(-1 - i))
		default:
			vals[i] = float64(-1 - i)
		}
	}
	for _, v := range vals {
		switch typ {
		case tg.Float32:
			table = binary.LittleEndian.AppendUint32(table, math.Float32bits(float32(v)))
		case ttBool, tg.Int8:
			table = append(table, byte(int8(v)))
		case tg.Int16:
			table = binary.LittleEndian.AppendUint16(table, uint16(int16(v)))
		case tg.Int32:
			table = binary.LittleEndian.AppendUint32(table, uint32(int32(v)))
		case tg.Int64:
			table = binary.LittleEndian.AppendUint64(table, uint64(int64(v)))
		}
	}
	// FillGoldens
	stride := tableElems / channels
	want = make([]float64, total)
	vi := 0
	if alt {
		for g := 0; g < total/channels; g++ {
			for c := 0; c < channels; c++ {
				want[g*channels+c] = vals[c*stride+vi]
			}
			if vi++; vi == stride {
				vi = 0
			}
		}
	} else {
		per := total / channels
		for c := 0; c < channels; c++ {
			for i := 0; i < per; i++ {
				want[c*per+i] = vals[c*stride+vi]
				if vi++; vi == stride {
					vi = 0
				}
			}
			vi = 0
		}
	}
	// FillCompressed (FindValueTableIndex: the first equal entry of the
	// element's channel)
	var bits uint16
	acc := 0
	put := func(v float64, c int) {
		idx := slices.Index(vals[c*stride:(c+1)*stride], v)
		bits |= uint16(idx << (16 - acc - bitWidth))
		acc += bitWidth
		if acc > 8 {
			enc = append(enc, byte(bits>>8))
			bits <<= 8
			acc -= 8
		}
	}
	if alt {
		for g := 0; g < total/channels; g++ {
			for c := 0; c < channels; c++ {
				put(want[g*channels+c], c)
			}
		}
	} else {
		per := total / channels
		for c := 0; c < channels; c++ {
			for i := 0; i < per; i++ {
				put(want[c*per+i], c)
			}
		}
	}
	if acc > 0 {
		enc = append(enc, byte(bits>>8))
	}
	return enc, table, want
}

// TestDecodeLUTVectors: TestAllBitWidths of decode_state_lut_test.cc for
// every type it covers (bool, float32, int8, int16, int32, int64): bit
// widths 1 to 7, one channel and two, channels along the first axis and
// along the last (interleaved), 1 to 256 elements a channel, value
// tables of 2^n and 2^n − 1 entries a channel.
func TestDecodeLUTVectors(t *testing.T) {
	counts := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256}
	const maxTable = (1 << 7) * 2 // kValueTableSize
	types := []int8{ttBool, tg.Float32, tg.Int8, tg.Int16, tg.Int32, tg.Int64}
	checked := 0
	for _, typ := range types {
		for bw := 1; bw <= 7; bw++ {
			for _, alt := range []bool{false, true} {
				for _, channels := range []int{1, 2} {
					for _, per := range counts {
						total := per * channels
						for _, minus1 := range []bool{false, true} {
							tv := (1 << bw) * channels
							switch {
							case typ == ttBool && minus1:
								tv = channels
							case typ == ttBool:
								tv = 2 * channels
							case minus1:
								tv = ((1 << bw) - 1) * channels
							}
							tv = min(tv, total, maxTable)
							enc, table, want := lutGoldens(typ, bw, total, tv, channels, alt)
							shape := []int32{int32(channels), int32(per)}
							axis := int32(0)
							if alt {
								shape = []int32{int32(per), int32(channels)}
								axis = int32(channels - 1)
							}
							scales := make([]float32, channels)
							for i := range scales {
								scales[i] = 1
							}
							anc := append(dcm(0, 1, byte(bw), byte(tv/channels)), table...)
							m := decodeOnly(enc, anc, tg.Tensor{Type: typ, Shape: shape, Scale: scales, ZeroPoint: make([]int64, channels), QuantDim: axis})
							c := decoded(t, "lut", m)
							for i, w := range want {
								var got float64
								if typ == tg.Float32 {
									got = float64(c.Data.F[i])
								} else {
									got = float64(c.Data.I[i])
								}
								if got != w {
									t.Fatalf("type %d, width %d, alt %v, %d channels of %d, table %d: element %d is %v, want %v", typ, bw, alt, channels, per, tv, i, got, w)
								}
							}
							checked++
						}
					}
				}
			}
		}
	}
	if checked != 6*7*2*2*22*2 {
		t.Fatalf("%d configurations checked", checked)
	}
}

// Prune vectors of decode_state_prune_test.cc: the mask 0xA5 0x5A 0xA5 …
// (ten bytes) over 80 elements.
var (
	pruneMask = []byte{0xA5, 0x5A, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5}
	// kAncillaryDataPrune0 (also 3 and 5 differ only in values)
	prune0 = []int64{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4,
		11, 12, 13, 14, 11, 12, 13, 14, 11, 12, 13, 14, 11, 12, 13, 14, 11, 12, 13, 14}
	// kExpectPrune0: zero points −128 (channel 0) and 0 (channel 1)
	expectPrune0 = []int64{
		1, -128, 2, -128, -128, 3, -128, 4, -128, 1, -128, 2, 3, -128, 4, -128,
		1, -128, 2, -128, -128, 3, -128, 4, 1, -128, 2, -128, -128, 3, -128, 4,
		1, -128, 2, -128, -128, 3, -128, 4,
		11, 0, 12, 0, 0, 13, 0, 14, 11, 0, 12, 0, 0, 13, 0, 14, 11, 0, 12, 0, 0, 13, 0, 14,
		11, 0, 12, 0, 0, 13, 0, 14, 11, 0, 12, 0, 0, 13, 0, 14}
	// kAncillaryDataPrune4 and kExpectPrune4: 40 channels on the last
	// axis, zero points 0, −1, …, −19, 0, −1, …, −19.
	prune4 = []int64{17, 18, 19, 20, 17, 18, 19, 20, 17, 18, 19, 20, 17, 18, 19, 20, 17, 18, 19, 20,
		21, 22, 23, 24, 21, 22, 23, 24, 21, 22, 23, 24, 21, 22, 23, 24, 21, 22, 23, 24}
	expectPrune4 = []int64{
		17, -1, 18, -3, -4, 19, -6, 20, -8, 17, -10, 18, 19, -13, 20, -15, 17, -17, 18, -19,
		0, 19, -2, 20, 17, -5, 18, -7, -8, 19, -10, 20, 17, -13, 18, -15, -16, 19, -18, 20,
		21, -1, 22, -3, -4, 23, -6, 24, 21, -9, 22, -11, -12, 23, -14, 24, 21, -17, 22, -19,
		0, 23, -2, 24, 21, -5, 22, -7, -8, 23, -10, 24, 21, -13, 22, -15, -16, 23, -18, 24}
	// kAncillaryDataPrune5 and kExpectPrune5: one channel, zero point −44.
	prune5 = []int64{13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16,
		23, 24, 25, 26, 23, 24, 25, 26, 23, 24, 25, 26, 23, 24, 25, 26, 23, 24, 25, 26}
	expectPrune5 = []int64{
		13, -44, 14, -44, -44, 15, -44, 16, -44, 13, -44, 14, 15, -44, 16, -44, 13, -44, 14, -44,
		-44, 15, -44, 16, 13, -44, 14, -44, -44, 15, -44, 16, 13, -44, 14, -44, -44, 15, -44, 16,
		23, -44, 24, -44, -44, 25, -44, 26, 23, -44, 24, -44, -44, 25, -44, 26, 23, -44, 24, -44,
		-44, 25, -44, 26, 23, -44, 24, -44, -44, 25, -44, 26, 23, -44, 24, -44, -44, 25, -44, 26}
)

// pruneExpect spreads values over the mask with zero (kExpectPrune1, 2, 3
// are this with their tables and zero points 0).
func pruneExpect(vals []int64) []int64 {
	out := make([]int64, 80)
	k := 0
	for i := range out {
		if pruneMask[i>>3]>>(7-i&7)&1 != 0 {
			out[i] = vals[k]
			k++
		}
	}
	return out
}

func i64Bytes(typ int8, vals []int64) []byte {
	var b []byte
	for _, v := range vals {
		switch typ {
		case tg.Int8:
			b = append(b, byte(v))
		case tg.Int16:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case tg.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
	}
	return b
}

// TestDecodePruneVectors: decode_state_prune_test.cc's cases.
func TestDecodePruneVectors(t *testing.T) {
	prune1 := []int64{5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8,
		15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18, 15, 16, 17, 18}
	prune2 := []int64{9, 10, 11, 12, 9, 10, 11, 12, 9, 10, 11, 12, 9, 10, 11, 12, 9, 10, 11, 12,
		19, 20, 21, 22, 19, 20, 21, 22, 19, 20, 21, 22, 19, 20, 21, 22, 19, 20, 21, 22}
	prune3 := []int64{13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16, 13, 14, 15, 16,
		113, 114, 115, 116, 113, 114, 115, 116, 113, 114, 115, 116, 113, 114, 115, 116, 113, 114, 115, 116}
	zp4 := make([]int64, 40)
	for i := range zp4 {
		zp4[i] = -int64(i % 20)
	}
	ones := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	shape := []int32{2, 5, 8, 1}
	cases := []struct {
		name string
		typ  int8
		vals []int64
		out  tg.Tensor
		want []int64
	}{
		{"DecodePruneFloat", tg.Float32, prune2, tg.Tensor{Shape: shape, Scale: ones(1), ZeroPoint: []int64{0}}, pruneExpect(prune2)},
		{"DecodePruneInt8", tg.Int8, prune3, tg.Tensor{Shape: shape, Scale: ones(1), ZeroPoint: []int64{0}}, pruneExpect(prune3)},
		{"DecodePruneQuantizedInt8", tg.Int8, prune3, tg.Tensor{Shape: shape, Scale: ones(2), ZeroPoint: []int64{0, 0}}, pruneExpect(prune3)},
		{"DecodePruneQuantizedMixedZeroPointInt8", tg.Int8, prune0, tg.Tensor{Shape: shape, Scale: ones(2), ZeroPoint: []int64{-128, 0}}, expectPrune0},
		{"DecodePruneQuantizedSingleChannelInt8", tg.Int8, prune5, tg.Tensor{Shape: []int32{1, 8, 10, 1}, Scale: ones(1), ZeroPoint: []int64{-44}}, expectPrune5},
		{"DecodePruneQuantizedAltAxisInt8", tg.Int8, prune4, tg.Tensor{Shape: []int32{1, 2, 1, 40}, Scale: ones(40), ZeroPoint: zp4, QuantDim: 3}, expectPrune4},
		{"DecodePruneQuantizedInt16", tg.Int16, prune1, tg.Tensor{Shape: shape, Scale: ones(2), ZeroPoint: []int64{0, 0}}, pruneExpect(prune1)},
		// and without quantization (float weights as the compression tool
		// leaves them)
		{"float_unquantized", tg.Float32, prune2, tg.Tensor{Shape: shape}, pruneExpect(prune2)},
	}
	for _, c := range cases {
		out := c.out
		out.Type = c.typ
		anc := append(dcm(2, 1, 0, 0), i64Bytes(c.typ, c.vals)...)
		d := decoded(t, c.name, decodeOnly(pruneMask, anc, out))
		got := d.Data.I
		if c.typ == tg.Float32 {
			got = nil
			for _, f := range d.Data.F {
				got = append(got, int64(f))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// DecodePruneQuantizedInvalidZeroPointInt16: TFLite Micro fails.
	anc := append(dcm(2, 1, 0, 0), i64Bytes(tg.Int16, prune1)...)
	mustErr(t, "prune_int16_zp", decodeOnly(pruneMask, anc, tg.Tensor{Type: tg.Int16, Shape: shape, Scale: ones(2), ZeroPoint: []int64{0, -1}}).Bytes(),
		`operator 0 (CUSTOM "TFLM_DECODE"): output "decoded": prune decoding to int16 with a non-zero zero point`)
}

// Huffman vectors of decode_state_huffman_test.cc: kEncodedHuffman, the
// tables kAncillaryDataHuffman16 and 32 (an initial lookup of 3 bits),
// kExpectHuffmanInt8/Int16.
var (
	huffEncoded = []byte{0xF0, 0x0D, 0x79, 0xFC, 0x9C, 0x1A, 0x6E, 0x4C, 0x32, 0xAF, 0x29,
		0xB3, 0x5D, 0xF6, 0x36, 0x02, 0x50, 0x15, 0x8C, 0xA7, 0x95, 0xDB,
		0x29, 0x68, 0x3F, 0xBA, 0xB7, 0xED, 0xB1, 0x19, 0xE2, 0xE0}
	huffTable16 = []uint16{0x986D, 0x9861, 0x986A, 0x0005, 0x0806, 0x0809, 0x000E, 0x000F,
		0x886F, 0x8868, 0x8864, 0x8864, 0x9069, 0x9066, 0x8863, 0x8863, 0x0002, 0x906B,
		0x8867, 0x886C, 0x8865, 0x8862, 0x8870, 0x886E}
	huffTable32 = []uint32{0x9800006D, 0x98000061, 0x9800006A, 0x00000005, 0x08000006, 0x08000009, 0x0000000E, 0x0000000F,
		0x8800006F, 0x88000068, 0x88000064, 0x88000064, 0x90000069, 0x90000066, 0x88000063, 0x88000063, 0x00000002, 0x9000006B,
		0x88000067, 0x8800006C, 0x88000065, 0x88000062, 0x88000070, 0x8800006E}
	huffExpect = "nmmacnanefdacopjomeckifookhbdbdmjjdmjgojfecpbiibmanbbjbnlgjafejp"
)

func TestDecodeHuffmanVectors(t *testing.T) {
	var t16, t32 []byte
	for _, v := range huffTable16 {
		t16 = binary.LittleEndian.AppendUint16(t16, v)
	}
	for _, v := range huffTable32 {
		t32 = binary.LittleEndian.AppendUint32(t32, v)
	}
	want := make([]int64, len(huffExpect))
	for i := range huffExpect {
		want[i] = int64(huffExpect[i])
	}
	out := func(typ int8) tg.Tensor { return tg.Tensor{Type: typ, Shape: []int32{64}} }
	for _, c := range []struct {
		name  string
		flags byte
		table []byte
		typ   int8
	}{
		{"DecodeHuffmanTable16BitsInt8", 2 << 4, t16, tg.Int8},
		{"DecodeHuffmanTable32BitsInt8", 2<<4 | 1, t32, tg.Int8},
		{"DecodeHuffmanTable32BitsInt16", 2<<4 | 1, t32, tg.Int16},
	} {
		d := decoded(t, c.name, decodeOnly(huffEncoded, append(dcm(1, 1, c.flags, 0), c.table...), out(c.typ)))
		if !slices.Equal(d.Data.I, want) {
			t.Errorf("%s: %v, want %v", c.name, d.Data.I, want)
		}
	}
	// DecodeHuffmanTable16BitsInt16Fail
	mustErr(t, "huffman16_int16", decodeOnly(huffEncoded, append(dcm(1, 1, 2<<4, 0), t16...), out(tg.Int16)).Bytes(),
		"Huffman decoding to int16 with 16-bit tables: TFLite Micro takes int8 only")
	// A stream too short for its 64 symbols.
	mustErr(t, "huffman_short", decodeOnly(huffEncoded[:20], append(dcm(1, 1, 2<<4|1, 0), t32...), out(tg.Int8)).Bytes(),
		"the encoded stream of 20 bytes ran out")
}

// packLUT packs per-channel LUT indices most significant bit first (the
// compression tool's pack_indices) and the value tables, padded to the
// longest (pack_lookup_tables), as lut.py writes them: channels along
// axis 0 of values [channels, per].
func packLUT(vals []int8, channels, bw int) (enc, anc []byte) {
	per := len(vals) / channels
	var tables [][]int8
	stride := 0
	for c := 0; c < channels; c++ {
		u := slices.Clone(vals[c*per : (c+1)*per])
		slices.Sort(u)
		u = slices.Compact(u)
		tables = append(tables, u)
		stride = max(stride, len(u))
	}
	bits := make([]byte, (len(vals)*bw+7)/8)
	for k, v := range vals {
		idx := slices.Index(tables[k/per], v)
		for b := 0; b < bw; b++ {
			if idx>>(bw-1-b)&1 != 0 {
				p := k*bw + b
				bits[p/8] |= 1 << (7 - p%8)
			}
		}
	}
	anc = dcm(0, 1, byte(bw), byte(stride))
	for _, tb := range tables {
		for i := 0; i < stride; i++ {
			v := int8(0)
			if i < len(tb) {
				v = tb[i]
			}
			anc = append(anc, byte(v))
		}
	}
	return bits, anc
}

// decodeFC is an int8 FULLY_CONNECTED [1,8] × [4,8]ᵀ + bias, weights per
// output channel (scales 0.02 … 0.05), of 4-bit LUT-coded weights (at
// most 16 values a channel). Compressed, the weights and the bias come
// out of one TFLM_DECODE (two outputs, the bias LUT-coded in 2 bits);
// dense, they are the same values as constants.
func decodeFC(compressed bool) *tg.Model {
	r := tg.NewRand(35)
	w := make([]int8, 32)
	for i := range w {
		w[i] = r.Int8(-127, 127)
	}
	w[3], w[11] = w[1], w[9] // repeated values
	bias := []int32{300, -1200, 300, 77}
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Int8, Shape: []int32{1, 8}, Scale: []float32{0.05}, ZeroPoint: []int64{3}})
	wt := tg.Tensor{Name: "w", Type: tg.Int8, Shape: []int32{4, 8}, Scale: []float32{0.02, 0.03, 0.04, 0.05}, ZeroPoint: []int64{0, 0, 0, 0}}
	bt := tg.Tensor{Name: "b", Type: tg.Int32, Shape: []int32{4}, Scale: []float32{0.001, 0.0015, 0.002, 0.0025}, ZeroPoint: []int64{0, 0, 0, 0}}
	y := tg.Tensor{Name: "y", Type: tg.Int8, Shape: []int32{1, 4}, Scale: []float32{0.1}, ZeroPoint: []int64{-5}}
	var wi, bi int32
	if !compressed {
		wt.Data, bt.Data = tg.I8Bytes(w...), tg.I32Bytes(bias...)
		wi, bi = m.AddTensor(wt), m.AddTensor(bt)
	} else {
		wenc, wanc := packLUT(w, 4, 4)
		// The bias, per channel as lut.py writes a per-channel tensor:
		// a one-entry table a channel (stride 1), 2-bit indices all 0.
		benc := []byte{0}
		banc := dcm(0, 1, 2, 1)
		banc = append(banc, tg.I32Bytes(bias...)...)
		e1 := m.AddTensor(tg.Tensor{Name: "w_enc", Type: tg.UInt8, Shape: []int32{int32(len(wenc))}, Data: wenc})
		a1 := m.AddTensor(tg.Tensor{Name: "w_anc", Type: tg.UInt8, Shape: []int32{int32(len(wanc))}, Data: wanc})
		e2 := m.AddTensor(tg.Tensor{Name: "b_enc", Type: tg.UInt8, Shape: []int32{1}, Data: benc})
		a2 := m.AddTensor(tg.Tensor{Name: "b_anc", Type: tg.UInt8, Shape: []int32{int32(len(banc))}, Data: banc})
		wi, bi = m.AddTensor(wt), m.AddTensor(bt)
		m.Ops = append(m.Ops, tg.Operator{Code: tg.OpCustom, Custom: "TFLM_DECODE", Inputs: []int32{e1, a1, e2, a2}, Outputs: []int32{wi, bi}})
	}
	yi := m.AddTensor(y)
	m.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(tg.ActNone, false), []int32{x, wi, bi}, yi)
	m.Inputs, m.Outputs = []int32{x}, []int32{yi}
	return m
}

// decodeFloatFC is a float FULLY_CONNECTED [1,6] × [3,6]ᵀ whose weights are
// a 3-bit per-tensor float32 LUT (no quantization: one table), against
// the dense weights.
func decodeFloatFC(compressed bool) *tg.Model {
	table := []float32{-0.75, -0.5, -0.125, 0, 0.25, 0.5, 1.5}
	idx := []int{0, 1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1, 0, 3, 3, 6, 0}
	w := make([]float32, len(idx))
	for i, k := range idx {
		w[i] = table[k]
	}
	m := &tg.Model{}
	x := m.AddTensor(tg.Tensor{Name: "x", Type: tg.Float32, Shape: []int32{1, 6}})
	wt := tg.Tensor{Name: "w", Type: tg.Float32, Shape: []int32{3, 6}}
	var wi int32
	if !compressed {
		wt.Data = tg.F32Bytes(w...)
		wi = m.AddTensor(wt)
	} else {
		enc := make([]byte, (len(idx)*3+7)/8)
		for k, v := range idx {
			for b := 0; b < 3; b++ {
				if v>>(2-b)&1 != 0 {
					p := 3*k + b
					enc[p/8] |= 1 << (7 - p%8)
				}
			}
		}
		anc := append(dcm(0, 1, 3, 8), tg.F32Bytes(append(table, 0)...)...)
		e := m.AddTensor(tg.Tensor{Name: "w_enc", Type: tg.UInt8, Shape: []int32{int32(len(enc))}, Data: enc})
		a := m.AddTensor(tg.Tensor{Name: "w_anc", Type: tg.UInt8, Shape: []int32{int32(len(anc))}, Data: anc})
		wi = m.AddTensor(wt)
		m.Ops = append(m.Ops, tg.Operator{Code: tg.OpCustom, Custom: "TFLM_DECODE", Inputs: []int32{e, a}, Outputs: []int32{wi}})
	}
	y := m.AddTensor(tg.Tensor{Name: "y", Type: tg.Float32, Shape: []int32{1, 3}})
	m.AddOp(tg.OpFullyConnected, tg.FullyConnectedOptions(tg.ActRelu, false), []int32{x, wi, -1}, y)
	m.Inputs, m.Outputs = []int32{x}, []int32{y}
	return m
}

// TestDecodeFullyConnected: the compressed models import to the dense
// models' graphs (one node, the weights and bias constants equal, nothing
// left of the encoded data) and run to the same outputs.
func TestDecodeFullyConnected(t *testing.T) {
	for _, c := range []struct {
		name  string
		model func(bool) *tg.Model
		feed  func(i int) *graph.Data
	}{
		{"fc_int8_lut", decodeFC, func(i int) *graph.Data {
			d := graph.NewData(graph.Int8, []int{1, 8})
			r := tg.NewRand(uint64(100 + i))
			for k := range d.I {
				d.I[k] = int64(r.Int8(-128, 127))
			}
			return d
		}},
		{"fc_float_lut", decodeFloatFC, func(i int) *graph.Data {
			d := graph.NewData(graph.Float32, []int{1, 6})
			r := tg.NewRand(uint64(200 + i))
			for k := range d.F {
				d.F[k] = r.Float() * 4
			}
			return d
		}},
	} {
		gc, err := tflite.Decode(c.name, c.model(true).Bytes())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		gd, err := tflite.Decode(c.name+"_dense", c.model(false).Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(gc.Nodes) != 1 || len(gd.Nodes) != 1 {
			t.Fatalf("%s: %d nodes, dense %d, want 1", c.name, len(gc.Nodes), len(gd.Nodes))
		}
		for _, name := range gc.Nodes[0].Inputs[1:] {
			if name == "" {
				continue
			}
			a, b := gc.Tensors[name], gd.Tensors[name]
			if b == nil || !a.IsConst() || a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) ||
				!slices.Equal(a.Data.I, b.Data.I) || !slices.Equal(a.Data.F, b.Data.F) || (a.Quant == nil) != (b.Quant == nil) ||
				a.Quant != nil && (!slices.Equal(a.Quant.Scale, b.Quant.Scale) || !slices.Equal(a.Quant.ZeroPoint, b.Quant.ZeroPoint) || a.Quant.Axis != b.Quant.Axis) {
				t.Errorf("%s: constant %q differs from the dense model's", c.name, name)
			}
		}
		for name := range gc.Tensors {
			if strings.Contains(name, "_enc") || strings.Contains(name, "_anc") {
				t.Errorf("%s: tensor %q of the encoded data is left in the graph", c.name, name)
			}
		}
		for i := 0; i < 4; i++ {
			x := c.feed(i)
			oc, err := interp.Run(gc, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			od, err := interp.Run(gd, map[string]*graph.Data{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(oc["y"].I, od["y"].I) || !slices.Equal(oc["y"].F, od["y"].F) {
				t.Errorf("%s vector %d: %v %v, dense %v %v", c.name, i, oc["y"].I, oc["y"].F, od["y"].I, od["y"].F)
			}
		}
	}

	// The int8 model's generated C on the host and the Cortex-M4 gives
	// the dense model's outputs.
	gd, err := tflite.Decode("fc_dense", decodeFC(false).Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var vecs []map[string]*graph.Data
	var want [][][]int64
	for i := 0; i < 3; i++ {
		x := graph.NewData(graph.Int8, []int{1, 8})
		r := tg.NewRand(uint64(300 + i))
		for k := range x.I {
			x.I[k] = int64(r.Int8(-128, 127))
		}
		o, err := interp.Run(gd, map[string]*graph.Data{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		vecs = append(vecs, map[string]*graph.Data{"x": x})
		want = append(want, [][]int64{o["y"].I})
	}
	build := func(t *testing.T) *graph.Graph {
		g, err := tflite.Decode("decode_fc", decodeFC(true).Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	matchesOnBoards(t, "decode_", []firmwareCase{{name: "fc_int8_lut", graph: build, vecs: vecs, want: want}})
}

// TestDecodeRefusals: what TFLite Micro does not decode, or a model that
// is not what the compression tool writes, is refused in one line naming
// the operator.
func TestDecodeRefusals(t *testing.T) {
	out := tg.Tensor{Type: tg.Int8, Shape: []int32{2, 4}}
	lut := func() (enc, anc []byte) { return []byte{0x12, 0x34}, append(dcm(0, 1, 2, 4), 10, 20, 30, 40) }
	op := `operator 0 (CUSTOM "TFLM_DECODE"): `
	enc, anc := lut()
	// the good one
	if d := decoded(t, "lut_ok", decodeOnly(enc, anc, out)); !slices.Equal(d.Data.I, []int64{10, 20, 10, 30, 10, 40, 20, 10}) {
		t.Fatalf("lut_ok: %v", d.Data.I)
	}
	cases := []struct {
		name string
		edit func(m *tg.Model)
		want string
	}{
		{"dcm_version", func(m *tg.Model) { m.Tensors[1].Data[1] = 2 }, "decode header version 2: TFLite Micro reads version 1"},
		{"lut_version", func(m *tg.Model) { m.Tensors[1].Data[4] = 0 }, "LUT version 0"},
		{"type_custom", func(m *tg.Model) { m.Tensors[1].Data[0] = 200 }, "custom decode type 200 (an application's own decoder) is not supported"},
		{"type_127", func(m *tg.Model) { m.Tensors[1].Data[0] = 127 }, "decode type 127 (custom): TFLite Micro does not support it"},
		{"type_unknown", func(m *tg.Model) { m.Tensors[1].Data[0] = 3 }, "unknown decode type 3"},
		{"width0", func(m *tg.Model) { m.Tensors[1].Data[5] = 8 }, "LUT index bit width 0"},
		{"short_header", func(m *tg.Model) { m.Tensors[1].Data = m.Tensors[1].Data[:12]; m.Tensors[1].Shape = []int32{12} }, "ancillary tensor of 12 bytes is shorter than its 16-byte header"},
		{"short_indices", func(m *tg.Model) { m.Tensors[0].Data = m.Tensors[0].Data[:1]; m.Tensors[0].Shape = []int32{1} }, "encoded tensor of 1 bytes: 8 indices of 2 bits need 2"},
		{"index_past_table", func(m *tg.Model) {
			m.Tensors[1].Data = m.Tensors[1].Data[:19]
			m.Tensors[1].Shape = []int32{19}
		}, "LUT index 3 of channel 0 (element 5) lies past the 3-entry value table"},
		{"uint8_output", func(m *tg.Model) { m.Tensors[2].Type = tg.UInt8 }, "output 0 is uint8: TFLite Micro decodes to bool, float32, int8, int16, int32 and int64 only"},
		{"int4_output", func(m *tg.Model) { m.Tensors[2].Type = tg.Int4 }, "output 0 is int4: TFLite Micro decodes to"},
		{"middle_axis", func(m *tg.Model) {
			m.Tensors[2].Shape = []int32{1, 2, 4}
			m.Tensors[2].Scale, m.Tensors[2].ZeroPoint, m.Tensors[2].QuantDim = []float32{1, 1}, []int64{0, 0}, 1
		}, "quantized dimension 1: TFLite Micro decodes channels along the first or last axis only"},
		{"int32_ancillary", func(m *tg.Model) {
			m.Tensors[1].Type = tg.Int32
			m.Tensors[1].Shape = []int32{5}
		}, "ancillary input 1 (tensor 1) is of TFLite type 2: TFLM_DECODE reads constants of bytes (uint8)"},
		{"not_constant", func(m *tg.Model) {
			m.Tensors[0].Data = nil
			m.Inputs = []int32{0}
		}, "encoded input 0 (tensor 0) is not a constant: TFLM_DECODE decodes constants only"},
		{"pairs", func(m *tg.Model) { m.Ops[0].Inputs = append(m.Ops[0].Inputs, 0) }, "3 inputs for 1 outputs: TFLM_DECODE takes an encoded and an ancillary constant per output"},
		{"prune_mask_short", func(m *tg.Model) {
			m.Tensors[1].Data[0] = 2
			m.Tensors[2].Shape = []int32{4, 5}
		}, "encoded mask of 2 bytes: 20 elements need 3"},
		{"prune_values_short", func(m *tg.Model) { m.Tensors[1].Data[0] = 2; m.Tensors[0].Data[0] = 0xff }, "the mask keeps 8 values, the table holds 4"},
		{"huffman_float", func(m *tg.Model) { m.Tensors[1].Data[0] = 1; m.Tensors[1].Data[5] = 1; m.Tensors[2].Type = tg.Float32 }, "Huffman decoding to float32: TFLite Micro decodes int8 and int16"},
	}
	for _, c := range cases {
		enc, anc := lut()
		m := decodeOnly(enc, anc, out)
		c.edit(m)
		mustErr(t, c.name, m.Bytes(), op)
		mustErr(t, c.name, m.Bytes(), c.want)
	}
}
