/*
 * fixture.h — setup shared by host unit tests that need real kernel memory: a pool of
 * host pages handed to the page allocator, and CPU 0 as the one running CPU (its run
 * queue and idle task ready).  Header-only: each test binary includes it once.
 */
#ifndef ZT_TEST_FIXTURE_H
#define ZT_TEST_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>

#include "arch.h"
#include "fake.h"
#include "kernel/cpu.h"
#include "kernel/page.h"
#include "kernel/sched.h"

/* Give the page allocator `pages` fresh host pages and make CPU 0 the running CPU.
 * Returns the pool (free it at the end, or let the process exit), NULL if out of memory. */
static inline void *fixture_pages_and_cpu0(size_t pages)
{
    void *pool = aligned_alloc(PAGE_SIZE, pages * PAGE_SIZE);
    if (!pool) {
        return NULL;
    }
    page_add_range((paddr_t)(uintptr_t)pool, pages * PAGE_SIZE);
    cpus[0].id = 0;
    fake_cpu = &cpus[0];
    ncpus = 1;
    cpus_online = cpus_housekeeping = 1;
    sched_init_cpu(&cpus[0]);
    return pool;
}

#endif
