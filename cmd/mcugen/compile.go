package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/emitc"
	"github.com/mcugen/mcugen/graph/interp"
	"github.com/mcugen/mcugen/importer/npy"
	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
	"github.com/mcugen/mcugen/templates"
)

type compileCmd struct {
	modelFlags
	compileFlags
	Out     string `short:"o" help:"Output directory (written whole or not at all)." required:"" type:"path" placeholder:"DIR"`
	Project string `help:"Also write a whole project around the model: make, cmake, zephyr, arduino or bazel." enum:",make,cmake,zephyr,arduino,bazel" default:""`
	Format  string `help:"mlf: also write a Model Library Format tarball (microTVM's layout)." enum:",mlf" default:""`
	Force   bool   `help:"Replace an output directory an earlier compile wrote (it holds a .mcugen file)."`
	CC      string `name:"cc" help:"C compiler the C will be built with: gcc (the board's) or clang. It picks the --tuning records tuned with that compiler (tune --cc), and a --project's default compiler (make COMPILER, the CMake toolchain file)." enum:"gcc,clang" default:"gcc"`
	JSON    bool   `name:"json" help:"Print one JSON object."`
}

type compileReport struct {
	Board        string   `json:"board"`
	Target       string   `json:"target"`
	ArenaBytes   int      `json:"arena_bytes"`
	WeightsBytes int      `json:"weights_bytes"`
	Files        []string `json:"files"`
	Entry        string   `json:"entry"`
	ScratchBytes int      `json:"scratch_bytes"`
	// DeadChannels is how many output channels (all-zero weights) the
	// kernels store as constants instead of computing.
	DeadChannels int `json:"dead_channels"`
	// UnusedChannels is how many channels the compiler removed because
	// the only layer reading them gives them all-zero weights
	// (graph.PruneUnusedChannels).
	UnusedChannels int `json:"unused_channels"`
	// Int8Weights is set when the fit pass kept layers' weights int8 (in
	// flash) because the int16 layout would not fit the board's flash (or
	// the flash budget: then its budget field is set).
	Int8Weights *pipeline.LeanWeights `json:"int8_weights,omitempty"`
	// FlashBudget and RAMBudget are --flash-budget and --ram-budget, when
	// given (weights_bytes and arena_bytes say what the model uses).
	// TunedKernels is how many kernels took knobs from --tuning's records.
	TunedKernels int `json:"tuned_kernels,omitempty"`
	// TunedDefaults is how many of those took the defaults: their records'
	// searches found nothing faster (tune.Overrides).
	TunedDefaults int   `json:"tuned_defaults,omitempty"`
	FlashBudget   int64 `json:"flash_budget,omitempty"`
	RAMBudget     int64 `json:"ram_budget,omitempty"`
	// Inputs and Outputs are the API's tensors: names, C members, bytes,
	// and a quantized tensor's scale and zero point.
	Inputs  []emitc.IOInfo `json:"inputs"`
	Outputs []emitc.IOInfo `json:"outputs"`
}

