/*
 * fdt.c — read the flattened device tree QEMU leaves at DTB_PA into struct fdt_info.
 *
 * What it does: checks the header, the memory reservation map and every token of the
 * structure block against the bounds of the blob, then looks up the few nodes zerotick needs,
 * in this order (the first problem found is the one reported): /psci (method hvc or smc),
 * memory (device_type "memory", every non-empty reg entry), cpus (children of /cpus with
 * device_type "cpu"; reg[0] is the MPIDR; duplicates refused), the arm,gic-v3 node (reg[0]
 * distributor, reg[1..#redistributor-regions] redistributors), the arm,pl011 UART (the one
 * /chosen/stdout-path names, directly or through /aliases, if it is a pl011; otherwise the
 * first), the arm,armv8-timer PPIs, the optional /chosen/bootargs, and the optional
 * virtio,mmio transports (sorted by address; a malformed one is skipped and counted, never
 * fatal).  Nodes with a status other than "okay"/"ok" are skipped, except cpus.  On failure
 * it returns -EINVAL (malformed or unsupported) or -ENOENT (something required is missing),
 * zeroes *out and writes one line for the boot console naming the problem; blob offsets in it
 * count from the blob's start.
 *
 * What it does not do: no address translation through "ranges" — memory and devices are
 * taken from the root's direct children, where QEMU virt puts them, so their reg is in the
 * root's cells; no phandle or interrupt-parent following — "interrupts" are read as the
 * GICv3's 3-cell <type number flags>, which find_gic() checks; the memory reservation map is
 * checked but not reported (QEMU's is empty); no allocation; nothing is written to the blob.
 *
 * Invariants:
 * - check_struct() walks the whole structure block once before any lookup; after it every
 *   token, node name and property lies inside its block and every name is NUL-terminated
 *   inside its block.  The lookup helpers still go through tok_span(), which re-checks the
 *   bounds, so even a broken invariant cannot make them read outside the blob.
 * - Every walk moves forward by at least 4 bytes per token within a bounded block, so every
 *   loop ends.  Nesting is limited to FDT_MAX_DEPTH; nothing here recurses.
 * - The blob must be 8-byte aligned and every 32-bit value is read at a 4-aligned offset,
 *   byte by byte, big-endian: nothing depends on how the compiler combines those loads.
 * - No static tables of pointers and no calls to memset/memcpy: the object needs no
 *   relocation fix-ups and no library, and runs wherever it is mapped.
 *
 * Who may call it: anyone, in any context, with any locks held: fdt_parse() is a pure function
 * of its arguments (no globals, no locks, well under 1 KiB of stack).  The kernel calls it once
 * on the boot CPU (smp.c); tests/unit/test_fdt.c runs it on the host over QEMU's own dumps and
 * corrupted copies of them under ASan/UBSan.
 *
 * Size: about 1200 lines, past the house ~800, because the Makefile builds exactly this one
 * arch file for the host tests.  If it grows, split the lookups (find_*) into their own file
 * and add that to HOST_LIB_SRCS.
 *
 * Spec: Devicetree Specification v0.4, chapter 5 (flattened format: 5.2 header, 5.3
 * reservation map, 5.4 structure block, 5.5 strings block), 2.3 (standard properties:
 * compatible, status, #address-cells, #size-cells, reg), 3.4 (memory), 3.6 (/chosen),
 * 3.7-3.8 (/cpus); the arm,gic-v3, arm,armv8-timer and arm,psci bindings
 * (Linux Documentation/devicetree/bindings); GIC INTIDs per IHI 0069 (SPI 32+n, PPI 16+n).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fdt.h"
#include "kernel/lib.h"

/* Error numbers, the Linux values (include/uapi/zt_errno.h), returned negated. */
#define FDT_EINVAL 22 /* the blob is malformed or describes something unsupported */
#define FDT_ENOENT 2  /* a required node or property is missing */

/* Structure block tokens (spec 5.4.1). */
#define FDT_BEGIN_NODE 0x1
#define FDT_END_NODE   0x2
#define FDT_PROP       0x3
#define FDT_NOP        0x4
#define FDT_END        0x9

#define FDT_HEADER_SIZE  40 /* ten 32-bit fields, version 17 */
#define FDT_VERSION_MIN  16 /* oldest layout read here (size_dt_struct came with 17) */
#define FDT_VERSION_READ 17 /* newest layout this parser knows */
#define FDT_MAX_DEPTH    16 /* QEMU virt nests 6 deep (/cpus/cpu-map/socket0/cluster0/core0) */
#define FDT_RSV_ENTRY    16 /* memory reservation entry: 64-bit address, 64-bit size */
#define GIC_IRQ_CELLS    3  /* <type number flags> */
#define GIC_SPI_BASE     32
#define GIC_SPI_COUNT    988 /* INTIDs 32..1019 */
#define GIC_PPI_BASE     16
#define GIC_PPI_COUNT    16
#define TIMER_IRQS       4

/* Header fields, in order (spec 5.2), as 32-bit word indexes. */
enum fdt_hdr {
    HDR_MAGIC,
    HDR_TOTALSIZE,
    HDR_OFF_STRUCT,
    HDR_OFF_STRINGS,
    HDR_OFF_RSVMAP,
    HDR_VERSION,
    HDR_LAST_COMP,
    HDR_BOOT_CPUID,
    HDR_SIZE_STRINGS,
    HDR_SIZE_STRUCT,
};

/* One line of error text, always NUL-terminated, silently truncated at cap - 1 characters. */

/* The blob once its header is checked: both blocks lie inside [base, base + totalsize). */
struct fdt {
    const uint8_t *base;
    uint32_t totalsize;
    uint32_t struct_off;
    uint32_t struct_size;
    uint32_t strings_off;
    uint32_t strings_size;
};

