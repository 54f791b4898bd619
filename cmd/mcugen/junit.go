package main

import (
	"encoding/xml"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcugen/mcugen/internal/fileio"
)

// The JUnit XML that CI systems read (Jenkins, GitLab, GitHub test
// reporters): one <testsuite> per model, one <testcase> per board. A case
// whose vectors mismatched has a <failure>, one that could not be built or
// run an <error>; <system-out> carries the figures.

type junitReport struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
	seconds  float64
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// xmlChars replaces what XML 1.0 does not allow in a document (control
// characters but tab, newline and return; invalid UTF-8; U+FFFE, U+FFFF)
// with U+FFFD. encoding/xml does so in attributes, not in CDATA (user-journey
// finding: a model path with an escape character made the report unreadable).
func xmlChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == utf8.RuneError, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return '\uFFFD'
		}
		return r
	}, s)
}

// junitText is element text kept as CDATA, so its lines stay lines.
type junitText struct {
	Body string `xml:",cdata"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// junitXML renders the test results, in their order, as a JUnit report.
func junitXML(results []testResult) ([]byte, error) {
	rep := junitReport{Name: "mcugen test"}
	var paths []string
	for _, r := range results {
		paths = append(paths, r.Model)
	}
	names := shortNames(paths)
	var total float64
	last := ""
	for i, r := range results {
		model := names[r.Model]
		if i == 0 || r.Model != last {
			rep.Suites = append(rep.Suites, junitSuite{Name: model})
			last = r.Model
		}
		s := &rep.Suites[len(rep.Suites)-1]
		// CI views split a class name at its last dot: none in the path.
		c := junitCase{Name: r.Board, Classname: "mcugen." + strings.ReplaceAll(model, ".", "_"), Time: seconds(r.seconds)}
		out := []string{"model: " + r.Model, "board: " + r.Board}
		if r.MeasuredOn != "" {
			out = append(out, "run on: "+r.MeasuredOn+" (the board has no emulator)")
		}
		out = append(out, fmt.Sprintf("vectors: %d, passed: %d, failed: %d", r.Vectors, r.Passed, r.Failed))
		if r.Instructions >= 0 && r.Error == "" {
			out = append(out, "instructions per inference: "+comma(r.Instructions))
		}
		if r.StackBytes > 0 && r.Error == "" {
			out = append(out, "stack: "+comma(r.StackBytes)+" B")
		}
		switch {
		case r.Error != "":
			c.Error = &junitMessage{Message: r.Error, Type: "error", Body: xmlChars(r.Error)}
			s.Errors++
		case r.Failed > 0:
			msg := fmt.Sprintf("%d of %d vectors mismatch", r.Failed, r.Vectors)
			if r.MatchReference && r.MatchExpected != nil && !*r.MatchExpected {
				msg += " the vectors' output_NNN.npy (the reference interpreter agrees with the firmware)"
			} else {
				msg += " the reference interpreter"
			}
			body := msg
			if len(r.FailedVectors) > 0 {
				body += "\nmismatching vectors: " + strings.Join(r.FailedVectors, ", ")
			}
			for _, m := range r.Mismatches {
				body += "\n" + m.String()
			}
			c.Failure = &junitMessage{Message: msg, Type: "mismatch", Body: xmlChars(body)}
			s.Failures++
		}
		c.SystemOut = &junitText{Body: xmlChars(strings.Join(out, "\n"))}
		s.Cases = append(s.Cases, c)
		s.Tests++
		s.seconds += r.seconds
		total += r.seconds
	}
	for i := range rep.Suites {
		s := &rep.Suites[i]
		s.Time = seconds(s.seconds)
		rep.Tests += s.Tests
		rep.Failures += s.Failures
		rep.Errors += s.Errors
	}
	rep.Time = seconds(total)
	b, err := xml.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// writeJUnit writes the report through a temporary file beside it
// (fileio.WriteAtomic), so a reader never sees half of one; /dev/stdout
// or a pipe is written through.
func writeJUnit(path string, results []testResult) error {
	b, err := junitXML(results)
	if err != nil {
		return err
	}
	if err := fileio.WriteAtomic(path, b); err != nil {
		return fmt.Errorf("--junit %s: %w", path, unwrapPath(err))
	}
	return nil
}
