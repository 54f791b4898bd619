package main

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
)

type evalCmd struct {
	modelFlags
	Input []string `help:"Input tensor file (.npy, .pb or .bin); NAME=FILE binds by name, a bare FILE by position (one per model input; none for a model without inputs)." placeholder:"[NAME=]FILE" sep:"none"`
	Out   string   `short:"o" help:"Directory for the outputs, one <output name>.npy each." required:"" type:"path" placeholder:"DIR"`
	JSON  bool     `name:"json" help:"Print one JSON object."`
}

type outputInfo struct {
	Name  string `json:"name"`
	File  string `json:"file,omitempty"` // none where run had no --out
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	// Scale and ZeroPoint are a quantized output's (real = scale · (q −
	// zero point)), so its .npy can be read without another command.
	Scale     []float32 `json:"scale,omitempty"`
	ZeroPoint []int32   `json:"zero_point,omitempty"`
}

// withQuant adds tensor t's quantization to o.
func (o outputInfo) withQuant(t *graph.Tensor) outputInfo {
	if t != nil && t.Quant != nil {
		o.Scale, o.ZeroPoint = t.Quant.Scale, t.Quant.ZeroPoint
	}
	return o
}

func (c *evalCmd) Run(e *env) error {
	g, err := c.load(e)
	if err != nil {
		return err
	}
	// A QDQ model runs as it compiles, its QuantizeLinear/DequantizeLinear
	// pairs folded into integer operators: the outputs `run` and `test`
	// compare the firmware with. (Its float operators between the pairs,
	// as ONNX Runtime runs them, round differently: a user journey found
	// IC's outputs up to 26 steps apart, a top class changed.)
	if pipeline.IsQDQ(g) {
		// Through compile's own import steps (a MatMul and its bias Add
		// fused, identity moves dropped) and its fold, so the graph is the
		// one compile builds.
		shapes, err := parseShapes(c.Shape)
		if err != nil {
			return err
		}
		s, err := pipeline.RunUntil(c.Model, pipeline.Options{Shapes: shapes, Warn: func(string) {}}, "fold-qdq")
		if err != nil {
			return err
		}
		g = s.Graph
	}
	files := outputFiles(c.Out, g.UserOutputs())
	if err := checkSparesInputs("-o", files, c.Input); err != nil {
		return err
	}
	if len(c.Input) == 0 && len(g.Inputs) > 0 {
		// Optional for a model without inputs (a review: eval of ONNX's
		// test_constant asked for a file nothing could be).
		return usageError{fmt.Errorf("missing flags: --input=[NAME=]FILE (%s has %d input(s))", c.Model, len(g.Inputs))}
	}
	ins, err := bindInputs(g, c.Input)
	if err != nil {
		return err
	}
	outs, err := interp.Run(g, ins)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Model, err)
	}
	var datas []*graph.Data
	for _, name := range g.UserOutputs() {
		datas = append(datas, outs[name])
	}
	if err := writeOutputs(c.Out, files, datas); err != nil {
		return err
	}
	var report struct {
		Outputs []outputInfo `json:"outputs"`
	}
	for i, name := range g.UserOutputs() {
		d := outs[name]
		file := files[i]
		shape := d.Shape
		if shape == nil {
			shape = []int{}
		}
		report.Outputs = append(report.Outputs, outputInfo{Name: name, File: file, Shape: shape, DType: d.DType.String()}.withQuant(g.Tensors[name]))
		if !c.JSON {
			fmt.Fprintf(e.stdout, "%s: %s%v -> %s\n", shown(name), d.DType, shape, file)
		}
	}
	if c.JSON {
		return e.printJSON(report)
	}
	return nil
}

// writeNpy writes one output as .npy through fileio.WriteAtomic: a write
// that fails (a full disk) leaves no truncated file, and the file of an
// earlier run as it was (review finding: eval and run --out wrote in place).
func writeNpy(file string, d *graph.Data) error {
	var b bytes.Buffer
	if err := npy.Write(&b, d); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := fileio.WriteAtomic(file, b.Bytes()); err != nil {
		// The file's name, not its temporary one's (".y.npy.tmp123").
		return fmt.Errorf("%s: %w", file, unwrapPath(err))
	}
	return nil
}

// writeOutputs writes datas[i] to files[i] in dir (eval's and run's
// --out), creating dir. A write that fails (a full disk) takes back what
// this call made: the files that were not there before and the
// directories it created, so an empty or partial output directory is not
// left behind (review finding).
func writeOutputs(dir string, files []string, datas []*graph.Data) error {
	created := missingAncestors(dir)
	takeBack := func() {
		for _, d := range created { // deepest first; only if empty
			_ = os.Remove(d)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		takeBack() // what MkdirAll made before it failed
		return fmt.Errorf("%s: %w", dir, unwrapPath(err))
	}
	var fresh []string
	for i, file := range files {
		_, statErr := os.Lstat(file)
		if err := writeNpy(file, datas[i]); err != nil {
			for _, f := range fresh {
				_ = os.Remove(f)
			}
			takeBack()
			return err
		}
		if statErr != nil {
			fresh = append(fresh, file)
		}
	}
	return nil
}

// outputFiles names each output's .npy file in dir: the output's name made
// safe, with _1, _2, ... where two names give one file (y:0 and y/0; names
// that differ only in case, for case-insensitive file systems).
func outputFiles(dir string, names []string) []string {
	used := map[string]bool{}
	var files []string
	for _, name := range names {
		base := fileName(name)
		f := base
		for k := 1; used[strings.ToLower(f)]; k++ {
			f = fmt.Sprintf("%s_%d", base, k)
		}
		used[strings.ToLower(f)] = true
		files = append(files, filepath.Join(dir, f+".npy"))
	}
	return files
}

// maxFileName caps an output file's name (before its ".npy"): Linux takes
// 255 bytes, and TFLite's fused tensor names run to 300 (TFLM's seanet
// models: eval and run -o failed with "file name too long", user journey).
const maxFileName = 96

// fileName turns a tensor name into a file name that stays inside its
// directory: anything but letters, digits, '.', '-' and '_' becomes '_'.
// A name longer than maxFileName keeps its first part and ends in eight hex
// digits of a hash of the whole name, so long names that share a prefix
// stay apart.
func fileName(name string) string {
	b := []byte(name)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' && i > 0
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "output"
	}
	if len(b) > maxFileName {
		h := fnv.New32a()
		h.Write([]byte(name))
		return fmt.Sprintf("%s_%08x", b[:maxFileName-9], h.Sum32())
	}
	return string(b)
}
