package quant

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/internal/fileio"
)

// DefaultBins is the histogram resolution of calibration (TensorRT's 2048).
const DefaultBins = 2048

// CalibOptions tune Calibrate.
type CalibOptions struct {
	// Bins is the number of histogram bins per tensor (default DefaultBins).
	Bins int
	// Progress, when not nil, receives a one-line progress indicator
	// ("\rcalibrating 12/64"). Pass ProgressWriter() for stderr-if-terminal.
	Progress io.Writer
}

// TensorStats are the calibration statistics of one float tensor.
type TensorStats struct {
	Min, Max float64 // over all samples
	Count    int64   // number of values seen
	// Hist counts the values in Bins equal bins spanning [Lo, Hi], the
	// [Min, Max] range widened to include 0.
	Lo, Hi float64
	Hist   []float64
	// NegInf is set when some value was -Inf (a masked logit), PosInf
	// when some value was +Inf (a float overflow).
	NegInf, PosInf bool
	// RowMax is, for a Softmax input, the smallest finite maximum of one
	// of its rows (along the Softmax's axis) over all samples, and HasRowMax
	// says there was one: no row's distribution depends on values more
	// than a few units below it (softmaxFloor).
	RowMax    float64
	HasRowMax bool
}

// softmaxAxes maps each float Softmax input (a plain Softmax, not Log or
// Hard) to its axis.
func softmaxAxes(g *graph.Graph) map[string]int {
	out := map[string]int{}
	for _, n := range g.Nodes {
		a, ok := n.Attrs.(*graph.SoftmaxAttrs)
		if n.Op != graph.Softmax || !ok || a.Mode != graph.SoftmaxPlain || len(n.Inputs) == 0 {
			continue
		}
		if t := g.Tensors[n.Inputs[0]]; t != nil && t.DType == graph.Float32 && len(t.Shape) > 0 {
			ax := a.Axis
			if ax < 0 {
				ax += len(t.Shape)
			}
			if ax >= 0 && ax < len(t.Shape) {
				out[n.Inputs[0]] = ax
			}
		}
	}
	return out
}

// rowMaxMin is the smallest finite row maximum of v along axis (ok false
// when every row is -Inf).
func rowMaxMin(v *graph.Data, axis int) (float64, bool) {
	n := v.Shape[axis]
	inner := 1
	for _, d := range v.Shape[axis+1:] {
		inner *= d
	}
	if n == 0 || inner == 0 {
		return 0, false
	}
	best, ok := math.Inf(1), false
	for o := 0; o < len(v.F)/(n*inner); o++ {
		for i := 0; i < inner; i++ {
			m := math.Inf(-1)
			for k := 0; k < n; k++ {
				m = math.Max(m, float64(v.F[(o*n+k)*inner+i]))
			}
			if !math.IsInf(m, 0) {
				best, ok = math.Min(best, m), true
			}
		}
	}
	return best, ok
}

// BinWidth is the width of one histogram bin.
func (t *TensorStats) BinWidth() float64 { return (t.Hi - t.Lo) / float64(len(t.Hist)) }

// Stats are the statistics of every float activation (graph inputs included)
// of a graph over a calibration set.
type Stats struct {
	Samples int
	Tensors map[string]*TensorStats
}

// ProgressWriter returns os.Stderr when it is a terminal, nil otherwise.
func ProgressWriter() io.Writer {
	fi, err := os.Stderr.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return os.Stderr
}

