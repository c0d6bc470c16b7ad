/* SPDX-License-Identifier: MIT */
/*
 * test_fdt.c — host unit tests of the device-tree reader: kernel/lib/fdt.c (the generic checks)
 * through arch/aarch64/dt.c (what zerotick looks up).
 *
 * Three kinds of input:
 * - QEMU's own device trees, dumped by the Makefile (make unit) into build/dtb/ with
 *   -M virt,gic-version=3 -cpu cortex-a72 -m 512M and -smp 1, 4, 64, plus a 4-CPU dump with
 *   virtualization=on (PSCI over smc) and one without -append (no bootargs).  The binary runs
 *   with the repository root as its working directory.
 * - Corrupted copies of the 4-CPU dump: every truncation, every single-byte change, a
 *   fixed-seed random sweep, and targeted edits (magic, offsets, lengths, names).  The host
 *   build uses -fsanitize=address,undefined and every copy sits in a heap buffer of exactly
 *   its length, so any read outside it aborts the test.
 * - Small trees built here (tree_build) for what QEMU never produces: default cells, UART
 *   choice through stdout-path and aliases, several redistributor regions, more CPUs than
 *   DT_MAX_CPUS, missing nodes one at a time, deep nesting.
 *
 * Each test has a stable ID and a one-line purpose: FDT-0x QEMU's trees, FDT-2x/3x corrupted
 * copies, FDT-4x/5x built trees.  The two sweeps print their counts as TAP comments ("# ...").
 * UBSan findings abort the binary (__ubsan_default_options below), as ASan's do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../arch/aarch64/dt.h"

/* Make UBSan findings fatal in this binary, as ASan's are: the parser must have none. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

#define ERRLEN 256

/* Offsets of header fields (Devicetree Specification v0.4, 5.2). */
#define H_MAGIC        0
#define H_TOTALSIZE    4
#define H_OFF_STRUCT   8
#define H_OFF_STRINGS  12
#define H_OFF_RSVMAP   16
#define H_VERSION      20
#define H_LAST_COMP    24
#define H_SIZE_STRINGS 32
#define H_SIZE_STRUCT  36

#define TOK_BEGIN_NODE 1
#define TOK_END_NODE   2
#define TOK_PROP       3
#define TOK_NOP        4
#define TOK_END        9

/* ------------------------------------------------------------------ byte helpers */

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint8_t *dup_bytes(const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len > 0 ? len : 1);

    assert_non_null(p);
    memcpy(p, src, len);
    return p;
}

/* ------------------------------------------------------------------ QEMU's dumps */

/* The loops over every dump cover the first NDUMPS; the trees of 124 and 512 CPUs, with their
 * second redistributor region, have tests of their own. */
enum dump {
    VIRT_1,
    VIRT_4,
    VIRT_64,
    VIRT_4_EL2,
    VIRT_4_NOARGS,
    NDUMPS,
    VIRT_124 = NDUMPS,
    VIRT_512,
    VIRT_4_INITRD,
    NALL
};

static const char *const dump_path[NALL] = {
    "build/dtb/virt-1.dtb",     "build/dtb/virt-4.dtb",        "build/dtb/virt-64.dtb",
    "build/dtb/virt-4-el2.dtb", "build/dtb/virt-4-noargs.dtb", "build/dtb/virt-124.dtb",
    "build/dtb/virt-512.dtb",   "build/dtb/virt-4-initrd.dtb",
};

struct blob {
    uint8_t *data;
    size_t len;
};

static struct blob dumps[NALL];

/* The dump, read once; a missing file fails the test with its path. */
static const struct blob *dump(enum dump d)
{
    struct blob *b = &dumps[d];
    FILE *fp;
    long len;

    if (b->data != NULL) {
        return b;
    }
    fp = fopen(dump_path[d], "rb");
    if (fp == NULL) {
        fail_msg("cannot open %s (run 'make unit' from the repository root to dump it with "
                 "QEMU; the test must run with the repository root as working directory)",
                 dump_path[d]);
    }
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    len = ftell(fp);
    assert_true(len > 0);
    rewind(fp);
    b->data = malloc((size_t)len);
    assert_non_null(b->data);
    assert_int_equal(fread(b->data, 1, (size_t)len, fp), (size_t)len);
    fclose(fp);
    b->len = (size_t)len;
    return b;
}

/* A copy holding just the header, reservation map and both blocks, totalsize patched to match:
 * QEMU pads its dump to 1 MiB, which would make every truncation a header error. */
static struct blob compact(const struct blob *src)
{
    uint32_t end = get32(src->data + H_OFF_STRINGS) + get32(src->data + H_SIZE_STRINGS);
    uint32_t send = get32(src->data + H_OFF_STRUCT) + get32(src->data + H_SIZE_STRUCT);
    struct blob b;

    if (send > end) {
        end = send;
    }
    b.len = end;
    b.data = dup_bytes(src->data, end);
    put32(b.data + H_TOTALSIZE, end);
    return b;
}

static int parse(const struct blob *b, struct dt_info *info, char *err)
{
    return dt_parse(b->data, b->len, info, err, ERRLEN);
}

/* Parse a good blob; fail with the parser's message if it refuses. */
static void parse_ok(const struct blob *b, struct dt_info *info)
{
    char err[ERRLEN];
    int rc = parse(b, info, err);

    if (rc != 0) {
        fail_msg("dt_parse returned %d: %s", rc, err);
    }
}

/* ------------------------------------------------------------------ a trusting walker
 * Finds things in QEMU's (known good) blobs so tests can corrupt them precisely. */

static uint32_t walk_next(const uint8_t *s, uint32_t off)
{
    uint32_t tok = get32(s + off);

    if (tok == TOK_BEGIN_NODE) {
        return (off + 4 + (uint32_t)strlen((const char *)s + off + 4) + 1 + 3) & ~3u;
    }
    if (tok == TOK_PROP) {
        return (off + 12 + get32(s + off + 4) + 3) & ~3u;
    }
    return off + 4;
}

/* Blob offset of the FDT_BEGIN_NODE of the first node called name. */
static uint32_t find_node(const struct blob *b, const char *name)
{
    const uint8_t *s = b->data + get32(b->data + H_OFF_STRUCT);

    for (uint32_t off = 0; get32(s + off) != TOK_END; off = walk_next(s, off)) {
        if (get32(s + off) == TOK_BEGIN_NODE && strcmp((const char *)s + off + 4, name) == 0) {
            return get32(b->data + H_OFF_STRUCT) + off;
        }
    }
    fail_msg("node %s not found in the blob", name);
    return 0;
}

/* Blob offset of the FDT_PROP token of property prop of node (first match). */
static uint32_t find_prop(const struct blob *b, const char *node, const char *prop)
{
    uint32_t soff = get32(b->data + H_OFF_STRUCT);
    const uint8_t *s = b->data + soff;
    const char *strings = (const char *)b->data + get32(b->data + H_OFF_STRINGS);
    uint32_t off = walk_next(s, find_node(b, node) - soff);

    for (; get32(s + off) == TOK_PROP || get32(s + off) == TOK_NOP; off = walk_next(s, off)) {
        if (get32(s + off) == TOK_PROP && strcmp(strings + get32(s + off + 8), prop) == 0) {
            return soff + off;
        }
    }
    fail_msg("property %s of node %s not found", prop, node);
    return 0;
}

