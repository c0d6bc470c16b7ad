/* SPDX-License-Identifier: MIT */
/*
 * zt_device.h — handing a device to a user task: the system calls a user-space driver uses to
 * find a device and claim it (kernel/dev/device.c implements them).
 *
 *   zt_devices(struct zt_device_info *buf, n) -> devices in total; fills min(n, total) entries
 *   zt_claim(slot, dma_bytes, flags, struct zt_claim *out) -> 0 or -errno
 *   zt_release(slot) -> 0 or -errno
 *
 * Devices.  Slots 0-31 are the virtio-mmio transports in address order (QEMU virt has 32; an
 * empty one has device_id 0); slot ZT_PCI_SLOT0 + i is function i of the PCIe root bus, in
 * bus/device/function order.  zt_devices lists them in slot order (buf[k].slot says which).
 *
 * Versions.  Version 1 of this ABI had 48-byte struct zt_device_info entries and a 56-byte
 * struct zt_claim, and refused every flag.  Version 2 appends fields to both (PCI identity,
 * BARs, how the DMA is confined) and is asked for explicitly, so a program built against
 * version 1 keeps working unchanged: n | ZT_DEVICES_V2 makes zt_devices write whole version-2
 * entries (without it, 48-byte entries, the PCI functions included); the flag ZT_CLAIM_V2 makes
 * zt_claim write the whole struct zt_claim (without it, the first 56 bytes).  A PCI function
 * can be claimed only with ZT_CLAIM_V2 (one register window cannot describe its BARs).
 *
 * What a claim does.  The device's registers are mapped into the caller as uncached device
 * memory (a virtio-mmio transport's page; each memory BAR of a PCI function, every BAR on pages
 * of its own), a zeroed, physically contiguous DMA region of dma_bytes (a multiple of 4096, at
 * most ZT_DMA_MAX) as normal memory, and the result says where.  dma_phys is the address the
 * device must be told: for a PCI function behind the SMMU (ZT_DEV_IOMMU in dma_mode) it is the
 * I/O virtual address ZT_IOVA_BASE, and the SMMU translates exactly [ZT_IOVA_BASE, +dma_size)
 * to the region, so the device reaches nothing else; without an IOMMU (virtio-mmio, or a PCIe
 * bus no SMMU fronts) it is the region's physical address and the device can reach all of
 * memory (ZT_DEV_UNCONFINED) — such a claim needs the flag ZT_CLAIM_UNCONFINED_DMA, Linux's
 * vfio no-IOMMU mode.  The flag is accepted behind the SMMU too; the DMA is confined anyway.
 * Bus mastering (for a PCI function) and memory decoding are turned on for the claim only.
 * Interrupts stay disabled, routed to housekeeping; the driver polls.  One process holds a
 * device at a time; fork does not pass it on (the child does not get the mappings).
 *
 * A function that cannot DMA (a bridge, or an endpoint whose bus-master bit is hardwired to 0)
 * is claimed with dma_bytes 0: only its registers are mapped.
 *
 * Claim errors (checked before anything changes): -EINVAL for a slot without a device, unknown
 * flags, a PCI claim without ZT_CLAIM_V2, dma_bytes 0 or not page-aligned for a device that can
 * DMA, dma_bytes other than 0 or ZT_CLAIM_UNCONFINED_DMA for one that cannot; -ENOMEM past
 * ZT_DMA_MAX or when no contiguous run of pages is free; -EPERM for a device whose DMA no
 * IOMMU confines, claimed without ZT_CLAIM_UNCONFINED_DMA; -ENXIO for a PCI function one of
 * whose BARs got no address (too large for the bridge's windows); -EBUSY when another process
 * holds the device (or, for virtio-mmio, one whose registers share its 4 KiB page — the finest
 * the MMU protects), or it is being claimed or released; -EFAULT for a bad `out`; -EIO for a
 * device that once failed to reset.
 *
 * Release (zt_release, the holder's exit or death, or a DMA fault) unmaps the
 * registers, resets the device (virtio: status 0, read back; PCI: then bus mastering and
 * decoding off), returns its SMMU stream to abort and invalidates the SMMU's TLB, and only
 * then unmaps and frees the DMA region, so no DMA ever lands in freed memory.  Release errors:
 * -EINVAL for a bad slot, -EPERM when the caller does not hold it, -EBUSY while another
 * context is releasing it.
 *
 * DMA faults.  A claimed PCI function's DMA outside its region is a translation fault the SMMU
 * reports; a housekeeping CPU reads it, the console names the process, the function and the
 * I/O address, the claim is ended as by a release, and the holder is sent SIGBUS (whose
 * default action ends the process).
 */
#ifndef ZT_UAPI_DEVICE_H
#define ZT_UAPI_DEVICE_H

#define SYS_zt_devices 1031
#define SYS_zt_claim   1032
#define SYS_zt_release 1033

#define ZT_DMA_MAX   (16u << 20)    /* largest DMA region one claim may ask for */
#define ZT_IOVA_BASE 0x100000000ull /* where a claim behind the SMMU puts its DMA region */

#define ZT_MMIO_SLOTS   32 /* virtio-mmio slots 0..31 */
#define ZT_PCI_SLOT0    32 /* the first PCI function's slot */
#define ZT_PCI_MAX      32 /* PCI functions listed at most */
#define ZT_DEVICE_SLOTS (ZT_PCI_SLOT0 + ZT_PCI_MAX)

