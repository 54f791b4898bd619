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
// build (review finding). Version 3 adds the compiler (Record.Compiler,
// ToolCore: one file may hold gcc's and clang's records for one kernel);
// a file is written as version 3 only when it holds a clang record, so that
// an mcugen reading up to version 2 refuses it rather than apply clang's
// records to a gcc build (review finding), and reads a gcc-only file as
// before.
const FormatVersion = 3

// gccOnlyVersion is the version of a file with no clang record.
const gccOnlyVersion = 2

// oldestVersion is the oldest layout this package reads.
const oldestVersion = 1

// Record is the best knobs found for one kernel signature on one core and
// schedule target.
type Record struct {
	Kernel string `json:"kernel"`          // Signature
	Target string `json:"target"`          // tir target (schedule set)
	Core   string `json:"core"`            // the board's boards.Board.TuningCore: its -mcpu, or toolchain and -march
	Board  string `json:"board,omitempty"` // the board tuned for (measured on its QEMU twin if it has no emulator)
	// Compiler is the C compiler the kernel was measured with: "clang", or
	// empty for the board's gcc (CompilerGCC is read as empty). Each
	// compiler's code is its own, and so is its best schedule.
	Compiler string `json:"compiler,omitempty"`
	Knobs    Knobs  `json:"knobs"`
	// Instructions is the measured count of the kernel run alone with Knobs
	// (harness included); Default the same with the schedule's defaults.
	Instructions int64 `json:"instructions"`
	Default      int64 `json:"default_instructions"`
	Trials       int   `json:"trials"`
	// Budget is the --trials the search had (0 in records from before it
	// was kept): a later run asking for more says the record stays.
	Budget  int    `json:"budget,omitempty"`
	Space   int    `json:"space"`
	Search  string `json:"search"` // exhaustive, anneal or none
	Version string `json:"mcugen"`
	// Extra holds the fields of the file's record this mcugen does not
	// know (a "note" of the user's), written back as they were.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON writes the record's fields, then Extra's in name order.
func (r *Record) MarshalJSON() ([]byte, error) {
	type plain Record
	b, err := encodeJSON(plain(*r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	b = bytes.TrimSuffix(bytes.TrimSpace(b), []byte("}"))
	names := make([]string, 0, len(r.Extra))
	for n := range r.Extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		q, _ := encodeJSON(n)
		b = append(append(append(append(b, ','), bytes.TrimSpace(q)...), ':'), r.Extra[n]...)
	}
	return append(b, '}'), nil
}

// encodeJSON is json.Marshal without HTML escaping (a signature's "->"
// stays as it is).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// recordFields are the JSON names of Record's fields.
var recordFields = map[string]bool{"kernel": true, "target": true, "core": true, "board": true, "compiler": true, "knobs": true, "budget": true,
	"instructions": true, "default_instructions": true, "trials": true, "space": true, "search": true, "mcugen": true}

// MaxCount bounds a record's instruction counts: no kernel takes a
// quadrillion instructions, and sums of such counts overflowed (tuning
// journey finding: "-9223372036854636388 tuned").
const MaxCount = 1e15

// Key identifies a record: kernel signature, target, core and compiler
// (ToolCore) and the layout of its weights (KeyFor).
func (r *Record) Key() string { return KeyFor(r.Kernel, r.Target, r.ToolCore(), r.Knobs) }

// CompilerClang is Record.Compiler for a clang build; CompilerGCC, the
// board's gcc, is written as no compiler.
const (
	CompilerGCC   = "gcc"
	CompilerClang = "clang"
)

// ToolCore is the core a build looks its records up by: the board's tuning
// core, with "+clang" for a clang build (compiler CompilerClang). gcc's and
// clang's records for one kernel are apart: a schedule that is best under
// one compiler need not be under the other.
func ToolCore(core, compiler string) string {
	if compiler == CompilerClang {
		return core + "+" + CompilerClang
	}
	return core
}

// SplitToolCore undoes ToolCore: the core and the compiler ("" for gcc).
func SplitToolCore(tc string) (core, compiler string) {
	if c, ok := strings.CutSuffix(tc, "+"+CompilerClang); ok {
		return c, CompilerClang
	}
	return tc, ""
}

// ToolCore is the record's core as builds look it up (ToolCore).
func (r *Record) ToolCore() string { return ToolCore(r.Core, r.Compiler) }

// CompilerName names a record's compiler in notes: gcc for none.
func CompilerName(compiler string) string {
	if compiler == "" {
		return CompilerGCC
	}
	return compiler
}

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
	// kept are the records Parse skipped, written back as they were
	// unless a record for their key is written (tuning journey finding: a
	// record with a knob typed as a string vanished from a shared file);
	// extra the file's top-level fields this mcugen does not know.
	kept  []keptRecord
	extra map[string]json.RawMessage
	// written are the keys Put after Parse: a kept record of such a key
	// is replaced (review finding: a duplicate, or a bad record beside a
	// good one of its key, was dropped although its note said kept).
	parsed  bool
	written map[string]bool
}

type keptRecord struct {
	raw json.RawMessage
	key string // KeyFor of its kernel, target, core and knobs, as far as they read ("" if not)
}

// lenientKey is the key a skipped record would have, read field by field
// ("" when its kernel, target or core is not a string).
func lenientKey(m json.RawMessage) string {
	var f map[string]json.RawMessage
	if json.Unmarshal(m, &f) != nil {
		return ""
	}
	var kernel, target, core, compiler string
	var knobs map[string]any
	if json.Unmarshal(f["kernel"], &kernel) != nil || json.Unmarshal(f["target"], &target) != nil || json.Unmarshal(f["core"], &core) != nil {
		return ""
	}
	if c, ok := f["compiler"]; ok && json.Unmarshal(c, &compiler) != nil {
		return ""
	}
	json.Unmarshal(f["knobs"], &knobs)
	k := Knobs{}
	if w, ok := knobs["weights"].(float64); ok {
		k["weights"] = int(w)
	}
	return KeyFor(kernel, target, ToolCore(core, compiler), k)
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
	if rs.parsed {
		if rs.written == nil {
			rs.written = map[string]bool{}
		}
		rs.written[r.Key()] = true
	}
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
	// The file is one JSON object; say in words what else it holds. Its
	// fields are read once, a field given twice refused: encoding/json
	// keeps the last silently (tuning journey: a second "version" was
	// read). Keys that differ in case are other fields (the file's own are
	// lower case, and tune keeps others as they are).
	if jsonKind(top) != "a JSON object" {
		return nil, nil, fmt.Errorf("not an mcugen tuning records file: it holds %s, not an object with \"format\": %q", jsonKind(top), Format)
	}
	fields := map[string]json.RawMessage{}
	if k := eachField(top, func(k string, v json.RawMessage) string {
		if _, again := fields[k]; again {
			return k
		}
		fields[k] = v
		return ""
	}); k != "" {
		return nil, nil, fmt.Errorf("damaged tuning records file: field %q given twice", clip(k))
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
	if v, ok := fields["version"]; ok && json.Unmarshal(v, &raw.Version) != nil {
		// "2" was reported as no version at all (tune review).
		return nil, nil, fmt.Errorf("tuning records whose layout version is %s, not a whole number; this mcugen reads versions %d to %d", clip(string(v)), oldestVersion, FormatVersion)
	} else if !ok {
		return nil, nil, fmt.Errorf("tuning records without a layout version (a whole number in \"version\"); this mcugen reads versions %d to %d", oldestVersion, FormatVersion)
	}
	if raw.Version < oldestVersion || raw.Version > FormatVersion {
		return nil, nil, fmt.Errorf("tuning records layout version %d; this mcugen reads versions %d to %d", raw.Version, oldestVersion, FormatVersion)
	}
	if r, ok := fields["records"]; ok && json.Unmarshal(r, &raw.Records) != nil {
		return nil, nil, fmt.Errorf("damaged tuning records file: \"records\" holds %s, not a list", jsonKind(r))
	}
	rs := NewRecords()
	for name, v := range fields {
		if name != "format" && name != "version" && name != "records" {
			if rs.extra == nil {
				rs.extra = map[string]json.RawMessage{}
			}
			rs.extra[name] = v
		}
	}
	var notes []string
	skip := func(i int, m json.RawMessage, why string) {
		notes = append(notes, fmt.Sprintf("record %d skipped: %s (kept in the file as it is)", i+1, why))
		var c bytes.Buffer
		if json.Compact(&c, m) == nil {
			m = c.Bytes()
		}
		rs.kept = append(rs.kept, keptRecord{raw: m, key: lenientKey(m)})
	}
	// Records are numbered from 1, as a reader counts them.
	for i, m := range raw.Records {
		// encoding/json reads null as 0 and keeps the last of two equal
		// keys, both silently: a "gemm_fuse": null, or a knob given twice,
		// changed the build without a note (tuning journey finding).
		if why := nullOrTwice(m); why != "" {
			skip(i, m, why)
			continue
		}
		var r Record
		if err := json.Unmarshal(m, &r); err != nil {
			skip(i, m, recordJSONError(err))
			continue
		}
		if why := r.invalid(); why != "" {
			skip(i, m, why)
			continue
		}
		if r.Compiler == CompilerGCC {
			r.Compiler = "" // the default, as tune writes it
		}
		if rs.byKey[r.Key()] != nil {
			skip(i, m, fmt.Sprintf("a second record for kernel %q on %s/%s", clipSig(r.Kernel), clip(r.Target), clip(r.ToolCore())))
			continue
		}
		var f map[string]json.RawMessage
		if json.Unmarshal(m, &f) == nil {
			for name, v := range f {
				// Case aside, as encoding/json matches a field (an
				// "Instructions" was read and kept as well, and won).
				if !recordFields[strings.ToLower(name)] {
					if r.Extra == nil {
						r.Extra = map[string]json.RawMessage{}
					}
					r.Extra[name] = v
				}
			}
		}
		rs.Put(&r)
	}
	rs.parsed = true
	// A note a record, up to a point: 200,000 bad records printed 200,001
	// lines (review finding).
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes], fmt.Sprintf("%d more records skipped", len(notes)-maxNotes))
	}
	return rs, notes, nil
}

