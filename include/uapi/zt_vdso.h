/* SPDX-License-Identifier: MIT */
/*
 * zt_vdso.h — the vDSO every process has mapped (AT_SYSINFO_EHDR), and the data page its
 * functions read: the ABI between the kernel (kernel/proc/vdso.c), the vDSO itself
 * (arch/aarch64/vdso/) and tests.  Plain C, no includes but <stdint.h>.
 *
 * At ZT_VDSO_DATA_VA, one read-only page: struct zt_vdso_data, written by the kernel at boot
 * before the first process starts and never again (nothing sets the clocks: see zt_clock.h).
 * At ZT_VDSO_VA, right above it, the vDSO's image: a small ELF shared object
 * ("linux-vdso.so.1") with __kernel_clock_gettime, __kernel_gettimeofday and
 * __kernel_clock_getres at version LINUX_2.6.39, the names and version glibc and musl look up
 * on aarch64 (Linux's arch/arm64/kernel/vdso).  They answer the clocks zt_clock.h says a
 * reader may compute from the counter alone, reading CNTVCT_EL0 at EL0, and make the system
 * call for every other clock.  The places are fixed, like every kernel-provided page here.
 */
#ifndef ZT_UAPI_VDSO_H
#define ZT_UAPI_VDSO_H

#include <stdint.h>

#define ZT_VDSO_DATA_VA 0x0000007fdffe0000ull
#define ZT_VDSO_VA      (ZT_VDSO_DATA_VA + 0x1000) /* the ELF header: AT_SYSINFO_EHDR */
#define ZT_VDSO_PAGES   8                          /* the image fits in this many pages */

struct zt_vdso_data {
    uint64_t counter_freq;   /* counter cycles per second (CNTFRQ_EL0) */
    uint64_t ns_per_cycle;   /* 10^9 / counter_freq when that is exact (16 at 62.5 MHz), else 0 */
    uint64_t wall_offset_ns; /* wall (REALTIME) time = the counter's time + this */
    uint64_t res_ns;         /* clock_getres: one counter cycle, rounded up */
};

#endif
