/* SPDX-License-Identifier: MIT */
/*
 * device.c — devices handed to user-space drivers: the claim (contract in
 * include/kernel/device.h, ABI in include/uapi/zt_device.h).
 *
 * What it does: at boot takes the SMMU (smmu.c), sets up the PCIe root bus (pci.c) and probes
 * the virtio-mmio transports (virtio 1.2, 4.2.2: MagicValue 0x000, Version 0x004, DeviceID
 * 0x008, VendorID 0x00c, Status 0x070), and says on the console, for each kind of device,
 * whether an IOMMU confines its DMA.  It then gives a device to one process on request and
 * takes it back.  A claim maps the registers (a transport's page; every memory BAR of a PCI
 * function) as device memory and a contiguous DMA region as normal memory; behind the SMMU it
 * attaches the function's stream to that region only, at ZT_IOVA_BASE; it turns the function's
 * decoding and bus mastering on.  A release — zt_release, the holder's exit or death, a DMA
 * fault — is one function, take_back: registers unmapped, the device reset (virtio
 * status 0 read back as 0; PCI bus mastering and decoding off), the SMMU stream back to abort
 * with its TLB entries invalidated and the SYNC completed, and only then the DMA region
 * unmapped and its pages freed.  A device that does not reset and that no IOMMU stops keeps
 * its pages forever (never reused) and refuses later claims with -EIO.
 * What it does not do: drive the device (user/net/), take its interrupts (disabled, routed to
 * housekeeping), touch hardware except through pci.c, smmu.c and arch_mmio_*.
 *
 * The claim state machine (one per slot; device_lock guards state and holder):
 *
 *     FREE --reserve--> CLAIMING --mapped--> HELD --release/exit/exec/fault--> RELEASING
 *       ^                  |                                                       |
 *       +---- failed ------+<----------------------- reset seen or IOMMU aborts ---+
 *                                                    did not stop: ----> BROKEN (for good)
 *
 * CLAIMING and RELEASING are worked on by one context outside the lock; every other claim
 * meanwhile gets -EBUSY and every other release -EBUSY; holder is set from CLAIMING to the end
 * of RELEASING, so a process's teardown (device_release_all) waits for a release another
 * context has under way before its address space goes.
 *
 * Locks: device_lock is a leaf (IRQs masked), never held across an allocation, a mapping or a
 * device access; proc_lock is taken (alone) to signal a holder whose DMA faulted.
 * Contexts: claim/release in the calling task (its CPU; TLB invalidations are broadcast, no
 * IPI); device_release_all in execve (the calling task, before the old image goes) and in the
 * process teardown work (housekeeping); the DMA fault report in the housekeeping worker.
 */
#include "kernel/device.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/pci.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/smmu.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define VIRTIO_MMIO_MAGIC     0x000
#define VIRTIO_MMIO_VERSION   0x004
#define VIRTIO_MMIO_DEVICE_ID 0x008
#define VIRTIO_MMIO_VENDOR_ID 0x00c
#define VIRTIO_MMIO_STATUS    0x070
#define VIRTIO_MAGIC          0x74726976 /* "virt", little-endian */
#define RESET_READS           1000       /* status reads before a reset counts as failed */
#define CLAIM_V1_BYTES        __builtin_offsetof(struct zt_claim, dma_mode)
#define INFO_V1_BYTES         __builtin_offsetof(struct zt_device_info, kind)

_Static_assert(CLAIM_V1_BYTES == 56, "version 1 of struct zt_claim is 56 bytes");
_Static_assert(INFO_V1_BYTES == 48, "version 1 of struct zt_device_info is 48 bytes");

#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1)

static uint64_t bar_bytes(const struct pci_bar *b)
{
    return (b->size + PAGE_MASK) & ~PAGE_MASK; /* a BAR smaller than a page has the page */
}

enum claim_state { FREE, CLAIMING, HELD, RELEASING, BROKEN };

struct device {
    bool present; /* a slot with something behind it (a transport, or a PCI function) */
    bool is_pci;
    struct arch_device hw;               /* virtio-mmio: window and interrupt (arch_boot_info) */
    const struct pci_fn *fn;             /* PCI */
    uint32_t version, device_id, vendor; /* the version-1 view */
    bool can_dma;
    /* guarded by device_lock */
    enum claim_state state;
    struct process *holder;
    /* the claim: written by the context in CLAIMING or RELEASING, stable while HELD */
    uint64_t regs_va;             /* virtio-mmio: the window's pages */
    uint64_t bar_va[ZT_PCI_BARS]; /* PCI: each mapped BAR */
    uint64_t dma_va;
    paddr_t dma_pa;
    size_t dma_pages;
    bool confined; /* its DMA goes through the SMMU (ctx) */
    struct smmu_context ctx;
};

