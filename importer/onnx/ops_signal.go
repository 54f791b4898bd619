package onnx

import (
	"fmt"
	"math"

	"github.com/mcugen/mcugen/graph"
)

// The signal operators of opset 17: DFT and STFT map to graph.DFT;
// MelWeightMatrix, whose inputs are all constants, folds.

func init() {
	converters["DFT"] = convDFT
	converters["STFT"] = convSTFT
	converters["MelWeightMatrix"] = convMelWeightMatrix
	paramSlots["DFT"] = []int{1, 2}
	paramSlots["STFT"] = []int{1, 3}
	paramSlots["MelWeightMatrix"] = []int{0, 1, 2, 3, 4}
}

// scalarIn reads a constant one-element integer input (absent: def).
func scalarIn(c *nodeCtx, i int, what string, def int) (int, error) {
	d, err := c.constIn(i, what)
	if err != nil || d == nil {
		return def, err
	}
	if d.Len() != 1 || !d.DType.IsInt() {
		return 0, fmt.Errorf("%s must be one integer", what)
	}
	return int(d.Ints()[0]), nil
}

func convDFT(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("DFT on %s", x.dt)
	}
	r := len(x.shape)
	// Opset 17 has the axis as an attribute (default 1); opset 20 as
	// input 2 (default -2, counted over every axis).
	axis := int(c.int("axis", 1))
	if im.opset >= 20 {
		if axis, err = scalarIn(c, 2, "DFT axis", -2); err != nil {
			return err
		}
	}
	if axis, err = normAxis(axis, r); err != nil {
		return err
	}
	if r < 2 || axis >= r-1 {
		return fmt.Errorf("axis %d of %v: the last axis holds the real and imaginary parts", axis, x.shape)
	}
	n, err := scalarIn(c, 1, "dft_length", x.shape[axis])
	if err != nil {
		return err
	}
	a := &graph.DFTAttrs{Axis: axis, N: n, Inverse: c.int("inverse", 0) != 0, Onesided: c.int("onesided", 0) != 0}
	shape, err := graph.DFTShape(a, x.shape, nil)
	if err != nil {
		return err
	}
	c.emit1(graph.DFT, []string{im.get(x, asIs)}, a, graph.Float32, shape, asIs)
	return nil
}

func convSTFT(im *importer, c *nodeCtx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	if x.dt != graph.Float32 {
		return unsupportedf("STFT on %s", x.dt)
	}
	if len(x.shape) != 3 {
		return fmt.Errorf("signal %v, want [batch, length, 1 or 2]", x.shape)
	}
	step, err := scalarIn(c, 1, "frame_step", 0)
	if err != nil {
		return err
	}
	if step < 1 {
		return fmt.Errorf("frame_step %d (a positive constant is needed)", step)
	}
	win := c.in(2)
	n, err := scalarIn(c, 3, "frame_length", 0)
	if err != nil {
		return err
	}
	if win != nil {
		if win.dt != graph.Float32 || len(win.shape) != 1 {
			return fmt.Errorf("window is %s %v, want a float32 vector", win.dt, win.shape)
		}
		if n != 0 && n != win.shape[0] {
			return fmt.Errorf("frame_length %d and a window of %d", n, win.shape[0])
		}
		n = win.shape[0]
	}
	switch {
	case n < 1:
		return fmt.Errorf("no frame length (frame_length or a window is needed)")
	case n > x.shape[1]:
		return fmt.Errorf("frames of %d samples in a signal of only %d", n, x.shape[1])
	}
	a := &graph.DFTAttrs{N: n, Onesided: c.int("onesided", 1) != 0, Step: step, Frames: 1 + (x.shape[1]-n)/step}
	var ws []int
	ins := []string{im.get(x, asIs)}
	if win != nil {
		ws = win.shape
		ins = append(ins, im.get(win, asIs))
	}
	shape, err := graph.DFTShape(a, x.shape, ws)
	if err != nil {
		return err
	}
	c.emit1(graph.DFT, ins, a, graph.Float32, shape, asIs)
	return nil
}

// convMelWeightMatrix folds MelWeightMatrix as ONNX's reference computes it:
// num_mel_bins+2 points evenly spaced in mel (2595 log10(1 + f/700)),
// mapped to DFT bins by floor((dft_length+1) f / sample_rate), and a
// triangle from each point to the next but one, peaking at 1.
func convMelWeightMatrix(im *importer, c *nodeCtx) error {
	var iv [3]int
	for i, what := range []string{"num_mel_bins", "dft_length", "sample_rate"} {
		d, err := c.constIn(i, what)
		if err != nil {
			return err
		}
		if d == nil || d.Len() != 1 || !d.DType.IsInt() {
			return fmt.Errorf("%s must be one constant integer", what)
		}
		iv[i] = int(d.Ints()[0])
	}
	var fv [2]float64
	for i, what := range []string{"lower_edge_hertz", "upper_edge_hertz"} {
		d, err := c.constIn(3+i, what)
		if err != nil {
			return err
		}
		if d == nil || d.Len() != 1 || d.DType != graph.Float32 {
			return fmt.Errorf("%s must be one constant float", what)
		}
		fv[i] = float64(d.F[0])
	}
	if t := c.int("output_datatype", 1); t != 1 {
		return unsupportedf("MelWeightMatrix output_datatype %d (float only)", t)
	}
	bins, dft, rate := iv[0], iv[1], iv[2]
	if bins < 1 || dft < 1 || rate < 1 || bins > 1<<12 || dft > 1<<16 || !(fv[0] >= 0 && fv[0] < fv[1]) {
		return fmt.Errorf("num_mel_bins %d, dft_length %d, sample_rate %d, edges %g to %g Hz", bins, dft, rate, fv[0], fv[1])
	}
	spec := dft/2 + 1
	mel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	lo, hi := mel(fv[0]), mel(fv[1])
	step := (hi - lo) / float64(bins+2)
	pt := make([]int, bins+2)
	for i := range pt {
		hz := 700 * (math.Pow(10, (float64(i)*step+lo)/2595) - 1)
		pt[i] = int(math.Floor(float64(dft+1) * hz / float64(rate)))
		if pt[i] < 0 || pt[i] >= spec {
			return fmt.Errorf("upper_edge_hertz %g lies past the last of %d bins (sample_rate %d)", fv[1], spec, rate)
		}
	}
	d := graph.NewData(graph.Float32, []int{spec, bins})
	for i := 0; i < bins; i++ {
		l, m, h := pt[i], pt[i+1], pt[i+2]
		if m == l {
			d.F[m*bins+i] = 1
		} else {
			for j := l; j <= m; j++ {
				d.F[j*bins+i] = float32(float64(j-l) / float64(m-l))
			}
		}
		for j := m; j < h; j++ {
			d.F[j*bins+i] = float32(float64(h-j) / float64(h-m))
		}
	}
	return c.setConst(0, d)
}
