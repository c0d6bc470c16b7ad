/* SPDX-License-Identifier: MIT */
/*
 * crt0.S — process entry.  The kernel starts a program here at EL0 (Linux-like): SP 16-byte
 * aligned and pointing at argc, then argv[0..argc-1], NULL, envp..., NULL, auxv pairs ending
 * in AT_NULL; every general register is 0.  All the work is in C (start.c); this only hands
 * it the pointer to argc, before any C code can move SP, and the counter (CNTVCT_EL0) read by
 * the process's very first instruction: /bin/t0 prints it as the boot time to the first user
 * instruction, the same way under zerotick and Linux (docs/measuring.md).
 */
    .section .text.start, "ax"
    .global _start
    .type _start, %function
_start:
    mrs     x1, cntvct_el0  /* first: when this process began (no isb: nothing before it) */
    mov     x0, sp          /* &argc */
    mov     x29, #0         /* outermost frame: debuggers stop unwinding here */
    mov     x30, #0
    bl      __zt_start      /* never returns */
    brk     #0x1
    .size _start, . - _start
