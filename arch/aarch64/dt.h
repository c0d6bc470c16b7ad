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

#define DT_MAX_CPUS   ARCH_MAX_CPUS /* CPUs beyond this are counted in ncpus_total, not recorded */
#define DT_MAX_MEM    8
#define DT_MAX_GICR   4
#define DT_MAX_VIRTIO 32 /* QEMU virt lists 32 virtio-mmio transports */

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
 * architected timer and /psci with a known method.  /chosen/bootargs, the initrd's place and
 * the virtio-mmio transports are optional.
 * Pure: no globals, no allocation, callable in any context (dt.c and kernel/lib/fdt.c say more).
 */
int dt_parse(const void *blob, size_t max_len, struct dt_info *out, char *err, size_t errlen);

#endif
