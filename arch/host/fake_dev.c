/* SPDX-License-Identifier: MIT */
/*
 * fake_dev.c — the fake arch's device registers (arch_mmio_*), for host unit tests of
 * kernel/dev/: a table of plain registers (virtio-mmio transports, the registers inside PCI
 * BARs), a PCI configuration space behind an ECAM window with BAR sizing and a command
 * register, and an SMMUv3 register file whose command queue is consumed when its producer
 * index is written (what QEMU's model does), with the commands recorded in fake.smmu.
 *
 * Windows are those fake_boot_info lists, as on the real arch: the virtio-mmio transports, the
 * ECAM space of bus pci.bus (1 MiB), the reachable PCI windows and the SMMU; an access outside
 * them reads all ones and a write is dropped.  Physical addresses are host addresses here
 * (arch_defs.h), so the SMMU model reads its command queue straight from memory.
 * Specs modelled: PCI Local Bus 3.0, 6.2.5.1 (BAR sizing: the bits of the size read back as 0);
 * SMMUv3 (ARM IHI 0070) 6.3 (CR0/CR0ACK, IRQ_CTRL/IRQ_CTRLACK, CMDQ_PROD/CMDQ_CONS).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "fake.h"

#define ECAM_BUS_SIZE  (1ull << 20)
#define SMMU_CR0       0x20
#define SMMU_CR0ACK    0x24
#define SMMU_IRQ_CTRL  0x50
#define SMMU_IRQ_ACK   0x54
#define SMMU_CMDQ_BASE 0x90
#define SMMU_CMDQ_PROD 0x98
#define SMMU_CMDQ_CONS 0x9c
#define SMMU_PAGE1     0x10000

static _Noreturn void unsupported(const char *what)
{
    fprintf(stderr, "fake arch: %s is not available in host unit tests\n", what);
    abort();
}

static bool inside(paddr_t pa, unsigned width, uint64_t base, uint64_t size)
{
    return pa >= base && pa + width <= base + size;
}

/* ---- a table of plain registers ---- */

static int fake_mmio_slot(uint64_t pa, bool create)
{
    for (int i = 0; i < FAKE_MMIO_REGS; i++) {
        if (fake.mmio[i].pa == pa) {
            return i;
        }
    }
    for (int i = 0; create && i < FAKE_MMIO_REGS; i++) {
        if (!fake.mmio[i].pa) {
            fake.mmio[i].pa = pa;
            return i;
        }
    }
    return -1;
}

void fake_mmio_set(uint64_t pa, uint32_t val)
{
    int i = fake_mmio_slot(pa, true);
    if (i < 0) {
        unsupported("more than FAKE_MMIO_REGS device registers");
    }
    fake.mmio[i].val = val;
}

uint32_t fake_mmio_get(uint64_t pa)
{
    int i = fake_mmio_slot(pa, false);
    return i < 0 ? 0 : fake.mmio[i].val;
}

static bool is_plain_register(paddr_t pa, unsigned width)
{
    const struct arch_boot_info *bi = &fake_boot_info;
    for (unsigned i = 0; i < bi->ndevices; i++) {
        if (inside(pa, width, bi->devices[i].base, bi->devices[i].size)) {
            return true;
        }
    }
    for (unsigned i = 0; bi->pci.present && i < bi->pci.nwindows; i++) {
        const struct arch_pci_window *w = &bi->pci.windows[i];
        if (w->reachable && inside(pa, width, w->cpu, w->size)) {
            return true;
        }
    }
    return false;
}

/* ---- PCI configuration space ---- */

struct fake_pci_fn *fake_pci_add(unsigned dev, unsigned fn, uint16_t vendor, uint16_t device,
                                 uint32_t class_code)
{
    for (unsigned i = 0; i < FAKE_PCI_FNS; i++) {
        struct fake_pci_fn *f = &fake.pci[i];
        if (!f->present) {
            memset(f, 0, sizeof(*f));
            f->present = true;
            f->dev = dev;
            f->fn = fn;
            f->cfg[0] = (uint32_t)device << 16 | vendor;
            f->cfg[2] = class_code << 8; /* revision 0 */
            f->cmd_wmask = 0x0407;       /* I/O, memory, bus master, INTx disable */
            return f;
        }
    }
    unsupported("more than FAKE_PCI_FNS PCI functions");
}

void fake_pci_bar(struct fake_pci_fn *f, unsigned i, uint64_t size, bool io, bool is64,
                  bool prefetch)
{
    f->bar_size[i] = size;
    f->cfg[4 + i] = io ? 1u : (is64 ? 4u : 0u) | (prefetch ? 8u : 0u);
}

static struct fake_pci_fn *pci_fn(paddr_t pa)
{
    const struct arch_pci *p = &fake_boot_info.pci;
    uint64_t off = pa - p->ecam;
    for (unsigned i = 0; i < FAKE_PCI_FNS; i++) {
        struct fake_pci_fn *f = &fake.pci[i];
        if (f->present && f->dev == (off >> 15 & 31) && f->fn == (off >> 12 & 7)) {
            return f;
        }
    }
    return 0;
}

static bool is_ecam(paddr_t pa, unsigned width)
{
    const struct arch_pci *p = &fake_boot_info.pci;
    return p->present && inside(pa, width, p->ecam, ECAM_BUS_SIZE);
}

static uint32_t ecam_read32(paddr_t pa)
{
    struct fake_pci_fn *f = pci_fn(pa);
    unsigned reg = (unsigned)(pa & 0xfff);
    if (!f) {
        return 0xffffffffu; /* no function: the host bridge completes with all ones */
    }
    return reg < sizeof(f->cfg) ? f->cfg[reg / 4] : 0;
}

