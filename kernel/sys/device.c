/* SPDX-License-Identifier: MIT */
/*
 * device.c — devices handed to user-space drivers (contract in include/kernel/device.h, ABI in
 * include/uapi/zt_device.h).
 *
 * What it does: probes the virtio-mmio transports at boot (virtio 1.2, 4.2.2 "MMIO Device
 * Register Layout": MagicValue 0x000, Version 0x004, DeviceID 0x008, VendorID 0x00c, Status
 * 0x070), gives one to a process on request (register window mapped as device memory, a
 * contiguous DMA region as normal memory), and takes it back: status 0 resets the device
 * (4.2.3.1: the driver writes 0 and waits until it reads 0), and only once the device has
 * stopped are the window unmapped and the DMA pages freed.  A device that does not reset
 * keeps its pages forever (they are never reused) and refuses later claims with -EIO.
 * What it does not do: drive the device (that is user/net/), take its interrupts (disabled at
 * the GIC, routed to housekeeping), or touch hardware except through arch_mmio_*.
 *
 * State and locks: devices[] is filled at boot and then only the claim fields change, under
 * device_lock (a leaf lock, IRQs masked, never held across an allocation or a mapping).  A
 * slot being claimed or released is marked `busy` under the lock and worked on outside it;
 * `holder` is set from the start of a claim to the end of its release, so every other claim
 * sees -EBUSY meanwhile.
 * Contexts: claim/release run in the calling task (its CPU; no IPI: TLB invalidations are
 * broadcast); device_release_all in execve (the calling task, before the old image goes) and
 * in the process teardown work, on housekeeping.
 */
#include "kernel/device.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"
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

#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1)

struct device {
    struct arch_device hw; /* window and interrupt (arch_boot_info) */
    uint32_t version, device_id, vendor;
    /* guarded by device_lock */
    struct process *holder;
    bool busy;   /* a claim or release is working on it */
    bool broken; /* it once failed to reset: its old DMA pages are kept, no new claims */
    uint64_t regs_va, dma_va;
    paddr_t dma_pa;
    size_t dma_pages;
};

static struct device devices[ARCH_MAX_DEVICES];
static unsigned ndevices;
static unsigned nheld; /* devices with a holder (device_lock): 0 lets every exit skip the scan */
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

void device_init(bool quiet)
{
    const struct arch_boot_info *bi = arch_boot_info();
    ndevices = MIN(bi->ndevices, ARCH_MAX_DEVICES);
    for (unsigned i = 0; i < ndevices; i++) {
        struct device *d = &devices[i];
        d->hw = bi->devices[i];
        if (arch_mmio_read32(d->hw.base + VIRTIO_MMIO_MAGIC) != VIRTIO_MAGIC) {
            continue; /* not a virtio transport after all: device_id stays 0 */
        }
        d->version = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_VERSION);
        d->device_id = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_DEVICE_ID);
        d->vendor = arch_mmio_read32(d->hw.base + VIRTIO_MMIO_VENDOR_ID);
        if (d->device_id && !quiet) {
            printk("devices: slot %u: virtio %s (id %u), version %u, at 0x%08lx, INTID %u\n", i,
                   virtio_name(d->device_id), d->device_id, d->version, d->hw.base, d->hw.intid);
        }
    }
}

unsigned device_list(struct zt_device_info *out, unsigned n)
{
    unsigned long flags = spin_lock_irqsave(&device_lock);
    for (unsigned i = 0; i < MIN(n, ndevices); i++) {
        const struct device *d = &devices[i];
        out[i] = (struct zt_device_info){
            .slot = i,
            .intid = d->hw.intid,
            .base = d->hw.base,
            .size = d->hw.size,
            .version = d->version,
            .device_id = d->device_id,
            .vendor = d->vendor,
            .holder = d->holder ? d->holder->pid : 0,
            .dma_size = d->holder ? d->dma_pages * PAGE_SIZE : 0,
        };
    }
    spin_unlock_irqrestore(&device_lock, flags);
    return ndevices;
}

/* ---- claim ---- */

/* Pages of the register window (it need not be page-aligned, nor fit one page). */
static uint64_t regs_page(const struct device *d)
{
    return d->hw.base & ~PAGE_MASK;
}

