package templates

import "strings"

// zephyrRelease holds every line of the Zephyr template that depends on the Zephyr
// version, so that moving to the next LTS is an edit here and nowhere else.
type zephyrRelease struct {
	Version  string   // find_package(Zephyr <Version>) and the README
	Tag      string   // the git tag west.yml pins
	CMakeMin string   // cmake_minimum_required of an application
	Includes []string // headers main.c includes (the <zephyr/...> prefix exists since 3.1)
	Kconfig  []string // prj.conf lines every build needs
	Modules  []string // west modules the supported boards need (HALs, CMSIS)
}

// zephyrLTS is the Zephyr release the template targets: 3.7, the LTS of July 2024
// (hardware model v2 board names such as nrf52840dk/nrf52840).
var zephyrLTS = zephyrRelease{
	Version:  "3.7",
	Tag:      "v3.7.0",
	CMakeMin: "3.20.0",
	Includes: []string{"zephyr/kernel.h", "zephyr/sys/printk.h", "zephyr/timing/timing.h"},
	Kconfig:  []string{"CONFIG_PRINTK=y", "CONFIG_TIMING_FUNCTIONS=y"},
	Modules:  []string{"cmsis", "hal_nordic", "hal_stm32", "hal_rpi_pico", "hal_nxp"},
}

type zephyrInfo struct {
	*model
	Z          zephyrRelease
	ZBoard     string
	StackBytes int
	// Emulated: Zephyr runs this board only in an emulator (QEMU for its
	// MPS2 and qemu_* boards, QEMU or Arm's FVP for MPS3), with no flash
	// runner: `west build -t run`, not `west flash` (review finding).
	Emulated bool
}

// zephyrFiles is the zephyr template: an application with the model as a library.
func (m *model) zephyrFiles() (map[string][]byte, error) {
	zi := &zephyrInfo{model: m, Z: zephyrLTS, ZBoard: m.Board.Zephyr, StackBytes: ZephyrStack(m.ScratchBytes), Emulated: zephyrEmulated(m.Board.Zephyr)}
	files := map[string][]byte{}
	for n, b := range m.Model {
		files["model/"+n] = b
	}
	v, err := render("vectors.h.tmpl", vectorsData{model: m})
	if err != nil {
		return nil, err
	}
	files["src/"+m.Ident+"_vectors.h"] = v
	for name, tmpl := range map[string]string{
		"CMakeLists.txt": "zephyr_CMakeLists.txt.tmpl",
		"prj.conf":       "zephyr_prj.conf.tmpl",
		"west.yml":       "zephyr_west.yml.tmpl",
		"src/main.c":     "zephyr_main.c.tmpl",
		"README.md":      "README.zephyr.md.tmpl",
	} {
		b, err := render(tmpl, zi)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
	return files, nil
}

// ZephyrStack is the main thread's stack for a model whose kernels need
// scratch bytes of local arrays: 2 KiB for the frames, the example's own
// work and Zephyr's printk, plus the scratch rounded up to 1 KiB, at least
// 4 KiB.
func ZephyrStack(scratch int64) int {
	need := 2048 + (scratch+1023)/1024*1024
	return int(max(need, 4096))
}

// zephyrEmulated reports whether Zephyr's board z runs only in an emulator
// (its board.cmake names no flash runner): the MPS2 and MPS3 FPGA images
// and the qemu_* boards.
func zephyrEmulated(z string) bool {
	for _, p := range []string{"mps2/", "mps3/", "qemu_"} {
		if strings.HasPrefix(z, p) {
			return true
		}
	}
	return false
}
