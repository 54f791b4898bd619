package templates

import (
	"debug/elf"
	"path/filepath"
	"strings"
	"testing"
)

// The Bazel project of a bare-metal board builds the model as firmware
// links it: Bazel's auto-configured toolchain adds the build machine's
// -fstack-protector and -fPIC and no -O, and KWS's library needed
// __stack_chk_guard, __stack_chk_fail and a GOT that bare-metal firmware
// lacks, and ran 41% slower (review finding). The library's copts now undo
// them after the toolchain's flags, and the README builds with -c opt.
func TestBazelCrossBareMetal40(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bazel")
	}
	needTool(t, "bazel", "arm-none-eabi-gcc")
	p := emitcProjectTarget(t, "../../shared/models/mlperf_tiny/kws/kws_ref_model.tflite", Bazel, board(t, "mps2-an386"), "dsp", 1)
	dir := t.TempDir()
	files, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, files["README.md"])
	if len(cmds) != 1 || len(cmds[0]) != 6 || cmds[0][3] != "-c" || cmds[0][4] != "opt" {
		t.Fatalf("README command %q, want CC=... bazel build -c opt //:...", cmds)
	}
	out := bazel(t, dir, cmds[0][:1], cmds[0][2], append([]string{"-s"}, cmds[0][3:]...)...)
	for _, flag := range []string{"-O2", "-fno-stack-protector", "-fno-pic"} {
		if !strings.Contains(out, flag) {
			t.Errorf("the compile command lacks %s:\n%s", flag, out)
		}
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "bazel-bin", "_objs", p.Prefix, "*.o"))
	if len(objs) == 0 {
		t.Fatalf("no objects")
	}
	for _, o := range objs {
		f, err := elf.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		for _, s := range syms {
			if s.Section == elf.SHN_UNDEF && s.Name != "" && s.Name != "memset" && s.Name != "memcpy" {
				t.Errorf("%s needs %s, which bare-metal firmware does not have", o, s.Name)
			}
		}
		f.Close()
	}
}
