/* SPDX-License-Identifier: MIT */
/*
 * vdso.c — the vDSO's pages (contract in include/kernel/vdso.h, ABI in include/uapi/zt_vdso.h).
 *
 * The image is a small ELF shared object the build makes from arch/aarch64/vdso/ and the arch
 * carries between __vdso_start and __vdso_end (the host's fake arch carries none: unit tests
 * run without a vDSO).  At boot it is copied into whole pages, made visible to instruction
 * fetch, and the data page is filled; both are then only read, by every process, which maps
 * them read-only like the counters page (VMA_KERNEL: munmap refuses them, fork shares them).
 * The data is written once, before any process can read it, so the vDSO needs no sequence
 * count; one would be needed if anything ever changed the clocks at run time.
 */
#include "kernel/vdso.h"
#include "arch.h"
#include "kernel/cycles.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/printk.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "uapi/zt_vdso.h"

extern const char __vdso_start[], __vdso_end[];

static paddr_t data_page;
static paddr_t image[ZT_VDSO_PAGES];
static unsigned image_pages; /* 0: no vDSO */

void vdso_init(uint64_t wall_offset_ns)
{
    size_t len = (size_t)(__vdso_end - __vdso_start);
    unsigned n = (unsigned)((len + PAGE_SIZE - 1) / PAGE_SIZE);
    if (len == 0) {
        return; /* this arch builds no vDSO */
    }
    if (n > ZT_VDSO_PAGES || !(data_page = page_alloc())) {
        printk("vdso: image of %zu bytes not mapped: processes get no vDSO\n", len);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        image[i] = page_alloc(); /* zeroed: the last page's tail stays zero */
        if (!image[i]) {
            printk("vdso: no memory: processes get no vDSO\n");
            while (i--) {
                page_free(image[i]);
            }
            page_free(data_page);
            return;
        }
        size_t at = (size_t)i * PAGE_SIZE;
        memcpy(phys_to_virt(image[i]), __vdso_start + at, MIN(len - at, (size_t)PAGE_SIZE));
        arch_sync_icache(phys_to_virt(image[i]), PAGE_SIZE);
    }
    uint64_t freq = cycles_per_second();
    struct zt_vdso_data *d = phys_to_virt(data_page);
    d->counter_freq = freq;
    d->ns_per_cycle = NS_PER_SEC % freq == 0 ? NS_PER_SEC / freq : 0;
    d->wall_offset_ns = wall_offset_ns;
    d->res_ns = (NS_PER_SEC + freq - 1) / freq; /* as clock_getres says */
    image_pages = n;
}

int vdso_map(struct vm *vm, uint64_t *ehdr)
{
    *ehdr = 0;
    if (!image_pages) {
        return 0;
    }
    int r = vm_map_kernel_pages(vm, ZT_VDSO_DATA_VA, &data_page, 1, PROT_READ);
    if (r == 0) {
        r = vm_map_kernel_pages(vm, ZT_VDSO_VA, image, image_pages, PROT_READ | PROT_EXEC);
    }
    *ehdr = r == 0 ? ZT_VDSO_VA : 0;
    return r;
}
