/* mcugen: a QEMU TCG plugin that counts executed guest instructions per mnemonic between
 * two entries of a marker function, for a cycle estimate. Built with the host gcc; it
 * declares the few plugin API entry points it uses itself (QEMU 7.2, plugin API version 1),
 * as Debian ships no qemu-plugin.h.
 *
 * At translation time each instruction gets a key from its disassembly
 * (qemu_plugin_insn_disas): the mnemonic, then
 *   {N}  the number of 32-bit words moved, for register lists (LDM, STM, PUSH, POP, VLDM,
 *        VSTM, VPUSH, VPOP; a d register counts 2) and for VLDR/VSTR of a d register;
 *   {r}  on VMOV, when a core register takes part;
 *   ^    on a single load or store right after a single load in the same block whose
 *        results it does not use for its address (the Cortex-M4 pipelines the pair), and on
 *        IT right after a 16-bit instruction (folded);
 *   ~    on a single load or store whose address uses a register the instruction before it
 *        (a data-processing one) wrote.
 * An inline counter per key is bumped by every executed instruction (exact, also under
 * -icount, where an I/O access re-executes only its memory part). A callback at the start
 * of every block tells whether the previous block's last instruction changed the flow
 * (the next block does not start right after it): that count is its "taken" count.
 *
 * Arguments: marker=0x<address>, and thumb=on for Thumb code (M profile).
 * Each entry of the marker (an instruction address, marker=0x...) closes or opens a
 * window; at the end of window v (entries 2v and 2v+1) it prints one line:
 *   @mcugen mix <v> total=<n> <key>=<count>[/<taken>] ...
 * with the counts executed inside the window, from the marker's first instruction on the
 * opening entry up to, not including, it on the closing one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, udata_cb_t cb, enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn, enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_KEYS 2048
#define KEY_LEN 32

static char keys[MAX_KEYS][KEY_LEN];
static int nkeys;
static uint64_t count[MAX_KEYS], taken[MAX_KEYS], total;
static uint64_t count0[MAX_KEYS], taken0[MAX_KEYS], total0;
static uint64_t marker;
static uint64_t marks;
static int thumb; /* thumb=on: Thumb code (the size of an instruction comes from its first halfword) */

/* What the block callback needs to know about a translated block. */
struct block {
    uint64_t start, next; /* first address, address after the last instruction */
    uint64_t n;           /* instructions */
    int last;             /* key of the last instruction */
};
static const struct block *prev;
static uint64_t prev_total;

static void on_block(unsigned int vcpu_index, void *userdata)
{
    const struct block *b = userdata;
    (void)vcpu_index;
    /* Only a block that ran to its end had its flow decided by its last instruction. */
    if (prev != 0 && total - prev_total == prev->n && b->start != prev->next) {
        taken[prev->last]++;
    }
    prev = b;
    prev_total = total;
}

static void emit(const char *s, char *line, size_t *len, size_t cap)
{
    size_t n = strlen(s);
    if (*len + n + 2 > cap) {
        line[*len] = '\0';
        qemu_plugin_outs(line);
        *len = 0;
    }
    memcpy(line + *len, s, n);
    *len += n;
}

static void on_marker(unsigned int vcpu_index, void *userdata)
{
    char line[4096], item[96];
    size_t len = 0;
    int k;
    (void)vcpu_index;
    (void)userdata;
    if (marks % 2 == 0) {
        memcpy(count0, count, sizeof count);
        memcpy(taken0, taken, sizeof taken);
        total0 = total;
    } else {
        /* One logical line, written in pieces that fit the buffer. */
        snprintf(item, sizeof item, "@mcugen mix %llu total=%llu", (unsigned long long)(marks / 2), (unsigned long long)(total - total0));
        emit(item, line, &len, sizeof line);
        for (k = 0; k < nkeys; k++) {
            uint64_t c = count[k] - count0[k], t = taken[k] - taken0[k];
            if (c == 0) {
                continue;
            }
            if (t != 0) {
                snprintf(item, sizeof item, " %s=%llu/%llu", keys[k], (unsigned long long)c, (unsigned long long)t);
            } else {
                snprintf(item, sizeof item, " %s=%llu", keys[k], (unsigned long long)c);
            }
            emit(item, line, &len, sizeof line);
        }
        emit("\n", line, &len, sizeof line);
        line[len] = '\0';
        qemu_plugin_outs(line);
    }
    marks++;
}