/* zt_claim flags */
#define ZT_CLAIM_UNCONFINED_DMA 0x1u /* accept DMA that no IOMMU confines (no-IOMMU mode) */
#define ZT_CLAIM_V2             0x2u /* `out` is a whole version-2 struct zt_claim */
/* zt_devices: or-ed into n, entries are whole version-2 struct zt_device_info */
#define ZT_DEVICES_V2 0x80000000u

/* zt_device_info.version of a PCI function in the version-1 view (virtio-mmio: 1 or 2) */
#define ZT_DEVICE_VERSION_PCI 0x100
/* zt_device_info.device_id of a PCI function that is not a modern virtio one */
#define ZT_DEVICE_ID_OTHER 0xffff

/* virtio device ids (virtio 1.2, 5 "Device Types") that `lsdev` names */
#define ZT_VIRTIO_ID_NET     1
#define ZT_VIRTIO_ID_BLOCK   2
#define ZT_VIRTIO_ID_CONSOLE 3
#define ZT_VIRTIO_ID_RNG     4

/* zt_device_info.kind (version 2) */
#define ZT_DEV_VIRTIO_MMIO 1
#define ZT_DEV_PCI         2

/* zt_device_info.flags and zt_claim.dma_mode (version 2) */
#define ZT_DEV_DMA   0x1 /* it can DMA (bus master) */
#define ZT_DEV_IOMMU 0x2 /* its DMA goes through the SMMU: confined to its holder's region */
#define ZT_DEV_UNCONFINED                                                                          \
    0x4                        /* its DMA reaches all memory: claims need ZT_CLAIM_UNCONFINED_DMA  \
                                */
#define ZT_DEV_NO_ADDRESS 0x8  /* a BAR got no address: it cannot be claimed (-ENXIO) */
#define ZT_DEV_BROKEN     0x10 /* it once failed to reset: it cannot be claimed (-EIO) */

/* zt_bar.flags */
#define ZT_BAR_IO       0x1 /* an I/O BAR: never assigned nor mapped */
#define ZT_BAR_64       0x2
#define ZT_BAR_PREFETCH 0x4
#define ZT_BAR_ASSIGNED 0x8 /* it has an address (and a claim maps it) */

#define ZT_PCI_BARS      6
#define ZT_PCI_CFG_BYTES 256

#ifndef __ASSEMBLY__
#include <stdint.h>

struct zt_bar {
    uint64_t addr;  /* zt_device_info: its CPU physical address; zt_claim: the user address
                       where it is mapped (0: not mapped) */
    uint64_t size;  /* bytes (0: no BAR at this index) */
    uint32_t flags; /* ZT_BAR_* */
    uint32_t pad;
};

/* One device, as `lsdev` shows it. */
struct zt_device_info {
    /* version 1 (48 bytes) */
    uint32_t slot;      /* what zt_claim takes */
    uint32_t intid;     /* its interrupt (GIC INTID; PCI: its INTx line, 0 if none): disabled,
                           routed to housekeeping */
    uint64_t base;      /* virtio-mmio: the register window; PCI: the first memory BAR */
    uint64_t size;      /* its size in bytes */
    uint32_t version;   /* virtio-mmio: 1 legacy, 2 modern; PCI: ZT_DEVICE_VERSION_PCI */
    uint32_t device_id; /* virtio device type (0: an empty transport); PCI: the virtio type of
                           a modern virtio function, else ZT_DEVICE_ID_OTHER */
    uint32_t vendor;    /* virtio vendor id; PCI: the PCI vendor id */
    int32_t holder;     /* pid of the process that claimed it, 0 if none */
    uint64_t dma_size;  /* bytes of its holder's DMA region */
    /* version 2 (n | ZT_DEVICES_V2) */
    uint32_t kind;  /* ZT_DEV_VIRTIO_MMIO or ZT_DEV_PCI */
    uint32_t flags; /* ZT_DEV_* */
    uint32_t bdf;   /* PCI: bus << 8 | device << 3 | function */
    uint16_t pci_vendor, pci_device;
    uint32_t class_code; /* PCI: base class << 16 | subclass << 8 | interface */
    uint32_t sid;        /* ZT_DEV_IOMMU: its SMMU stream */
    struct zt_bar bars[ZT_PCI_BARS];
};

/* What a claim gives the driver. */
struct zt_claim {
    /* version 1 (56 bytes) */
    uint64_t regs; /* user address of the register window (device memory); PCI: of the first
                      memory BAR (bars[] has them all) */
    uint64_t regs_size;
    uint64_t dma;      /* user address of the DMA region */
    uint64_t dma_phys; /* the address the device must be told (descriptors carry these): the
                          physical address, or behind the SMMU the I/O virtual address */
    uint64_t dma_size;
    uint32_t device_id;
    uint32_t version;
    uint32_t intid;
    uint32_t slot;
    /* version 2 (ZT_CLAIM_V2) */
    uint32_t dma_mode; /* ZT_DEV_IOMMU (confined) or ZT_DEV_UNCONFINED (0: no DMA region) */
    uint32_t kind;     /* ZT_DEV_VIRTIO_MMIO or ZT_DEV_PCI */
    struct zt_bar bars[ZT_PCI_BARS];  /* PCI: each BAR, mapped if it has an address */
    uint8_t config[ZT_PCI_CFG_BYTES]; /* PCI: its configuration space (header and
                                         capability list) as the claim found it */
};
#endif

#endif
