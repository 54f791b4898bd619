package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer/onnx"
)

// A Conv whose weights are a graph input is refused naming the model's
// tensor, "w", for every group count and target: the depthwise one (group 4)
// on the host named the importer's layout copy "w_nhwc" (its in-place row
// form lowered it in a one-row graph, where the copy has no producer).
func TestRunTimeWeightsNamed(t *testing.T) {
	dir := t.TempDir()
	for _, group := range []int{1, 2, 4} {
		bl := onnx.NewBuilder("gconv", 13, 1)
		x := bl.Input("x", graph.Float32, 1, 4, 5, 5)
		w := bl.Input("w", graph.Float32, 4, 4/group, 3, 3)
		bl.Output(bl.Node("Conv", []string{x, w}, onnx.IntAttr("group", int64(group)), onnx.IntsAttr("pads", 1, 1, 1, 1)), graph.Float32)
		model := filepath.Join(dir, fmt.Sprintf("gconv%d.onnx", group))
		if err := os.WriteFile(model, bl.Model().Marshal(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, board := range []string{"host", "mps2-an386", "mps2-an385"} {
			b, err := LoadBoard(board, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(model, Options{Board: b, Version: "test"})
			// (The op as its author knows it: session 51.)
			op := map[int]string{1: "Conv2D", 2: "Conv2D in groups", 4: "depthwise Conv2D"}[group]
			if err == nil || !strings.Contains(err.Error(), `node "Conv_1" (`+op+`): not supported: its weights "w" are computed at run time`) {
				t.Errorf("group %d on %s: %v; want the refusal naming weights \"w\"", group, board, err)
			}
		}
	}
}