static int key_index(const char *key)
{
    int k;
    for (k = 0; k < nkeys; k++) {
        if (strcmp(keys[k], key) == 0) {
            return k;
        }
    }
    if (nkeys == MAX_KEYS) {
        return MAX_KEYS - 1; /* the last slot collects the rest, named "other" */
    }
    snprintf(keys[nkeys], KEY_LEN, "%s", nkeys == MAX_KEYS - 1 ? "other" : key);
    return nkeys++;
}

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* A decoded view of one disassembled instruction. */
struct insn {
    char mnem[KEY_LEN];
    char dest[8];  /* the register it writes ("" when none is known) */
    char wback[8]; /* the base register it writes back ("" when none) */
    char addr[64]; /* the text between [ and ] */
    int single_load, single_mem, size;
};

static int is_core_reg(const char *t)
{
    static const char *const named[] = {"sb", "sl", "fp", "ip", "sp", "lr", "pc"};
    size_t i;
    if (t[0] == 'r' && t[1] >= '0' && t[1] <= '9') {
        return 1;
    }
    for (i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (strcmp(t, named[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Copies the register-name token at s (letters and digits) into out. */
static void token(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    while (*s == ' ' || *s == '{') {
        s++;
    }
    while (n + 1 < cap && ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) {
        out[n++] = *s++;
    }
    out[n] = '\0';
}

/* Does the address text use register r? */
static int uses(const char *addr, const char *r)
{
    const char *p = addr;
    size_t n = strlen(r);
    if (n == 0) {
        return 0;
    }
    while ((p = strstr(p, r)) != 0) {
        int before = p == addr || p[-1] == ' ' || p[-1] == ',' || p[-1] == '[';
        int after = p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == ']';
        if (before && after) {
            return 1;
        }
        p += n;
    }
    return 0;
}

/* Words moved by a register list "{r4, r5, d8-d9}". */
static int list_words(const char *s)
{
    int words = 0;
    const char *end = strchr(s, '}');
    while (s != 0 && end != 0 && s < end) {
        char a[8], b[8];
        const char *dash, *comma;
        int w = 1;
        s++;
        token(s, a, sizeof a);
        if (a[0] == 'd') {
            w = 2;
        }
        comma = strchr(s, ',');
        if (comma == 0 || comma > end) {
            comma = end;
        }
        dash = strchr(s, '-');
        if (dash != 0 && dash < comma) {
            token(dash + 1, b, sizeof b);
            if (a[1] != '\0' && b[1] != '\0') {
                words += w * (atoi(b + 1) - atoi(a + 1) + 1);
            }
        } else if (a[0] != '\0') {
            words += w;
        }
        s = comma;
        if (s == end) {
            break;
        }
    }
    return words;
}

static void decode(const char *dis, size_t size, struct insn *in, char *key)
{
    const char *ops, *lb, *rb, *lc;
    char first[8];
    size_t n = 0;
    memset(in, 0, sizeof *in);
    in->size = (int)size;
    while (dis[n] != '\0' && dis[n] != ' ' && dis[n] != '\t' && n + 1 < sizeof in->mnem) {
        in->mnem[n] = dis[n];
        n++;
    }
    in->mnem[n] = '\0';
    ops = dis + n;
    while (*ops == ' ' || *ops == '\t') {
        ops++;
    }
    token(ops, first, sizeof first);
    lb = strchr(ops, '[');
    rb = lb != 0 ? strchr(lb, ']') : 0;
    if (lb != 0 && rb != 0 && (size_t)(rb - lb - 1) < sizeof in->addr) {
        memcpy(in->addr, lb + 1, (size_t)(rb - lb - 1));
        in->addr[rb - lb - 1] = '\0';
        /* Writeback: "[rn, #4]!" or post-indexed "[rn], #4". */
        if (rb[1] == '!' || rb[1] == ',') {
            token(in->addr, in->wback, sizeof in->wback);
        }
    }
    in->single_mem = lb != 0 && (starts(in->mnem, "ldr") || starts(in->mnem, "str")) && !starts(in->mnem, "ldrd") && !starts(in->mnem, "strd");
    in->single_load = in->single_mem && starts(in->mnem, "ldr") && strcmp(first, "pc") != 0;
    /* The register an instruction writes: its first operand, except for stores, compares,
     * branches and others that write none. */
    if (!starts(in->mnem, "str") && !starts(in->mnem, "stm") && !starts(in->mnem, "push") && !starts(in->mnem, "cmp") && !starts(in->mnem, "cmn") && !starts(in->mnem, "tst") && !starts(in->mnem, "teq") && !starts(in->mnem, "b") && !starts(in->mnem, "cb") && !starts(in->mnem, "it") && in->mnem[0] != 'v' && is_core_reg(first)) {
        memcpy(in->dest, first, sizeof in->dest);
    }
    snprintf(key, KEY_LEN, "%s", in->mnem);
    lc = strchr(ops, '{');
    if (lc != 0) {
        snprintf(key + strlen(key), KEY_LEN - strlen(key), "{%d}", list_words(lc));
    } else if ((starts(in->mnem, "vldr") || starts(in->mnem, "vstr")) && first[0] == 'd') {
        snprintf(key + strlen(key), KEY_LEN - strlen(key), "{2}");
    } else if (starts(in->mnem, "vmov")) {
        const char *p = ops;
        while (p != 0 && *p != '\0') {
            char t[8];
            token(p, t, sizeof t);
            if (is_core_reg(t)) {
                snprintf(key + strlen(key), KEY_LEN - strlen(key), "{r}");
                break;
            }
            p = strchr(p, ',');
            if (p != 0) {
                p++;
            }
        }
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    struct block *b = calloc(1, sizeof *b);
    struct insn cur, last;
    int have_last = 0;
    (void)id;
    if (b == 0 || n == 0) {
        free(b);
        return;
    }
    b->start = qemu_plugin_tb_vaddr(tb);
    b->n = n;
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        char *dis = qemu_plugin_insn_disas(insn);
        char key[KEY_LEN];
        size_t size = qemu_plugin_insn_size(insn);
        /* QEMU 7.2 appends to the last instruction before a page end the halfword it peeks
         * at to see whether the next one crosses the page: take a Thumb instruction's size
         * from its encoding instead. */
        if (thumb && size >= 2) {
            const uint8_t *d = qemu_plugin_insn_data(insn);
            size = (d[1] & 0xf8) >= 0xe8 ? 4 : 2;
        }
        uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
        int k;
        decode(dis != 0 ? dis : "?", size, &cur, key);
        free(dis);
        if (have_last && cur.single_mem) {
            int dep = uses(cur.addr, last.dest) || uses(cur.addr, last.wback);
            if (last.single_load && !dep) {
                snprintf(key + strlen(key), KEY_LEN - strlen(key), "^");
            } else if (!last.single_mem && dep) {
                snprintf(key + strlen(key), KEY_LEN - strlen(key), "~");
            }
        } else if (have_last && starts(cur.mnem, "it") && last.size == 2) {
            snprintf(key + strlen(key), KEY_LEN - strlen(key), "^");
        }
        k = key_index(key);
        if (vaddr == marker) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, 0);
        }
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &count[k], 1);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &total, 1);
        b->last = k;
        b->next = vaddr + size;
        last = cur;
        have_last = 1;
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv)
{
    int i;
    (void)info;
    for (i = 0; i < argc; i++) {
        if (strncmp(argv[i], "marker=", 7) == 0) {
            marker = strtoull(argv[i] + 7, 0, 0);
        } else if (strcmp(argv[i], "thumb=on") == 0) {
            thumb = 1;
        }
    }
    if (marker == 0) {
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    return 0;
}
