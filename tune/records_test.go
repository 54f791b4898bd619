package tune

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const goodRecords = `{"format": "mcugen-tuning-records", "version": 1, "records": [
 {"kernel": "Conv2D int8 1x8x8x4,c8x3x3x4,c8:int32->1x8x8x8 #00000001", "target": "dsp", "core": "cortex-m4",
  "knobs": {"block_oc": 4, "block_px": 2}, "instructions": 900, "default_instructions": 1000, "trials": 12, "space": 12, "search": "exhaustive", "mcugen": "0.1.0"},
 {"kernel": "FullyConnected int8 1x8,c4x8,c4:int32->1x4 #00000002", "target": "dsp", "core": "cortex-m7",
  "knobs": {"block_oc": 2}, "instructions": 50, "default_instructions": 60, "trials": 3, "space": 3, "search": "exhaustive", "mcugen": "0.1.0"}
]}`

func TestParseGood(t *testing.T) {
	rs, notes, err := Parse([]byte(goodRecords))
	if err != nil || len(notes) != 0 {
		t.Fatalf("Parse: %v %v", err, notes)
	}
	if rs.Len() != 2 {
		t.Fatalf("want 2 records, got %d", rs.Len())
	}
	r := rs.Get("Conv2D int8 1x8x8x4,c8x3x3x4,c8:int32->1x8x8x8 #00000001", "dsp", "cortex-m4", nil)
	if r == nil || r.Knobs["block_oc"] != 4 || r.Instructions != 900 {
		t.Fatalf("record not found or wrong: %+v", r)
	}
	if rs.Get(r.Kernel, "dsp", "cortex-m7", nil) != nil {
		t.Fatal("a record for another core matched")
	}
	// Round trip through Save and Load.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rs.Save(path); err != nil {
		t.Fatal(err)
	}
	back, notes, err := Load(path)
	if err != nil || len(notes) != 0 || back.Len() != 2 {
		t.Fatalf("reload: %v %v %d", err, notes, back.Len())
	}
	a, _ := rs.Marshal()
	b, _ := back.Marshal()
	if string(a) != string(b) {
		t.Fatalf("not stable:\n%s\n%s", a, b)
	}
	if !strings.Contains(string(a), "->1x8x8x8") {
		t.Fatal("signatures should be written readably, not HTML-escaped")
	}
}

func TestParseBad(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"not json", "{records: [", "not valid JSON"},
		{"empty", "", "not valid JSON"},
		{"foreign json", `{"name": "package.json", "version": "1.0"}`, `not an mcugen tuning records file (no "format": "mcugen-tuning-records" field)`},
		{"other tool", `{"format": "autotvm", "version": 1}`, `format "autotvm"`},
		{"no format", `{"version": 1, "records": []}`, `no "format"`},
		{"future layout", `{"format": "mcugen-tuning-records", "version": 7, "records": []}`, "layout version 7; this mcugen reads versions 1 to 3"},
		{"layout 0", `{"format": "mcugen-tuning-records", "version": 0, "records": []}`, "layout version 0"},
		{"array", `[1,2,3]`, "not an mcugen tuning records file: it holds a JSON array"},
		{"empty array", `[]`, "not an mcugen tuning records file: it holds a JSON array"},
		{"string", `"records"`, "it holds a JSON string"},
		{"null", `null`, "it holds JSON null"},
		{"format not a string", `{"format": 1, "version": 1}`, `no "format"`},
		{"version not a number", `{"format": "mcugen-tuning-records", "version": "1"}`, "layout version is \"1\", not a whole number"},
		{"records not a list", `{"format": "mcugen-tuning-records", "version": 1, "records": {}}`, `"records" holds a JSON object, not a list`},
	} {
		_, _, err := Parse([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "Go value") {
			t.Errorf("%s: %v speaks of Go types", c.name, err)
		}
	}
}

