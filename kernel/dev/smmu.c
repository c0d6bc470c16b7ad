/* SPDX-License-Identifier: MIT */
/*
 * smmu.c — the SMMUv3 driver: stream table, command queue, event queue, context descriptors
 * (contract in include/kernel/smmu.h; I/O page tables in iopt.c).
 *
 * Structures (ARM IHI 0070): a linear stream table of SMMU_STREAMS 64-byte entries (5.2), one
 * per requester id of the root bus, every entry V = 1, Config = abort ("report abort to the
 * device, no event") until its function is claimed; then Config = stage-1 translate, S1Fmt
 * linear, S1CDMax 0 (one context, no substreams), S1ContextPtr = a 64-byte context descriptor
 * (5.4: T0SZ 25, 4 KiB granule, write-back inner-shareable walks, EPD1 = 1, AA64, A = 1
 * (terminated transactions abort), R = 1 (faults are recorded as events), the stream's own
 * ASID, TTB0 = its I/O page tables, MAIR0 attribute 0 = normal write-back).  A command queue of
 * 256 16-byte entries (4.1) and an event queue of 128 32-byte records (7.2), both in kernel
 * memory, each aligned to its size.  The tables and queues are static: nothing is allocated
 * at boot, and the SMMU never reads memory the allocator can hand out.
 *
 * Commands (4.3-4.7): CMD_CFGI_ALL and CMD_TLBI_NSNH_ALL once at boot, CMD_CFGI_STE when an
 * entry changes, CMD_TLBI_NH_ASID when a context goes, CMD_SYNC after each batch; the producer
 * index is written and the consumer index polled until the SMMU has consumed the whole batch
 * (bounded: SYNC_POLLS reads, then -EIO).  An entry changes only with its dword 0 — V, Config,
 * S1ContextPtr — written last in one 64-bit store, so the SMMU sees the old entry or the new
 * one, never half of each.
 *
 * Events (7.3): the eventq interrupt (an edge SPI, routed to housekeeping like every device
 * interrupt) copies records from CONS to PROD into a ring of PENDING entries and advances
 * CONS — a record of the same stream and type as the one before it is counted on that one (a
 * transfer that faults records an event for each of its accesses: QEMU writes a frame in
 * 4-byte pieces, each of which faults), — noting an overflow (PROD's bit 31 differs from CONS's);
 * the worker then hands each to the fault handler.  The gerror interrupt acknowledges global errors
 * (GERRORN := GERROR) and the worker reports them.
 *
 * Locks: cmd_lock (leaf, IRQs masked) around a batch of commands and its completion; evt_lock
 * (leaf, IRQs masked) around the copy-out ring.  Neither is held with the other.
 */
#include "kernel/smmu.h"
#include "arch.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"

/* Registers (6.3): page 0, and page 1 at +64 KiB for the event queue's indexes */
#define IDR0          0x000
#define IDR1          0x004
#define IDR5          0x014
#define CR0           0x020
#define CR0ACK        0x024
#define CR1           0x028
#define CR2           0x02c
#define GBPA          0x044
#define IRQ_CTRL      0x050
#define IRQ_CTRLACK   0x054
#define GERROR        0x060
#define GERRORN       0x064
#define STRTAB_BASE   0x080
#define STRTAB_CFG    0x088
#define CMDQ_BASE     0x090
#define CMDQ_PROD     0x098
#define CMDQ_CONS     0x09c
#define EVENTQ_BASE   0x0a0
#define EVENTQ_PROD   0x100a8
#define EVENTQ_CONS   0x100ac
#define CR0_SMMUEN    (1u << 0)
#define CR0_EVENTQEN  (1u << 2)
#define CR0_CMDQEN    (1u << 3)
#define IRQ_GERROR    (1u << 0)
#define IRQ_EVENTQ    (1u << 2)
#define GBPA_ABORT    (1u << 20)
#define GBPA_UPDATE   (1u << 31)
#define CR2_RECINVSID (1u << 1)
#define GERROR_CMDQ   (1u << 0)
#define CONS_ERR(c)   (((c) >> 24) & 0x7f)
#define Q_OVERFLOW    (1u << 31)
#define BASE_RA       (1ull << 62) /* read-allocate (command queue, stream table) */
#define BASE_WA       (1ull << 62) /* write-allocate (event queue): the same bit */
/* CR1: queues and tables fetched write-back cacheable, inner shareable (6.3.3) */
#define CR1_WB_ISH (1u << 0 | 1u << 2 | 3u << 4 | 1u << 6 | 1u << 8 | 3u << 10)

