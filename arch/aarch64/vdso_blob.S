/* SPDX-License-Identifier: MIT */
/*
 * vdso_blob.S — the vDSO's image (built from arch/aarch64/vdso/ by the Makefile) in the
 * kernel's read-only data, between __vdso_start and __vdso_end; kernel/proc/vdso.c copies it
 * into pages at boot.
 */
    .section .rodata.vdso, "a"
    .balign 16
    .global __vdso_start, __vdso_end
__vdso_start:
    .incbin "build/vdso/vdso.so"
__vdso_end:
