package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/mcugen/mcugen/internal/fileio"
)

// Format is the "format" field every records file carries.
const Format = "mcugen-tuning-records"

// FormatVersion is the records layout this package writes. Version 2 keys a
// kernel's records by its weights' layout as well (KeyFor: one file may
// hold a record with int16 weights and one with int8 for the same kernel);
// version 1 files read the same, and an mcugen that reads only version 1
// refuses a version 2 file rather than apply an int8 record to an int16
// build (review finding).
const FormatVersion = 2

// oldestVersion is the oldest layout this package reads.
const oldestVersion = 1

// Record is the best knobs found for one kernel signature on one core and
// schedule target.
type Record struct {
	Kernel string `json:"kernel"` // Signature
	Target string `json:"target"` // tir target (schedule set)
	Core   string `json:"core"`   // -mcpu of the board measured on
	Board  string `json:"board,omitempty"`
	Knobs  Knobs  `json:"knobs"`
	// Instructions is the measured count of the kernel run alone with Knobs
	// (harness included); Default the same with the schedule's defaults.
	Instructions int64  `json:"instructions"`
	Default      int64  `json:"default_instructions"`
	Trials       int    `json:"trials"`
	Space        int    `json:"space"`
	Search       string `json:"search"` // exhaustive, anneal or none
	Version      string `json:"mcugen"`
}

// Key identifies a record: kernel signature, target, core and the layout
// of its weights (KeyFor).
func (r *Record) Key() string { return KeyFor(r.Kernel, r.Target, r.Core, r.Knobs) }

// Key joins a kernel signature, target and core into a record key.
func Key(kernel, target, core string) string { return kernel + "|" + target + "|" + core }

// KeyFor is Key for a kernel lowered with knobs: a dsp kernel kept with
// int8 weights (knob weights = 8, which a flash budget or a small board's
// fit pass sets) is another kernel than the same one with int16 weights,
// and its record another record. A build with int16 weights used the int8
// one's knobs and ran 69% slower (user-journey finding).
func KeyFor(kernel, target, core string, knobs Knobs) string {
	k := Key(kernel, target, core)
	if knobs["weights"] == Lean["weights"] {
		k += "|int8-weights"
	}
	return k
}

// Records is a records file.
type Records struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Records []*Record `json:"records"`
	// Path is the file Load read them from ("" otherwise), for notes.
	Path string `json:"-"`

	byKey map[string]*Record
}

// NewRecords returns an empty set.
func NewRecords() *Records {
	return &Records{Format: Format, Version: FormatVersion, byKey: map[string]*Record{}}
}

// Get returns the record for a kernel lowered with knobs (KeyFor: its
// weights' layout), or nil.
func (rs *Records) Get(kernel, target, core string, knobs Knobs) *Record {
	if rs == nil {
		return nil
	}
	return rs.byKey[KeyFor(kernel, target, core, knobs)]
}

// Put adds or replaces a record.
func (rs *Records) Put(r *Record) {
	if old, ok := rs.byKey[r.Key()]; ok {
		*old = *r
		return
	}
	rs.byKey[r.Key()] = r
	rs.Records = append(rs.Records, r)
}

// Len is the number of records.
func (rs *Records) Len() int { return len(rs.Records) }

// Parse reads a records file. A file that is not JSON, not a records file
// or of another layout version is an error; a record that is malformed
// (missing fields, negative counts, a knob without a name) is skipped with a
// note, as is a second record for the same key.
func Parse(data []byte) (*Records, []string, error) {
	// A byte-order mark, as some Windows editors save JSON with, is not
	// data (it was "invalid character 'ï'": user-journey finding).
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var top json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&top); err != nil {
		return nil, nil, fmt.Errorf("not an mcugen tuning records file (not valid JSON: %v)", err)
	}
	// One JSON value and nothing after it: trailing data was taken
	// silently (a file cut and pasted into, or two files joined: review
	// finding).
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("damaged tuning records file: data after the JSON object (at byte %d)", dec.InputOffset())
	}
	// The file is one JSON object; say in words what else it holds.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top, &fields); err != nil || fields == nil {
		return nil, nil, fmt.Errorf("not an mcugen tuning records file: it holds %s, not an object with \"format\": %q", jsonKind(top), Format)
	}
	var format string
	if f, ok := fields["format"]; !ok || json.Unmarshal(f, &format) != nil || format == "" {
		return nil, nil, fmt.Errorf("not an mcugen tuning records file (no \"format\": %q field)", Format)
	}
	if format != Format {
		return nil, nil, fmt.Errorf("not an mcugen tuning records file (format %q, want %q)", clip(format), Format)
	}
	var raw struct {
		Version int
		Records []json.RawMessage
	}
	if v, ok := fields["version"]; !ok || json.Unmarshal(v, &raw.Version) != nil {
		return nil, nil, fmt.Errorf("tuning records without a layout version (a whole number in \"version\"); this mcugen reads versions %d to %d", oldestVersion, FormatVersion)
	}
	if raw.Version < oldestVersion || raw.Version > FormatVersion {
		return nil, nil, fmt.Errorf("tuning records layout version %d; this mcugen reads versions %d to %d", raw.Version, oldestVersion, FormatVersion)
	}
	if r, ok := fields["records"]; ok && json.Unmarshal(r, &raw.Records) != nil {
		return nil, nil, fmt.Errorf("damaged tuning records file: \"records\" holds %s, not a list", jsonKind(r))
	}
	rs := NewRecords()
	var notes []string
	// Records are numbered from 1, as a reader counts them.
	for i, m := range raw.Records {
		var r Record
		if err := json.Unmarshal(m, &r); err != nil {
			notes = append(notes, fmt.Sprintf("record %d skipped: %s", i+1, recordJSONError(err)))
			continue
		}
		if why := r.invalid(); why != "" {
			notes = append(notes, fmt.Sprintf("record %d skipped: %s", i+1, why))
			continue
		}
		if rs.byKey[r.Key()] != nil {
			notes = append(notes, fmt.Sprintf("record %d skipped: a second record for kernel %q on %s/%s", i+1, clip(r.Kernel), clip(r.Target), clip(r.Core)))
			continue
		}
		rs.Put(&r)
	}
	// A note a record, up to a point: 200,000 bad records printed 200,001
	// lines (review finding).
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes], fmt.Sprintf("%d more records skipped", len(notes)-maxNotes))
	}
	return rs, notes, nil
}

