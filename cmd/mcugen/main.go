// Command mcugen compiles trained neural networks (ONNX or TFLite, float32
// or int8) into dependency-free C99 for microcontrollers, plans their memory,
// and runs the result under QEMU to prove it bit-exact and count its cost.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
)

// version is stamped into generated files and tuning records.
const version = "0.1.0"

// commit is the source's git commit when the Makefile builds mcugen
// (-ldflags -X main.commit=...; go build's own VCS stamp is read otherwise).
var commit string

// versionLine is what --version prints: the version and, for a build from
// a git checkout, its commit (and whether the tree had changes), so a CI
// log names the build that made its artifacts. Generated files carry the
// version alone: they stay byte-identical across commits that do not
// change them.
func versionLine() string {
	if commit != "" {
		return fmt.Sprintf("%s (commit %s)", version, commit)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (commit %s)", version, rev)
}

type cli struct {
	Inspect  inspectCmd  `cmd:"" help:"Summarise a model: inputs, outputs, ops, MACs, weight bytes; --ir prints a pipeline stage."`
	Eval     evalCmd     `cmd:"" help:"Run the reference interpreter on input tensors and write the outputs as .npy."`
	Quantize quantizeCmd `cmd:"" help:"INT8 post-training quantization of a float model; writes a QDQ ONNX model and a per-layer report."`
	Plan     planCmd     `cmd:"" help:"Plan the activation memory: one arena, every tensor's offset and lifetime, the lower bound."`
	Compile  compileCmd  `cmd:"" help:"Emit the model as C99 for a board (header API, entry function, kernels, weights)."`
	Run      runCmd      `cmd:"" help:"Build firmware for a board, run it (QEMU, or natively for host) and compare with the reference."`
	Test     testCmd     `cmd:"" help:"Regression: compile, run and compare bit-exactly on every board given; non-zero exit on any mismatch."`
	Bench    benchCmd    `cmd:"" help:"Measure instructions per inference, MACs per instruction, arena, flash and RAM."`
	Boards   boardsCmd   `cmd:"" help:"List the board catalog."`
	Tune     tuneCmd     `cmd:"" help:"Search schedule knobs per kernel, measured exactly under QEMU; writes tuning records for compile --tuning."`

	Version kong.VersionFlag `help:"Print the version and exit."`
}

// env is what every command gets: where to print, and the warning sink.
type env struct {
	stdout, stderr io.Writer
	said           map[string]bool // warnOnce's messages
}

func (e *env) warn(msg string) { fmt.Fprintf(e.stderr, "mcugen: warning: %s\n", msg) }

// warnOnce is warn for a message that several models of one command would
// repeat (a board run on its QEMU twin: user-journey finding, once per
// model).
func (e *env) warnOnce(msg string) {
	if e.said[msg] {
		return
	}
	if e.said == nil {
		e.said = map[string]bool{}
	}
	e.said[msg] = true
	e.warn(msg)
}

// progress shows msg on one line of a terminal's stderr, replacing the
// previous one ("" clears it); when stderr is not a terminal (a log, a
// pipe, a test) it prints nothing.
func (e *env) progress(msg string) {
	if e.stderr != os.Stderr {
		return
	}
	if fi, err := os.Stderr.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return
	}
	if msg == "" {
		fmt.Fprint(e.stderr, "\r\033[K")
		return
	}
	fmt.Fprintf(e.stderr, "\r\033[K%s", msg)
}

// printJSON writes exactly one JSON object.
func (e *env) printJSON(v any) error {
	b, err := marshalJSON(v, "  ")
	if unsupportedNumber(err) {
		// A NaN or an infinity: as a string (README, --json).
		var safe any
		if safe, err = finiteJSON(reflect.ValueOf(v)); err == nil {
			b, err = marshalJSON(safe, "  ")
		}
	}
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(b, '\n'))
	return err
}

// marshalJSON is json.Marshal (json.MarshalIndent with indent) without
// HTML's escapes: a kernel signature's "->" stays as the records file has
// it, where "\u003e" made a grep for it fail (tune review finding).
func marshalJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// usageError marks errors that should exit 2.
type usageError struct{ error }

func main() {
	// On SIGINT, SIGTERM or SIGHUP (a closed terminal), kill the programs the
	// runner started (QEMU and gcc run in process groups of their own, so the
	// signal does not reach them), remove the temporary output being written
	// (the old output, if any, is untouched), the lock files held and the
	// temporary build directories, and exit like a shell does: 128 + the signal's number.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		runner.Interrupt()
		cleanupTemps()
		fileio.RemoveWriting()
		fileio.RemoveLocks()
		fmt.Fprintf(os.Stderr, "mcugen: interrupted (%v)\n", s)
		if h := interruptHint.Load(); h != nil {
			fmt.Fprintf(os.Stderr, "mcugen: %s\n", (*h)())
		}
		os.Exit(signalStatus(s))
	}()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// interruptHint, when set, is printed after "interrupted": how to go on
// (tune: --resume; it said nothing of it: user-journey finding).
var interruptHint atomic.Pointer[func() string]

