/* SPDX-License-Identifier: MIT */
/*
 * iopt.c — I/O page tables for the SMMU (contract in include/kernel/iopt.h).
 *
 * Layout (ARM ARM D8.2, 4 KiB granule, 39-bit input, initial lookup at level 1): the level-1
 * table's entry i covers input [i << 30, (i + 1) << 30), a level-2 entry 2 MiB, a level-3
 * entry one 4 KiB page.  Only table and page descriptors are written (no blocks), so the
 * device's reach is exactly the pages mapped.  Every table is a fresh zeroed page: an entry
 * left 0 is invalid, a translation fault.  Tables are written with ordinary stores; the SMMU is
 * told of them only later, through the context descriptor and a command whose producer-index
 * write (arch_mmio_write32, a DSB first) orders every store here before it.
 */
#include "kernel/iopt.h"
#include "kernel/page.h"
#include "uapi/zt_errno.h"

#define L1_SHIFT   30
#define L2_SHIFT   21
#define IDX(va, s) (((va) >> (s)) & 0x1ff)

static uint64_t *table_va(paddr_t pa)
{
    return phys_to_virt(pa);
}

/* The next-level table behind entry idx of `table`, made if missing. */
static paddr_t next_table(struct iopt *t, paddr_t table, unsigned idx)
{
    uint64_t *e = &table_va(table)[idx];
    if (*e & IOPT_VALID) {
        return *e & IOPT_ADDR;
    }
    if (t->ntables == IOPT_MAX_TABLES) {
        return 0;
    }
    paddr_t pa = page_alloc();
    if (!pa) {
        return 0;
    }
    t->tables[t->ntables++] = pa;
    *e = pa | IOPT_VALID | IOPT_TABLE;
    return pa;
}

int iopt_build(struct iopt *t, uint64_t iova, paddr_t pa, size_t pages)
{
    uint64_t len = (uint64_t)pages * PAGE_SIZE;
    *t = (struct iopt){0};
    if (!pages || pages > IOPT_MAX_PAGES || ((iova | pa) & (PAGE_SIZE - 1)) ||
        iova + len > (1ull << IOPT_INPUT_BITS) || iova + len < iova) {
        return -EINVAL;
    }
    t->root = page_alloc();
    if (!t->root) {
        return -ENOMEM;
    }
    t->tables[t->ntables++] = t->root;
    for (size_t i = 0; i < pages; i++) {
        uint64_t va = iova + i * PAGE_SIZE;
        paddr_t l2 = next_table(t, t->root, IDX(va, L1_SHIFT));
        paddr_t l3 = l2 ? next_table(t, l2, IDX(va, L2_SHIFT)) : 0;
        if (!l3) {
            bool full = t->ntables == IOPT_MAX_TABLES;
            iopt_destroy(t);
            return full ? -EINVAL : -ENOMEM;
        }
        table_va(l3)[IDX(va, PAGE_SHIFT)] = (pa + i * PAGE_SIZE) | IOPT_PAGE_ATTRS;
    }
    t->iova = iova;
    t->pages = pages;
    return 0;
}

paddr_t iopt_lookup(const struct iopt *t, uint64_t iova)
{
    if (!t->root || iova >= (1ull << IOPT_INPUT_BITS)) {
        return 0;
    }
    uint64_t e = table_va(t->root)[IDX(iova, L1_SHIFT)];
    for (unsigned shift = L2_SHIFT; (e & (IOPT_VALID | IOPT_TABLE)) == (IOPT_VALID | IOPT_TABLE);
         shift -= 9) {
        e = table_va(e & IOPT_ADDR)[IDX(iova, shift)];
        if (shift == PAGE_SHIFT) {
            return (e & IOPT_VALID) ? (e & IOPT_ADDR) | (iova & (PAGE_SIZE - 1)) : 0;
        }
    }
    return 0;
}

void iopt_destroy(struct iopt *t)
{
    for (unsigned i = 0; i < t->ntables; i++) {
        page_free(t->tables[i]);
    }
    *t = (struct iopt){0};
}
