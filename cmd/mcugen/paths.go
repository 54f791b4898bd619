package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
	"github.com/mcugen/mcugen/importer/npy"
)

// checkDirFlag checks, before any work, that a directory flag (--out,
// --keep) can be a directory: absent (it is created) or a directory.
func checkDirFlag(flag, dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return checkCreatable(flag, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, dir, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s %s: exists and is not a directory", flag, dir)
	}
	return nil
}

// keepMarker marks a directory that run, test or bench kept a build in.
const keepMarker = ".mcugen-keep"

// checkKeepDir refuses to build in an existing directory that holds files
// and is not one mcugen kept a build in (its marker, or the build.sh an
// earlier mcugen wrote there): the build replaces build/ and model/ files
// (a user journey: --keep myproj overwrote the user's build/build.sh), as
// compile -o refuses a directory without its .mcugen mark.
func checkKeepDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil // new, or empty, or for makeDirFlag to report
	}
	if _, err := os.Stat(filepath.Join(dir, keepMarker)); err == nil {
		return nil
	}
	if b, err := os.ReadFile(filepath.Join(dir, "build", "build.sh")); err == nil && strings.Contains(string(b), "# Written by mcugen") {
		return nil
	}
	return fmt.Errorf("--keep %s: exists, is not empty and holds no build an earlier mcugen kept (no %s): name a new or empty directory", dir, keepMarker)
}

// claimKeepDir checks dir (checkKeepDir), creates it and marks it as a
// directory mcugen keeps builds in.
func claimKeepDir(dir string) error {
	if err := checkKeepDir(dir); err != nil {
		return err
	}
	if err := makeDirFlag("--keep", dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, keepMarker), []byte("kept by mcugen run/test/bench: its files are replaced on the next run\n"), 0o644); err != nil {
		return fmt.Errorf("--keep %s: %w", dir, unwrapPath(err))
	}
	return nil
}

// makeDirFlag creates the directory of a flag that checkDirFlag accepted.
func makeDirFlag(flag, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s %s: %w", flag, dir, unwrapPath(err))
	}
	return nil
}

// errCannotWrite is the permission an output file's check found missing
// (tune, with every record present, writes nothing and goes on).
var errCannotWrite = errors.New("permission denied")

// checkOutputFile checks, before any work, that the file a flag names (-o
// OUT.onnx, -o records.json) can be written: an existing file must be
// writable, a new one's parent directory must exist or be creatable
// (makeParent creates it). An existing directory is left for the write to
// report.
func checkOutputFile(flag, path string) error {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s %s: is a directory; name a file", flag, path)
		}
		if syscall.Access(path, 2 /* W_OK */) != nil {
			return fmt.Errorf("%s %s: cannot write it (%w)", flag, path, errCannotWrite)
		}
		return nil
	}
	return checkCreatable(flag, path)
}

// makeParent creates the parent directory of a file that checkOutputFile
// accepted, as compile -o creates the parent of its output directory.
func makeParent(flag, path string) error {
	parent := filepath.Dir(filepath.Clean(path))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%s %s: cannot create its directory %s: %w", flag, path, parent, unwrapPath(err))
	}
	return nil
}

// checkCreatable checks that path could be created: its nearest existing
// ancestor is a directory this process may write into.
func checkCreatable(flag, path string) error {
	for dir := filepath.Dir(filepath.Clean(path)); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) && dir != filepath.Dir(dir) {
			continue
		}
		switch {
		case err != nil:
			return fmt.Errorf("%s %s: %s: %w", flag, path, dir, unwrapPath(err))
		case !st.IsDir():
			return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
		case syscall.Access(dir, 2 /* W_OK */) != nil:
			return fmt.Errorf("%s %s: cannot create files in %s (%w)", flag, path, dir, errCannotWrite)
		}
		return nil
	}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// bindInputs is importer.BindInputs, except that a .npy file whose element
// type the npy reader converts (float64, read as float32) is named by the
// type the file holds when it does not fit the input.
func bindInputs(g *graph.Graph, args []string) (map[string]*graph.Data, error) {
	for _, a := range args {
		// "mcugen: : no such file or directory" named nothing (an empty
		// shell variable; robustness journey).
		if a == "" || strings.HasSuffix(a, "=") && !fileExists(a) {
			return nil, usageError{fmt.Errorf("--input %q: names no file", a)}
		}
	}
	vec, err := importer.BindInputs(g, args)
	if err == nil {
		if err := refuseNonFiniteQuantized(g, vec, args); err != nil {
			return nil, err
		}
		return vec, nil
	}
	msg := err.Error()
	for _, a := range args {
		files := []string{a}
		if _, f, ok := strings.Cut(a, "="); ok {
			files = append(files, f)
		}
		for _, file := range files {
			prefix := file + ": holds float32,"
			if !strings.HasPrefix(msg, prefix) || !strings.EqualFold(filepath.Ext(file), ".npy") {
				continue
			}
			if h, herr := npyHeader(file); herr == nil && h.DType != graph.Float32.String() {
				return nil, fmt.Errorf("%s: holds %s,%s", file, h.DType, strings.TrimPrefix(msg, prefix))
			}
		}
	}
	return nil, err
}