/* IDR fields */
#define IDR0_S1P(v)     (((v) >> 1) & 1)
#define IDR0_TTF(v)     (((v) >> 2) & 3) /* 2: AArch64 tables, 3: both */
#define IDR1_SIDSIZE(v) ((v)&0x3f)
#define IDR5_OAS(v)     ((v)&7)
#define IDR5_GRAN4K(v)  (((v) >> 4) & 1)

/* Commands (4.1.1 and each command's own section) */
#define CMD_CFGI_STE      0x03
#define CMD_CFGI_ALL      0x04
#define CMD_TLBI_NH_ASID  0x11
#define CMD_TLBI_NSNH_ALL 0x30
#define CMD_SYNC          0x46

/* Stream table entry (5.2) */
#define STE_V           (1ull << 0)
#define STE_CFG_ABORT   (0ull << 1)
#define STE_CFG_S1      (5ull << 1)
#define STE_CTXPTR      0x000fffffffffffc0ull
#define STE1_S1C_WB_ISH (1ull << 2 | 1ull << 4 | 3ull << 6) /* S1CIR, S1COR WBRA; S1CSH ISH */
#define STE1_SHCFG_IN   (1ull << 44)                        /* shareability from incoming */

/* Context descriptor (5.4) */
#define CD_TG0_4K   (0ull << 6)
#define CD_WALK_WB  (1ull << 8 | 1ull << 10 | 3ull << 12) /* IRGN0, ORGN0 WBRA; SH0 ISH */
#define CD_EPD1     (1ull << 30)
#define CD_V        (1ull << 31)
#define CD_IPS(oas) ((uint64_t)(oas) << 32)
#define CD_AA64     (1ull << 41)
#define CD_R        (1ull << 45)
#define CD_A        (1ull << 46)
#define CD_ASID(a)  ((uint64_t)(a) << 48)
#define CD_TTB      0x000ffffffffffff0ull
#define MAIR_WB_RWA 0xffull /* attribute 0: normal, inner and outer write-back RW-allocate */

/* Event record (7.3) */
#define EVT_ID(w0)  ((uint8_t)(w0))
#define EVT_SID(w0) ((uint32_t)((w0) >> 32))
#define EVT_RNW(w1) (((w1) >> 35) & 1)

#define CMDQ_LOG2  8
#define CMDQ_SIZE  (1u << CMDQ_LOG2)
#define EVTQ_LOG2  7
#define EVTQ_SIZE  (1u << EVTQ_LOG2)
#define PENDING    32
#define SYNC_POLLS 1000000
#define ACK_POLLS  100000

static uint64_t strtab[SMMU_STREAMS * SMMU_STE_DWORDS]
    __attribute__((aligned(SMMU_STREAMS * SMMU_STE_DWORDS * 8)));
static uint64_t cmdq[CMDQ_SIZE * 2] __attribute__((aligned(CMDQ_SIZE * 16)));
static uint64_t evtq[EVTQ_SIZE * 4] __attribute__((aligned(EVTQ_SIZE * 32)));

static paddr_t regs;
static bool active;
static unsigned oas; /* output address size field (IDR5.OAS), which the CD's IPS repeats */
static unsigned streams;
static spinlock_t cmd_lock;
static uint32_t cmd_prod; /* cmd_lock */
static spinlock_t evt_lock;
static struct smmu_fault pending[PENDING]; /* evt_lock */
static unsigned npending;
static uint32_t gerror_seen; /* evt_lock: errors acknowledged, not yet reported */
static struct smmu_stats stats;
static struct work report_work;
static void (*fault_handler)(const struct smmu_fault *f);

static uint32_t rd(unsigned off)
{
    return arch_mmio_read32(regs + off);
}

static void wr(unsigned off, uint32_t v)
{
    arch_mmio_write32(regs + off, v);
}

static void wr64(unsigned off, uint64_t v)
{
    wr(off, (uint32_t)v); /* 64-bit registers take two 32-bit halves (6.2) */
    wr(off + 4, (uint32_t)(v >> 32));
}

/* Write a control register and wait for its acknowledgement register to match. */
static bool write_acked(unsigned reg, unsigned ack, uint32_t v)
{
    wr(reg, v);
    for (int i = 0; i < ACK_POLLS; i++) {
        if (rd(ack) == v) {
            return true;
        }
    }
    return false;
}

bool smmu_active(void)
{
    return active;
}

