package onnx

import (
	"fmt"

	"github.com/mcugen/mcugen/graph"
)

// Bounds on what a model may ask of the importer. A corrupt or hostile file
// must get one clear error, never an overflowed shape, a huge allocation or
// a silently wrong graph; every bound is far above what a model for a
// microcontroller needs.

// maxWindow bounds a kernel size, stride, dilation, pad, output padding or
// block size given as an attribute, before any arithmetic is done with it
// (so that sums and products of these stay far from overflowing).
const maxWindow = 1 << 20

// maxTileCopies bounds the copies a Tile of a run-time value makes: each
// copy is one input of a Concat.
const maxTileCopies = 4096

// maxFoldedBytes bounds the constant data computed at import (constant
// folding) over the whole model. Initializers and Constant nodes, whose
// size the file itself bounds, do not count.
const maxFoldedBytes = 256 << 20

// checkShape verifies that every dimension of shape is in [0, maxElements]
// and that the element count is at most maxElements. The product is checked
// before it is formed, so it never overflows.
func checkShape(shape []int) error {
	n := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("negative dimension %d in shape %v", s, shape)
		}
		if s > maxElements {
			return fmt.Errorf("shape %v is too large (more than %d elements)", shape, maxElements)
		}
	}
	for _, s := range shape {
		if s == 0 {
			return nil
		}
		if n > maxElements/s {
			return fmt.Errorf("shape %v is too large (more than %d elements)", shape, maxElements)
		}
		n *= s
	}
	return nil
}

// checkRange verifies that every value of attribute name is in [lo, hi].
func checkRange(name string, v []int, lo, hi int) error {
	for _, x := range v {
		if x < lo || x > hi {
			return fmt.Errorf("%s %v: each must be in [%d, %d]", name, v, lo, hi)
		}
	}
	return nil
}

// dataKey identifies the backing array of d's elements (nil when empty):
// reshaped and aliased constants share it.
func dataKey(d *graph.Data) any {
	switch {
	case len(d.F) > 0:
		return &d.F[0]
	case len(d.I) > 0:
		return &d.I[0]
	}
	return nil
}

// hold records d as data the importer holds that does not count against the
// folding budget (initializers, Constant nodes, bound inputs).
func (im *importer) hold(d *graph.Data) {
	if k := dataKey(d); k != nil {
		im.held[k] = true
	}
}

// account charges a folded constant to the model's folding budget (once per
// backing array: a Reshape or Identity of a constant copies nothing).
func (im *importer) account(d *graph.Data) error {
	k := dataKey(d)
	if k == nil || im.held[k] {
		return nil
	}
	im.held[k] = true
	im.folded += int64(len(d.F))*4 + int64(len(d.I))*8
	if im.folded > maxFoldedBytes {
		return fmt.Errorf("constant folding computes more than %d MiB of constant data in total (this output %v adds %d bytes): the model is too large or malformed",
			maxFoldedBytes>>20, d.Shape, int64(len(d.F))*4+int64(len(d.I))*8)
	}
	return nil
}
