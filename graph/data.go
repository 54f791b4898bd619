package graph

import (
	"fmt"
	"math"
)

// Data is a dense tensor value in row-major order. Float32 values live in F;
// every integer type (and bool) lives in I, widened to int64, so the
// interpreter has one integer path. Exactly one of F and I is used.
type Data struct {
	DType DType
	Shape []int
	F     []float32
	I     []int64
}

// NewData allocates a zero tensor value.
func NewData(dt DType, shape []int) *Data {
	d := &Data{DType: dt, Shape: append([]int(nil), shape...)}
	n := NumElements(shape)
	if dt == Float32 {
		d.F = make([]float32, n)
	} else {
		d.I = make([]int64, n)
	}
	return d
}

// Len is the number of elements.
func (d *Data) Len() int {
	if d.DType == Float32 {
		return len(d.F)
	}
	return len(d.I)
}

// Float returns element i as a float64.
func (d *Data) Float(i int) float64 {
	if d.DType == Float32 {
		return float64(d.F[i])
	}
	return float64(d.I[i])
}

// Ints returns the values as ints (for shape-like constants).
func (d *Data) Ints() []int {
	out := make([]int, d.Len())
	for i := range out {
		if d.DType == Float32 {
			out[i] = int(d.F[i])
		} else {
			out[i] = int(d.I[i])
		}
	}
	return out
}

// Clone returns a deep copy.
func (d *Data) Clone() *Data {
	c := &Data{DType: d.DType, Shape: append([]int(nil), d.Shape...)}
	if d.F != nil {
		c.F = append([]float32(nil), d.F...)
	}
	if d.I != nil {
		c.I = append([]int64(nil), d.I...)
	}
	return c
}

// Check verifies that the element count matches the shape and the values fit the dtype.
func (d *Data) Check() error {
	if NumElements(d.Shape) != d.Len() {
		return fmt.Errorf("shape %v needs %d elements, have %d", d.Shape, NumElements(d.Shape), d.Len())
	}
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

// Strides returns the row-major element strides of shape.
func Strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// CastData converts d to dt as the Cast op does: an integer to float32
// rounds once to nearest (C's (float) x); to bool, non-zero (NaN included) is true; a float to an integer type
// truncates toward zero, saturates at the type's range and takes NaN to 0;
// an integer to another wraps to its width.
func CastData(d *Data, dt DType) *Data {
	out := NewData(dt, d.Shape)
	for i := 0; i < d.Len(); i++ {
		switch {
		case dt == Float32 && d.DType == Float32:
			out.F[i] = d.F[i]
		case dt == Float32:
			out.F[i] = float32(d.I[i])
		case dt == Bool:
			if d.Float(i) != 0 {
				out.I[i] = 1
			}
		case d.DType == Float32:
			v := float64(d.F[i])
			lo, hi := dt.Range()
			switch {
			case math.IsNaN(v):
				out.I[i] = 0
			case v >= float64(hi):
				out.I[i] = hi
			case v <= float64(lo):
				out.I[i] = lo
			default:
				out.I[i] = int64(math.Trunc(v))
			}
		default:
			out.I[i] = dt.Wrap(d.I[i])
		}
	}
	return out
}