/* ------------------------------------------------------------------ real trees */

static uint64_t qemu_mpidr(unsigned cpu)
{
    return (uint64_t)((cpu / 16) << 8 | (cpu % 16));
}

static void check_cpus(enum dump d, unsigned n)
{
    struct dt_info info;

    parse_ok(dump(d), &info);
    assert_int_equal(info.ncpus_total, n);
    assert_int_equal(info.ncpus, n);
    for (unsigned i = 0; i < n; i++) {
        if (info.cpu_mpidr[i] != qemu_mpidr(i)) {
            fail_msg("%s: cpu %u has MPIDR 0x%llx, expected 0x%llx", dump_path[d], i,
                     (unsigned long long)info.cpu_mpidr[i], (unsigned long long)qemu_mpidr(i));
        }
    }
}

/* FDT-01: 4-CPU virt tree yields 4 MPIDRs 0..3 */
static void fdt_01_four_cpus(void **state)
{
    check_cpus(VIRT_4, 4);
}

/* FDT-02: 1-CPU virt tree yields the single MPIDR 0 */
static void fdt_02_one_cpu(void **state)
{
    check_cpus(VIRT_1, 1);
}

/* FDT-03: 64-CPU virt tree yields cpu N -> ((N/16)<<8)|(N%16), without the 0x80000000 bit */
static void fdt_03_sixty_four_cpus(void **state)
{
    check_cpus(VIRT_64, 64);
}

/* The GICv3 of a tree with more CPUs than the first redistributor region holds (123): the
 * same region, then a second one of 64 MiB at 256 GiB (hw/arm/virt.c, VIRT_HIGH_GIC_REDIST2;
 * its size is the region's, not what the CPUs use). */
static void check_two_gicr(const struct dt_info *info)
{
    assert_int_equal(info->gicd.base, 0x08000000);
    assert_int_equal(info->ngicr, 2);
    assert_int_equal(info->gicr[0].base, 0x080a0000);
    assert_int_equal(info->gicr[0].size, 0xf60000);
    assert_int_equal(info->gicr[1].base, 0x4000000000ull);
    assert_int_equal(info->gicr[1].size, 0x4000000);
}

/* FDT-55: QEMU's 124-CPU tree: 124 MPIDRs and two redistributor regions (the one-past-123
 * machine: CPU 123 is the first in the second region) */
static void fdt_55_virt_124(void **state)
{
    struct dt_info info;

    check_cpus(VIRT_124, 124);
    parse_ok(dump(VIRT_124), &info);
    check_two_gicr(&info);
    assert_int_equal(info.cpu_mpidr[122], 0x70a);
    assert_int_equal(info.cpu_mpidr[123], 0x70b);
}

/* FDT-56: QEMU's 512-CPU tree (its largest): 512 MPIDRs, the last 0x1f0f, two regions */
static void fdt_56_virt_512(void **state)
{
    struct dt_info info;

    check_cpus(VIRT_512, 512);
    parse_ok(dump(VIRT_512), &info);
    check_two_gicr(&info);
    assert_int_equal(info.cpu_mpidr[511], 0x1f0f);
}

/* FDT-04: every dump has exactly one memory range, 0x40000000 + 0x20000000 (-m 512M) */
static void fdt_04_memory(void **state)
{
    for (int d = 0; d < NDUMPS; d++) {
        struct dt_info info;

        parse_ok(dump(d), &info);
        assert_int_equal(info.nmem, 1);
        assert_int_equal(info.mem[0].base, 0x40000000);
        assert_int_equal(info.mem[0].size, 0x20000000);
    }
}

/* FDT-05: GICD at 0x08000000 (64 KiB); one GICR region at 0x080a0000 (0xf60000 bytes) */
static void fdt_05_gic(void **state)
{
    for (int d = 0; d < NDUMPS; d++) {
        struct dt_info info;

        parse_ok(dump(d), &info);
        assert_int_equal(info.gicd.base, 0x08000000);
        assert_int_equal(info.gicd.size, 0x10000);
        assert_int_equal(info.ngicr, 1);
        assert_int_equal(info.gicr[0].base, 0x080a0000);
        assert_int_equal(info.gicr[0].size, 0xf60000);
    }
}

/* FDT-06: PL011 at 0x09000000 (4 KiB), SPI 1 -> INTID 33 */
static void fdt_06_uart(void **state)
{
    for (int d = 0; d < NDUMPS; d++) {
        struct dt_info info;

        parse_ok(dump(d), &info);
        assert_int_equal(info.uart.base, 0x09000000);
        assert_int_equal(info.uart.size, 0x1000);
        assert_int_equal(info.uart_intid, 33);
    }
}

/* FDT-07: timer INTIDs 29, 30, 27, 26 (secure phys, phys, virt, hyp) */
static void fdt_07_timer(void **state)
{
    for (int d = 0; d < NDUMPS; d++) {
        struct dt_info info;

        parse_ok(dump(d), &info);
        assert_int_equal(info.timer_intid[DT_TIMER_SEC_PHYS], 29);
        assert_int_equal(info.timer_intid[DT_TIMER_PHYS], 30);
        assert_int_equal(info.timer_intid[DT_TIMER_VIRT], 27);
        assert_int_equal(info.timer_intid[DT_TIMER_HYP], 26);
    }
}

/* FDT-08: PSCI over hvc at EL1, over smc with virtualization=on */
static void fdt_08_psci(void **state)
{
    struct dt_info info;

    parse_ok(dump(VIRT_4), &info);
    assert_int_equal(info.psci, DT_PSCI_HVC);
    parse_ok(dump(VIRT_4_EL2), &info);
    assert_int_equal(info.psci, DT_PSCI_SMC);
}

/* FDT-09: bootargs is exactly the -append text and points into the blob */
static void fdt_09_bootargs(void **state)
{
    const struct blob *b = dump(VIRT_4);
    struct dt_info info;

    parse_ok(b, &info);
    assert_non_null(info.bootargs);
    assert_int_equal(info.bootargs_len, strlen("dataplane=2-3 hello"));
    assert_memory_equal(info.bootargs, "dataplane=2-3 hello", info.bootargs_len + 1);
    assert_true((const uint8_t *)info.bootargs > b->data);
    assert_true((const uint8_t *)info.bootargs + info.bootargs_len < b->data + b->len);
}

/* FDT-10: a dump without -append has no bootargs: NULL, length 0 */
static void fdt_10_no_bootargs(void **state)
{
    struct dt_info info;

    parse_ok(dump(VIRT_4_NOARGS), &info);
    assert_null(info.bootargs);
    assert_int_equal(info.bootargs_len, 0);
}

/* FDT-11: totalsize is QEMU's 1 MiB; a compacted copy parses to the same result */
static void fdt_11_compact_same(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct dt_info a, b;

    memset(&a, 0, sizeof(a)); /* padding stays zero: the parser writes only fields */
    memset(&b, 0, sizeof(b));
    parse_ok(dump(VIRT_4), &a);
    assert_int_equal(a.totalsize, 0x100000);
    parse_ok(&c, &b);
    assert_int_equal(b.totalsize, c.len);
    b.totalsize = a.totalsize;
    b.bootargs = a.bootargs; /* the only pointer: into a different copy */
    assert_memory_equal(&a, &b, sizeof(a));
    free(c.data);
}