// A records file that is valid JSON but not the records object (`[]`, the
// tester's case) is named and said in words not to be a records file.
func TestLoadNotRecordsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recs.json")
	if err := os.WriteFile(path, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(path)
	want := "tuning records " + path + `: not an mcugen tuning records file: it holds a JSON array, not an object with "format": "mcugen-tuning-records"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestParseSkipsBadRecords(t *testing.T) {
	data := `{"format": "mcugen-tuning-records", "version": 1, "records": [
	 {"kernel": "a", "target": "dsp", "core": "cortex-m4", "knobs": {"x": 1}, "instructions": 5},
	 {"kernel": "a", "target": "dsp", "core": "cortex-m4", "knobs": {"x": 2}, "instructions": 4},
	 {"kernel": "", "target": "dsp", "core": "cortex-m4", "knobs": {"x": 1}},
	 {"kernel": "b", "target": "dsp", "core": "cortex-m4", "knobs": {"x": 1}, "instructions": -3},
	 {"kernel": "c", "target": "dsp", "core": "cortex-m4"},
	 {"kernel": "d", "target": "dsp", "core": "cortex-m4", "knobs": {"": 1}},
	 {"kernel": "e", "target": "dsp", "core": "cortex-m4", "knobs": {"x": "big"}},
	 7
	]}`
	rs, notes, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 1 || rs.Get("a", "dsp", "cortex-m4", nil).Knobs["x"] != 1 {
		t.Fatalf("want only the first record of a, got %d", rs.Len())
	}
	if len(notes) != 7 {
		t.Fatalf("want 7 notes, got %d: %q", len(notes), notes)
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	rs, _, err := Load(filepath.Join(t.TempDir(), "none.json"))
	if err != nil || rs.Len() != 0 {
		t.Fatalf("%v %d", err, rs.Len())
	}
	dir := t.TempDir()
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a directory should be an error naming it, got %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("\x00\xff garbage"), 0o644)
	if _, _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("garbage should be an error naming the file, got %v", err)
	}
}

// FuzzRecords: the parser never panics; what it accepts survives a round
// trip through Marshal unchanged in size and content.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(goodRecords))
	f.Add([]byte(`{"format": "mcugen-tuning-records", "version": 1, "records": [null, {}, {"knobs": null}]}`))
	f.Add([]byte(`{"format": "mcugen-tuning-records", "version": 1, "records": {"a": 1}}`))
	f.Add([]byte(`{"format": 3}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, _, err := Parse(data)
		if err != nil {
			return
		}
		b, err := rs.Marshal()
		if err != nil {
			t.Fatalf("Marshal of parsed records: %v", err)
		}
		back, _, err := Parse(b)
		if err != nil || back.Len() != rs.Len() {
			t.Fatalf("round trip: %v %d != %d", err, back.Len(), rs.Len())
		}
		// Skipped records are kept as they were: a second round trip
		// writes the same bytes.
		if b2, err := back.Marshal(); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("second round trip differs (%v):\n%s\n---\n%s", err, b, b2)
		}
		for _, r := range rs.Records {
			if back.Get(r.Kernel, r.Target, r.Core, r.Knobs) == nil {
				t.Fatalf("record %q lost in the round trip", r.Key())
			}
		}
	})
}

// Save to a path that is not a regular file (a pipe here, /dev/null for a
// user) writes through it and leaves it what it was: the temporary file
// renamed over it would have replaced it (as root, the device itself).
func TestSaveToAPipe(t *testing.T) {
	rs, _, err := Parse([]byte(goodRecords))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "r.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := rs.Save(fifo); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", st.Mode(), err)
	}
	if s := <-got; !strings.Contains(s, `"mcugen-tuning-records"`) {
		t.Errorf("the pipe carried %q", s)
	}
}