struct smmu_stats smmu_stats(void)
{
    return stats;
}

uint64_t smmu_ste_dword(uint32_t sid, unsigned i)
{
    return sid < SMMU_STREAMS && i < SMMU_STE_DWORDS ? strtab[sid * SMMU_STE_DWORDS + i] : 0;
}

void smmu_set_fault_handler(void (*fn)(const struct smmu_fault *f))
{
    fault_handler = fn;
}

/* ---- commands ---- */

/* Append one command (cmd_lock held; the queue is never full: every batch is waited for). */
static void cmd_add(uint64_t w0, uint64_t w1)
{
    ASSERT_HELD(&cmd_lock);
    uint64_t *e = &cmdq[2 * (cmd_prod & (CMDQ_SIZE - 1))];
    e[0] = w0;
    e[1] = w1;
    cmd_prod = (cmd_prod + 1) & (2 * CMDQ_SIZE - 1); /* index and wrap bit */
}

/* End the batch with CMD_SYNC, publish it and wait until the SMMU has consumed all of it
 * (cmd_lock held).  0, or -EIO on a command error or when it never completes. */
static int cmd_sync(unsigned ncmds)
{
    ASSERT_HELD(&cmd_lock);
    cmd_add(CMD_SYNC, 0); /* CS = none: completion is seen in CMDQ_CONS */
    wr(CMDQ_PROD, cmd_prod);
    for (int i = 0; i < SYNC_POLLS; i++) {
        uint32_t cons = rd(CMDQ_CONS);
        if (CONS_ERR(cons) || (rd(GERROR) ^ rd(GERRORN)) & GERROR_CMDQ) {
            printk("smmu: command error %u at index %u: the SMMU stops consuming commands\n",
                   CONS_ERR(cons), cons & (CMDQ_SIZE - 1));
            return -EIO;
        }
        if ((cons & (2 * CMDQ_SIZE - 1)) == cmd_prod) {
            stats.commands += ncmds + 1;
            stats.syncs++;
            return 0;
        }
    }
    printk("smmu: CMD_SYNC did not complete after %d polls\n", SYNC_POLLS);
    return -EIO;
}

/* Invalidate stream sid's cached entry (and the ASID's TLB entries if asid), then sync. */
static int invalidate(uint32_t sid, int asid)
{
    unsigned long flags = spin_lock_irqsave(&cmd_lock);
    cmd_add(CMD_CFGI_STE | (uint64_t)sid << 32, 1 /* leaf */);
    if (asid >= 0) {
        cmd_add(CMD_TLBI_NH_ASID | CD_ASID((uint16_t)asid), 0);
    }
    int r = cmd_sync(asid >= 0 ? 2 : 1);
    spin_unlock_irqrestore(&cmd_lock, flags);
    return r;
}

/* ---- stream table entries and context descriptors ---- */

static uint64_t *ste(uint32_t sid)
{
    return &strtab[sid * SMMU_STE_DWORDS];
}

/* V = 1, Config = abort: what every entry holds unless its function is claimed.  One 64-bit
 * store, so the SMMU sees the old entry or this one. */
static void ste_abort(uint32_t sid)
{
    __atomic_store_n(&ste(sid)[0], STE_V | STE_CFG_ABORT, __ATOMIC_RELEASE);
}

static void ste_translate(uint32_t sid, paddr_t cd)
{
    uint64_t *e = ste(sid);
    for (unsigned i = 2; i < SMMU_STE_DWORDS; i++) {
        e[i] = 0;
    }
    e[1] = STE1_S1C_WB_ISH | STE1_SHCFG_IN; /* S1DSS, EATS, STRW (NS-EL1), S1STALLD: 0 */
    __atomic_store_n(&e[0], STE_V | STE_CFG_S1 | (cd & STE_CTXPTR), __ATOMIC_RELEASE);
}

static void cd_write(uint64_t *cd, uint16_t asid, paddr_t ttb)
{
    cd[1] = ttb & CD_TTB;
    cd[2] = 0;           /* TTB1: unused (EPD1) */
    cd[3] = MAIR_WB_RWA; /* MAIR0 */
    for (unsigned i = 4; i < SMMU_CD_DWORDS; i++) {
        cd[i] = 0;
    }
    cd[0] = IOPT_T0SZ | CD_TG0_4K | CD_WALK_WB | CD_EPD1 | CD_V | CD_IPS(oas) | CD_AA64 | CD_R |
            CD_A | CD_ASID(asid);
}