/* FDT-12: QEMU virt lists 32 virtio-mmio transports: sorted by address, 0x0a000000 + 0x200 * i,
 * 0x200 bytes each, SPI 16 + i (INTID 48 + i), none skipped */
static void fdt_12_virtio_transports(void **state)
{
    struct dt_info info;

    parse_ok(dump(VIRT_4), &info);
    assert_int_equal(info.nvirtio, 32);
    assert_int_equal(info.virtio_skipped, 0);
    for (unsigned i = 0; i < 32; i++) {
        if (info.virtio[i].base != 0x0a000000u + 0x200u * i || info.virtio[i].size != 0x200 ||
            info.virtio_intid[i] != 48 + i) {
            fail_msg("transport %u: base 0x%llx size 0x%llx INTID %u", i,
                     (unsigned long long)info.virtio[i].base,
                     (unsigned long long)info.virtio[i].size, info.virtio_intid[i]);
        }
    }
}

/* FDT-13: a virtio node with a PPI or an empty window is skipped and counted; the parse still
 * succeeds and the others keep their slots */
static void fdt_13_virtio_bad_node_skipped(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct dt_info info;

    put32(c.data + find_prop(&c, "virtio_mmio@a000000", "interrupts") + 12, 1); /* a PPI */
    put32(c.data + find_prop(&c, "virtio_mmio@a000200", "reg") + 12 + 12, 0);   /* size 0 */
    parse_ok(&c, &info);
    assert_int_equal(info.nvirtio, 30);
    assert_int_equal(info.virtio_skipped, 2);
    assert_int_equal(info.virtio[0].base, 0x0a000400);
    assert_int_equal(info.virtio_intid[29], 79);
    free(c.data);
}

/* IRD-01: a boot loader's initrd (QEMU -initrd of 1000 bytes with a Linux image): /chosen
 * linux,initrd-start and -end give [0x48000000, +1000); trees without one give 0 and no note */
static void ird_01_initrd_from_qemu(void **state)
{
    struct dt_info info;

    parse_ok(dump(VIRT_4_INITRD), &info);
    assert_int_equal(info.initrd_start, 0x48000000);
    assert_int_equal(info.initrd_end - info.initrd_start, 1000);
    assert_null(info.initrd_note);
    for (enum dump d = 0; d < NDUMPS; d++) {
        parse_ok(dump(d), &info);
        assert_int_equal(info.initrd_start, 0);
        assert_int_equal(info.initrd_end, 0);
        assert_null(info.initrd_note);
    }
}

/* Parse a corrupted copy: it succeeds, without an initrd, and the note names the problem. */
static void expect_initrd_note(struct blob *c, const char *want)
{
    struct dt_info info;

    parse_ok(c, &info);
    assert_int_equal(info.initrd_start, 0);
    assert_int_equal(info.initrd_end, 0);
    assert_non_null(info.initrd_note);
    assert_non_null(strstr(info.initrd_note, want));
    free(c->data);
}

/* IRD-02: a malformed initrd pair is ignored with a note, never fatal: a value neither 4 nor 8
 * bytes long, the end below the start or equal to it, only one of the two */
static void ird_02_initrd_malformed(void **state)
{
    struct blob c = compact(dump(VIRT_4_INITRD));

    put32(c.data + find_prop(&c, "chosen", "linux,initrd-end") + 4, 3); /* len 3 */
    expect_initrd_note(&c, "neither 4 nor 8");
    c = compact(dump(VIRT_4_INITRD));
    put32(c.data + find_prop(&c, "chosen", "linux,initrd-end") + 12, 0x47ffffff);
    expect_initrd_note(&c, "not above");
    c = compact(dump(VIRT_4_INITRD));
    uint32_t start = find_prop(&c, "chosen", "linux,initrd-start");
    put32(c.data + find_prop(&c, "chosen", "linux,initrd-end") + 8, get32(c.data + start + 8));
    expect_initrd_note(&c, "only one"); /* two starts, no end */
    c = compact(dump(VIRT_4_INITRD));
    put32(c.data + find_prop(&c, "chosen", "linux,initrd-end") + 12, 0x48000000);
    expect_initrd_note(&c, "not above"); /* empty */
}

/* ------------------------------------------------------------------ corrupted copies */

/* Parse b expecting failure rc with exactly message want. */
static void expect_error(const struct blob *b, int rc, const char *want)
{
    struct dt_info info;
    char err[ERRLEN];
    int got = parse(b, &info, err);

    if (got != rc || strcmp(err, want) != 0) {
        fail_msg("dt_parse returned %d \"%s\", expected %d \"%s\"", got, err, rc, want);
    }
    assert_int_equal(info.ncpus, 0); /* out is cleared on failure */
}

/* Parse b expecting failure with a message starting with prefix. */
static void expect_error_prefix(const struct blob *b, const char *prefix)
{
    struct dt_info info;
    char err[ERRLEN];
    int got = parse(b, &info, err);

    if (got >= 0 || strncmp(err, prefix, strlen(prefix)) != 0) {
        fail_msg("dt_parse returned %d \"%s\", expected an error starting \"%s\"", got, err,
                 prefix);
    }
}

/* FDT-20: NULL blob, buffers too short for a header, and a blob not 8-byte aligned are refused */
static void fdt_20_short(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct blob shorter = {c.data, 39};
    struct dt_info info;
    char err[ERRLEN];

    assert_int_equal(dt_parse(NULL, 100, &info, err, sizeof(err)), -22);
    assert_string_equal(err, "no device tree: NULL blob pointer");
    expect_error(&shorter, -22,
                 "device tree truncated: 39 bytes available, less than the "
                 "40-byte header");
    shorter.len = 0;
    expect_error(&shorter, -22,
                 "device tree truncated: 0 bytes available, less than the "
                 "40-byte header");

    uint8_t *raw = malloc(c.len + 4);
    assert_non_null(raw);
    memcpy(raw + 4, c.data, c.len); /* malloc is 16-byte aligned, so raw + 4 is not 8 */
    shorter = (struct blob){raw + 4, c.len};
    expect_error_prefix(&shorter, "device tree malformed: blob address 0x");
    free(raw);
    free(c.data);
}

/* FDT-21: bad magic names the value read */
static void fdt_21_bad_magic(void **state)
{
    struct blob c = compact(dump(VIRT_4));

    put32(c.data, 0x12345678);
    expect_error(&c, -22, "no device tree: bad magic 0x12345678 at the start of RAM");
    put32(c.data, 0);
    expect_error(&c, -22, "no device tree: bad magic 0x00000000 at the start of RAM");
    free(c.data);
}

/* FDT-22: totalsize larger than the bytes available, or smaller than the header */
static void fdt_22_totalsize(void **state)
{
    struct blob b = *dump(VIRT_4);

    struct blob c = compact(&b);

    b.len = 65536;
    expect_error(&b, -22, "device tree truncated: totalsize 1048576 > 65536 bytes available");
    put32(c.data + H_TOTALSIZE, 39);
    expect_error(&c, -22, "device tree malformed: totalsize 39 is smaller than the 40-byte header");
    free(c.data);
}

/* FDT-23: every truncation of the compacted 4-CPU blob fails, in a heap buffer of that size,
 * both with the original totalsize and with totalsize patched to the truncated length */
