package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badCase is one entry of testdata/bad/cases.json: a command line over the
// malformed corpus and the error it must produce. In args and stderr,
// {bad} is testdata/bad, {onnx} is testdata/onnx and {tmp} a fresh empty
// directory (outputs go to {tmp}/out and must not be left behind).
type badCase struct {
	Name     string   `json:"name"`
	Args     []string `json:"args"`
	Exit     int      `json:"exit"`
	Stderr   string   `json:"stderr"`   // the exact line (without "\n")
	Contains []string `json:"contains"` // substrings the line must hold
	// Known marks a case where mcugen does not yet do what the corpus asks;
	// the case still runs and its failure is reported (t.Errorf), with the
	// note. When it starts to pass, the note must go.
	Known string `json:"known"`
}

// stackTrace matches what a Go panic or a stack dump leaves in a message.
var stackTrace = regexp.MustCompile(`panic|goroutine \d|internal error|\.go:\d+|runtime\.|\[recovered\]`)

// maxLineBytes bounds an error line: one line a person reads, not a dump.
const maxLineBytes = 512

func loadBadCases(t *testing.T) (cases []badCase, bad, onnxDir string) {
	t.Helper()
	bad, _ = filepath.Abs("../../testdata/bad")
	onnxDir, _ = filepath.Abs("../../testdata/onnx")
	b, err := os.ReadFile(filepath.Join(bad, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	return cases, bad, onnxDir
}

// treeDigest summarises every file under dir (path and contents) so a test
// can tell whether anything was written there.
func treeDigest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = [32]byte{}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMalformedCorpus runs every case of testdata/bad/cases.json through the
// CLI in-process: the exit code, exactly one stderr line that is the
// expected one (or holds the expected substrings), names something from the
// command line (the file, board or flag at fault), carries no panic or stack
// trace, and leaves no output behind.
func TestMalformedCorpus(t *testing.T) {
	cases, bad, onnxDir := loadBadCases(t)
	if len(cases) < 40 {
		t.Errorf("the corpus has %d cases, want at least 40", len(cases))
	}
	before := treeDigest(t, bad)
	known, fixed := 0, 0
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("case %q appears twice in cases.json", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			tmp := t.TempDir()
			subst := strings.NewReplacer("{bad}", bad, "{onnx}", onnxDir, "{tmp}", tmp)
			args := make([]string, len(c.Args))
			for i, a := range c.Args {
				args[i] = subst.Replace(a)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			problems := checkBadCase(c, args, code, stderr.String(), subst)
			if entries, _ := os.ReadDir(tmp); c.Exit != 0 && len(entries) > 0 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				problems = append(problems, fmt.Sprintf("left %v behind in the output's parent directory", names))
			}
			switch {
			case c.Known != "" && len(problems) > 0:
				known++
				t.Errorf("KNOWN FAILURE (%s): mcugen %s\n  exit %d, stderr %q\n  %s",
					c.Known, strings.Join(c.Args, " "), code, clip(stderr.String()), strings.Join(problems, "\n  "))
			case c.Known != "":
				fixed++
				t.Errorf("known failure now passes: delete its \"known\" note in cases.json (%s)", c.Known)
			case len(problems) > 0:
				t.Errorf("mcugen %s\n  exit %d, stderr %q\n  %s", strings.Join(c.Args, " "), code, clip(stderr.String()), strings.Join(problems, "\n  "))
			}
		})
	}
	after := treeDigest(t, bad)
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("testdata/bad/%s was created by a failing command", p)
		}
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("testdata/bad/%s was changed or removed by a failing command", p)
		}
	}
	t.Logf("%d cases, %d known failures, %d known failures fixed", len(cases), known, fixed)
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// checkBadCase lists what is wrong with one run; empty means the case passes.
func checkBadCase(c badCase, args []string, code int, stderr string, subst *strings.Replacer) []string {
	var p []string
	if code != c.Exit {
		p = append(p, fmt.Sprintf("exit code %d, want %d", code, c.Exit))
	}
	if stackTrace.MatchString(stderr) {
		p = append(p, "stderr shows a panic or stack trace")
	}
	if c.Exit == 0 {
		for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if l != "" && !strings.HasPrefix(l, "mcugen: warning: ") {
				p = append(p, fmt.Sprintf("stderr line %q on success", clip(l)))
			}
		}
		return p
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		p = append(p, fmt.Sprintf("stderr has %d lines, want exactly one", strings.Count(stderr, "\n")))
	}
	line := strings.TrimSuffix(stderr, "\n")
	if !strings.HasPrefix(line, "mcugen: ") {
		p = append(p, `the line does not start with "mcugen: "`)
	}
	if len(line) > maxLineBytes {
		p = append(p, fmt.Sprintf("the line is %d bytes long (limit %d): a person cannot read it", len(line), maxLineBytes))
	}
	if c.Stderr != "" {
		if want := subst.Replace(c.Stderr); line != want {
			p = append(p, fmt.Sprintf("want the line %q", want))
		}
	}
	for _, s := range c.Contains {
		if !strings.Contains(line, subst.Replace(s)) {
			p = append(p, fmt.Sprintf("the line does not contain %q", s))
		}
	}
	if code == 1 && !namesAnArgument(line, args) {
		p = append(p, "the line names nothing from the command line (file, board, flag)")
	}
	return p
}

// namesAnArgument reports whether line mentions one of the command's
// operands (a path, a board name, a NAME=FILE binding).
func namesAnArgument(line string, args []string) bool {
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") || len(a) < 3 {
			continue
		}
		if strings.Contains(line, a) {
			return true
		}
	}
	return false
}
