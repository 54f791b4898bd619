package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// maxElements bounds the size of any tensor the importer materializes, so a
// corrupt file cannot make it allocate unbounded memory.
const maxElements = 1 << 24

var dtypeNames = map[int32]string{
	TUndefined: "UNDEFINED", TFloat: "FLOAT", TUint8: "UINT8", TInt8: "INT8", TUint16: "UINT16",
	TInt16: "INT16", TInt32: "INT32", TInt64: "INT64", TString: "STRING", TBool: "BOOL",
	TFloat16: "FLOAT16", TDouble: "DOUBLE", TUint32: "UINT32", TUint64: "UINT64",
	// The later types, by their onnx.proto numbers (BFLOAT16 printed as
	// DataType(16): review finding).
	14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ",
	19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
}

// DTypeName is the onnx.proto name of a TensorProto.DataType value.
func DTypeName(t int32) string {
	if s, ok := dtypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("DataType(%d)", t)
}

// graphDType maps an ONNX element type to a graph dtype.
func graphDType(t int32) (graph.DType, bool) {
	switch t {
	case TFloat:
		return graph.Float32, true
	case TUint8:
		return graph.UInt8, true
	case TInt8:
		return graph.Int8, true
	case TInt16:
		return graph.Int16, true
	case TInt32:
		return graph.Int32, true
	case TInt64:
		return graph.Int64, true
	case TBool:
		return graph.Bool, true
	}
	return graph.Invalid, false
}

// onnxDType maps a graph dtype to an ONNX element type.
func onnxDType(d graph.DType) int32 {
	switch d {
	case graph.Float32:
		return TFloat
	case graph.UInt8:
		return TUint8
	case graph.Int8:
		return TInt8
	case graph.Int16:
		return TInt16
	case graph.Int32:
		return TInt32
	case graph.Int64:
		return TInt64
	case graph.Bool:
		return TBool
	}
	return TUndefined
}

// ErrExternalData is returned for tensors stored outside the model file.
var ErrExternalData = errors.New("tensor data stored in an external file is not supported (re-save the model with all tensors inside the .onnx file, e.g. onnx.save(model, path, save_as_external_data=False))")

