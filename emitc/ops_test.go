package emitc

import (
	"strings"
	"testing"

	"github.com/mcugen/mcugen/tir"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// TestOpsHost compiles every op graph of tirtest with gcc (sanitizers on)
// and arm-none-eabi-gcc, runs it on random inputs and compares with the
// reference interpreter: bit-exact for int8, 1e-5 relative for float.
func TestOpsHost(t *testing.T) {
	if testing.Short() {
		t.Skip("long: one gcc build per op graph")
	}
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			opts := Options{Prefix: "op", Model: c.Name}
			switch i % 3 {
			case 0:
				opts.WeightsSection = ".rodata.mcugen_weights"
			case 1:
				opts.ArenaExternal = true
			case 2:
				opts.IOInArena = true
			}
			checkModel(t, c.Graph, opts, 6)
		})
	}
}

// TestTensorizedConvHost turns the int8 conv reduction into the dot
// intrinsic (knob tensorize_dot) and checks the C against the reference.
func TestTensorizedConvHost(t *testing.T) {
	if testing.Short() {
		t.Skip("long: gcc builds")
	}
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	target := tir.Generic.WithKnobs("conv2d", map[string]int{"tensorize_dot": 1})
	for _, c := range cases {
		if c.Name != "conv_s8" && c.Name != "grouped_conv_s8" && c.Name != "conv_dilated_s8" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			_, files := checkModelTarget(t, c.Graph, Options{Prefix: "tz"}, target, 4)
			if !strings.Contains(string(files["tz.c"]), "dot_s8_s8(") {
				t.Fatalf("no dot call in the generated C")
			}
		})
	}
}