static struct device devices[ZT_DEVICE_SLOTS];
static unsigned nmmio, npci;
static unsigned nheld; /* slots not FREE nor BROKEN (device_lock): 0 lets every exit skip */
static spinlock_t device_lock;

static const char *virtio_name(uint32_t id)
{
    switch (id) {
    case ZT_VIRTIO_ID_NET:
        return "net";
    case ZT_VIRTIO_ID_BLOCK:
        return "block";
    case ZT_VIRTIO_ID_CONSOLE:
        return "console";
    case ZT_VIRTIO_ID_RNG:
        return "rng";
    default:
        return "other";
    }
}

static struct device *slot_device(unsigned slot)
{
    return slot < ZT_DEVICE_SLOTS && devices[slot].present ? &devices[slot] : 0;
}

/* Can the SMMU confine this device's DMA? */
static bool can_confine(const struct device *d)
{
    return d->is_pci && d->fn->has_sid && d->fn->sid < SMMU_STREAMS && !d->fn->bypasses_iommu &&
           smmu_active();
}

static uint32_t dma_mode(const struct device *d)
{
    return !d->can_dma ? 0 : can_confine(d) ? ZT_DEV_IOMMU : ZT_DEV_UNCONFINED;
}

/* ---- boot ---- */

static void probe_mmio(bool quiet)
{
    const struct arch_boot_info *bi = arch_boot_info();
    unsigned found = 0;
    nmmio = MIN(bi->ndevices, ZT_MMIO_SLOTS);
    for (unsigned i = 0; i < nmmio; i++) {
        struct device *d = &devices[i];
        d->present = true;
        d->hw = bi->devices[i];
        if (arch_mmio_read32(d->hw.base + VIRTIO_MMIO_MAGIC) != VIRTIO_MAGIC) {
            continue; /* not a virtio transport after all: device_id stays 0 */
        }
        d->version = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_VERSION);
        d->device_id = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_DEVICE_ID);
        d->vendor = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_VENDOR_ID);
        d->can_dma = d->device_id != 0; /* every virtio device uses rings in memory */
        found += d->device_id != 0;
        if (d->device_id && !quiet) {
            printk("devices: slot %u: virtio %s (id %u), version %u, at 0x%08lx, INTID %u\n", i,
                   virtio_name(d->device_id), d->device_id, d->version, d->hw.base, d->hw.intid);
        }
    }
    if (found) {
        printk("devices: WARNING: virtio-mmio DMA is UNCONFINED (no IOMMU in front of the "
               "transports): a claim needs ZT_CLAIM_UNCONFINED_DMA, and its holder can make the "
               "device overwrite the kernel\n");
    }
}

static void add_pci(bool quiet)
{
    npci = MIN(pci_count(), ZT_PCI_MAX);
    bool unconfined = false, confined = false;
    for (unsigned i = 0; i < npci; i++) {
        struct device *d = &devices[ZT_PCI_SLOT0 + i];
        const struct pci_fn *f = pci_get(i);
        *d = (struct device){.present = true, .is_pci = true, .fn = f, .can_dma = f->can_dma};
        d->hw.intid = f->intx_intid;
        d->version = ZT_DEVICE_VERSION_PCI;
        d->vendor = f->vendor;
        d->device_id = f->virtio_type ? f->virtio_type : ZT_DEVICE_ID_OTHER;
        for (unsigned b = 0; b < PCI_BARS && !d->hw.base; b++) {
            if ((f->bar[b].flags & PCI_BAR_ASSIGNED)) {
                d->hw.base = f->bar[b].cpu;
                d->hw.size = f->bar[b].size;
            }
        }
        unconfined |= dma_mode(d) == ZT_DEV_UNCONFINED;
        confined |= dma_mode(d) == ZT_DEV_IOMMU;
        if (!quiet && !f->is_bridge) {
            char name[8];
            printk("devices: slot %u: pci %s, %s\n", ZT_PCI_SLOT0 + i, pci_name(f, name),
                   !f->claimable    ? "cannot be claimed (a BAR has no address)"
                   : !d->can_dma    ? "no DMA"
                   : can_confine(d) ? "DMA confined by the SMMU"
                   : f->bypasses_iommu && f->has_sid && smmu_active()
                       ? "DMA UNCONFINED (virtio without ACCESS_PLATFORM bypasses the SMMU)"
                       : "DMA UNCONFINED (no IOMMU)");
        }
    }
    if (confined) {
        printk("devices: the SMMU confines PCI DMA: a claimed function reaches only its holder's "
               "DMA region, at I/O address 0x%lx\n",
               (unsigned long)ZT_IOVA_BASE);
    }
    if (unconfined) {
        printk("devices: WARNING: PCI functions marked UNCONFINED reach all memory by DMA: a "
               "claim of one needs ZT_CLAIM_UNCONFINED_DMA, and its holder can make it "
               "overwrite the kernel\n");
    }
}

