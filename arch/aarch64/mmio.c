/* SPDX-License-Identifier: MIT */
/*
 * mmio.c — device windows for user-space drivers: which ones exist, and 32-bit register
 * access for the kernel's few touches of them (kernel/sys/device.c: probe, reset).
 *
 * What it does: copies the virtio-mmio transports fdt.c found into arch_boot_info (slot =
 * index, sorted by address), keeping only windows inside the first GiB, which mmu.c maps for
 * the kernel as Device-nGnRnE at phys_to_virt(); reads and writes one register there.  What
 * it does not do: no knowledge of virtio itself (that is kernel/sys/device.c), no interrupts
 * (those stay disabled, routed to housekeeping by kernel/cpu/irq.c).
 *
 * Ordering: each access is preceded by DSB SY, so it reaches the device after every earlier
 * load and store of this CPU (a reset is ordered after the last use of the DMA pages), and
 * followed by DSB SY, so nothing later (freeing those pages) is performed before it completes.
 * Device-nGnRnE accesses are not merged, reordered or early-acknowledged (ARM ARM B2.7.2).
 *
 * Contexts: any; no locks (the device table is written once at boot, before other CPUs run).
 */
#include "arch.h"
#include "platform.h"

#define DEVICE_LIMIT (1ull << 30) /* mmu.c: the first GiB is the kernel's device mapping */

static const struct arch_boot_info *devs;

void mmio_fill_devices(struct arch_boot_info *info)
{
    info->ndevices = 0;
    for (unsigned i = 0; i < platform.nvirtio && info->ndevices < ARCH_MAX_DEVICES; i++) {
        const struct fdt_range *r = &platform.virtio[i];
        if (r->base + r->size > DEVICE_LIMIT || r->base + r->size < r->base) {
            continue;
        }
        info->devices[info->ndevices++] = (struct arch_device){
            .base = r->base, .size = r->size, .intid = platform.virtio_intid[i]};
    }
    devs = info;
}

/* Does the 4-byte register at pa lie inside one of the listed windows? */
static bool is_device_register(paddr_t pa)
{
    for (unsigned i = 0; devs && i < devs->ndevices; i++) {
        const struct arch_device *d = &devs->devices[i];
        if (pa >= d->base && pa + 4 <= d->base + d->size && (pa & 3) == 0) {
            return true;
        }
    }
    return false;
}

uint32_t arch_mmio_read32(paddr_t pa)
{
    if (!is_device_register(pa)) {
        return 0xffffffffu;
    }
    dsb(sy);
    uint32_t v = *(volatile uint32_t *)phys_to_virt(pa);
    dsb(sy);
    return v;
}

void arch_mmio_write32(paddr_t pa, uint32_t v)
{
    if (!is_device_register(pa)) {
        return;
    }
    dsb(sy);
    *(volatile uint32_t *)phys_to_virt(pa) = v;
    dsb(sy);
}
