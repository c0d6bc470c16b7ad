/* SPDX-License-Identifier: MIT */
/*
 * trace.h — per-CPU trace rings.
 *
 * Each CPU records events (uapi enum zt_trace_type) into its own fixed-size ring,
 * overwriting the oldest; no lock is shared between CPUs, recording is a handful of stores
 * with IRQs masked.  Readers (zt_trace, on any CPU) copy a ring without stopping its owner
 * and drop what was overwritten while they copied.  A CPU that never enters the kernel —
 * a dataplane CPU whose isolated task stays in user space — records nothing at all.
 *
 * Tracing is on only when the command line says trace=1 (trace_setup, at boot, before any
 * CPU's ring): off, no ring is allocated and trace_event is one load and one branch that is
 * never taken — data, not code patching.  It does not change at run time, so each CPU's
 * `tracing` byte (struct cpu) also sends its system calls down the slow path, which traces.
 */
#ifndef ZT_KERNEL_TRACE_H
#define ZT_KERNEL_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/zt_syscall.h"

#define TRACE_EVENTS_PER_PAGE (4096 / sizeof(struct zt_trace_event))
#define TRACE_PAGES           16 /* the most pages a ring has (up to 64 CPUs) */
#define TRACE_PAGES_MIN       4  /* the fewest */
#define TRACE_EVENTS          (TRACE_EVENTS_PER_PAGE * TRACE_PAGES)

extern bool trace_on; /* written once, by trace_setup */

/* Boot, before trace_init_cpu: trace=1 or not. */
void trace_setup(bool on);
/* Is tracing on (trace=1)? */
static inline bool trace_enabled(void)
{
    return __builtin_expect(trace_on, 0);
}

/* Pages of each CPU's ring on a machine of `ncpus` CPUs: TRACE_PAGES up to 64 CPUs, then
 * fewer (a power of two, at least TRACE_PAGES_MIN) so that the rings together stay near
 * 4 MiB and a CPU's ring is 16 KiB on 256 or 512 CPUs (docs/tracing.md). */
unsigned trace_ring_pages(unsigned ncpus);

/* With tracing on, give `cpu` its ring, before the CPU runs (boot, or coming back online).
 * 0 (also when tracing is off: no ring, no page), or -ENOMEM: then its events are dropped. */
int trace_init_cpu(unsigned cpu);
/* Take back the ring of `cpu`, which is off (its pages return to the allocator). */
void trace_free_cpu(unsigned cpu);
/* Record an event on this CPU (trace_event's slow half). */
void trace_record(enum zt_trace_type type, uint64_t a, uint64_t b);

/* Record an event on this CPU if tracing is on. */
static inline void trace_event(enum zt_trace_type type, uint64_t a, uint64_t b)
{
    if (trace_enabled()) {
        trace_record(type, a, b);
    }
}
/* Copy the oldest (up to n) of `cpu`'s events into out (kernel memory).  Returns the number
 * copied; with `clear` they are consumed, so repeated calls walk the whole ring. */
long trace_read(unsigned cpu, struct zt_trace_event *out, long n, int clear);

#endif