void device_init(bool quiet)
{
    const struct arch_boot_info *bi = arch_boot_info();
    memset(devices, 0, sizeof(devices)); /* (boot runs this once; host tests once a scenario) */
    nheld = 0;
    smmu_init(&bi->smmu, quiet); /* first: every stream aborts before any function is set up */
    smmu_set_fault_handler(device_dma_fault);
    pci_init(&bi->pci, quiet);
    probe_mmio(quiet);
    add_pci(quiet);
}

/* ---- listing ---- */

static void info_of(const struct device *d, unsigned slot, struct zt_device_info *o)
{
    *o = (struct zt_device_info){
        .slot = slot,
        .intid = d->hw.intid,
        .base = d->hw.base,
        .size = d->hw.size,
        .version = d->version,
        .device_id = d->device_id,
        .vendor = d->vendor,
        .holder = d->holder ? d->holder->pid : 0,
        .dma_size = d->holder ? d->dma_pages * PAGE_SIZE : 0,
        .kind = d->is_pci ? ZT_DEV_PCI : ZT_DEV_VIRTIO_MMIO,
        .flags = (d->can_dma ? ZT_DEV_DMA : 0) | dma_mode(d) |
                 (d->state == BROKEN ? ZT_DEV_BROKEN : 0) |
                 (d->is_pci && !d->fn->claimable ? ZT_DEV_NO_ADDRESS : 0),
    };
    if (!d->is_pci) {
        return;
    }
    const struct pci_fn *f = d->fn;
    o->bdf = f->rid;
    o->pci_vendor = f->vendor;
    o->pci_device = f->device;
    o->class_code = f->class_code;
    o->sid = f->has_sid ? f->sid : 0;
    for (unsigned b = 0; b < ZT_PCI_BARS; b++) {
        const struct pci_bar *bar = &f->bar[b];
        o->bars[b] = (struct zt_bar){
            .addr = bar->cpu,
            .size = bar->size,
            .flags = ((bar->flags & PCI_BAR_IO) ? ZT_BAR_IO : 0) |
                     ((bar->flags & PCI_BAR_64) ? ZT_BAR_64 : 0) |
                     ((bar->flags & PCI_BAR_PREFETCH) ? ZT_BAR_PREFETCH : 0) |
                     ((bar->flags & PCI_BAR_ASSIGNED) ? ZT_BAR_ASSIGNED : 0),
        };
    }
}

bool device_info_at(unsigned k, struct zt_device_info *out)
{
    bool found = false;
    unsigned long flags = spin_lock_irqsave(&device_lock);
    for (unsigned slot = 0; slot < ZT_DEVICE_SLOTS && !found; slot++) {
        if (devices[slot].present && k-- == 0) {
            info_of(&devices[slot], slot, out);
            found = true;
        }
    }
    spin_unlock_irqrestore(&device_lock, flags);
    return found;
}

unsigned device_list(struct zt_device_info *out, unsigned n)
{
    unsigned k = 0;
    unsigned long flags = spin_lock_irqsave(&device_lock);
    for (unsigned slot = 0; slot < ZT_DEVICE_SLOTS; slot++) {
        if (devices[slot].present) {
            if (k < n) {
                info_of(&devices[slot], slot, &out[k]);
            }
            k++;
        }
    }
    spin_unlock_irqrestore(&device_lock, flags);
    return k;
}

/* ---- claim ---- */

/* Pages of a virtio-mmio window (it need not be page-aligned, nor fit one page). */
static uint64_t regs_page(const struct device *d)
{
    return d->hw.base & ~PAGE_MASK;
}

