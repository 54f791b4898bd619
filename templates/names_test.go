package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestIdent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kws", "kws"},
		{"My Model v2.1", "My_Model_v2_1"},
		{"ds-cnn.int8.tflite", "ds_cnn_int8_tflite"},
		{"modèle_réseau", "modele_reseau"},
		{"模型", "model"},
		{"3x3 conv", "m3x3_conv"},
		{"__init__", "init"},
		{"int", "int_"},
		{"class", "class_"},
		{"", "model"},
		{"a//..//b", "a_b"},
	} {
		if got := Ident(c.in); got != c.want {
			t.Errorf("Ident(%q) = %q, want %q", c.in, got, c.want)
		}
		if !IsIdent(Ident(c.in)) {
			t.Errorf("Ident(%q) = %q is not an identifier", c.in, Ident(c.in))
		}
	}
}

// TestHostileNames: a model name and an output path with spaces, dots, dashes and
// non-ASCII characters give valid C identifiers and file names, the project builds and
// runs, and nothing is written outside the output directory.
func TestHostileNames(t *testing.T) {
	const name = "My Model v2.1 - ünïcødé.tflite"
	id := Ident(name)
	safe := regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)
	parent := t.TempDir()
	out := filepath.Join(parent, "out dir", "ü.x-y z")
	for _, k := range Kinds {
		b := board(t, "host")
		if k == Zephyr || k == Arduino {
			b = board(t, "nucleo-l4r5zi")
		}
		p := fakeProject(t, k, b, name, "")
		dir := filepath.Join(out, string(k))
		written, err := Write(dir, p)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		for _, f := range written {
			if !safe.MatchString(f) || strings.Contains(f, "..") {
				t.Errorf("%s: file name %q is not safe", k, f)
			}
		}
		if k == Arduino && !strings.Contains(strings.Join(written, " "), "examples/"+id+"/"+id+".ino") {
			t.Errorf("arduino: no examples/%s/%s.ino in %v", id, id, written)
		}
	}
	// Everything is under out: the parent holds only "out dir".
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "out dir" {
		t.Errorf("files outside the output directory: %v", entries)
	}
	if _, err := lookPath("make"); err == nil && !testing.Short() {
		// The make project for the host: the identifiers compile and the program runs.
		o := mustRun(t, filepath.Join(out, "make"), 2*time.Minute, "make", "-s", "run")
		checkExampleOutput(t, o, fakeProject(t, Make, board(t, "host"), name, ""))
	}
}

func TestRefusesEscapes(t *testing.T) {
	p := fakeProject(t, Make, board(t, "mps2-an386"), "fake", "")
	for _, bad := range []string{"../evil.c", "/abs.c", "sub/x.c", ".hidden.c", "a b.c", "x\\y.c"} {
		q := p
		q.Model = map[string][]byte{"fake.h": p.Model["fake.h"], bad: []byte("int x;\n")}
		if _, err := Files(q); err == nil {
			t.Errorf("model file %q accepted", bad)
		}
	}
	// A symbolic link inside the output directory that points outside is not followed.
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	dir := filepath.Join(parent, "out")
	for _, d := range []string{outside, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "src")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, err := Write(dir, p); err == nil {
		t.Errorf("Write followed a symlink out of the output directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files written outside: %v", entries)
	}
}

// TestReadmes: every template has a README whose first sh block holds the one or two
// commands that build and run it (the make and cmake tests run those very commands).
func TestReadmes(t *testing.T) {
	want := map[Kind]string{
		Make:    "make run",
		CMake:   "cmake -B build -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake\ncmake --build build --target run",
		Zephyr:  "west build -b nucleo_l4r5zi .\nwest flash",
		Arduino: "arduino-cli compile --fqbn STMicroelectronics:stm32:Nucleo_144:pnum=NUCLEO_L4R5ZI --library . examples/fake\narduino-cli upload -p PORT --fqbn STMicroelectronics:stm32:Nucleo_144:pnum=NUCLEO_L4R5ZI examples/fake",
		Bazel:   "CC=arm-none-eabi-gcc bazel build -c opt //:fake", // the host's: TestBazelReadmeByBoard
	}
	for _, k := range Kinds {
		b := board(t, "mps2-an386")
		if k == Zephyr || k == Arduino {
			b = board(t, "nucleo-l4r5zi")
		}
		files, err := Files(fakeProject(t, k, b, "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, c := range readmeCommands(t, files["README.md"]) {
			lines = append(lines, strings.Join(c, " "))
		}
		if got := strings.Join(lines, "\n"); got != want[k] {
			t.Errorf("%s README commands:\n%s\nwant:\n%s", k, got, want[k])
		}
	}
}

// TestDeterministic: the same project gives byte-identical files, for every template
// (Bazel both for a cross board and for the host, with its example).
func TestDeterministic(t *testing.T) {
	type kb struct {
		k Kind
		b string
	}
	var cases []kb
	for _, k := range Kinds {
		b := "mps2-an386"
		if k == Zephyr || k == Arduino {
			b = "nucleo-l4r5zi"
		}
		cases = append(cases, kb{k, b})
	}
	cases = append(cases, kb{Bazel, "host"})
	for _, tc := range cases {
		k, b := tc.k, board(t, tc.b)
		a, err := Files(fakeProject(t, k, b, "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := Files(fakeProject(t, k, b, "fake", ""))
		if len(a) != len(c) {
			t.Fatalf("%s: %d files, then %d", k, len(a), len(c))
		}
		for n := range a {
			if string(a[n]) != string(c[n]) {
				t.Errorf("%s: %s differs between two runs", k, n)
			}
		}
	}
}
