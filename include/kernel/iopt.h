/* SPDX-License-Identifier: MIT */
/*
 * iopt.h — I/O page tables: the translation tables the SMMU walks for a claimed function's DMA
 * (kernel/dev/iopt.c), in the VMSAv8-64 stage-1 format of the CPU's own tables (ARM ARM D8.3),
 * 4 KiB granule, 39-bit input addresses (a context descriptor's T0SZ = 25), walks starting at
 * level 1.
 *
 * A table set maps exactly one range, [iova, iova + pages * 4 KiB) onto physically contiguous
 * pages [pa, ...), readable and writable by the device, never executable; every other input
 * address is a translation fault.  Built once, whole, before the SMMU is pointed at it; never
 * changed while the SMMU may walk it; destroyed only after the SMMU has been told to forget it
 * (stream table entry to abort, TLB invalidated, CMD_SYNC completed: smmu.c).  Any context
 * that may allocate pages; no locks (one owner per table set).
 */
#ifndef ZT_KERNEL_IOPT_H
#define ZT_KERNEL_IOPT_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"

#define IOPT_INPUT_BITS 39
#define IOPT_T0SZ       (64 - IOPT_INPUT_BITS)
#define IOPT_MAX_TABLES 16 /* level-1 + level-2 + level-3 tables of one range */
#define IOPT_MAX_PAGES  ((IOPT_MAX_TABLES - 3) * 512) /* a range that fits in the tables */

/* Descriptor bits (ARM ARM D8.3.1-2; the SMMU reads them as the CPU would, IHI 0070 3.5) */
#define IOPT_VALID  (1ull << 0)
#define IOPT_TABLE  (1ull << 1) /* levels 1-2: next table; level 3: page */
#define IOPT_AP_EL0 (1ull << 6) /* AP[1]: unprivileged accesses too (AP[2] = 0: writable) */
#define IOPT_SH_IS  (3ull << 8) /* inner shareable */
#define IOPT_AF     (1ull << 10)
#define IOPT_NG     (1ull << 11) /* tagged with the context's ASID */
#define IOPT_PXN    (1ull << 53)
#define IOPT_XN     (1ull << 54)
#define IOPT_ADDR   0x0000fffffffff000ull
/* A level-3 page descriptor: MAIR index 0 (the context descriptor's normal write-back). */
#define IOPT_PAGE_ATTRS                                                                            \
    (IOPT_VALID | IOPT_TABLE | IOPT_AP_EL0 | IOPT_SH_IS | IOPT_AF | IOPT_NG | IOPT_PXN | IOPT_XN)

struct iopt {
    paddr_t root;     /* the level-1 table: the context descriptor's TTB0 */
    unsigned ntables; /* tables[0] is the root */
    paddr_t tables[IOPT_MAX_TABLES];
    uint64_t iova; /* the range mapped */
    size_t pages;
};

/* Build tables mapping [iova, iova + pages * 4 KiB) to [pa, ...).  0, -EINVAL (0 pages, an
 * address not page-aligned, a range past 2^39 or needing more than IOPT_MAX_TABLES tables),
 * or -ENOMEM; on failure nothing stays allocated and *t is empty. */
int iopt_build(struct iopt *t, uint64_t iova, paddr_t pa, size_t pages);
/* The physical address `iova` translates to, as the SMMU's walk would find it, or 0 for a
 * translation fault.  (Tests, reports.) */
paddr_t iopt_lookup(const struct iopt *t, uint64_t iova);
/* Free every table (the SMMU must no longer walk them).  *t is empty afterwards. */
void iopt_destroy(struct iopt *t);

#endif
