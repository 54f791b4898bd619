package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/pipeline"
)

type benchCmd struct {
	Models []string `arg:"" help:"Model files." type:"path"`
	Shape  []string `help:"Bind a dynamic input dimension (repeatable)." placeholder:"NAME=DIMS"`
	compileFlags
	runFlags
	JSON bool `name:"json" help:"Print one JSON object."`
}

type benchResult struct {
	Model          string  `json:"model"`
	Board          string  `json:"board"`
	Target         string  `json:"target"`
	Instructions   int64   `json:"instructions"`
	MACs           int64   `json:"macs"`
	MACsPerInstr   float64 `json:"macs_per_instruction"`
	ArenaBytes     int     `json:"arena_bytes"`
	FlashBytes     int     `json:"flash_bytes"`
	RAMBytes       int     `json:"ram_bytes"`
	MatchReference bool    `json:"match_reference"`
	// Anchor is TFLite Micro + CMSIS-NN's instruction count for this model
	// and board measured in the same QEMU (../shared/anchors.md), when known.
	Anchor int64 `json:"tflm_cmsis_nn_instructions,omitempty"`
}

func (c *benchCmd) Run(e *env) error {
	var report struct {
		Results []benchResult `json:"results"`
	}
	for _, model := range c.Models {
		for _, board := range strings.Split(c.Board, ",") {
			flags := c.compileFlags
			flags.Board = strings.TrimSpace(board)
			opt, _, err := flags.options(e, &modelFlags{Model: model, Shape: c.Shape})
			if err != nil {
				return err
			}
			s, err := pipeline.Compile(model, opt)
			if err != nil {
				return err
			}
			dir, done, err := c.workDir()
			if err != nil {
				return err
			}
			x, err := s.Execute(pipeline.RandomInputs(s.Graph, 1, 3), dir, c.Timeout)
			done()
			if err != nil {
				return fmt.Errorf("%s on %s: %w", model, flags.Board, err)
			}
			r := benchResult{Model: model, Board: flags.Board, Target: s.Report.Target, Instructions: x.Instructions(),
				MACs: graph.TotalMACs(s.Graph), ArenaBytes: s.Report.ArenaBytes, FlashBytes: x.Firmware.FlashBytes(),
				RAMBytes: x.Firmware.RAMBytes(), MatchReference: x.AllMatch()}
			if r.Instructions > 0 {
				r.MACsPerInstr = float64(r.MACs) / float64(r.Instructions)
			}
			r.Anchor = anchorFor(r.MACs, r.Board)
			report.Results = append(report.Results, r)
		}
	}
	if c.JSON {
		return e.printJSON(report)
	}
	fmt.Fprintf(e.stdout, "%-26s %-12s %-8s %13s %11s %9s %9s %9s %9s  %s\n", "model", "board", "target", "instructions", "MACs", "MACs/ins", "arena B", "flash B", "RAM B", "TFLM+CMSIS-NN")
	for _, r := range report.Results {
		anchor := "-"
		if r.Anchor > 0 {
			anchor = fmt.Sprintf("%s (%.2fx)", comma(r.Anchor), float64(r.Anchor)/float64(r.Instructions))
		}
		fmt.Fprintf(e.stdout, "%-26s %-12s %-8s %13s %11s %9.3f %9s %9s %9s  %s\n", filepath.Base(r.Model), r.Board, r.Target,
			countString(r.Instructions), comma(r.MACs), r.MACsPerInstr, comma(int64(r.ArenaBytes)), comma(int64(r.FlashBytes)), comma(int64(r.RAMBytes)), anchor)
	}
	return nil
}

// anchors: TFLite Micro + CMSIS-NN instructions per inference in the same
// QEMU, from ../shared/anchors.md, keyed by the model's MAC count.
var anchors = map[int64]map[string]int64{
	2656768:  {"mps2-an386": 7698730, "mps2-an385": 10533584, "mps2-an500": 7644525, "mps2-an505": 7681034, "mps3-an547": 1814598},
	7489664:  {"mps2-an386": 24101517, "mps2-an385": 31958654, "mps2-an500": 24025132, "mps2-an505": 24046355, "mps3-an547": 6557925},
	12501632: {"mps2-an386": 29864993, "mps2-an385": 41848694, "mps2-an500": 30027897, "mps2-an505": 29964106, "mps3-an547": 4913079},
	264192:   {"mps2-an386": 582895, "mps2-an385": 955921, "mps2-an500": 583181, "mps2-an505": 583377, "mps3-an547": 149926},
}

func anchorFor(macs int64, board string) int64 { return anchors[macs][board] }