static size_t regs_pages(const struct device *d)
{
    return (size_t)((d->hw.base + d->hw.size - regs_page(d) + PAGE_MASK) / PAGE_SIZE);
}

/* Does another process hold a transport whose registers share a page with d's (lock held)?
 * (PCI BARs never share a page: pci.c places each on pages of its own.) */
static bool page_shared_with_other(const struct device *d, const struct process *p)
{
    ASSERT_HELD(&device_lock);
    for (unsigned i = 0; !d->is_pci && i < nmmio; i++) {
        const struct device *o = &devices[i];
        uint64_t o_end = regs_page(o) + regs_pages(o) * PAGE_SIZE;
        uint64_t d_end = regs_page(d) + regs_pages(d) * PAGE_SIZE;
        if (o->holder && o->holder != p && regs_page(o) < d_end && regs_page(d) < o_end) {
            return true;
        }
    }
    return false;
}

/* Everything about the arguments, before anything changes. */
static int check_claim(const struct device *d, uint64_t dma_bytes, unsigned flags)
{
    bool unconfined_ok = flags & ZT_CLAIM_UNCONFINED_DMA;
    if (!d || (flags & ~(ZT_CLAIM_UNCONFINED_DMA | ZT_CLAIM_V2)) || d->device_id == 0) {
        return -EINVAL;
    }
    if (d->is_pci && !(flags & ZT_CLAIM_V2)) {
        return -EINVAL; /* the version-1 result cannot describe its BARs */
    }
    if (!d->can_dma) {
        return dma_bytes != 0 || unconfined_ok ? -EINVAL : d->fn->claimable ? 0 : -ENXIO;
    }
    if (dma_bytes == 0 || (dma_bytes & PAGE_MASK)) {
        return -EINVAL;
    }
    if (dma_bytes > ZT_DMA_MAX) {
        return -ENOMEM;
    }
    if (!can_confine(d) && !unconfined_ok) {
        return -EPERM; /* no IOMMU: only with the caller's explicit consent */
    }
    return d->is_pci && !d->fn->claimable ? -ENXIO : 0;
}

static void count_held(int delta)
{
    __atomic_store_n(&nheld, nheld + (unsigned)delta, __ATOMIC_RELAXED);
}

/* FREE -> CLAIMING for p, or say why not. */
static int reserve(struct device *d, struct process *p)
{
    unsigned long flags = spin_lock_irqsave(&device_lock);
    int r = d->state == BROKEN                                 ? -EIO
            : d->state != FREE || page_shared_with_other(d, p) ? -EBUSY
                                                               : 0;
    if (r == 0) {
        d->state = CLAIMING;
        d->holder = p;
        count_held(1);
    }
    spin_unlock_irqrestore(&device_lock, flags);
    return r;
}

/* CLAIMING/RELEASING -> `to`; to FREE or BROKEN ends the claim. */
static void finish(struct device *d, enum claim_state to)
{
    unsigned long flags = spin_lock_irqsave(&device_lock);
    ASSERT((d->state == CLAIMING || d->state == RELEASING) && d->holder && nheld > 0);
    d->state = to;
    if (to == FREE || to == BROKEN) {
        d->holder = 0;
        d->dma_pages = 0;
        count_held(-1);
    }
    spin_unlock_irqrestore(&device_lock, flags);
}

/* The interrupt stays off and, should anything enable it, goes to housekeeping. */
static void quiet_interrupt(const struct device *d)
{
    if (d->hw.intid) {
        arch_irq_set_enabled(d->hw.intid, false);
        irq_route(d->hw.intid, cpumask_first(cpumask_load(&cpus_housekeeping)));
    }
}

static void unmap_registers(struct device *d, struct process *p)
{
    if (!d->is_pci) {
        vm_unmap_phys(p->vm, d->regs_va, regs_pages(d) * PAGE_SIZE);
        return;
    }
    for (unsigned b = 0; b < ZT_PCI_BARS; b++) {
        if (d->bar_va[b]) {
            vm_unmap_phys(p->vm, d->bar_va[b], bar_bytes(&d->fn->bar[b]));
            d->bar_va[b] = 0;
        }
    }
}