// Calibrate runs the float reference interpreter over samples (each a map
// from graph input name to value) and collects min/max and a histogram of
// every float tensor the graph computes. It makes two passes: the first finds
// each tensor's range, the second fills histograms over that range.
func Calibrate(g *graph.Graph, samples []map[string]*graph.Data, opt CalibOptions) (*Stats, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("quant: calibrate: no samples")
	}
	bins := opt.Bins
	if bins <= 0 {
		bins = DefaultBins
	}
	st := &Stats{Samples: len(samples), Tensors: map[string]*TensorStats{}}
	total := 2 * len(samples)
	step := 0
	progress := func() {
		step++
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "\rcalibrating %d/%d", step, total)
			if step == total {
				fmt.Fprintln(opt.Progress)
			}
		}
	}
	buf := []float64{}
	// Pass 1: ranges. The samples run in order, one session per pass: a
	// model with states (graph.State) sees them as a sequence.
	smIn := softmaxAxes(g)
	sess := interp.NewSession(g)
	for si, s := range samples {
		vals, err := sess.RunAll(s)
		if err != nil {
			return nil, fmt.Errorf("quant: calibrate: sample %d: %w", si, err)
		}
		if err := firstNaN(g, vals); err != nil {
			return nil, fmt.Errorf("quant: calibrate: sample %d: %w", si, err)
		}
		for name, v := range vals {
			t := g.Tensors[name]
			if t == nil || t.IsConst() || v.DType != graph.Float32 || len(v.F) == 0 {
				continue
			}
			buf = toF64(buf, v.F)
			if floats.HasNaN(buf) {
				return nil, fmt.Errorf("quant: calibrate: sample %d: tensor %q has NaN values", si, name)
			}
			ts := st.Tensors[name]
			if ts == nil {
				ts = &TensorStats{Min: math.Inf(1), Max: math.Inf(-1)}
				st.Tensors[name] = ts
			}
			// The range is the finite values': an infinity (a max pool's
			// -inf padding, an attention mask) saturates at the int8 end
			// (it made the range infinite, and the tensor fell back to
			// [0, 1]).
			for _, x := range buf {
				if !math.IsInf(x, 0) {
					ts.Min, ts.Max = math.Min(ts.Min, x), math.Max(ts.Max, x)
				} else if x < 0 {
					ts.NegInf = true
				} else {
					ts.PosInf = true
				}
			}
			if ax, ok := smIn[name]; ok {
				if m, ok := rowMaxMin(v, ax); ok && (!ts.HasRowMax || m < ts.RowMax) {
					ts.RowMax, ts.HasRowMax = m, true
				}
			}
			ts.Count += int64(len(buf))
		}
		progress()
	}
	for _, ts := range st.Tensors {
		if ts.Min > ts.Max { // no finite value
			ts.Min, ts.Max = 0, 0
			if ts.PosInf {
				// Only overflows: the largest float32 stands for them. In
				// [0, 1] they made the layer's multiplier 2^100 (review
				// finding: its C shifted by 100, and disagreed with the
				// interpreter).
				ts.Max = math.MaxFloat32
			}
		}
		ts.Lo, ts.Hi = math.Min(ts.Min, 0), math.Max(ts.Max, 0)
		if ts.Hi == ts.Lo {
			ts.Hi = ts.Lo + 1
		}
		ts.Hist = make([]float64, bins)
	}
	// Pass 2: histograms.
	sess = interp.NewSession(g)
	for si, s := range samples {
		vals, err := sess.RunAll(s)
		if err != nil {
			return nil, fmt.Errorf("quant: calibrate: sample %d: %w", si, err)
		}
		for name, v := range vals {
			ts := st.Tensors[name]
			if ts == nil || v.DType != graph.Float32 {
				continue
			}
			ts.add(v.F)
		}
		progress()
	}
	return st, nil
}

func (t *TensorStats) add(xs []float32) {
	n := len(t.Hist)
	w := t.BinWidth()
	for _, x := range xs {
		if math.IsInf(float64(x), 0) {
			continue // outside the range (Calibrate)
		}
		i := int((float64(x) - t.Lo) / w)
		if i < 0 {
			i = 0
		} else if i >= n {
			i = n - 1
		}
		t.Hist[i]++
	}
}

func toF64(buf []float64, xs []float32) []float64 {
	buf = buf[:0]
	for _, x := range xs {
		buf = append(buf, float64(x))
	}
	return buf
}

// LoadCalib reads a calibration set from dir for the inputs of g. Accepted
// layouts:
//   - one .npy per input holding every sample stacked on a leading axis
//     ([N, ...input shape], or [N, ...] when the input's batch is 1);
//   - one .npy per input per sample (each shaped like the input);
//   - one subdirectory per sample holding one .npy per input.
//
// With one graph input every .npy belongs to it; with several, a file belongs
// to the input whose name (with '/' and ':' read as '_') its base name starts with.
// Samples are taken in natural file-name order (x_2 before x_10). Bad data (wrong dtype or shape, NaN,
// no files) is an error naming the file.
func LoadCalib(dir string, g *graph.Graph) ([]map[string]*graph.Data, error) {
	s, _, err := LoadCalibSources(dir, g)
	return s, err
}

// LoadCalibSources is LoadCalib that also says where each sample came from:
// sources[i][input] names the file of sample i's input, with its row when
// the file stacks several ("x.npy row 3"), so a warning about one sample
// can name the file to look at.
func LoadCalibSources(dir string, g *graph.Graph) ([]map[string]*graph.Data, []map[string]string, error) {
	return loadCalibDir(dir, dir, g, map[string][]calibFile{})
}

