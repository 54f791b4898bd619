package templates

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/mcugen/mcugen/emitc"
)

// MLFVersion is the Model Library Format version written into metadata.json: 7, the
// last one microTVM wrote (Apache TVM v0.18).
const MLFVersion = 7

// MLF returns a Model Library Format tarball of p's model laid out as microTVM's:
//
//	./metadata.json                 version, and per module the memory figures
//	./codegen/host/src/*.c          the model's C
//	./codegen/host/include/*.h      its headers (the <prefix>.h API)
//	./runtime/...                   mcugen's runtime for the board (p.Runtime, else crt's)
//
// metadata.json follows microTVM's keys (modules.<name>.memory.functions.main[0] with
// workspace_size_bytes = the arena, constants_size_bytes = the weights, io_size_bytes,
// inputs and outputs with dtype and size), written with sorted keys and two-space
// indentation as TVM wrote it. The tarball is deterministic: fixed times, owner root.
func MLF(p Project) ([]byte, error) {
	if p.Kind == "" {
		p.Kind = Make // any kind: MLF only needs the model and, for Make, the runtime
	}
	p.anyAPI = true // an external arena or in-arena I/O is the caller's to use
	m, err := newModel(p)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for n, b := range m.Model {
		if strings.HasSuffix(n, ".c") {
			files["codegen/host/src/"+n] = b
		} else {
			files["codegen/host/include/"+n] = b
		}
	}
	for n, b := range m.Runtime {
		files["runtime/"+n] = b
	}
	meta, err := json.MarshalIndent(m.mlfMetadata(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("templates: metadata.json: %w", err)
	}
	files["metadata.json"] = append(meta, '\n')
	return tarball(files)
}

// WriteMLF writes MLF(p) into dir as <ident>.tar and returns that file's name.
func WriteMLF(dir string, p Project) (string, error) {
	b, err := MLF(p)
	if err != nil {
		return "", err
	}
	name := Ident(p.Name) + ".tar"
	if err := writeTree(dir, map[string][]byte{name: b}); err != nil {
		return "", err
	}
	return name, nil
}

func (m *model) mlfMetadata() map[string]any {
	type tensorMeta struct {
		Dtype string `json:"dtype"`
		Size  int    `json:"size"`
	}
	// microTVM names a module (relay.build's mod_name, "default") and prefixes its C
	// API with tvmgen_<name>: a tvmgen_ prefix gives the module's name back.
	module := m.Prefix
	microTVM := emitc.MicroTVM(m.Prefix) // as the header's names (any case)
	if microTVM {
		module = m.Prefix[len("tvmgen_"):]
	}
	ins, outs := map[string]tensorMeta{}, map[string]tensorMeta{}
	io := 0
	// Inputs are keyed by the model's tensor names, as microTVM keyed them by its
	// Relay parameters'; its header's members are those names sanitized. Outputs
	// are keyed by tensor name too, but with microTVM's prefix by the header's
	// members: microTVM keyed them by the names it gave them ("output", "output0",
	// ... for an ONNX model), from which its header's members came.
	for _, t := range m.Inputs {
		ins[t.Name] = tensorMeta{t.DType, t.Size}
		io += t.Size
	}
	for _, t := range m.Outputs {
		key := t.Name
		if microTVM && t.Field != "" {
			key = t.Field
		}
		outs[key] = tensorMeta{t.DType, t.Size}
		io += t.Size
	}
	if m.IOInArena {
		io = 0 // inside workspace_size_bytes already
	}
	target := "c -keys=cpu"
	if m.Board.CPU != "" {
		target = "c -keys=arm_cpu,cpu -mcpu=" + m.Board.CPU
	}
	return map[string]any{
		"version": MLFVersion,
		"modules": map[string]any{
			module: map[string]any{
				"model_name":      module,
				"export_datetime": time.Unix(0, 0).UTC().Format("2006-01-02 15:04:05Z"),
				"executors":       []string{"aot"},
				"style":           "full-model",
				"target":          []string{target},
				"memory": map[string]any{
					"functions": map[string]any{
						"main": []any{map[string]any{
							"device":               1,
							"workspace_size_bytes": m.ArenaBytes,
							"constants_size_bytes": m.WeightsBytes,
							"io_size_bytes":        io,
							"inputs":               ins,
							"outputs":              outs,
						}},
						"operator_functions": []any{},
					},
				},
				"mcugen": map[string]any{
					"version": m.Version,
					"board":   m.Board.Name,
					"name":    m.Name,
				},
			},
		},
	}
}

// tarball packs files (slash paths) as a ustar archive with "./" names, parent
// directories first, owner root and time zero, as TVM's _make_tar did.
func tarball(files map[string][]byte) ([]byte, error) {
	dirs := map[string]bool{}
	var names []string
	for n := range files {
		names = append(names, n)
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		names = append(names, d+"/")
	}
	names = append(names, "")
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: "./" + n, Uname: "root", Gname: "root", ModTime: time.Unix(0, 0)}
		if n == "" || strings.HasSuffix(n, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(files[n]))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("templates: tar %s: %w", n, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(files[n]); err != nil {
				return nil, fmt.Errorf("templates: tar %s: %w", n, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("templates: tar: %w", err)
	}
	return buf.Bytes(), nil
}
