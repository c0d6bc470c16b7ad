/* SPDX-License-Identifier: MIT */
/*
 * pci.h — the PCIe root bus: its functions as the kernel found and set them up at boot
 * (kernel/dev/pci.c), for the claim code that hands them to user space (kernel/dev/device.c).
 *
 * At boot pci_init enumerates the root bus of the ECAM host bridge the arch found, sizes every
 * BAR and assigns each memory BAR an address of its own in a memory window of the bridge's
 * `ranges`, naturally aligned and never sharing a 4 KiB page with another BAR, so that mapping
 * one function's BARs into a process reaches no other function's registers.  Every function is
 * left with memory decoding, I/O decoding and bus mastering off and INTx disabled; only a claim
 * turns decoding (and, for a function that can DMA, bus mastering) on, and its release turns
 * them off again.  Bridges are listed but not crossed: only the root bus is enumerated.
 * Nothing here runs after boot except pci_enable/pci_disable/pci_reset (claim and release, any
 * CPU, task context) and the read-only accessors.
 */
#ifndef ZT_KERNEL_PCI_H
#define ZT_KERNEL_PCI_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"

#define PCI_MAX_FNS   32 /* functions of the root bus the kernel keeps (QEMU: a handful) */
#define PCI_BARS      6
#define PCI_CFG_BYTES 256 /* the configuration header and capability list a claim copies */

/* Configuration space (PCI Local Bus 3.0, 6.1; PCI Express Base 4.0, 7.5.1) */
#define PCI_CFG_ID          0x00
#define PCI_CFG_COMMAND     0x04 /* command (low 16 bits), status (high 16 bits) */
#define PCI_CFG_CLASS       0x08 /* revision (low 8 bits), class code (high 24 bits) */
#define PCI_CFG_HEADER      0x0c /* header type in bits 16-22, multi-function in bit 23 */
#define PCI_CFG_BAR0        0x10
#define PCI_CFG_SUBSYSTEM   0x2c /* subsystem vendor (low 16 bits), subsystem id (high) */
#define PCI_CFG_CAP_PTR     0x34
#define PCI_CFG_INTERRUPT   0x3c /* line (bits 0-7), pin (bits 8-15) */
#define PCI_CMD_IO          0x0001
#define PCI_CMD_MEMORY      0x0002
#define PCI_CMD_MASTER      0x0004
#define PCI_CMD_INTX_OFF    0x0400
#define PCI_STATUS_CAP_LIST 0x0010
#define PCI_CAP_VENDOR      0x09 /* vendor-specific capability: virtio's (virtio 1.2, 4.1.4) */

enum pci_bar_flags {
    PCI_BAR_IO = 1,       /* an I/O BAR: sized and listed, never assigned nor decoded */
    PCI_BAR_64 = 2,       /* a 64-bit memory BAR (it takes the next index too) */
    PCI_BAR_PREFETCH = 4, /* prefetchable */
    PCI_BAR_ASSIGNED = 8, /* cpu/bus hold its address */
};

struct pci_bar {
    uint64_t size; /* 0: no BAR at this index (or the upper half of a 64-bit one) */
    uint64_t cpu;  /* the CPU physical address of its registers, once assigned */
    uint64_t bus;  /* the address the BAR holds (the bus side of the window) */
    unsigned flags;
};

struct pci_fn {
    uint8_t dev, fn;
    uint16_t rid; /* requester id: bus << 8 | dev << 3 | fn */
    uint16_t vendor, device;
    uint32_t class_code; /* base class << 16 | subclass << 8 | programming interface */
    uint8_t header_type; /* 0 endpoint, 1 PCI-to-PCI bridge (not crossed) */
    bool is_bridge;      /* a host or PCI bridge (base class 0x06): listed, never worth a boot
                            line, never able to DMA */
    uint8_t intx_pin;    /* 1-4 INTA-INTD, 0 none */
    unsigned intx_intid; /* the SPI its pin raises (disabled, routed to housekeeping), 0 if
                            the bridge's interrupt-map does not say */
    bool can_dma;        /* an endpoint whose bus-master enable bit can be set */
    bool claimable;      /* every memory BAR it has got an address */
    int bad_bar;         /* the first BAR that did not fit any window, or -1 */
    bool has_sid;        /* its DMA goes through the SMMU as stream `sid` */
    uint32_t sid;
    uint32_t virtio_type;  /* the virtio device type (1 = network) of a virtio function: device
                              id 0x1040 + type (modern), or its subsystem id for a transitional
                              0x1000-0x103f one (virtio 1.2, 4.1.2.1); 0 for anything else */
    int virtio_common_bar; /* virtio's common configuration (its device_status resets the
                              device): BAR index, or -1 if it is not a modern virtio function */
    uint32_t virtio_common_off;
    bool bypasses_iommu; /* a virtio function that does not offer VIRTIO_F_ACCESS_PLATFORM:
                            by virtio 1.2, 6.1, it uses physical addresses untranslated, so no
                            IOMMU confines it (QEMU: iommu_platform=off bypasses the SMMU) */
    struct pci_bar bar[PCI_BARS];
};

/* Boot, once, after smmu_init: enumerate and set up the root bus of `p` (nothing if absent);
 * print a line per function other than a bridge unless `quiet` (and always one per function
 * left unclaimable).
 * Returns the number of functions found. */
unsigned pci_init(const struct arch_pci *p, bool quiet);
unsigned pci_count(void);
const struct pci_fn *pci_get(unsigned i);
/* The function's configuration dword at `reg` (4-aligned, < 4096). */
uint32_t pci_cfg_read32(const struct pci_fn *f, unsigned reg);
/* Its first PCI_CFG_BYTES of configuration space, as it reads now (a claim hands them to the
 * driver: the capability list tells it where its registers are). */
void pci_cfg_copy(const struct pci_fn *f, uint8_t out[PCI_CFG_BYTES]);
/* Decoding of its memory BARs on, bus mastering on if `master`, INTx kept off. */
void pci_enable(const struct pci_fn *f, bool master);
/* Stop it: a modern virtio function is reset (device_status 0, read back until 0), then bus
 * mastering and decoding go off.  True if it stopped (the reset was seen to complete, or it
 * is no virtio function and its bus-master bit reads back clear); false if it did not. */
bool pci_reset(const struct pci_fn *f);
/* "00:02.0" into buf (8 bytes). */
const char *pci_name(const struct pci_fn *f, char buf[8]);
/* "net" for a virtio network function, "host bridge", "ethernet", ... from the class code. */
const char *pci_kind(const struct pci_fn *f);

#endif