// calibFile is a calibration file already read for an input: its path and
// shape, and the layouts it can be read in (calibLayouts).
type calibFile struct {
	path  string
	shape []int
	ways  []string
}

// loadCalibDir is LoadCalibSources of dir, a sample subdirectory of top
// or top itself; seen holds, for each input, the files read so far in
// top, whose layouts every further file of the input must share one of.
func loadCalibDir(top, dir string, g *graph.Graph, seen map[string][]calibFile) ([]map[string]*graph.Data, []map[string]string, error) {
	if len(g.UserInputs()) == 0 {
		return nil, nil, fmt.Errorf("quant: calibration: graph has no inputs")
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		// User-journey finding: a stacked .npy given itself got "open:
		// not a directory".
		return nil, nil, fmt.Errorf("quant: calibration dir %s: is a file, not a directory: put it in one (a directory holds one stacked .npy per input, or one .npy per input per sample)", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("quant: calibration dir %s: %w", dir, err)
	}
	var files []string
	var subdirs []string
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "."):
			// Hidden: macOS's AppleDouble ._x.npy beside x.npy, .git, ...
			// (a user journey: ._input.npy stopped the calibration).
		case e.IsDir():
			subdirs = append(subdirs, filepath.Join(dir, e.Name()))
		case strings.HasSuffix(strings.ToLower(e.Name()), ".npy"):
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	// In natural order: x_2.npy before x_10.npy, as a sequence's samples
	// are numbered (user-journey finding: a stateful model calibrated on
	// x_1, x_10, x_11, ..., x_2).
	sort.SliceStable(files, func(i, j int) bool { return naturalLess(files[i], files[j]) })
	sort.SliceStable(subdirs, func(i, j int) bool { return naturalLess(subdirs[i], subdirs[j]) })
	if len(files) == 0 && len(subdirs) > 0 {
		var out []map[string]*graph.Data
		var srcs []map[string]string
		for _, sd := range subdirs {
			s, src, err := loadCalibDir(top, sd, g, seen)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, s...)
			srcs = append(srcs, src...)
		}
		return out, srcs, nil
	}
	if len(files) > 0 {
		// Files beside sample subdirectories: the subdirectories were
		// left out without a word (a review finding). Either layout
		// alone is clear; together they are refused.
		for _, sd := range subdirs {
			if holdsNpy(sd) {
				return nil, nil, fmt.Errorf("quant: calibration dir %s: holds both .npy files (%s) and a sample subdirectory with .npy files (%s): use one layout: move the files into a subdirectory of their own, or the subdirectories out", dir, filepath.Base(files[0]), filepath.Base(sd))
			}
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("quant: calibration dir %s: no .npy files", dir)
	}
	// The test vectors' layout (a model's vectors/, test --vectors):
	// input_NNN.npy (input_NNN_K.npy for input K of several) beside the
	// expected output_NNN.npy: the inputs are the samples and the outputs
	// are left out (docs journey: quantize --eval on a model's
	// vectors_float/ stopped at its output_000.npy).
	fileInput := map[string]string{}
	if byInput, ok, err := vectorsLayout(g, files); err != nil {
		return nil, nil, fmt.Errorf("quant: calibration dir %s: %w", dir, err)
	} else if ok {
		files = nil
		for k, in := range g.UserInputs() {
			for _, f := range byInput[k] {
				files = append(files, f)
				fileInput[f] = in
			}
		}
	}
	if ins := g.UserInputs(); len(ins) == 1 {
		// One input takes every file, unless some are named after it:
		// then the others are something else (labels.npy beside
		// x_0.npy ...: user-journey finding, it was read as samples).
		var named, other []string
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), sanitize(ins[0])) {
				named = append(named, f)
			} else {
				other = append(other, f)
			}
		}
		if len(named) > 0 && len(other) > 0 {
			return nil, nil, fmt.Errorf("quant: calibration file %s: its name does not start with the input's, %q, as %s does: move it out of the directory (with one input, every .npy file is read as its samples unless some are named after it)", other[0], sanitize(ins[0]), filepath.Base(named[0]))
		}
	}
	per := map[string][]*graph.Data{}
	perSrc := map[string][]string{}
	perFiles := map[string][]string{}
	oneEach := true // every file holds one sample
	for _, f := range files {
		in, err := calibInputFor(g, f)
		if vin, ok := fileInput[f]; ok {
			in, err = vin, nil
		}
		if err != nil {
			return nil, nil, err
		}
		ss, cf, err := loadCalibFile(f, g.Tensors[in])
		if err != nil {
			return nil, nil, err
		}
		if err := sameLayout(top, in, seen[in], cf); err != nil {
			return nil, nil, err
		}
		seen[in] = append(seen[in], cf)
		per[in] = append(per[in], ss...)
		perFiles[in] = append(perFiles[in], f)
		oneEach = oneEach && len(ss) == 1
		for i := range ss {
			src := f
			if len(ss) > 1 {
				src = fmt.Sprintf("%s row %d", f, i)
			}
			perSrc[in] = append(perSrc[in], src)
		}
	}
	for in, ss := range per {
		if b := g.Tensors[in].Shape; len(ss) > 0 && len(b) >= 2 && b[0] > 1 && ss[0].Len()*b[0] == g.Tensors[in].NumElements() {
			// Rows grouped into batches: a batch is named by its first row.
			var srcs []string
			for i := 0; i < len(ss); i += b[0] {
				srcs = append(srcs, perSrc[in][i])
			}
			perSrc[in] = srcs
		}
		if per[in], err = batchRows(ss, g.Tensors[in]); err != nil {
			return nil, nil, fmt.Errorf("quant: calibration dir %s: %w", dir, err)
		}
	}
	n := -1
	for _, in := range g.UserInputs() {
		k := len(per[in])
		if k == 0 {
			return nil, nil, fmt.Errorf("quant: calibration dir %s: no .npy file for input %q", dir, in)
		}
		if n >= 0 && k != n {
			return nil, nil, fmt.Errorf("quant: calibration dir %s: input %q has %d samples, %q has %d%s", dir, in, k, g.UserInputs()[0], n, sharedPrefixHint(g.UserInputs()))
		}
		n = k
	}
	if ins := g.UserInputs(); len(ins) > 1 && len(fileInput) == 0 && oneEach {
		// One sample a file: a sample's files are the ones with the same
		// number (review finding: they were paired by position, a_0.npy
		// and a_1.npy with b_1.npy and b_7.npy, a_0 with b_1).
		if err := sameNumbers(dir, ins, perFiles); err != nil {
			return nil, nil, err
		}
	}
	out := make([]map[string]*graph.Data, n)
	srcs := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]*graph.Data{}
		srcs[i] = map[string]string{}
		for _, in := range g.UserInputs() {
			out[i][in] = per[in][i]
			if i < len(perSrc[in]) {
				srcs[i][in] = perSrc[in][i]
			}
		}
	}
	return out, srcs, nil
}

