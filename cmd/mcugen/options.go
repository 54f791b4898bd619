package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/crt"
	"github.com/mcugen/mcugen/emitc"
	"github.com/mcugen/mcugen/pipeline"
)

// quantFlags ask for INT8 quantization of a float model on the way.
type quantFlags struct {
	Calib       string   `help:"Calibration directory (.npy per input per sample, or one stacked .npy per input); quantizes a float model to int8." type:"path" placeholder:"DIR"`
	CalibRandom *int     `help:"Quantize with N random calibration inputs instead of real data." placeholder:"N"`
	Quantize    string   `help:"Quantize a float model: int8." enum:",int8" default:""`
	Method      string   `help:"Activation range method when quantizing: minmax, percentile (the default), entropy, mse." placeholder:"M" enum:",minmax,percentile,entropy,mse" default:""`
	Float       []string `help:"When quantizing, keep this node in float32 (a name, a glob such as 'model/block_3/*', a name the report's table cut with ..., or a report row such as conv1+relu1; repeatable): mixed precision for a layer int8 cannot hold." placeholder:"NODE" sep:"none"`
}

// compileFlags are the options of compile, shared by run, test, bench and tune.
type compileFlags struct {
	quantFlags
	Board          string `help:"Target board (see mcugen boards)." default:"host"`
	Boards         string `help:"A Starlark board file adding boards to the catalog." type:"path" placeholder:"FILE"`
	Prefix         string `help:"C name prefix of the generated API (default: from the model file name; tvmgen_default gives microTVM's names)."`
	Arena          string `help:"static: the arena is a buffer in the generated code; external: <prefix>_run takes a void *arena." default:"static" enum:"static,external"`
	IO             string `name:"io" help:"Where inputs/outputs live: separate (the caller's buffers) or in-arena." default:"separate" enum:"separate,in-arena"`
	Int8IO         bool   `name:"int8-io" help:"Give a QDQ model int8 inputs and outputs, as a model mcugen quantizes has: its input QuantizeLinear and output DequantizeLinear are left to the caller."`
	WeightsSection string `help:"Put the weights in this linker section." placeholder:"NAME"`
	Target         string `help:"Schedule set (default: from the board's features): generic, dsp, mve, neon."`
	Tuning         string `help:"Tuning records (from mcugen tune) whose knobs apply to the kernels they match." type:"path" placeholder:"FILE"`
	budgetFlags
}

// budgetFlags limit what the model may take of the chip, on any board (a
// bare-metal board's memory regions apply as well; the tighter binds).
type budgetFlags struct {
	FlashBudget byteSize `help:"Flash the model may take (its code and weights), in bytes or with K, KB, KiB, M, MB, MiB: layers keep int8 weights to fit, or the build fails. 0: no budget." placeholder:"SIZE"`
	RAMBudget   byteSize `name:"ram-budget" help:"RAM the model may take (its arena and state buffers), in bytes or with K, KB, KiB, M, MB, MiB; the build fails if it needs more. 0: no budget." placeholder:"SIZE"`
}

// maxVectors bounds --random and --calib-random: the vectors are made
// before the first runs, and a billion of them ran out of memory (review
// finding). Real calibration and regression sets are hundreds.
const maxVectors = 100000

func checkVectorCount(flag string, n int) error {
	if n > maxVectors {
		return usageError{fmt.Errorf("%s %d: at most %d vectors (they are made before the first run)", flag, n, maxVectors)}
	}
	return nil
}

// byteSize is a --flash-budget or --ram-budget value (parseSize).
type byteSize int64

// Decode takes the flag's value from the command line as kong's text
// values do, and also a negative number, which kong reads as a short flag
// ("-5": "expected value value but got \"-5\" (short flag)", a
// user-journey finding): it reaches parseSize, which says what a size is.
func (b *byteSize) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Pop()
	var text string
	switch {
	case t.IsEOL():
		return fmt.Errorf("wants a size (e.g. 262144, 200KB, 256KiB)")
	case t.Type == kong.ShortFlagToken:
		text = t.String()
		if next := ctx.Scan.Peek(); next.Type == kong.ShortFlagTailToken {
			text += next.String()
			ctx.Scan.Pop()
		}
	default:
		text = fmt.Sprint(t.Value)
	}
	return b.UnmarshalText([]byte(text))
}

