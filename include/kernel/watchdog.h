/*
 * watchdog.h — a housekeeping watchdog for CPUs that stop taking interrupts.
 *
 * Every online housekeeping CPU runs a kernel timer every period_ms/4 that stamps its own
 * heartbeat and looks at the others': a housekeeping CPU whose heartbeat is older than
 * period_ms has taken no timer interrupt for that long — interrupts masked too long, or
 * stuck — and is reported once per stall, with how long it has been, through hklog.
 * Dataplane CPUs are never watched and never touched: no timer, no IPI, no read of
 * anything they write.  With one housekeeping CPU there is nobody to watch it: nothing
 * runs.  Off unless started (watchdog=MS on the command line; the checked kernel starts it
 * with 1000 ms).
 */
#ifndef ZT_KERNEL_WATCHDOG_H
#define ZT_KERNEL_WATCHDOG_H

#include <stdint.h>

/* Start watching with the bound period_ms (>= 4), from a housekeeping CPU, once the CPUs
 * are online. */
void watchdog_start(unsigned period_ms);
/* Stalls reported since boot. */
uint64_t watchdog_reports(void);

#endif
