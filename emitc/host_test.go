package emitc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/tir"
)

// planFor plans g the way the CLI will: the generic kernels veto in-place
// runs they cannot do.
func planFor(t testing.TB, g *graph.Graph, ioInArena bool) *memplan.Plan {
	t.Helper()
	opt := memplan.DefaultOptions()
	opt.IOInArena = ioInArena
	opt.InPlaceOK = tir.InPlaceOK
	p, err := memplan.Build(g, opt)
	if err != nil {
		t.Fatalf("memplan: %v", err)
	}
	return p
}

func toBytes(d *graph.Data) []byte {
	var b bytes.Buffer
	switch d.DType {
	case graph.Float32:
		for _, f := range d.F {
			binary.Write(&b, binary.LittleEndian, f)
		}
	case graph.Int8, graph.UInt8, graph.Bool:
		for _, v := range d.I {
			b.WriteByte(byte(v))
		}
	case graph.Int16:
		for _, v := range d.I {
			binary.Write(&b, binary.LittleEndian, int16(v))
		}
	case graph.Int32:
		for _, v := range d.I {
			binary.Write(&b, binary.LittleEndian, int32(v))
		}
	case graph.Int64:
		for _, v := range d.I {
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	return b.Bytes()
}

func fromBytes(t *graph.Tensor, b []byte) *graph.Data {
	d := graph.NewData(t.DType, t.Shape)
	for i := 0; i < d.Len(); i++ {
		switch t.DType {
		case graph.Float32:
			d.F[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case graph.Int8:
			d.I[i] = int64(int8(b[i]))
		case graph.UInt8, graph.Bool:
			d.I[i] = int64(b[i])
		case graph.Int16:
			d.I[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case graph.Int32:
			d.I[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case graph.Int64:
			d.I[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return d
}

func randomInput(r *rand.Rand, t *graph.Tensor) *graph.Data {
	d := graph.NewData(t.DType, t.Shape)
	if t.DType == graph.Float32 {
		for i := range d.F {
			d.F[i] = float32(r.NormFloat64())
		}
		return d
	}
	lo, hi := t.DType.Range()
	if hi-lo > 1<<16 || hi-lo < 0 {
		lo, hi = -1000, 1000 // 32- and 64-bit integers: indices, counts
	}
	for i := range d.I {
		d.I[i] = lo + r.Int63n(hi-lo+1)
	}
	return d
}

// harness is a test main: it reads whole input sets from stdin until EOF,
// runs the model on each and writes the outputs to stdout.
func harness(m *tir.Module, opts Options) string {
	p := prefixOf(opts, m)
	P := strings.ToUpper(p)
	var sb strings.Builder
	fmt.Fprintf(&sb, "#include \"%s.h\"\n#include <stdio.h>\n#include <stdlib.h>\n\n", p)
	if opts.ArenaExternal {
		fmt.Fprintf(&sb, "static uint8_t arena_mem[%s_ARENA_SIZE + 16] __attribute__((aligned(16)));\n", P)
	}
	arena := ""
	if opts.ArenaExternal {
		arena = "arena_mem"
	}
	for i, in := range m.Inputs {
		if !m.IOInArena {
			fmt.Fprintf(&sb, "static uint8_t in%d[%d + 1] __attribute__((aligned(16)));\n", i, in.Bytes)
		}
	}
	for i, o := range m.Outputs {
		if !m.IOInArena {
			fmt.Fprintf(&sb, "static uint8_t out%d[%d + 1] __attribute__((aligned(16)));\n", i, o.Bytes)
		}
	}
	sb.WriteString("int main(void)\n{\n")
	if !m.IOInArena {
		fmt.Fprintf(&sb, "    struct %s_inputs ins;\n    struct %s_outputs outs;\n", p, p)
	}
	sb.WriteString("    for (;;) {\n")
	for i, in := range m.Inputs {
		buf := fmt.Sprintf("in%d", i)
		if m.IOInArena {
			ptr := fmt.Sprintf("%s_input_ptr", p)
			if i > 0 {
				ptr = fmt.Sprintf("%s_input%d_ptr", p, i)
			}
			buf = fmt.Sprintf("(uint8_t *)%s(%s)", ptr, arena)
		}
		fmt.Fprintf(&sb, "        if (fread(%s, 1, %d, stdin) != %d) {\n            return 0;\n        }\n", buf, in.Bytes, in.Bytes)
	}
	if m.IOInArena {
		fmt.Fprintf(&sb, "        if (%s_run(%s) != 0) {\n            return 2;\n        }\n", p, arena)
	} else {
		// The members as the header names them (a copy of the naming rule
		// here went stale when the rule changed).
		inNames, outNames := ioNames(m, opts)
		for i := range m.Inputs {
			fmt.Fprintf(&sb, "        ins.%s = in%d;\n", inNames[i], i)
		}
		for i := range m.Outputs {
			fmt.Fprintf(&sb, "        outs.%s = out%d;\n", outNames[i], i)
		}
		a := ""
		if opts.ArenaExternal {
			a = ", arena_mem"
		}
		fmt.Fprintf(&sb, "        if (%s_run(&ins, &outs%s) != 0) {\n            return 2;\n        }\n", p, a)
	}
	for i, o := range m.Outputs {
		buf := fmt.Sprintf("out%d", i)
		if m.IOInArena {
			ptr := fmt.Sprintf("%s_output_ptr", p)
			if i > 0 {
				ptr = fmt.Sprintf("%s_output%d_ptr", p, i)
			}
			buf = fmt.Sprintf("(uint8_t *)%s(%s)", ptr, arena)
		}
		fmt.Fprintf(&sb, "        fwrite(%s, 1, %d, stdout);\n", buf, o.Bytes)
	}
	sb.WriteString("    }\n}\n")
	return sb.String()
}

var hostFlags = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"}

// buildHost writes files plus the harness to a temp dir and compiles them.
func buildHost(t testing.TB, m *tir.Module, files map[string][]byte, opts Options) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte(harness(m, opts)), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "model")
	args := append(append([]string{}, hostFlags...), "-o", exe, filepath.Join(dir, prefixOf(opts, m)+".c"), filepath.Join(dir, "main.c"))
	if m.Float {
		args = append(args, "-lm")
	}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s\n--- generated C ---\n%s", err, out, numbered(files[prefixOf(opts, m)+".c"]))
	}
	return exe
}

// crossCompile checks the sources build for a Cortex-M4 warning-free.
// crossCompile builds the C for a Cortex-M4F and returns the -Os object's
// path ("" when arm-none-eabi-gcc is absent).
func crossCompile(t testing.TB, files map[string][]byte, prefix string) string {
	t.Helper()
	if _, err := exec.LookPath("arm-none-eabi-gcc"); err != nil {
		t.Log("arm-none-eabi-gcc not installed: skipping the Cortex-M4 build")
		return ""
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -Os; -Os with a frame pointer (r7 taken: the dsp LDM blocks must
	// still find their registers); -O0, where they fall back to their C form.
	for i, opt := range [][]string{{"-Os"}, {"-Os", "-fno-omit-frame-pointer"}, {"-O0"}} {
		args := append([]string{"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard"}, opt...)
		args = append(args, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
			"-o", filepath.Join(dir, fmt.Sprintf("model%d.o", i)), filepath.Join(dir, prefix+".c"))
		if out, err := exec.Command("arm-none-eabi-gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("arm-none-eabi-gcc %v: %v\n%s", opt, err, out)
		}
	}
	return filepath.Join(dir, "model0.o")
}

func numbered(b []byte) string {
	lines := strings.Split(string(b), "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%4d %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}

// runHost runs the compiled model on a batch of input sets.
func runHost(t testing.TB, exe string, g *graph.Graph, cases []map[string]*graph.Data) []map[string]*graph.Data {
	t.Helper()
	var stdin bytes.Buffer
	for _, c := range cases {
		for _, name := range g.Inputs {
			stdin.Write(toBytes(c[name]))
		}
	}
	cmd := exec.Command(exe)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the model: %v\n%s", err, stderr.String())
	}
	var res []map[string]*graph.Data
	for range cases {
		m := map[string]*graph.Data{}
		for _, name := range g.Outputs {
			tt := g.Tensor(name)
			n := tt.Bytes()
			if len(out) < n {
				t.Fatalf("model wrote too little output")
			}
			m[name] = fromBytes(tt, out[:n])
			out = out[n:]
		}
		res = append(res, m)
	}
	return res
}

// compare checks got against the reference: bit-exact for integers, within
// 1e-5 relative (of the output's largest magnitude) for float.
func compare(t testing.TB, what string, want, got *graph.Data) {
	t.Helper()
	if want.Len() != got.Len() {
		t.Fatalf("%s: %d elements, want %d", what, got.Len(), want.Len())
	}
	if want.DType == graph.Float32 {
		scale := 1e-30
		for _, v := range want.F {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for i := range want.F {
			d := math.Abs(float64(want.F[i]) - float64(got.F[i]))
			if d > 1e-5*math.Max(scale, 1e-3) && d > 1e-5*math.Abs(float64(want.F[i])) {
				t.Fatalf("%s[%d] = %g, reference %g", what, i, got.F[i], want.F[i])
			}
		}
		return
	}
	bad := 0
	for i := range want.I {
		if want.I[i] != got.I[i] {
			if bad < 5 {
				t.Errorf("%s[%d] = %d, reference %d", what, i, got.I[i], want.I[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ", what, bad, want.Len())
	}
}

// checkModel compiles g, runs it natively on n random inputs (plus extra)
// and compares with the reference interpreter.
func checkModel(t *testing.T, g *graph.Graph, opts Options, n int, extra ...map[string]*graph.Data) (*tir.Module, map[string][]byte) {
	t.Helper()
	return checkModelTarget(t, g, opts, *tir.Generic, n, extra...)
}

// checkModelTarget is checkModel with a given schedule target.
func checkModelTarget(t *testing.T, g *graph.Graph, opts Options, target tir.Target, n int, extra ...map[string]*graph.Data) (*tir.Module, map[string][]byte) {
	t.Helper()
	plan := planFor(t, g, opts.IOInArena)
	m, err := tir.Lower(g, plan, target)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Emit(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	exe := buildHost(t, m, files, opts)
	crossCompile(t, files, prefixOf(opts, m))
	r := rand.New(rand.NewSource(1))
	cases := append([]map[string]*graph.Data{}, extra...)
	for i := 0; i < n; i++ {
		c := map[string]*graph.Data{}
		for _, name := range g.Inputs {
			c[name] = randomInput(r, g.Tensor(name))
		}
		cases = append(cases, c)
	}
	got := runHost(t, exe, g, cases)
	for i, c := range cases {
		want, err := interp.Run(g, c)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		for _, name := range g.Outputs {
			compare(t, fmt.Sprintf("case %d output %q", i, name), want[name], got[i][name])
		}
	}
	return m, files
}
