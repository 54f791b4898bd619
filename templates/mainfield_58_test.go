package templates

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An output the model's header names main (a tensor called main: the model
// C keeps the member as it is) makes a project that builds and runs on the
// host; every project kind refused it as "not a C identifier" (review).
func TestOutputNamedMain58(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	needTool(t, "make", "gcc")
	p := fakeProject(t, Make, board(t, "host"), "fake", "")
	for name, b := range p.Model {
		s := strings.NewReplacer("void *y;", "void *main;", "out->y", "out->main", "FAKE_Y_SIZE", "FAKE_MAIN_SIZE").Replace(string(b))
		p.Model[name] = []byte(s)
	}
	if !strings.Contains(string(p.Model["fake.h"]), "void *main;") {
		t.Fatal("the fake model's header kept its member y")
	}
	p.Outputs[0].Name, p.Outputs[0].Field = "main", "main"
	dir := t.TempDir()
	if _, err := Write(dir, p); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, dir, 2*time.Minute, "make", "-s", "run")
	for v, vec := range p.Vectors {
		if line := fmt.Sprintf("vector %d output main %s\n", v, hex.EncodeToString(vec.Outputs[0])); !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if !strings.Contains(out, "done, 0 mismatches") {
		t.Errorf("no \"done, 0 mismatches\":\n%s", out)
	}
}
