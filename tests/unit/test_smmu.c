/* SPDX-License-Identifier: MIT */
/*
 * test_smmu.c — host unit tests of kernel/dev/smmu.c and kernel/dev/iopt.c over the fake arch's
 * SMMUv3 (arch/host/fake_dev.c: CR0ACK follows CR0, a CMDQ_PROD write consumes the queue from
 * memory and records each command; tests/unit/fakebus.h: QEMU's ID registers): the boot
 * sequence, the I/O page tables a claim gets, the stream table entry and context descriptor of
 * an attached stream, the commands of attach and detach and what happens when the SMMU does
 * not complete them, and event records copied out and handed to the fault handler.
 * Field layouts are checked against ARM IHI 0070 (STE 5.2, CD 5.4, commands 4.x, events 7.3).
 * IDs: SMMU-nn.
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

#include "kernel/iopt.h"
#include "kernel/smmu.h"
#include "uapi/zt_errno.h"
#include "fakebus.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))
#define P          4096ull
#define IOVA       0x100000000ull

static void *pool;
static size_t free0;

static uint32_t reg(unsigned off)
{
    return fake_mmio_get(FB_SMMU + off);
}

static uint64_t reg64(unsigned off)
{
    return (uint64_t)reg(off) | (uint64_t)reg(off + 4) << 32;
}

static uint8_t opcode(unsigned i)
{
    return (uint8_t)fake.smmu.cmd[i][0];
}

static int group_setup(void **state)
{
    pool = fixture_pages_and_cpu0(1024);
    return pool ? 0 : -1;
}

static int test_setup(void **state)
{
    fake_reset();
    memset(&fake_boot_info, 0, sizeof(fake_boot_info));
    fakebus_boot_info(true);
    fakebus_smmu_idregs();
    assert_int_equal(smmu_init(&fake_boot_info.smmu, true), 0);
    fake.smmu.ncmds = 0; /* the boot's own commands: SMMU-01 looks at them */
    free0 = page_free_count();
    return 0;
}

/* SMMU-01: boot: the SMMU is disabled, GBPA set to abort, the stream table (linear, 256
 * entries, every one V = 1 Config = abort) and both queues programmed, CMD_CFGI_ALL and
 * CMD_TLBI_NSNH_ALL then CMD_SYNC consumed, and finally the event queue, its interrupts and
 * translation enabled, in that order of CR0 bits */
static void smmu01_boot(TEST_STATE)
{
    fake_reset();
    fakebus_boot_info(true);
    fakebus_smmu_idregs();
    assert_int_equal(smmu_init(&fake_boot_info.smmu, true), 0);
    assert_true(smmu_active());
    assert_int_equal(reg(0x20), 1u << 0 | 1u << 2 | 1u << 3); /* SMMUEN, EVENTQEN, CMDQEN */
    assert_int_equal(reg(0x50), 1u << 0 | 1u << 2);           /* GERROR and EVENTQ IRQs */
    assert_int_equal(reg(0x44) & (1u << 20), 1u << 20);       /* GBPA.ABORT */
    assert_int_equal(reg(0x88), 8);                           /* linear, 2^8 entries */
    uint64_t strtab = reg64(0x80) & 0x000fffffffffffc0ull;
    assert_int_equal(strtab % (256 * 64), 0); /* aligned to its size */
    for (uint32_t sid = 0; sid < SMMU_STREAMS; sid++) {
        assert_int_equal(((const uint64_t *)(uintptr_t)strtab)[sid * 8], 1); /* V, abort */
        assert_int_equal(smmu_ste_dword(sid, 0), 1);
    }
    assert_int_equal(reg64(0x90) & 0x1f, 8); /* command queue: 256 entries */
    assert_int_equal(reg64(0xa0) & 0x1f, 7); /* event queue: 128 */
    assert_int_equal(fake.smmu.ncmds, 3);
    assert_int_equal(opcode(0), 0x04); /* CFGI_ALL */
    assert_int_equal(fake.smmu.cmd[0][1] & 0x1f, 31);
    assert_int_equal(opcode(1), 0x30); /* TLBI_NSNH_ALL */
    assert_int_equal(opcode(2), 0x46); /* SYNC */
    assert_int_equal(reg(0x9c), reg(0x98));
    assert_true(fake.irq_enabled[0][106] || arch_irq_is_enabled(0, 106));
}

/* SMMU-02: I/O page tables map exactly the range: each of its pages to the right physical
 * page (offsets kept), the pages around it and far away are translation faults; page
 * descriptors are valid, accessed, read/write at EL0 and EL1, inner shareable, non-global,
 * never executable; a level-1 + level-2 + level-3 walk */
