package emitc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenModels are the two small models whose generated C is kept in
// testdata/ and reviewed: a float CNN and an int8 conv/pool/softmax net.
func goldenModels(t *testing.T) map[string]*graph.Graph {
	t.Helper()
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*graph.Graph{"small_cnn_f32": inferOrDie(t, smallFloatCNN())}
	for _, c := range cases {
		if c.Name == "depthwise_s8" {
			out["depthwise_s8"] = c.Graph
		}
	}
	return out
}

// diffText is a readable line diff of want and got.
func diffText(want, got string) string {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(want, got)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var sb strings.Builder
	for _, d := range diffs {
		prefix := "  "
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			prefix = "+ "
		case diffmatchpatch.DiffDelete:
			prefix = "- "
		default:
			continue
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(d.Text, "\n"), "\n") {
			sb.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	return sb.String()
}

func TestGolden(t *testing.T) {
	models := goldenModels(t)
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		g := models[name]
		t.Run(name, func(t *testing.T) {
			opts := Options{Prefix: name, Model: name + ".tflite", Version: "golden"}
			files, _, err := Compile(g, planFor(t, g, false), opts)
			if err != nil {
				t.Fatal(err)
			}
			again, _, err := Compile(g, planFor(t, g, false), opts)
			if err != nil {
				t.Fatal(err)
			}
			for fname, b := range files {
				if !bytes.Equal(b, again[fname]) {
					t.Errorf("%s: compiling twice gave different bytes", fname)
				}
				path := filepath.Join("testdata", fname+".golden")
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./emitc -update to create it)", err)
				}
				if !bytes.Equal(want, b) {
					t.Errorf("%s differs from %s (go test ./emitc -update refreshes it):\n%s", fname, path, diffText(string(want), string(b)))
				}
			}
		})
	}
}

// TestInt8IncludesOnly checks that int8 models include nothing beyond
// <stdint.h>, <stddef.h>, <string.h> (and their own header) and call no
// libm function.
func TestInt8IncludesOnly(t *testing.T) {
	cases, err := tirtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"<stdint.h>": true, "<stddef.h>": true, "<string.h>": true}
	for _, c := range cases {
		if !strings.HasSuffix(c.Name, "_s8") || c.Name == "quantize_s8" {
			continue
		}
		files, _, err := Compile(c.Graph, planFor(t, c.Graph, false), Options{Prefix: "m"})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for fname, b := range files {
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.HasPrefix(line, "#include") {
					continue
				}
				inc := strings.TrimSpace(strings.TrimPrefix(line, "#include"))
				if !allowed[inc] && inc != `"m.h"` {
					t.Errorf("%s: %s includes %s", c.Name, fname, inc)
				}
			}
			for _, fn := range []string{"expf(", "tanhf(", "roundf(", "floorf(", "float "} {
				if strings.Contains(string(b), fn) {
					t.Errorf("%s: %s uses %s", c.Name, fname, fn)
				}
			}
		}
	}
}