/* The value a BAR register keeps when v is written (the size's bits stay 0). */
static uint32_t bar_write(const struct fake_pci_fn *f, unsigned i, uint32_t v)
{
    uint32_t flags = f->cfg[4 + i] & (f->cfg[4 + i] & 1 ? 0x3u : 0xfu);
    if (f->bar_size[i]) {
        uint64_t mask = ~(f->bar_size[i] - 1);
        return ((uint32_t)mask & v & ~(flags & 1 ? 0x3u : 0xfu)) | flags;
    }
    if (i > 0 && (f->cfg[4 + i - 1] & 0x7) == 0x4 && f->bar_size[i - 1]) {
        return v & (uint32_t)(~(f->bar_size[i - 1] - 1) >> 32); /* upper half of a 64-bit BAR */
    }
    return f->cfg[4 + i]; /* no BAR: reads as written at reset (0) */
}

static void ecam_write32(paddr_t pa, uint32_t v)
{
    struct fake_pci_fn *f = pci_fn(pa);
    unsigned reg = (unsigned)(pa & 0xfff);
    if (!f) {
        return;
    }
    f->cfg_writes++;
    if (reg == 0x04) {
        f->cfg[1] = (f->cfg[1] & 0xffff0000u) | (v & f->cmd_wmask); /* status: read-only */
    } else if (reg >= 0x10 && reg < 0x28) {
        f->cfg[reg / 4] = bar_write(f, (reg - 0x10) / 4, v);
    }
    /* everything else is read-only in this model */
}

/* ---- the SMMU ---- */

static bool is_smmu(paddr_t pa, unsigned width)
{
    const struct arch_smmu *s = &fake_boot_info.smmu;
    return s->present && inside(pa, width, s->base, s->size);
}

/* Consume commands from CONS up to PROD (both with their wrap bit), recording each. */
static void smmu_consume(paddr_t base)
{
    uint64_t qbase = (uint64_t)fake_mmio_get(base + SMMU_CMDQ_BASE) |
                     (uint64_t)fake_mmio_get(base + SMMU_CMDQ_BASE + 4) << 32;
    unsigned log2 = qbase & 0x1f;
    uint32_t prod = fake_mmio_get(base + SMMU_CMDQ_PROD);
    uint32_t cons = fake_mmio_get(base + SMMU_CMDQ_CONS) & ((2u << log2) - 1);
    const uint64_t *q = (const uint64_t *)(uintptr_t)(qbase & 0x000fffffffffffe0ull);
    while (!fake.smmu.stuck && cons != (prod & ((2u << log2) - 1))) {
        const uint64_t *e = q + 2 * (cons & ((1u << log2) - 1));
        if (fake.smmu.ncmds < FAKE_SMMU_CMDS) {
            fake.smmu.cmd[fake.smmu.ncmds][0] = e[0];
            fake.smmu.cmd[fake.smmu.ncmds][1] = e[1];
            fake.smmu.ncmds++;
        }
        cons = (cons + 1) & ((2u << log2) - 1);
    }
    fake_mmio_set(base + SMMU_CMDQ_CONS, cons);
}

static void smmu_write32(paddr_t pa, uint32_t v)
{
    paddr_t base = fake_boot_info.smmu.base;
    paddr_t off = (pa - base) & ~(paddr_t)SMMU_PAGE1; /* page 1 aliases page 0, as in QEMU */
    fake_mmio_set(base + off, v);
    if (off == SMMU_CR0) {
        fake_mmio_set(base + SMMU_CR0ACK, v);
    } else if (off == SMMU_IRQ_CTRL) {
        fake_mmio_set(base + SMMU_IRQ_ACK, v);
    } else if (off == SMMU_CMDQ_PROD) {
        smmu_consume(base);
    }
}

/* ---- arch_mmio_* ---- */

uint32_t arch_mmio_read32(paddr_t pa)
{
    if (pa & 3) {
        return 0xffffffffu;
    }
    if (is_ecam(pa, 4)) {
        return ecam_read32(pa);
    }
    if (is_smmu(pa, 4)) {
        const struct arch_smmu *s = &fake_boot_info.smmu;
        return fake_mmio_get(s->base + ((pa - s->base) & ~(paddr_t)SMMU_PAGE1));
    }
    return is_plain_register(pa, 4) ? fake_mmio_get(pa) : 0xffffffffu;
}

void arch_mmio_write32(paddr_t pa, uint32_t v)
{
    if (pa & 3) {
        return;
    }
    if (is_ecam(pa, 4)) {
        ecam_write32(pa, v);
    } else if (is_smmu(pa, 4)) {
        smmu_write32(pa, v);
    } else if (is_plain_register(pa, 4)) {
        fake.mmio_writes++;
        if (pa != fake.mmio_stuck_pa) {
            fake_mmio_set(pa, v);
        }
    }
}

/* Byte registers are registers of their own in the table (virtio-pci's device_status). */
uint8_t arch_mmio_read8(paddr_t pa)
{
    if (is_ecam(pa, 1)) {
        return (uint8_t)(ecam_read32(pa & ~(paddr_t)3) >> (8 * (pa & 3)));
    }
    return is_plain_register(pa, 1) ? (uint8_t)fake_mmio_get(pa) : 0xff;
}

void arch_mmio_write8(paddr_t pa, uint8_t v)
{
    if (!is_plain_register(pa, 1)) {
        return; /* the kernel writes config space 32 bits at a time */
    }
    fake.mmio_writes++;
    if (pa != fake.mmio_stuck_pa) {
        fake_mmio_set(pa, v);
    }
}