static size_t regs_pages(const struct device *d)
{
    return (size_t)((d->hw.base + d->hw.size - regs_page(d) + PAGE_MASK) / PAGE_SIZE);
}

/* Does another process hold a device whose registers share a page with d's (lock held)? */
static bool page_shared_with_other(const struct device *d, const struct process *p)
{
    ASSERT_HELD(&device_lock);
    for (unsigned i = 0; i < ndevices; i++) {
        const struct device *o = &devices[i];
        uint64_t o_end = regs_page(o) + regs_pages(o) * PAGE_SIZE;
        uint64_t d_end = regs_page(d) + regs_pages(d) * PAGE_SIZE;
        if (o->holder && o->holder != p && regs_page(o) < d_end && regs_page(d) < o_end) {
            return true;
        }
    }
    return false;
}

static int check_claim(unsigned slot, uint64_t dma_bytes, unsigned flags)
{
    if (flags != 0 || slot >= ndevices || devices[slot].device_id == 0) {
        return -EINVAL;
    }
    if (dma_bytes == 0 || (dma_bytes & PAGE_MASK)) {
        return -EINVAL;
    }
    return dma_bytes > ZT_DMA_MAX ? -ENOMEM : 0;
}

/* Mark the slot busy and held by p, or say why not. */
static int reserve(struct device *d, struct process *p)
{
    unsigned long flags = spin_lock_irqsave(&device_lock);
    int r = d->broken ? -EIO : (d->holder || page_shared_with_other(d, p)) ? -EBUSY : 0;
    if (r == 0) {
        d->holder = p;
        d->busy = true;
        __atomic_store_n(&nheld, nheld + 1, __ATOMIC_RELAXED);
    }
    spin_unlock_irqrestore(&device_lock, flags);
    return r;
}

/* End a claim (keep_holder) or a release; `broken`: the device did not reset. */
static void finish(struct device *d, bool keep_holder, bool broken)
{
    unsigned long flags = spin_lock_irqsave(&device_lock);
    ASSERT(d->busy && d->holder && nheld > 0); /* reserved by a claim or a release */
    d->busy = false;
    d->broken = d->broken || broken;
    if (!keep_holder) {
        d->holder = 0;
        d->dma_pages = 0;
        __atomic_store_n(&nheld, nheld - 1, __ATOMIC_RELAXED);
    }
    spin_unlock_irqrestore(&device_lock, flags);
}

/* The interrupt stays off and, should anything enable it, goes to housekeeping. */
static void quiet_interrupt(const struct device *d)
{
    arch_irq_set_enabled(d->hw.intid, false);
    irq_route(d->hw.intid, cpumask_first(cpumask_load(&cpus_housekeeping)));
}

/* Map the window and a fresh DMA region into p (d reserved).  On failure nothing stays. */
static int map_into(struct device *d, struct process *p, size_t pages)
{
    ASSERT(d->busy && d->holder == p && pages > 0); /* reserved for p */
    paddr_t dma = page_alloc_contig(pages);
    if (!dma) {
        return -ENOMEM;
    }
    long regs = vm_map_phys(p->vm, regs_page(d), regs_pages(d), PROT_READ | PROT_WRITE, true);
    long va = regs < 0 ? regs : vm_map_phys(p->vm, dma, pages, PROT_READ | PROT_WRITE, false);
    if (va < 0) {
        if (regs >= 0) {
            vm_unmap_phys(p->vm, (uint64_t)regs, regs_pages(d) * PAGE_SIZE);
        }
        page_free_contig(dma, pages);
        return (int)va;
    }
    d->regs_va = (uint64_t)regs;
    d->dma_va = (uint64_t)va;
    d->dma_pa = dma;
    d->dma_pages = pages;
    return 0;
}

int device_claim(struct process *p, unsigned slot, uint64_t dma_bytes, unsigned flags,
                 struct zt_claim *out)
{
    int r = check_claim(slot, dma_bytes, flags);
    if (r) {
        return r;
    }
    struct device *d = &devices[slot];
    r = reserve(d, p);
    if (r) {
        return r;
    }
    quiet_interrupt(d);
    r = map_into(d, p, (size_t)(dma_bytes / PAGE_SIZE));
    if (r == 0) {
        *out = (struct zt_claim){
            .regs = d->regs_va + (d->hw.base & PAGE_MASK),
            .regs_size = d->hw.size,
            .dma = d->dma_va,
            .dma_phys = d->dma_pa,
            .dma_size = dma_bytes,
            .device_id = d->device_id,
            .version = d->version,
            .intid = d->hw.intid,
            .slot = slot,
        };
    }
    finish(d, r == 0, false);
    return r;
}

