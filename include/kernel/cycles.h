/* SPDX-License-Identifier: MIT */
/*
 * cycles.h — the kernel's unit of time, and the one place it is converted.
 *
 * A "cycle" is one increment of the free-running system counter that arch_counter_read()
 * returns (CNTVCT_EL0 on aarch64: 62,500,000 per second on QEMU virt, 16 ns each).  It is not
 * a CPU clock cycle.  Every time inside the kernel is in cycles — deadlines (absolute
 * counter values), delays (relative), accounting totals — and names say so (`_cycles`);
 * nanoseconds and microseconds appear only at the edges (system calls, reports, the boot
 * log) and are made here.  "Tick" means only the periodic scheduler interrupt
 * (tick=periodic, the residual tick, sched_can_stop_tick).
 *
 * Pure functions of their argument and arch_counter_freq(); any context.  No overflow for
 * any value a 64-bit counter can hold (the conversions split whole seconds from the rest).
 *
 * Time as system calls pass it (struct timespec) is checked and converted here too, by one
 * rule for every call that takes one (nanosleep, clock_nanosleep, futex, ppoll, pselect6,
 * utimensat): Linux's.  A timespec is valid when its seconds are not negative and its
 * nanoseconds are in [0, NS_PER_SEC) — timespec64_valid, include/linux/time64.h, which
 * Linux's nanosleep, futex and poll_select_set_timeout apply (-EINVAL otherwise).  Any number
 * of seconds is valid; a time past TIMESPEC_SEC_MAX converts as TIMESPEC_SEC_MAX seconds
 * (136 years: a sleep that long never ends, as on Linux, whose conversion saturates at
 * KTIME_MAX, 292 years: timespec64_to_ktime), which keeps every product within 64 bits.
 */
#ifndef ZT_KERNEL_CYCLES_H
#define ZT_KERNEL_CYCLES_H

#include <stdbool.h>
#include <stdint.h>

#define NS_PER_SEC 1000000000ull
#define US_PER_SEC 1000000ull

/* Counter cycles per second (the counter's frequency). */
uint64_t cycles_per_second(void);
/* Cycles to nanoseconds and microseconds, rounded down. */
uint64_t cycles_to_ns(uint64_t cycles);
uint64_t cycles_to_us(uint64_t cycles);
/* Nanoseconds to cycles, rounded down. */
uint64_t cycles_from_ns(uint64_t ns);

/* struct timespec of Linux/aarch64 (16 bytes), as system calls read and write it. */
struct timespec_k {
    int64_t sec;
    int64_t nsec;
};

#define TIMESPEC_SEC_MAX (1ull << 32) /* seconds a timespec converts as, at most */

/* Is ts a valid timespec (Linux's rule, above)? */
bool timespec_is_valid(const struct timespec_k *ts);
/* A valid timespec in nanoseconds / counter cycles, its seconds clamped at TIMESPEC_SEC_MAX. */
uint64_t timespec_to_ns(const struct timespec_k *ts);
uint64_t timespec_to_cycles(const struct timespec_k *ts);
/* Nanoseconds as a timespec. */
struct timespec_k timespec_from_ns(uint64_t ns);

#endif