// ToData converts a TensorProto to a graph value. Float16 and double
// constants are converted to float32.
func (t *Tensor) ToData() (*graph.Data, error) {
	if t.DataLocation == 1 || len(t.ExternalData) > 0 {
		return nil, ErrExternalData
	}
	if t.HasSegment {
		return nil, errors.New("segmented tensors are not supported")
	}
	shape := make([]int, len(t.Dims))
	n := 1
	for i, d := range t.Dims {
		if d < 0 || d > maxElements {
			return nil, fmt.Errorf("bad dimension %d in %v", d, t.Dims)
		}
		shape[i] = int(d)
		n *= int(d)
		if n > maxElements {
			return nil, fmt.Errorf("tensor of shape %v is too large", t.Dims)
		}
	}
	dt, ok := graphDType(t.DataType)
	switch t.DataType {
	case TFloat16, TDouble:
		dt, ok = graph.Float32, true
	}
	if !ok {
		return nil, unsupportedf("tensor data type %s is not supported", DTypeName(t.DataType))
	}
	d := &graph.Data{DType: dt, Shape: shape}
	if t.RawData != nil {
		size := map[int32]int{TFloat: 4, TUint8: 1, TInt8: 1, TInt16: 2, TInt32: 4, TInt64: 8, TBool: 1, TFloat16: 2, TDouble: 8}[t.DataType]
		if len(t.RawData) != n*size {
			return nil, fmt.Errorf("raw_data has %d bytes, shape %v of %s needs %d", len(t.RawData), t.Dims, DTypeName(t.DataType), n*size)
		}
		r := t.RawData
		le := binary.LittleEndian
		if dt == graph.Float32 {
			d.F = make([]float32, n)
		} else {
			d.I = make([]int64, n)
		}
		for i := 0; i < n; i++ {
			switch t.DataType {
			case TFloat:
				d.F[i] = math.Float32frombits(le.Uint32(r[4*i:]))
			case TDouble:
				d.F[i] = float32(math.Float64frombits(le.Uint64(r[8*i:])))
			case TFloat16:
				d.F[i] = halfToFloat(le.Uint16(r[2*i:]))
			case TUint8, TBool:
				d.I[i] = int64(r[i])
			case TInt8:
				d.I[i] = int64(int8(r[i]))
			case TInt16:
				d.I[i] = int64(int16(le.Uint16(r[2*i:])))
			case TInt32:
				d.I[i] = int64(int32(le.Uint32(r[4*i:])))
			case TInt64:
				d.I[i] = int64(le.Uint64(r[8*i:]))
			}
		}
		return d, checkData(d)
	}
	var have int
	switch t.DataType {
	case TFloat:
		have = len(t.FloatData)
		d.F = append([]float32(nil), t.FloatData...)
	case TDouble:
		have = len(t.DoubleData)
		d.F = make([]float32, have)
		for i, v := range t.DoubleData {
			d.F[i] = float32(v)
		}
	case TFloat16:
		have = len(t.Int32Data)
		d.F = make([]float32, have)
		for i, v := range t.Int32Data {
			d.F[i] = halfToFloat(uint16(v))
		}
	case TInt64:
		have = len(t.Int64Data)
		d.I = append([]int64(nil), t.Int64Data...)
	default:
		have = len(t.Int32Data)
		d.I = make([]int64, have)
		for i, v := range t.Int32Data {
			d.I[i] = int64(v)
		}
	}
	if have != n {
		return nil, fmt.Errorf("%s tensor of shape %v holds %d values, wants %d", DTypeName(t.DataType), t.Dims, have, n)
	}
	if dt == graph.Float32 && d.F == nil {
		d.F = []float32{}
	}
	if dt != graph.Float32 && d.I == nil {
		d.I = []int64{}
	}
	return d, checkData(d)
}

func checkData(d *graph.Data) error {
	if d.DType.IsInt() {
		lo, hi := d.DType.Range()
		for _, v := range d.I {
			if v < lo || v > hi {
				return fmt.Errorf("value %d outside %s range", v, d.DType)
			}
		}
	}
	return nil
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) / 1024 / 16384
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// NewTensor builds a TensorProto holding d in raw_data.
func NewTensor(name string, d *graph.Data) *Tensor {
	t := &Tensor{Name: name, DataType: onnxDType(d.DType), RawData: []byte{}}
	for _, s := range d.Shape {
		t.Dims = append(t.Dims, int64(s))
	}
	le := binary.LittleEndian
	switch d.DType {
	case graph.Float32:
		for _, v := range d.F {
			t.RawData = le.AppendUint32(t.RawData, math.Float32bits(v))
		}
	case graph.Int8, graph.UInt8, graph.Bool:
		for _, v := range d.I {
			t.RawData = append(t.RawData, byte(v))
		}
	case graph.Int16:
		for _, v := range d.I {
			t.RawData = le.AppendUint16(t.RawData, uint16(v))
		}
	case graph.Int32:
		for _, v := range d.I {
			t.RawData = le.AppendUint32(t.RawData, uint32(v))
		}
	case graph.Int64:
		for _, v := range d.I {
			t.RawData = le.AppendUint64(t.RawData, uint64(v))
		}
	}
	return t
}

// ReadTensorProto decodes a serialized TensorProto (the .pb files of the ONNX
// backend tests) into its name and value.
func ReadTensorProto(b []byte) (name string, d *graph.Data, err error) {
	t, err := DecodeTensor(b)
	if err != nil {
		return "", nil, fmt.Errorf("onnx tensor: %w", err)
	}
	d, err = t.ToData()
	if err != nil {
		return t.Name, nil, fmt.Errorf("onnx tensor %q: %w", t.Name, err)
	}
	return t.Name, d, nil
}