// Data after the records object is refused (it was ignored), and a file of
// many bad records gets twenty notes and a count, not a line each (review
// finding: 200,000 bad records printed 200,001 lines).
func TestParseTrailingDataAndManyNotes(t *testing.T) {
	if _, _, err := Parse([]byte(goodRecords + "\n{\"x\": 1}")); err == nil || !strings.Contains(err.Error(), "data after the JSON object") {
		t.Errorf("trailing object: %v", err)
	}
	if _, _, err := Parse([]byte(goodRecords + "\n\n")); err != nil {
		t.Errorf("trailing blank lines: %v", err)
	}
	var b strings.Builder
	b.WriteString(`{"format": "` + Format + `", "version": ` + fmt.Sprint(FormatVersion) + `, "records": [`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"kernel": ""}`)
	}
	b.WriteString("]}")
	_, notes, err := Parse([]byte(b.String()))
	if err != nil || len(notes) != maxNotes+1 || notes[maxNotes] != "980 more records skipped" {
		t.Errorf("%v: %d notes, last %q", err, len(notes), notes[len(notes)-1])
	}
}

// A records file saved with a byte-order mark reads; a bad record's note
// counts records from 1 and says what is wrong in the file's terms, not
// Go's (user-journey findings).
func TestParseMessages(t *testing.T) {
	if _, _, err := Parse([]byte("\xef\xbb\xbf{\"format\":\"mcugen-tuning-records\",\"version\":1,\"records\":[]}")); err != nil {
		t.Errorf("a file with a byte-order mark: %v", err)
	}
	for _, c := range []struct{ rec, want string }{
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{"unroll_k":2.5}}`, "record 2 skipped: a knob holds a JSON number 2.5, want a whole number (kept in the file as it is)"},
		{`{"kernel":5,"target":"dsp","core":"c","knobs":{}}`, `record 2 skipped: "kernel" holds a JSON number, want a string (kept in the file as it is)`},
		{`7`, "record 2 skipped: it holds a JSON number, not an object (kept in the file as it is)"},
		// null read as 0, and the last of two equal keys, both silently
		// (tuning journey findings); nulls in another program's fields
		// are no concern of mcugen's.
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{"gemm_fuse":null}}`, `record 2 skipped: knob "gemm_fuse" is null (kept in the file as it is)`},
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{"block_oc":4,"block_oc":1}}`, `record 2 skipped: knob "block_oc" given twice (kept in the file as it is)`},
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{},"instructions":null}`, `record 2 skipped: field "instructions" is null (kept in the file as it is)`},
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{},"Instructions":3,"instructions":5}`, `record 2 skipped: field "instructions" given twice (kept in the file as it is)`},
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{},"note":null,"extra":[null,{"x":null}]}`, ""},
		{`{"kernel":"a","target":"dsp","core":"c","knobs":{},"note":"x","Note":"y","meta":{"id":1,"id":2}}`, ""},
	} {
		if c.want == "" {
			data := `{"format":"mcugen-tuning-records","version":1,"records":[` + c.rec + `]}`
			if rs, notes, err := Parse([]byte(data)); err != nil || rs.Len() != 1 || len(notes) != 0 {
				t.Errorf("%s: %v, notes %q, want the record read", c.rec, err, notes)
			}
			continue
		}
		data := `{"format":"mcugen-tuning-records","version":1,"records":[{"kernel":"ok","target":"dsp","core":"c","knobs":{}},` + c.rec + `]}`
		rs, notes, err := Parse([]byte(data))
		if err != nil || rs.Len() != 1 || len(notes) != 1 || notes[0] != c.want {
			t.Errorf("%s: %v, notes %q, want %q", c.rec, err, notes, c.want)
		}
	}
}

// A file giving one of its own fields twice is refused: encoding/json read
// the last "version" silently (tuning journey finding).
func TestParseFieldTwice(t *testing.T) {
	_, _, err := Parse([]byte(`{"format":"mcugen-tuning-records","version":1,"version":2,"records":[]}`))
	if err == nil || err.Error() != `damaged tuning records file: field "version" given twice` {
		t.Errorf("got %v", err)
	}
	// Keys that differ in case are two fields (tune keeps others' fields).
	if _, _, err := Parse([]byte(`{"format":"mcugen-tuning-records","version":1,"comment":"a","Comment":"b","records":[]}`)); err != nil {
		t.Errorf("comment and Comment: %v", err)
	}
}

// Version 1 files (before records were keyed by the weights' layout) read
// as before; files are written as version 2, which an mcugen reading only
// version 1 refuses instead of applying an int8 record to an int16 build.
func TestRecordsVersions(t *testing.T) {
	v1 := `{"format": "mcugen-tuning-records", "version": 1, "records": [
 {"kernel": "k", "target": "dsp", "core": "cortex-m4", "knobs": {"block_oc": 2}, "instructions": 10, "default": 12}]}`
	rs, notes, err := Parse([]byte(v1))
	if err != nil || len(notes) != 0 || rs.Len() != 1 {
		t.Fatalf("version 1: %v %v %v", rs, notes, err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rs.Save(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"version": 2`) {
		t.Errorf("saved as:\n%s", b)
	}
}

