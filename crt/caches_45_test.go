package crt

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcugen/mcugen/boards"
)

// The boards whose cores have level 1 caches (Cortex-M7, M55) get
// CRT_CACHES in their header and others do not; their firmware still runs
// under QEMU, whose models report no caches (CLIDR reads 0, so the start-up
// code leaves CCR alone there).
func TestCachesDefined(t *testing.T) {
	const mainC = `#include "crt.h"
int main(void) {
    crt_init();
    crt_puts("ccr ");
    crt_put_hex32(*(volatile uint32_t *)0xE000ED14u);
    crt_puts("\n");
    return 0;
}
`
	for _, c := range []struct {
		board  string
		caches bool
	}{{"mps2-an500", true}, {"mps3-an547", true}, {"nucleo-h743zi", true}, {"mps2-an386", false}, {"mps2-an505", false}, {"microbit", false}} {
		b := *getBoard(t, c.board)
		if got := strings.Contains(BoardHeader(&b), "#define CRT_CACHES 1"); got != c.caches {
			t.Errorf("%s: CRT_CACHES defined %v, want %v", c.board, got, c.caches)
		}
		if b.QEMU.Machine == "" || !c.caches {
			continue
		}
		b.UART = boards.UART{Kind: "none"}
		if out, err := runBareMetal(t, &b, "main.c", mainC); err != nil || !strings.Contains(string(out), "ccr ") {
			t.Errorf("%s: %v\n%s", c.board, err, out)
		}
	}
}

