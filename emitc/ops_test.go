package emitc

import (
	"testing"

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
			case 1:
				opts.ArenaExternal = true
			case 2:
				opts.IOInArena = true
			}
			checkModel(t, c.Graph, opts, 6)
		})
	}
}
