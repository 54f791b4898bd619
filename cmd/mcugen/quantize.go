package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/quant"
)

type quantizeCmd struct {
	modelFlags
	Calib       string   `help:"Calibration directory: one .npy per input per sample, or one .npy per input with a leading sample dimension." type:"path" placeholder:"DIR"`
	CalibRandom int      `help:"Calibrate on N random inputs instead (real data gives better ranges)." placeholder:"N"`
	Method      string   `help:"Activation range method: minmax, percentile, entropy, mse." default:"percentile" enum:"minmax,percentile,entropy,mse"`
	Float       []string `help:"Keep this node in float32 (a name, a glob such as 'model/block_3/*', a name the table below cut with ..., or a report row such as conv1+relu1; repeatable): mixed precision for a layer int8 cannot hold." placeholder:"NODE" sep:"none"`
	Eval        string   `help:"A held-out directory in the calibration layout: also report output SQNR (and top-1 agreement, for a classifier: a Softmax output) on its samples, which the ranges were not fitted to." type:"path" placeholder:"DIR"`
	Out         string   `short:"o" help:"Write the quantized model here as a QDQ ONNX file." required:"" type:"outfile" placeholder:"OUT.onnx"`
	JSON        bool     `name:"json" help:"Print one JSON object."`
}

func (c *quantizeCmd) Run(e *env) error {
	if c.Calib == "" && c.CalibRandom <= 0 {
		return usageError{fmt.Errorf("quantize needs --calib DIR or --calib-random N, with N at least 1")}
	}
	if err := checkVectorCount("--calib-random", c.CalibRandom); err != nil {
		return err
	}
	if strings.EqualFold(filepath.Ext(c.Out), ".tflite") {
		// An ONNX file under a TFLite name (review finding).
		return usageError{fmt.Errorf("-o %s: quantize writes an ONNX QDQ model; name it .onnx (compile, run and bench take the float model with --calib for an int8 build)", c.Out)}
	}
	// The model itself, or an existing file that is not a model (a user's
	// notes.txt was overwritten, with only a warning about the extension
	// afterwards), is refused; an earlier quantize's output is replaced.
	if err := checkReplace("-o", c.Out, "an ONNX model", []string{c.Model}, importer.LooksLikeONNX); err != nil {
		return err
	}
	qf := &quantFlags{Calib: c.Calib, Quantize: "int8", Method: c.Method, Float: c.Float}
	if c.CalibRandom > 0 {
		qf.CalibRandom = &c.CalibRandom
	}
	opt, err := qf.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	// The pipeline's note that an integer model ignores --calib would
	// precede the error below, which says it better. The others wait until
	// the model is known to be a float one: an integer model's notes (its
	// weights' zero points) came before the one line that refuses it
	// (session 57's review); an error keeps them, as they may explain it.
	var held []string
	holding := true
	opt.Warn = func(w string) {
		switch {
		case strings.Contains(w, "--calib/--quantize ignored"):
		case holding:
			held = append(held, w)
		default:
			e.warn(w)
		}
	}
	flush := func() {
		holding = false
		for _, w := range held {
			e.warn(w)
		}
		held = nil
	}
	if c.Eval != "" {
		// The held-out files are checked before calibrating, which can take
		// a while (review of a journey: a wrong shape in --eval came after
		// 7 s of calibrating IC).
		opt.BeforeCalibrate = func(g *graph.Graph) error {
			if _, err := quant.LoadCalib(c.Eval, g); err != nil {
				return fmt.Errorf("--eval: %w", err)
			}
			return nil
		}
	}
	s, err := pipeline.RunUntil(c.Model, opt, "quantize")
	if err != nil {
		flush()
		return err
	}
	if s.Float == nil {
		// The reason as compile's note gives it (user-journey finding: a
		// float model of one Transpose was called "already quantized").
		why := pipeline.NotQuantizable(s.Graph)
		if strings.HasPrefix(why, "only moves") {
			return fmt.Errorf("%s: the model %s: compile it as it is", c.Model, why)
		}
		return fmt.Errorf("%s: the model %s: quantize takes a float one", c.Model, why)
	}
	flush()
	// Held-out samples, read and run before anything is written: a bad
	// file is an error naming it, with no output left behind (user-journey
	// finding: the report said how the model does on its own calibration
	// data only, and checking held-out data took a script).
	var heldOut *quant.Report
	if c.Eval != "" {
		if c.Calib != "" && sameFile(c.Eval, c.Calib) {
			e.warn(fmt.Sprintf("--eval %s is the --calib directory: its figures are not held out", c.Eval))
		}
		samples, err := quant.LoadCalib(c.Eval, s.Float)
		if err != nil {
			return fmt.Errorf("--eval: %w", err)
		}
		if heldOut, err = quant.Evaluate(s.Float, s.Graph, samples); err != nil {
			return fmt.Errorf("--eval %s: %w", c.Eval, err)
		}
	}
	if err := makeParent("-o", c.Out); err != nil {
		return err
	}
	werr := quant.WriteQDQ(s.Graph, c.Out)
	if werr == nil {
		if ext := strings.ToLower(filepath.Ext(c.Out)); ext != ".onnx" {
			e.warn(fmt.Sprintf("-o %s: quantize writes an ONNX model (QDQ); other tools will look for the .onnx extension", c.Out))
		}
	} else if errors.Is(werr, quant.ErrQDQUnsupported) {
		// The int8 model exists, only not as ONNX QDQ: say where it can go.
		// The model's node is what cannot be written: the model is named,
		// and the -o file said not to exist (review: the line named the
		// output file as if it were at fault).
		werr = fmt.Errorf("%s: %w, so -o %s is not written (compile, run and bench quantize the model themselves with --calib, without a QDQ file)", c.Model, werr, c.Out)
	} else {
		werr = fmt.Errorf("%s: %w", c.Out, werr)
	}
	// The report is printed whether or not the QDQ model could be
	// written: it is what says how the int8 model does (user-journey
	// finding: a writer error lost it).
	r := s.QuantReport
	if heldOut != nil {
		cp := *r
		heldOut.Method = r.Method // its --json "method" was ""
		cp.HeldOut = heldOut
		r = &cp
		if !(heldOut.OutputSQNRdB >= pipeline.LowSQNRdB) { // NaN too (quantizer review)
			// The figure that matters most warned about least: an in-sample
			// 22 dB passed where the held-out 12.2 dB said nothing.
			e.warn(fmt.Sprintf("--eval %s: int8 output SQNR %.1f dB against the float model on the held-out samples: the int8 model loses accuracy on data it was not calibrated on (another --method, more calibration samples, or the float model, may do better)", c.Eval, heldOut.OutputSQNRdB))
		}
	}
	if c.JSON {
		if err := e.printJSON(r); err != nil {
			return err
		}
		return werr
	}
	dest := c.Out
	if werr != nil {
		dest = "(not written)"
	}
	fmt.Fprintf(e.stdout, "%s -> %s (method %s, %s)\n", c.Model, dest, r.Method, plural(r.Samples, "calibration sample"))
	// Columns as wide as their contents (user-journey finding: an op
	// "FullyConnected+Relu" pushed its SQNR out of line), and the range
	// each int8 tensor covers, which says why a row is low: an input
	// stretched by one outlier, logits squeezed for the softmax.
	// Names past layerNameWidth are cut (TFLite's node names run to
	// hundreds of characters, and every row was padded to the longest:
	// review finding); --json has them whole.
	wn, wo := len("layer"), len("op")
	opOf := func(l quant.LayerReport) string {
		if l.Float {
			return l.Op + " (float)"
		}
		return l.Op
	}
	for _, l := range r.Layers {
		wn, wo = max(wn, len([]rune(clipName(l.Name)))), max(wo, len(opOf(l)))
	}
	// "per channel" is the median of the channels' own SQNRs: a layer whose
	// one wide channel takes the tensor's scale reads well in the SQNR
	// column and badly here.
	fmt.Fprintf(e.stdout, "%-*s %-*s %9s %12s  %s\n", wn, "layer", wo, "op", "SQNR dB", "per channel", "int8 range")
	dB := func(v float64, w int) string {
		if v >= quant.MaxSQNR {
			// No noise at all (an input the scale holds exactly): the
			// JSON's capped figure is not a measured one.
			return fmt.Sprintf("%*s", w, "exact")
		}
		return fmt.Sprintf("%*.1f", w, v)
	}
	for _, l := range r.Layers {
		ch := fmt.Sprintf("%12s", "-")
		if l.ChannelSQNRdB != nil {
			ch = dB(*l.ChannelSQNRdB, 12)
		}
		rng := ""
		if l.Range != nil {
			rng = fmt.Sprintf("[%.4g, %.4g]", l.Range[0], l.Range[1])
		}
		name := clipName(l.Name)
		fmt.Fprintf(e.stdout, "%s%*s %-*s %s %s  %s\n", name, wn-len([]rune(name)), "", wo, opOf(l), dB(l.SQNRdB, 9), ch, rng)
	}
	// In-sample figures: held-out vectors measure the model as deployed.
	db := func(v float64) string {
		if v >= quant.MaxSQNR {
			return "exact"
		}
		return fmt.Sprintf("%.1f dB", v)
	}
	fmt.Fprintf(e.stdout, "output SQNR %s (median %s) on the calibration data itself (%s)\n", db(r.OutputSQNRdB), db(r.OutputSQNRMedianDB), plural(r.Samples, "sample"))
	if len(r.Outputs) > 1 {
		// The pooled figure is the largest output's: each its own.
		for _, o := range r.Outputs {
			fmt.Fprintf(e.stdout, "  output %s: %s\n", o.Name, db(o.SQNRdB))
		}
	}
	if r.Top1Total > 0 {
		fmt.Fprintf(e.stdout, "top-1 agreement %d/%d on the calibration samples%s\n", r.Top1Agree, r.Top1Total, top1Rows(r))
	}
	if h := r.HeldOut; h != nil {
		top1 := ""
		if h.Top1Total > 0 {
			top1 = fmt.Sprintf(", top-1 agreement %d/%d%s", h.Top1Agree, h.Top1Total, top1Rows(h))
		}
		fmt.Fprintf(e.stdout, "held out (%s, %s): output SQNR %s (median %s)%s\n", c.Eval, plural(h.Samples, "sample"), db(h.OutputSQNRdB), db(h.OutputSQNRMedianDB), top1)
	}
	return werr
}

// plural is "1 sample", "2 samples".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sameFile reports whether paths a and b name one file: the same path once
// cleaned, or (os.SameFile) one file through a link or another spelling.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// top1Rows says how many arg-maxes a sample holds when its classifier
// output has several rows (a batch, or a class per position).
func top1Rows(r *quant.Report) string {
	if r.Samples == 0 || r.Top1Total == r.Samples {
		return ""
	}
	return fmt.Sprintf(" (%d rows each)", r.Top1Total/r.Samples)
}

// layerNameWidth is the widest layer name quantize's table prints.
const layerNameWidth = 48

// clipName is name cut to layerNameWidth characters, "..." marking the cut.
func clipName(name string) string {
	r := []rune(name)
	if len(r) <= layerNameWidth {
		return name
	}
	return string(r[:layerNameWidth-3]) + "..."
}
