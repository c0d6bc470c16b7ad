/*
 * dataplane.c — quiescing a dataplane CPU (contract in include/kernel/dataplane.h).
 */
#include "kernel/dataplane.h"
#include "kernel/page.h"

void dataplane_quiesce_slow(void)
{
    page_drain_local();
    ipi_run_calls_dataplane_slow();
}
