package tflite

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// TFLM_DECODE is the custom operator TFLite Micro's model compression
// (tensorflow/lite/micro/compression) inserts before each operator that
// reads a compressed constant: inputs 2k and 2k+1 are an encoded constant
// and its "ancillary" constant, output k the decoded tensor (the original
// constant's type, shape and quantization). Both inputs being constants,
// the importer decodes them here as TFLite Micro's kernel would
// (kernels/decode.cc and decode_state_*.cc) and the output becomes an
// ordinary constant: the model then imports as it was before compression.
//
// The ancillary tensor starts with a 16-byte header (DCM): byte 0 the
// decode type (0 LUT, 1 Huffman, 2 prune), byte 1 the DCM version (1),
// bytes 4-15 the type's own parameters; its data follows from byte 16.
const customDecode = "TFLM_DECODE"

const (
	dcmSize        = 16
	dcmLUT         = 0
	dcmHuffman     = 1
	dcmPrune       = 2
	dcmCustomTFLM  = 127
	decodeMaxShift = 64 // bits the Huffman decoder may look past the stream's end
)

// decodeTarget is what a decoding writes: the output's type, element
// count and rank, and how TFLite Micro sees its quantization.
type decodeTarget struct {
	ttype int8
	n     int
	rank  int
	// quantized as TFLite Micro's allocator makes it affine: scales and
	// zero points both present. scales counts them; zps has one a channel
	// (the first repeated when the file has one); axis is the file's
	// quantized_dimension.
	quantized bool
	scales    int
	zps       []int64
	axis      int
}

// tflmDecode folds a TFLM_DECODE operator's outputs (customDecode).
func (c *opctx) tflmDecode() error {
	if len(c.ins) != 2*len(c.outs) {
		return c.errorf("%d inputs for %d outputs: TFLM_DECODE takes an encoded and an ancillary constant per output", len(c.ins), len(c.outs))
	}
	for k := range c.outs {
		enc, err := c.decodeInput(2*k, "encoded")
		if err != nil {
			return err
		}
		anc, err := c.decodeInput(2*k+1, "ancillary")
		if err != nil {
			return err
		}
		oi := int(c.outs[k])
		if oi < 0 || oi >= len(c.d.tensors) {
			return c.errorf("output %d: tensor index %d out of range (%d tensors)", k, oi, len(c.d.tensors))
		}
		if tt := c.d.tensors[oi].i8(tensorType, 0); decodeElemSize(tt) == 0 {
			return c.errorf("output %d is %s: TFLite Micro decodes to bool, float32, int8, int16, int32 and int64 only", k, decodeTypeName(tt))
		}
		if _, ok := c.d.names[oi]; ok {
			return c.errorf("output %d (tensor %d) is already defined before the operator", k, oi)
		}
		name, err := c.d.tensor(oi)
		if err != nil {
			return c.errorf("output: %v", err)
		}
		y := c.d.g.Tensors[name]
		if y.IsConst() {
			return c.errorf("output %q is a constant", name)
		}
		tt := c.d.tensors[oi]
		tgt := decodeTarget{ttype: tt.i8(tensorType, 0), n: graph.NumElements(y.Shape), rank: len(y.Shape)}
		if q := tt.sub(tensorQuantization, "quantization"); q.pos != 0 {
			scales, zps := q.floats(quantScale), q.int64s(quantZeroPoint)
			if len(scales) > 0 && len(zps) > 0 {
				tgt.quantized, tgt.scales, tgt.axis = true, len(scales), int(q.i32(quantDimension, 0))
				for i := range scales {
					z := zps[0]
					if len(zps) == len(scales) {
						z = zps[i]
					}
					tgt.zps = append(tgt.zps, z)
				}
			}
		}
		if err := c.d.check(); err != nil {
			return c.errorf("output %q: %v", name, err)
		}
		v, err := tflmDecodeData(enc, anc, tgt, y.Shape)
		if err != nil {
			return c.errorf("output %q: %v", name, err)
		}
		y.Data = v
	}
	return nil
}