// holdsNpy reports whether dir holds a .npy file (not hidden), at any depth
// a sample subdirectory would be read at: its own files.
func holdsNpy(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(strings.ToLower(e.Name()), ".npy") {
			return true
		}
	}
	return false
}

var vectorName = regexp.MustCompile(`^(input|output)_([0-9]+)(?:_([0-9]+))?\.npy$`)

// vectorsLayout reports whether files are test vectors, as test --vectors
// reads them: every one input_NNN.npy (input_NNN_K.npy for input K of
// several; input_NNN_0.npy for the one input too) or an expected
// output_NNN[_K].npy, with either an output among them or no file named
// after one of the model's inputs (a model whose inputs are input_1 and
// input_2 keeps its own files). It returns each input's files in vector
// order; a vector without a file for every input is an error (review:
// they were paired by position, vector 000's a with vector 001's b).
func vectorsLayout(g *graph.Graph, files []string) ([][]string, bool, error) {
	ins := g.UserInputs()
	nin := len(ins)
	vecs := map[string][]string{} // NNN → the file of each input
	outputs, named := 0, false
	var twice error // two files for one vector's input
	for _, f := range files {
		base := filepath.Base(f)
		m := vectorName.FindStringSubmatch(base)
		if m == nil {
			return nil, false, nil
		}
		for _, in := range ins {
			if strings.HasPrefix(base, sanitize(in)) {
				named = true
			}
		}
		if m[1] == "output" {
			outputs++
			continue
		}
		k := 0
		if m[3] != "" {
			k, _ = strconv.Atoi(m[3])
		} else if nin > 1 {
			return nil, false, nil
		}
		if k >= nin {
			return nil, false, nil
		}
		if vecs[m[2]] == nil {
			vecs[m[2]] = make([]string, nin)
		}
		if prev := vecs[m[2]][k]; prev != "" && twice == nil {
			// input_000.npy and input_000_0.npy: one was left out
			// without a word (review finding).
			twice = fmt.Errorf("%s and %s are both vector %s's file for input %q: remove one", filepath.Base(prev), base, m[2], ins[k])
		}
		vecs[m[2]][k] = f
	}
	if len(vecs) == 0 || outputs == 0 && named {
		return nil, false, nil
	}
	if twice != nil {
		return nil, false, twice
	}
	nums := make([]string, 0, len(vecs))
	for n := range vecs {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return naturalLess(nums[i], nums[j]) })
	byInput := make([][]string, nin)
	for _, n := range nums {
		for k, f := range vecs[n] {
			if f == "" {
				return nil, false, fmt.Errorf("vector %s has no input_%s_%d.npy (for input %q): every vector needs a file for each input", n, n, k, ins[k])
			}
			byInput[k] = append(byInput[k], f)
		}
	}
	return byInput, true, nil
}

