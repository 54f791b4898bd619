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
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/importer/onnx"
	"github.com/mcugen/mcugen/importer/tflite"
	"github.com/mcugen/mcugen/internal/fileio"
)

// Options steer model import.
type Options struct {
	// Shapes binds dynamic dimensions of named inputs.
	Shapes map[string][]int
	// Warn receives non-fatal remarks (a dynamic dimension bound to 1, ...).
	Warn func(string)
	// Quantizing says the model is about to be quantized (it words the
	// remarks on a dynamic-range TFLite model).
	Quantizing bool
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
		return nil, fmt.Errorf("%s: %s bytes is larger than the %s-byte limit for a model", path, thousands(st.Size()), thousands(MaxModelBytes))
	}
	b, err := fileio.ReadRegular(path, MaxModelBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var g *graph.Graph
	ext := strings.ToLower(filepath.Ext(path))
	// The decoders' warnings wait for the model to load: a --shape naming
	// no input gets its one error line alone, without the warnings about
	// the dimensions it meant to bind; any other failure keeps them, as
	// they may say why (a dimension set to 1 a Reshape then cannot take).
	var held []string
	badShape := false
	userWarn := opt.Warn
	opt.Warn = func(w string) { held = append(held, w) }
	defer func() {
		if userWarn != nil && !badShape {
			for _, w := range held {
				userWarn(w)
			}
		}
	}()
	warn := opt.Warn
	if ext == ".tflite" && !IsTFLite(b) && LooksLikeONNX(b) {
		// An ONNX model named .tflite: read it as what it is.
		og, oerr := onnx.Decode(name, b, onnx.Options{Shapes: opt.Shapes, Warn: opt.Warn})
		if oerr == nil && graph.Validate(og) == nil {
			warn(fmt.Sprintf("%s: an ONNX model named .tflite; read as ONNX", path))
			og.CopyAliasedOutputs()
			g = og
			return g, nil
		}
		if oerr != nil && strings.Contains(oerr.Error(), "--shape ") {
			// The ONNX reading's own answer (review finding: the
			// TFLite attempt after it said the file was not TFLite).
			badShape = true
			return nil, fmt.Errorf("%s: %w", path, oerr)
		}
		held = nil // the TFLite attempt below warns afresh
	}
	if ext == ".tflite" || IsTFLite(b) {
		if ext == ".onnx" {
			warn(fmt.Sprintf("%s: a TFLite model (file identifier TFL3) named .onnx; read as TFLite", path))
		}
		g, err = tflite.DecodeWith(name, b, tflite.Options{Shapes: opt.Shapes, Warn: opt.Warn, Quantizing: opt.Quantizing})
	} else {
		// onnx.Decode checks the --shape names itself, before the nodes.
		g, err = onnx.Decode(name, b, onnx.Options{Shapes: opt.Shapes, Warn: opt.Warn})
	}
	if err == nil {
		g.CopyAliasedOutputs()
		err = graph.Validate(g)
	}
	if err != nil {
		msg := err.Error()
		badShape = strings.Contains(msg, "the model has no input named") || strings.Contains(msg, "not an input: give that input's whole shape") || strings.Contains(msg, "is an initializer of the model (a constant), not an input")
		if !badShape && !strings.Contains(msg, "not supported") && !strings.Contains(msg, "unsupported") && shapeError(msg) {
			for _, w := range held {
				if strings.Contains(w, "set to 1; bind it with --shape") {
					// The failure may come from that 1 (a pool wider than
					// a time axis of 1: user-journey finding).
					err = fmt.Errorf("%w (the model's dynamic input dimensions were set to 1: bind them with --shape)", err)
					break
				}
			}
		}
		if h := sniff(b); h != "" {
			return nil, fmt.Errorf("%s: %w (the file looks like %s)", path, err, h)
		}
		if (ext == ".bin" || ext == ".raw" || ext == ".pb") && !LooksLikeONNX(b) && !IsTFLite(b) {
			// A raw or TensorProto tensor file given as the model (CLI
			// review: "wire type 1", nothing more).
			return nil, fmt.Errorf("%s: %w (a %s file is a tensor file to give to --input, not a model)", path, err, ext)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// shapeError reports whether an import error's text is about sizes, which a
// dynamic dimension set to 1 may have caused; a structural defect (a tensor
// used before it is defined, a missing attribute) is not, and got the
// --shape hint too (robustness journey).
func shapeError(msg string) bool {
	for _, w := range []string{"shape", "dimension", "larger than", "smaller than", "axis", "axes", "broadcast", "size", "element", "rank", "padded", "out of range"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// sniff names what a file that is not a model looks like, from its first
// bytes ("" when it does not know).
func sniff(b []byte) string {
	for _, k := range []struct{ magic, what string }{
		{"version https://git-lfs", "a Git LFS pointer, not the model itself: fetch it with git lfs pull"},
		{"\x89PNG\r\n\x1a\n", "a PNG image"},
		{"\xff\xd8\xff", "a JPEG image"},
		{"\x89HDF\r\n\x1a\n", "an HDF5 file (a Keras .h5 model?): convert it to TFLite or ONNX first"},
		{"PK\x03\x04", "a zip archive (a Keras .keras or PyTorch .pt file?): export it to TFLite or ONNX first"},
		{"\x80\x02", "a Python pickle (a PyTorch model?): export it to ONNX first"},
	} {
		if bytes.HasPrefix(b, []byte(k.magic)) {
			return k.what
		}
	}
	if bytes.HasPrefix(b, []byte("\x93NUMPY")) {
		return "a NumPy array (.npy), not a model: give it to --input"
	}
	if len(b) > 0 && isText(b[:min(len(b), 512)]) {
		return "a text file (a script or notes?), not a model"
	}
	return ""
}

// isText reports whether b is printable ASCII with tabs and line breaks.
func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}

// LooksLikeONNX reports whether b starts as a ModelProto usually does: its
// ir_version (field 1, a varint) first.
func LooksLikeONNX(b []byte) bool { return len(b) > 2 && b[0] == 0x08 && b[1] > 0 && b[1] < 0x80 }

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
	_, d, err := loadTensor(path, want)
	return d, err
}

// loadTensor is LoadTensor that also returns the name an ONNX TensorProto
// file gives its tensor ("" for other files).
func loadTensor(path string, want *graph.Tensor) (string, *graph.Data, error) {
	b, err := fileio.ReadRegular(path, MaxModelBytes)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	var d *graph.Data
	var name string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		d, err = npy.Read(bytes.NewReader(b))
	case ".pb":
		name, d, err = onnx.ReadTensorProto(b)
	case ".bin", ".raw":
		d, err = npy.FromBytes(b, want.DType, want.Shape)
		if err != nil {
			err = fmt.Errorf("raw file of %d bytes, input %q (%s) needs %d", len(b), want.Name, want.TypeString(), want.Bytes())
		}
	default:
		return "", nil, fmt.Errorf("%s: unknown tensor file type (want .npy, .pb or .bin)", path)
	}
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	if d.DType != want.DType {
		// Float data for a quantized input: say how to get the int8 (a
		// user journey found no hint).
		if d.DType == graph.Float32 && want.Quant != nil && len(want.Quant.Scale) == 1 && len(want.Quant.ZeroPoint) == 1 {
			zp := want.Quant.ZeroPoint[0]
			plus := fmt.Sprintf("+ %d", zp)
			if zp < 0 {
				plus = fmt.Sprintf("- %d", -zp)
			}
			return "", nil, fmt.Errorf("%s: holds float32, input %q wants %s: quantize it as q = round(x / %g) %s, ties rounded as the model's quantize op does (away from zero for a TFLite model, to even for an ONNX QDQ model or one mcugen quantized), clamped to %s's range (inspect and compile --json give the scale and zero point)",
				path, want.Name, want.DType, want.Quant.Scale[0], plus, want.DType)
		}
		return "", nil, fmt.Errorf("%s: holds %s, input %q wants %s", path, d.DType, want.Name, want.DType)
	}
	if !SameShapeButOnes(d.Shape, want.Shape) {
		return "", nil, fmt.Errorf("%s: has shape %v, input %q wants %v", path, d.Shape, want.Name, want.Shape)
	}
	d.Shape = append([]int(nil), want.Shape...)
	return name, d, nil
}

// SameShapeButOnes reports whether shapes a and b are the same once their
// size-1 dimensions are left out: how a tensor file (and test's expected
// output) is checked against the model's tensor.
func SameShapeButOnes(a, b []int) bool {
	drop := func(s []int) []int {
		var out []int
		for _, d := range s {
			if d != 1 {
				out = append(out, d)
			}
		}
		return out
	}
	return slices.Equal(drop(a), drop(b))
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
				if prev, dup := files[name]; dup {
					return nil, fmt.Errorf("--input %s: input %q already has a file (%s)", a, name, prev)
				}
				files[name] = file
				continue
			}
			if _, err := os.Stat(a); err != nil {
				return nil, fmt.Errorf("--input %s: the model has no input %q (inputs: %s)", a, name, strings.Join(inputs, ", "))
			}
		}
		for pos < len(inputs) && files[inputs[pos]] != "" {
			pos++
		}
		if len(inputs) == 0 {
			return nil, fmt.Errorf("%s: the model has no inputs", a)
		}
		if pos >= len(inputs) {
			var bound []string
			for _, n := range inputs {
				bound = append(bound, n+"="+files[n])
			}
			return nil, fmt.Errorf("%s: every input of the model already has a file (%s)", a, strings.Join(bound, ", "))
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
		pbName, d, err := loadTensor(f, g.Tensors[name])
		if err != nil {
			return nil, err
		}
		// A TensorProto names its tensor: one that names another input
		// of the model was given in the wrong order (review finding: two
		// .pb files bound by position were swapped in silence).
		if pbName != "" && pbName != name && isInput[pbName] {
			return nil, fmt.Errorf("%s: holds the tensor of input %q, but is bound to input %q (bind by name: --input %s=%s)", f, pbName, name, pbName, f)
		}
		out[name] = d
	}
	return out, nil
}

// thousands writes v with commas between groups of three digits, as the
// CLI's other figures are.
func thousands(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