/* Map the registers: a transport's pages, or each assigned memory BAR. */
static int map_registers(struct device *d, struct process *p)
{
    ASSERT(d->state == CLAIMING && d->holder == p); /* reserved for p */
    if (!d->is_pci) {
        long va = vm_map_phys(p->vm, regs_page(d), regs_pages(d), PROT_READ | PROT_WRITE, true);
        d->regs_va = va > 0 ? (uint64_t)va : 0;
        return va < 0 ? (int)va : 0;
    }
    for (unsigned b = 0; b < ZT_PCI_BARS; b++) {
        const struct pci_bar *bar = &d->fn->bar[b];
        d->bar_va[b] = 0;
        if (!(bar->flags & PCI_BAR_ASSIGNED)) {
            continue;
        }
        long va =
            vm_map_phys(p->vm, bar->cpu, bar_bytes(bar) / PAGE_SIZE, PROT_READ | PROT_WRITE, true);
        if (va < 0) {
            unmap_registers(d, p);
            return (int)va;
        }
        d->bar_va[b] = (uint64_t)va;
    }
    return 0;
}

/* The DMA region: contiguous zeroed pages, mapped into p, attached to the SMMU if it can
 * confine the device.  On failure nothing of it stays. */
static int map_dma(struct device *d, struct process *p, size_t pages)
{
    ASSERT(d->state == CLAIMING && d->holder == p);
    d->dma_pages = pages;
    d->confined = false;
    d->dma_va = 0;
    d->dma_pa = 0;
    if (!pages) {
        return 0; /* a function that cannot DMA: registers only */
    }
    d->dma_pa = page_alloc_contig(pages);
    if (!d->dma_pa) {
        return -ENOMEM;
    }
    long va = vm_map_phys(p->vm, d->dma_pa, pages, PROT_READ | PROT_WRITE, false);
    int r = va < 0 ? (int)va : 0;
    if (r == 0 && can_confine(d)) {
        uint32_t sid = d->fn->sid;
        r = smmu_attach(&d->ctx, sid, (uint16_t)(sid + 1), ZT_IOVA_BASE, d->dma_pa, pages);
        d->confined = r == 0;
        if (r && va >= 0) {
            vm_unmap_phys(p->vm, (uint64_t)va, pages * PAGE_SIZE);
        }
    }
    if (r) {
        page_free_contig(d->dma_pa, pages);
        return r;
    }
    d->dma_va = (uint64_t)va;
    return 0;
}

static void fill_claim(const struct device *d, unsigned slot, struct zt_claim *out)
{
    *out = (struct zt_claim){
        .regs = d->regs_va + (d->hw.base & PAGE_MASK),
        .regs_size = d->hw.size,
        .dma = d->dma_va,
        .dma_phys = d->confined ? ZT_IOVA_BASE : d->dma_pa,
        .dma_size = d->dma_pages * PAGE_SIZE,
        .device_id = d->device_id,
        .version = d->version,
        .intid = d->hw.intid,
        .slot = slot,
        .dma_mode = d->dma_pages ? dma_mode(d) : 0,
        .kind = d->is_pci ? ZT_DEV_PCI : ZT_DEV_VIRTIO_MMIO,
    };
    if (!d->dma_pages) {
        out->dma_phys = 0;
    }
    if (!d->is_pci) {
        return;
    }
    out->regs = 0;
    for (unsigned b = 0; b < ZT_PCI_BARS; b++) {
        const struct pci_bar *bar = &d->fn->bar[b];
        out->bars[b] = (struct zt_bar){.addr = d->bar_va[b], .size = bar->size};
        out->bars[b].flags = ((bar->flags & PCI_BAR_IO) ? ZT_BAR_IO : 0) |
                             ((bar->flags & PCI_BAR_64) ? ZT_BAR_64 : 0) |
                             ((bar->flags & PCI_BAR_PREFETCH) ? ZT_BAR_PREFETCH : 0) |
                             ((bar->flags & PCI_BAR_ASSIGNED) ? ZT_BAR_ASSIGNED : 0);
        if (!out->regs && d->bar_va[b]) {
            out->regs = d->bar_va[b];
            out->regs_size = bar->size;
        }
    }
    pci_cfg_copy(d->fn, out->config);
}

