/* SPDX-License-Identifier: MIT */
/*
 * dataplane.h — what a dataplane CPU does at the edges of the kernel so that nothing another
 * CPU could need stays parked on it while it runs user code or idles.
 *
 * A dataplane CPU is never interrupted for a kernel-internal request (ipi_call defers it) and
 * keeps no free pages another CPU might wait for.  So: on every kernel entry from user space
 * it runs the requests deferred for it; before every return to user space and before it
 * idles it also gives back its cached free pages.  On a housekeeping CPU both are one load.
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
    if (this_cpu()->dataplane) {
        page_drain_local();
        ipi_run_calls_dataplane_slow();
    }
}

#endif