static void fdt_23_truncations(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct dt_info info;
    char err[ERRLEN];

    for (size_t len = 0; len < c.len; len++) {
        uint8_t *p = dup_bytes(c.data, len);

        for (int patch = 0; patch < 2; patch++) {
            if (patch == 1 && len >= 8) {
                put32(p + H_TOTALSIZE, (uint32_t)len);
            }
            int rc = dt_parse(p, len, &info, err, sizeof(err));
            if (rc >= 0 || err[0] == '\0') {
                fail_msg("truncation to %zu bytes (patch %d): rc %d \"%s\"", len, patch, rc, err);
            }
        }
        free(p);
    }
    free(c.data);
}

/* FDT-24: every shorter size_dt_struct fails (the walk meets the end of the block) */
static void fdt_24_struct_truncations(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t full = get32(c.data + H_SIZE_STRUCT);
    struct dt_info info;
    char err[ERRLEN];

    put32(c.data + H_SIZE_STRUCT, 6); /* the root's empty name and its padding need 4 bytes */
    expect_error(&c, -22,
                 "device tree malformed: node name at offset 0x44 runs past the "
                 "structure block");
    for (uint32_t size = 0; size < full; size++) {
        put32(c.data + H_SIZE_STRUCT, size);
        int rc = parse(&c, &info, err);
        if (rc >= 0 || strncmp(err, "device tree malformed: ", 23) != 0) {
            fail_msg("size_dt_struct %u of %u: rc %d \"%s\"", size, full, rc, err);
        }
    }
    free(c.data);
}

/* FDT-25: every shorter size_dt_strings fails (a property name leaves the block) */
static void fdt_25_strings_truncations(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t full = get32(c.data + H_SIZE_STRINGS);
    struct dt_info info;
    char err[ERRLEN];

    for (uint32_t size = 0; size < full; size++) {
        put32(c.data + H_SIZE_STRINGS, size);
        int rc = parse(&c, &info, err);
        if (rc >= 0 || strstr(err, "strings block") == NULL) {
            fail_msg("size_dt_strings %u of %u: rc %d \"%s\"", size, full, rc, err);
        }
    }
    free(c.data);
}

/* FDT-26: structure block offset out of range, wrapping around, or misaligned */
static void fdt_26_struct_offset(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t off = get32(c.data + H_OFF_STRUCT);
    char want[ERRLEN];

    put32(c.data + H_OFF_STRUCT, 0x200000);
    snprintf(want, sizeof(want),
             "device tree malformed: structure block at offset 0x200000 size 0x%x is misaligned "
             "or lies outside totalsize 0x%zx",
             get32(c.data + H_SIZE_STRUCT), c.len);
    expect_error(&c, -22, want);
    put32(c.data + H_OFF_STRUCT, 0xfffffff0); /* off + size wraps to a small number */
    expect_error_prefix(&c, "device tree malformed: structure block at offset 0xfffffff0");
    put32(c.data + H_OFF_STRUCT, off + 2);
    put32(c.data + H_SIZE_STRUCT, 16);
    expect_error_prefix(&c, "device tree malformed: structure block at offset 0x42");
    put32(c.data + H_OFF_STRUCT, off);
    put32(c.data + H_OFF_STRINGS, (uint32_t)c.len - 4);
    expect_error_prefix(&c, "device tree malformed: strings block at offset");
    free(c.data);
}

/* FDT-27: versions below 16 or last_comp_version above 17 are refused; version 16 reads */
static void fdt_27_versions(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct dt_info info;

    put32(c.data + H_VERSION, 15);
    expect_error(&c, -22,
                 "device tree: unsupported version 15 (last compatible 16); this "
                 "parser reads versions 16 and 17");
    put32(c.data + H_VERSION, 18);
    put32(c.data + H_LAST_COMP, 18);
    expect_error_prefix(&c, "device tree: unsupported version 18 (last compatible 18)");
    /* Version 16 has no size_dt_struct: the walk is bounded by totalsize instead. */
    put32(c.data + H_VERSION, 16);
    put32(c.data + H_LAST_COMP, 16);
    put32(c.data + H_SIZE_STRUCT, 0);
    parse_ok(&c, &info);
    assert_int_equal(info.ncpus, 4);
    free(c.data);
}

/* FDT-28: a property whose length runs past the structure block */
static void fdt_28_prop_past_block(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "", "interrupt-parent");
    char want[ERRLEN];

    put32(c.data + at + 4, 0x7ffffff0);
    snprintf(want, sizeof(want),
             "device tree malformed: property at offset 0x%x runs past the structure block", at);
    expect_error(&c, -22, want);
    put32(c.data + at + 4, 0xffffffff); /* would wrap a 32-bit offset */
    expect_error(&c, -22, want);
    free(c.data);
}

/* FDT-29: a property name offset past the strings block, and one at its very end */
static void fdt_29_name_offset(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "psci", "method");
    char want[ERRLEN];

    put32(c.data + at + 8, get32(c.data + H_SIZE_STRINGS));
    snprintf(want, sizeof(want),
             "device tree malformed: property at offset 0x%x has a name offset past the strings "
             "block",
             at);
    expect_error(&c, -22, want);
    put32(c.data + at + 8, 0xffffffff);
    expect_error(&c, -22, want);
    free(c.data);
}

/* FDT-30: an unknown token, and an FDT_END_NODE too many */
static void fdt_30_bad_tokens(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "psci", "method");
    char want[ERRLEN];

    put32(c.data + at, 5);
    snprintf(want, sizeof(want), "device tree malformed: unknown token 0x00000005 at offset 0x%x",
             at);
    expect_error(&c, -22, want);
    free(c.data);

    /* The root's last FDT_END_NODE, doubled: the FDT_END before it becomes END_NODE. */
    c = compact(dump(VIRT_4));
    at = get32(c.data + H_OFF_STRUCT) + get32(c.data + H_SIZE_STRUCT) - 4;
    assert_int_equal(get32(c.data + at), TOK_END);
    put32(c.data + at, TOK_END_NODE);
    expect_error_prefix(&c, "device tree malformed: FDT_END_NODE at offset");
    free(c.data);
}

/* FDT-31: /psci renamed to /psck: -ENOENT naming the node */
static void fdt_31_missing_psci(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_node(&c, "psci");

    c.data[at + 4 + 3] = 'k';
    expect_error(&c, -2, "device tree: missing node /psci");
    free(c.data);
}

/* FDT-32: /psci method "foo" is refused, quoting it */
static void fdt_32_psci_method(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "psci", "method");

    memcpy(c.data + at + 12, "foo", 3);
    expect_error(&c, -22, "device tree: /psci method \"foo\" is neither hvc nor smc");
    memcpy(c.data + at + 12, "hvcx", 4); /* no NUL inside the 4-byte value */
    expect_error(&c, -22, "device tree: /psci method \"hvcx\" is neither hvc nor smc");
    free(c.data);
}

/* xorshift32: a fixed-seed generator so a failure reproduces. */
static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Parse a corrupted copy: success or a non-empty message; never a sanitizer report. */
static bool parse_any(const struct blob *b, const char *what, unsigned long i)
{
    struct dt_info info;
    char err[ERRLEN];
    int rc;

    err[0] = 'X';
    rc = parse(b, &info, err);
    if (rc > 0 || (rc < 0 && (err[0] == '\0' || strlen(err) >= ERRLEN)) ||
        (rc == 0 && err[0] != '\0')) {
        fail_msg("%s %lu: rc %d, message \"%s\"", what, i, rc, err);
    }
    return rc == 0;
}

