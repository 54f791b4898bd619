package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// failWriter takes the first n bytes, then fails as a full disk does.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	k := f.n
	f.n = 0
	return k, errors.New("no space left on device")
}

// A report that does not reach standard output is an error: `mcugen
// inspect --ir c m > m.c` on a full disk exited 0 over a truncated file
// (review finding; --json, which checks its one write, said so already).
func TestStdoutWriteErrorFails50(t *testing.T) {
	model := "../../testdata/onnx/mlp.onnx"
	for _, args := range [][]string{{"inspect", "--ir", "c", model}, {"inspect", model}, {"plan", model}, {"inspect", "--json", model}} {
		var errs bytes.Buffer
		code := run(args, &failWriter{n: 40}, &errs)
		if code != 1 || strings.Count(errs.String(), "\n") != 1 || !strings.Contains(errs.String(), "no space left on device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs.String())
		}
		var out bytes.Buffer
		errs.Reset()
		if code := run(args, &out, &errs); code != 0 || out.Len() == 0 {
			t.Errorf("%v to a working stdout: exit %d, stderr %q", args, code, errs.String())
		}
	}
}