func (c *compileCmd) Run(e *env) error {
	opt, _, err := c.compileFlags.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	opt.Compiler = c.CC
	// An output named through a symbolic link is checked where it points,
	// as it is written there (adversarial journey: the check of the
	// files --force would remove did not look through the link, and
	// `-o link --force` emptied the user's directory).
	if st, lerr := os.Lstat(c.Out); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		if real, rerr := filepath.EvalSymlinks(c.Out); rerr == nil {
			c.Out = real
		} else {
			// A link to nothing yet, through any chain of links: the
			// directory is made where the last one points (robustness
			// journey: a raw "rename ...: not a directory").
			end, err := linkEnd(c.Out)
			if err != nil {
				return err
			}
			c.Out = end
		}
	}
	unmarked, err := checkOutDir(c.Out, c.Force, c.Model, c.Calib, c.Tuning, c.Boards)
	if err != nil {
		return err
	}
	var kind templates.Kind
	if c.Project != "" {
		if kind, err = templates.ParseKind(c.Project); err != nil {
			return usageError{err}
		}
		// The projects' example programs call <prefix>_run(&in, &out); a
		// Bazel project for a board other than the host has none (only
		// the model's cc_library), so it takes either API.
		noExample := kind == templates.Bazel && opt.Board.Toolchain != boards.ToolchainHost
		if (c.Arena == "external" || c.IO == "in-arena") && !noExample {
			return usageError{fmt.Errorf("--project %s: its example calls the default API; --arena external and --io in-arena change it (compile without --project for those: the model's C alone, or --format mlf)", c.Project)}
		}
		// A project the board cannot have (no Zephyr name, no Arduino FQBN)
		// is refused before the model is compiled.
		if err := templates.CheckBoard(kind, opt.Board); err != nil {
			return fmt.Errorf("--project %s: %w", c.Project, err)
		}
		if c.CC == runner.CompilerClang && kind != templates.Make && kind != templates.CMake {
			// Their build systems pick the compiler (Zephyr's
			// ZEPHYR_TOOLCHAIN_VARIANT, the Arduino core's, Bazel's C++
			// toolchain): only the records follow --cc.
			e.warn(fmt.Sprintf("--cc clang: the %s project builds with the compiler its build system picks; --cc chose the tuning records (make and cmake projects also default to clang)", c.Project))
		}
		// The project's targets are named after the prefix: one CMake or
		// Bazel takes is refused when given, renamed when derived.
		if c.Prefix != "" {
			if why := templates.PrefixProblem(kind, c.Prefix); why != "" {
				return usageError{fmt.Errorf("--prefix %s: %s; %s_model would do", c.Prefix, why, c.Prefix)}
			}
		} else {
			p := pipeline.DefaultPrefix(c.Model)
			if why := templates.PrefixProblem(kind, p); why != "" {
				opt.Prefix = p + "_model"
				e.warn(fmt.Sprintf("%s: the C prefix is %s, not %s: %s (--prefix names another)", c.Model, opt.Prefix, p, why))
			}
		}
		// Zephyr, Arduino and Bazel link with their own startup code and
		// linker scripts, so the weights stay in ordinary read-only data.
		opt.PlainWeights = !templates.UsesCRT(kind)
		if kind == templates.Arduino && opt.WeightsSection == "" {
			opt.WeightsSection = opt.Board.ArduinoWeightsSection()
		}
	}
	s, err := compileModel(c.Model, opt)
	if err != nil {
		return err
	}
	if c.Project != "" && templates.UsesCRT(kind) {
		if w := exampleRAMWarning(s, int64(s.Opt.Board.StackBytes), ""); w != "" {
			e.warn(w)
		}
	}
	if kind == templates.Zephyr && s.Report != nil {
		// Zephyr's main thread has the stack prj.conf sets, and the
		// kernel's own RAM comes on top (review: a project for a 16 KiB
		// micro:bit whose example needed 18,472 B got no word).
		if w := exampleRAMWarning(s, int64(templates.ZephyrStack(int64(s.Report.ScratchBytes))), ", before Zephyr's own"); w != "" {
			e.warn(w)
		}
	}
	if w := avrWeightsWarning(s); w != "" {
		e.warn(w)
	}
	if kind == templates.CMake && c.Project != "" {
		// CMake's generators take these characters of a source or build
		// path as their own syntax (review: "#" refused, "$" and "%"
		// mangled, ";" split the path, ":" a make rule); the make
		// project builds there.
		if abs, err := filepath.Abs(c.Out); err == nil && strings.ContainsAny(abs, "#$%:;") {
			e.warn(fmt.Sprintf("--project cmake: the path %s has one of # $ %% : ; which CMake's builds cannot take: build it from a path without them (the make project has no such limit)", abs))
		}
	}
	var written, dropped []string
	err = writeDirAtomic(c.Out, c.Force, func(tmp string) error {
		defer func() {
			// What --force removes from an output directory that this
			// compile does not write again (a user's notes beside the
			// output: user-journey finding, removed silently).
			if !unmarked {
				if _, err := os.Stat(c.Out); err == nil {
					dropped, _ = extraPaths(c.Out, tmp)
				}
			}
		}()
		if c.Project == "" && c.Format == "" {
			written = sortedKeys(s.Files)
			if err := pipeline.WriteFiles(tmp, s.Files); err != nil {
				return err
			}
			if err := writeMarker(tmp); err != nil {
				return err
			}
			if unmarked {
				return sameOutput(c.Out, tmp)
			}
			return ownOutput(c.Out)
		}
		p, err := projectFor(s, kind)
		if err != nil {
			return err
		}
		if c.Project != "" {
			if written, err = templates.Write(tmp, p); err != nil {
				return err
			}
		} else if err := pipeline.WriteFiles(tmp, s.Files); err != nil {
			return err
		} else {
			written = sortedKeys(s.Files)
		}
		if c.Format == "mlf" {
			tar, err := templates.WriteMLF(tmp, p)
			if err != nil {
				return err
			}
			written = append(written, filepath.Base(tar))
		}
		// Last, so no listing of the output (an MLF archive) holds it.
		if err := writeMarker(tmp); err != nil {
			return err
		}
		if unmarked {
			return sameOutput(c.Out, tmp)
		}
		return ownOutput(c.Out)
	})
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		e.warn(fmt.Sprintf("%s: --force removed %s, which this compile does not write", c.Out, strings.Join(dropped, ", ")))
	}
	r := compileReport{Board: opt.Board.Name, Target: s.Report.Target, ArenaBytes: s.Report.ArenaBytes,
		WeightsBytes: s.Report.WeightsBytes, Entry: s.Report.Entry, ScratchBytes: s.Report.ScratchBytes, Int8Weights: s.Lean,
		DeadChannels: s.Report.DeadChannels, UnusedChannels: s.UnusedChannels, FlashBudget: opt.FlashBudget, RAMBudget: opt.RAMBudget, TunedKernels: s.Tuned, TunedDefaults: s.TunedDefaults,
		Inputs: nonNil(s.Report.Inputs), Outputs: nonNil(s.Report.Outputs)}
	for _, name := range written {
		r.Files = append(r.Files, filepath.Join(c.Out, name))
	}
	sort.Strings(r.Files)
	if c.JSON {
		return e.printJSON(r)
	}
	// The inputs and outputs in the caller's buffers are RAM the arena
	// does not count (review: a 12.6 KB input the summary never named).
	io := ""
	if !s.Opt.IOInArena {
		io = fmt.Sprintf(", inputs and outputs %s B (the caller's buffers)", comma(int64(ioBytes(s))))
	}
	fmt.Fprintf(e.stdout, "%s -> %s (board %s, target %s)\narena %s B%s, constants %s B (weights in the kernels' layout, tables), kernel scratch %s B (stack), entry %s()\n",
		c.Model, c.Out, r.Board, r.Target, comma(int64(r.ArenaBytes)), io, comma(int64(r.WeightsBytes)), comma(int64(r.ScratchBytes)), r.Entry)
	if r.Int8Weights != nil {
		fmt.Fprintln(e.stdout, r.Int8Weights.Summary())
	}
	if b := s.BudgetSummary(); b != "" {
		fmt.Fprintln(e.stdout, b)
	}
	if opt.Tuning != "" && s.Tuned > 0 {
		// Said only when records apply (none applying is a warning):
		// compile said nothing either way (user-journey finding).
		fmt.Fprintf(e.stdout, "tuning: %d of %d layer(s) take their knobs from %s%s\n", s.Tuned, len(s.Module.Funcs), opt.Tuning, tunedDefaults(s.TunedDefaults))
	}
	if r.UnusedChannels > 0 {
		fmt.Fprintf(e.stdout, "%s channels removed: the only layer that reads them has all-zero weights for them\n", comma(int64(r.UnusedChannels)))
	}
	if r.DeadChannels > 0 {
		fmt.Fprintf(e.stdout, "%s output channels with all-zero weights stored as constants, not computed\n", comma(int64(r.DeadChannels)))
	}
	for _, f := range r.Files {
		fmt.Fprintf(e.stdout, "  %s\n", f)
	}
	return nil
}

