package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mcugen runs the CLI in-process and returns its exit code, stdout and stderr.
func mcugen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

const backend = "/usr/share/libonnx-testdata/data"

func sharedModels(t *testing.T) string {
	dir, _ := filepath.Abs("../../../shared/models/mlperf_tiny")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/models is absent: MLPerf Tiny checks skipped")
	}
	return dir
}

func needBackend(t *testing.T) {
	if _, err := os.Stat(backend); err != nil {
		t.Skip("Debian package libonnx-testdata is not installed: ONNX backend checks skipped")
	}
}

type inspectJSON struct {
	Format string `json:"format"`
	Inputs []struct {
		Name      string    `json:"name"`
		Shape     []int     `json:"shape"`
		DType     string    `json:"dtype"`
		Scale     []float32 `json:"scale"`
		ZeroPoint []int32   `json:"zero_point"`
	} `json:"inputs"`
	Outputs []struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		DType string `json:"dtype"`
	} `json:"outputs"`
	Ops          map[string]int `json:"ops"`
	Nodes        int            `json:"nodes"`
	MACs         int64          `json:"macs"`
	WeightsBytes int64          `json:"weights_bytes"`
	DeadChannels int            `json:"dead_channels"`
	DeadLayers   int            `json:"dead_channel_layers"`
	DeadMACs     int64          `json:"dead_channel_macs"`
}

func inspect(t *testing.T, model string) inspectJSON {
	t.Helper()
	code, out, errs := mcugen(t, "inspect", "--json", model)
	if code != 0 {
		t.Fatalf("inspect %s: exit %d: %s", model, code, errs)
	}
	var r inspectJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("inspect %s: not one JSON object: %v\n%s", model, err, out)
	}
	return r
}

// MAC counts worked out by hand from each model's layer shapes.
func TestInspectHandCountedMACs(t *testing.T) {
	// cnn.onnx: input [1,3,16,16]; conv 3x3 3->8 pad 1: 16*16*8 outputs x 27;
	// maxpool 2 -> 8x8; depthwise 3x3: 8*8*8 x 9; pointwise 8->16: 8*8*16 x 8;
	// fc 16->10: 10 x 16.
	r := inspect(t, "../../testdata/onnx/cnn.onnx")
	if want := int64(2048*27 + 512*9 + 1024*8 + 160); r.MACs != want {
		t.Errorf("cnn.onnx MACs %d, want %d", r.MACs, want)
	}
	if r.Format != "onnx" || len(r.Inputs) != 1 || r.Inputs[0].Name != "image" || !equalInts(r.Inputs[0].Shape, []int{1, 3, 16, 16}) {
		t.Errorf("cnn.onnx inputs: %+v", r.Inputs)
	}
	if len(r.Outputs) != 1 || !equalInts(r.Outputs[0].Shape, []int{1, 10}) || r.Outputs[0].DType != "float32" {
		t.Errorf("cnn.onnx outputs: %+v", r.Outputs)
	}
	if r.Ops["Conv2D"] != 3 || r.Ops["FullyConnected"] != 1 || r.Ops["Softmax"] != 1 || r.Ops["MaxPool2D"] != 1 {
		t.Errorf("cnn.onnx ops: %v", r.Ops)
	}
	needBackend(t)
	// test_conv_with_strides_padding: x [1,1,7,5], w [1,1,3,3], stride 2,
	// pads 1: output [1,1,4,3] = 12 outputs x 9 products.
	r = inspect(t, backend+"/node/test_conv_with_strides_padding/model.onnx")
	if r.MACs != 108 || r.Ops["Conv2D"] != 1 || !equalInts(r.Outputs[0].Shape, []int{1, 1, 4, 3}) {
		t.Errorf("test_conv_with_strides_padding: MACs %d ops %v outputs %+v", r.MACs, r.Ops, r.Outputs)
	}
	// test_gemm_default_matrix_bias: A [3,6] B [6,4]: 12 outputs x 6.
	r = inspect(t, backend+"/node/test_gemm_default_matrix_bias/model.onnx")
	if r.MACs != 72 {
		t.Errorf("test_gemm_default_matrix_bias: MACs %d, want 72", r.MACs)
	}
}