// refuseNonFiniteQuantized refuses a NaN or an infinity in a float input
// that a Quantize reads (a TFLite int8 model with float inputs, an ONNX QDQ
// model): it has no integer value (C's conversion of it is undefined, and
// the reference made it the zero point, so eval printed it and run called
// the firmware's result bit-exact; review finding). fitInput refuses them
// for the models mcugen quantizes.
func refuseNonFiniteQuantized(g *graph.Graph, vec map[string]*graph.Data, args []string) error {
	cons := g.Consumers()
	for _, name := range slices.Sorted(maps.Keys(vec)) {
		d := vec[name]
		i := slices.IndexFunc(cons[name], func(n *graph.Node) bool { return n.Op == graph.Quantize })
		if d.DType != graph.Float32 || i < 0 {
			continue
		}
		for j, x := range d.F {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%sinput %q: element %d is %v, which the model's Quantize %q cannot hold as an integer", inputFile(args, name), name, j, x, cons[name][i].Name)
			}
		}
	}
	return nil
}

func npyHeader(path string) (npy.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return npy.Header{}, err
	}
	defer f.Close()
	return npy.ReadHeader(f)
}

// checkReplace checks, before any work, a file that a flag writes whole
// (plan --svg, test --junit, tune -o): named, not one of the command's
// inputs, writable (checkOutputFile), and, where it exists as a regular
// file, one of the kind the command writes, as its first bytes tell
// (looks). A robustness journey found `plan m.onnx --svg m.onnx` and
// `test m.tflite --junit m.tflite` replacing the model. A device or a pipe
// (/dev/stdout) is written through.
func checkReplace(flag, path, kind string, inputs []string, looks func(head []byte) bool) error {
	if path == "" {
		return usageError{fmt.Errorf("%s \"\": name a file", flag)}
	}
	for _, in := range inputs {
		if in != "" && sameFile(in, path) {
			return usageError{fmt.Errorf("%s %s: is an input of this command; writing %s there would replace it: name another file", flag, path, kind)}
		}
	}
	if err := checkOutputFile(flag, path); err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || throughDevice(path) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil // for the write to report
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if !looks(head[:n]) {
		return fmt.Errorf("%s %s: exists and is not %s; mcugen replaces only a file of that kind: name another file, or remove it yourself", flag, path, kind)
	}
	return nil
}

// throughDevice reports whether path names a file through /dev or /proc
// (/dev/stdout, /dev/fd/3, /proc/self/fd/1): a stream the caller
// redirected, which may be a regular file of any kind (review: `plan
// --svg /dev/stdout >> log.txt` was refused as "not an SVG picture").
func throughDevice(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	return strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/")
}

// looksXML reports whether a file starts as an XML document or an SVG
// picture (after any byte-order mark and white space).
func looksXML(head []byte) bool {
	h := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return bytes.HasPrefix(h, []byte("<?xml")) || bytes.HasPrefix(h, []byte("<svg")) || bytes.HasPrefix(h, []byte("<testsuite")) || bytes.HasPrefix(h, []byte("<!--"))
}

// looksJSON reports whether a file starts as a JSON object or array (the
// records reader says what else is wrong with it).
func looksJSON(head []byte) bool {
	h := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(h) == 0 || h[0] == '{' || h[0] == '['
}

// checkSparesInputs refuses, before any work, output files (eval's and
// run's --out DIR/<output>.npy) that would replace one of the command's
// --input files: a robustness journey found `eval m.onnx --input d/x4.npy
// --out d` replacing the input x4.npy with the output of the same name.
func checkSparesInputs(flag string, files, inputs []string) error {
	for _, a := range inputs {
		in := a
		if _, f, ok := strings.Cut(a, "="); ok && !fileExists(a) {
			in = f
		}
		for _, f := range files {
			if sameFile(in, f) {
				return usageError{fmt.Errorf("%s %s: the output %s would replace the input file %s: name another directory", flag, filepath.Dir(f), filepath.Base(f), in)}
			}
		}
	}
	return nil
}

// shown is a tensor name as printed on a line of its own: as it is, or
// quoted with Go's escapes when it holds a control character (robustness
// journey: an output named "a\nb\x1b[31m" split eval's line and coloured
// the terminal).
func shown(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}
