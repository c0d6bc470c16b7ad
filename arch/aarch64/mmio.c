/* SPDX-License-Identifier: MIT */
/*
 * mmio.c — device windows for the kernel's drivers of devices handed to user space: which ones
 * exist, and 8- and 32-bit register access for the kernel's few touches of them (kernel/dev/:
 * probe, enumeration, BAR sizing, reset, the SMMU's registers).
 *
 * What it does: copies what dt.c found into arch_boot_info — the virtio-mmio transports (slot =
 * index, sorted by address, only those inside the first GiB, which mmu.c maps for the kernel as
 * Device-nGnRnE at phys_to_virt()), the PCIe host bridge (ECAM window of its first bus, its
 * windows, INTx map, iommu-map) and the SMMUv3 — and, once the MMU is up, maps the ECAM space
 * of that bus (1 MiB, above the first GiB on QEMU virt) into the kernel's MMIO window.  Then it
 * reads and writes one register at a time inside those windows and nowhere else.  What it does
 * not do: no knowledge of virtio, PCI or the SMMU (kernel/dev/), no interrupts (those stay
 * disabled or go to housekeeping, kernel/cpu/irq.c).
 *
 * Which PCI windows the kernel may reach: those inside the first GiB (QEMU virt's 32-bit memory
 * window and its I/O window); the 64-bit window at 512 GiB is listed but not reachable, so
 * kernel/dev/pci.c places no BAR there.
 *
 * Ordering: each access is preceded by DSB SY, so it reaches the device after every earlier
 * load and store of this CPU (a reset is ordered after the last use of the DMA pages, a queue
 * producer index after the entries it publishes), and followed by DSB SY, so nothing later
 * (freeing those pages, reading what the device wrote) is performed before it completes.
 * Device-nGnRnE accesses are not merged, reordered or early-acknowledged (ARM ARM B2.7.2).
 *
 * Contexts: any; no locks (the window table is written at boot, before other CPUs run).
 */
#include "arch.h"
#include "platform.h"

#define DEVICE_LIMIT  (1ull << 30) /* mmu.c: the first GiB is the kernel's device mapping */
#define ECAM_BUS_SIZE (1ull << 20) /* one bus: 32 devices x 8 functions x 4 KiB */
#define MAX_WINDOWS   (ARCH_MAX_DEVICES + ARCH_MAX_PCI_WINDOWS + 2)

/* A register window and where the kernel reaches it. */
struct window {
    paddr_t pa;
    uint64_t size;
    uintptr_t va;
};

static struct window windows[MAX_WINDOWS];
static unsigned nwindows;

static bool in_first_gib(uint64_t base, uint64_t size)
{
    return base + size <= DEVICE_LIMIT && base + size > base;
}

static void add_window(paddr_t pa, uint64_t size, void *va)
{
    if (nwindows < MAX_WINDOWS && va) {
        windows[nwindows++] = (struct window){pa, size, (uintptr_t)va};
    }
}

static void fill_virtio(struct arch_boot_info *info)
{
    info->ndevices = 0;
    for (unsigned i = 0; i < platform.nvirtio && info->ndevices < ARCH_MAX_DEVICES; i++) {
        const struct fdt_range *r = &platform.virtio[i];
        if (!in_first_gib(r->base, r->size)) {
            continue;
        }
        info->devices[info->ndevices++] = (struct arch_device){
            .base = r->base, .size = r->size, .intid = platform.virtio_intid[i]};
        add_window(r->base, r->size, phys_to_virt(r->base));
    }
}

static const char *problem_text(uint32_t p)
{
    switch (p) {
    case DT_BAD_REG:
        return "its reg is missing or empty";
    case DT_BAD_BUS_RANGE:
        return "its bus-range is not <start end> within 0-255";
    case DT_BAD_ECAM_SIZE:
        return "its ECAM window is smaller than its bus range needs";
    case DT_BAD_CELLS:
        return "its #address-cells is not 3 or its #size-cells not 1 or 2";
    case DT_BAD_RANGES:
        return "its ranges are missing or malformed";
    case DT_BAD_INTERRUPTS:
        return "it has no eventq and gerror SPIs";
    default:
        return "it is malformed";
    }
}

