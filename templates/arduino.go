package templates

import (
	"fmt"
	"regexp"
	"strings"
)

type arduinoInfo struct {
	*model
	Lib      string // library name = wrapper class = main header
	Guard    string
	SafeName string
	FQBN     string // the board's, from the catalog: the C is generated for its core
	Arch     string // the FQBN's architecture (library.properties architectures=)
	// Reset: the model keeps state from one run to the next (its header
	// declares <prefix>_reset), so the class has reset().
	Reset bool
}

// fqbnSyntax is an FQBN: vendor:architecture:board, then options opt=value,... .
var fqbnSyntax = regexp.MustCompile(`^[A-Za-z0-9._-]+:[A-Za-z0-9._-]+:[A-Za-z0-9._-]+(:[A-Za-z0-9._-]+=[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+=[A-Za-z0-9._-]+)*)?$`)

// fqbnArch is the architecture field of an FQBN that CheckBoard accepted.
func fqbnArch(fqbn string) string { return strings.Split(fqbn, ":")[1] }

// arduinoLibName is the library's name and its C++ class: the model identifier in
// CamelCase with "Model" appended ("kws_int8" -> "KwsInt8Model").
func arduinoLibName(ident, prefix string) string {
	var b strings.Builder
	for _, part := range strings.Split(ident, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	name := b.String() + "Model"
	if strings.EqualFold(name, prefix) {
		name += "Lib" // the model's own header is <prefix>.h
	}
	return name
}

// arduinoFiles is the arduino template: a library per the Arduino library specification.
func (m *model) arduinoFiles() (map[string][]byte, error) {
	ai := &arduinoInfo{model: m, SafeName: strings.ReplaceAll(comment(m.Name), "\"", "'"), FQBN: m.Board.Arduino}
	ai.Arch = fqbnArch(ai.FQBN)
	ai.Lib = arduinoLibName(m.Ident, m.Prefix)
	ai.Guard = strings.ToUpper(ai.Lib) + "_H"
	ai.Reset = regexp.MustCompile(`void\s+` + regexp.QuoteMeta(m.Prefix) + `_reset\s*\(\s*void\s*\)`).Match(m.Model[m.Prefix+".h"])
	files := map[string][]byte{}
	for n, b := range m.Model {
		if strings.EqualFold(n, ai.Lib+".h") || strings.EqualFold(n, ai.Lib+".cpp") {
			return nil, fmt.Errorf("templates: model file %q clashes with the Arduino wrapper's name %s", n, ai.Lib)
		}
		files["src/"+n] = b
	}
	v, err := render("vectors.h.tmpl", vectorsData{model: m, Flash: true})
	if err != nil {
		return nil, err
	}
	ex := "examples/" + m.Ident + "/"
	files[ex+m.Ident+"_vectors.h"] = v
	for name, tmpl := range map[string]string{
		"library.properties":     "arduino_library.properties.tmpl",
		"src/" + ai.Lib + ".h":   "arduino_wrapper.h.tmpl",
		"src/" + ai.Lib + ".cpp": "arduino_wrapper.cpp.tmpl",
		ex + m.Ident + ".ino":    "arduino_example.ino.tmpl",
		"README.md":              "README.arduino.md.tmpl",
	} {
		b, err := render(tmpl, ai)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	return files, nil
}
