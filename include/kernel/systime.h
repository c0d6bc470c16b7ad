/* SPDX-License-Identifier: MIT */
/*
 * systime.h — the time system calls (kernel/sys/systime.c): which clock ids exist and what
 * each reads is include/uapi/zt_clock.h's rule; the sys_* entry points are in syscall.h.
 * Also the timespec helpers other calls with a timeout use (futex).
 */
#ifndef ZT_KERNEL_SYSTIME_H
#define ZT_KERNEL_SYSTIME_H

#include <stdint.h>

/* struct timespec as Linux/aarch64 lays it out. */
struct timespec_k {
    int64_t sec;
    int64_t nsec;
};

/* Copy a timespec from user space and check it: 0, -EFAULT, or -EINVAL (negative, nsec out of
 * range, or more than 2^32 s, which the cycle arithmetic does not take). */
int systime_read_timespec(uint64_t uptr, struct timespec_k *ts);
/* A checked timespec as counter cycles. */
uint64_t systime_timespec_cycles(const struct timespec_k *ts);

#endif
