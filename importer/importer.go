// Package importer loads models and tensor files. It recognises the model
// format from the file name (.tflite, .onnx) or else from the contents
// (TFLite's "TFL3" identifier, else ONNX) and hands it to importer/tflite or
// importer/onnx; tensor files are .npy,
// ONNX TensorProto .pb, or raw .bin taking shape and dtype from the model.
package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/importer/tflite"
)

// Options steer model import.
type Options struct {
	// Shapes binds dynamic dimensions of named inputs.
	Shapes map[string][]int
	// Warn receives non-fatal remarks (a dynamic dimension bound to 1, ...).
	Warn func(string)
}

// MaxModelBytes bounds the size of a model file mcugen reads (1 GiB).
const MaxModelBytes = 1 << 30

// Load reads a model file of either format and returns its validated graph.
func Load(path string, opt Options) (*graph.Graph, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a model file", path)
	}
	if st.Size() > MaxModelBytes {
		return nil, fmt.Errorf("%s: %d bytes is larger than the %d-byte limit for a model", path, st.Size(), MaxModelBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var g *graph.Graph
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".tflite" || ext != ".onnx" && IsTFLite(b) {
		g, err = tflite.DecodeWith(name, b, tflite.Options{Shapes: opt.Shapes, Warn: opt.Warn})
	} else {
		g, err = onnx.Decode(name, b, onnx.Options{Shapes: opt.Shapes, Warn: opt.Warn})
		for in := range opt.Shapes {
			if err == nil && !slices.Contains(g.Inputs, in) {
				err = fmt.Errorf("--shape %s: the model has no input named %q (its inputs: %s)", in, in, strings.Join(g.UserInputs(), ", "))
			}
		}
	}
	if err == nil {
		err = graph.Validate(g)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// IsTFLite reports whether b carries the TFLite flatbuffer file identifier.
func IsTFLite(b []byte) bool { return len(b) >= 8 && bytes.Equal(b[4:8], []byte("TFL3")) }

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// LoadTensor reads a tensor file meant for the model tensor want and checks
// that it fits: the same dtype and the same number of elements (a shape
// that differs only by size-1 dimensions is accepted).
func LoadTensor(path string, want *graph.Tensor) (*graph.Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	var d *graph.Data
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		d, err = npy.Read(bytes.NewReader(b))
	case ".pb":
		_, d, err = onnx.ReadTensorProto(b)
	case ".bin", ".raw":
		d, err = npy.FromBytes(b, want.DType, want.Shape)
		if err != nil {
			err = fmt.Errorf("raw file of %d bytes, input %q (%s) needs %d", len(b), want.Name, want.TypeString(), want.Bytes())
		}
	default:
		return nil, fmt.Errorf("%s: unknown tensor file type (want .npy, .pb or .bin)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if d.DType != want.DType {
		return nil, fmt.Errorf("%s: holds %s, input %q wants %s", path, d.DType, want.Name, want.DType)
	}
	if !sameShape(squeeze(d.Shape), squeeze(want.Shape)) {
		return nil, fmt.Errorf("%s: has shape %v, input %q wants %v", path, d.Shape, want.Name, want.Shape)
	}
	d.Shape = append([]int(nil), want.Shape...)
	return d, nil
}

func squeeze(s []int) []int {
	var out []int
	for _, d := range s {
		if d != 1 {
			out = append(out, d)
		}
	}
	return out
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BindInputs resolves `--input` arguments (NAME=FILE binds by name, a bare
// FILE binds by position) and loads every graph input.
func BindInputs(g *graph.Graph, args []string) (map[string]*graph.Data, error) {
	inputs := g.UserInputs()
	files := map[string]string{}
	pos := 0
	isInput := map[string]bool{}
	for _, name := range inputs {
		isInput[name] = true
	}
	for _, a := range args {
		if name, file, ok := strings.Cut(a, "="); ok {
			if isInput[name] {
				files[name] = file
				continue
			}
			if _, err := os.Stat(a); err != nil {
				return nil, fmt.Errorf("--input %s: the model has no input %q (inputs: %s)", a, name, strings.Join(inputs, ", "))
			}
		}
		if pos >= len(inputs) {
			return nil, fmt.Errorf("%s: the model has only %d input(s)", a, len(inputs))
		}
		for pos < len(inputs) && files[inputs[pos]] != "" {
			pos++
		}
		if pos >= len(inputs) {
			return nil, fmt.Errorf("%s: the model has only %d input(s)", a, len(inputs))
		}
		files[inputs[pos]] = a
		pos++
	}
	out := map[string]*graph.Data{}
	for _, name := range inputs {
		f, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("input %q (%s): no --input file given", name, g.Tensors[name].TypeString())
		}
		d, err := LoadTensor(f, g.Tensors[name])
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
}