// The MLPerf Tiny figures come from ../shared/anchors.md and the model README.
func TestInspectMLPerf(t *testing.T) {
	dir := sharedModels(t)
	// VWW's dead channels (all-zero filters), counted from the model's
	// weights by a separate script: 4, 21, 71, 98, 109, 109, 101, 224 and
	// 234 in its pointwise layers 10-26; their MACs are each layer's MACs
	// times its dead share (36,864 + 48,384 + 4,608 * 488 + 258,048 + 539,136).
	cases := []struct {
		file             string
		macs             int64
		input            []int
		output           []int
		dead, deadLayers int
		deadMACs         int64
	}{
		{"kws/kws_ref_model.tflite", 2656768, []int{1, 49, 10, 1}, []int{1, 12}, 0, 0, 0},
		{"vww/vww_96_int8.tflite", 7489664, []int{1, 96, 96, 3}, []int{1, 2}, 971, 9, 3131136},
		{"ic/pretrainedResnet_quant.tflite", 12501632, []int{1, 32, 32, 3}, []int{1, 10}, 0, 0, 0},
		{"ad/ad01_int8.tflite", 264192, []int{1, 640}, []int{1, 640}, 0, 0, 0},
	}
	for _, c := range cases {
		r := inspect(t, filepath.Join(dir, c.file))
		if r.MACs != c.macs || r.Format != "tflite" {
			t.Errorf("%s: MACs %d format %s, want %d tflite", c.file, r.MACs, r.Format, c.macs)
		}
		if len(r.Inputs) != 1 || !equalInts(r.Inputs[0].Shape, c.input) || r.Inputs[0].DType != "int8" || len(r.Inputs[0].Scale) != 1 || len(r.Inputs[0].ZeroPoint) != 1 {
			t.Errorf("%s: inputs %+v", c.file, r.Inputs)
		}
		if len(r.Outputs) != 1 || !equalInts(r.Outputs[0].Shape, c.output) {
			t.Errorf("%s: outputs %+v", c.file, r.Outputs)
		}
		if r.WeightsBytes <= 0 || r.Nodes == 0 {
			t.Errorf("%s: weights %d nodes %d", c.file, r.WeightsBytes, r.Nodes)
		}
		if r.DeadChannels != c.dead || r.DeadLayers != c.deadLayers || r.DeadMACs != c.deadMACs {
			t.Errorf("%s: %d dead channels in %d layers, %d MACs; want %d in %d, %d", c.file, r.DeadChannels, r.DeadLayers, r.DeadMACs, c.dead, c.deadLayers, c.deadMACs)
		}
	}
}

// eval reproduces a backend test's expected output from its .pb inputs, and
// numpy reads the .npy it writes.
func TestEvalBackendPB(t *testing.T) {
	needBackend(t)
	dir := backend + "/node/test_conv_with_strides_padding"
	out := t.TempDir()
	code, stdout, errs := mcugen(t, "eval", dir+"/model.onnx", "--input", dir+"/test_data_set_0/input_0.pb",
		"--input", dir+"/test_data_set_0/input_1.pb", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errs)
	}
	var r struct {
		Outputs []outputInfo `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || len(r.Outputs) != 1 {
		t.Fatalf("eval JSON: %v\n%s", err, stdout)
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy; from onnx import numpy_helper").Run() != nil {
		t.Skip("python3-numpy/python3-onnx not installed: numpy cross-check skipped")
	}
	script := `import numpy as np, onnx, sys
from onnx import numpy_helper
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[2], "rb").read())
want = numpy_helper.to_array(t); got = np.load(sys.argv[1])
print(got.dtype, got.shape == want.shape, np.allclose(got, want, atol=1e-5, rtol=1e-4))`
	res, err := exec.Command(py, "-c", script, r.Outputs[0].File, dir+"/test_data_set_0/output_0.pb").CombinedOutput()
	if err != nil || strings.TrimSpace(string(res)) != "float32 True True" {
		t.Errorf("numpy check: %v %s", err, res)
	}
}

func TestUsageAndErrors(t *testing.T) {
	code, _, errs := mcugen(t, "inspect")
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "mcugen: ") {
		t.Errorf("missing argument: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mcugen(t, "frobnicate")
	if code != 2 {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "junk.onnx")
	os.WriteFile(bad, []byte("this is not a model"), 0o644)
	code, _, errs = mcugen(t, "inspect", bad)
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, bad) {
		t.Errorf("junk model: exit %d, stderr %q", code, errs)
	}
	code, out, _ := mcugen(t, "--help")
	if code != 0 || !strings.Contains(out, "compile") || !strings.Contains(out, "inspect") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestBoardsJSON(t *testing.T) {
	code, out, errs := mcugen(t, "boards", "--json")
	if code != 0 {
		t.Fatalf("boards: %d %s", code, errs)
	}
	var r struct {
		Boards []boardInfo `json:"boards"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mps2-an385": "cortex-m3", "mps2-an386": "cortex-m4", "mps2-an500": "cortex-m7",
		"mps2-an505": "cortex-m33", "mps3-an547": "cortex-m55", "microbit": "cortex-m0"}
	seen := 0
	for _, b := range r.Boards {
		if cpu, ok := want[b.Name]; ok {
			seen++
			if b.CPU != cpu || b.QEMU != b.Name {
				t.Errorf("%s: cpu %s qemu %s", b.Name, b.CPU, b.QEMU)
			}
		}
	}
	if seen != len(want) || len(r.Boards) < 18 {
		t.Errorf("catalog has %d boards, %d of the QEMU ones", len(r.Boards), seen)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A user's Starlark board file adds a board that run then uses; a malformed
// one is refused with its line number.
func TestUserBoardFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "my.star")
	os.WriteFile(good, []byte(`# a board of our own: an MPS2 image with a smaller RAM
board(
    name = "my-m4",
    description = "an AN386 with 64 KiB of RAM",
    inherits = ["cortex-m4f", "mps2"],
    memory = [
        region(name = "FLASH", origin = 0x00000000, length = 4 * MiB, holds = ["code", "weights"]),
        region(name = "RAM", origin = 0x20000000, length = 64 * KiB, holds = ["data", "arena"]),
    ],
    qemu = qemu(machine = "mps2-an386"),
)
`), 0o644)
	code, out, errs := mcugen(t, "boards", "--boards", good)
	if code != 0 || !strings.Contains(out, "my-m4") {
		t.Fatalf("boards --boards: exit %d %s %s", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.star")
	os.WriteFile(bad, []byte("board(\n    name = \"x\",\n    inherits = [\"cortex-m4f\"\n)\n"), 0o644)
	code, _, errs = mcugen(t, "boards", "--boards", bad)
	if code != 1 || !strings.Contains(errs, "bad.star:") || strings.Count(errs, "\n") != 1 {
		t.Errorf("malformed board file: exit %d, stderr %q", code, errs)
	}
	if testing.Short() {
		return
	}
	if _, err := exec.LookPath("qemu-system-arm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: qemu-system-arm missing (Debian package qemu-system-arm)")
		}
		t.Skip("qemu-system-arm not installed (Debian package qemu-system-arm)")
	}
	code, out, errs = mcugen(t, "run", "../../testdata/tflite/cnn_int8.tflite", "--boards", good, "--board", "my-m4", "--random", "2", "--json")
	if code != 0 || !strings.Contains(out, `"match_reference": true`) || !strings.Contains(out, `"board": "my-m4"`) {
		t.Errorf("run on a user board: exit %d\n%s\n%s", code, out, errs)
	}
}

