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
 */
#ifndef ZT_KERNEL_CYCLES_H
#define ZT_KERNEL_CYCLES_H

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

#endif
