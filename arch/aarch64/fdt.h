/*
 * fdt.h — the flattened device tree parser's result: everything zerotick needs to know about
 * the machine, read once at boot from the blob QEMU leaves at DTB_PA.
 *
 * fdt_parse() is pure: no allocation, no globals, no hardware.  It validates the blob's
 * header and every offset and length before using it (a corrupted or truncated blob must
 * yield an error, never an out-of-bounds read), so host unit tests run it over QEMU's own
 * dumps and over corrupted copies.  Spec: devicetree.org Devicetree Specification v0.4,
 * chapter 5 (the flattened format).
 */
#ifndef ZT_FDT_H
#define ZT_FDT_H

#include <stddef.h>
#include <stdint.h>

#define FDT_MAGIC      0xd00dfeed
#define FDT_MAX_CPUS   64 /* CPUs beyond this are counted in ncpus_total but not recorded */
#define FDT_MAX_MEM    8
#define FDT_MAX_GICR   4
#define FDT_MAX_VIRTIO 32 /* QEMU virt lists 32 virtio-mmio transports */

struct fdt_range {
    uint64_t base;
    uint64_t size;
};

enum fdt_psci_conduit {
    FDT_PSCI_NONE = 0,
    FDT_PSCI_HVC,
    FDT_PSCI_SMC,
};

/* Indexes into timer_intid[], in the order of the arm,armv8-timer "interrupts" property. */
enum fdt_timer {
    FDT_TIMER_SEC_PHYS = 0,
    FDT_TIMER_PHYS,
    FDT_TIMER_VIRT,
    FDT_TIMER_HYP,
};

struct fdt_info {
    uint32_t totalsize; /* header totalsize of the blob */

    uint32_t nmem; /* /memory ranges (device_type = "memory") */
    struct fdt_range mem[FDT_MAX_MEM];

    uint32_t ncpus;                   /* cpus recorded in cpu_mpidr[], <= FDT_MAX_CPUS */
    uint32_t ncpus_total;             /* cpu nodes under /cpus (device_type = "cpu") */
    uint64_t cpu_mpidr[FDT_MAX_CPUS]; /* "reg" of each cpu node, in tree order: affinity
                                         fields only (QEMU: cpu N = (N/16) << 8 | N%16),
                                         without MPIDR_EL1's RES1 bit 31 */

    struct fdt_range gicd;               /* compatible "arm,gic-v3": reg[0] */
    uint32_t ngicr;                      /* #redistributor-regions (1 if absent) */
    struct fdt_range gicr[FDT_MAX_GICR]; /* reg[1 .. ngicr] */

    struct fdt_range uart; /* compatible "arm,pl011", preferring /chosen/stdout-path */
    uint32_t uart_intid;   /* its SPI as a GIC INTID (32 + number) */

    uint32_t timer_intid[4]; /* arm,armv8-timer PPIs as INTIDs (16 + number) */

    enum fdt_psci_conduit psci; /* /psci "method": "hvc" or "smc" */

    const char *bootargs;  /* /chosen/bootargs inside the blob (valid while the blob
                              is), NUL-terminated, or NULL if absent */
    uint32_t bootargs_len; /* strlen of bootargs */

    /* Optional: the enabled "virtio,mmio" transports that are root children, sorted by base
       address (so a transport's index is its slot number).  A node with a malformed reg or
       interrupts, or one past FDT_MAX_VIRTIO, is skipped and counted; it never fails the
       parse: the kernel runs without them. */
    uint32_t nvirtio;
    struct fdt_range virtio[FDT_MAX_VIRTIO]; /* reg[0]: the register window */
    uint32_t virtio_intid[FDT_MAX_VIRTIO];   /* interrupts[0], an SPI, as a GIC INTID */
    uint32_t virtio_skipped;
};

/*
 * Parse the blob at `blob` (8-byte aligned), of which at most `max_len` bytes may be read.
 * Returns 0 and fills `out`, or -EINVAL (-22: malformed or unsupported) or -ENOENT (-2: a
 * required node is missing), zeroes `out` and writes one line into `err` (at most `errlen`
 * bytes, always NUL-terminated; err may be NULL) naming what is wrong or missing, e.g.
 * "no device tree: bad magic 0x00000000 at the start of RAM" or
 * "device tree: missing node /psci".  On success err holds "".
 * Required: a valid header, a memory node, at least one cpu, a GICv3, a PL011, the
 * architected timer and /psci with a known method.  /chosen/bootargs and the virtio-mmio
 * transports are optional.
 * Pure: no globals, no allocation, callable in any context (fdt.c says more).
 */
int fdt_parse(const void *blob, size_t max_len, struct fdt_info *out, char *err, size_t errlen);

#endif
