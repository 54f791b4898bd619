package main

import (
	"errors"
	"fmt"

	"github.com/mcugen/mcugen/boards"
	"github.com/mcugen/mcugen/internal/fileio"
	"github.com/mcugen/mcugen/memplan"
	"github.com/mcugen/mcugen/pipeline"
)

type planCmd struct {
	modelFlags
	quantFlags
	Algo  string `help:"Placement algorithm: best, greedy-size, greedy-conflicts, hill-climb, exact." default:"best" enum:"best,greedy-size,greedy-conflicts,hill-climb,exact"`
	Align int    `help:"Buffer alignment in bytes: a power of two from 1 to 4096." default:"16"`
	IO    string `name:"io" help:"Where graph inputs/outputs live: separate (the caller's buffers, as compile's default) or in-arena." default:"separate" enum:"in-arena,separate"`
	SVG   string `name:"svg" help:"Write a picture of the arena (x: step, y: offset) to this file." type:"outfile" placeholder:"FILE"`
	JSON  bool   `name:"json" help:"Print one JSON object."`
	// Which convolutions may run in place depends on the kernels: plan for a board's.
	Board  string `help:"Plan for this board's kernels (which convolutions run in place depends on its schedule set), as compile does; default: the generic kernels."`
	Boards string `help:"A Starlark board file adding boards to the catalog." type:"path" placeholder:"FILE"`
	Target string `help:"Schedule set (default: from the board's features): generic, dsp, mve, neon."`
}

func (c *planCmd) Run(e *env) error {
	if c.SVG != "" {
		if err := checkReplace("--svg", c.SVG, "an SVG picture", []string{c.Model}, looksXML); err != nil {
			return err
		}
	}
	if c.Align < 1 || c.Align > 4096 || c.Align&(c.Align-1) != 0 {
		// 3 planned an 8,067 B arena, 10^9 a 2 GB one (review finding).
		return usageError{fmt.Errorf("--align %d: want a power of two from 1 to 4096", c.Align)}
	}
	opt, err := c.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	opt.PlanAlgorithm, opt.Align, opt.IOInArena = c.Algo, c.Align, c.IO == "in-arena"
	if c.Board != "" {
		if err := checkPath("--boards", c.Boards, false); err != nil {
			return err
		}
		cat, err := boards.Load(c.Boards)
		if err != nil {
			return err
		}
		if opt.Board, err = getBoard(cat, c.Board); err != nil {
			return err
		}
	}
	opt.Target = c.Target
	// Through the lowering, which settles which layers run in place (their
	// local arrays against the board's stack): compile's arena, not the
	// first plan's (a review found plan 9,216 B under compile on microbit).
	var fit *pipeline.FitError
	isFit := func(err error) bool { return errors.As(err, &fit) }
	s, err := heldWarnings(opt, func(opt pipeline.Options) (*pipeline.State, error) { return pipeline.RunUntil(c.Model, opt, "lower") }, isFit)
	if err != nil && !isFit(err) {
		// The lowering refused the model (a Conv's run-time weights): the
		// first plan still answers "how much RAM?", as before plan went
		// through the lowering (review finding), with a note.
		if first, ferr := heldWarnings(opt, func(opt pipeline.Options) (*pipeline.State, error) { return pipeline.RunUntil(c.Model, opt, "plan") }, isFit); ferr == nil || isFit(ferr) {
			e.warn(fmt.Sprintf("the plan before the kernels' lowering, which refused the model (%v): compile fails on it", err))
			s, err = first, ferr
		}
	}
	// A plan that does not fit the board is still the answer to "how much
	// RAM?": print it, then the fit error (exit 1).
	if err != nil && (!errors.As(err, &fit) || s == nil || s.Plan == nil) {
		return err
	}
	p := s.Plan
	if c.SVG != "" {
		// Through a temporary file renamed over it: a full disk left a
		// truncated picture in place of the old one (review finding).
		if err := fileio.WriteAtomic(c.SVG, p.SVG()); err != nil {
			return fmt.Errorf("%s: %w", c.SVG, unwrapPath(err))
		}
	}
	if c.JSON {
		if jerr := e.printJSON(struct {
			*memplan.Plan
			Buffers []memplan.Buffer `json:"buffers"`
		}{p, p.Buffers}); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprint(e.stdout, p.Table())
	// The parts overlap: kernel scratch takes space the activations leave
	// free while its node runs (8,496 = 8,496 + 128 read as a wrong sum:
	// user-journey finding).
	scratch := ""
	switch {
	case p.ScratchBytes == 0:
	case p.ArenaBytes <= p.ActivationBytes:
		scratch = fmt.Sprintf("; kernel scratch up to %s B, in space the live activations leave", comma(int64(p.ScratchBytes)))
	default:
		scratch = fmt.Sprintf("; kernel scratch up to %s B, partly above them", comma(int64(p.ScratchBytes)))
	}
	// The bound counts in-place reuse (an op that writes over its input
	// keeps one buffer live), so a plan meets it where the README's
	// live-set bound of the model's tensors (VWW 55,296 B) is beaten.
	fmt.Fprintf(e.stdout, "arena %s B (activations up to %s B%s); lower bound %s B (the largest live set in the order planned, in-place reuse counted); algorithm %s\n",
		comma(int64(p.ArenaBytes)), comma(int64(p.ActivationBytes)), scratch, comma(int64(p.LowerBoundBytes)), p.Algorithm)
	return err
}
