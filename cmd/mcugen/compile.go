package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcugen/mcugen/pipeline"
)

type compileCmd struct {
	modelFlags
	compileFlags
	Out   string `short:"o" help:"Output directory (written whole or not at all)." required:"" type:"path" placeholder:"DIR"`
	Force bool   `help:"Replace an existing non-empty output directory."`
	JSON  bool   `name:"json" help:"Print one JSON object."`
}

type compileReport struct {
	Board        string   `json:"board"`
	Target       string   `json:"target"`
	ArenaBytes   int      `json:"arena_bytes"`
	WeightsBytes int      `json:"weights_bytes"`
	Files        []string `json:"files"`
	Entry        string   `json:"entry"`
}

func (c *compileCmd) Run(e *env) error {
	opt, _, err := c.compileFlags.options(e, &c.modelFlags)
	if err != nil {
		return err
	}
	if err := checkOutDir(c.Out, c.Force); err != nil {
		return err
	}
	s, err := pipeline.Compile(c.Model, opt)
	if err != nil {
		return err
	}
	files := s.Files
	if err := writeDirAtomic(c.Out, func(tmp string) error { return pipeline.WriteFiles(tmp, files) }); err != nil {
		return err
	}
	r := compileReport{Board: opt.Board.Name, Target: s.Report.Target, ArenaBytes: s.Report.ArenaBytes,
		WeightsBytes: s.Report.WeightsBytes, Entry: s.Report.Entry}
	for name := range files {
		r.Files = append(r.Files, filepath.Join(c.Out, name))
	}
	sort.Strings(r.Files)
	if c.JSON {
		return e.printJSON(r)
	}
	fmt.Fprintf(e.stdout, "%s -> %s (board %s, target %s)\narena %s B, weights %s B, entry %s()\n",
		c.Model, c.Out, r.Board, r.Target, comma(int64(r.ArenaBytes)), comma(int64(r.WeightsBytes)), r.Entry)
	for _, f := range r.Files {
		fmt.Fprintf(e.stdout, "  %s\n", f)
	}
	return nil
}

// checkOutDir refuses to replace a non-empty directory without --force.
func checkOutDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return fmt.Errorf("%s: exists and is not a directory", dir)
		}
		return fmt.Errorf("%s: %w", dir, err)
	case len(entries) > 0 && !force:
		return fmt.Errorf("%s: directory exists and is not empty (use --force to replace it)", dir)
	}
	return nil
}

// writeDirAtomic fills a temporary directory beside dir and renames it into
// place, so an interrupted or failed write leaves the old directory or none,
// never a half-written one.
func writeDirAtomic(dir string, fill func(tmp string) error) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("%s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".mcugen-tmp-")
	if err != nil {
		return fmt.Errorf("%s: %w", parent, err)
	}
	defer os.RemoveAll(tmp)
	if err := fill(tmp); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	var old string
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("%s: %w", dir, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
