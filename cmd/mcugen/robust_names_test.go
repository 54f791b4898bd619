package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// hostileModel is a small float MLP whose tensor, node and graph names try
// to break out of C identifiers, comments, strings and file paths.
func hostileModel() []byte {
	b := onnx.NewBuilder("graph */ name\n#error injected", 13, 7)
	x := b.Input("input:0/../../x y", graph.Float32, 1, 8)
	w := b.Rand("weight */ #include <stdio.h>\n\"", 0.5, 8, 4)
	bias := b.Rand("bias\\", 0.5, 4)
	g := b.Model().Graph
	add := func(name, op string, in []string, out string) {
		g.Nodes = append(g.Nodes, &onnx.Node{Name: name, OpType: op, Input: in, Output: []string{out}})
	}
	add("struct", "MatMul", []string{x, w}, "int")
	add("a b/*c*/", "Add", []string{"int", bias}, "ünïcödé-ß")
	add("../../evil", "Relu", []string{"ünïcödé-ß"}, "../../etc/passwd")
	b.Output("../../etc/passwd", graph.Float32, 1, 4)
	return b.Model().Marshal()
}

var cIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// TestHostileNames compiles models whose file names, output paths, tensor
// and node names hold spaces, dots, dashes, quotes, comment markers, path
// separators and non-ASCII letters. Every file must land inside the output
// directory, the entry must be a C identifier, and the C must compile
// warning-free as C99 -pedantic (with a caller that includes the header).
func TestHostileNames(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed")
	}
	mlp, err := os.ReadFile("../../testdata/onnx/mlp.onnx")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, out string
		model     []byte
		extra     []string
	}{
		{"my model.v2-final.onnx", "out dir.v1", mlp, nil},
		{"ünïcödé-модель.onnx", "выход ß/x.y-z", mlp, nil},
		{"3d conv.onnx", "-o", mlp, nil},
		{"int.onnx", "a..b", mlp, nil},
		{"...onnx", "...", mlp, nil},
		{"-.onnx", "out'\"$(x)", mlp, nil},
		{"a'b\"c;$(touch pwned).onnx", "o;rm -rf", mlp, nil},
		{"hostile names.onnx", "hostile out", hostileModel(), nil},
		{"hostile names.onnx", "hostile arena", hostileModel(), []string{"--arena", "external", "--io", "in-arena"}},
		{"mlp.onnx", "prefix-escape", mlp, []string{"--prefix", "../../evil"}},
		{"mlp.onnx", "prefix-odd", mlp, []string{"--prefix", "my-model 2.0"}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s -> %s", i, c.file, c.out), func(t *testing.T) {
			root := t.TempDir()
			src := filepath.Join(root, "src")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			model := filepath.Join(src, c.file)
			if err := os.WriteFile(model, c.model, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(root, "dst", c.out)
			args := append([]string{"compile", model, "--board", "host", "-o", out, "--json"}, c.extra...)
			code, stdout, stderr := robustRun(args...)
			// Nothing may appear in root but src/ and dst/ (and dst holds only
			// the output directory's own path).
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if e.Name() != "src" && e.Name() != "dst" {
					t.Errorf("file %q written outside the output directory", e.Name())
				}
			}
			if srcEntries, _ := os.ReadDir(src); len(srcEntries) != 1 {
				t.Errorf("the model's directory holds %d entries, want only the model", len(srcEntries))
			}
			if _, err := os.Stat(filepath.Join(src, "pwned")); err == nil {
				t.Errorf("a shell command in the file name was executed")
			}
			if code != 0 {
				// A refused --prefix is fine if it is one clear line.
				if len(c.extra) > 0 && c.extra[0] == "--prefix" && code != 0 && strings.Count(stderr, "\n") == 1 {
					return
				}
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var r compileReport
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("--json: %v\n%s", err, stdout)
			}
			if !cIdent.MatchString(r.Entry) {
				t.Errorf("entry %q is not a C identifier", r.Entry)
			}
			var header string
			var cfiles []string
			walkErr := filepath.Walk(filepath.Join(root, "dst"), func(p string, info os.FileInfo, err error) error {
				if err != nil || info.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(out, p)
				if strings.HasPrefix(rel, "..") {
					t.Errorf("%s lies outside the output directory %s", p, out)
				}
				switch filepath.Ext(p) {
				case ".h":
					header = p
				case ".c":
					cfiles = append(cfiles, p)
				}
				return nil
			})
			if walkErr != nil {
				t.Fatal(walkErr)
			}
			for _, f := range r.Files {
				if rel, err := filepath.Rel(out, f); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("reported file %s lies outside %s", f, out)
				}
			}
			if header == "" || len(cfiles) == 0 {
				t.Fatalf("no .h or .c written: %v", r.Files)
			}
			// A caller that includes the header by its own name and takes the
			// entry's address: the header's names must be valid C.
			caller := filepath.Join(t.TempDir(), "caller.c")
			src2 := fmt.Sprintf("#include \"%s\"\nint main(void) {\n\tvoid (*volatile entry)(void) = (void (*)(void))%s;\n\treturn entry == 0;\n}\n", filepath.Base(header), r.Entry)
			if err := os.WriteFile(caller, []byte(src2), 0o644); err != nil {
				t.Fatal(err)
			}
			obj := t.TempDir()
			gccArgs := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I", filepath.Dir(header)}
			for j, f := range append(cfiles, caller) {
				cmd := exec.Command(gcc, append(gccArgs, "-o", filepath.Join(obj, fmt.Sprintf("%d.o", j)), f)...)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("gcc %s: %v\n%s", filepath.Base(f), err, clip(string(b)))
				}
			}
		})
	}
}