func (b *byteSize) UnmarshalText(text []byte) error {
	n, err := parseSize(string(text))
	*b = byteSize(n)
	return err
}

// sizeUnits are parseSize's suffixes, lower case.
var sizeUnits = map[string]int64{"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000 * 1000, "mb": 1000 * 1000, "mib": 1 << 20}

// parseSize reads a size in bytes: a whole number, optionally followed by
// B, K or KB (1000), KiB (1024), M or MB (1000²), MiB (1024²), in any case.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if i == 0 || !ok {
		return 0, fmt.Errorf("%q is not a size: want a whole number of bytes, optionally with K, KB, KiB, M, MB or MiB (e.g. 262144, 200KB, 256KiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%q is too large a size", s)
	}
	return n * unit, nil
}

// calibRandom is --calib-random's N (0 when not given).
func (q *quantFlags) calibRandom() int {
	if q.CalibRandom == nil {
		return 0
	}
	return *q.CalibRandom
}

func (q *quantFlags) options(e *env, m *modelFlags) (pipeline.Options, error) {
	shapes, err := parseShapes(m.Shape)
	if err != nil {
		return pipeline.Options{}, err
	}
	if q.Calib != "" && q.CalibRandom != nil {
		return pipeline.Options{}, usageError{fmt.Errorf("--calib and --calib-random both give calibration data: give one")}
	}
	n := q.calibRandom()
	if q.CalibRandom != nil && n <= 0 {
		// 0 as well: it built float firmware without a word (review
		// finding), where it asked to quantize.
		return pipeline.Options{}, usageError{fmt.Errorf("--calib-random %d: must be a positive number of samples", n)}
	}
	if err := checkVectorCount("--calib-random", n); err != nil {
		return pipeline.Options{}, err
	}
	if q.Method != "" && q.Calib == "" && n == 0 && q.Quantize == "" {
		return pipeline.Options{}, usageError{fmt.Errorf("--method %s applies only when quantizing: add --calib DIR, --calib-random N or --quantize int8", q.Method)}
	}
	if len(q.Float) > 0 && q.Calib == "" && n == 0 && q.Quantize == "" {
		return pipeline.Options{}, usageError{fmt.Errorf("--float %s applies only when quantizing a float model: add --calib DIR, --calib-random N or --quantize int8", q.Float[0])}
	}
	// warnOnce: test and bench compile a model once per board, and said
	// the same warning (random calibration, say) for each (review finding).
	return pipeline.Options{Shapes: shapes, Warn: e.warnOnce, Calib: q.Calib, CalibRandom: n,
		Quantize: q.Quantize, Method: q.Method, Float: q.Float, Version: version}, nil
}

// checkPaths checks the files --boards and --tuning name before any work.
func (c *compileFlags) checkPaths() error {
	if err := checkPath("--boards", c.Boards, false); err != nil {
		return err
	}
	return checkPath("--tuning", c.Tuning, false)
}

// checkPath says, as an error (exit 1, as for a missing model, --input or
// --calib), that the file (or, with dir, the directory) a flag names is not
// there or is the other kind. kong's existingfile made it bad usage, exit
// 2 (review finding: the exit code depended on the flag).
func checkPath(flag, path string, dir bool) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", flag, err)
	case dir && !fi.IsDir():
		return fmt.Errorf("%s %s: not a directory", flag, path)
	case !dir && fi.IsDir():
		return fmt.Errorf("%s %s: a directory, not a file", flag, path)
	}
	return nil
}