// projectFor describes a compiled model to the project templates, with one
// random input vector and its reference outputs so the example checks itself.
func projectFor(s *pipeline.State, kind templates.Kind) (templates.Project, error) {
	p := templates.Project{Kind: kind, Name: s.Opt.Prefix, Prefix: s.Opt.Prefix, Board: s.Opt.Board, Model: s.Files, IOInArena: s.Opt.IOInArena,
		ArenaBytes: int64(s.Report.ArenaBytes), WeightsBytes: int64(s.Report.WeightsBytes), ScratchBytes: int64(s.Report.ScratchBytes),
		Version: version, Compiler: s.Opt.Compiler, ClangNoVectorize: s.ClangNoVectorize()}
	for i, name := range s.Graph.UserInputs() {
		t := s.Graph.Tensors[name]
		p.Inputs = append(p.Inputs, templates.Tensor{Name: name, Field: s.Report.Inputs[i].CName, DType: t.DType.String(), Shape: t.Shape})
	}
	for i, name := range s.Graph.UserOutputs() {
		t := s.Graph.Tensors[name]
		p.Outputs = append(p.Outputs, templates.Tensor{Name: name, Field: s.Report.Outputs[i].CName, DType: t.DType.String(), Shape: t.Shape})
	}
	if sec := s.Opt.WeightsSection; sec != "" && (kind == templates.Make || kind == templates.CMake || kind == "") && s.Opt.Board.BareMetal() {
		// mcugen's linker script places the named section with the
		// weights; also the one in an MLF archive (kind "": bare-metal
		// journey, it named only .mcugen.weights).
		rt, err := templates.Runtime(s.Opt.Board, crt.Layout{WeightsSection: sec})
		if err != nil {
			return p, err
		}
		p.Runtime = rt
	}
	vec := pipeline.RandomInputs(s.Graph, 1, 42)[0]
	ref, err := interp.Run(s.Graph, vec)
	if err != nil {
		return p, err
	}
	var v templates.Vector
	for _, name := range s.Graph.UserInputs() {
		v.Inputs = append(v.Inputs, npy.Bytes(vec[name]))
	}
	for _, name := range s.Graph.UserOutputs() {
		v.Outputs = append(v.Outputs, npy.Bytes(ref[name]))
	}
	p.Vectors = []templates.Vector{v}
	return p, nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkOutDir refuses to replace a non-empty directory without --force, and
// with it one that holds any of the command's input files. unmarked says
// the directory to replace has no .mcugen file: the compile's output must
// then hold every name it holds (sameOutput), as an earlier version's
// output of the same model does.
func checkOutDir(dir string, force bool, inputs ...string) (unmarked bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return false, nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return false, fmt.Errorf("%s: exists and is not a directory", dir)
		}
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	if err := notWorkingDir(dir); err != nil {
		return false, err
	}
	if len(entries) == 0 {
		return false, nil
	}
	marked := false
	for _, e := range entries {
		if e.Name() == outputMarker {
			if !e.Type().IsRegular() {
				// A link or a directory named .mcugen is no compile's mark
				// (it was refused as "holds .mcugen ... and no .mcugen").
				return false, fmt.Errorf("%s: its %s is not a regular file (a compile writes one), so the directory is not an earlier output: name another directory with -o, or remove it yourself", dir, outputMarker)
			}
			marked = true
		}
	}
	switch {
	case !force && marked:
		return false, fmt.Errorf("%s: directory exists and holds an earlier mcugen output (use --force to replace it)", dir)
	case !force:
		// Not marked: --force takes it only if it is an older version's
		// output (sameOutput); do not promise more (user-journey finding).
		return false, fmt.Errorf("%s: directory exists, is not empty and has no .mcugen mark: name another directory with -o (--force replaces it only if it holds nothing but an earlier compile's files)", dir)
	}
	if err := forceGuard(dir, entries, inputs); err != nil {
		return false, err
	}
	return !marked, nil
}

