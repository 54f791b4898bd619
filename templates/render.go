package templates

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/mcugen/mcugen/boards"
)

//go:embed tmpl
var tmplFS embed.FS

var tmpls = template.Must(template.New("").Funcs(template.FuncMap{
	"join":    strings.Join,
	"carray":  carray,
	"comment": comment,
	// clangOnly is a board's gcc flags as clang takes them.
	"clangOnly": boards.ClangOnly,
}).ParseFS(tmplFS, "tmpl/*.tmpl"))

// render executes template name (a file in tmpl/) with data.
func render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpls.ExecuteTemplate(&b, name, data); err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// carray prints bytes as the body of a C array initializer, 12 per line.
func carray(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i%12 == 0 {
			s.WriteString("    ")
		}
		fmt.Fprintf(&s, "0x%02x,", c)
		if i%12 == 11 || i == len(b)-1 {
			s.WriteByte('\n')
		} else {
			s.WriteByte(' ')
		}
	}
	return s.String()
}

// comment makes text safe inside a C, shell, CMake or Makefile comment on one line:
// printable ASCII only, no comment terminator.
func comment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '\\' {
			b.WriteByte('?')
		} else {
			b.WriteRune(r)
		}
	}
	return strings.NewReplacer("*/", "*?", "/*", "?*", "$", "?").Replace(b.String())
}

// vectorsData is what vectors.h.tmpl reads.
type vectorsData struct {
	*model
	Flash bool // place the arrays in flash on AVR (PROGMEM)
}

// sourceTree adds the model, the runtime, the example program and its vectors to files
// under model/, runtime/ and src/: the layout Make and CMake share.
func (m *model) sourceTree(files map[string][]byte) error {
	for n, b := range m.Model {
		files["model/"+n] = b
	}
	for n, b := range m.Runtime {
		files["runtime/"+n] = b
	}
	v, err := render("vectors.h.tmpl", vectorsData{model: m})
	if err != nil {
		return err
	}
	files["src/"+m.Ident+"_vectors.h"] = v
	mainC, err := render("main_crt.c.tmpl", m)
	if err != nil {
		return err
	}
	files["src/main.c"] = mainC
	return nil
}

// buildInfo is what the Make and CMake templates need besides the model.
type buildInfo struct {
	*model
	Elf          string
	ModelPaths   []string
	RuntimePaths []string
	LD           string
	LinkFlags    []string
	LinkLibs     []string
	Run          bool
	RunCommand   string // with $(ELF) for the firmware
	RunHow       string
	Toolchain    string // CMake toolchain file of the project's compiler, "" for the host
	// Toolchains are every CMake toolchain file the project has: the
	// board's gcc's, then clang's (which compiles and lets gcc link).
	Toolchains []string
}

func (m *model) buildInfo(elf string) *buildInfo {
	bi := &buildInfo{model: m, Elf: elf, LD: m.RtLD, LinkLibs: []string{"-lm"}}
	for _, s := range m.Sources {
		bi.ModelPaths = append(bi.ModelPaths, "model/"+s)
	}
	for _, s := range m.RtSrcs {
		bi.RuntimePaths = append(bi.RuntimePaths, "runtime/"+s)
	}
	b := m.Board
	switch {
	case b.Toolchain == boards.ToolchainHost:
		bi.Run, bi.RunHow = true, "natively"
	case b.Toolchain == boards.ToolchainAArch64:
		bi.LinkFlags = []string{"-static"}
		bi.Toolchains = []string{"cmake/aarch64-linux-gnu.cmake", "cmake/aarch64-linux-gnu-clang.cmake"}
		bi.RunHow = "under qemu-aarch64"
		bi.Run = b.QEMU.Binary != ""
	default:
		bi.LinkFlags = []string{"-nostartfiles", "--specs=nano.specs", "-Wl,--gc-sections"}
		bi.Toolchains = []string{"cmake/arm-none-eabi.cmake", "cmake/arm-none-eabi-clang.cmake"}
		bi.Run = b.QEMU.Binary != ""
		bi.RunHow = "under QEMU"
	}
	if len(bi.Toolchains) > 0 {
		bi.Toolchain = bi.Toolchains[0]
		if m.Compiler == "clang" {
			bi.Toolchain = bi.Toolchains[1]
		}
	}
	return bi
}

// makeFiles is the make template.
func (m *model) makeFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	if err := m.sourceTree(files); err != nil {
		return nil, err
	}
	bi := m.buildInfo("$(BUILD)/" + m.Ident + ".elf")
	if bi.LD != "" {
		bi.LinkFlags = append(bi.LinkFlags, "-T runtime/"+bi.LD, "-Wl,-Map=$(BUILD)/"+m.Ident+".map")
	}
	if bi.Run {
		bi.RunCommand = shellJoin(runCommand(m.Board, "$(ELF)"))
	}
	mk, err := render("Makefile.tmpl", bi)
	if err != nil {
		return nil, err
	}
	files["Makefile"] = mk
	readme, err := render("README.make.md.tmpl", bi)
	if err != nil {
		return nil, err
	}
	files["README.md"] = readme
	return files, nil
}

// runCommand runs firmware elf on the board: under its emulator, or natively on the host.
func runCommand(b *boards.Board, elf string) []string {
	if b.Toolchain == boards.ToolchainHost {
		return []string{"./" + elf}
	}
	return qemuCommand(b, elf)
}

// shellJoin joins words into a shell command line, quoting those that need it.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\"'\\;&|<>*?#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

func sortStrings(lists ...[]string) {
	for _, l := range lists {
		sort.Strings(l)
	}
}
