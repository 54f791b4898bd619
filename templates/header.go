package templates

import (
	"fmt"
	"regexp"
	"strings"
)

// apiFields reads the members of struct <prefix>_<kind> (kind "inputs" or "outputs")
// from the model's API header (DESIGN §4), in order; nil when the header has no such
// struct.
func apiFields(header []byte, prefix, kind string) []string {
	re := regexp.MustCompile(`(?s)struct\s+` + regexp.QuoteMeta(prefix+"_"+kind) + `\s*\{(.*?)\}`)
	m := re.FindSubmatch(header)
	if m == nil {
		return nil
	}
	var fields []string
	for _, f := range regexp.MustCompile(`void\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)\s*;`).FindAllSubmatch(m[1], -1) {
		fields = append(fields, string(f[1]))
	}
	return fields
}

// checkAPI checks that the model's header declares the API the example programs call
// (inputs and outputs in structs, the arena inside the model) and takes the C member
// names of inputs and outputs from it where the caller gave none.
func (m *model) checkAPI() error {
	hdr := m.Model[m.Prefix+".h"]
	run := regexp.MustCompile(`int32_t\s+` + regexp.QuoteMeta(m.Prefix) + `_run\s*\(([^)]*)\)`).FindSubmatch(hdr)
	if run == nil {
		return fmt.Errorf("templates: %s.h does not declare int32_t %s_run(...)", m.Prefix, m.Prefix)
	}
	want := fmt.Sprintf("struct %s_inputs *in, struct %s_outputs *out", m.Prefix, m.Prefix)
	if m.anyAPI && strings.Join(strings.Fields(string(run[1])), " ") != want {
		return nil
	}
	if strings.Join(strings.Fields(string(run[1])), " ") != want {
		return fmt.Errorf("templates: %s_run(%s): the project templates need the default API %s_run(%s) (--io separate, --arena static)",
			m.Prefix, strings.Join(strings.Fields(string(run[1])), " "), m.Prefix, want)
	}
	for _, io := range []struct {
		kind string
		ts   []tensorView
	}{{"inputs", m.Inputs}, {"outputs", m.Outputs}} {
		fields := apiFields(hdr, m.Prefix, io.kind)
		if len(fields) != len(io.ts) {
			return fmt.Errorf("templates: struct %s_%s in %s.h has %d members, the model has %d %s", m.Prefix, io.kind, m.Prefix, len(fields), len(io.ts), io.kind)
		}
		for i := range io.ts {
			if io.ts[i].Tensor.Field == "" {
				io.ts[i].Field = fields[i]
			} else if io.ts[i].Field != fields[i] {
				return fmt.Errorf("templates: %s %q: member %q, but %s.h has %q", io.kind, io.ts[i].Name, io.ts[i].Field, m.Prefix, fields[i])
			}
		}
	}
	return nil
}

// apiPrefix finds the API prefix in the model's files: the stem of the one header
// <stem>.h that declares int32_t <stem>_run(...); fallback when there is not exactly one.
func apiPrefix(model map[string][]byte, fallback string) string {
	var found []string
	for n, b := range model {
		stem, ok := strings.CutSuffix(n, ".h")
		if ok && IsIdent(stem) && regexp.MustCompile(`int32_t\s+`+stem+`_run\s*\(`).Match(b) {
			found = append(found, stem)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return fallback
}
