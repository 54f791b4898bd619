package tflite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
)

// firmwareCase is a model whose generated C runs vecs in one session
// (states carried from one vector to the next) and must give want[v][i],
// output i of vector v, exactly.
type firmwareCase struct {
	name  string
	graph func(t *testing.T) *graph.Graph
	vecs  []map[string]*graph.Data
	want  [][][]int64
	// check, where set, judges vector v's outputs instead of want (float
	// outputs, several of other types).
	check func(t *testing.T, v int, outs []*graph.Data)
}

// matchesOnBoards compiles each case to C, checks it under strictC, and
// runs its vectors on the host with the sanitizers and, outside -short, on
// the Cortex-M4 under QEMU: the outputs are want (TFLite Micro's, in the
// callers) and agree with the reference session.
func matchesOnBoards(t *testing.T, prefix string, cases []firmwareCase, more ...string) {
	t.Helper()
	boards := []string{"host"}
	if !testing.Short() {
		boards = append(append(boards, "mps2-an386"), more...) // more: further QEMU boards
	}
	for _, bn := range boards {
		b, err := pipeline.LoadBoard(bn, "")
		if err != nil {
			t.Fatal(err)
		}
		tools := []string{"gcc"}
		if bn != "host" {
			tools = []string{"arm-none-eabi-gcc", "qemu-system-arm"}
		}
		for _, c := range cases {
			t.Run(bn+"/"+c.name, func(t *testing.T) {
				for _, tool := range tools {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("%s not installed", tool)
					}
				}
				opt := pipeline.Options{Board: b, Version: "test"}
				if bn == "host" {
					opt.CFlags = []string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}
				}
				s, err := pipeline.CompileGraph(c.graph(t), prefix+c.name, opt)
				if err != nil {
					t.Fatal(err)
				}
				strictC(t, s.Files, bn != "host", b.GCCFlags()...)
				x, err := s.Execute(c.vecs, t.TempDir(), 2*time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if len(x.Outputs) != len(c.vecs) {
					t.Fatalf("%d vectors run, want %d", len(x.Outputs), len(c.vecs))
				}
				for v := range c.vecs {
					if c.check != nil {
						c.check(t, v, x.Outputs[v])
						continue
					}
					for i, want := range c.want[v] {
						if got := x.Outputs[v][i].I; !slices.Equal(got, want) {
							t.Fatalf("vector %d output %d: the firmware gives %v, TFLite Micro %v", v, i, got, want)
						}
					}
				}
				if !x.AllMatch() {
					t.Errorf("the firmware disagrees with the reference session: %v", x.Match)
				}
			})
		}
	}
}

// strictC compiles every generated .c file with the project's strictest
// flags (C99, pedantic, every warning an error), for the host or the
// Cortex-M4.
func strictC(t *testing.T, files map[string][]byte, arm bool, armFlags ...string) {
	t.Helper()
	dir := t.TempDir()
	var srcs []string
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".c") {
			srcs = append(srcs, name)
		}
	}
	cc, args := "gcc", []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c"}
	if arm {
		cc, args = "arm-none-eabi-gcc", append(args, "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
		if len(armFlags) > 0 { // the board's own
			cc, args = "arm-none-eabi-gcc", append(args[:7:7], armFlags...)
		}
	}
	for _, src := range srcs {
		cmd := exec.Command(cc, append(args, src)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, src, err, out)
		}
	}
}
