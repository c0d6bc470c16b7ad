/* SPDX-License-Identifier: MIT */
/*
 * tls.c — builds thread-local storage areas from the linker's TLS symbols (user.ld).
 *
 * AArch64 TLS variant 1 with the local-exec model (picolibc.specs passes -ftls-model=
 * local-exec): the linker resolves a TLS variable to TP + ALIGN(16, tls_align) + its offset
 * in the PT_TLS segment, where TP is TPIDR_EL0.  So an area is: TCB (16 bytes, unused),
 * padding to tls_align, then the .tdata image and the zeroed .tbss.
 * TPIDR_EL0 is an EL0-writable register that the kernel saves and restores per thread.
 */
#include "tls.h"

#include <stdint.h>
#include <string.h>

extern char __zt_tdata_start[], __zt_tdata_end[];
extern char __zt_tls_size[], __zt_tls_align[]; /* absolute symbols: their address is the value */
extern char __zt_main_tls[];

static size_t tcb_bytes(void)
{
    size_t align = (size_t)__zt_tls_align;

    return (16 + align - 1) & ~(align - 1);
}

size_t tls_area_size(void)
{
    return tcb_bytes() + (size_t)__zt_tls_size;
}

size_t tls_area_align(void)
{
    size_t align = (size_t)__zt_tls_align;

    return align < 16 ? 16 : align;
}

void *tls_area_init(void *area)
{
    char *block = (char *)area + tcb_bytes();
    size_t tdata = (size_t)(__zt_tdata_end - __zt_tdata_start);

    memset(area, 0, tls_area_size());
    memcpy(block, __zt_tdata_start, tdata);
    return area;
}

void tls_setup_main(void)
{
    void *tp = tls_area_init(__zt_main_tls);

    /* No TLS access may happen before this point (none does: start.c calls this first). */
    __asm__ volatile("msr tpidr_el0, %0" ::"r"(tp) : "memory");
}
