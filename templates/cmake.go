package templates

import (
	"path"
	"strings"
)

// cmakeInfo is what the CMake templates read.
type cmakeInfo struct {
	*buildInfo
	HasAsm        bool
	ToolchainBase string
}

// cmakeFiles is the cmake template: the model as a static library, the example program
// as a second target, a toolchain file for the board's cross compiler.
func (m *model) cmakeFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	if err := m.sourceTree(files); err != nil {
		return nil, err
	}
	bi := m.buildInfo("")
	if bi.Run {
		cmd := runCommand(m.Board, "$<TARGET_FILE:"+m.Prefix+"_example>")
		if m.Board.Toolchain == "host" {
			cmd = cmd[len(cmd)-1:]
			cmd[0] = strings.TrimPrefix(cmd[0], "./")
		}
		bi.RunCommand = strings.Join(cmd, " ")
	}
	ci := &cmakeInfo{buildInfo: bi, HasAsm: hasSuffixAny(m.RtSrcs, ".S"), ToolchainBase: path.Base(bi.Toolchain)}
	for name, tmpl := range map[string]string{
		"CMakeLists.txt": "CMakeLists.txt.tmpl",
		"README.md":      "README.cmake.md.tmpl",
	} {
		b, err := render(tmpl, ci)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	for i, tc := range bi.Toolchains {
		tmpl := "toolchain.cmake.tmpl"
		if i == 1 {
			tmpl = "toolchain-clang.cmake.tmpl"
		}
		b, err := render(tmpl, &cmakeInfo{buildInfo: bi, HasAsm: ci.HasAsm, ToolchainBase: path.Base(tc)})
		if err != nil {
			return nil, err
		}
		files[tc] = b
	}
	return files, nil
}
