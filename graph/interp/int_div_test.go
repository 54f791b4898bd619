package interp

import (
	"reflect"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// Plain integer Div truncates toward zero, as C does: 7/2 = 3, -7/2 = -3.
func TestIntDiv(t *testing.T) {
	a := &graph.Data{DType: graph.Int32, Shape: []int{2, 2}, I: []int64{7, -7, 100, 9}}
	b := &graph.Data{DType: graph.Int32, Shape: []int{2}, I: []int64{2, 3}}
	y := mustRun(t, graph.Div, nil, []int{2, 2}, a, b)
	if want := []int64{3, -2, 50, 3}; !reflect.DeepEqual(y.I, want) {
		t.Errorf("Div = %v, want %v", y.I, want)
	}
	u := &graph.Data{DType: graph.UInt8, Shape: []int{3}, I: []int64{255, 10, 3}}
	v := &graph.Data{DType: graph.UInt8, Shape: []int{3}, I: []int64{2, 10, 4}}
	if y := mustRun(t, graph.Div, nil, []int{3}, u, v); !reflect.DeepEqual(y.I, []int64{127, 1, 0}) {
		t.Errorf("uint8 Div = %v", y.I)
	}
	zero := &graph.Data{DType: graph.Int32, Shape: []int{1}, I: []int64{0}}
	if y := mustRun(t, graph.Div, nil, []int{2, 2}, a, zero); !reflect.DeepEqual(y.I, []int64{0, 0, 0, 0}) {
		t.Errorf("x/0 = %v, want 0 (as the generated C defines it)", y.I)
	}
	// Plain integers wrap to the output type, as C's conversions do.
	s8 := &graph.Data{DType: graph.Int8, Shape: []int{2}, I: []int64{-128, 100}}
	m1 := &graph.Data{DType: graph.Int8, Shape: []int{2}, I: []int64{-1, 2}}
	if y := mustRun(t, graph.Div, nil, []int{2}, s8, m1); !reflect.DeepEqual(y.I, []int64{-128, 50}) {
		t.Errorf("int8 -128/-1 = %v, want -128 (wrapped)", y.I)
	}
	if y := mustRun(t, graph.Add, nil, []int{2}, s8, s8); !reflect.DeepEqual(y.I, []int64{0, -56}) {
		t.Errorf("int8 Add = %v, want [0 -56] (wrapped)", y.I)
	}
}