/* A property value inside the blob. */
struct prop {
    const uint8_t *val;
    uint32_t len;
};

/* A node's #address-cells and #size-cells, which lay out its children's reg. */
struct cells {
    uint32_t addr;
    uint32_t size;
};

/* Everything the lookups share.  Nodes are named by the offset of their FDT_BEGIN_NODE token
 * from the start of the structure block. */
#define MAX_ROOT_KIDS 256

struct ctx {
    struct fdt f;
    struct tbuf m;
    uint32_t root;
    struct cells root_cells;
    uint32_t nkids;               /* the root's children, found once (find_all): every */
    uint32_t kids[MAX_ROOT_KIDS]; /* lookup below scans this instead of the whole tree */
    bool kids_complete;           /* false if the root has more children than kids holds */
};

/* Why tok_span() refused a token. */
enum tok_fault {
    TOK_OK = 0,
    TOK_CUT,           /* no room for a 4-byte token */
    TOK_NAME_CUT,      /* node name not NUL-terminated (and padded) inside the block */
    TOK_PROP_CUT,      /* property header or value runs past the block */
    TOK_PROP_NAMEOFF,  /* property name offset outside the strings block */
    TOK_PROP_NAME_CUT, /* property name not NUL-terminated inside the strings block */
    TOK_UNKNOWN,       /* not one of the five tokens */
};

/* ------------------------------------------------------------------ small helpers */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint64_t align4(uint64_t x)
{
    return (x + 3) & ~(uint64_t)3;
}

/* Length of the string at p, or max if there is no NUL among its first max bytes. */
static uint32_t str_nlen(const uint8_t *p, uint32_t max)
{
    uint32_t n = 0;

    while (n < max && p[n] != '\0') {
        n++;
    }
    return n;
}

/* Both strings are NUL-terminated; a is the one from the blob. */
static bool str_eq_n(const char *a, const char *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return a[n] == '\0';
}

static uint32_t cstr_len(const char *s)
{
    uint32_t n = 0;

    while (s[n] != '\0') {
        n++;
    }
    return n;
}

/* ------------------------------------------------------------------ error text */

/* Text from the blob: up to a NUL, at most n (and 64) bytes, unprintable bytes shown as "?". */
static void msg_text(struct tbuf *m, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n && i < 64 && p[i] != '\0'; i++) {
        tbuf_char(m, p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?');
    }
}

/* "0x" and v in hex, at least min_digits digits. */
static void msg_hex(struct tbuf *m, uint64_t v, int min_digits)
{
    tbuf_str(m, "0x");
    tbuf_hex(m, v, min_digits);
}

/* fmt with each %d, %x or %X replaced by the next of a, b: in decimal, in hex ("0x1f"), in
 * hex with 8 digits ("0x0000001f"). */
static void msg_fmt(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b)
{
    for (; *fmt != '\0'; fmt++) {
        if (fmt[0] != '%' || (fmt[1] != 'd' && fmt[1] != 'x' && fmt[1] != 'X')) {
            tbuf_char(m, *fmt);
            continue;
        }
        fmt++;
        if (*fmt == 'd') {
            tbuf_dec(m, a);
        } else {
            msg_hex(m, a, *fmt == 'X' ? 8 : 1);
        }
        a = b;
    }
}

/* msg_fmt() for a malformed or unsupported blob. */
static int bad(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b)
{
    msg_fmt(m, fmt, a, b);
    return -FDT_EINVAL;
}

/* "device tree malformed: <what> at offset 0x<off>[ <why>]", off from the start of the blob. */
static int bad_at(struct tbuf *m, const char *what, uint32_t off, const char *why)
{
    tbuf_str(m, "device tree malformed: ");
    tbuf_str(m, what);
    tbuf_str(m, " at offset ");
    msg_hex(m, off, 1);
    if (*why != '\0') {
        tbuf_char(m, ' ');
        tbuf_str(m, why);
    }
    return -FDT_EINVAL;
}

/* "device tree: <what>" for a required node or property that is not there. */
static int missing(struct tbuf *m, const char *what)
{
    tbuf_str(m, "device tree: ");
    tbuf_str(m, what);
    return -FDT_ENOENT;
}

/* ------------------------------------------------------------------ header */

static uint32_t hdr(const uint8_t *base, enum fdt_hdr field)
{
    return be32(base + 4 * field);
}

static bool block_fits(uint32_t off, uint32_t size, uint32_t total)
{
    return off <= total && size <= total - off;
}

/* Is there a blob with the FDT magic, whose totalsize fits in the max_len bytes we may read? */
static int check_header(const uint8_t *base, size_t max_len, struct tbuf *m)
{
    if (base == NULL) {
        return bad(m, "no device tree: NULL blob pointer", 0, 0);
    }
    if (max_len >= 4 && hdr(base, HDR_MAGIC) != FDT_MAGIC) {
        return bad(m, "no device tree: bad magic %X at the start of RAM", hdr(base, HDR_MAGIC), 0);
    }
    if (((uintptr_t)base & 7) != 0) {
        return bad(m, "device tree malformed: blob address %x is not 8-byte aligned",
                   (uintptr_t)base, 0);
    }
    if (max_len < FDT_HEADER_SIZE) {
        return bad(m, "device tree truncated: %d bytes available, less than the 40-byte header",
                   max_len, 0);
    }
    if (hdr(base, HDR_TOTALSIZE) > max_len) {
        return bad(m, "device tree truncated: totalsize %d > %d bytes available",
                   hdr(base, HDR_TOTALSIZE), max_len);
    }
    return 0;
}

