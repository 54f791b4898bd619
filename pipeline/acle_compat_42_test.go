package pipeline

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/tir/tirtest"
)

// The dsp C builds and runs bit-exact where <arm_acle.h> has none of ACLE's
// DSP intrinsics, as gcc before 10 (Arduino's Mbed OS cores ship 7.2): an
// empty arm_acle.h stands in for that gcc's, MCUGEN_ACLE_COMPAT selects the
// fallbacks the C carries for it, and -Werror makes any intrinsic the
// fallbacks miss (an implicit declaration) a failed build. The cases between
// them call every intrinsic the generated C uses; the test checks that too,
// so a new one cannot slip past.
func TestDSPWithoutACLEIntrinsics(t *testing.T) {
	t.Parallel()
	b := qemuBoard(t, "mps2-an386")
	inc := t.TempDir()
	if err := os.WriteFile(filepath.Join(inc, "arm_acle.h"), []byte("/* gcc < 10: no DSP intrinsics */\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-DMCUGEN_ACLE_COMPAT", "-I", inc, "-Werror", "-pedantic"}
	cases := []struct {
		name  string
		g     func() (*graph.Graph, error)
		knobs map[string]map[string]int
	}{
		{"pointwise", func() (*graph.Graph, error) { return tirtest.Conv1x1(4, 5, 16, 12, graph.ActNone, 5), nil }, nil},
		{"conv3x3-relu", func() (*graph.Graph, error) { return tirtest.Conv3x3(8, 1, 2, graph.ActRelu, -128), nil }, nil},
		{"winograd", func() (*graph.Graph, error) { return tirtest.Conv3x3(8, 1, 1, graph.ActNone, 5), nil },
			map[string]map[string]int{"conv2d": {"winograd": 1}}},
		{"planar", func() (*graph.Graph, error) { return tirtest.Conv3x3Size(5, 7, 8, 8, 1, graph.ActNone, 5), nil },
			map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 1}}},
		{"dw3x3", func() (*graph.Graph, error) { return tirtest.Conv3x3(8, 8, 1, graph.ActNone, 5), nil },
			map[string]map[string]int{"depthwise_conv2d": {"dw_planar": 0, "dw3x3": 1}}},
		{"kws", func() (*graph.Graph, error) {
			s, err := Compile(filepath.Join(sharedDir(t), "kws/kws_ref_model.tflite"), Options{Board: b, Version: "test"})
			if err != nil {
				return nil, err
			}
			return s.Graph, nil
		}, nil},
	}
	used := map[string]bool{}
	intr := regexp.MustCompile(`\b__(smla[bt][bt]|smlad|smuad|sxtab16|sadd16|ssub16|builtin_arm_ssat)\b`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := c.g()
			if err != nil {
				t.Fatal(err)
			}
			s, err := CompileGraph(g, c.name, Options{Board: b, Target: "dsp", Knobs: c.knobs, CFlags: flags, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			for name, f := range s.Files {
				if strings.HasSuffix(name, ".c") {
					for _, m := range intr.FindAllString(string(f), -1) {
						used[m] = true
					}
				}
			}
			x, err := s.Execute(append(RandomInputs(s.Graph, 3, 42), ExtremeInputs(s.Graph)...), t.TempDir(), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !x.AllMatch() {
				t.Errorf("outputs differ from the reference interpreter")
			}
		})
	}
	var got []string
	for k := range used {
		got = append(got, k)
	}
	sort.Strings(got)
	want := "__builtin_arm_ssat __sadd16 __smlabb __smlabt __smlad __smlatb __smlatt __smuad __ssub16 __sxtab16"
	if strings.Join(got, " ") != want {
		t.Errorf("the cases call %q, want every intrinsic the fallbacks cover: %s", got, want)
	}
}
