package templates

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestMLF(t *testing.T) {
	p := fakeProject(t, "", board(t, "mps2-an386"), "fake", "")
	p.ArenaBytes, p.WeightsBytes = 1234, 567
	tarb, err := MLF(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := MLF(p)
	if err != nil || !bytes.Equal(tarb, again) {
		t.Fatalf("MLF is not deterministic (err %v)", err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(tarb))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.Name, "./") || strings.Contains(h.Name, "..") {
			t.Errorf("entry %q: not a ./ path inside the archive", h.Name)
		}
		if h.Uname != "root" || h.Uid != 0 {
			t.Errorf("entry %q owned by %s/%d", h.Name, h.Uname, h.Uid)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
	for _, want := range []string{"metadata.json", "codegen/host/src/fake.c", "codegen/host/include/fake.h", "runtime/crt.h", "runtime/mcugen.ld"} {
		if _, ok := files[want]; !ok {
			t.Errorf("archive lacks %s (has %v)", want, keys(files))
		}
	}
	if !bytes.Equal(files["codegen/host/include/fake.h"], p.Model["fake.h"]) {
		t.Errorf("the header in the archive differs from the model's")
	}
	// The metadata keys microTVM's tools read, with the figures of this project:
	// io = 8 (x) + 8 (y) + 4 (z) bytes.
	var meta struct {
		Version int `json:"version"`
		Modules map[string]struct {
			ModelName string   `json:"model_name"`
			Executors []string `json:"executors"`
			Style     string   `json:"style"`
			Memory    struct {
				Functions struct {
					Main []struct {
						Device    int `json:"device"`
						Workspace int `json:"workspace_size_bytes"`
						Constants int `json:"constants_size_bytes"`
						IO        int `json:"io_size_bytes"`
						Inputs    map[string]struct {
							Dtype string `json:"dtype"`
							Size  int    `json:"size"`
						} `json:"inputs"`
						Outputs map[string]struct {
							Dtype string `json:"dtype"`
							Size  int    `json:"size"`
						} `json:"outputs"`
					} `json:"main"`
				} `json:"functions"`
			} `json:"memory"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(files["metadata.json"], &meta); err != nil {
		t.Fatal(err)
	}
	mod, ok := meta.Modules["fake"]
	if meta.Version != 7 || !ok || mod.ModelName != "fake" || mod.Style != "full-model" || len(mod.Executors) != 1 || mod.Executors[0] != "aot" {
		t.Fatalf("metadata: %s", files["metadata.json"])
	}
	mainFn := mod.Memory.Functions.Main
	if len(mainFn) != 1 || mainFn[0].Workspace != 1234 || mainFn[0].Constants != 567 || mainFn[0].IO != 20 || mainFn[0].Device != 1 {
		t.Errorf("memory figures: %+v", mainFn)
	}
	if in := mainFn[0].Inputs["x"]; in.Dtype != "int8" || in.Size != 8 {
		t.Errorf("input x: %+v", in)
	}
	if z := mainFn[0].Outputs["z"]; z.Dtype != "int32" || z.Size != 4 {
		t.Errorf("output z: %+v", z)
	}
	if !strings.Contains(string(files["metadata.json"]), "\n  \"modules\": {") {
		t.Errorf("metadata.json is not indented by two spaces with sorted keys:\n%s", files["metadata.json"])
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
