package templates

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/boards"
)

// needTool skips the test when a tool is missing, except in CI (CI=true), where a
// missing tool is a failure.
func needTool(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (CI=true: a missing toolchain fails)", tool)
			}
			t.Skipf("%s is not installed; skipping (run scripts/setup.sh)", tool)
		}
	}
}

func board(t *testing.T, name string) *boards.Board {
	t.Helper()
	c, err := boards.Load("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// avrBoardFile is how a user gets an Arduino library for an 8-bit AVR board: a board file
// (--boards FILE) whose board builds the generic C99 kernels (it inherits the host's
// "no core-specific code") and names the board's FQBN.
const avrBoardFile = `board(
    name = "arduino-mega",
    description = "Arduino Mega 2560 (ATmega2560), generic C99 kernels",
    inherits = "host",
    arduino = "arduino:avr:mega:cpu=atmega2560",
)
`

// avrBoard is avrBoardFile's board.
func avrBoard(t *testing.T) *boards.Board {
	t.Helper()
	c, err := boards.LoadData("avr.star", []byte(avrBoardFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get("arduino-mega")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeModel returns testdata/fake's sources renamed to prefix.
func fakeModel(t *testing.T, prefix string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"fake.h", "fake.c"} {
		b, err := os.ReadFile(filepath.Join("testdata", "fake", f))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "fake", prefix)
		s = strings.ReplaceAll(s, "FAKE", strings.ToUpper(prefix))
		out[prefix+strings.TrimPrefix(f, "fake")] = []byte(s)
	}
	return out
}

// fakeExpect computes the fake model's outputs independently of its C: y[i] =
// saturate_int8(x[i] + 3i - 10), z = 1000 * sum(x) as little-endian int32.
func fakeExpect(x []byte) (y, z []byte) {
	y = make([]byte, len(x))
	var sum int32
	for i, b := range x {
		v := int(int8(b)) + 3*i - 10
		v = max(-128, min(127, v))
		y[i] = byte(int8(v))
		sum += int32(int8(b)) * 1000
	}
	z = binary.LittleEndian.AppendUint32(nil, uint32(sum))
	return y, z
}

// fakeInputs are the test inputs: saturation both ways, zero, a ramp.
var fakeInputs = [][]byte{
	{0x7f, 0x7e, 0x80, 0x81, 0x00, 0x01, 0xff, 0x7b},
	{0, 1, 2, 3, 4, 5, 6, 7},
	{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
}

func fakeProject(t *testing.T, kind Kind, b *boards.Board, name, prefix string) Project {
	t.Helper()
	id := prefix
	if id == "" {
		id = Ident(name)
	}
	p := Project{
		Kind: kind, Name: name, Prefix: prefix, Board: b,
		Model:      fakeModel(t, id),
		Inputs:     []Tensor{{Name: "x", DType: "int8", Shape: []int{1, 8}}},
		Outputs:    []Tensor{{Name: "y", DType: "int8", Shape: []int{1, 8}}, {Name: "z", DType: "int32", Shape: []int{1}}},
		ArenaBytes: 8, WeightsBytes: 8,
	}
	for _, x := range fakeInputs {
		y, z := fakeExpect(x)
		p.Vectors = append(p.Vectors, Vector{Inputs: [][]byte{x}, Outputs: [][]byte{y, z}})
	}
	return p
}

// run runs a command in dir with a timeout and returns its combined output.
func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s %s: timed out after %v", name, strings.Join(args, " "), timeout)
	}
	return out.String(), err
}

func mustRun(t *testing.T, dir string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	out, err := run(t, dir, timeout, name, args...)
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return out
}

// checkExampleOutput checks what the example program printed against the vectors'
// expected outputs (computed in Go) and the final verdict.
func checkExampleOutput(t *testing.T, out string, p Project) {
	t.Helper()
	for v, vec := range p.Vectors {
		for o, want := range vec.Outputs {
			line := fmt.Sprintf("vector %d output %s %s", v, Ident(p.Outputs[o].Name), hex.EncodeToString(want))
			if !strings.Contains(out, line+"\n") && !strings.Contains(out, line+"\r\n") {
				t.Errorf("output lacks %q:\n%s", line, out)
			}
		}
		if !strings.Contains(out, fmt.Sprintf("vector %d match", v)) {
			t.Errorf("vector %d not reported as a match:\n%s", v, out)
		}
	}
	if !strings.Contains(out, "done, 0 mismatches") {
		t.Errorf("no \"done, 0 mismatches\":\n%s", out)
	}
}

func lookPath(tool string) (string, error) { return exec.LookPath(tool) }

// readmeCommands returns the commands of the README's first ```sh block, one per line,
// split into words (the READMEs quote nothing).
func readmeCommands(t *testing.T, readme []byte) [][]string {
	t.Helper()
	s := string(readme)
	i := strings.Index(s, "```sh\n")
	if i < 0 {
		t.Fatalf("README has no sh block:\n%s", s)
	}
	s = s[i+len("```sh\n"):]
	s = s[:strings.Index(s, "```")]
	var cmds [][]string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		cmds = append(cmds, strings.Fields(l))
	}
	return cmds
}

// runReadme runs the README's commands in dir and returns the output of the last one.
func runReadme(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	var out string
	for _, c := range readmeCommands(t, files["README.md"]) {
		out = mustRun(t, dir, 3*time.Minute, c[0], c[1:]...)
	}
	return out
}
