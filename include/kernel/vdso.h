/* SPDX-License-Identifier: MIT */
/*
 * vdso.h — the vDSO every process has mapped (ABI in include/uapi/zt_vdso.h): its image,
 * built with the kernel (arch/aarch64/vdso/), copied into pages at boot, and its data page.
 */
#ifndef ZT_KERNEL_VDSO_H
#define ZT_KERNEL_VDSO_H

#include <stdint.h>

/* Boot, before the first process: copy the image into pages and fill the data page (the
 * counter's frequency, `wall_offset_ns`: wall time = the counter's time + it).  Without an
 * image (an arch that builds none) or memory, processes get no vDSO. */
void vdso_init(uint64_t wall_offset_ns);

struct vm;
/* Map the data page (read-only) and the image (read, execute) into vm at their fixed places
 * (kernel pages: never freed by the address space, shared by fork).  0 and the image's
 * address for AT_SYSINFO_EHDR in *ehdr (0 without a vDSO), or -errno. */
int vdso_map(struct vm *vm, uint64_t *ehdr);

#endif
