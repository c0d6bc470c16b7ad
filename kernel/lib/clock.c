/* SPDX-License-Identifier: MIT */
/*
 * clock.c — monotonic and wall time from the counter (contract in include/kernel/clock.h).
 *
 * Wall time is the counter's time plus wall_offset_ns, written once by clock_init on the boot
 * CPU before any other CPU starts (smp_boot's barriers publish it) and only read afterwards.
 * Nothing adjusts it later: there is no clock_settime, no NTP, so wall time never jumps and
 * runs at exactly the counter's rate, as monotonic time does.
 */
#include "kernel/clock.h"
#include "arch.h"
#include "kernel/cycles.h"

static uint64_t wall_offset_ns;

void clock_init(uint64_t rtc_seconds, uint64_t rtc_counter)
{
    uint64_t at_ns = cycles_to_ns(rtc_counter), wall_ns = rtc_seconds * NS_PER_SEC;
    /* An RTC reading before the counter's own time (an RTC set to 1970) would make the offset
     * negative: wall time then simply starts at the counter's 0. */
    wall_offset_ns = rtc_seconds && wall_ns > at_ns ? wall_ns - at_ns : 0;
}

uint64_t clock_wall_offset_ns(void)
{
    return wall_offset_ns;
}

uint64_t clock_monotonic_ns(void)
{
    return cycles_to_ns(arch_counter_read());
}

uint64_t clock_realtime_ns(void)
{
    return clock_monotonic_ns() + wall_offset_ns;
}

uint64_t clock_wall_to_counter(uint64_t wall_ns)
{
    return wall_ns > wall_offset_ns ? cycles_from_ns(wall_ns - wall_offset_ns) : 0;
}