// decodeInput reads input i of TFLM_DECODE, which must be a constant of
// bytes (uint8 or int8, as the compression tool writes them). It is read
// from the file and not imported: nothing else reads it, and it is not
// part of the decompressed model.
func (c *opctx) decodeInput(i int, role string) ([]byte, error) {
	ti := int(c.ins[i])
	if ti < 0 || ti >= len(c.d.tensors) {
		return nil, c.errorf("%s input %d: tensor index %d out of range (%d tensors)", role, i, ti, len(c.d.tensors))
	}
	tt := c.d.tensors[ti]
	ttype := tt.i8(tensorType, 0)
	variable := tt.boolean(tensorIsVariable)
	raw := tt.ints(tensorShape)
	bi := int(tt.u32(tensorBuffer, 0))
	if err := c.d.check(); err != nil {
		return nil, c.errorf("%s input %d: %v", role, i, err)
	}
	if ttype != ttUInt8 && ttype != ttInt8 {
		return nil, c.errorf("%s input %d (tensor %d) is of TFLite type %d: TFLM_DECODE reads constants of bytes (uint8)", role, i, ti, ttype)
	}
	shape := make([]int, len(raw))
	for k, v := range raw {
		if v <= 0 {
			return nil, c.errorf("%s input %d (tensor %d): dimension %d of shape %v is not positive", role, i, ti, k, raw)
		}
		shape[k] = int(v)
	}
	if err := graph.CheckShape(shape); err != nil && len(shape) > 0 {
		return nil, c.errorf("%s input %d (tensor %d): %v", role, i, ti, err)
	}
	dt := graph.UInt8
	if ttype == ttInt8 {
		dt = graph.Int8
	}
	var data *graph.Data
	if !variable {
		var err error
		if data, err = c.d.data(bi, ttype, dt, shape); err != nil {
			return nil, c.errorf("%s input %d (tensor %d): %v", role, i, ti, err)
		}
	}
	if data == nil {
		return nil, c.errorf("%s input %d (tensor %d) is not a constant: TFLM_DECODE decodes constants only", role, i, ti)
	}
	b := make([]byte, len(data.I))
	for k, v := range data.I {
		b[k] = byte(v)
	}
	return b, nil
}

// decodeElemSize is the size in bytes of a TFLite type TFLite Micro's LUT
// and prune decoders write, or 0 for the others.
func decodeElemSize(tt int8) int {
	switch tt {
	case ttBool, ttInt8:
		return 1
	case ttInt16:
		return 2
	case ttFloat32, ttInt32:
		return 4
	case ttInt64:
		return 8
	}
	return 0
}

// decodeTypeName names a TFLite type in refusals.
func decodeTypeName(tt int8) string {
	names := map[int8]string{ttFloat32: "float32", ttFloat16: "float16", ttInt32: "int32", ttUInt8: "uint8", ttInt64: "int64",
		ttBool: "bool", ttInt16: "int16", ttInt8: "int8", ttUInt64: "uint64", ttUInt32: "uint32", ttInt4: "int4"}
	if s, ok := names[tt]; ok {
		return s
	}
	return fmt.Sprintf("type %d", tt)
}

// tflmDecodeData decodes one (encoded, ancillary) pair into the output's
// values, with TFLite Micro's kernel's result, or refuses.
func tflmDecodeData(enc, anc []byte, t decodeTarget, shape []int) (*graph.Data, error) {
	if len(anc) < dcmSize {
		return nil, fmt.Errorf("ancillary tensor of %d bytes is shorter than its %d-byte header", len(anc), dcmSize)
	}
	if anc[1] != 1 {
		return nil, fmt.Errorf("decode header version %d: TFLite Micro reads version 1", anc[1])
	}
	switch anc[0] {
	case dcmLUT:
		return decodeLUT(enc, anc, t, shape)
	case dcmPrune:
		return decodePrune(enc, anc, t, shape)
	case dcmHuffman:
		return decodeHuffman(enc, anc, t, shape)
	case dcmCustomTFLM:
		return nil, fmt.Errorf("decode type 127 (custom): TFLite Micro does not support it")
	}
	if anc[0] >= 128 {
		return nil, fmt.Errorf("custom decode type %d (an application's own decoder) is not supported", anc[0])
	}
	return nil, fmt.Errorf("unknown decode type %d", anc[0])
}

// decodeChannels resolves the channels of a LUT or prune decoding as
// TFLite Micro does: one unless the output is quantized, then one per
// scale, along the first axis or, with several scales on the last axis,
// along the last ("alternate axis": channels interleaved).
func decodeChannels(t decodeTarget) (channels int, alt bool, err error) {
	channels = 1
	if t.quantized {
		channels = t.scales
		switch {
		case t.axis == t.rank-1 && channels > 1:
			alt = true
		case t.axis != 0:
			return 0, false, fmt.Errorf("quantized dimension %d: TFLite Micro decodes channels along the first or last axis only", t.axis)
		}
	}
	if t.n%channels != 0 {
		return 0, false, fmt.Errorf("%d elements do not split into %d channels", t.n, channels)
	}
	return channels, alt, nil
}