// naturalLess orders strings with their runs of digits compared as numbers
// (x_2 < x_10), ties broken by the plain order (x_02 against x_2).
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			continue
		}
		if ca != cb {
			return ca < cb
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func sanitize(s string) string {
	return strings.NewReplacer("/", "_", ":", "_", "\\", "_").Replace(s)
}

// sharedPrefixHint says, when one input's file-name prefix starts
// another's (in and in_2), that a file name can read as either's: in_2.npy
// is sample 2 of in or in_2's stacked file, and is given to the longer
// name (user-journey finding: the count mismatch did not say why).
func sharedPrefixHint(inputs []string) string {
	for _, a := range inputs {
		for _, b := range inputs {
			if a != b && strings.HasPrefix(sanitize(b), sanitize(a)) {
				return fmt.Sprintf(" (a file name that starts with %q belongs to input %q, though %q starts it too: with such names, put each sample's files in a subdirectory of their own, or one stacked file per input)", sanitize(b), b, sanitize(a))
			}
		}
	}
	return ""
}

func calibInputFor(g *graph.Graph, file string) (string, error) {
	if len(g.UserInputs()) == 1 {
		return g.UserInputs()[0], nil
	}
	base := filepath.Base(file)
	best := ""
	for _, in := range g.UserInputs() {
		if strings.HasPrefix(base, sanitize(in)) && len(in) > len(best) {
			best = in
		}
	}
	if best == "" {
		return "", fmt.Errorf("quant: calibration file %s: name matches none of the inputs %v", file, g.UserInputs())
	}
	return best, nil
}

// loadCalibFile reads one file and splits it into samples for input t; it
// also returns the layouts the file can be read in (calibLayouts).
func loadCalibFile(file string, t *graph.Tensor) ([]*graph.Data, calibFile, error) {
	ss, ways, shape, err := loadCalibData(file, t)
	return ss, calibFile{path: file, shape: shape, ways: ways}, err
}

func loadCalibData(file string, t *graph.Tensor) ([]*graph.Data, []string, []int, error) {
	// A FIFO blocked the command forever, a device was read without end
	// (review findings).
	if err := fileio.CheckRegular(file); err != nil {
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: %w", file, err)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: %w", file, err)
	}
	defer f.Close()
	d, err := npy.Read(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: %w", file, err)
	}
	if t.DType == graph.Float32 && d.DType != graph.Float32 {
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: dtype %s, input %q wants float32", file, d.DType, t.Name)
	}
	if t.DType != graph.Float32 && d.DType != t.DType {
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: dtype %s, input %q wants %s", file, d.DType, t.Name, t.DType)
	}
	ways := calibLayouts(d.Shape, t)
	if len(ways) == 0 {
		want := fmt.Sprintf("%v or [N %s]", t.Shape, strings.Trim(fmt.Sprint(t.Shape), "[]"))
		if len(t.Shape) > 1 && t.Shape[0] == 1 {
			// A batch-1 input also takes samples stacked in place of the batch.
			want = fmt.Sprintf("%v, [N %s] or [N %s]", t.Shape, strings.Trim(fmt.Sprint(t.Shape), "[]"), strings.Trim(fmt.Sprint(t.Shape[1:]), "[]"))
		} else if len(t.Shape) > 1 && t.Shape[0] > 1 {
			// Or batch-1 samples, grouped into batches.
			want = fmt.Sprintf("%v, [N %s] or batch-1 samples [N 1 %s]", t.Shape, strings.Trim(fmt.Sprint(t.Shape), "[]"), strings.Trim(fmt.Sprint(t.Shape[1:]), "[]"))
		}
		return nil, nil, nil, fmt.Errorf("quant: calibration file %s: shape %v, input %q wants %s", file, d.Shape, t.Name, want)
	}
	if err := checkFinite(file, d); err != nil {
		return nil, nil, nil, err
	}
	k, shape := 1, t.Shape
	switch ways[0] {
	case "stack":
		k = d.Shape[0]
	case "rows":
		// Batch-1 samples (or a stack of them) for an input whose batch
		// is bound above 1 (--shape): samples along the batch are
		// independent, so they are returned one batch row each, and
		// LoadCalib groups them into batches (user-journey finding: they
		// were refused).
		k, shape = d.Shape[0], append([]int{1}, t.Shape[1:]...)
	}
	row := graph.NumElements(shape)
	out := make([]*graph.Data, k)
	for i := range out {
		s := graph.NewData(d.DType, shape)
		if d.DType == graph.Float32 {
			copy(s.F, d.F[i*row:(i+1)*row])
		} else {
			copy(s.I, d.I[i*row:(i+1)*row])
		}
		out[i] = s
	}
	return out, ways, d.Shape, nil
}

