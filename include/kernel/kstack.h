/* SPDX-License-Identifier: MIT */
/*
 * kstack.h — kernel stacks in the stack window (arch_defs.h): KSTACK_SIZE bytes of mapped
 * pages in a KSTACK_SLOT-sized slot whose upper half stays unmapped, so every stack has an
 * unmapped guard below it and the vectors can detect an overflow.  Thread-safe.
 */
#ifndef ZT_KERNEL_KSTACK_H
#define ZT_KERNEL_KSTACK_H

#include <stdint.h>

/* Boot: build the stack window's page tables for the first slots. */
void kstack_init(void);
/* A new stack: returns its top (initial SP), or 0 when out of memory or slots. */
uint64_t kstack_alloc(void);
/* Free the stack whose top kstack_alloc returned; its pages go back to the allocator. */
void kstack_free(uint64_t top);
/* Stacks handed out and not yet freed (zt_meminfo, leak checks). */
unsigned kstack_used_count(void);

#endif