int device_claim(struct process *p, unsigned slot, uint64_t dma_bytes, unsigned flags,
                 struct zt_claim *out)
{
    struct device *d = slot_device(slot);
    int r = check_claim(d, dma_bytes, flags);
    if (r == 0) {
        r = reserve(d, p);
    }
    if (r) {
        return r;
    }
    quiet_interrupt(d);
    r = map_registers(d, p);
    if (r == 0) {
        r = map_dma(d, p, (size_t)(dma_bytes / PAGE_SIZE));
        if (r) {
            unmap_registers(d, p);
        }
    }
    if (r == 0 && d->is_pci) {
        pci_enable(d->fn, d->can_dma); /* decoding, and bus mastering for a DMA function */
    }
    if (r == 0) {
        fill_claim(d, slot, out);
    }
    finish(d, r == 0 ? HELD : FREE);
    return r;
}

/* ---- release ---- */

/* Status 0 resets a virtio-mmio device; it has stopped (no more DMA) once status reads 0. */
static bool reset_mmio(const struct device *d)
{
    arch_mmio_write32(d->hw.base + VIRTIO_MMIO_STATUS, 0);
    for (int i = 0; i < RESET_READS; i++) {
        if (arch_mmio_read32(d->hw.base + VIRTIO_MMIO_STATUS) == 0) {
            return true;
        }
    }
    return false;
}

/* The one release path (d RELEASING, held by p): registers unmapped, device reset, SMMU
 * stream aborted and its TLB invalidated, and only then the DMA region unmapped and freed. */
static void take_back(struct device *d, struct process *p, unsigned slot)
{
    ASSERT(d->state == RELEASING && d->holder == p && d == &devices[slot]);
    bool stopped;
    if (d->is_pci) {
        unmap_registers(d, p); /* the holder can no longer poke it while it is reset */
        stopped = pci_reset(d->fn);
    } else {
        stopped = reset_mmio(d);
        unmap_registers(d, p);
    }
    bool aborted = d->confined && smmu_detach(&d->ctx) == 0; /* after it: no DMA gets through */
    if (d->dma_pages) {
        vm_unmap_phys(p->vm, d->dma_va, d->dma_pages * PAGE_SIZE);
    }
    bool safe = stopped || aborted;
    if (d->dma_pages && safe) {
        page_free_contig(d->dma_pa, d->dma_pages);
    }
    if (!stopped && !d->is_pci) {
        printk("devices: slot %u did not reset (status still %u): its %zu DMA pages stay out of "
               "use and the device cannot be claimed again\n",
               slot, arch_mmio_read32(d->hw.base + VIRTIO_MMIO_STATUS), d->dma_pages);
    } else if (!stopped) {
        printk("devices: slot %u did not reset: %s; it cannot be claimed again\n", slot,
               safe ? "the SMMU aborts its DMA, so its pages were freed"
                    : "its DMA pages stay out of use for good");
    }
    finish(d, stopped ? FREE : BROKEN);
}

/* HELD by p -> RELEASING, or why not (lock held). */
static int start_release(struct device *d, const struct process *p)
{
    ASSERT_HELD(&device_lock);
    if (d->holder != p) {
        return -EPERM;
    }
    if (d->state != HELD) {
        return -EBUSY;
    }
    d->state = RELEASING;
    return 0;
}

int device_release(struct process *p, unsigned slot)
{
    struct device *d = slot_device(slot);
    if (!d) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&device_lock);
    int r = start_release(d, p);
    spin_unlock_irqrestore(&device_lock, flags);
    if (r == 0) {
        take_back(d, p, slot);
    }
    return r;
}

void device_release_all(struct process *p)
{
    /* Nothing held anywhere (the usual exit): one load.  Otherwise p's own claims happened
     * before its exit, which this teardown follows through proc_lock, so they are seen. */
    if (__atomic_load_n(&nheld, __ATOMIC_RELAXED) == 0) {
        return;
    }
    for (unsigned slot = 0; slot < ZT_DEVICE_SLOTS; slot++) {
        /* -EBUSY: a DMA fault's report is ending it meanwhile; p's memory must outlive that */
        while (devices[slot].present && device_release(p, slot) == -EBUSY) {
            sched_yield_current();
        }
    }
}

/* ---- DMA faults (the housekeeping worker, from smmu.c) ---- */

static struct device *device_of_stream(uint32_t sid)
{
    for (unsigned i = 0; i < npci; i++) {
        struct device *d = &devices[ZT_PCI_SLOT0 + i];
        if (d->fn->has_sid && d->fn->sid == sid) {
            return d;
        }
    }
    return 0;
}

static const char *event_name(uint8_t type)
{
    switch (type) {
    case 0x10:
        return "translation fault";
    case 0x11:
        return "address size fault";
    case 0x12:
        return "access fault";
    case 0x13:
        return "permission fault";
    case 0x02:
        return "bad stream id";
    case 0x04:
        return "bad stream table entry";
    default:
        return "event";
    }
}

