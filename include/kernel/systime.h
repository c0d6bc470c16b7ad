/* SPDX-License-Identifier: MIT */
/*
 * systime.h — the time system calls (kernel/sys/systime.c): which clock ids exist and what
 * each reads is include/uapi/zt_clock.h's rule; the sys_* entry points are in syscall.h.
 * Also the timespec helpers other calls with a timeout use (futex).
 */
#ifndef ZT_KERNEL_SYSTIME_H
#define ZT_KERNEL_SYSTIME_H

#include <stdint.h>

#include "kernel/cycles.h" /* struct timespec_k and the one rule that checks it */

/* Copy a timespec from user space and check it by cycles.h's rule (Linux's): 0, -EFAULT, or
 * -EINVAL (negative seconds, nanoseconds out of [0, 10^9)). */
int systime_read_timespec(uint64_t uptr, struct timespec_k *ts);

#endif
