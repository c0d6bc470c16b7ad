/* SPDX-License-Identifier: MIT */
/*
 * clock.h — the clocks that are the counter's time: monotonic time (the counter itself) and
 * wall time (the counter plus an offset fixed once at boot from the real-time clock).  Which
 * clock id reads which is include/uapi/zt_clock.h's rule; the CPU-time clocks are the
 * system calls' (kernel/sys/time.c, from kernel/proc/acct.c).
 *
 * clock_init runs once on the boot CPU before any other CPU or task; every other function is
 * a pure read, any CPU, any context.
 */
#ifndef ZT_KERNEL_CLOCK_H
#define ZT_KERNEL_CLOCK_H

#include <stdint.h>

/* Boot: the RTC read `rtc_seconds` (seconds since the Epoch) when the counter read
 * `rtc_counter`; rtc_seconds 0 means there is no RTC and wall time starts at the counter's 0. */
void clock_init(uint64_t rtc_seconds, uint64_t rtc_counter);
/* What is added to the counter's time to make wall time (ns). */
uint64_t clock_wall_offset_ns(void);
/* Monotonic time now (ns): the counter's time. */
uint64_t clock_monotonic_ns(void);
/* Wall time now (ns since the Epoch): CLOCK_REALTIME. */
uint64_t clock_realtime_ns(void);
/* A wall-time instant (ns since the Epoch) as an absolute counter value; an instant before
 * the counter started is 0 (already past). */
uint64_t clock_wall_to_counter(uint64_t wall_ns);

#endif