/* A totalsize that holds the header, and a layout version this parser reads (16 or 17). */
static int check_version(const uint8_t *base, struct tbuf *m)
{
    uint32_t version = hdr(base, HDR_VERSION);
    uint32_t last_comp = hdr(base, HDR_LAST_COMP);

    if (hdr(base, HDR_TOTALSIZE) < FDT_HEADER_SIZE) {
        return bad(m, "device tree malformed: totalsize %d is smaller than the 40-byte header",
                   hdr(base, HDR_TOTALSIZE), 0);
    }
    if (version < FDT_VERSION_MIN || last_comp > FDT_VERSION_READ) {
        return bad(m,
                   "device tree: unsupported version %d (last compatible %d); this parser "
                   "reads versions 16 and 17",
                   version, last_comp);
    }
    return 0;
}

/* Reports a block that does not fit; what is "structure block" etc. */
static int bad_block(struct tbuf *m, const char *what, uint32_t off, uint32_t size, uint32_t total)
{
    tbuf_str(m, "device tree malformed: ");
    tbuf_str(m, what);
    msg_fmt(m, " at offset %x size %x", off, size);
    return bad(m, " is misaligned or lies outside totalsize %x", total, 0);
}

/* The structure and strings blocks lie inside totalsize, the structure block 4-aligned. */
static int check_blocks(const uint8_t *base, struct fdt *f, struct tbuf *m)
{
    f->base = base;
    f->totalsize = hdr(base, HDR_TOTALSIZE);
    f->struct_off = hdr(base, HDR_OFF_STRUCT);
    f->strings_off = hdr(base, HDR_OFF_STRINGS);
    f->strings_size = hdr(base, HDR_SIZE_STRINGS);
    /* Version 16 has no size_dt_struct: the block may run to the end of the blob. */
    if (hdr(base, HDR_VERSION) >= 17) {
        f->struct_size = hdr(base, HDR_SIZE_STRUCT);
    } else {
        f->struct_size = f->struct_off <= f->totalsize ? f->totalsize - f->struct_off : 0;
    }
    if (!block_fits(f->struct_off, f->struct_size, f->totalsize) || (f->struct_off & 3) != 0) {
        return bad_block(m, "structure block", f->struct_off, f->struct_size, f->totalsize);
    }
    if (!block_fits(f->strings_off, f->strings_size, f->totalsize)) {
        return bad_block(m, "strings block", f->strings_off, f->strings_size, f->totalsize);
    }
    return 0;
}

/* The memory reservation map: 8-aligned 16-byte entries, ended by an all-zero one. */
static int check_rsvmap(const struct fdt *f, struct tbuf *m)
{
    uint32_t start = hdr(f->base, HDR_OFF_RSVMAP);
    uint32_t off = start;

    if (start > f->totalsize || (start & 7) != 0) {
        return bad_block(m, "memory reservation map", start, FDT_RSV_ENTRY, f->totalsize);
    }
    for (;;) {
        if (f->totalsize - off < FDT_RSV_ENTRY) {
            return bad_at(m, "memory reservation map", start, "has no terminating entry");
        }
        const uint8_t *e = f->base + off;

        if ((be32(e) | be32(e + 4) | be32(e + 8) | be32(e + 12)) == 0) {
            return 0;
        }
        off += FDT_RSV_ENTRY;
    }
}

/* ------------------------------------------------------------------ tokens */

static enum tok_fault span_name(const struct fdt *f, uint32_t off, uint32_t *next)
{
    const uint8_t *name = f->base + f->struct_off + off + 4;
    uint32_t room = f->struct_size - off - 4;
    uint32_t n = str_nlen(name, room);

    /* Also catches n == room (no NUL): the name would end past the block. */
    if (align4((uint64_t)off + 4 + n + 1) > f->struct_size) {
        return TOK_NAME_CUT;
    }
    *next = (uint32_t)align4((uint64_t)off + 4 + n + 1);
    return TOK_OK;
}

static enum tok_fault span_prop(const struct fdt *f, uint32_t off, uint32_t *next)
{
    const uint8_t *p = f->base + f->struct_off + off;
    uint32_t room = f->struct_size - off - 4;
    uint32_t len, nameoff;

    if (room < 8) {
        return TOK_PROP_CUT;
    }
    len = be32(p + 4);
    nameoff = be32(p + 8);
    if (align4((uint64_t)off + 12 + len) > f->struct_size) {
        return TOK_PROP_CUT;
    }
    if (nameoff >= f->strings_size) {
        return TOK_PROP_NAMEOFF;
    }
    if (str_nlen(f->base + f->strings_off + nameoff, f->strings_size - nameoff) ==
        f->strings_size - nameoff) {
        return TOK_PROP_NAME_CUT;
    }
    *next = (uint32_t)align4((uint64_t)off + 12 + len);
    return TOK_OK;
}

/* The token at off (from the start of the structure block) and the offset just past it,
 * checking that all of it lies inside the block. */
static enum tok_fault tok_span(const struct fdt *f, uint32_t off, uint32_t *tok, uint32_t *next)
{
    if (off > f->struct_size || f->struct_size - off < 4) {
        return TOK_CUT;
    }
    *tok = be32(f->base + f->struct_off + off);
    switch (*tok) {
    case FDT_BEGIN_NODE:
        return span_name(f, off, next);
    case FDT_PROP:
        return span_prop(f, off, next);
    case FDT_END_NODE:
    case FDT_NOP:
    case FDT_END:
        *next = off + 4;
        return TOK_OK;
    default:
        return TOK_UNKNOWN;
    }
}

/* For walks over a checked block: a token that does not fit reads as FDT_END. */
static uint32_t tok_next(const struct fdt *f, uint32_t off, uint32_t *tok)
{
    uint32_t next = f->struct_size;

    if (tok_span(f, off, tok, &next) != TOK_OK) {
        *tok = FDT_END;
        return f->struct_size;
    }
    return next;
}

/* ------------------------------------------------------------------ the structure walk */