void device_dma_fault(const struct smmu_fault *f)
{
    struct device *d = device_of_stream(f->sid);
    char name[8];
    const char *fn_name = d ? pci_name(d->fn, name) : "?";
    unsigned slot = d ? (unsigned)(d - devices) : 0;
    struct process *p = 0;
    unsigned long flags = spin_lock_irqsave(&device_lock);
    if (d && d->state == HELD) {
        p = d->holder;
        d->state = RELEASING; /* p stays: its teardown waits for this release */
    }
    spin_unlock_irqrestore(&device_lock, flags);
    char more[48] = "";
    if (f->repeats) {
        ksnprintf(more, sizeof(more), " (+%u more up to 0x%lx)", f->repeats,
                  (unsigned long)f->last_addr);
    }
    if (!p) {
        printk("smmu: %s, stream %u (%s, no claim): %s I/O address 0x%lx%s\n", event_name(f->type),
               f->sid, fn_name, f->write ? "write to" : "read of", (unsigned long)f->addr, more);
        return;
    }
    /* One line, under printk's 256 bytes whatever the numbers. */
    printk("smmu: DMA fault: pid %d (%pE), slot %u (%s): %s, %s I/O address 0x%lx%s outside "
           "[0x%lx, 0x%lx): function reset, claim ended, SIGBUS sent\n",
           p->pid, p->name, slot, fn_name, event_name(f->type), f->write ? "write to" : "read of",
           (unsigned long)f->addr, more, (unsigned long)ZT_IOVA_BASE,
           (unsigned long)(ZT_IOVA_BASE + d->dma_pages * PAGE_SIZE));
    flags = spin_lock_irqsave(&proc_lock);
    signal_send_proc_locked(p, SIGBUS, &signal_info_kernel);
    spin_unlock_irqrestore(&proc_lock, flags);
    take_back(d, p, slot);
}

/* ---- system calls ---- */

long sys_zt_devices(struct trap_frame *f)
{
    bool v2 = arch_frame_arg(f, 1) & ZT_DEVICES_V2;
    uint64_t n = arch_frame_arg(f, 1) & ~(uint64_t)ZT_DEVICES_V2;
    unsigned want = n < ZT_DEVICE_SLOTS ? (unsigned)n : ZT_DEVICE_SLOTS;
    size_t each = v2 ? sizeof(struct zt_device_info) : INFO_V1_BYTES;
    if (vm_check_range(current_vm(), arch_frame_arg(f, 0), want * each, PROT_WRITE)) {
        return -EFAULT;
    }
    unsigned total = device_list(0, 0);
    for (unsigned k = 0; k < MIN(want, total); k++) {
        struct zt_device_info one; /* one entry at a time: the whole table would not fit a
                                      kernel stack */
        if (!device_info_at(k, &one) ||
            copy_to_user(current_vm(), arch_frame_arg(f, 0) + k * each, &one, each)) {
            return -EFAULT;
        }
    }
    return total;
}

long sys_zt_claim(struct trap_frame *f)
{
    struct zt_claim c;
    unsigned slot =
        arch_frame_arg(f, 0) < ZT_DEVICE_SLOTS ? (unsigned)arch_frame_arg(f, 0) : ZT_DEVICE_SLOTS;
    unsigned flags = arch_frame_arg(f, 2) <= 0xffffffffu ? (unsigned)arch_frame_arg(f, 2) : ~0u;
    size_t size = (flags & ZT_CLAIM_V2) ? sizeof(c) : CLAIM_V1_BYTES;
    if (vm_check_range(current_vm(), arch_frame_arg(f, 3), size, PROT_WRITE)) {
        return -EFAULT;
    }
    int r = device_claim(current()->proc, slot, arch_frame_arg(f, 1), flags, &c);
    if (r == 0 && copy_to_user(current_vm(), arch_frame_arg(f, 3), &c, size)) {
        device_release(current()->proc, slot); /* `out` went away meanwhile */
        return -EFAULT;
    }
    return r;
}

long sys_zt_release(struct trap_frame *f)
{
    return device_release(current()->proc, arch_frame_arg(f, 0) < ZT_DEVICE_SLOTS
                                               ? (unsigned)arch_frame_arg(f, 0)
                                               : ZT_DEVICE_SLOTS);
}