// signalStatus is the exit status of a process ended by s: 128 + its number
// (130 for SIGINT, 143 for SIGTERM).
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// pending is the temporary output directory being filled, if any, and the
// temporary build directories of run, test, bench and tune. The whole
// write-and-rename of an output holds the lock, so an interrupt either waits
// for a write to finish or removes its temporary directory before it is
// renamed; creating and removing a build directory holds it too.
var pending struct {
	sync.Mutex
	dir  string
	work map[string]bool
}

// cleanupTemps removes the temporary output directory being written and the
// build directories. It keeps the lock: the process exits right after.
func cleanupTemps() {
	pending.Lock()
	if pending.dir != "" {
		os.RemoveAll(pending.dir)
	}
	for d := range pending.work {
		os.RemoveAll(d)
	}
}

// workPrefixes are the prefixes of tempWorkDir's directories.
var workPrefixes = []string{"mcugen-run-", "mcugen-tune-", "mcugen-measure-"}

// orphanAge is how long a work directory must have been left unchanged
// before a later run removes it as an orphan (its lock free too).
const orphanAge = 10 * time.Minute

var sweepOnce sync.Once

// tempWorkDir makes a temporary build directory (prefix as os.MkdirTemp
// takes it, one of workPrefixes) that an interrupt removes; done removes
// it. The process holds the directory's lock while it lives, so the
// first tempWorkDir of a later run removes the directories a killed run
// left (tuning journey: kill -9 left /tmp/mcugen-tune-* behind, and
// --bazel's hold a copy of mcugen each).
func tempWorkDir(prefix string) (dir string, done func(), err error) {
	sweepOnce.Do(func() { fileio.SweepOrphans(os.TempDir(), workPrefixes, keepMarker, orphanAge) })
	pending.Lock()
	defer pending.Unlock()
	if dir, err = os.MkdirTemp("", prefix); err != nil {
		// Name the variable that chose the place (user-journey finding:
		// "stat /x: no such file or directory" said nothing of TMPDIR).
		return "", nil, fmt.Errorf("the temporary build directory (in %s, from TMPDIR, or use --keep DIR): %w", os.TempDir(), unwrapPath(err))
	}
	// Best effort: where the file system has no flock the run goes on
	// unlocked, and a sweep, unable to lock either, leaves its directory.
	unlock, lerr := fileio.LockDir(dir, func() {})
	if lerr != nil {
		unlock = func() {}
	}
	if pending.work == nil {
		pending.work = map[string]bool{}
	}
	pending.work[dir] = true
	return dir, func() {
		pending.Lock()
		defer pending.Unlock()
		os.RemoveAll(dir)
		unlock()
		delete(pending.work, dir)
	}, nil
}

// run executes one command line and returns the exit code: 0 success, 1 an
// error (one line on stderr: "mcugen: <what>: <why>"), 2 bad usage.
func run(args []string, stdout, stderr io.Writer) (code int) {
	var c cli
	exitCode := -1
	parser, err := kong.New(&c,
		kong.Name("mcugen"),
		kong.Description("mcugen compiles a trained neural network (ONNX or TFLite, float32 or int8) into dependency-free C99 for microcontrollers.\n\nStart with `mcugen inspect MODEL`, then `mcugen compile MODEL --board mps2-an386 -o out/`; `mcugen run` builds and runs it under QEMU."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Vars{"version": versionLine()},
		kong.Exit(func(c int) { exitCode = c; panic(exitSignal{}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.NamedMapper("outfile", outFileMapper),
	)
	if err != nil {
		fmt.Fprintf(stderr, "mcugen: %v\n", err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitSignal); ok {
				code = exitCode
				return
			}
			fmt.Fprintf(stderr, "mcugen: internal error: %v\n", oneLine(fmt.Sprint(r)))
			code = 1
		}
	}()
	if err := repeatedFlag(parser.Model, args); err != nil {
		fmt.Fprintf(stderr, "mcugen: %s\n", err)
		usageJUnit(args, err, stderr)
		return 2
	}
	ctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "mcugen: %s\n", oneLine(err.Error()))
		usageJUnit(args, err, stderr)
		return 2
	}
	out := &stickyWriter{w: stdout}
	e := &env{stdout: out, stderr: stderr}
	defer func() {
		// A report that did not reach standard output (a full disk
		// under `mcugen inspect --ir c m > m.c`) is an error: exit 0 left
		// a truncated file behind (review finding; --json said so
		// already, as it checks its one write).
		if code == 0 && out.err != nil {
			fmt.Fprintf(stderr, "mcugen: write standard output: %v\n", out.err)
			code = 1
		}
	}()
	if err := ctx.Run(e); err != nil {
		fmt.Fprintf(stderr, "mcugen: %s\n", oneLine(err.Error()))
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// stickyWriter passes writes on to w and keeps the first error, which the
// fmt.Fprint calls of the commands' tables do not look at.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// usageJUnit writes, for a `test --junit FILE` whose flags were refused
// before it ran, a report of that error in place of any earlier one: a CI
// test view kept showing the last green run (user-journey finding).
func usageJUnit(args []string, err error, stderr io.Writer) {
	if len(args) == 0 || args[0] != "test" {
		return
	}
	var file string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--junit="); ok {
			file = v
		} else if a == "--junit" && i+1 < len(args) {
			file = args[i+1]
		}
	}
	if file == "" || checkOutputFile("--junit", file) != nil {
		return
	}
	r := testResult{Model: "(not run)", Board: "-", Instructions: -1, Error: "usage: " + oneLine(err.Error())}
	if werr := writeJUnit(file, []testResult{r}); werr != nil {
		fmt.Fprintf(stderr, "mcugen: warning: %s\n", werr)
	}
}

type exitSignal struct{}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// parseShapes turns NAME=d0,d1,... flags into a map.
func parseShapes(flags []string) (map[string][]int, error) {
	m := map[string][]int{}
	for _, f := range flags {
		name, dims, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, usageError{fmt.Errorf("--shape %q: want NAME=d0,d1,...", f)}
		}
		var s []int
		for _, p := range strings.Split(dims, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || v <= 0 {
				return nil, usageError{fmt.Errorf("--shape %q: %q is not a positive dimension", f, p)}
			}
			s = append(s, v)
		}
		if prev, ok := m[name]; ok && !slices.Equal(prev, s) {
			// Last-wins hid a typo (a review finding); --input, --board
			// and --json refuse theirs too.
			return nil, usageError{fmt.Errorf("--shape %q: input %q is bound twice (to %v and %v)", f, name, prev, s)}
		}
		m[name] = s
	}
	return m, nil
}

