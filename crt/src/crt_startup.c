/* mcugen runtime: Cortex-M vector table, reset handler and fault handlers.
 * The linker script (generated from the board's memory regions) defines _estack,
 * _sidata, _sdata, _edata, _sbss and _ebss. */
#include "crt.h"

extern uint32_t _estack;
extern uint32_t _sidata;
extern uint32_t _sdata;
extern uint32_t _edata;
extern uint32_t _sbss;
extern uint32_t _ebss;

/* The constructors' tables (the linker script's .init_array). */
typedef void (*crt_ctor)(void);
extern crt_ctor __preinit_array_start[];
extern crt_ctor __preinit_array_end[];
extern crt_ctor __init_array_start[];
extern crt_ctor __init_array_end[];

int main(void);
void Reset_Handler(void);
void crt_fault_entry(void);
__attribute__((used)) void crt_fault_report(const uint32_t *frame);

#ifndef CRT_REG
#define CRT_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#endif

/* Mainline cores (v7-M, v8-M Main) have the configurable fault status registers. */
#if defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB == 2
#define CRT_HAS_CFSR 1
#endif

/* v8-M Main cores (M33, M55) have a stack limit register. */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define CRT_HAS_MSPLIM 1
extern uint32_t _sstack[];
#endif

#if defined(__PIC__)
/* Position-independent code built with -msingle-pic-base reads the global offset table
 * through r9 (EABI's default PIC register) and never loads r9 itself: the reset handler
 * sets it to the table (which the linker script keeps in flash, filled in by the static
 * link) before any C runs. Other PIC builds load their own base and leave r9 alone. */
/* Used: the handler reaches it only from its asm, which -flto does not see (a PIC LTO
   build failed to link: runtime review). */
__attribute__((used)) void crt_reset(void);
__attribute__((naked)) void Reset_Handler(void)
{
    __asm__ volatile(
        "ldr r0, 1f\n"
        "2:\n\t"
        "add r0, pc\n\t"
        "mov r9, r0\n\t"
        "ldr r0, 3f\n\t"
        "bx r0\n\t"
        ".align 2\n"
        "1:\n\t"
        ".word _GLOBAL_OFFSET_TABLE_ - (2b + 4)\n"
        "3:\n\t"
        ".word crt_reset");
}
#define CRT_RESET crt_reset
#else
#define CRT_RESET Reset_Handler
#endif

#if defined(CRT_CACHES) && !defined(CRT_NO_CACHES)
/* The Cortex-M7's, M55's and M85's level 1 caches are off after reset: a firmware
 * engineer's build runs from flash at a fraction of the core's speed until they are on.
 * CLIDR says which the part has (they are optional); a cache already on (a boot loader
 * turned it on and may have dirty lines) is left as it is. The data cache is invalidated
 * line by line (set and way, from CCSIDR) before it is enabled. Compile with
 * -DCRT_NO_CACHES to leave them off. QEMU does not model caches, so counts under it do
 * not change. */
#ifndef CRT_DSB
#define CRT_DSB() __asm__ volatile("dsb" ::: "memory")
#define CRT_ISB() __asm__ volatile("isb" ::: "memory")
#endif
static void crt_caches_enable(void)
{
    uint32_t clidr = CRT_REG(0xE000ED78u), ccr = CRT_REG(0xE000ED14u);
    if ((clidr & 1u) != 0u && (ccr & (1u << 17)) == 0u) {
        CRT_DSB();
        CRT_ISB();
        CRT_REG(0xE000EF50u) = 0u; /* ICIALLU */
        CRT_DSB();
        CRT_ISB();
        ccr |= 1u << 17; /* CCR.IC */
        CRT_REG(0xE000ED14u) = ccr;
        CRT_DSB();
        CRT_ISB();
    }
    if ((clidr & 2u) != 0u && (ccr & (1u << 16)) == 0u) {
        uint32_t ccsidr, sets, ways, set_shift, way_shift, set, way;
        CRT_REG(0xE000ED84u) = 0u; /* CSSELR: the level 1 data cache */
        CRT_DSB();
        ccsidr = CRT_REG(0xE000ED80u);
        set_shift = (ccsidr & 7u) + 4u;      /* log2 of a line's bytes */
        ways = (ccsidr >> 3) & 0x3FFu;       /* associativity - 1 */
        sets = (ccsidr >> 13) & 0x7FFFu;     /* sets - 1 */
        way_shift = ways != 0u ? (uint32_t)__builtin_clz(ways) : 0u; /* way in the top bits */
        for (set = 0u; set <= sets; set++) {
            for (way = 0u; way <= ways; way++) {
                CRT_REG(0xE000EF60u) = (way << way_shift) | (set << set_shift); /* DCISW */
            }
        }
        CRT_DSB();
        ccr |= 1u << 16; /* CCR.DC */
        CRT_REG(0xE000ED14u) = ccr;
        CRT_DSB();
        CRT_ISB();
    }
}
#endif

