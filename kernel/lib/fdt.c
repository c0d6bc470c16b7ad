/* SPDX-License-Identifier: MIT */
/*
 * fdt.c — the generic flattened device tree reader (contract in include/kernel/fdt.h).
 *
 * What it does: fdt_open() checks the header, the memory reservation map and every token of
 * the structure block against the bounds of the blob, finds the root, its cells and its
 * children; the lookups then walk nodes and properties and read cells and reg entries.  What
 * it does not do: decide which nodes a machine needs (the arch does: arch/aarch64/dt.c), no
 * address translation through "ranges", no phandle following, no allocation, nothing is
 * written to the blob.
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
 * Who may call it: anyone, in any context, with any locks held: pure functions of their
 * arguments (no globals, no locks, well under 1 KiB of stack).
 *
 * Spec: Devicetree Specification v0.4, chapter 5 (flattened format: 5.2 header, 5.3
 * reservation map, 5.4 structure block, 5.5 strings block), 2.3 (standard properties:
 * compatible, status, #address-cells, #size-cells, reg).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/fdt.h"
#include "kernel/lib.h"

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

uint32_t fdt_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint64_t align4(uint64_t x)
{
    return (x + 3) & ~(uint64_t)3;
}

/* Length of the string at p, or max if there is no NUL among its first max bytes. */
uint32_t fdt_str_nlen(const uint8_t *p, uint32_t max)
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
void fdt_msg_text(struct tbuf *m, const uint8_t *p, uint32_t n)
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
void fdt_msg_fmt(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b)
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