struct nesting {
    uint32_t depth;      /* open nodes; the root is depth 1 */
    uint32_t child_mask; /* bit d: the open node at depth d already has a subnode */
    bool have_root;
};

static int tok_fault_msg(const struct fdt *f, uint32_t off, enum tok_fault fault, struct tbuf *m)
{
    uint32_t at = f->struct_off + off;

    switch (fault) {
    case TOK_CUT:
        return bad_at(m, "structure block", f->struct_off, "ends without an FDT_END token");
    case TOK_NAME_CUT:
        return bad_at(m, "node name", at + 4, "runs past the structure block");
    case TOK_PROP_CUT:
        return bad_at(m, "property", at, "runs past the structure block");
    case TOK_PROP_NAMEOFF:
        return bad_at(m, "property", at, "has a name offset past the strings block");
    case TOK_PROP_NAME_CUT:
        return bad_at(m, "property", at, "has a name that runs past the strings block");
    default:
        return bad(m, "device tree malformed: unknown token %X at offset %x", be32(f->base + at),
                   at);
    }
}

/* Nodes open and close in pairs, one root, properties only before a node's subnodes. */
static int check_nesting(struct nesting *n, uint32_t tok, uint32_t at, struct tbuf *m)
{
    switch (tok) {
    case FDT_BEGIN_NODE:
        if (n->depth == 0 && n->have_root) {
            return bad_at(m, "second root node", at, "");
        }
        _Static_assert(FDT_MAX_DEPTH == 16, "the message below names the limit");
        if (n->depth >= FDT_MAX_DEPTH) {
            return bad_at(m, "node", at, "is nested more than 16 levels deep");
        }
        n->child_mask |= 1u << n->depth;
        n->depth++;
        n->child_mask &= ~(1u << n->depth);
        n->have_root = true;
        return 0;
    case FDT_END_NODE:
        if (n->depth == 0) {
            return bad_at(m, "FDT_END_NODE", at, "closes no open node");
        }
        n->depth--;
        return 0;
    case FDT_PROP:
        if (n->depth == 0) {
            return bad_at(m, "property", at, "is outside any node");
        }
        if ((n->child_mask & (1u << n->depth)) != 0) {
            return bad_at(m, "property", at, "follows a subnode");
        }
        return 0;
    default:
        return 0;
    }
}

static int check_end(const struct nesting *n, uint32_t at, struct tbuf *m)
{
    if (!n->have_root) {
        return bad_at(m, "FDT_END", at, "comes before any node");
    }
    if (n->depth != 0) {
        return bad(m, "device tree malformed: FDT_END at offset %x with %d node(s) still open", at,
                   n->depth);
    }
    return 0;
}

/* Walk every token once, checking bounds and nesting. */
static int check_struct(const struct fdt *f, struct tbuf *m)
{
    struct nesting n = {0, 0, false};
    uint32_t off = 0;

    for (;;) {
        uint32_t tok = 0;
        uint32_t next = 0;
        enum tok_fault fault = tok_span(f, off, &tok, &next);
        int err;

        if (fault != TOK_OK) {
            return tok_fault_msg(f, off, fault, m);
        }
        if (tok == FDT_END) {
            return check_end(&n, f->struct_off + off, m);
        }
        err = check_nesting(&n, tok, f->struct_off + off, m);
        if (err != 0) {
            return err;
        }
        off = next;
    }
}

/* ------------------------------------------------------------------ nodes and properties */

static const char *node_name(const struct fdt *f, uint32_t node)
{
    return (const char *)f->base + f->struct_off + node + 4;
}

/* Offset of the first token after the node's FDT_BEGIN_NODE and name. */
static uint32_t node_body(const struct fdt *f, uint32_t node)
{
    uint32_t tok;

    return tok_next(f, node, &tok);
}

/* Offset just past the FDT_END_NODE that closes node. */
static uint32_t node_skip(const struct fdt *f, uint32_t node)
{
    uint32_t depth = 0;
    uint32_t off = node;
    uint32_t tok;

    do {
        off = tok_next(f, off, &tok);
        if (tok == FDT_BEGIN_NODE) {
            depth++;
        } else if (tok == FDT_END_NODE) {
            depth--;
        }
    } while (depth > 0 && tok != FDT_END);
    return off;
}

/* The next subnode at *it (start with *it = node_body(parent)); false after the last. */
static bool child_next(const struct fdt *f, uint32_t *it, uint32_t *child)
{
    for (;;) {
        uint32_t tok;
        uint32_t next = tok_next(f, *it, &tok);

        if (tok == FDT_BEGIN_NODE) {
            *child = *it;
            *it = node_skip(f, *it);
            return true;
        }
        if (tok != FDT_PROP && tok != FDT_NOP) {
            return false;
        }
        *it = next;
    }
}

/* The property of node whose name is the n characters at name. */
static bool prop_find_n(const struct fdt *f, uint32_t node, const char *name, uint32_t n,
                        struct prop *p)
{
    uint32_t off = node_body(f, node);

    for (;;) {
        uint32_t tok;
        uint32_t next = tok_next(f, off, &tok);
        const uint8_t *t = f->base + f->struct_off + off;

        if (tok == FDT_PROP &&
            str_eq_n((const char *)f->base + f->strings_off + be32(t + 8), name, n)) {
            p->val = t + 12;
            p->len = be32(t + 4);
            return true;
        }
        if (tok != FDT_PROP && tok != FDT_NOP) {
            return false;
        }
        off = next;
    }
}

static bool prop_find(const struct fdt *f, uint32_t node, const char *name, struct prop *p)
{
    return prop_find_n(f, node, name, cstr_len(name), p);
}