void CRT_RESET(void)
{
    uint32_t *src, *dst;
#if defined(__ARM_ARCH_6M__)
    /* ARMv6-M code on a Mainline core (rp2040's build run on QEMU's Cortex-M3): trap
       unaligned accesses, as the M0 and M0+ always do (CCR.UNALIGN_TRP), so a run there
       finds one the part would fault on (runtime review). On a v6-M part (CPUID's
       architecture field 0xC) CCR is read-only and is left alone. */
    if (((CRT_REG(0xE000ED00u) >> 16) & 0xFu) == 0xFu) {
        CRT_REG(0xE000ED14u) |= 1u << 3;
    }
#endif
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CPACR: full access to CP10 and CP11 (FPU and MVE) before any FP/vector instruction. */
    CRT_REG(0xE000ED88u) |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if defined(CRT_HAS_CFSR)
    /* SHCSR: report MemManage, BusFault and UsageFault as themselves. */
    CRT_REG(0xE000ED24u) |= (1u << 16) | (1u << 17) | (1u << 18);
#endif
#if defined(CRT_HAS_MSPLIM)
    /* The stack limit at the top of the stack's guard band: an overflow faults (UsageFault
       STKOF) at the instruction that takes SP below it, before it writes anything; the core
       pushes no frame below the limit, and the band holds the fault report's own frames (a
       limit at the very bottom left them nowhere to go: the core locked up). */
    __asm__ volatile("msr msplim, %0" : : "r"((uintptr_t)_sstack + CRT_STACK_GUARD));
#endif
#if defined(CRT_CACHES) && !defined(CRT_NO_CACHES)
    crt_caches_enable();
#endif
    for (src = &_sidata, dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0u;
    }
    /* C++ global objects' constructors, before main (they did not run: microTVM
       journey). */
    for (crt_ctor *f = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (crt_ctor *f = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    crt_exit(main());
}

/* Find the exception frame (MSP or PSP, from EXC_RETURN bit 2) and report from C.
 * Written for ARMv6-M so that one version serves every core.
 *
 * A HardFault at a semihosting call (BKPT 0xAB) is a part running without a debugger:
 * the BKPT, which a debugger (or QEMU) would have served, escalated. The call is skipped
 * (the stacked pc moves past it) and the program goes on, so the example firmware, run
 * on the chip itself, ends in crt_exit's loop instead of a fault report and a lockup
 * (runtime review: netduinoplus2 and micro:bit without a probe). Only a pc inside the
 * code (from the vector table to the .data image) is read, so a fault at a wild pc
 * still gets its report. */
__attribute__((naked)) void crt_fault_entry(void)
{
    __asm__ volatile(
        "movs r0, #4\n\t"
        "mov r1, lr\n\t"
        "tst r0, r1\n\t"
        "beq 1f\n\t"
        "mrs r0, psp\n\t"
        "b 2f\n"
        "1:\n\t"
        "mrs r0, msp\n"
        "2:\n\t"
        "mrs r1, ipsr\n\t"
        "cmp r1, #3\n\t"
        "bne 5f\n\t"
        "ldr r1, [r0, #24]\n\t"
        "ldr r2, 6f\n\t"
        "cmp r1, r2\n\t"
        "blo 5f\n\t"
        "ldr r2, 7f\n\t"
        "cmp r1, r2\n\t"
        "bhs 5f\n\t"
        "ldrh r2, [r1]\n\t"
        "ldr r3, 8f\n\t"
        "cmp r2, r3\n\t"
        "bne 5f\n\t"
        "adds r1, #2\n\t"
        "str r1, [r0, #24]\n\t"
        "bx lr\n"
        "5:\n\t"
#if defined(CRT_HAS_MSPLIM)
        /* A stack overflow (STKOF) left SP at the limit: lift the limit first, so the
           report's own frames go on into the guard band below it (it ends the run). */
        "movs r1, #0\n\t"
        "msr msplim, r1\n\t"
#endif
        "bl crt_fault_report\n\t"
        ".align 2\n"
        "6:\n\t"
        ".word crt_vectors\n"
        "7:\n\t"
        ".word _sidata\n"
        "8:\n\t"
        ".word 0xbeab\n");
}

#if defined(CRT_HAS_CFSR)
static const char *const crt_cfsr_bits[32] = {
    "IACCVIOL", "DACCVIOL", 0, "MUNSTKERR", "MSTKERR", "MLSPERR", 0, "MMARVALID",
    "IBUSERR", "PRECISERR", "IMPRECISERR", "UNSTKERR", "STKERR", "LSPERR", 0, "BFARVALID",
    "UNDEFINSTR", "INVSTATE", "INVPC", "NOCP", "STKOF", 0, 0, 0,
    "UNALIGNED", "DIVBYZERO", 0, 0, 0, 0, 0, 0};
#endif

/* Prints "@mcugen fault <type> <detail> pc=.. lr=.. xpsr=.. cfsr=.. hfsr=.. addr=.."
 * and exits with code 3. */
void crt_fault_report(const uint32_t *frame)
{
    uint32_t ipsr;
    const char *type = "Exception";
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    ipsr &= 0x1ffu;
    switch (ipsr) {
    case 2: type = "NMI"; break;
    case 3: type = "HardFault"; break;
    case 4: type = "MemManage"; break;
    case 5: type = "BusFault"; break;
    case 6: type = "UsageFault"; break;
    case 7: type = "SecureFault"; break;
    default: break;
    }
    {
#if defined(CRT_HAS_CFSR)
        uint32_t cfsr = CRT_REG(0xE000ED28u);
        uint32_t hfsr = CRT_REG(0xE000ED2Cu);
        uint32_t mmfar = CRT_REG(0xE000ED34u);
        uint32_t bfar = CRT_REG(0xE000ED38u);
        int i, any = 0;
        if ((cfsr & 0xffu) != 0u) {
            type = "MemManage";
        } else if ((cfsr & 0xff00u) != 0u) {
            type = "BusFault";
        } else if ((cfsr & 0xffff0000u) != 0u) {
            type = "UsageFault";
        }
        crt_puts("\n@mcugen fault ");
        crt_puts(type);
        crt_puts(" ");
        for (i = 0; i < 32; i++) {
            if ((cfsr & (1u << i)) != 0u && crt_cfsr_bits[i] != 0 && i != 7 && i != 15) {
                crt_puts(any ? "," : "");
                crt_puts(crt_cfsr_bits[i]);
                any = 1;
            }
        }
        if (!any) {
            crt_puts((hfsr & (1u << 1)) != 0u ? "VECTTBL" : "-");
        }
#else
        crt_puts("\n@mcugen fault ");
        crt_puts(type);
        crt_puts(" -");
#endif
#if defined(CRT_HAS_CFSR)
        if ((cfsr & (1u << 20)) != 0u) {
            /* STKOF: the core pushed no frame below the limit; what lies there is not
               one (runtime review: it printed a pc of 0). */
            crt_puts(" pc=- lr=- xpsr=-");
        } else
#endif
        {
            crt_puts(" pc=");
            crt_put_hex32(frame[6]);
            crt_puts(" lr=");
            crt_put_hex32(frame[5]);
            crt_puts(" xpsr=");
            crt_put_hex32(frame[7]);
        }
#if defined(CRT_HAS_CFSR)
        crt_puts(" cfsr=");
        crt_put_hex32(cfsr);
        crt_puts(" hfsr=");
        crt_put_hex32(hfsr);
        crt_puts(" addr=");
        if ((cfsr & (1u << 7)) != 0u) {
            crt_put_hex32(mmfar);
        } else if ((cfsr & (1u << 15)) != 0u) {
            crt_put_hex32(bfar);
        } else {
            crt_puts("-");
        }
#else
        crt_puts(" cfsr=- hfsr=- addr=-");
#endif
        crt_puts("\n");
    }
    crt_exit(3);
}

/* The vector table: the initial stack pointer, then the handlers. Interrupts are not used,
 * so only the system exceptions are filled in. */
struct crt_vector_table {
    uint32_t *initial_sp;
    void (*handlers[15])(void);
};

__attribute__((section(".vectors"), used)) const struct crt_vector_table crt_vectors = {
    &_estack,
    {
        Reset_Handler,   /* Reset */
        crt_fault_entry, /* NMI */
        crt_fault_entry, /* HardFault */
        crt_fault_entry, /* MemManage */
        crt_fault_entry, /* BusFault */
        crt_fault_entry, /* UsageFault */
        crt_fault_entry, /* SecureFault (v8-M) */
        0, 0, 0,
        crt_fault_entry, /* SVCall */
        crt_fault_entry, /* DebugMonitor */
        0,
        crt_fault_entry, /* PendSV */
        crt_fault_entry, /* SysTick */
    },
};
