/* SPDX-License-Identifier: MIT */
/*
 * dt.h — what zerotick needs to know about the machine, read once at boot from the device
 * tree QEMU leaves at DTB_PA (arch/aarch64/dt.c, over the generic reader kernel/lib/fdt.c).
 *
 * dt_parse() is pure: no allocation, no globals, no hardware.  The blob's header and every
 * offset and length are validated before use (fdt_open: a corrupted or truncated blob must
 * yield an error, never an out-of-bounds read), so host unit tests run it over QEMU's own
 * dumps and over corrupted copies (tests/unit/test_fdt.c).  Plain C with no aarch64
 * dependency: the host build compiles this file as it is.
 */
#ifndef ZT_AARCH64_DT_H
#define ZT_AARCH64_DT_H

#include <stddef.h>
#include <stdint.h>

#include <arch_defs.h>

#include "kernel/fdt.h"

#define DT_MAX_CPUS        ARCH_MAX_CPUS /* CPUs beyond this are counted in ncpus_total, not recorded */
#define DT_MAX_MEM         8
#define DT_MAX_GICR        4
#define DT_MAX_VIRTIO      32 /* QEMU virt lists 32 virtio-mmio transports */
#define DT_MAX_PCI_WINDOWS 4  /* ranges entries of the PCIe host bridge kept (QEMU: 3) */
#define DT_MAX_PCI_INTX    16 /* interrupt-map entries kept (QEMU: 4 devices x 4 pins) */

/* The address space of a PCI host bridge window ("ranges"), from the space code of its
 * phys.hi cell (IEEE 1275 PCI binding, 2.2.1.1). */
enum dt_pci_space {
    DT_PCI_CONFIG = 0,
    DT_PCI_IO = 1,
    DT_PCI_MEM32 = 2,
    DT_PCI_MEM64 = 3,
};

/* Why an optional PCIe host bridge or SMMU node was not used (the boot log names it). */
enum dt_optional_problem {
    DT_OK = 0,
    DT_BAD_REG,        /* reg missing, empty, or not in the root's cells */
    DT_BAD_BUS_RANGE,  /* bus-range not two cells start <= end < 256 */
    DT_BAD_ECAM_SIZE,  /* the ECAM window is smaller than its bus range needs */
    DT_BAD_CELLS,      /* #address-cells is not 3 or #size-cells not 1-2 */
    DT_BAD_RANGES,     /* ranges missing or not whole entries */
    DT_BAD_INTERRUPTS, /* an SMMU without its eventq and gerror SPIs */
};

enum dt_psci_conduit {
    DT_PSCI_NONE = 0,
    DT_PSCI_HVC,
    DT_PSCI_SMC,
};

/* Indexes into timer_intid[], in the order of the arm,armv8-timer "interrupts" property. */
enum dt_timer {
    DT_TIMER_SEC_PHYS = 0,
    DT_TIMER_PHYS,
    DT_TIMER_VIRT,
    DT_TIMER_HYP,
};

struct dt_info {
    uint32_t totalsize; /* header totalsize of the blob */

    uint32_t nmem; /* /memory ranges (device_type = "memory") */
    struct fdt_range mem[DT_MAX_MEM];

    uint32_t ncpus;                  /* cpus recorded in cpu_mpidr[], <= DT_MAX_CPUS */
    uint32_t ncpus_total;            /* cpu nodes under /cpus (device_type = "cpu") */
    uint64_t cpu_mpidr[DT_MAX_CPUS]; /* "reg" of each cpu node, in tree order: affinity
                                         fields only (QEMU: cpu N = (N/16) << 8 | N%16),
                                         without MPIDR_EL1's RES1 bit 31 */

    struct fdt_range gicd;              /* compatible "arm,gic-v3": reg[0] */
    uint32_t ngicr;                     /* #redistributor-regions (1 if absent) */
    struct fdt_range gicr[DT_MAX_GICR]; /* reg[1 .. ngicr] */

    struct fdt_range uart; /* compatible "arm,pl011", preferring /chosen/stdout-path */
    uint32_t uart_intid;   /* its SPI as a GIC INTID (32 + number) */

    uint32_t timer_intid[4]; /* arm,armv8-timer PPIs as INTIDs (16 + number) */

    enum dt_psci_conduit psci; /* /psci "method": "hvc" or "smc" */

