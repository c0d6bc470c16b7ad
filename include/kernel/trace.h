/*
 * trace.h — per-CPU trace rings.
 *
 * Each CPU records events (uapi enum zt_trace_type) into its own fixed-size ring,
 * overwriting the oldest; no lock is shared between CPUs, recording is a handful of stores
 * with IRQs masked.  Readers (zt_trace, on any CPU) copy a ring without stopping its owner
 * and drop what was overwritten while they copied.  A CPU that never enters the kernel —
 * a dataplane CPU whose isolated task stays in user space — records nothing at all.
 */
#ifndef ZT_KERNEL_TRACE_H
#define ZT_KERNEL_TRACE_H

#include <stdint.h>

#include "uapi/zt_syscall.h"

#define TRACE_EVENTS_PER_PAGE (4096 / sizeof(struct zt_trace_event))
#define TRACE_PAGES           16
#define TRACE_EVENTS          (TRACE_EVENTS_PER_PAGE * TRACE_PAGES)

/* Give `cpu` its ring, before the CPU runs (boot, or coming back online).  0, or -ENOMEM:
 * then its events are dropped. */
int trace_init_cpu(unsigned cpu);
/* Take back the ring of `cpu`, which is off (its pages return to the allocator). */
void trace_free_cpu(unsigned cpu);
/* Record an event on this CPU. */
void trace_event(enum zt_trace_type type, uint64_t a, uint64_t b);
/* Copy the oldest (up to n) of `cpu`'s events into out (kernel memory).  Returns the number
 * copied; with `clear` they are consumed, so repeated calls walk the whole ring. */
long trace_read(unsigned cpu, struct zt_trace_event *out, long n, int clear);

#endif