/* FDT-33: 20,000 copies with 1-8 random bytes changed: each parses or fails with a message */
static void fdt_33_random_sweep(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint8_t *orig = dup_bytes(c.data, c.len);
    uint32_t seed = 0x2545f491;
    unsigned long ok = 0;

    for (unsigned long i = 0; i < 20000; i++) {
        unsigned n = 1 + rng_next(&seed) % 8;

        for (unsigned k = 0; k < n; k++) {
            /* One change in four lands in the 64 bytes of header and reservation map. */
            uint32_t r = rng_next(&seed);
            size_t at = (r & 3) == 0 ? (r >> 2) % 64 : (r >> 2) % c.len;

            c.data[at] ^= (uint8_t)(1 + rng_next(&seed) % 255);
        }
        ok += parse_any(&c, "random corruption", i);
        memcpy(c.data, orig, c.len);
    }
    print_message("# FDT-33: 20000 random corruptions: %lu parsed, %lu refused\n", ok, 20000 - ok);
    free(orig);
    free(c.data);
}

/* FDT-34: every byte of the blob set to 0x00, 0xff, 0x80 and flipped in bit 0, one at a time */
static void fdt_34_every_byte(void **state)
{
    static const int change[] = {0x00, 0xff, 0x80, -1};
    struct blob c = compact(dump(VIRT_4));
    unsigned long ok = 0, n = 0;

    for (size_t at = 0; at < c.len; at++) {
        uint8_t keep = c.data[at];

        for (size_t k = 0; k < sizeof(change) / sizeof(change[0]); k++) {
            c.data[at] = change[k] < 0 ? keep ^ 1 : (uint8_t)change[k];
            ok += parse_any(&c, "byte change at offset", (unsigned long)at);
            n++;
        }
        c.data[at] = keep;
    }
    print_message("# FDT-34: %lu single-byte changes: %lu parsed, %lu refused\n", n, ok, n - ok);
    free(c.data);
}

/* FDT-35: err is always NUL-terminated inside errlen; errlen 0 or a NULL err is harmless */
static void fdt_35_errlen(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    struct dt_info info;
    char err[16];

    put32(c.data, 0x12345678);
    memset(err, '#', sizeof(err));
    assert_int_equal(dt_parse(c.data, c.len, &info, err, 8), -22);
    assert_string_equal(err, "no devi");
    for (size_t i = 8; i < sizeof(err); i++) {
        assert_int_equal(err[i], '#');
    }
    memset(err, '#', sizeof(err));
    assert_int_equal(dt_parse(c.data, c.len, &info, err, 1), -22);
    assert_int_equal(err[0], '\0');
    assert_int_equal(err[1], '#');
    assert_int_equal(dt_parse(c.data, c.len, &info, err + 1, 0), -22);
    assert_int_equal(err[1], '#');
    assert_int_equal(dt_parse(c.data, c.len, &info, NULL, 100), -22);
    put32(c.data, FDT_MAGIC);
    memset(err, '#', sizeof(err));
    assert_int_equal(dt_parse(c.data, c.len, &info, err, sizeof(err)), 0);
    assert_int_equal(err[0], '\0'); /* success leaves an empty message */
    free(c.data);
}

/* FDT-36: bootargs overwritten with FDT_NOP tokens reads as absent (NOPs are skipped) */
static void fdt_36_nop(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "chosen", "bootargs");
    uint32_t end = (at + 12 + get32(c.data + at + 4) + 3) & ~3u;
    struct dt_info info;

    for (uint32_t off = at; off < end; off += 4) {
        put32(c.data + off, TOK_NOP);
    }
    parse_ok(&c, &info);
    assert_null(info.bootargs);
    assert_int_equal(info.ncpus, 4);
    free(c.data);
}

/* ------------------------------------------------------------------ trees built here */

struct builder {
    uint8_t st[65536];
    uint32_t st_len;
    char str[16384]; /* every property's name, not shared: 520 cpu nodes fit */
    uint32_t str_len;
    bool strings_first; /* lay the strings block out before the structure block */
};

static void b_word(struct builder *b, uint32_t v)
{
    assert_true(b->st_len + 4 <= sizeof(b->st));
    put32(b->st + b->st_len, v);
    b->st_len += 4;
}

static void b_bytes(struct builder *b, const void *p, uint32_t len)
{
    assert_true(b->st_len + len + 3 <= sizeof(b->st));
    memcpy(b->st + b->st_len, p, len);
    b->st_len += len;
    while (b->st_len % 4 != 0) {
        b->st[b->st_len++] = 0;
    }
}

static void b_begin(struct builder *b, const char *name)
{
    b_word(b, TOK_BEGIN_NODE);
    b_bytes(b, name, (uint32_t)strlen(name) + 1);
}

static void b_end(struct builder *b)
{
    b_word(b, TOK_END_NODE);
}

static void b_prop(struct builder *b, const char *name, const void *val, uint32_t len)
{
    uint32_t nlen = (uint32_t)strlen(name) + 1;

    assert_true(b->str_len + nlen <= sizeof(b->str));
    memcpy(b->str + b->str_len, name, nlen);
    b_word(b, TOK_PROP);
    b_word(b, len);
    b_word(b, b->str_len);
    b_bytes(b, val, len);
    b->str_len += nlen;
}

static void b_str(struct builder *b, const char *name, const char *s)
{
    b_prop(b, name, s, (uint32_t)strlen(s) + 1);
}

/* A property of n 32-bit cells. */
static void b_cells(struct builder *b, const char *name, int n, ...)
{
    uint8_t val[64];
    va_list ap;

    assert_true(n * 4 <= (int)sizeof(val));
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        put32(val + 4 * i, va_arg(ap, uint32_t));
    }
    va_end(ap);
    b_prop(b, name, val, (uint32_t)n * 4);
}

/* Header, empty reservation map, then the structure and strings blocks (or strings first), in
 * an exact-size buffer. */
static struct blob b_finish(struct builder *b)
{
    uint32_t off_struct, off_strings;
    struct blob out;

    b_word(b, TOK_END);
    if (b->strings_first) {
        off_strings = 40 + 16;
        off_struct = (off_strings + b->str_len + 3) & ~3u;
        out.len = off_struct + b->st_len;
    } else {
        off_struct = 40 + 16;
        off_strings = off_struct + b->st_len;
        out.len = off_strings + b->str_len;
    }
    out.data = calloc(1, out.len);
    assert_non_null(out.data);
    put32(out.data + H_MAGIC, FDT_MAGIC);
    put32(out.data + H_TOTALSIZE, (uint32_t)out.len);
    put32(out.data + H_OFF_STRUCT, off_struct);
    put32(out.data + H_OFF_STRINGS, off_strings);
    put32(out.data + H_OFF_RSVMAP, 40);
    put32(out.data + H_VERSION, 17);
    put32(out.data + H_LAST_COMP, 16);
    put32(out.data + H_SIZE_STRINGS, b->str_len);
    put32(out.data + H_SIZE_STRUCT, b->st_len);
    memcpy(out.data + off_struct, b->st, b->st_len);
    memcpy(out.data + off_strings, b->str, b->str_len);
    return out;
}

/* What tree_build() puts in a QEMU-virt-like tree; zero means "as QEMU does". */
struct tree {
    unsigned ncpus;     /* 2 if 0 */
    bool default_cells; /* root without #address-cells/#size-cells: 2 and 1 */
    bool no_psci, no_memory, no_cpus, no_cpu_nodes, no_gic, no_uart, no_timer;
    const char *psci_name;   /* "psci" if NULL */
    unsigned nmem_ranges;    /* memory reg entries: 16 MiB at 0x40000000 + i * 256 MiB, entry
                                1 of size 0; one 512 MiB entry if 0 */
    bool strings_first;      /* strings block before the structure block, which ends the blob */
    unsigned gicr_regions;   /* #redistributor-regions, absent if 0 */
    const char *psci_method; /* "hvc" if NULL */
    const char *stdout_path; /* /chosen/stdout-path, absent if NULL */
    bool two_uarts;          /* a second pl011 at 0x09040000, INTID 40 */
    bool uart_disabled;      /* the first pl011 has status = "disabled" */
    const char *gic_compat;  /* compatible list of the GIC, "arm,gic-v3" if NULL */
    uint32_t gic_compat_len; /* its length including NULs, strlen + 1 if 0 */
};

/* A reg entry of one address and one size in the root's cells (2/2 or 2/1). */
static void b_reg(struct builder *b, const struct tree *t, int n, const uint64_t *v)
{
    uint8_t val[256];
    uint32_t len = 0;

    assert_true(n * 8 <= (int)sizeof(val));
    for (int i = 0; i < n; i++) {
        put32(val + len, (uint32_t)(v[i] >> 32));
        put32(val + len + 4, (uint32_t)v[i]);
        len += 8;
        if (i % 2 == 1 && t->default_cells) {
            memmove(val + len - 8, val + len - 4, 4); /* size: one cell */
            len -= 4;
        }
    }
    b_prop(b, "reg", val, len);
}

static void tree_cpus(struct builder *b, const struct tree *t)
{
    unsigned n = t->ncpus != 0 ? t->ncpus : 2;
    char name[32];

    b_begin(b, "cpus");
    b_cells(b, "#address-cells", 1, 1);
    b_cells(b, "#size-cells", 1, 0);
    for (unsigned i = 0; i < n && !t->no_cpu_nodes; i++) {
        snprintf(name, sizeof(name), "cpu@%x", i);
        b_begin(b, name);
        b_cells(b, "reg", 1, (uint32_t)qemu_mpidr(i));
        b_str(b, "device_type", "cpu");
        b_end(b);
    }
    b_end(b);
}

static void tree_uart(struct builder *b, const struct tree *t, const char *name, uint64_t base,
                      uint32_t spi, bool disabled)
{
    uint64_t reg[] = {base, 0x1000};

    b_begin(b, name);
    b_reg(b, t, 2, reg);
    b_cells(b, "interrupts", 3, 0, spi, 4);
    b_prop(b, "compatible", "arm,pl011\0arm,primecell", 24);
    if (disabled) {
        b_str(b, "status", "disabled");
    }
    b_end(b);
}

static void tree_gic(struct builder *b, const struct tree *t)
{
    const char *compat = t->gic_compat != NULL ? t->gic_compat : "arm,gic-v3";
    uint32_t clen = t->gic_compat_len != 0 ? t->gic_compat_len : (uint32_t)strlen(compat) + 1;
    uint64_t reg[] = {0x08000000, 0x10000, 0x080a0000, 0xf60000, 0x4000000000, 0x1000000};

    b_begin(b, "intc@8000000");
    b_reg(b, t, t->gicr_regions == 2 ? 6 : 4, reg);
    if (t->gicr_regions != 0) {
        b_cells(b, "#redistributor-regions", 1, t->gicr_regions);
    }
    b_prop(b, "compatible", compat, clen);
    b_cells(b, "#interrupt-cells", 1, 3);
    b_begin(b, "its@8080000");
    b_str(b, "compatible", "arm,gic-v3-its");
    b_end(b);
    b_end(b);
}

static void tree_misc(struct builder *b, const struct tree *t)
{
    uint64_t mem[32] = {0x40000000, 0x20000000};

    assert_true(t->nmem_ranges <= 16);
    for (unsigned i = 0; i < t->nmem_ranges; i++) {
        mem[2 * i] = 0x40000000 + (uint64_t)i * 0x10000000;
        mem[2 * i + 1] = i == 1 ? 0 : 0x1000000;
    }
    if (!t->no_psci) {
        b_begin(b, t->psci_name != NULL ? t->psci_name : "psci");
        b_str(b, "method", t->psci_method != NULL ? t->psci_method : "hvc");
        b_end(b);
    }
    if (!t->no_memory) {
        b_begin(b, "memory@40000000");
        b_reg(b, t, t->nmem_ranges != 0 ? 2 * (int)t->nmem_ranges : 2, mem);
        b_str(b, "device_type", "memory");
        b_end(b);
    }
    if (!t->no_timer) {
        b_begin(b, "timer");
        b_cells(b, "interrupts", 12, 1, 13, 4, 1, 14, 4, 1, 11, 4, 1, 10, 4);
        b_prop(b, "compatible", "arm,armv8-timer\0arm,armv7-timer", 32);
        b_end(b);
    }
}

static struct blob tree_build(const struct tree *t)
{
    static struct builder b;

    memset(&b, 0, sizeof(b));
    b.strings_first = t->strings_first;
    b_begin(&b, "");
    if (!t->default_cells) {
        b_cells(&b, "#address-cells", 1, 2);
        b_cells(&b, "#size-cells", 1, 2);
    }
    tree_misc(&b, t);
    if (!t->no_cpus) {
        tree_cpus(&b, t);
    }
    if (!t->no_gic) {
        tree_gic(&b, t);
    }
    if (!t->no_uart) {
        tree_uart(&b, t, "pl011@9000000", 0x09000000, 1, t->uart_disabled);
    }
    if (t->two_uarts) {
        tree_uart(&b, t, "pl011@9040000", 0x09040000, 8, false);
    }
    b_begin(&b, "aliases");
    b_str(&b, "serial1", "/pl011@9040000");
    b_end(&b);
    b_begin(&b, "chosen");
    if (t->stdout_path != NULL) {
        b_str(&b, "stdout-path", t->stdout_path);
    }
    b_end(&b);
    b_end(&b);
    return b_finish(&b);
}

static void tree_ok(const struct tree *t, struct dt_info *info)
{
    struct blob blob = tree_build(t);

    parse_ok(&blob, info);
    free(blob.data);
}

static void tree_error(const struct tree *t, int rc, const char *want)
{
    struct blob blob = tree_build(t);

    expect_error(&blob, rc, want);
    free(blob.data);
}

/* FDT-40: a small built tree parses to what was put in it */
static void fdt_40_built_tree(void **state)
{
    struct tree t = {0};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.ncpus, 2);
    assert_int_equal(info.cpu_mpidr[1], 1);
    assert_int_equal(info.mem[0].size, 0x20000000);
    assert_int_equal(info.gicr[0].base, 0x080a0000);
    assert_int_equal(info.uart.base, 0x09000000);
    assert_int_equal(info.timer_intid[DT_TIMER_VIRT], 27);
    assert_null(info.bootargs);
}

/* FDT-41: a root without #address-cells/#size-cells reads reg as 2 + 1 cells */
static void fdt_41_default_cells(void **state)
{
    struct tree t = {.default_cells = true};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.nmem, 1);
    assert_int_equal(info.mem[0].base, 0x40000000);
    assert_int_equal(info.mem[0].size, 0x20000000);
    assert_int_equal(info.gicd.base, 0x08000000);
    assert_int_equal(info.gicd.size, 0x10000);
    assert_int_equal(info.gicr[0].size, 0xf60000);
}

/* FDT-42: stdout-path "/pl011@9040000:115200n8" picks the second UART; without it the first */
static void fdt_42_stdout_path(void **state)
{
    struct tree t = {.two_uarts = true, .stdout_path = "/pl011@9040000:115200n8"};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09040000);
    assert_int_equal(info.uart_intid, 40);
    t.stdout_path = NULL;
    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09000000);
    assert_int_equal(info.uart_intid, 33);
    t.stdout_path = "/timer"; /* not a pl011: fall back to the first one */
    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09000000);
}

/* FDT-43: stdout-path "serial1:115200" goes through /aliases; a disabled pl011 is skipped */
static void fdt_43_alias_and_status(void **state)
{
    struct tree t = {.two_uarts = true, .stdout_path = "serial1:115200"};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09040000);
    t.stdout_path = NULL;
    t.uart_disabled = true;
    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09040000);
    t.two_uarts = false;
    tree_error(&t, -2, "device tree: no arm,pl011 UART");
}

/* FDT-44: #redistributor-regions = <2> fills two GICR ranges from reg[1] and reg[2] */
static void fdt_44_two_gicr(void **state)
{
    struct tree t = {.gicr_regions = 2};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.ngicr, 2);
    assert_int_equal(info.gicr[0].base, 0x080a0000);
    assert_int_equal(info.gicr[1].base, 0x4000000000);
    assert_int_equal(info.gicr[1].size, 0x1000000);
    t.gicr_regions = 5;
    tree_error(&t, -22, "device tree: /intc@8000000 #redistributor-regions 5 is outside 1..4");
    t.gicr_regions = 3; /* reg has only 1 + 1 entries */
    tree_error(&t, -22,
               "device tree: /intc@8000000 reg has too few entries for the distributor "
               "and 3 redistributor region(s)");
}

/* FDT-45: compatible matches any whole entry of the list, never a prefix or a substring */
static void fdt_45_compatible_list(void **state)
{
    struct tree t = {.gic_compat = "vendor,gic\0arm,gic-v3", .gic_compat_len = 22};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.gicd.base, 0x08000000);
    t.gic_compat = "arm,gic-v3-its";
    t.gic_compat_len = 0;
    tree_error(&t, -2, "device tree: no arm,gic-v3 interrupt controller");
    t.gic_compat = "arm,gic-v"; /* a prefix of the wanted string */
    tree_error(&t, -2, "device tree: no arm,gic-v3 interrupt controller");
    t.gic_compat = "arm,gic-v3";
    t.gic_compat_len = 10; /* no terminating NUL inside the property */
    tree_error(&t, -2, "device tree: no arm,gic-v3 interrupt controller");
}

/* FDT-46: 520 cpu nodes: ncpus_total 520, the first 512 (DT_MAX_CPUS) MPIDRs recorded */
static void fdt_46_many_cpus(void **state)
{
    struct tree t = {.ncpus = 520};
    struct dt_info info;

    assert_int_equal(DT_MAX_CPUS, 512);
    tree_ok(&t, &info);
    assert_int_equal(info.ncpus_total, 520);
    assert_int_equal(info.ncpus, DT_MAX_CPUS);
    assert_int_equal(info.cpu_mpidr[63], 0x30f);
    assert_int_equal(info.cpu_mpidr[511], 0x1f0f);
}

/* FDT-47: each required node missing on its own gives its own message */
static void fdt_47_missing_nodes(void **state)
{
    struct tree t;

    t = (struct tree){.no_psci = true};
    tree_error(&t, -2, "device tree: missing node /psci");
    t = (struct tree){.psci_method = "smcc"};
    tree_error(&t, -22, "device tree: /psci method \"smcc\" is neither hvc nor smc");
    t = (struct tree){.no_memory = true};
    tree_error(&t, -2, "device tree: no memory node");
    t = (struct tree){.no_cpus = true};
    tree_error(&t, -2, "device tree: missing node /cpus");
    t = (struct tree){.no_cpu_nodes = true};
    tree_error(&t, -2, "device tree: no cpu nodes under /cpus");
    t = (struct tree){.no_gic = true};
    tree_error(&t, -2, "device tree: no arm,gic-v3 interrupt controller");
    t = (struct tree){.no_uart = true};
    tree_error(&t, -2, "device tree: no arm,pl011 UART");
    t = (struct tree){.no_timer = true};
    tree_error(&t, -2, "device tree: no arm,armv8-timer node");
}

/* FDT-51: path components match the whole node name, or the name before its unit address */
static void fdt_51_node_names(void **state)
{
    struct tree t = {.psci_name = "psci@0"};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.psci, DT_PSCI_HVC);
    t.psci_name = "pscix";
    tree_error(&t, -2, "device tree: missing node /psci");
    t.psci_name = "psc";
    tree_error(&t, -2, "device tree: missing node /psci");
    t = (struct tree){.two_uarts = true, .stdout_path = "/pl011@9040"}; /* no such node */
    tree_ok(&t, &info);
    assert_int_equal(info.uart.base, 0x09000000);
}

/* FDT-52: memory reg entries of size 0 are dropped, at most DT_MAX_MEM are kept */
static void fdt_52_memory_ranges(void **state)
{
    struct tree t = {.nmem_ranges = 3};
    struct dt_info info;

    tree_ok(&t, &info);
    assert_int_equal(info.nmem, 2);
    assert_int_equal(info.mem[0].base, 0x40000000);
    assert_int_equal(info.mem[1].base, 0x60000000);
    assert_int_equal(info.mem[1].size, 0x1000000);
    t.nmem_ranges = 12;
    tree_ok(&t, &info);
    assert_int_equal(info.nmem, DT_MAX_MEM);
    assert_int_equal(info.mem[DT_MAX_MEM - 1].base, 0x40000000 + 8 * (uint64_t)0x10000000);
}

/* FDT-53: short values are refused before they are read: a 0-byte #size-cells, a timer with
 * 3 interrupt triples (the freed words become FDT_NOP so the token stream stays valid) */
static void fdt_53_short_values(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "cpus", "#size-cells");

    put32(c.data + at + 4, 0);
    put32(c.data + at + 12, TOK_NOP);
    expect_error(&c, -22, "device tree: /cpus #size-cells is 0 bytes, not one 32-bit cell");
    free(c.data);

    c = compact(dump(VIRT_4));
    at = find_prop(&c, "timer", "interrupts");
    put32(c.data + at + 4, 36);
    for (int i = 0; i < 3; i++) {
        put32(c.data + at + 12 + 36 + 4 * i, TOK_NOP);
    }
    expect_error(&c, -22,
                 "device tree: /timer interrupts is 36 bytes, need 4 <type number flags> "
                 "triple(s)");
    free(c.data);
}

/* FDT-54: with the structure block last in the blob, every truncation of it is refused and
 * nothing past it is read (the heap buffer ends with the block) */
