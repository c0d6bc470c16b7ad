/* SPDX-License-Identifier: MIT */
/*
 * zt_device.h — handing a device to a user task: the system calls a user-space driver uses
 * to find a virtio-mmio transport and claim it (kernel/sys/device.c implements them).
 *
 *   zt_devices(struct zt_device_info *buf, n) -> transports in total; fills min(n, total)
 *   zt_claim(slot, dma_bytes, flags, struct zt_claim *out) -> 0 or -errno
 *   zt_release(slot) -> 0 or -errno
 *
 * Claim maps the device's register window into the caller as uncached device memory and a
 * zeroed, physically contiguous DMA region of dma_bytes (a multiple of 4096, at most
 * ZT_DMA_MAX) as normal memory, and says where: the user addresses and the region's physical
 * address, which is what the device must be told (there is no IOMMU).  The device's interrupt
 * stays disabled; the driver polls.  One process holds a device at a time.  Errors: -EINVAL
 * for a slot without a device, a size of 0 or not page-aligned, or flags other than 0;
 * -ENOMEM past ZT_DMA_MAX or when no contiguous run of pages is free; -EBUSY when another
 * process holds the device or one whose registers share its 4 KiB page (page granularity is
 * the finest the MMU can protect); -EFAULT for a bad `out`; -EIO for a device that once failed
 * to reset.  Release (or the holder's exit or death) resets the device (status 0) first, and
 * only then unmaps the window and frees the DMA pages, so no DMA ever lands in freed memory.
 * Release errors: -EINVAL for a bad slot, -EPERM when the caller does not hold it.
 */
#ifndef ZT_UAPI_DEVICE_H
#define ZT_UAPI_DEVICE_H

#define SYS_zt_devices 1031
#define SYS_zt_claim   1032
#define SYS_zt_release 1033

#define ZT_DMA_MAX (4u << 20) /* largest DMA region one claim may ask for */

/* virtio device ids (virtio 1.2, 5 "Device Types") that `lsdev` names */
#define ZT_VIRTIO_ID_NET     1
#define ZT_VIRTIO_ID_BLOCK   2
#define ZT_VIRTIO_ID_CONSOLE 3
#define ZT_VIRTIO_ID_RNG     4

#ifndef __ASSEMBLY__
#include <stdint.h>

/* One virtio-mmio transport, as `lsdev` shows it. */
struct zt_device_info {
    uint32_t slot;      /* index in address order: what zt_claim takes */
    uint32_t intid;     /* its interrupt (GIC INTID): disabled, routed to housekeeping */
    uint64_t base;      /* physical address of the register window */
    uint64_t size;      /* its size in bytes */
    uint32_t version;   /* 1 legacy, 2 modern (virtio 1.x) */
    uint32_t device_id; /* 0: an empty transport (no device behind it) */
    uint32_t vendor;
    int32_t holder;    /* pid of the process that claimed it, 0 if none */
    uint64_t dma_size; /* bytes of its holder's DMA region */
};

/* What a claim gives the driver. */
struct zt_claim {
    uint64_t regs; /* user address of the register window (device memory) */
    uint64_t regs_size;
    uint64_t dma;      /* user address of the DMA region */
    uint64_t dma_phys; /* its physical address: descriptors carry these */
    uint64_t dma_size;
    uint32_t device_id;
    uint32_t version;
    uint32_t intid;
    uint32_t slot;
};
#endif

#endif
