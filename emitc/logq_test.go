package emitc

import (
	"fmt"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/graph/qmath"
	"github.com/mcugen/mcugen/tir"
)

// The C of log_q12_q5 (int8 LOG_SOFTMAX's logarithm) gives graph/qmath's
// LogQ12ToQ5 (which TFLite Micro's log_softmax_test.cc vectors hold) for
// every power of two from 1 to the top of Q12.19, their neighbours, and
// random values, on the host under ASan and UBSan.
func TestLogQ12Q5MatchesQmath(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	var zs []int32
	for b := 19; b <= 30; b++ {
		zs = append(zs, 1<<b-1, 1<<b, 1<<b+1)
	}
	zs = append(zs, 1<<31-1)
	r := rand.New(rand.NewSource(5))
	for range 2000 {
		zs = append(zs, int32(1<<19+r.Int63n(1<<31-1<<19)))
	}
	var src strings.Builder
	src.WriteString("#include <stdint.h>\n#include <stdio.h>\n\n")
	writeHelper(&src, tir.IntrLogQ, map[string]bool{})
	src.WriteString("static const int32_t zs[] = {\n")
	for _, z := range zs {
		fmt.Fprintf(&src, "    %d,\n", z)
	}
	src.WriteString("};\n\nint main(void)\n{\n    size_t i;\n    for (i = 0; i < sizeof zs / sizeof zs[0]; ++i) {\n" +
		"        printf(\"%ld\\n\", (long)log_q12_q5(zs[i]));\n    }\n    return 0;\n}\n")
	lines := runHostC(t, src.String())
	if len(lines) != len(zs) {
		t.Fatalf("%d results for %d inputs", len(lines), len(zs))
	}
	for i, z := range zs {
		if got, err := strconv.ParseInt(lines[i], 10, 64); err != nil || got != int64(qmath.LogQ12ToQ5(z)) {
			t.Fatalf("log_q12_q5(%d): C gives %s, qmath %d", z, lines[i], qmath.LogQ12ToQ5(z))
		}
	}
}