// calibLayouts are the ways a file of shape s can hold samples of input t,
// loadCalibFile's choice first:
//   - "one S": one sample, of shape S, the input's (dimensions of 1 aside:
//     a transposed or flattened sample of the same size is refused,
//     user-journey finding);
//   - "stack": samples stacked on a leading axis, each in the input's
//     shape, or without its batch of 1;
//   - "rows": batch-1 samples (stacked) of an input whose batch is bound
//     above 1.
//
// A file of a single sample [1 64] for an input [1 64] is also a stack of
// one. The files of one input must share a layout (sameLayout); stacks
// with and without the batch of 1 may mix: each stacks whole samples.
func calibLayouts(s []int, t *graph.Tensor) []string {
	per := t.NumElements()
	if per <= 0 {
		return nil
	}
	var ways []string
	if graph.NumElements(s) == per && sameShape(s, t.Shape) {
		ways = append(ways, fmt.Sprintf("one %v", s))
	}
	if len(s) >= 1 && s[0] > 0 {
		tail := s[1:]
		switch {
		case graph.NumElements(tail) == per && sameTail(tail, t.Shape):
			ways = append(ways, "stack")
		case len(t.Shape) > 1 && t.Shape[0] > 1 && graph.NumElements(tail) == per/t.Shape[0] && sameTail(tail, append([]int{1}, t.Shape[1:]...)):
			ways = append(ways, "rows")
		}
	}
	return ways
}

// sameLayout refuses cf, a file of input in, when it shares no layout with
// the input's files read before it (review finding: [1 64], [64] and
// [64 1] samples, or a [64] sample beside stacks, were all taken): it names
// one of those files it disagrees with.
func sameLayout(dir, in string, prev []calibFile, cf calibFile) error {
	if len(prev) == 0 {
		return nil
	}
	common := func(a, b []string) bool {
		for _, w := range a {
			if slices.Contains(b, w) {
				return true
			}
		}
		return false
	}
	all := slices.Clone(prev[0].ways)
	for _, p := range prev[1:] {
		all = slices.DeleteFunc(all, func(w string) bool { return !slices.Contains(p.ways, w) })
	}
	if common(all, cf.ways) {
		return nil
	}
	other := prev[0]
	for _, p := range prev {
		if !common(p.ways, cf.ways) {
			other = p
			break
		}
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil {
			return r
		}
		return p
	}
	return fmt.Errorf("quant: calibration dir %s: input %q: %s holds %s, but %s holds %s: give all of an input's files one layout (one sample each, or stacks of samples) and one sample shape", dir, in, rel(other.path), other.describe(), rel(cf.path), cf.describe())
}

// describe says how loadCalibFile reads the file.
func (c calibFile) describe() string {
	switch c.ways[0] {
	case "stack":
		return fmt.Sprintf("a stack of samples (shape %v)", c.shape)
	case "rows":
		return fmt.Sprintf("a stack of batch-1 samples (shape %v)", c.shape)
	}
	return fmt.Sprintf("one sample of shape %v", c.shape)
}