/* Does the string list in p (NUL-separated strings) hold s as one whole entry? */
static bool strlist_has(const struct prop *p, const char *s)
{
    uint32_t n = cstr_len(s);
    uint32_t at = 0;

    while (at < p->len) {
        uint32_t len = str_nlen(p->val + at, p->len - at);

        if (len == n && at + len < p->len && str_eq_n((const char *)p->val + at, s, n)) {
            return true;
        }
        at += len + 1;
    }
    return false;
}

/* Does node have property name whose first string is s? */
static bool prop_is(const struct fdt *f, uint32_t node, const char *name, const char *s)
{
    struct prop p;
    uint32_t n = cstr_len(s);

    return prop_find(f, node, name, &p) && str_nlen(p.val, p.len) == n && n < p.len &&
           str_eq_n((const char *)p.val, s, n);
}

static bool is_compatible(const struct fdt *f, uint32_t node, const char *compat)
{
    struct prop p;

    return prop_find(f, node, "compatible", &p) && strlist_has(&p, compat);
}

/* status absent, "okay" or "ok" (spec 2.3.4). */
static bool is_enabled(const struct fdt *f, uint32_t node)
{
    struct prop p;

    return !prop_find(f, node, "status", &p) || prop_is(f, node, "status", "okay") ||
           prop_is(f, node, "status", "ok");
}

/* Does node name match the n characters at want?  "pl011" matches "pl011@9000000" too. */
static bool name_matches(const char *name, const char *want, uint32_t n)
{
    bool want_has_unit = false;

    for (uint32_t i = 0; i < n; i++) {
        if (name[i] != want[i]) {
            return false;
        }
        want_has_unit = want_has_unit || want[i] == '@';
    }
    return name[n] == '\0' || (name[n] == '@' && !want_has_unit);
}

/* Record the root's children once (each later lookup would otherwise walk the tree). */
static void index_root(struct ctx *x)
{
    uint32_t it = node_body(&x->f, x->root), node;

    x->nkids = 0;
    x->kids_complete = true;
    while (child_next(&x->f, &it, &node)) {
        if (x->nkids == MAX_ROOT_KIDS) {
            x->kids_complete = false;
            return;
        }
        x->kids[x->nkids++] = node;
    }
}

/* The i-th child of the root, from the index or, past its end, by walking. */
static bool root_kid(const struct ctx *x, uint32_t *it, uint32_t i, uint32_t *node)
{
    if (i < x->nkids) {
        *node = x->kids[i];
        return true;
    }
    if (x->kids_complete) {
        return false;
    }
    if (i == x->nkids) {
        *it = node_skip(&x->f, x->kids[x->nkids - 1]);
    }
    return child_next(&x->f, it, node);
}

/* The root's child whose name matches the n characters at want. */
static bool root_child(const struct ctx *x, const char *want, uint32_t n, uint32_t *node)
{
    uint32_t it = 0;

    for (uint32_t i = 0; root_kid(x, &it, i, node); i++) {
        if (name_matches(node_name(&x->f, *node), want, n)) {
            return true;
        }
    }
    return false;
}