static void smmu02_iopt_maps_exactly(TEST_STATE)
{
    struct iopt t;
    paddr_t pa = page_alloc_contig(20);
    assert_int_equal(iopt_build(&t, IOVA, pa, 20), 0);
    assert_int_equal(t.ntables, 3);
    for (uint64_t i = 0; i < 20; i++) {
        assert_int_equal(iopt_lookup(&t, IOVA + i * P + 0x123), pa + i * P + 0x123);
    }
    assert_int_equal(iopt_lookup(&t, IOVA - 1), 0);
    assert_int_equal(iopt_lookup(&t, IOVA + 20 * P), 0);
    assert_int_equal(iopt_lookup(&t, 0), 0);
    assert_int_equal(iopt_lookup(&t, pa), 0); /* a physical address means nothing here */
    assert_int_equal(iopt_lookup(&t, 1ull << 39), 0);
    const uint64_t *l1 = phys_to_virt(t.root);
    const uint64_t *l2 = phys_to_virt(l1[IOVA >> 30] & IOPT_ADDR);
    const uint64_t *l3 = phys_to_virt(l2[(IOVA >> 21) & 511] & IOPT_ADDR);
    assert_int_equal(l1[IOVA >> 30] & 3, 3);
    assert_int_equal(l3[0], pa | IOPT_PAGE_ATTRS);
    assert_int_equal(l3[0] & (1ull << 7), 0); /* AP[2] clear: writable */
    assert_int_equal(l3[20], 0);
    iopt_destroy(&t);
    page_free_contig(pa, 20);
    assert_int_equal(page_free_count(), free0);
}

/* SMMU-03: a range across a 2 MiB boundary takes two level-3 tables; 0 pages, unaligned
 * addresses, a range past 2^39 or wrapping are refused with nothing allocated */
static void smmu03_iopt_edges(TEST_STATE)
{
    struct iopt t;
    assert_int_equal(iopt_build(&t, IOVA + (2ull << 20) - 2 * P, 0x50000000, 4), 0);
    assert_int_equal(t.ntables, 4);
    assert_int_equal(iopt_lookup(&t, IOVA + (2ull << 20)), 0x50002000);
    iopt_destroy(&t);
    assert_int_equal(iopt_build(&t, IOVA, 0x50000000, 0), -EINVAL);
    assert_int_equal(iopt_build(&t, IOVA + 8, 0x50000000, 1), -EINVAL);
    assert_int_equal(iopt_build(&t, IOVA, 0x50000008, 1), -EINVAL);
    assert_int_equal(iopt_build(&t, (1ull << 39) - P, 0x50000000, 2), -EINVAL);
    assert_int_equal(iopt_build(&t, IOVA, 0x50000000, IOPT_MAX_PAGES + 1), -EINVAL);
    assert_int_equal(t.ntables, 0);
    assert_int_equal(page_free_count(), free0);
}

/* SMMU-04: attach writes a context descriptor (T0SZ 25, 4 KiB granule, write-back walks,
 * EPD1, valid, IPS = the SMMU's OAS, AArch64, R and A set, the ASID, TTB0 = the tables, MAIR0
 * attribute 0 normal write-back), then the stream table entry (V, Config stage-1 translate,
 * linear, S1ContextPtr = the descriptor), then invalidates that entry and the ASID's TLB
 * entries and syncs; the tables translate the region */
