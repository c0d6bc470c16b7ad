/* SPDX-License-Identifier: MIT */
/*
 * spinlock.c — the spinlock state that is not in a lock: in checked builds, how many
 * spinlocks each CPU holds and which one it is waiting for, with where from (contract in
 * include/kernel/spinlock.h).  Written only by its own CPU, inside spin_lock and spin_unlock;
 * read by the watchdog on other CPUs; the release build never touches it.
 */
#include "kernel/spinlock.h"

uint32_t spin_depth[MAX_CPUS];
PERCPU_ARRAY(spin_depth);
const spinlock_t *spin_waiting[MAX_CPUS];
uintptr_t spin_waiting_pc[MAX_CPUS];
PERCPU_ARRAY(spin_waiting);
PERCPU_ARRAY(spin_waiting_pc);
