/* SPDX-License-Identifier: MIT */
/*
 * dataplane.h — what a dataplane CPU does at the edges of the kernel so that nothing another
 * CPU could need stays parked on it while it runs user code or idles.
 *
 * A dataplane CPU is never interrupted for a kernel-internal request (ipi_call defers it) and
 * keeps no free pages another CPU might wait for.  So: on every kernel entry from user space
 * it runs the requests deferred for it; before every return to user space and before it
 * idles it also gives back its cached free pages.  On a housekeeping CPU both are one load.
 *
 * Only when there is something to do: the CPU's `quiesce` byte (struct cpu, part of
 * slow_work) says so.  page.c sets it when a page stays in a dataplane CPU's cache, ipi.c
 * when it defers a request to a dataplane CPU (a release store after the request, from any
 * CPU).  While it is clear, a system call on a dataplane CPU takes the same fast path as on
 * housekeeping (entry.c), because there is nothing to quiesce: its cache is empty and nothing
 * was deferred to it since it last quiesced.  dataplane_quiesce clears the byte *before* it
 * drains (then a full barrier): a request deferred meanwhile either is seen by this drain or
 * sets the byte again, so the next exit takes the slow path.  Nothing needed is ever skipped.
 *
 * Context: this CPU, IRQs masked.  Header only: both are inline, so a dataplane CPU pays no
 * extra call on its way out.
 */
#ifndef ZT_KERNEL_DATAPLANE_H
#define ZT_KERNEL_DATAPLANE_H

#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/page.h"

/* Kernel entry from user space: run what was deferred for this CPU (ipi.h). */
static inline void dataplane_kernel_entry(void)
{
    if (this_cpu()->dataplane) {
        ipi_run_calls_dataplane_slow();
    }
}

/* Before returning to user space or idling: drain the page cache, run deferred requests. */
static inline void dataplane_quiesce(void)
{
    struct cpu *c = this_cpu();
    if (c->dataplane) {
        __atomic_store_n(&c->quiesce, false, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the clear, before the reads below */
        page_drain_local();
        ipi_run_calls_dataplane_slow();
    }
}

/* A dataplane CPU's role begins or ends (partition_setup, repartition), on the CPU itself or
 * while it is offline: quiesce at its next exit whatever its cache holds. */
static inline void dataplane_set_role(struct cpu *c, bool dataplane)
{
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the role's CPU sets are written first */
    c->dataplane = dataplane;                /* byte stores: slow_work's rule (cpu.h) */
    c->quiesce = dataplane;
}

#endif