static void smmu04_attach(TEST_STATE)
{
    struct smmu_context c;
    paddr_t pa = page_alloc_contig(4);
    assert_int_equal(smmu_attach(&c, 8, 9, IOVA, pa, 4), 0);
    assert_true(c.attached);
    const uint64_t *cd = phys_to_virt(c.cd);
    uint64_t w0 = cd[0];
    assert_int_equal(w0 & 0x3f, 25);
    assert_int_equal((w0 >> 6) & 3, 0);                      /* TG0 4 KiB */
    assert_int_equal((w0 >> 8) & 0x3f, 1 | 1 << 2 | 3 << 4); /* IRGN0, ORGN0 WB; SH0 ISH */
    assert_int_equal((w0 >> 14) & 1, 0);                     /* EPD0: walks on */
    assert_int_equal((w0 >> 30) & 3, 3);                     /* EPD1, V */
    assert_int_equal((w0 >> 32) & 7, 4);                     /* IPS: 44 bits, as IDR5.OAS */
    assert_int_equal((w0 >> 41) & 1, 1);                     /* AA64 */
    assert_int_equal((w0 >> 44) & 7, 6);                     /* S 0, R 1, A 1 */
    assert_int_equal(w0 >> 48, 9);                           /* ASID */
    assert_int_equal(cd[1], c.pt.root);                      /* TTB0 */
    assert_int_equal(cd[3], 0xff);                           /* MAIR0 */
    assert_int_equal(iopt_lookup(&c.pt, IOVA + 3 * P), pa + 3 * P);
    uint64_t s0 = smmu_ste_dword(8, 0), s1 = smmu_ste_dword(8, 1);
    assert_int_equal(s0 & 1, 1);
    assert_int_equal((s0 >> 1) & 7, 5); /* stage 1 translate, stage 2 bypass */
    assert_int_equal((s0 >> 4) & 3, 0); /* S1Fmt linear */
    assert_int_equal(s0 & 0x000fffffffffffc0ull, c.cd);
    assert_int_equal(s0 >> 59, 0); /* S1CDMax 0 */
    assert_int_equal(s1 & 0xfc, 1 << 2 | 1 << 4 | 3 << 6);
    assert_int_equal((s1 >> 27) & 1, 0);       /* S1STALLD */
    assert_int_equal((s1 >> 30) & 3, 0);       /* STRW: NS-EL1 */
    assert_int_equal(smmu_ste_dword(9, 0), 1); /* the neighbour still aborts */
    assert_int_equal(fake.smmu.ncmds, 3);
    assert_int_equal(opcode(0), 0x03); /* CFGI_STE */
    assert_int_equal(fake.smmu.cmd[0][0] >> 32, 8);
    assert_int_equal(fake.smmu.cmd[0][1] & 1, 1); /* leaf */
    assert_int_equal(opcode(1), 0x11);            /* TLBI_NH_ASID */
    assert_int_equal(fake.smmu.cmd[1][0] >> 48, 9);
    assert_int_equal(opcode(2), 0x46);
    assert_int_equal(smmu_detach(&c), 0);
    page_free_contig(pa, 4);
}

/* SMMU-05: detach returns the entry to V = 1 Config = abort, then CMD_CFGI_STE for the stream,
 * CMD_TLBI_NH_ASID for its ASID and CMD_SYNC, which complete before the tables and the
 * descriptor are freed: every page comes back */
static void smmu05_detach(TEST_STATE)
{
    struct smmu_context c;
    paddr_t pa = page_alloc_contig(4);
    assert_int_equal(smmu_attach(&c, 8, 9, IOVA, pa, 4), 0);
    fake.smmu.ncmds = 0;
    assert_int_equal(smmu_detach(&c), 0);
    assert_false(c.attached);
    assert_int_equal(smmu_ste_dword(8, 0), 1);
    assert_int_equal(fake.smmu.ncmds, 3);
    assert_int_equal(opcode(0), 0x03);
    assert_int_equal(fake.smmu.cmd[0][0] >> 32, 8);
    assert_int_equal(opcode(1), 0x11);
    assert_int_equal(fake.smmu.cmd[1][0] >> 48, 9);
    assert_int_equal(opcode(2), 0x46);
    page_free_contig(pa, 4);
    assert_int_equal(page_free_count(), free0);
    assert_int_equal(smmu_detach(&c), 0); /* twice: nothing more */
    assert_int_equal(fake.smmu.ncmds, 3);
}

/* SMMU-06: an SMMU that stops consuming commands: detach still aborts the entry but reports
 * -EIO and keeps the tables (the SMMU may still walk them); attach fails with -EIO and leaves
 * the entry aborting; a stream past the table is refused */
static void smmu06_sync_never_completes(TEST_STATE)
{
    struct smmu_context c;
    paddr_t pa = page_alloc_contig(4);
    assert_int_equal(smmu_attach(&c, 8, 9, IOVA, pa, 4), 0);
    size_t held = page_free_count();
    fake.smmu.stuck = true;
    assert_int_equal(smmu_detach(&c), -EIO);
    assert_int_equal(smmu_ste_dword(8, 0), 1);
    assert_true(c.attached);
    assert_int_equal(page_free_count(), held);
    struct smmu_context c2;
    assert_int_equal(smmu_attach(&c2, 10, 11, IOVA, pa, 4), -EIO);
    assert_int_equal(smmu_ste_dword(10, 0), 1);
    struct smmu_context c3;
    assert_int_equal(smmu_attach(&c3, SMMU_STREAMS, 1, IOVA, pa, 4), -EINVAL);
    /* the SMMU recovers (its queue is reset): what was kept can go now */
    fake.smmu.stuck = false;
    fake_mmio_set(FB_SMMU + 0x9c, fake_mmio_get(FB_SMMU + 0x98));
    assert_int_equal(smmu_detach(&c), 0);
    iopt_destroy(&c2.pt);
    if (c2.cd) {
        page_free(c2.cd);
    }
    page_free_contig(pa, 4);
    assert_int_equal(page_free_count(), free0);
}

static struct smmu_fault got[8];
static unsigned ngot;

static void record(const struct smmu_fault *f)
{
    if (ngot < 8) {
        got[ngot] = *f;
    }
    ngot++;
}