    const char *bootargs;  /* /chosen/bootargs inside the blob (valid while the blob
                              is), NUL-terminated, or NULL if absent */
    uint32_t bootargs_len; /* strlen of bootargs */

    /* Optional: the enabled "virtio,mmio" transports that are root children, sorted by base
       address (so a transport's index is its slot number).  A node with a malformed reg or
       interrupts, or one past DT_MAX_VIRTIO, is skipped and counted; it never fails the
       parse: the kernel runs without them. */
    uint32_t nvirtio;
    struct fdt_range virtio[DT_MAX_VIRTIO]; /* reg[0]: the register window */
    uint32_t virtio_intid[DT_MAX_VIRTIO];   /* interrupts[0], an SPI, as a GIC INTID */
    uint32_t virtio_skipped;

    /* Optional: the first enabled "pci-host-ecam-generic" root child.  pcie = 1 when it was
       found and is usable; pcie_problem says why a node that exists was not used. */
    uint32_t pcie;
    uint32_t pcie_problem;       /* enum dt_optional_problem */
    struct fdt_range ecam;       /* reg[0]: config space, 1 MiB a bus */
    uint32_t bus_start, bus_end; /* bus-range (0-255 if absent) */
    uint32_t npci_windows;       /* ranges entries kept */
    struct dt_pci_window {
        uint32_t space;    /* enum dt_pci_space */
        uint32_t prefetch; /* 1: the window is prefetchable (phys.hi bit 30) */
        uint64_t pci;      /* bus address: what a BAR holds */
        uint64_t cpu;      /* CPU physical address: what the kernel and user space map */
        uint64_t size;
    } pci_window[DT_MAX_PCI_WINDOWS];
    uint32_t intx_mask_dev, intx_mask_pin; /* interrupt-map-mask cells 0 and 3 */
    uint32_t nintx;                        /* interrupt-map entries into the GIC */
    struct dt_pci_intx {
        uint32_t dev;   /* child unit address cell 0 (bus << 16 | dev << 11 | fn << 8), masked */
        uint32_t pin;   /* INTA..INTD = 1..4, masked */
        uint32_t intid; /* the GIC SPI it raises, as an INTID */
    } intx[DT_MAX_PCI_INTX];
    uint32_t iommu_map;                     /* 1: iommu-map sends requester IDs */
    uint32_t rid_base, sid_base, sid_count; /* [rid_base, +sid_count) to the SMMU
                                               below as stream sid_base + (rid -
                                               rid_base) (its first entry that names
                                               the SMMU) */

    /* Optional: the first enabled "arm,smmu-v3" root child (smmu = 1 when usable). */
    uint32_t smmu;
    uint32_t smmu_problem; /* enum dt_optional_problem */
    struct fdt_range smmu_regs;
    uint32_t smmu_eventq_intid, smmu_gerror_intid; /* by interrupt-names; both required */
    uint32_t smmu_phandle;

    /* Optional: the archive the boot loader left in memory, [initrd_start, initrd_end) from
       /chosen linux,initrd-start/-end; 0 and 0 when absent, or when malformed, and then
       initrd_note says why (a static string; NULL otherwise). */
    uint64_t initrd_start, initrd_end;
    const char *initrd_note;
};

/*
 * Parse the blob at `blob` (8-byte aligned), of which at most `max_len` bytes may be read.
 * Returns 0 and fills `out`, or -EINVAL (-22: malformed or unsupported) or -ENOENT (-2: a
 * required node is missing), zeroes `out` and writes one line into `err` (at most `errlen`
 * bytes, always NUL-terminated; err may be NULL) naming what is wrong or missing, e.g.
 * "no device tree: bad magic 0x00000000 at the start of RAM" or
 * "device tree: missing node /psci".  On success err holds "".
 * Required: a valid header, a memory node, at least one cpu, a GICv3, a PL011, the
 * architected timer and /psci with a known method.  /chosen/bootargs, the initrd's place, the
 * virtio-mmio transports, the PCIe host bridge and the SMMUv3 are optional: a malformed
 * optional node is left out (and its problem recorded), never a reason to fail.
 * Pure: no globals, no allocation, callable in any context (dt.c and kernel/lib/fdt.c say more).
 */
int dt_parse(const void *blob, size_t max_len, struct dt_info *out, char *err, size_t errlen);

#endif