// eachField calls f with each key of the JSON object v and its value, in
// the file's order, until f returns a reason, which it returns; "" when f
// never does, or v is not an object (json.Unmarshal says why elsewhere).
func eachField(v json.RawMessage, f func(k string, v json.RawMessage) string) string {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := kt.(string)
		var x json.RawMessage
		if dec.Decode(&x) != nil {
			return ""
		}
		if why := f(k, x); why != "" {
			return why
		}
	}
	return ""
}

// twice returns a function that reports a key seen before, keys compared
// as key(k) gives them.
func twice(key func(string) string) func(string) bool {
	seen := map[string]bool{}
	return func(k string) bool {
		if seen[key(k)] {
			return true
		}
		seen[key(k)] = true
		return false
	}
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// nullOrTwice names, for a record, one of its own fields (case aside, as
// encoding/json matches them) or a knob (exactly: the knobs are a map) that
// is null or given twice, or "" when there is none (or the record is not an
// object: Unmarshal says why). Other programs' fields are theirs.
func nullOrTwice(m json.RawMessage) string {
	again := twice(strings.ToLower)
	return eachField(m, func(k string, v json.RawMessage) string {
		low := strings.ToLower(k)
		if !recordFields[low] {
			return ""
		}
		name := fmt.Sprintf("field %q", clip(k))
		switch {
		case again(k):
			return name + " given twice"
		case isNull(v):
			return name + " is null"
		case low == "knobs":
			knob := twice(func(k string) string { return k })
			return eachField(v, func(k string, x json.RawMessage) string {
				switch {
				case knob(k):
					return fmt.Sprintf("knob %q given twice", clip(k))
				case isNull(x):
					return fmt.Sprintf("knob %q is null", clip(k))
				}
				return ""
			})
		}
		return ""
	})
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
	case strings.HasSuffix(r.Core, "+"+CompilerClang):
		return fmt.Sprintf("core %q (the compiler goes in \"compiler\")", clip(r.Core))
	case r.Compiler != "" && r.Compiler != CompilerGCC && r.Compiler != CompilerClang:
		return fmt.Sprintf("compiler %q (want gcc or clang)", clip(r.Compiler))
	case r.Knobs == nil:
		return "no knobs"
	case r.Instructions < 0 || r.Default < 0 || r.Trials < 0 || r.Space < 0 || r.Budget < 0:
		return "negative count"
	case r.Instructions > MaxCount || r.Default > MaxCount:
		return fmt.Sprintf("an instruction count above %.0e, more than any measurement", float64(MaxCount))
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

// clipSig clips a kernel signature, keeping its closing #hash whole (it
// was cut mid-hash: tuning journey finding).
func clipSig(s string) string {
	if len(s) <= 80 {
		return s
	}
	if i := strings.LastIndex(s, " #"); i >= 0 && len(s)-i <= 20 {
		return s[:60] + "..." + s[i:]
	}
	return clip(s)
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
	if want == "a whole number" && strings.HasPrefix(te.Value, "number ") && !strings.ContainsAny(te.Value[len("number "):], ".eE") {
		// A whole number past int64 (99999999999999999999).
		want = "a whole number no larger than 9223372036854775807 (this one is too large)"
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

// layoutVersion is the version the records need: FormatVersion where one
// names a compiler (a kept record of the file's included), else
// gccOnlyVersion.
func (rs *Records) layoutVersion() int {
	for _, r := range rs.Records {
		if r.Compiler != "" {
			return FormatVersion
		}
	}
	for _, k := range rs.kept {
		if bytes.Contains(k.raw, []byte(`"compiler"`)) {
			return FormatVersion
		}
	}
	return gccOnlyVersion
}

// Marshal writes the records sorted by key, then the skipped records kept
// (those no record of the same key replaces), indented, one stable form;
// the file's unknown top-level fields follow "version".
func (rs *Records) Marshal() ([]byte, error) {
	recs := append([]*Record{}, rs.Records...)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Key() < recs[j].Key() })
	var b bytes.Buffer
	field := func(name string, v []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		q, _ := encodeJSON(name)
		b.Write(q)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('{')
	f, _ := encodeJSON(Format)
	field("format", f)
	field("version", []byte(fmt.Sprint(rs.layoutVersion())))
	names := make([]string, 0, len(rs.extra))
	for n := range rs.extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		field(n, rs.extra[n])
	}
	var list bytes.Buffer
	list.WriteByte('[')
	for _, r := range recs {
		e, err := encodeJSON(r)
		if err != nil {
			return nil, err
		}
		if list.Len() > 1 {
			list.WriteByte(',')
		}
		list.Write(e)
	}
	for _, k := range rs.kept {
		if k.key != "" && rs.written[k.key] {
			continue // a record written for its kernel replaces it
		}
		if list.Len() > 1 {
			list.WriteByte(',')
		}
		list.Write(k.raw)
	}
	list.WriteByte(']')
	field("records", list.Bytes())
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
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
