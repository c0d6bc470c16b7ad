/* SPDX-License-Identifier: MIT */
/*
 * fakebus.h — QEMU virt's PCIe host bridge and SMMUv3, as the fake arch shows them, for the
 * host tests of kernel/dev/ (test_pci.c, test_smmu.c, test_device.c).  Header-only: each test
 * binary includes it once.
 *
 * The bridge is the one QEMU 7.2 describes with -M virt,iommu=smmuv3 (tests/unit/test_pci.c
 * checks the device tree says exactly this): ECAM at 0x4010000000, the I/O window at
 * 0x3eff0000, the 32-bit memory window 0x10000000-0x3efeffff, the 64-bit one at 512 GiB (beyond
 * the kernel's reach), INTA-INTD of device d on SPI 3 + (d + pin - 1) % 4, requester id =
 * stream id.  The functions are QEMU's too: the host bridge 1b36:0008 at 00:00.0 and a modern
 * virtio-net 1af4:1041 with its capability list (common configuration in BAR 4 at 0, ISR at
 * 0x1000, device configuration at 0x2000, notifications at 0x3000, multiplier 4) and an
 * MSI-X BAR 1 of 4 KiB.
 */
#ifndef ZT_TEST_FAKEBUS_H
#define ZT_TEST_FAKEBUS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arch.h"
#include "fake.h"

#define FB_ECAM       0x4010000000ull
#define FB_MEM32      0x10000000ull
#define FB_MEM32_SIZE 0x2eff0000ull
#define FB_SMMU       0x09050000ull
#define FB_VIRTIO_DEV 1 /* 00:01.0 */

/* The bridge and (if smmu) the SMMU into fake_boot_info. */
static inline void fakebus_boot_info(bool smmu)
{
    struct arch_pci *p = &fake_boot_info.pci;
    *p = (struct arch_pci){.present = true, .ecam = FB_ECAM, .bus = 0};
    p->windows[p->nwindows++] =
        (struct arch_pci_window){ARCH_PCI_IO, false, true, 0, 0x3eff0000, 0x10000};
    p->windows[p->nwindows++] =
        (struct arch_pci_window){ARCH_PCI_MEM32, false, true, FB_MEM32, FB_MEM32, FB_MEM32_SIZE};
    p->windows[p->nwindows++] = (struct arch_pci_window){
        ARCH_PCI_MEM64, false, false, 0x8000000000ull, 0x8000000000ull, 0x8000000000ull};
    p->intx_mask_dev = 0x1800;
    p->intx_mask_pin = 7;
    for (uint32_t d = 0; d < 4; d++) {
        for (uint32_t pin = 1; pin <= 4; pin++) {
            p->intx[p->nintx].dev = d << 11;
            p->intx[p->nintx].pin = pin;
            p->intx[p->nintx++].intid = 32 + 3 + (d + pin - 1) % 4;
        }
    }
    p->iommu_mapped = smmu;
    p->rid_base = 0;
    p->sid_base = 0;
    p->sid_count = 0x10000;
    fake_boot_info.smmu = (struct arch_smmu){.present = smmu,
                                             .base = FB_SMMU,
                                             .size = 0x20000,
                                             .eventq_intid = 106,
                                             .gerror_intid = 109};
}

/* What QEMU's SMMU says of itself (IDR0: S1P, TTF AArch64, COHACC, ASID16, little-endian,
 * 2-level tables; IDR1: SIDSIZE 16, queues 2^19; IDR5: 4K/16K/64K granules, OAS 44 bits). */
static inline void fakebus_smmu_idregs(void)
{
    fake_mmio_set(FB_SMMU + 0x00, 1u << 1 | 2u << 2 | 1u << 4 | 1u << 12 | 2u << 21 | 1u << 27);
    fake_mmio_set(FB_SMMU + 0x04, 16 | 19u << 16 | 19u << 21);
    fake_mmio_set(FB_SMMU + 0x14, 4 | 1u << 4 | 1u << 5 | 1u << 6);
}

static inline void cfg_put8(struct fake_pci_fn *f, unsigned off, uint8_t v)
{
    f->cfg[off / 4] = (f->cfg[off / 4] & ~(0xffu << (8 * (off % 4)))) | (uint32_t)v
                                                                            << (8 * (off % 4));
}

static inline void cfg_put32(struct fake_pci_fn *f, unsigned off, uint32_t v)
{
    f->cfg[off / 4] = v;
}

/* One virtio vendor capability at `at` (virtio 1.2, 4.1.4): type, BAR, offset, length. */
static inline void virtio_cap(struct fake_pci_fn *f, unsigned at, unsigned next, uint8_t type,
                              uint8_t bar, uint32_t off, uint32_t len, uint8_t caplen)
{
    cfg_put8(f, at, 0x09);
    cfg_put8(f, at + 1, (uint8_t)next);
    cfg_put8(f, at + 2, caplen);
    cfg_put8(f, at + 3, type);
    cfg_put8(f, at + 4, bar);
    cfg_put32(f, at + 8, off);
    cfg_put32(f, at + 12, len);
}

/* A modern virtio-net at 00:dev.0, INTA, as QEMU makes it. */
static inline struct fake_pci_fn *fakebus_virtio_net(unsigned dev)
{
    struct fake_pci_fn *f = fake_pci_add(dev, 0, 0x1af4, 0x1041, 0x020000);
    fake_pci_bar(f, 1, 0x1000, false, false, false);
    fake_pci_bar(f, 4, 0x4000, false, true, true);
    f->cfg[1] |= 0x0010u << 16; /* status: capability list */
    cfg_put8(f, 0x34, 0x40);
    cfg_put8(f, 0x3d, 1); /* INTA */
    virtio_cap(f, 0x40, 0x50, 1, 4, 0x0000, 0x1000, 16);
    virtio_cap(f, 0x50, 0x68, 2, 4, 0x3000, 0x1000, 20);
    cfg_put32(f, 0x50 + 16, 4); /* notify_off_multiplier */
    virtio_cap(f, 0x68, 0x78, 3, 4, 0x1000, 0x1000, 16);
    virtio_cap(f, 0x78, 0x00, 4, 4, 0x2000, 0x1000, 16);
    return f;
}

/* QEMU's bus: the host bridge and one virtio-net behind it. */
static inline void fakebus_qemu(void)
{
    fake_pci_add(0, 0, 0x1b36, 0x0008, 0x060000);
    fakebus_virtio_net(FB_VIRTIO_DEV);
}

/* Where pci.c put BAR i of f (its CPU address, from the bus address it wrote). */
static inline uint64_t fakebus_bar(const struct fake_pci_fn *f, unsigned i)
{
    uint64_t lo = f->cfg[4 + i] & ~0xfull;
    uint64_t hi = (f->cfg[4 + i] & 0x6) == 0x4 ? (uint64_t)f->cfg[5 + i] << 32 : 0;
    return hi | lo;
}

#endif