int smmu_attach(struct smmu_context *c, uint32_t sid, uint16_t asid, uint64_t iova, paddr_t pa,
                size_t pages)
{
    *c = (struct smmu_context){.sid = sid, .asid = asid};
    if (!active || sid >= streams) {
        return -EINVAL;
    }
    int r = iopt_build(&c->pt, iova, pa, pages);
    if (r) {
        return r;
    }
    c->cd = page_alloc();
    if (!c->cd) {
        iopt_destroy(&c->pt);
        return -ENOMEM;
    }
    cd_write(phys_to_virt(c->cd), asid, c->pt.root);
    ste_translate(sid, c->cd);
    r = invalidate(sid, asid); /* the SMMU may hold the aborting entry: make it read this one */
    if (r) {
        ste_abort(sid);
        if (invalidate(sid, asid) == 0) {
            iopt_destroy(&c->pt);
            page_free(c->cd);
            c->cd = 0;
        }
        return r; /* otherwise the tables stay: the SMMU may still walk them */
    }
    c->attached = true;
    return 0;
}

int smmu_detach(struct smmu_context *c)
{
    if (!c->attached) {
        return 0;
    }
    ste_abort(c->sid);
    int r = invalidate(c->sid, c->asid); /* CFGI_STE, TLBI_NH_ASID, SYNC */
    if (r) {
        return r; /* tables kept: the SMMU may still use them */
    }
    iopt_destroy(&c->pt);
    page_free(c->cd);
    c->cd = 0;
    c->attached = false;
    return 0;
}

/* ---- events ---- */

/* Copy the record at index i out (evt_lock held). */
static void take_record(unsigned i)
{
    ASSERT_HELD(&evt_lock);
    const uint64_t *r = &evtq[4 * (i & (EVTQ_SIZE - 1))];
    struct smmu_fault *last = npending ? &pending[npending - 1] : 0;
    stats.events++;
    if (last && last->sid == EVT_SID(r[0]) && last->type == EVT_ID(r[0])) {
        last->repeats++; /* the same transfer, its next access: one report */
        last->last_addr = r[2];
        return;
    }
    if (npending == PENDING) {
        stats.lost++;
        return;
    }
    pending[npending++] = (struct smmu_fault){
        .sid = EVT_SID(r[0]),
        .type = EVT_ID(r[0]),
        .write = !EVT_RNW(r[1]),
        .addr = r[2],
        .last_addr = r[2],
    };
}

void smmu_poll_events(void)
{
    if (!active) {
        return;
    }
    unsigned long flags = spin_lock_irqsave(&evt_lock);
    uint32_t prod = rd(EVENTQ_PROD), cons = rd(EVENTQ_CONS);
    uint32_t wrap = 2 * EVTQ_SIZE - 1;
    for (unsigned n = 0; (cons & wrap) != (prod & wrap) && n < EVTQ_SIZE; n++) {
        take_record(cons);
        cons = (cons & Q_OVERFLOW) | ((cons + 1) & wrap);
    }
    if ((prod ^ cons) & Q_OVERFLOW) {
        stats.lost++; /* the queue was full and the SMMU dropped records (7.4) */
        cons ^= Q_OVERFLOW;
    }
    wr(EVENTQ_CONS, cons);
    uint32_t active_errors = rd(GERROR) ^ rd(GERRORN);
    if (active_errors) {
        gerror_seen |= active_errors;
        wr(GERRORN, rd(GERROR)); /* acknowledge them all (6.3.17) */
        stats.gerrors++;
    }
    spin_unlock_irqrestore(&evt_lock, flags);
    work_queue(&report_work);
}

void smmu_report_events(void)
{
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&evt_lock);
        struct smmu_fault f = npending ? pending[0] : (struct smmu_fault){0};
        bool have = npending > 0;
        for (unsigned i = 1; i < npending; i++) {
            pending[i - 1] = pending[i];
        }
        npending -= have;
        uint32_t errors = gerror_seen;
        gerror_seen = 0;
        spin_unlock_irqrestore(&evt_lock, flags);
        if (errors) {
            printk("smmu: global error 0x%x acknowledged\n", errors);
        }
        if (!have) {
            return;
        }
        if (fault_handler) {
            fault_handler(&f);
        }
    }
}

static void report_fn(struct work *w)
{
    smmu_report_events();
}

static void smmu_irq(unsigned irq)
{
    smmu_poll_events();
}

/* ---- boot ---- */