// maxNotes is how many skipped records Parse names one by one.
const maxNotes = 20

// jsonKind names the kind of a JSON value in words: "a JSON array", ...
func jsonKind(v json.RawMessage) string {
	b := bytes.TrimSpace(v)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case '"':
		return "a JSON string"
	case 't', 'f':
		return "a JSON boolean"
	case 'n':
		return "JSON null"
	}
	return "a JSON number"
}

func (r *Record) invalid() string {
	switch {
	case r.Kernel == "":
		return "no kernel signature"
	case r.Target == "":
		return "no target"
	case r.Core == "":
		return "no core"
	case r.Knobs == nil:
		return "no knobs"
	case r.Instructions < 0 || r.Default < 0 || r.Trials < 0 || r.Space < 0:
		return "negative count"
	}
	for k := range r.Knobs {
		if k == "" || strings.ContainsAny(k, " \t\n=") {
			return fmt.Sprintf("bad knob name %q", clip(k))
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// recordJSONError says what is wrong with a record's JSON in the file's
// terms, not Go's ("cannot unmarshal number 2.5 into Go struct field
// Record.knobs of type int": user-journey finding).
func recordJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	kind := te.Type.Kind().String()
	want := map[string]string{"int": "a whole number", "int64": "a whole number", "string": "a string", "bool": "true or false",
		"map": "an object of knob names and whole numbers", "struct": "an object"}[kind]
	if want == "" {
		want = "a " + kind
	}
	field := te.Field
	switch {
	case field == "":
		return fmt.Sprintf("it holds a JSON %s, not an object", te.Value)
	case field == "knobs" && kind != "map" || strings.HasPrefix(field, "knobs."):
		field = "a knob"
	default:
		field = "\"" + field + "\""
	}
	return fmt.Sprintf("%s holds a JSON %s, want %s", field, te.Value, want)
}

// maxRecordsBytes bounds a records file (a record is about 300 bytes).
const maxRecordsBytes = 256 << 20

// Load reads a records file; a missing file is an empty set. It must be a
// regular file: /dev/zero was read until memory ran out (review finding).
func Load(path string) (*Records, []string, error) {
	data, err := fileio.ReadRegular(path, maxRecordsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return NewRecords(), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tuning records %s: %w", path, err)
	}
	rs, notes, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("tuning records %s: %w", path, err)
	}
	for i := range notes {
		notes[i] = fmt.Sprintf("tuning records %s: %s", path, notes[i])
	}
	rs.Path = path
	return rs, notes, nil
}

// Marshal writes the records sorted by key, indented, one stable form.
func (rs *Records) Marshal() ([]byte, error) {
	out := *rs
	out.Format, out.Version = Format, FormatVersion
	out.Records = append([]*Record{}, rs.Records...)
	sort.Slice(out.Records, func(i, j int) bool { return out.Records[i].Key() < out.Records[j].Key() })
	if out.Records == nil {
		out.Records = []*Record{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Save writes the records through a temporary file renamed over path, so
// an interrupted run leaves the previous complete file (fileio.WriteAtomic:
// a device or a pipe is written through, never replaced).
func (rs *Records) Save(path string) error {
	b, err := rs.Marshal()
	if err != nil {
		return err
	}
	if err := fileio.WriteAtomic(path, b); err != nil {
		return fmt.Errorf("tuning records %s: %w", path, err)
	}
	return nil
}