var digitRuns = regexp.MustCompile(`[0-9]+`)

// sameNumbers refuses files of several inputs, one sample each, whose
// numbers do not pair up: a_0.npy and b_0.npy are sample 0 (the numbers in
// the name after the input's, a_1_2.npy's 1_2, leading zeros aside),
// whatever their places in the file order. When some file has no number,
// the files pair in name order, unchecked.
func sameNumbers(dir string, ins []string, files map[string][]string) error {
	nums := map[string][]string{}         // input → the number of each of its files
	has := map[string]map[string]string{} // input → number → file
	for _, in := range ins {
		has[in] = map[string]string{}
		for _, f := range files[in] {
			base := filepath.Base(f)
			rest := ""
			if end := len(base) - len(".npy"); end > len(sanitize(in)) {
				rest = base[len(sanitize(in)):end]
			}
			var parts []string
			for _, r := range digitRuns.FindAllString(rest, -1) {
				if r = strings.TrimLeft(r, "0"); r == "" {
					r = "0"
				}
				parts = append(parts, r)
			}
			n := strings.Join(parts, "_")
			if n == "" {
				// A name without a number (a.npy, a_first.npy) claims
				// no sample: the files pair in name order.
				return nil
			}
			if prev, ok := has[in][n]; ok {
				return fmt.Errorf("quant: calibration dir %s: %s and %s are both sample %s of input %q: remove one", dir, filepath.Base(prev), base, n, in)
			}
			has[in][n] = f
			nums[in] = append(nums[in], n)
		}
	}
	// unmatched is a's first file whose number b has no file for.
	unmatched := func(a, b string) (file, n string) {
		for i, n := range nums[a] {
			if _, ok := has[b][n]; !ok {
				return filepath.Base(files[a][i]), n
			}
		}
		return "", ""
	}
	a := ins[0]
	for _, b := range ins[1:] {
		fa, na := unmatched(a, b)
		fb, nb := unmatched(b, a)
		switch {
		case fa != "" && fb != "":
			return fmt.Errorf("quant: calibration dir %s: %s has no file of input %q with its number (%s), and %s none of input %q (%s): the files of one sample are paired by the number in their names", dir, fa, b, na, fb, a, nb)
		case fa != "":
			return fmt.Errorf("quant: calibration dir %s: %s has no file of input %q with its number (%s): the files of one sample are paired by the number in their names", dir, fa, b, na)
		case fb != "":
			return fmt.Errorf("quant: calibration dir %s: %s has no file of input %q with its number (%s): the files of one sample are paired by the number in their names", dir, fb, a, nb)
		}
	}
	return nil
}

// checkFinite refuses a NaN or an infinity in a float calibration file.
func checkFinite(file string, d *graph.Data) error {
	if d.DType == graph.Float32 {
		for i, x := range d.F {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				why := ""
				if math.IsInf(float64(x), 0) {
					// float64 data past float32's range reads as infinite
					// (1e300 was reported as +Inf without a word why).
					why = " (an infinity, or a float64 value beyond float32's range of ±3.4e38)"
				}
				return fmt.Errorf("quant: calibration file %s: element %d is %v%s", file, i, x, why)
			}
		}
	}
	return nil
}