static void fill_pci(struct arch_pci *pci)
{
    if (!platform.pcie) {
        pci->problem = platform.pcie_problem ? problem_text(platform.pcie_problem) : 0;
        return;
    }
    pci->present = true;
    pci->ecam = platform.ecam.base;
    pci->bus = platform.bus_start;
    for (unsigned i = 0; i < platform.npci_windows && i < ARCH_MAX_PCI_WINDOWS; i++) {
        const struct dt_pci_window *w = &platform.pci_window[i];
        pci->windows[pci->nwindows++] = (struct arch_pci_window){
            .space = w->space,
            .prefetch = w->prefetch != 0,
            .reachable = in_first_gib(w->cpu, w->size),
            .pci = w->pci,
            .cpu = w->cpu,
            .size = w->size,
        };
    }
    pci->intx_mask_dev = platform.intx_mask_dev;
    pci->intx_mask_pin = platform.intx_mask_pin;
    for (unsigned i = 0; i < platform.nintx && i < ARCH_MAX_PCI_INTX; i++) {
        pci->intx[pci->nintx].dev = platform.intx[i].dev;
        pci->intx[pci->nintx].pin = platform.intx[i].pin;
        pci->intx[pci->nintx++].intid = platform.intx[i].intid;
    }
    pci->iommu_mapped = platform.iommu_map != 0;
    pci->rid_base = platform.rid_base;
    pci->sid_base = platform.sid_base;
    pci->sid_count = platform.sid_count;
}

static void fill_smmu(struct arch_smmu *smmu)
{
    if (!platform.smmu) {
        smmu->problem = platform.smmu_problem ? problem_text(platform.smmu_problem) : 0;
        return;
    }
    smmu->present = in_first_gib(platform.smmu_regs.base, platform.smmu_regs.size);
    smmu->problem = smmu->present ? 0 : "its registers lie beyond the kernel's device mapping";
    smmu->base = platform.smmu_regs.base;
    smmu->size = platform.smmu_regs.size;
    smmu->eventq_intid = platform.smmu_eventq_intid;
    smmu->gerror_intid = platform.smmu_gerror_intid;
}

void mmio_fill_devices(struct arch_boot_info *info)
{
    fill_virtio(info);
    fill_pci(&info->pci);
    fill_smmu(&info->smmu);
}

void mmio_map_windows(struct arch_boot_info *info)
{
    struct arch_pci *pci = &info->pci;
    if (pci->present) {
        void *ecam = mmu_map_device(pci->ecam, ECAM_BUS_SIZE);
        if (!ecam) {
            pci->present = false;
            pci->problem = "its ECAM window could not be mapped";
        }
        add_window(pci->ecam, ECAM_BUS_SIZE, ecam);
        for (unsigned i = 0; pci->present && i < pci->nwindows; i++) {
            const struct arch_pci_window *w = &pci->windows[i];
            if (w->reachable) {
                add_window(w->cpu, w->size, phys_to_virt(w->cpu));
            }
        }
    }
    if (info->smmu.present) {
        add_window(info->smmu.base, info->smmu.size, phys_to_virt(info->smmu.base));
    }
}

/* The kernel address of the `width`-byte register at pa, or 0 if it is in no window. */
static volatile void *reg_va(paddr_t pa, unsigned width)
{
    if (pa & (width - 1)) {
        return 0;
    }
    for (unsigned i = 0; i < nwindows; i++) {
        const struct window *w = &windows[i];
        if (pa >= w->pa && pa + width <= w->pa + w->size) {
            return (volatile void *)(w->va + (pa - w->pa));
        }
    }
    return 0;
}

uint32_t arch_mmio_read32(paddr_t pa)
{
    volatile uint32_t *r = reg_va(pa, 4);
    if (!r) {
        return 0xffffffffu;
    }
    dsb(sy);
    uint32_t v = *r;
    dsb(sy);
    return v;
}

void arch_mmio_write32(paddr_t pa, uint32_t v)
{
    volatile uint32_t *r = reg_va(pa, 4);
    if (!r) {
        return;
    }
    dsb(sy);
    *r = v;
    dsb(sy);
}

uint8_t arch_mmio_read8(paddr_t pa)
{
    volatile uint8_t *r = reg_va(pa, 1);
    if (!r) {
        return 0xff;
    }
    dsb(sy);
    uint8_t v = *r;
    dsb(sy);
    return v;
}

void arch_mmio_write8(paddr_t pa, uint8_t v)
{
    volatile uint8_t *r = reg_va(pa, 1);
    if (!r) {
        return;
    }
    dsb(sy);
    *r = v;
    dsb(sy);
}