// uniquePaths drops the repeats of a list of files (by cleaned path), so a
// model named twice (a shell glob that matches it twice) runs once.
func uniquePaths(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if k := filepath.Clean(p); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// repeatable are the flags that may be given more than once.
var repeatable = map[string]bool{"--input": true, "--shape": true, "--float": true}

// repeatedFlag refuses a single-valued flag given twice: the parser keeps
// the last one, so "--board a --board b" ran on b alone. Two spellings of
// one flag (its short form, an alias) are the same flag: "run --out d1 -o
// d2" wrote d2 alone (review finding); the spellings are the command's own,
// from the parser's model.
func repeatedFlag(app *kong.Application, args []string) error {
	spell := map[string]string{}
	cmd := ""
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, n := range app.Children {
			if n.Name != a {
				continue
			}
			cmd = n.Name
			for _, f := range n.Flags {
				canon := "--" + f.Name
				if f.Short != 0 {
					spell["-"+string(f.Short)] = canon
				}
				for _, al := range f.Aliases {
					spell["--"+al] = canon
				}
			}
		}
		break // the first word is the command
	}
	seen := map[string]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "--") {
			if len(name) < 2 || name[0] != '-' || spell[name[:2]] == "" {
				continue // not a flag, or no short flag of the command's
			}
			name = name[:2] // -oDIR
		}
		if canon, ok := spell[name]; ok {
			name = canon
		}
		if repeatable[name] {
			continue
		}
		if seen[name] {
			hint := ""
			if name == "--board" && (cmd == "test" || cmd == "bench") {
				// Only these take several (tune refused the hint's
				// a,b: review finding).
				hint = " (several boards: --board a,b)"
			}
			return fmt.Errorf("%s is given twice%s", name, hint)
		}
		seen[name] = true
	}
	return nil
}

// compileModel is pipeline.Compile with its warnings held until it returns
// (heldWarnings).
func compileModel(model string, opt pipeline.Options) (*pipeline.State, error) {
	return heldWarnings(opt, func(opt pipeline.Options) (*pipeline.State, error) { return pipeline.Compile(model, opt) })
}

// heldWarnings runs a pipeline call with opt's warnings held until it
// returns: said when it succeeds, dropped when it fails, so that a failure is
// the one line the CLI contract promises (a review found a 2-line "too big
// for the board": the out-of-place warning, then the error repeating it).
// The state's later warnings go to opt's own Warn.
// keep says which errors still have the warnings said (plan's fit error,
// which prints the plan they speak of).
func heldWarnings(opt pipeline.Options, call func(pipeline.Options) (*pipeline.State, error), keep ...func(error) bool) (*pipeline.State, error) {
	warn := opt.Warn
	var held []string
	opt.Warn = func(msg string) { held = append(held, msg) }
	s, err := call(opt)
	if s != nil {
		s.Opt.Warn = warn
	}
	say := err == nil
	for _, k := range keep {
		say = say || k(err)
	}
	if say && warn != nil {
		for _, msg := range held {
			warn(msg)
		}
	}
	return s, err
}

// outFileMapper decodes a flag naming a file to write (type:"outfile"): as
// kong's "path" (expanded, absolute) but refusing a name that ends in a
// separator, which "path" cleaned away: `tune -o dir/` wrote a file named
// dir (tune review).
var outFileMapper = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	var p string
	if err := ctx.Scan.PopValueInto("file", &p); err != nil {
		return err
	}
	if len(p) > 1 && (strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator))) {
		return fmt.Errorf("%s: names a directory (it ends in %q); want a file name", p, p[len(p)-1:])
	}
	if p != "" && p != "-" {
		p = kong.ExpandPath(p)
	}
	target.SetString(p)
	return nil
})