/* The first enabled child of the root compatible with compat. */
static bool root_child_compatible(const struct ctx *x, const char *compat, uint32_t *node)
{
    uint32_t it = 0;

    for (uint32_t i = 0; root_kid(x, &it, i, node); i++) {
        if (is_compatible(&x->f, *node, compat) && is_enabled(&x->f, *node)) {
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ cells, reg, interrupts */

/* "device tree: <parent><name> " — the start of a message about one node. */
static void msg_node(struct ctx *x, const char *parent, uint32_t node)
{
    tbuf_str(&x->m, "device tree: ");
    tbuf_str(&x->m, parent);
    msg_text(&x->m, (const uint8_t *)node_name(&x->f, node), 64);
    tbuf_char(&x->m, ' ');
}

/* "device tree: <parent><name> <fmt>" for a node with a bad or unsupported value. */
static int bad_node(struct ctx *x, const char *parent, uint32_t node, const char *fmt, uint64_t a,
                    uint64_t b)
{
    msg_node(x, parent, node);
    return bad(&x->m, fmt, a, b);
}

/* A single-cell property, or def when it is absent. */
static int prop_u32(struct ctx *x, const char *parent, uint32_t node, const char *name,
                    uint32_t def, uint32_t *val)
{
    struct prop p;

    *val = def;
    if (!prop_find(&x->f, node, name, &p)) {
        return 0;
    }
    if (p.len != 4) {
        msg_node(x, parent, node);
        tbuf_str(&x->m, name);
        return bad(&x->m, " is %d bytes, not one 32-bit cell", p.len, 0);
    }
    *val = be32(p.val);
    return 0;
}

/* #address-cells (default 2) and #size-cells (default 1) of node, for its children. */
static int node_cells(struct ctx *x, const char *parent, uint32_t node, struct cells *c)
{
    int err = prop_u32(x, parent, node, "#address-cells", 2, &c->addr);

    if (err == 0) {
        err = prop_u32(x, parent, node, "#size-cells", 1, &c->size);
    }
    return err;
}

/* node's reg, laid out in cells c of its parent: present, and a whole number of entries. */
static int node_reg(struct ctx *x, const char *parent, uint32_t node, struct cells c,
                    struct prop *reg)
{
    uint32_t stride = 4 * (c.addr + c.size);

    if (!prop_find(&x->f, node, "reg", reg)) {
        msg_node(x, parent, node);
        tbuf_str(&x->m, "has no reg property");
        return -FDT_ENOENT;
    }
    if (c.addr < 1 || c.addr > 2 || c.size > 2) {
        return bad_node(x, parent, node,
                        "reg uses #address-cells %d and #size-cells %d; only 1-2 and 0-2 are "
                        "supported",
                        c.addr, c.size);
    }
    if (reg->len == 0 || reg->len % stride != 0) {
        return bad_node(x, parent, node, "reg is %d bytes, not a whole number of %d-byte entries",
                        reg->len, stride);
    }
    return 0;
}

static uint64_t read_cells(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;

    for (uint32_t i = 0; i < n; i++) {
        v = v << 32 | be32(p + 4 * i);
    }
    return v;
}

/* Number of entries in a reg that node_reg() accepted. */
static uint32_t reg_count(const struct prop *reg, struct cells c)
{
    return reg->len / (4 * (c.addr + c.size));
}

/* Entry i of a reg that node_reg() accepted; false past the last entry. */
static bool reg_entry(const struct prop *reg, struct cells c, uint32_t i, struct fdt_range *r)
{
    uint32_t stride = 4 * (c.addr + c.size);

    if (i >= reg_count(reg, c)) {
        return false;
    }
    r->base = read_cells(reg->val + i * stride, c.addr);
    r->size = read_cells(reg->val + i * stride + 4 * c.addr, c.size);
    return true;
}

/* A GIC <type number flags> triple as an INTID: type 0 SPI (32 + n), type 1 PPI (16 + n). */
static bool gic_intid(const uint8_t *triple, bool ppi_only, uint32_t *intid)
{
    uint32_t type = be32(triple);
    uint32_t num = be32(triple + 4);

    if (type == 0 && num < GIC_SPI_COUNT && !ppi_only) {
        *intid = GIC_SPI_BASE + num;
        return true;
    }
    if (type == 1 && num < GIC_PPI_COUNT) {
        *intid = GIC_PPI_BASE + num;
        return true;
    }
    return false;
}

/* Message for interrupt i of node that is not what it should be. */
static int bad_irq(struct ctx *x, uint32_t node, uint32_t i, const uint8_t *triple,
                   const char *want)
{
    msg_node(x, "/", node);
    msg_fmt(&x->m, "interrupt %d <type %d", i, be32(triple));
    msg_fmt(&x->m, " number %d> is not ", be32(triple + 4), 0);
    return bad(&x->m, want, 0, 0);
}

/* node's interrupts as n GIC triples (at least n of them). */
static int node_irqs(struct ctx *x, uint32_t node, uint32_t n, struct prop *irqs)
{
    if (!prop_find(&x->f, node, "interrupts", irqs)) {
        msg_node(x, "/", node);
        tbuf_str(&x->m, "has no interrupts property");
        return -FDT_ENOENT;
    }
    if (irqs->len < n * GIC_IRQ_CELLS * 4) {
        return bad_node(x, "/", node,
                        "interrupts is %d bytes, need %d <type number flags> triple(s)", irqs->len,
                        n);
    }
    return 0;
}

/* ------------------------------------------------------------------ what zerotick needs */

static int find_psci(struct ctx *x, struct fdt_info *out)
{
    uint32_t node;
    struct prop method;

    if (!root_child(x, "psci", 4, &node)) {
        return missing(&x->m, "missing node /psci");
    }
    if (!prop_find(&x->f, node, "method", &method)) {
        return missing(&x->m, "/psci has no method property");
    }
    if (prop_is(&x->f, node, "method", "hvc")) {
        out->psci = FDT_PSCI_HVC;
    } else if (prop_is(&x->f, node, "method", "smc")) {
        out->psci = FDT_PSCI_SMC;
    } else {
        tbuf_str(&x->m, "device tree: /psci method \"");
        msg_text(&x->m, method.val, method.len);
        return bad(&x->m, "\" is neither hvc nor smc", 0, 0);
    }
    return 0;
}

/* Every non-empty reg entry of one memory node, up to FDT_MAX_MEM in all. */
static int add_memory(struct ctx *x, uint32_t node, struct fdt_info *out)
{
    struct prop reg;
    struct fdt_range r;
    int err = node_reg(x, "/", node, x->root_cells, &reg);

    for (uint32_t i = 0; err == 0 && reg_entry(&reg, x->root_cells, i, &r); i++) {
        if (r.size != 0 && out->nmem < FDT_MAX_MEM) {
            out->mem[out->nmem++] = r;
        }
    }
    return err;
}

static int find_memory(struct ctx *x, struct fdt_info *out)
{
    uint32_t it = 0;
    uint32_t node;
    bool found = false;

    for (uint32_t i = 0; root_kid(x, &it, i, &node); i++) {
        if (prop_is(&x->f, node, "device_type", "memory") && is_enabled(&x->f, node)) {
            int err = add_memory(x, node, out);

            if (err != 0) {
                return err;
            }
            found = true;
        }
    }
    if (!found) {
        return missing(&x->m, "no memory node");
    }
    if (out->nmem == 0) {
        return missing(&x->m, "memory nodes describe no memory (every reg size is 0)");
    }
    return 0;
}

/* One cpu node: record its MPIDR (reg[0]) unless the array is full; reject duplicates. */
static int add_cpu(struct ctx *x, uint32_t node, struct cells c, struct fdt_info *out)
{
    struct prop reg;
    struct fdt_range r;
    int err = node_reg(x, "/cpus/", node, c, &reg);

    if (err != 0) {
        return err;
    }
    reg_entry(&reg, c, 0, &r);
    for (uint32_t i = 0; i < out->ncpus; i++) {
        if (out->cpu_mpidr[i] == r.base) {
            return bad_node(x, "/cpus/", node, "reg %x repeats the MPIDR of an earlier cpu", r.base,
                            0);
        }
    }
    if (out->ncpus < FDT_MAX_CPUS) {
        out->cpu_mpidr[out->ncpus++] = r.base;
    }
    out->ncpus_total++;
    return 0;
}

static int find_cpus(struct ctx *x, struct fdt_info *out)
{
    uint32_t cpus, it, node;
    struct cells c;
    int err;

    if (!root_child(x, "cpus", 4, &cpus)) {
        return missing(&x->m, "missing node /cpus");
    }
    err = node_cells(x, "/", cpus, &c);
    for (it = node_body(&x->f, cpus); err == 0 && child_next(&x->f, &it, &node);) {
        if (prop_is(&x->f, node, "device_type", "cpu")) {
            err = add_cpu(x, node, c, out);
        }
    }
    if (err == 0 && out->ncpus_total == 0) {
        return missing(&x->m, "no cpu nodes under /cpus");
    }
    return err;
}

/* #redistributor-regions in 1..FDT_MAX_GICR, and the 3-cell interrupts node_irqs() reads. */
static int gic_props(struct ctx *x, uint32_t node, uint32_t *nregions)
{
    uint32_t icells = GIC_IRQ_CELLS;
    int err = prop_u32(x, "/", node, "#redistributor-regions", 1, nregions);

    if (err == 0) {
        err = prop_u32(x, "/", node, "#interrupt-cells", GIC_IRQ_CELLS, &icells);
    }
    if (err != 0) {
        return err;
    }
    if (*nregions < 1 || *nregions > FDT_MAX_GICR) {
        return bad_node(x, "/", node, "#redistributor-regions %d is outside 1..%d", *nregions,
                        FDT_MAX_GICR);
    }
    if (icells != GIC_IRQ_CELLS) {
        return bad_node(x, "/", node,
                        "#interrupt-cells is %d; only 3-cell GIC interrupts are supported", icells,
                        0);
    }
    return 0;
}

/* reg[0] distributor, reg[1..n] redistributor regions. */
static int find_gic(struct ctx *x, struct fdt_info *out)
{
    uint32_t node, n;
    struct prop reg;
    int err;

    if (!root_child_compatible(x, "arm,gic-v3", &node)) {
        return missing(&x->m, "no arm,gic-v3 interrupt controller");
    }
    err = gic_props(x, node, &n);
    if (err == 0) {
        err = node_reg(x, "/", node, x->root_cells, &reg);
    }
    if (err == 0 && reg_count(&reg, x->root_cells) < 1 + n) {
        return bad_node(x, "/", node,
                        "reg has too few entries for the distributor and %d redistributor "
                        "region(s)",
                        n, 0);
    }
    for (uint32_t i = 0; err == 0 && i < n; i++) {
        reg_entry(&reg, x->root_cells, i + 1, &out->gicr[i]);
    }
    if (err == 0) {
        reg_entry(&reg, x->root_cells, 0, &out->gicd);
        out->ngicr = n;
    }
    return err;
}

/* The root child /chosen/stdout-path names, directly or through /aliases, up to any ':'. */
static bool stdout_node(const struct ctx *x, uint32_t *node)
{
    uint32_t chosen, aliases, n;
    struct prop path;

    if (!root_child(x, "chosen", 6, &chosen) || !prop_find(&x->f, chosen, "stdout-path", &path)) {
        return false;
    }
    n = str_nlen(path.val, path.len);
    for (uint32_t i = 0; i < n; i++) {
        if (path.val[i] == ':') {
            n = i;
        }
    }
    if (n > 0 && path.val[0] != '/') {
        if (!root_child(x, "aliases", 7, &aliases) ||
            !prop_find_n(&x->f, aliases, (const char *)path.val, n, &path)) {
            return false;
        }
        n = str_nlen(path.val, path.len);
    }
    /* Only "/name": deeper nodes would need "ranges" translation. */
    for (uint32_t i = 1; i < n; i++) {
        if (path.val[i] == '/') {
            return false;
        }
    }
    return n > 1 && path.val[0] == '/' && root_child(x, (const char *)path.val + 1, n - 1, node);
}

static int find_uart(struct ctx *x, struct fdt_info *out)
{
    uint32_t node;
    struct prop reg, irqs;
    int err;

    if (!stdout_node(x, &node) || !is_compatible(&x->f, node, "arm,pl011") ||
        !is_enabled(&x->f, node)) {
        if (!root_child_compatible(x, "arm,pl011", &node)) {
            return missing(&x->m, "no arm,pl011 UART");
        }
    }
    err = node_reg(x, "/", node, x->root_cells, &reg);
    if (err == 0) {
        err = node_irqs(x, node, 1, &irqs);
    }
    if (err == 0 && !gic_intid(irqs.val, false, &out->uart_intid)) {
        return bad_irq(x, node, 0, irqs.val, "a GIC SPI or PPI");
    }
    if (err == 0) {
        reg_entry(&reg, x->root_cells, 0, &out->uart);
    }
    return err;
}

/* Four PPIs: secure physical, non-secure physical, virtual, hypervisor (in that order). */
static int find_timer(struct ctx *x, struct fdt_info *out)
{
    uint32_t node;
    struct prop irqs;
    int err;

    if (!root_child_compatible(x, "arm,armv8-timer", &node)) {
        return missing(&x->m, "no arm,armv8-timer node");
    }
    err = node_irqs(x, node, TIMER_IRQS, &irqs);
    for (uint32_t i = 0; err == 0 && i < TIMER_IRQS; i++) {
        const uint8_t *triple = irqs.val + i * GIC_IRQ_CELLS * 4;

        if (!gic_intid(triple, true, &out->timer_intid[i])) {
            return bad_irq(x, node, i, triple, "a PPI");
        }
    }
    return err;
}

/* Optional; when present it must be a NUL-terminated string. */
static int find_bootargs(struct ctx *x, struct fdt_info *out)
{
    uint32_t chosen;
    struct prop p;

    if (!root_child(x, "chosen", 6, &chosen) || !prop_find(&x->f, chosen, "bootargs", &p)) {
        return 0;
    }
    if (str_nlen(p.val, p.len) == p.len) {
        return bad(&x->m,
                   "device tree malformed: /chosen/bootargs is not NUL-terminated within its %d "
                   "bytes",
                   p.len, 0);
    }
    out->bootargs = (const char *)p.val;
    out->bootargs_len = str_nlen(p.val, p.len);
    return 0;
}

/* One virtio,mmio node: reg[0] and an SPI, or false (malformed: the caller skips it). */
static bool virtio_node(struct ctx *x, uint32_t node, struct fdt_range *r, uint32_t *intid)
{
    struct cells c = x->root_cells;
    struct prop reg, irqs;

    if (!prop_find(&x->f, node, "reg", &reg) || c.addr < 1 || c.addr > 2 || c.size > 2 ||
        reg.len < 4 * (c.addr + c.size) || !reg_entry(&reg, c, 0, r) || r->size == 0) {
        return false;
    }
    return prop_find(&x->f, node, "interrupts", &irqs) && irqs.len >= GIC_IRQ_CELLS * 4 &&
           be32(irqs.val) == 0 && gic_intid(irqs.val, false, intid);
}

/* Insert transport (r, intid) into out->virtio[], kept sorted by base address. */
static void virtio_insert(struct fdt_info *out, struct fdt_range r, uint32_t intid)
{
    uint32_t i = out->nvirtio++;

    for (; i > 0 && out->virtio[i - 1].base > r.base; i--) {
        out->virtio[i].base = out->virtio[i - 1].base; /* field by field: no memcpy */
        out->virtio[i].size = out->virtio[i - 1].size;
        out->virtio_intid[i] = out->virtio_intid[i - 1];
    }
    out->virtio[i].base = r.base;
    out->virtio[i].size = r.size;
    out->virtio_intid[i] = intid;
}

/* Optional: every enabled virtio,mmio root child; bad ones are counted, never fatal. */
static int find_virtio(struct ctx *x, struct fdt_info *out)
{
    uint32_t it = 0, node, intid;
    struct fdt_range r;

    for (uint32_t i = 0; root_kid(x, &it, i, &node); i++) {
        if (!is_compatible(&x->f, node, "virtio,mmio") || !is_enabled(&x->f, node)) {
            continue;
        }
        if (out->nvirtio < FDT_MAX_VIRTIO && virtio_node(x, node, &r, &intid)) {
            virtio_insert(out, r, intid);
        } else {
            out->virtio_skipped++;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ entry point */

static int check_blob(const void *blob, size_t max_len, struct ctx *x)
{
    const uint8_t *base = blob;
    int err = check_header(base, max_len, &x->m);

    if (err == 0) {
        err = check_version(base, &x->m);
    }
    if (err == 0) {
        err = check_blocks(base, &x->f, &x->m);
    }
    if (err == 0) {
        err = check_rsvmap(&x->f, &x->m);
    }
    if (err == 0) {
        err = check_struct(&x->f, &x->m);
    }
    return err;
}

/* The root node: check_struct() accepted the block, so only NOPs come before it. */
static uint32_t root_node(const struct fdt *f)
{
    uint32_t off = 0;
    uint32_t tok;
    uint32_t next = tok_next(f, off, &tok);

    while (tok == FDT_NOP) {
        off = next;
        next = tok_next(f, off, &tok);
    }
    return off;
}

/* The lookups, in the order their absence is reported. */
static int find_all(struct ctx *x, struct fdt_info *out)
{
    int err;

    x->root = root_node(&x->f);
    index_root(x);
    err = node_cells(x, "/", x->root, &x->root_cells);
    err = err != 0 ? err : find_psci(x, out);
    err = err != 0 ? err : find_memory(x, out);
    err = err != 0 ? err : find_cpus(x, out);
    err = err != 0 ? err : find_gic(x, out);
    err = err != 0 ? err : find_uart(x, out);
    err = err != 0 ? err : find_timer(x, out);
    err = err != 0 ? err : find_bootargs(x, out);
    err = err != 0 ? err : find_virtio(x, out);
    return err;
}

/* Field by field: a struct assignment could become a call to memset, which the kernel may lack. */
static void info_clear(struct fdt_info *out)
{
    for (uint32_t i = 0; i < FDT_MAX_MEM; i++) {
        out->mem[i].base = 0;
        out->mem[i].size = 0;
    }
    for (uint32_t i = 0; i < FDT_MAX_CPUS; i++) {
        out->cpu_mpidr[i] = 0;
    }
    for (uint32_t i = 0; i < FDT_MAX_GICR; i++) {
        out->gicr[i].base = 0;
        out->gicr[i].size = 0;
    }
    for (uint32_t i = 0; i < TIMER_IRQS; i++) {
        out->timer_intid[i] = 0;
    }
    for (uint32_t i = 0; i < FDT_MAX_VIRTIO; i++) {
        out->virtio[i].base = out->virtio[i].size = 0;
        out->virtio_intid[i] = 0;
    }
    out->nvirtio = out->virtio_skipped = 0;
    out->totalsize = out->nmem = out->ncpus = out->ncpus_total = out->ngicr = 0;
    out->gicd.base = out->gicd.size = out->uart.base = out->uart.size = 0;
    out->uart_intid = out->bootargs_len = 0;
    out->psci = FDT_PSCI_NONE;
    out->bootargs = NULL;
}

int fdt_parse(const void *blob, size_t max_len, struct fdt_info *out, char *err, size_t errlen)
{
    struct ctx x;
    int rc;

    tbuf_init(&x.m, err, errlen);
    info_clear(out);
    rc = check_blob(blob, max_len, &x);
    if (rc == 0) {
        rc = find_all(&x, out);
    }
    if (rc != 0) {
        info_clear(out);
        return rc;
    }
    out->totalsize = x.f.totalsize;
    return 0;
}
