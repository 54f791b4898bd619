package onnx

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
)

// An initializer of a type mcugen has no form for (ONNX's INT4 = 22,
// FLOAT8E4M3FN = 17, UINT16 = 4: blocked 4-bit weights, float8, ONNX
// Runtime's 16-bit QDQ zero points) was refused as `initializer "z": tensor
// data type INT4`: neither the node it belongs to nor "not supported".
func TestInitializerTypeNamesNode50(t *testing.T) {
	for _, c := range []struct {
		dt   int32
		name string
	}{{22, "INT4"}, {17, "FLOAT8E4M3FN"}, {TUint16, "UINT16"}} {
		b := NewBuilder("qtype", 21, 1)
		x := b.Input("x", graph.Float32, 1, 4)
		s := b.Scalar("s", graph.Float32, 0.5)
		b.Model().Graph.Initializer = append(b.Model().Graph.Initializer, &Tensor{Name: "z", DataType: c.dt, RawData: []byte{0, 0}})
		b.Output(b.Node("DequantizeLinear", []string{b.Node("QuantizeLinear", []string{x, s, "z"}), s, "z"}), graph.Float32)
		_, err := Decode("qtype", b.Model().Marshal(), Options{})
		if err == nil {
			t.Fatalf("%s: imported", c.name)
		}
		msg := err.Error()
		for _, want := range []string{`initializer "z"`, `node "QuantizeLinear_`, c.name, "not supported"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", c.name, msg, want)
			}
		}
		if strings.Count(msg, "\n") > 0 {
			t.Errorf("%s: more than one line: %q", c.name, msg)
		}
	}
}