/* ---- release ---- */

/* Status 0 resets a virtio device; it has stopped (no more DMA) once status reads back 0. */
static bool reset_device(const struct device *d)
{
    arch_mmio_write32(d->hw.base + VIRTIO_MMIO_STATUS, 0);
    for (int i = 0; i < RESET_READS; i++) {
        if (arch_mmio_read32(d->hw.base + VIRTIO_MMIO_STATUS) == 0) {
            return true;
        }
    }
    return false;
}

/* Reset, unmap from p, free the DMA pages (d busy and held by p). */
static void take_back(struct device *d, struct process *p, unsigned slot)
{
    ASSERT(d->busy && d->holder == p && d == &devices[slot]);
    bool stopped = reset_device(d);
    vm_unmap_phys(p->vm, d->regs_va, regs_pages(d) * PAGE_SIZE);
    vm_unmap_phys(p->vm, d->dma_va, d->dma_pages * PAGE_SIZE);
    if (stopped) {
        page_free_contig(d->dma_pa, d->dma_pages);
    } else {
        printk("devices: slot %u did not reset (status still %u): its %zu DMA pages stay out of "
               "use and the device cannot be claimed again\n",
               slot, arch_mmio_read32(d->hw.base + VIRTIO_MMIO_STATUS), d->dma_pages);
    }
    finish(d, false, !stopped);
}

int device_release(struct process *p, unsigned slot)
{
    if (slot >= ndevices) {
        return -EINVAL;
    }
    struct device *d = &devices[slot];
    unsigned long flags = spin_lock_irqsave(&device_lock);
    int r = d->holder != p ? -EPERM : d->busy ? -EBUSY : 0;
    d->busy = d->busy || r == 0;
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
    for (unsigned i = 0; i < ndevices; i++) {
        device_release(p, i); /* -EPERM for the ones p does not hold */
    }
}

/* ---- system calls ---- */

long sys_zt_devices(struct trap_frame *f)
{
    struct zt_device_info info[ARCH_MAX_DEVICES];
    unsigned want =
        arch_frame_arg(f, 1) < ARCH_MAX_DEVICES ? (unsigned)arch_frame_arg(f, 1) : ARCH_MAX_DEVICES;
    if (vm_check_range(current_vm(), arch_frame_arg(f, 0), want * sizeof(info[0]), PROT_WRITE)) {
        return -EFAULT;
    }
    unsigned total = device_list(info, want);
    want = MIN(want, total);
    return copy_to_user(current_vm(), arch_frame_arg(f, 0), info, want * sizeof(info[0]))
               ? -EFAULT
               : (long)total;
}

long sys_zt_claim(struct trap_frame *f)
{
    struct zt_claim c;
    unsigned slot =
        arch_frame_arg(f, 0) < ARCH_MAX_DEVICES ? (unsigned)arch_frame_arg(f, 0) : ARCH_MAX_DEVICES;
    unsigned flags = arch_frame_arg(f, 2) <= 0xffffffffu ? (unsigned)arch_frame_arg(f, 2) : ~0u;
    if (vm_check_range(current_vm(), arch_frame_arg(f, 3), sizeof(c), PROT_WRITE)) {
        return -EFAULT;
    }
    int r = device_claim(current()->proc, slot, arch_frame_arg(f, 1), flags, &c);
    if (r == 0 && copy_to_user(current_vm(), arch_frame_arg(f, 3), &c, sizeof(c))) {
        device_release(current()->proc, slot); /* `out` went away meanwhile */
        return -EFAULT;
    }
    return r;
}

long sys_zt_release(struct trap_frame *f)
{
    return device_release(current()->proc, arch_frame_arg(f, 0) < ARCH_MAX_DEVICES
                                               ? (unsigned)arch_frame_arg(f, 0)
                                               : ARCH_MAX_DEVICES);
}