func (c *compileFlags) options(e *env, m *modelFlags) (pipeline.Options, *boards.Catalog, error) {
	if err := c.checkPaths(); err != nil {
		return pipeline.Options{}, nil, err
	}
	opt, err := c.quantFlags.options(e, m)
	if err != nil {
		return opt, nil, err
	}
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return opt, nil, err
	}
	if strings.TrimSpace(c.Board) == "" {
		return opt, nil, usageError{fmt.Errorf("--board %q: a board name is empty (mcugen boards lists them)", c.Board)}
	}
	if opt.Board, err = getBoard(cat, c.Board); err != nil {
		return opt, nil, err
	}
	opt.Prefix, opt.ArenaExternal, opt.IOInArena, opt.Int8IO = c.Prefix, c.Arena == "external", c.IO == "in-arena", c.Int8IO
	opt.WeightsSection, opt.Target, opt.Tuning = c.WeightsSection, c.Target, c.Tuning
	if ws := c.WeightsSection; ws != "" && ws != crt.WeightsSection {
		if err := crt.CheckSectionName(ws); err != nil {
			return opt, nil, usageError{fmt.Errorf("--weights-section: %w", err)}
		}
	}
	if err := pipeline.CheckTarget(c.Target, opt.Board); err != nil {
		return opt, nil, usageError{err}
	}
	if p := c.Prefix; p != "" {
		// As given, and as the C will have it (Int is int, a keyword).
		why := emitc.PrefixProblem(p)
		if why == "" {
			why = emitc.PrefixProblem(strings.ToLower(p))
		}
		if why != "" {
			return opt, nil, usageError{fmt.Errorf("--prefix %q: %s", p, why)}
		}
		if l := strings.ToLower(p); l != p {
			e.warn(fmt.Sprintf("--prefix %s: C names are lowercase (%s_run, %s.h; macros %s_...)", p, l, l, strings.ToUpper(p)))
			// The rest of the pipeline takes it lowercase too: the MLF and
			// project templates looked for KWS.h where kws.h was written
			// (microTVM journey finding).
			opt.Prefix = l
		}
	}
	opt.FlashBudget, opt.RAMBudget = int64(c.FlashBudget), int64(c.RAMBudget)
	return opt, cat, nil
}

// getBoard looks up a board the command line names: an unknown name is bad
// usage (exit 2), as an unknown --target is.
func getBoard(cat *boards.Catalog, name string) (*boards.Board, error) {
	if strings.Contains(name, ",") {
		if _, err := cat.Get(name); err != nil {
			// compile, run, plan and tune build for one board ('unknown
			// board "a,b"': review finding); test and bench take a list.
			return nil, usageError{fmt.Errorf("--board %q: this command takes one board (test and bench take a list)", name)}
		}
	}
	b, err := cat.Get(name)
	if err != nil {
		return nil, usageError{err}
	}
	return b, nil
}

// boardNames splits a comma-separated --board list, each name once, in order.
func boardNames(list string) []string {
	var out []string
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// checkBoards checks, before any work, every board of a comma-separated
// --board list (test and bench run one case per board: an unknown name
// last used to fail only after the others had run).
func (c *compileFlags) checkBoards() (*boards.Catalog, error) {
	if err := c.checkPaths(); err != nil {
		return nil, err
	}
	cat, err := boards.Load(c.Boards)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(c.Board, ",") {
		if strings.TrimSpace(name) == "" {
			return nil, usageError{fmt.Errorf("--board %q: a board name is empty (mcugen boards lists them)", c.Board)}
		}
		if _, err := getBoard(cat, strings.TrimSpace(name)); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// hostBuilds refuses, before any build, a --target that run, test and bench
// would build with the host's own gcc where that gcc cannot: dsp and mve C
// stops at its #error guard off an Arm core, and neon needs arm_neon.h
// (an AArch64 host). compile may still write it, for another compiler.
// (Robustness journey: `run --board host --target neon` on x86-64 ended
// in gcc's "arm_neon.h: No such file" under a deleted temporary path.)
func hostBuilds(target string, b *boards.Board) error {
	if b == nil || b.Name != "host" || target == "" || target == "generic" {
		return nil
	}
	if target == "neon" && runtime.GOARCH == "arm64" {
		return nil
	}
	board := map[string]string{"dsp": "mps2-an386", "mve": "mps3-an547", "neon": "aarch64-linux"}[target]
	return usageError{fmt.Errorf("--target %s: the host's gcc (%s) cannot build it, so run, test and bench cannot run it there: use a board whose core has it (--board %s), or compile it for your own cross compiler", target, runtime.GOARCH, board)}
}
