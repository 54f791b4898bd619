package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
	"github.com/mcugen/mcugen/runner"
)

// execute builds s with the vectors compiled in, runs it and compares with
// the reference (pipeline.State.Execute). The vectors sit in flash beside
// the weights; when they do not all fit there with the firmware, it runs
// them in batches, one firmware build each with as many vectors as fit, and
// returns the batches' results as one Execution (the counts and sizes of
// the first build). A model with state runs its vectors as one sequence, so
// its vectors are never split.
func execute(e *env, s *pipeline.State, vecs []map[string]*graph.Data, dir string, timeout time.Duration) (*pipeline.Execution, error) {
	x, err := s.Execute(vecs, dir, timeout)
	var fe *runner.FitError
	if err == nil || len(vecs) < 2 || !errors.As(err, &fe) {
		return x, err
	}
	per := vectorBytes(s)
	k := vectorsThatFit(fe, len(vecs), per)
	if k < 0 {
		return nil, err // the vectors are not what overflows
	}
	if s.Graph.StateBytes() > 0 {
		return nil, vectorsDoNotFit(fe, len(vecs), per, "the model keeps state from one inference to the next, so its vectors run as one sequence in one build: give fewer (--random N, or a --vectors directory with fewer files)")
	}
	if k < 1 {
		k = 1 // whether one vector fits, its build will tell
	}
	board := fe.Board
	// The linker's overflow figures over-state what the vectors need by a
	// few hundred bytes, so k is low for small vectors: a build that fits
	// gives the exact figure for the next batches, below the smallest
	// batch that overflowed.
	ceiling := len(vecs) - 1
	region := fe.Overflows[0]
	var all *pipeline.Execution
	builds, most := 0, 0
	for start := 0; start < len(vecs); {
		end := min(start+k, len(vecs))
		n := end - start
		bx, err := s.Execute(vecs[start:end], dir, timeout)
		if errors.As(err, &fe) {
			fit := vectorsThatFit(fe, n, per)
			if n == 1 || fit < 0 {
				if fit == 0 {
					return nil, vectorsDoNotFit(fe, 1, per, "not even one of them fits beside the model")
				}
				return nil, err
			}
			ceiling = n - 1
			k = max(min(fit, ceiling), 1)
			continue
		}
		if err != nil {
			return nil, err
		}
		all = merge(all, bx)
		start = end
		builds, most = builds+1, max(most, n)
		if len(fe.Overflows) == 1 {
			base := int64(bx.Firmware.FlashBytes()) - int64(n)*int64(per)
			if exact := (int64(region.Available) - base) / int64(per); exact > int64(k) {
				k = min(int(exact), ceiling)
			}
		}
	}
	e.warn(fmt.Sprintf("%s: the %d test vectors (%s B) do not fit %s's flash with the firmware: ran them in %d firmware builds of at most %d vectors",
		s.Opt.Prefix, len(vecs), comma(int64(len(vecs)*per)), board, builds, most))
	return all, nil
}

// vectorBytes is what one vector's inputs take in flash.
func vectorBytes(s *pipeline.State) int {
	n := 0
	for _, in := range s.Report.Inputs {
		n += in.Size
	}
	return n
}

// vectorsThatFit estimates how many vectors of per bytes fit beside the
// firmware, from the overflow of a build with n of them: -1 when fewer
// vectors do not help (a region that holds no vectors overflowed, or the
// firmware does not fit even without vectors), 0 when the firmware fits
// without vectors but not with one.
func vectorsThatFit(fe *runner.FitError, n, per int) int {
	fit := math.MaxInt
	for _, o := range fe.Overflows {
		if !slices.Contains(o.Holds, boards.HoldsWeights) || per <= 0 {
			return -1
		}
		base := int64(o.Needed) - int64(n)*int64(per)
		if base > int64(o.Available) {
			return -1
		}
		fit = min(fit, int((int64(o.Available)-base)/int64(per)))
	}
	return fit
}

// vectorsDoNotFit says that it is the n test vectors that overflow the
// board's flash, and why they cannot be run in several builds.
func vectorsDoNotFit(fe *runner.FitError, n, per int, why string) error {
	var short uint64
	for _, o := range fe.Overflows {
		short = max(short, o.Needed-o.Available)
	}
	what := fmt.Sprintf("the %d test vectors (%s B)", n, comma(int64(n*per)))
	if n == 1 {
		what = fmt.Sprintf("its test vector (%s B)", comma(int64(per)))
	}
	return fmt.Errorf("%s with %s does not fit the flash of %s (%s B short): %s", fe.Model, what, fe.Board, comma(int64(short)), why)
}

// merge appends the vectors of batch b to a (nil: none yet).
func merge(a, b *pipeline.Execution) *pipeline.Execution {
	if a == nil {
		r := *b.Result
		r.Vectors = slices.Clone(b.Result.Vectors)
		c := *b
		c.Result = &r
		return &c
	}
	a.Result.Vectors = append(a.Result.Vectors, b.Result.Vectors...)
	a.Result.Log += b.Result.Log
	a.Outputs = append(a.Outputs, b.Outputs...)
	a.Reference = append(a.Reference, b.Reference...)
	a.Match = append(a.Match, b.Match...)
	a.MaxAbsDiff = max(a.MaxAbsDiff, b.MaxAbsDiff)
	return a
}