// batchRows groups batch rows (loadCalibFile's samples for an input whose
// batch is bound above 1) into samples of that batch, in order; the last
// batch is completed from the first rows. Full samples pass through.
func batchRows(rows []*graph.Data, t *graph.Tensor) ([]*graph.Data, error) {
	for _, r := range rows {
		if r.Len() != rows[0].Len() {
			return nil, fmt.Errorf("input %q: the calibration files mix batch-1 samples and whole batches of %v", t.Name, t.Shape)
		}
	}
	if len(rows) == 0 || len(t.Shape) < 2 || t.Shape[0] <= 1 || rows[0].Len()*t.Shape[0] != t.NumElements() {
		return rows, nil
	}
	b := t.Shape[0]
	var out []*graph.Data
	for i := 0; i < len(rows); i += b {
		s := graph.NewData(rows[0].DType, t.Shape)
		row := rows[0].Len()
		for j := 0; j < b; j++ {
			r := rows[(i+j)%len(rows)]
			if r.DType == graph.Float32 {
				copy(s.F[j*row:], r.F)
			} else {
				copy(s.I[j*row:], r.I)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// sameShape reports whether a and b are the same shape once their
// dimensions of 1 are left out.
func sameShape(a, b []int) bool {
	squeeze := func(s []int) []int {
		var o []int
		for _, d := range s {
			if d != 1 {
				o = append(o, d)
			}
		}
		return o
	}
	return slices.Equal(squeeze(a), squeeze(b))
}

// sameTail accepts a per-sample shape equal to the input's, or equal to it
// without a leading batch dimension of 1.
func sameTail(s, want []int) bool {
	eq := func(a, b []int) bool {
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
	if eq(s, want) {
		return true
	}
	return len(want) > 0 && want[0] == 1 && eq(s, want[1:])
}

// RandomCalib draws n samples uniformly in each input's declared range: the
// range its quantization parameters cover when it has any, the dtype's range
// for integer inputs, and [-1, 1] otherwise. Real data calibrates far better;
// callers should say so.
func RandomCalib(g *graph.Graph, n int, seed uint64) []map[string]*graph.Data {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]map[string]*graph.Data, n)
	for i := range out {
		out[i] = map[string]*graph.Data{}
		for _, in := range g.UserInputs() {
			t := g.Tensors[in]
			d := graph.NewData(t.DType, t.Shape)
			if t.DType == graph.Float32 {
				lo, hi := -1.0, 1.0
				if t.Quant != nil && len(t.Quant.Scale) == 1 {
					s, z := t.Quant.At(0)
					lo, hi = float64(s)*float64(-128-z), float64(s)*float64(127-z)
				}
				for j := range d.F {
					d.F[j] = float32(lo + (hi-lo)*r.Float64())
				}
			} else {
				lo, hi := t.DType.Range()
				if hi-lo > 1<<16 || hi-lo < 0 { // 32 and 64 bits (hi-lo overflows for int64)
					lo, hi = 0, 255
				}
				if n, ok := indexBound(g, in); ok {
					// Indices of a Gather: within the axis they index
					// (and the dtype's range: an int16 index of a table
					// longer than 32,768 rows stops at 32,767).
					lo, hi = max(lo, 0), min(hi, n-1)
				}
				for j := range d.I {
					d.I[j] = lo + r.Int64N(hi-lo+1)
				}
			}
			out[i][in] = d
		}
	}
	return out
}

// indexBound is, for an integer input that Gathers read as indices, the
// smallest length of the axes they index: random calibration draws indices
// below it (review finding: an embedding's ids drawn in [0, 255] for a
// table of 10 rows, clamped, calibrated the table's last row alone).
func indexBound(g *graph.Graph, in string) (int64, bool) {
	bound, ok := int64(0), false
	for _, n := range g.Consumers()[in] {
		a, isGather := n.Attrs.(*graph.GatherAttrs)
		if n.Op != graph.Gather || !isGather || len(n.Inputs) < 2 || n.Inputs[1] != in {
			continue
		}
		data := g.Tensors[n.Inputs[0]]
		if data == nil {
			continue
		}
		axis := a.Axis
		if axis < 0 {
			axis += len(data.Shape)
		}
		if axis < 0 || axis >= len(data.Shape) || data.Shape[axis] <= 0 {
			continue
		}
		if d := int64(data.Shape[axis]); !ok || d < bound {
			bound, ok = d, true
		}
	}
	return bound, ok
}

// firstNaN names where a sample's values first hold NaN: an input, else the
// first node in the graph's order whose output does (where the NaN starts,
// as sqrt or log of a negative input: review finding, the message named a
// tensor picked at random and no node).
func firstNaN(g *graph.Graph, vals map[string]*graph.Data) error {
	nan := func(name string) bool {
		v := vals[name]
		if v == nil || v.DType != graph.Float32 {
			return false
		}
		for _, x := range v.F {
			if x != x {
				return true
			}
		}
		return false
	}
	for _, in := range g.Inputs {
		if nan(in) {
			return fmt.Errorf("input %q holds NaN", in)
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if !nan(o) {
				continue
			}
			for _, in := range n.Inputs {
				if t := g.Tensors[in]; t != nil && t.Data != nil && t.Data.DType == graph.Float32 && slices.ContainsFunc(t.Data.F, func(x float32) bool { return x != x }) {
					return fmt.Errorf("node %q (%s) reads the constant %q, which holds NaN", n.Name, n.Op, in)
				}
			}
			return fmt.Errorf("node %q (%s) gives NaN in its output %q, from inputs without NaN", n.Name, n.Op, o)
		}
	}
	return nil
}