// compile reports the channels it removed and the output channels its
// kernels store as constants. VWW has 971 dead channels (counted
// independently in TestInspectMLPerf). Its pointwise layers 12 to 26 read
// 4/64, 22/128, 71/128, 98/128, 109/128, 111/128, 101/128 and 225/256 of
// their input channels with all-zero weights, and its fully connected
// layer 5/256 (a scan of the model's weights); keeping a multiple of four
// channels leaves 4 + 20 + 68 + 96 + 108 + 108 + 100 + 224 + 4 = 732 of
// them to remove. The first 728 are dead channels of the layer before
// (the last 4 are live ones nothing reads), so 971 − 728 = 243 stay dead,
// stored as constants. They are the last channels of eight layers: 2 of 108,
// 3 of 60, 2 of 32, 1 of 20, 3 of 20, 1 of 28, 1 of 32 and 230 of 252. The
// M55 keeps a multiple of four live channels, which takes in every dead
// channel of the first seven and 2 of the last (22 live → 24): 228 there.
// The Cortex-M3's channel-pair kernels keep an even number live, which
// takes in one dead channel of each layer with 57, 19, 17, 27 or 31 live:
// 238.
func TestCompileReportsDeadChannels(t *testing.T) {
	dir := sharedModels(t)
	for _, board := range []string{"mps2-an386", "mps2-an385", "mps3-an547", "aarch64-linux"} {
		code, out, errs := mcugen(t, "compile", filepath.Join(dir, "vww/vww_96_int8.tflite"), "--board", board, "-o", t.TempDir(), "--force", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", board, code, errs)
		}
		var r struct {
			DeadChannels   int `json:"dead_channels"`
			UnusedChannels int `json:"unused_channels"`
		}
		want := map[string]int{"mps3-an547": 228, "mps2-an385": 238}[board]
		if want == 0 {
			want = 243
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.DeadChannels != want || r.UnusedChannels != 732 {
			t.Errorf("%s: dead_channels %d, unused_channels %d (%v)", board, r.DeadChannels, r.UnusedChannels, err)
		}
	}
}

// --method without anything to quantize is a usage error, not a silently
// ignored flag.
func TestMethodWithoutQuantizing(t *testing.T) {
	code, stdout, errs := mcugen(t, "compile", "../../testdata/onnx/cnn.onnx", "--method", "mse", "--out", t.TempDir())
	want := "mcugen: --method mse applies only when quantizing: add --calib DIR, --calib-random N or --quantize int8\n"
	if code != 2 || errs != want {
		t.Fatalf("compile --method without quantizing: exit %d, stderr %q (want 2, %q)\n%s", code, errs, want, stdout)
	}
}

// compile quantizes a float model with random calibration and no --method
// (the default range method): this once failed with "unknown range method".
// A LogSoftmax, which has no int8 kernel, stays in float between a
// Dequantize and a Quantize.
func TestCompileQuantizeDefaultMethod(t *testing.T) {
	out := t.TempDir()
	code, stdout, errs := mcugen(t, "compile", "../../testdata/onnx/cnn.onnx", "--calib-random", "4", "--out", out)
	if code != 0 || !strings.Contains(stdout, "arena") {
		t.Fatalf("compile --calib-random: exit %d\n%s%s", code, stdout, errs)
	}
	needBackend(t)
	code, stdout, errs = mcugen(t, "test", backend+"/node/test_logsoftmax_axis_1/model.onnx", "--calib-random", "4", "--board", "host")
	if code != 0 || !strings.Contains(stdout, "bit-exact") {
		t.Fatalf("test LogSoftmax --calib-random: exit %d\n%s%s", code, stdout, errs)
	}
}