/* Put an event record in the queue as the SMMU would, and move PROD past it. */
static void inject(uint8_t type, uint32_t sid, uint64_t addr, bool read)
{
    uint64_t base = reg64(0xa0) & 0x000fffffffffffe0ull;
    uint32_t prod = reg(0xa8);
    uint64_t *e = (uint64_t *)(uintptr_t)(base + 32 * (prod & 127));
    e[0] = type | (uint64_t)sid << 32;
    e[1] = (uint64_t)read << 35;
    e[2] = addr;
    e[3] = 0;
    fake_mmio_set(FB_SMMU + 0xa8, (prod & (1u << 31)) | ((prod + 1) & 255));
}

/* SMMU-07: the interrupt's part copies every record from CONS to PROD out and moves CONS
 * there; the worker's part hands each to the fault handler with its stream, type, direction
 * and address; records of one stream and type in a row are one report with their count and
 * last address; an overflow of the queue is acknowledged and counted as lost */
static void smmu07_events(TEST_STATE)
{
    ngot = 0;
    smmu_set_fault_handler(record);
    struct smmu_stats before = smmu_stats();
    inject(0x10, 8, IOVA - 4096, false);
    inject(0x10, 16, 0x40200000, true);
    smmu_poll_events();
    assert_int_equal(reg(0xac) & 255, reg(0xa8) & 255);
    assert_int_equal(ngot, 0); /* nothing reported in interrupt context */
    smmu_report_events();
    assert_int_equal(ngot, 2);
    assert_int_equal(got[0].sid, 8);
    assert_int_equal(got[0].type, 0x10);
    assert_true(got[0].write);
    assert_int_equal(got[0].addr, IOVA - 4096);
    assert_int_equal(got[1].sid, 16);
    assert_false(got[1].write);
    assert_int_equal(got[1].addr, 0x40200000);
    /* the SMMU overflowed: PROD's overflow flag differs from CONS's */
    inject(0x10, 8, IOVA + (64ull << 20), false);
    fake_mmio_set(FB_SMMU + 0xa8, reg(0xa8) ^ (1u << 31));
    smmu_poll_events();
    smmu_report_events();
    assert_int_equal(ngot, 3);
    assert_int_equal(reg(0xac) >> 31, reg(0xa8) >> 31); /* acknowledged */
    assert_int_equal(smmu_stats().events - before.events, 3);
    assert_int_equal(smmu_stats().lost - before.lost, 1);
    /* one transfer faulting on each of its accesses: one report, with the count and the end */
    for (unsigned k = 0; k < 5; k++) {
        inject(0x10, 8, 0x40200000 + 4 * k, false);
    }
    smmu_poll_events();
    smmu_report_events();
    assert_int_equal(ngot, 4);
    assert_int_equal(got[3].addr, 0x40200000);
    assert_int_equal(got[3].repeats, 4);
    assert_int_equal(got[3].last_addr, 0x40200010);
    smmu_set_fault_handler(0);
}

/* SMMU-08: a global error (GERROR differs from GERRORN) is acknowledged by the interrupt's
 * part and reported on the console by the worker's */
static void smmu08_gerror(TEST_STATE)
{
    fake_mmio_set(FB_SMMU + 0x60, 1u << 2); /* EVENTQ_ABT_ERR */
    fake.console_len = 0;
    fake.console[0] = 0;
    smmu_poll_events();
    assert_int_equal(reg(0x64), 1u << 2);
    smmu_report_events();
    assert_non_null(strstr(fake.console, "smmu: global error 0x4 acknowledged"));
}

/* SMMU-09: without the SMMU's stage-1 AArch64 4 KiB support it is not used, and says why */
static void smmu09_unsupported(TEST_STATE)
{
    fake_reset();
    fake.console[0] = 0;
    fakebus_boot_info(true);
    fake_mmio_set(FB_SMMU + 0x00, 2u << 2); /* no S1P */
    fake_mmio_set(FB_SMMU + 0x14, 1u << 4);
    assert_int_equal(smmu_init(&fake_boot_info.smmu, true), -EIO);
    assert_false(smmu_active());
    assert_non_null(strstr(fake.console, "smmu: the SMMUv3 at 0x9050000 is not used: it lacks "
                                         "stage-1 translation with AArch64 4 KiB tables"));
    fakebus_smmu_idregs();
    assert_int_equal(smmu_init(&fake_boot_info.smmu, true), 0); /* (back for the others) */
}

#define T_(f) cmocka_unit_test_setup(f, test_setup)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T_(smmu01_boot),        T_(smmu02_iopt_maps_exactly),
        T_(smmu03_iopt_edges),  T_(smmu04_attach),
        T_(smmu05_detach),      T_(smmu06_sync_never_completes),
        T_(smmu07_events),      T_(smmu08_gerror),
        T_(smmu09_unsupported),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