static void fdt_54_struct_at_end(void **state)
{
    struct tree t = {.strings_first = true, .stdout_path = "/pl011@9000000"};
    struct blob full = tree_build(&t);
    uint32_t off = get32(full.data + H_OFF_STRUCT);
    struct dt_info info;
    char err[ERRLEN];

    parse_ok(&full, &info);
    assert_int_equal(off + get32(full.data + H_SIZE_STRUCT), full.len);
    for (uint32_t len = off; len < full.len; len++) {
        struct blob cut = {dup_bytes(full.data, len), len};

        put32(cut.data + H_TOTALSIZE, len);
        put32(cut.data + H_SIZE_STRUCT, len - off);
        int rc = parse(&cut, &info, err);
        if (rc >= 0 || strncmp(err, "device tree malformed: ", 23) != 0) {
            fail_msg("structure block cut to %u bytes: rc %d \"%s\"", len - off, rc, err);
        }
        free(cut.data);
    }
    free(full.data);
}

/* A minimal tree of `depth` nested nodes under the root, and nothing else. */
static struct blob nested(int depth)
{
    static struct builder b;

    memset(&b, 0, sizeof(b));
    b_begin(&b, "");
    for (int i = 0; i < depth; i++) {
        b_begin(&b, "n");
    }
    for (int i = 0; i <= depth; i++) {
        b_end(&b);
    }
    return b_finish(&b);
}

/* FDT-48: nodes nested 16 deep pass the structure check; 17 deep is refused */
static void fdt_48_depth(void **state)
{
    struct blob ok = nested(15);
    struct blob deep = nested(16);
    char want[ERRLEN];

    expect_error(&ok, -2, "device tree: missing node /psci"); /* got past the walk */
    snprintf(want, sizeof(want),
             "device tree malformed: node at offset 0x%x is nested more than 16 levels deep",
             40 + 16 + 16 * 8);
    expect_error(&deep, -22, want);
    free(ok.data);
    free(deep.data);
}

/* FDT-49: a property after a subnode, a second root, no root at all, nodes left open */
static void fdt_49_structure_rules(void **state)
{
    static struct builder b;
    struct blob blob;

    memset(&b, 0, sizeof(b));
    b_begin(&b, "");
    b_begin(&b, "a");
    b_end(&b);
    b_cells(&b, "late", 1, 1);
    b_end(&b);
    blob = b_finish(&b);
    expect_error(&blob, -22, "device tree malformed: property at offset 0x4c follows a subnode");
    free(blob.data);

    memset(&b, 0, sizeof(b));
    b_begin(&b, "");
    b_end(&b);
    b_begin(&b, "");
    b_end(&b);
    blob = b_finish(&b);
    expect_error(&blob, -22, "device tree malformed: second root node at offset 0x44");
    free(blob.data);

    memset(&b, 0, sizeof(b));
    blob = b_finish(&b);
    expect_error(&blob, -22, "device tree malformed: FDT_END at offset 0x38 comes before any node");
    free(blob.data);

    memset(&b, 0, sizeof(b));
    b_begin(&b, "");
    b_begin(&b, "a");
    blob = b_finish(&b);
    expect_error(&blob, -22,
                 "device tree malformed: FDT_END at offset 0x48 with 2 node(s) still open");
    free(blob.data);
}

/* FDT-50: malformed values: unterminated bootargs, duplicate cpu reg, SPI timer, bad reg size */
static void fdt_50_bad_values(void **state)
{
    struct blob c = compact(dump(VIRT_4));
    uint32_t at = find_prop(&c, "chosen", "bootargs");
    uint32_t len = get32(c.data + at + 4);

    c.data[at + 12 + len - 1] = 'x';
    expect_error(&c, -22,
                 "device tree malformed: /chosen/bootargs is not NUL-terminated within "
                 "its 20 bytes");
    c.data[at + 12 + len - 1] = '\0';

    at = find_prop(&c, "cpu@2", "reg");
    put32(c.data + at + 12, 1);
    expect_error(&c, -22, "device tree: /cpus/cpu@2 reg 0x1 repeats the MPIDR of an earlier cpu");
    put32(c.data + at + 12, 2);

    at = find_prop(&c, "timer", "interrupts");
    put32(c.data + at + 12 + 24, 0);
    expect_error(&c, -22, "device tree: /timer interrupt 2 <type 0 number 11> is not a PPI");
    put32(c.data + at + 12 + 24, 1);

    at = find_prop(&c, "", "#size-cells"); /* root: 2 -> 1, so 16-byte reg entries misfit */
    put32(c.data + at + 12, 1);
    expect_error(&c, -22,
                 "device tree: /memory@40000000 reg is 16 bytes, not a whole number of "
                 "12-byte entries");
    free(c.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fdt_01_four_cpus),
        cmocka_unit_test(fdt_02_one_cpu),
        cmocka_unit_test(fdt_03_sixty_four_cpus),
        cmocka_unit_test(fdt_04_memory),
        cmocka_unit_test(fdt_05_gic),
        cmocka_unit_test(fdt_06_uart),
        cmocka_unit_test(fdt_07_timer),
        cmocka_unit_test(fdt_08_psci),
        cmocka_unit_test(fdt_09_bootargs),
        cmocka_unit_test(fdt_10_no_bootargs),
        cmocka_unit_test(fdt_11_compact_same),
        cmocka_unit_test(fdt_12_virtio_transports),
        cmocka_unit_test(fdt_13_virtio_bad_node_skipped),
        cmocka_unit_test(fdt_20_short),
        cmocka_unit_test(fdt_21_bad_magic),
        cmocka_unit_test(fdt_22_totalsize),
        cmocka_unit_test(fdt_23_truncations),
        cmocka_unit_test(fdt_24_struct_truncations),
        cmocka_unit_test(fdt_25_strings_truncations),
        cmocka_unit_test(fdt_26_struct_offset),
        cmocka_unit_test(fdt_27_versions),
        cmocka_unit_test(fdt_28_prop_past_block),
        cmocka_unit_test(fdt_29_name_offset),
        cmocka_unit_test(fdt_30_bad_tokens),
        cmocka_unit_test(fdt_31_missing_psci),
        cmocka_unit_test(fdt_32_psci_method),
        cmocka_unit_test(fdt_33_random_sweep),
        cmocka_unit_test(fdt_34_every_byte),
        cmocka_unit_test(fdt_35_errlen),
        cmocka_unit_test(fdt_36_nop),
        cmocka_unit_test(fdt_40_built_tree),
        cmocka_unit_test(fdt_41_default_cells),
        cmocka_unit_test(fdt_42_stdout_path),
        cmocka_unit_test(fdt_43_alias_and_status),
        cmocka_unit_test(fdt_44_two_gicr),
        cmocka_unit_test(fdt_45_compatible_list),
        cmocka_unit_test(fdt_46_many_cpus),
        cmocka_unit_test(fdt_47_missing_nodes),
        cmocka_unit_test(fdt_48_depth),
        cmocka_unit_test(fdt_49_structure_rules),
        cmocka_unit_test(fdt_50_bad_values),
        cmocka_unit_test(fdt_51_node_names),
        cmocka_unit_test(fdt_52_memory_ranges),
        cmocka_unit_test(fdt_53_short_values),
        cmocka_unit_test(fdt_54_struct_at_end),
        cmocka_unit_test(fdt_55_virt_124),
        cmocka_unit_test(fdt_56_virt_512),
        cmocka_unit_test(ird_01_initrd_from_qemu),
        cmocka_unit_test(ird_02_initrd_malformed),
    };

    return cmocka_run_group_tests_name("fdt", tests, NULL, NULL);
}
