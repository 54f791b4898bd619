package templates

import (
	"bytes"
	"context"
	"debug/elf"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bazelbuild/buildtools/build"
)

// TestBazelFormatStable: the Bazel files parse and buildtools' formatter (buildifier's
// printer) leaves them unchanged; the rules are the ones the README names: for the host
// board the model's cc_library, the runtime and the cc_binary example, for any other
// board the model's cc_library alone, carrying the board's flags.
func TestBazelFormatStable(t *testing.T) {
	for _, bn := range []string{"host", "mps2-an386", "aarch64-linux"} {
		for _, name := range []string{"fake", "My Model v2.1 (ünïcode)"} {
			p := fakeProject(t, Bazel, board(t, bn), name, "")
			files, err := Files(p)
			if err != nil {
				t.Fatal(err)
			}
			for f, parse := range map[string]func(string, []byte) (*build.File, error){
				"WORKSPACE": build.ParseWorkspace, "BUILD.bazel": build.ParseBuild, "MODULE.bazel": build.ParseModule,
			} {
				parsed, err := parse(f, files[f])
				if err != nil {
					t.Fatalf("%s: %s does not parse: %v\n%s", bn, f, err, files[f])
				}
				if got := build.Format(parsed); !bytes.Equal(got, files[f]) {
					t.Errorf("%s: %s changes under the formatter:\n--- written\n%s--- formatted\n%s", bn, f, files[f], got)
				}
			}
			parsed, _ := build.ParseBuild("BUILD.bazel", files["BUILD.bazel"])
			id := Ident(name)
			kinds := map[string]string{}
			for _, r := range parsed.Rules("") {
				kinds[r.Name()] = r.Kind()
			}
			want := map[string]string{id: "cc_library"}
			if bn == "host" {
				want[id+"_example"] = "cc_binary"
				want["mcugen_runtime"] = "cc_library"
			}
			if len(kinds) != len(want) {
				t.Errorf("%s: rules %v, want %v", bn, kinds, want)
			}
			for r, k := range want {
				if kinds[r] != k {
					t.Errorf("%s: rules %v, want %v", bn, kinds, want)
				}
			}
			lib := parsed.Rules("cc_library")[0]
			copts := lib.AttrStrings("copts")
			for _, f := range board(t, bn).GCCFlags() {
				if bn != "host" && !slices.Contains(copts, f) {
					t.Errorf("%s: the model's copts %v lack the board's %s", bn, copts, f)
				}
			}
			if bn == "host" && !slices.Equal(copts, []string{"-std=c99"}) {
				t.Errorf("host: copts %v, want only -std=c99", copts)
			}
			if ls := lib.AttrLiteral("linkstatic"); (bn != "host") != (ls == "True") {
				t.Errorf("%s: linkstatic = %q", bn, ls)
			}
			for f := range files {
				if bn != "host" && (strings.HasPrefix(f, "runtime/") || strings.HasPrefix(f, "src/")) {
					t.Errorf("%s: %s written though the project has no host example", bn, f)
				}
			}
		}
	}
}

// TestBazelReadmeByBoard: the README offers `bazel run` of the example only for the host
// board; for a board with a cross compiler it builds the model's library with that
// compiler, says that nothing runs on the build machine and where to go instead.
func TestBazelReadmeByBoard(t *testing.T) {
	for _, c := range []struct {
		board, command string
		has, hasNot    []string
	}{
		{"host", "bazel run //:fake_example",
			[]string{"runs the model on the build machine", "plain C99"},
			[]string{"CC=", "no example"}},
		{"mps2-an386", "CC=arm-none-eabi-gcc bazel build -c opt //:fake",
			[]string{"for mps2-an386 (Bazel)", "`arm-none-eabi-gcc`", "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mthumb",
				"does not build for the build machine", "no example to `bazel run`", "under QEMU", "`--project make`", "`--board host`"},
			[]string{"bazel run //:", "runs the model on the build machine", "any C99 toolchain", "plain C99"}},
		{"aarch64-linux", "CC=aarch64-linux-gnu-gcc bazel build -c opt //:fake",
			[]string{"-march=armv8.2-a+dotprod", "no example to `bazel run`"},
			[]string{"bazel run //:", "any C99 toolchain"}},
		{"nucleo-l4r5zi", "CC=arm-none-eabi-gcc bazel build -c opt //:fake",
			[]string{"no example to `bazel run`", "`--project make`"},
			[]string{"bazel run //:", "under QEMU"}},
	} {
		files, err := Files(fakeProject(t, Bazel, board(t, c.board), "fake", ""))
		if err != nil {
			t.Fatal(err)
		}
		readme := string(files["README.md"])
		var cmds []string
		for _, w := range readmeCommands(t, files["README.md"]) {
			cmds = append(cmds, strings.Join(w, " "))
		}
		if got := strings.Join(cmds, "\n"); got != c.command {
			t.Errorf("%s: README commands %q, want %q", c.board, got, c.command)
		}
		for _, s := range c.has {
			if !strings.Contains(readme, s) {
				t.Errorf("%s: README lacks %q:\n%s", c.board, s, readme)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(readme, s) || strings.Contains(string(files["BUILD.bazel"]), s) {
				t.Errorf("%s: README or BUILD.bazel says %q:\n%s\n%s", c.board, s, readme, files["BUILD.bazel"])
			}
		}
	}
}

// bazel runs Bazel 4 (Debian's bazel-bootstrap 4.2.3) in dir without network, with env
// added to the environment, and returns its output. Bazel 4's default WORKSPACE suffix
// fetches rules_cc and rules_java from GitHub for its own C++ and Java toolchain
// definitions; offline, testdata/bazel's stand-ins (the native rules under the names
// those definitions load) take their place through --override_repository.
func bazel(t *testing.T, dir string, env []string, command string, args ...string) string {
	t.Helper()
	root, err := os.MkdirTemp("", "mcugen-bazel-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Bazel's install base is read-only: make it writable to remove it.
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(root)
	})
	stubs, err := filepath.Abs("testdata/bazel")
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"--batch", "--output_user_root=" + root, command,
		"--override_repository=rules_cc=" + filepath.Join(stubs, "rules_cc"),
		"--override_repository=rules_java=" + filepath.Join(stubs, "rules_java")}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bazel", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("bazel %s timed out:\n%s", strings.Join(full, " "), out)
	}
	if err != nil {
		t.Fatalf("bazel %s in %s: %v\n%s", strings.Join(full, " "), dir, err, out)
	}
	return string(out)
}