/* What this driver needs of the SMMU: stage 1, AArch64 tables, 4 KiB pages, 8-bit stream ids. */
static const char *unsupported(void)
{
    uint32_t idr0 = rd(IDR0), idr1 = rd(IDR1), idr5 = rd(IDR5);
    if (idr0 == 0xffffffffu) {
        return "its registers do not answer";
    }
    if (!IDR0_S1P(idr0) || IDR0_TTF(idr0) < 2 || !IDR5_GRAN4K(idr5)) {
        return "it lacks stage-1 translation with AArch64 4 KiB tables";
    }
    unsigned bits = IDR1_SIDSIZE(idr1);
    streams = bits >= 8 ? SMMU_STREAMS : 1u << bits;
    oas = IDR5_OAS(idr5);
    return 0;
}

/* The queues and the table, then CMDQEN, the invalidations, EVENTQEN, the interrupts, SMMUEN
 * (the order of IHI 0070's initialisation sequence). */
static const char *bring_up(void)
{
    if (!write_acked(CR0, CR0ACK, 0)) {
        return "it did not disable";
    }
    wr(GBPA, GBPA_UPDATE | GBPA_ABORT); /* with SMMUEN 0, transactions abort, not bypass */
    for (int i = 0; i < ACK_POLLS && (rd(GBPA) & GBPA_UPDATE); i++) {
    }
    for (uint32_t sid = 0; sid < SMMU_STREAMS; sid++) {
        ste_abort(sid);
    }
    wr(CR1, CR1_WB_ISH);
    wr(CR2, CR2_RECINVSID);
    unsigned log2 = 0;
    while ((1u << log2) < streams) {
        log2++;
    }
    wr64(STRTAB_BASE, virt_to_phys(strtab) | BASE_RA);
    wr(STRTAB_CFG, log2); /* linear format, 2^log2 entries */
    wr64(CMDQ_BASE, virt_to_phys(cmdq) | BASE_RA | CMDQ_LOG2);
    wr(CMDQ_PROD, 0);
    wr(CMDQ_CONS, 0);
    wr64(EVENTQ_BASE, virt_to_phys(evtq) | BASE_WA | EVTQ_LOG2);
    wr(EVENTQ_PROD, 0);
    wr(EVENTQ_CONS, 0);
    cmd_prod = 0;
    if (!write_acked(CR0, CR0ACK, CR0_CMDQEN)) {
        return "its command queue did not enable";
    }
    unsigned long flags = spin_lock_irqsave(&cmd_lock);
    cmd_add(CMD_CFGI_ALL, 31 /* range: every stream */);
    cmd_add(CMD_TLBI_NSNH_ALL, 0);
    int r = cmd_sync(2);
    spin_unlock_irqrestore(&cmd_lock, flags);
    if (r) {
        return "it did not complete the boot invalidations";
    }
    if (!write_acked(CR0, CR0ACK, CR0_CMDQEN | CR0_EVENTQEN) ||
        !write_acked(IRQ_CTRL, IRQ_CTRLACK, IRQ_EVENTQ | IRQ_GERROR) ||
        !write_acked(CR0, CR0ACK, CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN)) {
        return "it did not enable";
    }
    return 0;
}

int smmu_init(const struct arch_smmu *s, bool quiet)
{
    if (!s->present) {
        if (s->problem) {
            printk("smmu: the SMMUv3 is not used: %s\n", s->problem);
        }
        return -ENODEV;
    }
    regs = s->base;
    active = false;
    const char *why = unsupported();
    why = why ? why : bring_up();
    if (why) {
        printk("smmu: the SMMUv3 at 0x%lx is not used: %s\n", (unsigned long)s->base, why);
        return -EIO;
    }
    static bool registered; /* (boot runs this once; host tests once a scenario) */
    if (!registered) {
        work_init(&report_work, "smmu-events", report_fn);
        registered = irq_register(s->eventq_intid, smmu_irq) == 0 &&
                     irq_register(s->gerror_intid, smmu_irq) == 0;
    }
    if (registered) {
        arch_irq_set_enabled(s->eventq_intid, true); /* routed to housekeeping (irq.c) */
        arch_irq_set_enabled(s->gerror_intid, true);
    }
    active = true;
    if (!quiet) {
        printk("smmu: SMMUv3 at 0x%lx: %u streams, every one aborting DMA until claimed; events "
               "on INTID %u, errors on INTID %u\n",
               (unsigned long)s->base, streams, s->eventq_intid, s->gerror_intid);
    }
    return 0;
}
