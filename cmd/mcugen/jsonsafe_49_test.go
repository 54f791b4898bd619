package main

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/mcugen/mcugen/quant"
)

// quantize --json with a NaN held-out SQNR printed only "json: unsupported
// value: NaN" and exited 1 (quantizer review). printJSON now writes a
// non-finite number as a string, as the README says --json does, and
// anything finite exactly as encoding/json does.
func TestPrintJSONNonFinite49(t *testing.T) {
	ch := 12.5
	r := &quant.Report{Method: "minmax", OutputSQNRdB: math.NaN(), OutputSQNRMedianDB: math.Inf(-1), Samples: 2,
		Layers:  []quant.LayerReport{{Name: "fc", Op: "FullyConnected", Tensor: "y", SQNRdB: math.Inf(1), ChannelSQNRdB: &ch}},
		HeldOut: &quant.Report{Method: "minmax", OutputSQNRdB: 30}}
	var out bytes.Buffer
	e := &env{stdout: &out}
	if err := e.printJSON(r); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	layer := back["layers"].([]any)[0].(map[string]any)
	if back["output_sqnr_db"] != "NaN" || back["output_sqnr_median_db"] != "-Infinity" || layer["sqnr_db"] != "Infinity" ||
		layer["channel_sqnr_db"] != 12.5 || back["held_out"].(map[string]any)["output_sqnr_db"] != 30.0 {
		t.Errorf("printed:\n%s", out.String())
	}
	// Finite: the same bytes as encoding/json's.
	r.OutputSQNRdB, r.OutputSQNRMedianDB, r.Layers[0].SQNRdB = 40, 39, 41
	out.Reset()
	if err := e.printJSON(r); err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(r, "", "  ")
	safe, err := finiteJSON(reflectValue(r))
	if err != nil {
		t.Fatal(err)
	}
	viaSafe, _ := json.MarshalIndent(safe, "", "  ")
	if out.String() != string(want)+"\n" || string(viaSafe) != string(want) {
		t.Errorf("finite report printed\n%s\nwant\n%s\n(through finiteJSON:\n%s)", out.String(), want, viaSafe)
	}
}

func reflectValue(v any) reflect.Value { return reflect.ValueOf(v) }
