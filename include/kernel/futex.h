/* SPDX-License-Identifier: MIT */
/*
 * futex.h — FUTEX_WAIT / FUTEX_WAKE on user addresses, keyed by (address space, address).
 * Waiters sleep in one of a fixed set of hashed wait queues; the queue lock is held from
 * reading the user word to sleeping, so a FUTEX_WAKE after the store cannot be missed.
 */
#ifndef ZT_KERNEL_FUTEX_H
#define ZT_KERNEL_FUTEX_H

#include <stdint.h>

struct vm;

/* Boot: set up the hash buckets. */
void futex_init(void);

/* Sleep while *uaddr == val (deadline 0: no timeout).  0, -EAGAIN, -EINTR, -ETIMEDOUT,
 * -EFAULT, -EINVAL (misaligned). */
int futex_wait(struct vm *vm, uint64_t uaddr, uint32_t val, uint64_t deadline);
/* Wake up to n waiters on uaddr.  Returns how many. */
int futex_wake(struct vm *vm, uint64_t uaddr, int n);

#endif
