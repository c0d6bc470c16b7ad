/* SPDX-License-Identifier: MIT */
/*
 * fdt.h — reading a flattened device tree (the blob firmware or QEMU hands the kernel),
 * checked against its own bounds: the generic half of device-tree support.
 *
 * fdt_open() validates the header, the memory reservation map and every token of the
 * structure block before anything is looked up; after it, the lookups below cannot read
 * outside the blob whatever it contains (each still re-checks every token's bounds).  Which
 * nodes matter and what they mean is the arch's business (arch/aarch64/dt.c reads QEMU
 * virt's).  Pure code: no globals, no allocation, no hardware, any context; built for the
 * host unit tests as it is.  Spec: Devicetree Specification v0.4, chapter 5 (the flattened
 * format) and 2.3 (standard properties).
 *
 * Errors: the functions that can fail return 0, -FDT_EINVAL (malformed or unsupported) or
 * -FDT_ENOENT (a required node or property is missing) and write one line for the boot
 * console into the tree's message buffer, naming the problem and, for a malformed blob, its
 * offset from the start of the blob.
 */
#ifndef ZT_KERNEL_FDT_H
#define ZT_KERNEL_FDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib.h"

#define FDT_MAGIC 0xd00dfeed

/* Error numbers, the Linux values (include/uapi/zt_errno.h), returned negated. */
#define FDT_EINVAL 22 /* the blob is malformed or describes something unsupported */
#define FDT_ENOENT 2  /* a required node or property is missing */

struct fdt_range {
    uint64_t base;
    uint64_t size;
};

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
struct fdt_prop {
    const uint8_t *val;
    uint32_t len;
};

/* A node's #address-cells and #size-cells, which lay out its children's reg. */
struct fdt_cells {
    uint32_t addr;
    uint32_t size;
};

/* An opened tree: the checked blob, the error line being written, the root and its
 * children.  Nodes are named by the offset of their FDT_BEGIN_NODE token from the start of
 * the structure block. */
#define FDT_MAX_ROOT_KIDS 256

struct fdt_tree {
    struct fdt f;
    struct tbuf m;
    uint32_t root;
    struct fdt_cells root_cells;
    uint32_t nkids;                   /* the root's children, found once (fdt_open): every */
    uint32_t kids[FDT_MAX_ROOT_KIDS]; /* lookup below scans this instead of the whole tree */
    bool kids_complete;               /* false if the root has more children than kids holds */
};

/* Check the blob at `blob` (8-byte aligned; at most max_len bytes may be read), find the root,
 * its #address-cells/#size-cells and its children.  0 or -FDT_EINVAL/-FDT_ENOENT; the error
 * line goes to err (errlen bytes, always NUL-terminated, "" on success; err may be NULL). */
int fdt_open(struct fdt_tree *x, const void *blob, size_t max_len, char *err, size_t errlen);

/* ---- values ---- */
uint32_t fdt_be32(const uint8_t *p);
/* Length of the string at p, or max if there is no NUL among its first max bytes. */
uint32_t fdt_str_nlen(const uint8_t *p, uint32_t max);

/* ---- nodes and properties ---- */
const char *fdt_node_name(const struct fdt *f, uint32_t node);
/* Offset of the first token after the node's FDT_BEGIN_NODE and name. */
uint32_t fdt_node_body(const struct fdt *f, uint32_t node);
/* The next subnode at *it (start with *it = fdt_node_body(parent)); false after the last. */
bool fdt_child_next(const struct fdt *f, uint32_t *it, uint32_t *child);
/* The property of node whose name is the n characters at name. */
bool fdt_prop_find_n(const struct fdt *f, uint32_t node, const char *name, uint32_t n,
                     struct fdt_prop *p);
bool fdt_prop_find(const struct fdt *f, uint32_t node, const char *name, struct fdt_prop *p);
/* Does node have property name whose first string is s? */
bool fdt_prop_is(const struct fdt *f, uint32_t node, const char *name, const char *s);
bool fdt_is_compatible(const struct fdt *f, uint32_t node, const char *compat);
/* status absent, "okay" or "ok" (spec 2.3.4). */
bool fdt_is_enabled(const struct fdt *f, uint32_t node);

/* ---- the root's children ---- */
/* The i-th child of the root (i counts from 0 with *it = 0), false past the last. */
bool fdt_root_kid(const struct fdt_tree *x, uint32_t *it, uint32_t i, uint32_t *node);
/* The root's child whose name matches the n characters at want ("pl011" matches
 * "pl011@9000000" too). */
bool fdt_root_child(const struct fdt_tree *x, const char *want, uint32_t n, uint32_t *node);
/* The first enabled child of the root compatible with compat. */
bool fdt_root_child_compatible(const struct fdt_tree *x, const char *compat, uint32_t *node);

/* ---- cells and reg ---- */
/* A single-cell property, or def when it is absent (error if it is not 4 bytes). */
int fdt_prop_u32(struct fdt_tree *x, const char *parent, uint32_t node, const char *name,
                 uint32_t def, uint32_t *val);
/* #address-cells (default 2) and #size-cells (default 1) of node, for its children. */
int fdt_node_cells(struct fdt_tree *x, const char *parent, uint32_t node, struct fdt_cells *c);
/* node's reg, laid out in cells c of its parent: present, and a whole number of entries. */
int fdt_node_reg(struct fdt_tree *x, const char *parent, uint32_t node, struct fdt_cells c,
                 struct fdt_prop *reg);
/* Number of entries in a reg that fdt_node_reg() accepted, and entry i of it. */
uint32_t fdt_reg_count(const struct fdt_prop *reg, struct fdt_cells c);
bool fdt_reg_entry(const struct fdt_prop *reg, struct fdt_cells c, uint32_t i, struct fdt_range *r);

/* ---- error text (into x->m or m) ---- */
/* Text from the blob: up to a NUL, at most n (and 64) bytes, unprintable bytes shown as "?". */
void fdt_msg_text(struct tbuf *m, const uint8_t *p, uint32_t n);
/* fmt with each %d, %x or %X replaced by the next of a, b: in decimal, in hex ("0x1f"), in
 * hex with 8 digits ("0x0000001f"). */
void fdt_msg_fmt(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b);
/* fdt_msg_fmt(), then -FDT_EINVAL. */
int fdt_bad(struct tbuf *m, const char *fmt, uint64_t a, uint64_t b);
/* "device tree: <what>", then -FDT_ENOENT. */
int fdt_missing(struct tbuf *m, const char *what);
/* "device tree: <parent><name> " — the start of a message about one node. */
void fdt_msg_node(struct fdt_tree *x, const char *parent, uint32_t node);
/* "device tree: <parent><name> <fmt>", then -FDT_EINVAL. */
int fdt_bad_node(struct fdt_tree *x, const char *parent, uint32_t node, const char *fmt, uint64_t a,
                 uint64_t b);

#endif
