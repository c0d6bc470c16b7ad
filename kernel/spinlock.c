/*
 * spinlock.c — the one piece of spinlock state that is not in a lock: in checked builds, how
 * many spinlocks each CPU holds (contract in include/kernel/spinlock.h).  Written only by its
 * own CPU, inside spin_lock and spin_unlock; the release build never touches it.
 */
#include "kernel/spinlock.h"

uint32_t spin_depth[MAX_CPUS];
PERCPU_ARRAY(spin_depth);