// crt_caches_enable, compiled for the host against a fake system control
// block: every DCISW and ICIALLU write is logged with the CCR at that time.
// The expected set/way words come from the architecture's formula (way in
// the top ceil(log2(ways)) bits, set above the line's offset bits).
func TestCachesEnableSequence(t *testing.T) {
	gcc := needTool(t, "gcc", "gcc")
	src, err := Source("crt_startup.c")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "#if defined(CRT_CACHES) && !defined(CRT_NO_CACHES)\n/*")
	if start < 0 {
		t.Fatal("crt_startup.c: no crt_caches_enable block")
	}
	end := strings.Index(text[start:], "\n#endif\n\n")
	if end < 0 {
		t.Fatal("crt_startup.c: the crt_caches_enable block has no end")
	}
	harness := `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define CRT_CACHES 1
static uint32_t clidr, ccr, ccsidr, csselr, log_addr[70000], log_val[70000], log_ccr[70000];
static int n;
static uint32_t scratch;
static volatile uint32_t *crt_fake(uintptr_t a)
{
    switch (a) {
    case 0xE000ED78u: return &clidr;
    case 0xE000ED14u: return &ccr;
    case 0xE000ED80u: return csselr == 0u ? &ccsidr : &scratch;
    case 0xE000ED84u: return &csselr;
    case 0xE000EF50u: case 0xE000EF60u:
        if (n == 70000) { exit(2); }
        log_addr[n] = (uint32_t)a; log_ccr[n] = ccr;
        return &log_val[n++];
    }
    fprintf(stderr, "unexpected register %#lx\n", (unsigned long)a);
    exit(3);
}
#define CRT_REG(a) (*crt_fake((uintptr_t)(a)))
#define CRT_DSB() ((void)0)
#define CRT_ISB() ((void)0)
` + text[start:start+end] + `
#endif
int main(int argc, char **argv)
{
    int i;
    if (argc != 4) { return 1; }
    clidr = (uint32_t)strtoul(argv[1], 0, 0);
    ccr = (uint32_t)strtoul(argv[2], 0, 0);
    ccsidr = (uint32_t)strtoul(argv[3], 0, 0);
    crt_caches_enable();
    for (i = 0; i < n; i++) {
        printf("%s %u %u\n", log_addr[i] == 0xE000EF50u ? "iciallu" : "dcisw", (unsigned)log_val[i], (unsigned)log_ccr[i]);
    }
    printf("ccr %u\n", (unsigned)ccr);
    return 0;
}
`
	dir := t.TempDir()
	cfile, exe := filepath.Join(dir, "caches.c"), filepath.Join(dir, "caches")
	if err := os.WriteFile(cfile, []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsanitize=address,undefined", "-o", exe, cfile).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ccsidr := func(lineBytes, ways, sets uint32) uint32 {
		log2 := uint32(0)
		for 1<<log2 < lineBytes {
			log2++
		}
		return 0xF<<28 | (sets-1)<<13 | (ways-1)<<3 | (log2 - 4)
	}
	const stkalign = 1 << 9
	for _, c := range []struct {
		name                  string
		clidr, ccr            uint32
		line, ways, sets      uint32
		wantIC, wantDC, dcisw bool
	}{
		// The Cortex-M7's 16 KiB data cache: 4 ways of 128 sets of 32 B.
		{"m7 16 KiB", 0x09000003, stkalign, 32, 4, 128, true, true, true},
		{"2-way 64 B lines", 0x09000003, stkalign, 64, 2, 256, true, true, true},
		{"direct-mapped", 0x09000003, stkalign, 32, 1, 64, true, true, true},
		{"3 ways", 0x09000003, stkalign, 32, 3, 16, true, true, true},
		{"no caches (QEMU)", 0, stkalign, 32, 4, 128, false, false, false},
		{"instruction cache only", 0x09000001, stkalign, 32, 4, 128, true, false, false},
		// A boot loader turned the data cache on: its lines may be dirty.
		{"data cache already on", 0x09000003, stkalign | 1<<16, 32, 4, 128, true, true, false},
	} {
		out, err := exec.Command(exe, fmt.Sprint(c.clidr), fmt.Sprint(c.ccr), fmt.Sprint(ccsidr(c.line, c.ways, c.sets))).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		var dcisw []uint32
		icialls, ccr := 0, uint32(0)
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var kind string
			var v, at uint32
			if _, err := fmt.Sscan(line, &kind, &v); err != nil {
				t.Fatalf("%s: line %q", c.name, line)
			}
			switch kind {
			case "ccr":
				ccr = v
				continue
			case "iciallu":
				icialls++
			case "dcisw":
				dcisw = append(dcisw, v)
			}
			fmt.Sscan(line, &kind, &v, &at)
			if kind == "iciallu" && at&(1<<17) != 0 {
				t.Errorf("%s: ICIALLU after the instruction cache was enabled", c.name)
			}
			if kind == "dcisw" && at&(1<<16) != 0 && c.ccr&(1<<16) == 0 {
				t.Errorf("%s: DCISW after the data cache was enabled", c.name)
			}
		}
		if want := map[bool]int{true: 1, false: 0}[c.wantIC]; icialls != want {
			t.Errorf("%s: %d ICIALLU writes, want %d", c.name, icialls, want)
		}
		if got := ccr&(1<<17) != 0; got != c.wantIC {
			t.Errorf("%s: CCR %#x: instruction cache on %v, want %v", c.name, ccr, got, c.wantIC)
		}
		if got := ccr&(1<<16) != 0; got != c.wantDC {
			t.Errorf("%s: CCR %#x: data cache on %v, want %v", c.name, ccr, got, c.wantDC)
		}
		if ccr&stkalign == 0 {
			t.Errorf("%s: CCR %#x lost its other bits", c.name, ccr)
		}
		var want []uint32
		if c.dcisw {
			a := uint32(0)
			for 1<<a < c.ways {
				a++
			}
			l := uint32(0)
			for 1<<l < c.line {
				l++
			}
			for s := uint32(0); s < c.sets; s++ {
				for w := uint32(0); w < c.ways; w++ {
					v := s << l
					if a > 0 {
						v |= w << (32 - a)
					}
					want = append(want, v)
				}
			}
		}
		slices.Sort(want)
		slices.Sort(dcisw)
		if !slices.Equal(dcisw, want) {
			t.Errorf("%s: %d DCISW writes, want %d (one per set and way)", c.name, len(dcisw), len(want))
		}
	}
}
