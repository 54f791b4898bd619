package templates

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bazelbuild/buildtools/build"
)

// TestBazelFormatStable: the Bazel files parse and buildtools' formatter (buildifier's
// printer) leaves them unchanged; the rules are the ones the README names.
func TestBazelFormatStable(t *testing.T) {
	for _, name := range []string{"fake", "My Model v2.1 (ünïcode)"} {
		p := fakeProject(t, Bazel, board(t, "mps2-an386"), name, "")
		files, err := Files(p)
		if err != nil {
			t.Fatal(err)
		}
		for f, parse := range map[string]func(string, []byte) (*build.File, error){
			"WORKSPACE": build.ParseWorkspace, "BUILD.bazel": build.ParseBuild,
		} {
			parsed, err := parse(f, files[f])
			if err != nil {
				t.Fatalf("%s does not parse: %v\n%s", f, err, files[f])
			}
			if got := build.Format(parsed); !bytes.Equal(got, files[f]) {
				t.Errorf("%s changes under the formatter:\n--- written\n%s--- formatted\n%s", f, files[f], got)
			}
		}
		parsed, _ := build.ParseBuild("BUILD.bazel", files["BUILD.bazel"])
		id := Ident(name)
		kinds := map[string]string{}
		for _, r := range parsed.Rules("") {
			kinds[r.Name()] = r.Kind()
		}
		if kinds[id] != "cc_library" || kinds[id+"_example"] != "cc_binary" {
			t.Errorf("rules %v: want cc_library %q and cc_binary %q", kinds, id, id+"_example")
		}
	}
}

// TestBazelBuildOffline builds and runs the example cc_binary with Debian's bazel-bootstrap
// (Bazel 4.2.3) without network. Bazel 4's default WORKSPACE suffix fetches rules_cc and
// rules_java from GitHub for its own C++ and Java toolchain definitions; offline, the test
// points them at testdata/bazel's stand-ins (the native rules under the names those
// definitions load) with --override_repository.
func TestBazelBuildOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bazel")
	}
	needTool(t, "bazel")
	p := fakeProject(t, Bazel, board(t, "mps2-an386"), "fake", "")
	dir := t.TempDir()
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
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
	out := mustRun(t, dir, 10*time.Minute, "bazel", "--batch", "--output_user_root="+root, "run",
		"--override_repository=rules_cc="+filepath.Join(stubs, "rules_cc"),
		"--override_repository=rules_java="+filepath.Join(stubs, "rules_java"),
		"//:fake_example")
	checkExampleOutput(t, out, p)
}