// TestBazelBuildOffline builds and runs the host project's example cc_binary with
// Bazel (the README's `bazel run`) and checks its outputs.
func TestBazelBuildOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bazel")
	}
	needTool(t, "bazel")
	p := fakeProject(t, Bazel, board(t, "host"), "fake", "")
	dir := t.TempDir()
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	checkExampleOutput(t, bazel(t, dir, nil, "run", "//:fake_example"), p)
}

// TestBazelCrossOffline runs the README's command of a mps2-an386 project whose model is
// emitc's DSP code (arm_acle.h, Thumb inline assembly), which the build machine's gcc
// cannot compile, and checks that Bazel built the model's library with Arm objects.
func TestBazelCrossOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bazel")
	}
	needTool(t, "bazel", "arm-none-eabi-gcc")
	p := emitcProjectTarget(t, bundledModel, Bazel, board(t, "mps2-an386"), "dsp", 1)
	src := string(p.Model[p.Prefix+".c"])
	if !strings.Contains(src, "#include <arm_acle.h>") {
		t.Fatalf("the dsp model does not use the DSP intrinsics; the test proves nothing")
	}
	dir := t.TempDir()
	files, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		if out, err := run(t, dir, time.Minute, "gcc", "-std=c99", "-Imodel", "-c", "model/"+p.Prefix+".c", "-o", filepath.Join(t.TempDir(), "x.o")); err == nil {
			t.Logf("the build machine's gcc compiled the DSP model (not x86?):\n%s", out)
		}
	}
	cmds := readmeCommands(t, files["README.md"])
	if len(cmds) != 1 || len(cmds[0]) != 6 || cmds[0][0] != "CC=arm-none-eabi-gcc" || cmds[0][1] != "bazel" {
		t.Fatalf("README command %q, want CC=arm-none-eabi-gcc bazel build -c opt //:%s", cmds, p.Prefix)
	}
	bazel(t, dir, cmds[0][:1], cmds[0][2], cmds[0][3:]...)
	lib := filepath.Join(dir, "bazel-bin", "lib"+p.Prefix+".a")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("the model library was not built: %v", err)
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "bazel-bin", "_objs", p.Prefix, "*.o"))
	if len(objs) == 0 {
		t.Fatalf("no objects under bazel-bin/_objs/%s", p.Prefix)
	}
	for _, o := range objs {
		f, err := elf.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != elf.EM_ARM {
			t.Errorf("%s is for %v, not Arm", o, f.Machine)
		}
		// Nothing of the build machine's defaults that bare-metal
		// firmware lacks (review finding: the stack protector's guard
		// and a GOT, from -fstack-protector and -fPIC).
		syms, _ := f.Symbols()
		for _, s := range syms {
			if s.Section == elf.SHN_UNDEF && (strings.HasPrefix(s.Name, "__stack_chk") || s.Name == "_GLOBAL_OFFSET_TABLE_") {
				t.Errorf("%s needs %s", o, s.Name)
			}
		}
		f.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "bazel-bin", "lib"+p.Prefix+".so")); err == nil {
		t.Errorf("a shared library was built for a bare-metal board")
	}
}