// tune rewrites a records file keeping what it cannot use: a skipped
// record (until a record for its kernel is written), a record's field it
// does not know, the file's own (tuning journey finding: a shared file
// lost a record with a knob typed as a string, a "comment" and a "note").
// Counts beyond any measurement are skipped, and a whole number too large
// for a count says so.
func TestRecordsKeepWhatTheyCannotUse(t *testing.T) {
	data := `{"format":"mcugen-tuning-records","version":2,"comment":"shared CI cache",
	"records":[
	{"kernel":"a","target":"dsp","core":"c","knobs":{"u":1},"instructions":5,"default_instructions":6,"trials":2,"space":2,"search":"exhaustive","mcugen":"x","note":"checked by hand"},
	{"kernel":"b","target":"dsp","core":"c","knobs":{"u":"1"}},
	{"kernel":"d","target":"dsp","core":"c","knobs":{"u":1},"instructions":9223372036854775807},
	{"kernel":"e","target":"dsp","core":"c","knobs":{"u":1},"instructions":99999999999999999999}]}`
	rs, notes, err := Parse([]byte(data))
	if err != nil || rs.Len() != 1 || len(notes) != 3 {
		t.Fatalf("%v, %d records, notes %q", err, rs.Len(), notes)
	}
	for i, want := range []string{"a knob holds a JSON string, want a whole number", "an instruction count above 1e+15", `"instructions" holds a JSON number 99999999999999999999, want a whole number no larger than 9223372036854775807 (this one is too large)`} {
		if !strings.Contains(notes[i], want) {
			t.Errorf("note %d %q: want %q", i, notes[i], want)
		}
	}
	rs.Put(&Record{Kernel: "new", Target: "dsp", Core: "c", Knobs: Knobs{"u": 2}, Instructions: 1})
	b, err := rs.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"comment": "shared CI cache"`, `"note": "checked by hand"`, `"kernel": "b"`, `"u": "1"`, `"kernel": "d"`, `"kernel": "new"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("no %s in\n%s", want, b)
		}
	}
	// A duplicate is kept too while no record is written for its kernel;
	// a capitalised field is the field, not an unknown one.
	dup := `{"format":"mcugen-tuning-records","version":2,"records":[
	{"kernel":"a","target":"dsp","core":"c","knobs":{"u":1},"Instructions":7},
	{"kernel":"a","target":"dsp","core":"c","knobs":{"u":2},"instructions":8}]}`
	rd, _, err := Parse([]byte(dup))
	if err != nil || rd.Get("a", "dsp", "c", Knobs{}).Instructions != 7 {
		t.Fatalf("duplicate file: %v", err)
	}
	rd.Put(&Record{Kernel: "z", Target: "dsp", Core: "c", Knobs: Knobs{}, Instructions: 1})
	bd, _ := rd.Marshal()
	if !bytes.Contains(bd, []byte(`"instructions": 8`)) || bytes.Contains(bd, []byte(`"Instructions"`)) {
		t.Errorf("the duplicate went, or the capitalised field stayed as an extra:\n%s", bd)
	}
	rd.Put(&Record{Kernel: "a", Target: "dsp", Core: "c", Knobs: Knobs{"u": 5}, Instructions: 3})
	if bd, _ = rd.Marshal(); bytes.Contains(bd, []byte(`"instructions": 8`)) {
		t.Errorf("the duplicate stayed after a record for its kernel was written:\n%s", bd)
	}
	// A record for b's kernel replaces the skipped one.
	back, _, _ := Parse(b)
	back.Put(&Record{Kernel: "b", Target: "dsp", Core: "c", Knobs: Knobs{"u": 3}, Instructions: 4})
	b2, _ := back.Marshal()
	if bytes.Contains(b2, []byte(`"u": "1"`)) || !bytes.Contains(b2, []byte(`"u": 3`)) {
		t.Errorf("b's skipped record not replaced:\n%s", b2)
	}
}
