/* SPDX-License-Identifier: MIT */
/*
 * lockcheck.h — checking the lock order (include/kernel/lockrank.h) in checked builds.
 * spinlock.h calls lockcheck_acquire/lockcheck_release for ranked locks; the rest is for
 * tests.
 */
#ifndef ZT_KERNEL_LOCKCHECK_H
#define ZT_KERNEL_LOCKCHECK_H

#include <stdbool.h>

#include "kernel/spinlock.h"

/* May a CPU holding `held_lock` take `l`?  (Pure: the rule itself.) */
bool lockcheck_may_take(const spinlock_t *held_lock, const spinlock_t *l);
/* The name of a lock rank ("the page allocator"), for reports. */
const char *lockcheck_rank_name(unsigned rank);
/* Ranked locks `cpu` holds now. */
unsigned lockcheck_held(unsigned cpu);

#endif
