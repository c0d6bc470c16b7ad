/* SPDX-License-Identifier: MIT */
/*
 * initrd_blob.S — the cpio archive of user programs, placed in .initrd (read-only data;
 * linker.ld brackets it with __initrd_start/__initrd_end).
 */
    .section .initrd, "a"
    .balign 16
    .incbin "build/initrd.cpio"