// decodeValue reads element i of a little-endian table of TFLite type tt
// into v[k].
func decodeValue(v *graph.Data, k int, tt int8, tab []byte, i int) {
	switch tt {
	case ttFloat32:
		v.F[k] = math.Float32frombits(binary.LittleEndian.Uint32(tab[4*i:]))
	case ttBool:
		v.I[k] = 0
		if tab[i] != 0 {
			v.I[k] = 1
		}
	case ttInt8:
		v.I[k] = int64(int8(tab[i]))
	case ttInt16:
		v.I[k] = int64(int16(binary.LittleEndian.Uint16(tab[2*i:])))
	case ttInt32:
		v.I[k] = int64(int32(binary.LittleEndian.Uint32(tab[4*i:])))
	case ttInt64:
		v.I[k] = int64(binary.LittleEndian.Uint64(tab[8*i:]))
	}
}

// decodeDType is the graph type of a TFLite type the decoders write.
func decodeDType(tt int8) graph.DType {
	dt, _ := dtypeOf(tt)
	return dt
}

// decodeLUT: LUT decompression (decode_state_lut.cc). Header bytes: 4 the
// LUT version (1), 5 the index bit width (low 3 bits, 1 to 7), 6 the value
// table's stride in elements per channel. Element k of channel c is
// table[c·stride + index k], the indices packed most significant bit
// first, channel by channel (or interleaved along the last axis).
func decodeLUT(enc, anc []byte, t decodeTarget, shape []int) (*graph.Data, error) {
	if anc[4] != 1 {
		return nil, fmt.Errorf("LUT version %d: TFLite Micro reads version 1", anc[4])
	}
	size := decodeElemSize(t.ttype)
	if size == 0 {
		return nil, fmt.Errorf("LUT decoding to %s: TFLite Micro decodes bool, float32, int8, int16, int32 and int64", decodeTypeName(t.ttype))
	}
	w := int(anc[5] & 0x07)
	if w == 0 {
		return nil, fmt.Errorf("LUT index bit width 0: TFLite Micro takes 1 to 7")
	}
	stride := int(anc[6])
	channels, alt, err := decodeChannels(t)
	if err != nil {
		return nil, err
	}
	if need := (t.n*w + 7) / 8; len(enc) < need {
		return nil, fmt.Errorf("encoded tensor of %d bytes: %d indices of %d bits need %d", len(enc), t.n, w, need)
	}
	tab := anc[dcmSize:]
	entries := len(tab) / size
	per := t.n / channels
	v := graph.NewData(decodeDType(t.ttype), shape)
	for k := 0; k < t.n; k++ {
		ch := k / per
		if alt {
			ch = k % channels
		}
		// Index k: bits k·w … k·w+w-1 of the stream, most significant first.
		idx := 0
		for b := k * w; b < (k+1)*w; b++ {
			idx = idx<<1 | int(enc[b>>3]>>(7-b&7))&1
		}
		at := ch*stride + idx
		if at >= entries {
			return nil, fmt.Errorf("LUT index %d of channel %d (element %d) lies past the %d-entry value table", idx, ch, k, entries)
		}
		decodeValue(v, k, t.ttype, tab, at)
	}
	return v, nil
}

// decodePrune: pruning decompression (decode_state_prune.cc). The encoded
// tensor is a bit mask, most significant bit first: a set bit takes the
// next value of the table (after the header, in order), a clear one the
// zero point (per channel for int8 with several zero points not all 0;
// otherwise the first, which must be 0 for other types).
func decodePrune(enc, anc []byte, t decodeTarget, shape []int) (*graph.Data, error) {
	if anc[4] != 1 {
		return nil, fmt.Errorf("prune version %d: TFLite Micro reads version 1", anc[4])
	}
	size := decodeElemSize(t.ttype)
	if size == 0 {
		return nil, fmt.Errorf("prune decoding to %s: TFLite Micro decodes bool, float32, int8, int16, int32 and int64", decodeTypeName(t.ttype))
	}
	channels, alt, err := decodeChannels(t)
	if err != nil {
		return nil, err
	}
	perChannel := false
	var single int64
	if t.quantized {
		nonZero := false
		for _, z := range t.zps {
			nonZero = nonZero || z != 0
		}
		if t.ttype != ttInt8 && nonZero {
			return nil, fmt.Errorf("prune decoding to %s with a non-zero zero point: TFLite Micro takes all zero points 0", decodeTypeName(t.ttype))
		}
		perChannel = channels > 1 && nonZero && t.ttype == ttInt8
		single = int64(int8(t.zps[0])) // TFLite Micro keeps zero points as int8
	}
	if need := (t.n + 7) / 8; len(enc) < need {
		return nil, fmt.Errorf("encoded mask of %d bytes: %d elements need %d", len(enc), t.n, need)
	}
	set := 0
	for k := 0; k < t.n; k++ {
		set += int(enc[k>>3]>>(7-k&7)) & 1
	}
	tab := anc[dcmSize:]
	if set*size > len(tab) {
		return nil, fmt.Errorf("the mask keeps %d values, the table holds %d", set, len(tab)/size)
	}
	per := t.n / channels
	v := graph.NewData(decodeDType(t.ttype), shape)
	next := 0
	for k := 0; k < t.n; k++ {
		if enc[k>>3]>>(7-k&7)&1 != 0 {
			decodeValue(v, k, t.ttype, tab, next)
			next++
			continue
		}
		z := single
		if perChannel {
			ch := k / per
			if alt {
				ch = k % channels
			}
			z = int64(int8(t.zps[ch]))
		}
		if t.ttype == ttFloat32 {
			// The float decoder copies the zero point's bits (0: 0.0).
			v.F[k] = math.Float32frombits(uint32(int32(z)))
		} else {
			v.I[k] = z
		}
	}
	return v, nil
}

// decodeHuffman: Huffman decompression with Xtensa-format tables
// (decode_state_huffman.cc). Header byte 5: bit 0 set for 32-bit table
// entries (16-bit otherwise, int8 outputs only), bits 4-7 the initial
// lookup's bit count less one. The encoded tensor is a bit stream read
// most significant bit first (32-bit big-endian words); each symbol starts
// with a lookup of the initial count of bits in the table after the
// header. An entry with its top bit set is a symbol (its low bits the
// value, bits 11-14 or 27-30 how many of the last lookup's bits its code
// takes: the rest are put back); otherwise it chains to a subtable: its
// count field + 1 more bits index from the current entry's offset plus
// its value field.
func decodeHuffman(enc, anc []byte, t decodeTarget, shape []int) (*graph.Data, error) {
	if anc[4] != 1 {
		return nil, fmt.Errorf("Huffman version %d: TFLite Micro reads version 1", anc[4])
	}
	wide := anc[5]&0x01 != 0
	initial := int(anc[5]>>4) + 1
	switch {
	case !wide && t.ttype != ttInt8:
		return nil, fmt.Errorf("Huffman decoding to %s with 16-bit tables: TFLite Micro takes int8 only", decodeTypeName(t.ttype))
	case t.ttype != ttInt8 && t.ttype != ttInt16:
		return nil, fmt.Errorf("Huffman decoding to %s: TFLite Micro decodes int8 and int16", decodeTypeName(t.ttype))
	}
	tab := anc[dcmSize:]
	var (
		found, countMask, valueMask uint32
		countShift, esize           int
	)
	if wide {
		found, countMask, countShift, valueMask, esize = 0x80000000, 0x78000000, 27, 0x07FFFFFF, 4
	} else {
		found, countMask, countShift, valueMask, esize = 0x8000, 0x7800, 11, 0x07FF, 2
	}
	entries := len(tab) / esize
	entry := func(i int) uint32 {
		if wide {
			return binary.LittleEndian.Uint32(tab[4*i:])
		}
		return uint32(binary.LittleEndian.Uint16(tab[2*i:]))
	}
	end := 8 * len(enc)
	pos := 0 // bits consumed
	// get reads count bits at pos; bits past the stream read as 0 (a
	// lookup may extend past the last symbol's code; those bits are put
	// back).
	get := func(count int) uint32 {
		var out uint32
		for i := 0; i < count; i++ {
			bit := uint32(0)
			if p := pos + i; p < end {
				bit = uint32(enc[p>>3]>>(7-p&7)) & 1
			}
			out = out<<1 | bit
		}
		pos += count
		return out
	}
	v := graph.NewData(decodeDType(t.ttype), shape)
	for k := 0; k < t.n; k++ {
		used := initial
		off := int(get(used))
		if off >= entries {
			return nil, fmt.Errorf("Huffman symbol %d: table index %d past the %d-entry table", k, off, entries)
		}
		e := entry(off)
		for e&found == 0 {
			used = int((e&countMask)>>countShift) + 1
			off += int(e&valueMask) + int(get(used))
			if off >= entries {
				return nil, fmt.Errorf("Huffman symbol %d: table index %d past the %d-entry table", k, off, entries)
			}
			if pos > end+decodeMaxShift {
				return nil, fmt.Errorf("Huffman symbol %d: the encoded stream of %d bytes ran out", k, len(enc))
			}
			e = entry(off)
		}
		if t.ttype == ttInt8 {
			v.I[k] = int64(int8(e))
		} else {
			v.I[k] = int64(int16(e))
		}
		if resid := int((e & countMask) >> countShift); used > resid {
			pos -= used - resid
		}
		if pos > end {
			return nil, fmt.Errorf("Huffman symbol %d: the encoded stream of %d bytes ran out", k, len(enc))
		}
	}
	return v, nil
}