// sameOutput checks, before an unmarked directory old is replaced by the
// new output in tmp, that tmp holds every name old holds (files as files,
// directories as directories): it is an earlier compile's output of the
// same model (mcugen before the .mcugen file wrote none), not a directory
// of the user's (`-o $HOME --force` once replaced a home directory).
func sameOutput(old, tmp string) error {
	extra, err := extraPaths(old, tmp)
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		return fmt.Errorf("holds %s, which this compile does not write, and no %s file (an earlier compile's mark): --force replaces only mcugen's own output directories; name another directory with -o, or empty this one yourself", extra[0], outputMarker)
	}
	return nil
}

// extraPaths lists the paths under old, at every depth, that tmp does not
// hold as the same kind (a file as a file, a directory as a directory; no
// symbolic links): what replacing old by tmp removes that the new output
// does not write again. A directory listed is not listed into.
func extraPaths(old, tmp string) ([]string, error) {
	var out []string
	err := walkRel(old, func(rel, _ string, e fs.DirEntry) error {
		st, serr := os.Lstat(filepath.Join(tmp, rel))
		if serr != nil || st.IsDir() != e.IsDir() || e.Type()&fs.ModeSymlink != 0 || st.Mode()&fs.ModeSymlink != 0 {
			out = append(out, rel)
			if e.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	return out, err
}

// walkRel walks the tree under root, root itself left out, and calls fn
// with each path relative to root (rel) and as the marker names it (key:
// slash-separated, a directory with a trailing /). fn's fs.SkipDir and
// fs.SkipAll act as in filepath.WalkDir.
func walkRel(root string, fn func(rel, key string, e fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			// Gone while walked: a concurrent compile --force to the same
			// directory replaced it ("readdirent out: no such file or
			// directory" under load); what is gone holds nothing.
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		key := filepath.ToSlash(rel)
		if e.IsDir() {
			key += "/"
		}
		return fn(rel, key, e)
	})
}

// outputMarker is the file every compile output holds, and --force asks
// for before it replaces a directory. After markerText it lists what the
// compile wrote (markerList, then a path a line), so that --force replaces
// those and refuses a directory where the user has added files of their
// own (bare-metal journey: a glue file written beside the model's C was
// removed by the next `compile --force`, with a warning after the fact).
const (
	outputMarker = ".mcugen"
	markerText   = "mcugen compile wrote this directory; compile --force may replace the files it lists (and refuses\nthe directory if others have been added).\n"
	markerList   = "files written:\n"
	// markerSums heads the files' SHA-256 sums, a "  <hex> <path>" line
	// each: --force refuses a listed file whose content changed since
	// (review finding: an edit to src/main.c, as the README invites, was
	// replaced without a word).
	markerSums = "file sums:\n"
	// oldMarkerText is the marker of mcugen before the list.
	oldMarkerText = "mcugen compile wrote this directory; compile --force may replace it whole.\n"
)

// writeMarker writes dir's .mcugen: markerText and the paths under dir
// (directories with a trailing /), sorted.
func writeMarker(dir string) error {
	var paths []string
	sums := map[string]string{}
	err := walkRel(dir, func(rel, key string, e fs.DirEntry) error {
		paths = append(paths, key)
		if e.Type().IsRegular() {
			sum, err := fileSum(filepath.Join(dir, rel))
			if err != nil {
				return err
			}
			sums[key] = sum
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString(markerText)
	b.WriteString(markerList)
	for _, p := range paths {
		b.WriteString("  " + p + "\n")
	}
	b.WriteString(markerSums)
	for _, p := range paths {
		if sum, ok := sums[p]; ok {
			b.WriteString("  " + sum + " " + p + "\n")
		}
	}
	return os.WriteFile(filepath.Join(dir, outputMarker), []byte(b.String()), 0o644)
}

// fileSum is the SHA-256 of the file at path, in hex, its CRLF line ends
// read as LF: a checkout with autocrlf changes no file (review finding:
// every file of such an output read as changed).
func fileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
	return hex.EncodeToString(sum[:]), nil
}

// markerPaths reads the paths dir's .mcugen lists; old is true for an
// earlier mcugen's marker (markerText alone), which --force replaces
// whole, as then. A marker mcugen cannot read or parse is an error: it
// fails closed (review finding: any other content replaced the whole
// directory). CRLF line ends (a checkout with autocrlf) are read as LF.
func markerPaths(dir string) (paths map[string]bool, sums map[string]string, old bool, err error) {
	b, err := fileio.ReadRegular(filepath.Join(dir, outputMarker), 16<<20)
	if err != nil {
		return nil, nil, false, fmt.Errorf("its %s cannot be read (%w): --force replaces only what an earlier compile's %s lists; remove the directory yourself", outputMarker, err, outputMarker)
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	if text == markerText || text == oldMarkerText {
		return nil, nil, true, nil
	}
	head, list, found := strings.Cut(text, markerList)
	if !found || !strings.HasPrefix(head, "mcugen compile wrote this directory") {
		return nil, nil, false, fmt.Errorf("its %s is not one mcugen wrote: --force replaces only what an earlier compile's %s lists; remove the directory yourself", outputMarker, outputMarker)
	}
	// Markers before the sums list paths alone.
	list, sumList, _ := strings.Cut(list, markerSums)
	paths = map[string]bool{}
	for _, l := range strings.Split(list, "\n") {
		if p := strings.TrimPrefix(l, "  "); p != "" {
			paths[p] = true
		}
	}
	sums = map[string]string{}
	for _, l := range strings.Split(sumList, "\n") {
		if sum, p, ok := strings.Cut(strings.TrimPrefix(l, "  "), " "); ok && len(sum) == 2*sha256.Size {
			sums[p] = sum
		}
	}
	return paths, sums, false, nil
}

// ownOutput checks, before a marked directory old is replaced, that every
// path under it is one its marker lists: an earlier compile's file, not
// one the user added, whether or not the new output writes that name
// again (review finding: a Makefile of the user's was overwritten). The
// build directory a generated project makes in place (make, cmake -B
// build, west build: build/; bazel's bazel-* links) goes, as the warning
// after says.
//
// Another compile with --force may swap the directory while this one reads
// it: a file it listed is then gone when it is read, and the check starts
// again on what is there now (TestConcurrentForceCompiles failed so once,
// "mlp.c: no such file or directory").
func ownOutput(old string) error {
	var err error
	for range 8 {
		if err = ownOutputOnce(old); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// buildTree reports whether dir is empty or a build directory: CMake's
// (CMakeCache.txt) or the Make project's (its flags stamp).
func buildTree(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return err == nil
	}
	for _, f := range []string{"CMakeCache.txt", "flags"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func ownOutputOnce(old string) error {
	if _, err := os.Lstat(filepath.Join(old, outputMarker)); os.IsNotExist(err) {
		return nil // a new or empty directory (one without the mark is sameOutput's)
	}
	listed, sums, whole, err := markerPaths(old)
	if err != nil || whole {
		return err
	}
	var foreign, changed string
	err = walkRel(old, func(rel, key string, e fs.DirEntry) error {
		if rel == outputMarker {
			return nil
		}
		top := !strings.Contains(strings.TrimSuffix(key, "/"), "/")
		switch {
		case listed[key]:
			if want, ok := sums[key]; ok && e.Type().IsRegular() {
				got, err := fileSum(filepath.Join(old, rel))
				if err != nil {
					return fmt.Errorf("%s: %w: --force checks that it is as compile wrote it", rel, err)
				}
				if got != want {
					changed = rel
					return fs.SkipAll
				}
			}
			return nil
		case top && key == "build/" && e.IsDir():
			// A build tree the project's README makes (CMake's, with its
			// cache; make's, with its flags stamp), or an empty one: any
			// build/ went, a user's notes in it too (templates review).
			// Another's files are looked at one by one, below.
			if buildTree(filepath.Join(old, rel)) {
				return fs.SkipDir
			}
			return nil
		case top && (strings.HasPrefix(key, "bazel-") && e.Type()&fs.ModeSymlink != 0 || key == "MODULE.bazel.lock" && e.Type().IsRegular()):
			// Bazel's convenience links, and the lock file Bazel 7 and 8
			// write beside MODULE.bazel (--force refused the project after
			// any such build: templates review).
			return nil
		}
		foreign = rel
		return fs.SkipAll
	})
	if err != nil {
		return err
	}
	if foreign != "" {
		return fmt.Errorf("holds %s, which no mcugen compile wrote there: --force replaces only what an earlier compile's %s lists; move it out of the output directory first", foreign, outputMarker)
	}
	if changed != "" {
		return fmt.Errorf("%s was changed since mcugen wrote it, and --force would replace it: keep your change elsewhere (or delete the file), then compile again", changed)
	}
	return nil
}

// realAbs is path absolute, its symbolic links resolved where they can be.
func realAbs(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// notWorkingDir refuses an output directory that is the working directory
// or holds it: the output replaces its directory whole, and the shell that
// ran the compile was left in a deleted directory (`-o .` in an empty
// directory: template journey finding; --force refused it already).
func notWorkingDir(dir string) error {
	abs, err := realAbs(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	if wd, err = realAbs(wd); err == nil && within(abs, wd) {
		return fmt.Errorf("%s: is the working directory or holds it: compile replaces its output directory whole; name a subdirectory with -o", dir)
	}
	return nil
}

// forceGuard refuses to let --force replace a directory that is not a
// previous output: a repository
// (a .git entry), one holding an input of the command (the model, the
// calibration data, tuning records, a board file). A directory without
// the .mcugen file a compile leaves is then checked against the new output
// (sameOutput).
func forceGuard(dir string, entries []os.DirEntry, inputs []string) error {
	for _, e := range entries {
		if e.Name() == ".git" {
			return fmt.Errorf("%s: holds .git: --force replaces only an output directory, never a repository; name a subdirectory with -o", dir)
		}
	}
	abs, err := realAbs(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		p, err := filepath.Abs(in)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if within(abs, p) {
			return fmt.Errorf("%s: holds %s, an input of this command: --force will not replace it; name another directory with -o", dir, in)
		}
	}
	return nil
}

// within reports whether path is dir or lies under it (both absolute, clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// missingAncestors lists dir and its ancestors that do not exist, deepest
// first: what os.MkdirAll(dir) would create.
func missingAncestors(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			return out
		}
		out = append(out, d)
	}
}

// writeDirAtomic fills a temporary directory beside dir and renames it into
// place, so an interrupted or failed write leaves the old directory or none,
// never a half-written one.
//
// Without force, a directory that holds something by the time the output
// is renamed into place is left alone: another compile to the same new
// directory finished first (user-journey finding: both succeeded, and the
// later one replaced the other's output, warning of a --force not given).
func writeDirAtomic(dir string, force bool, fill func(tmp string) error) (err error) {
	// An output that is a symbolic link to a directory is written where
	// it points, the link kept (it was replaced by a directory, and the
	// target's permissions changed).
	if st, lerr := os.Lstat(dir); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		if real, rerr := filepath.EvalSymlinks(dir); rerr == nil {
			dir = real
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	// The directories made for parent go again if the write fails, so a failure
	// leaves no empty chain behind.
	made := missingAncestors(parent)
	defer func() {
		if err != nil {
			for _, d := range made {
				os.Remove(d) // only if empty
			}
		}
	}()
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%s: %w", parent, err)
	}
	pending.Lock()
	defer pending.Unlock()
	removeStaleTemps(parent, filepath.Base(dir))
	// The process's id in the name: another compile of the same output,
	// still running, keeps its temporary directory (removeStaleTemps).
	tmp, err := os.MkdirTemp(parent, fmt.Sprintf(".%s.mcugen-tmp-%d-", filepath.Base(dir), os.Getpid()))
	if err != nil {
		return fmt.Errorf("%s: the output is written beside %s first and renamed into place, so a failed compile leaves no half-written directory; its parent must be writable: %w", parent, filepath.Base(dir), err)
	}
	pending.dir = tmp
	defer func() { os.RemoveAll(tmp); pending.dir = "" }()
	if err := fill(tmp); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	// A replaced directory keeps its permissions; a new one is 0755.
	mode := os.FileMode(0o755)
	if st, err := os.Stat(dir); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	written := fmt.Errorf("%s: was written by another command while this compile ran (another mcugen compile to the same directory?); nothing written: name another directory, or add --force", dir)
	var olds []string
	defer func() {
		for _, old := range olds {
			removeTree(old)
		}
	}()
	// Another compile with --force may put its output in place between
	// this one's moving the old directory aside and renaming its own in:
	// then the rename finds a directory again, and with --force this one
	// moves that aside too and tries again (review finding: concurrent
	// compiles to one directory with --force failed).
	for attempt := 0; ; attempt++ {
		old := ""
		if _, err := os.Stat(dir); err == nil {
			if !force {
				if es, err := os.ReadDir(dir); err == nil && len(es) > 0 {
					return written
				}
			}
			if attempt > 0 {
				// Put in place while this compile ran: moved aside only
				// as another compile's output, which carries the marker
				// (review finding: whatever appeared there went).
				if _, err := os.Stat(filepath.Join(dir, outputMarker)); err != nil {
					return fmt.Errorf("%s: a directory mcugen did not write was put there while this compile ran; nothing written, and it is left as it is", dir)
				}
			}
			old = fmt.Sprintf("%s.old%d", tmp, attempt)
			if err := os.Rename(dir, old); err != nil {
				if errors.Is(err, fs.ErrNotExist) && attempt < 8 {
					// Another compile moved it aside between the Stat
					// and this rename: look again.
					continue
				}
				return fmt.Errorf("%s: %w", dir, err)
			}
			olds = append(olds, old)
		}
		rerr := os.Rename(tmp, dir)
		if rerr == nil {
			return nil
		}
		if _, err := os.Stat(dir); err == nil {
			// Someone else's output is in place now.
			if force && attempt < 8 {
				continue
			}
			if !force {
				return written
			}
		} else if old != "" {
			// Put the old directory back: nothing replaced it.
			if os.Rename(old, dir) == nil {
				olds = olds[:len(olds)-1]
			}
		}
		return fmt.Errorf("%s: %w", dir, rerr)
	}
}

// removeTree removes dir, making a read-only tree (an old output's mode is
// kept) writable first.
func removeTree(dir string) {
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// removeStaleTemps deletes temporary directories that an earlier, killed
// compile of the same output left beside it. One whose name holds the id of
// a process still running is another compile's, under way, and stays
// (review finding: a second compile to the same directory deleted the
// first's output while it was being written).
func removeStaleTemps(parent, base string) {
	prefix := "." + base + ".mcugen-tmp-"
	stale, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
	for _, d := range stale {
		rest := strings.TrimPrefix(filepath.Base(d), prefix)
		if i := strings.IndexByte(rest, '-'); i > 0 {
			if pid, err := strconv.Atoi(rest[:i]); err == nil && pid != os.Getpid() && processAlive(pid) {
				continue
			}
		}
		removeTree(d)
	}
}

// exampleRAMWarning is a warning when a bare-metal project's example
// program is unlikely to link: beside what compile checks (the arena, the
// model's state and the stack) it keeps each input and output in a static
// buffer of its own, and the runtime has a little data of its own. The model
// itself fits; an application that reuses its buffers may too.
func exampleRAMWarning(s *pipeline.State, stack int64, before string) string {
	b := s.Opt.Board
	if b == nil || !b.BareMetal() || s.Report == nil || s.Opt.IOInArena {
		return ""
	}
	r := b.RegionFor(boards.HoldsData)
	if r == nil {
		return ""
	}
	io := ioBytes(s)
	const runtime = 256 // the runtime's own data and bss, about
	// The data region holds the stack, the example's buffers and the
	// runtime's data, and whatever else the board puts there: the arena,
	// and in a one-region board the weights (review: a data region exactly
	// the stack's size, the arena elsewhere, was taken without a word and
	// overflowed at link).
	need := stack + int64(io) + runtime
	if b.RegionFor(boards.HoldsArena) == r {
		need += s.ModelRAM()
	}
	if b.RegionFor(boards.HoldsWeights) == r && s.Module != nil {
		need += int64(s.Module.ConstBytes())
	}
	if need <= int64(r.Length) {
		return ""
	}
	return fmt.Sprintf("the example program may not link: with its stack (%s B), input and output buffers (%s B) and the runtime's data it needs about %s B of region %s%s, which has %s B; the model alone fits, so an application that reuses its buffers may still fit",
		comma(stack), comma(int64(io)), comma(need), r.Name, before, comma(int64(r.Length)))
}

// ioBytes is the bytes of the model's inputs and outputs (s compiled).
func ioBytes(s *pipeline.State) int {
	n := 0
	for _, t := range slices.Concat(s.Report.Inputs, s.Report.Outputs) {
		n += t.Size
	}
	return n
}

// avrWeightsWarning is a warning for an 8-bit AVR Arduino board: avr-gcc
// keeps const data in SRAM (only PROGMEM stays in flash, and mcugen's
// kernels read weights as ordinary memory), so the weights need SRAM too.
func avrWeightsWarning(s *pipeline.State) string {
	b := s.Opt.Board
	// The AVR cores (Arduino's, MiniCore, ATTinyCore, ...); compile has
	// refused a model whose weights and arena exceed a declared SRAM.
	if b == nil || !b.ConstInRAM() {
		return ""
	}
	w := s.Module.ConstBytes()
	if w == 0 {
		return ""
	}
	return fmt.Sprintf("%s is an AVR board: avr-gcc copies the model's %s B of weights into SRAM at start-up (mcugen does not place them in PROGMEM), beside its %s B arena; an ATmega328P has 2 KiB of SRAM and an ATmega2560 8 KiB",
		b.Name, comma(int64(w)), comma(int64(s.Plan.ArenaBytes)))
}

// linkEnd follows the symbolic link path, and the links it leads to, to the
// first path that is not a link (one that does not exist yet), resolving
// relative targets against each link's directory; a loop, or more than 40
// links, is an error naming path.
func linkEnd(path string) (string, error) {
	p := path
	for i := 0; i < 40; i++ {
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("-o %s: %w", path, unwrapPath(err))
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", fmt.Errorf("-o %s: a loop of symbolic links (or more than 40 of them): name a directory", path)
}

// nonNil is ios, or an empty list for none: --json says [] as inspect does
// ("inputs": null for a model with no inputs: review finding).
func nonNil(ios []emitc.IOInfo) []emitc.IOInfo {
	if ios == nil {
		return []emitc.IOInfo{}
	}
	return ios
}

// tunedDefaults qualifies the "take their knobs from" line when some of the
// records that applied hold the defaults (their searches found nothing
// faster): those layers take this version's defaults, which may have got
// faster since, not the record's values (session 55 left the line saying
// only that they took their knobs from the file).
func tunedDefaults(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them the defaults: the search found nothing faster)", n)
}