/* fdt_msg_fmt() for a malformed or unsupported blob. */
int fdt_bad(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b)
{
    fdt_msg_fmt(m, fmt, a, b);
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
int fdt_missing(struct tbuf *m, const char *what)
{
    tbuf_str(m, "device tree: ");
    tbuf_str(m, what);
    return -FDT_ENOENT;
}

/* ------------------------------------------------------------------ header */

static uint32_t hdr(const uint8_t *base, enum fdt_hdr field)
{
    return fdt_be32(base + 4 * field);
}

static bool block_fits(uint32_t off, uint32_t size, uint32_t total)
{
    return off <= total && size <= total - off;
}

/* Is there a blob with the FDT magic, whose totalsize fits in the max_len bytes we may read? */
static int check_header(const uint8_t *base, size_t max_len, struct tbuf *m)
{
    if (base == NULL) {
        return fdt_bad(m, "no device tree: NULL blob pointer", 0, 0);
    }
    if (max_len >= 4 && hdr(base, HDR_MAGIC) != FDT_MAGIC) {
        return fdt_bad(m, "no device tree: bad magic %X at the start of RAM", hdr(base, HDR_MAGIC),
                       0);
    }
    if (((uintptr_t)base & 7) != 0) {
        return fdt_bad(m, "device tree malformed: blob address %x is not 8-byte aligned",
                       (uintptr_t)base, 0);
    }
    if (max_len < FDT_HEADER_SIZE) {
        return fdt_bad(m, "device tree truncated: %d bytes available, less than the 40-byte header",
                       max_len, 0);
    }
    if (hdr(base, HDR_TOTALSIZE) > max_len) {
        return fdt_bad(m, "device tree truncated: totalsize %d > %d bytes available",
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
        return fdt_bad(m, "device tree malformed: totalsize %d is smaller than the 40-byte header",
                       hdr(base, HDR_TOTALSIZE), 0);
    }
    if (version < FDT_VERSION_MIN || last_comp > FDT_VERSION_READ) {
        return fdt_bad(m,
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
    fdt_msg_fmt(m, " at offset %x size %x", off, size);
    return fdt_bad(m, " is misaligned or lies outside totalsize %x", total, 0);
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

        if ((fdt_be32(e) | fdt_be32(e + 4) | fdt_be32(e + 8) | fdt_be32(e + 12)) == 0) {
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
    uint32_t n = fdt_str_nlen(name, room);

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
    len = fdt_be32(p + 4);
    nameoff = fdt_be32(p + 8);
    if (align4((uint64_t)off + 12 + len) > f->struct_size) {
        return TOK_PROP_CUT;
    }
    if (nameoff >= f->strings_size) {
        return TOK_PROP_NAMEOFF;
    }
    if (fdt_str_nlen(f->base + f->strings_off + nameoff, f->strings_size - nameoff) ==
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
    *tok = fdt_be32(f->base + f->struct_off + off);
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
        return fdt_bad(m, "device tree malformed: unknown token %X at offset %x",
                       fdt_be32(f->base + at), at);
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
        return fdt_bad(m, "device tree malformed: FDT_END at offset %x with %d node(s) still open",
                       at, n->depth);
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

const char *fdt_node_name(const struct fdt *f, uint32_t node)
{
    return (const char *)f->base + f->struct_off + node + 4;
}

/* Offset of the first token after the node's FDT_BEGIN_NODE and name. */
uint32_t fdt_node_body(const struct fdt *f, uint32_t node)
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

/* The next subnode at *it (start with *it = fdt_node_body(parent)); false after the last. */
bool fdt_child_next(const struct fdt *f, uint32_t *it, uint32_t *child)
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
bool fdt_prop_find_n(const struct fdt *f, uint32_t node, const char *name, uint32_t n,
                     struct fdt_prop *p)
{
    uint32_t off = fdt_node_body(f, node);

    for (;;) {
        uint32_t tok;
        uint32_t next = tok_next(f, off, &tok);
        const uint8_t *t = f->base + f->struct_off + off;

        if (tok == FDT_PROP &&
            str_eq_n((const char *)f->base + f->strings_off + fdt_be32(t + 8), name, n)) {
            p->val = t + 12;
            p->len = fdt_be32(t + 4);
            return true;
        }
        if (tok != FDT_PROP && tok != FDT_NOP) {
            return false;
        }
        off = next;
    }
}

bool fdt_prop_find(const struct fdt *f, uint32_t node, const char *name, struct fdt_prop *p)
{
    return fdt_prop_find_n(f, node, name, cstr_len(name), p);
}

/* Does the string list in p (NUL-separated strings) hold s as one whole entry? */
static bool strlist_has(const struct fdt_prop *p, const char *s)
{
    uint32_t n = cstr_len(s);
    uint32_t at = 0;

    while (at < p->len) {
        uint32_t len = fdt_str_nlen(p->val + at, p->len - at);

        if (len == n && at + len < p->len && str_eq_n((const char *)p->val + at, s, n)) {
            return true;
        }
        at += len + 1;
    }
    return false;
}

/* Does node have property name whose first string is s? */
bool fdt_prop_is(const struct fdt *f, uint32_t node, const char *name, const char *s)
{
    struct fdt_prop p;
    uint32_t n = cstr_len(s);

    return fdt_prop_find(f, node, name, &p) && fdt_str_nlen(p.val, p.len) == n && n < p.len &&
           str_eq_n((const char *)p.val, s, n);
}

bool fdt_is_compatible(const struct fdt *f, uint32_t node, const char *compat)
{
    struct fdt_prop p;

    return fdt_prop_find(f, node, "compatible", &p) && strlist_has(&p, compat);
}

/* status absent, "okay" or "ok" (spec 2.3.4). */
bool fdt_is_enabled(const struct fdt *f, uint32_t node)
{
    struct fdt_prop p;

    return !fdt_prop_find(f, node, "status", &p) || fdt_prop_is(f, node, "status", "okay") ||
           fdt_prop_is(f, node, "status", "ok");
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

static void index_root(struct fdt_tree *x)
{
    uint32_t it = fdt_node_body(&x->f, x->root), node;

    x->nkids = 0;
    x->kids_complete = true;
    while (fdt_child_next(&x->f, &it, &node)) {
        if (x->nkids == FDT_MAX_ROOT_KIDS) {
            x->kids_complete = false;
            return;
        }
        x->kids[x->nkids++] = node;
    }
}

/* The i-th child of the root, from the index or, past its end, by walking. */
bool fdt_root_kid(const struct fdt_tree *x, uint32_t *it, uint32_t i, uint32_t *node)
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
    return fdt_child_next(&x->f, it, node);
}

/* The root's child whose name matches the n characters at want. */
bool fdt_root_child(const struct fdt_tree *x, const char *want, uint32_t n, uint32_t *node)
{
    uint32_t it = 0;

    for (uint32_t i = 0; fdt_root_kid(x, &it, i, node); i++) {
        if (name_matches(fdt_node_name(&x->f, *node), want, n)) {
            return true;
        }
    }
    return false;
}

/* The first enabled child of the root compatible with compat. */
bool fdt_root_child_compatible(const struct fdt_tree *x, const char *compat, uint32_t *node)
{
    uint32_t it = 0;

    for (uint32_t i = 0; fdt_root_kid(x, &it, i, node); i++) {
        if (fdt_is_compatible(&x->f, *node, compat) && fdt_is_enabled(&x->f, *node)) {
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ cells, reg, interrupts */

/* "device tree: <parent><name> " — the start of a message about one node. */
void fdt_msg_node(struct fdt_tree *x, const char *parent, uint32_t node)
{
    tbuf_str(&x->m, "device tree: ");
    tbuf_str(&x->m, parent);
    fdt_msg_text(&x->m, (const uint8_t *)fdt_node_name(&x->f, node), 64);
    tbuf_char(&x->m, ' ');
}

/* "device tree: <parent><name> <fmt>" for a node with a bad or unsupported value. */
int fdt_bad_node(struct fdt_tree *x, const char *parent, uint32_t node, const char *fmt, uint64_t a,
                 uint64_t b)
{
    fdt_msg_node(x, parent, node);
    return fdt_bad(&x->m, fmt, a, b);
}

/* A single-cell property, or def when it is absent. */
int fdt_prop_u32(struct fdt_tree *x, const char *parent, uint32_t node, const char *name,
                 uint32_t def, uint32_t *val)
{
    struct fdt_prop p;

    *val = def;
    if (!fdt_prop_find(&x->f, node, name, &p)) {
        return 0;
    }
    if (p.len != 4) {
        fdt_msg_node(x, parent, node);
        tbuf_str(&x->m, name);
        return fdt_bad(&x->m, " is %d bytes, not one 32-bit cell", p.len, 0);
    }
    *val = fdt_be32(p.val);
    return 0;
}

/* #address-cells (default 2) and #size-cells (default 1) of node, for its children. */
int fdt_node_cells(struct fdt_tree *x, const char *parent, uint32_t node, struct fdt_cells *c)
{
    int err = fdt_prop_u32(x, parent, node, "#address-cells", 2, &c->addr);

    if (err == 0) {
        err = fdt_prop_u32(x, parent, node, "#size-cells", 1, &c->size);
    }
    return err;
}

/* node's reg, laid out in cells c of its parent: present, and a whole number of entries. */
int fdt_node_reg(struct fdt_tree *x, const char *parent, uint32_t node, struct fdt_cells c,
                 struct fdt_prop *reg)
{
    uint32_t stride = 4 * (c.addr + c.size);

    if (!fdt_prop_find(&x->f, node, "reg", reg)) {
        fdt_msg_node(x, parent, node);
        tbuf_str(&x->m, "has no reg property");
        return -FDT_ENOENT;
    }
    if (c.addr < 1 || c.addr > 2 || c.size > 2) {
        return fdt_bad_node(x, parent, node,
                            "reg uses #address-cells %d and #size-cells %d; only 1-2 and 0-2 are "
                            "supported",
                            c.addr, c.size);
    }
    if (reg->len == 0 || reg->len % stride != 0) {
        return fdt_bad_node(x, parent, node,
                            "reg is %d bytes, not a whole number of %d-byte entries", reg->len,
                            stride);
    }
    return 0;
}

static uint64_t read_cells(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;

    for (uint32_t i = 0; i < n; i++) {
        v = v << 32 | fdt_be32(p + 4 * i);
    }
    return v;
}

/* Number of entries in a reg that fdt_node_reg() accepted. */
uint32_t fdt_reg_count(const struct fdt_prop *reg, struct fdt_cells c)
{
    return reg->len / (4 * (c.addr + c.size));
}

/* Entry i of a reg that fdt_node_reg() accepted; false past the last entry. */
bool fdt_reg_entry(const struct fdt_prop *reg, struct fdt_cells c, uint32_t i, struct fdt_range *r)
{
    uint32_t stride = 4 * (c.addr + c.size);

    if (i >= fdt_reg_count(reg, c)) {
        return false;
    }
    r->base = read_cells(reg->val + i * stride, c.addr);
    r->size = read_cells(reg->val + i * stride + 4 * c.addr, c.size);
    return true;
}

/* ------------------------------------------------------------------ entry point */

static int check_blob(const void *blob, size_t max_len, struct fdt_tree *x)
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

int fdt_open(struct fdt_tree *x, const void *blob, size_t max_len, char *err, size_t errlen)
{
    tbuf_init(&x->m, err, errlen);
    int rc = check_blob(blob, max_len, x);
    if (rc != 0) {
        return rc;
    }
    x->root = root_node(&x->f);
    index_root(x);
    return fdt_node_cells(x, "/", x->root, &x->root_cells);
}
