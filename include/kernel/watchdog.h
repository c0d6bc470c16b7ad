/* SPDX-License-Identifier: MIT */
/*
 * watchdog.h — a housekeeping watchdog for CPUs that stop taking interrupts.
 *
 * Every online housekeeping CPU runs a kernel timer every period_ms/4 that stamps its own
 * heartbeat and looks at the next one's (the watched CPUs form a ring in CPU order, so each
 * tick reads one heartbeat, whatever the number of CPUs): a housekeeping CPU whose heartbeat
 * is older than
 * period_ms has taken no timer interrupt for that long — interrupts masked too long, or
 * stuck — and is reported once per stall, with how long it has been, through hklog.
 * Dataplane CPUs are never watched and never touched: no timer, no IPI, no read of
 * anything they write.  With one housekeeping CPU there is nobody to watch it: nothing
 * runs.  The set follows the partition: a CPU that leaves housekeeping (to the dataplane,
 * or offline) loses its timer, one that joins gets one (watchdog_update).  Off unless
 * started (watchdog=MS on the command line; the checked kernel starts it with 1000 ms).
 * Context: watchdog_start and watchdog_update run on a housekeeping CPU, IRQs enabled, one
 * caller at a time (boot; then partition changes, which are serialised).
 */
#ifndef ZT_KERNEL_WATCHDOG_H
#define ZT_KERNEL_WATCHDOG_H

#include <stdint.h>

#include "kernel/cpumask.h"

/* Start watching with the bound period_ms (>= 4), from a housekeeping CPU, once the CPUs
 * are online; below 4, stop watching (every timer stopped, none started by later changes). */
void watchdog_start(unsigned period_ms);
/* The housekeeping set is now `housekeeping` (online CPUs only): stop the timers of CPUs that
 * left it, start those of CPUs that joined (kicking only those).  Nothing if not started. */
void watchdog_update(cpumask_t housekeeping);
/* CPUs whose watchdog timer runs now. */
cpumask_t watchdog_cpus(void);

#endif
