/* SPDX-License-Identifier: MIT */
/*
 * fixture.h — setup shared by host unit tests that need real kernel memory: a pool of
 * host pages handed to the page allocator, and CPU 0 as the one running CPU (its run
 * queue and idle task ready).  Header-only: each test binary includes it once.
 */
#ifndef ZT_TEST_FIXTURE_H
#define ZT_TEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

pid_t waitpid(pid_t pid, int *status, int options);

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "fake.h"

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
    cpus_online = cpus_housekeeping = cpumask_of(0);
    sched_init_cpu(&cpus[0]);
    return pool;
}

/* Run fn() in a child process and report whether it panicked (exit status
 * PANIC_EXIT_STATUS, as the fake arch's power-off gives it) with `needle` in what it printed
 * (the fake power-off copies the kernel console to stderr).  A check that must fire is
 * proven this way without ending the test binary.  On failure `why` says what happened. */
static inline bool fixture_panics(void (*fn)(void), const char *needle, char *why, size_t len)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, len, "pipe failed");
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        fn();
        _exit(0); /* returned: no panic */
    }
    close(fds[1]);
    char out[8192];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(out) - 1 && (r = read(fds[0], out + n, sizeof(out) - 1 - n)) > 0) {
        n += (size_t)r;
    }
    out[n] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    /* Linux's wait status, decoded by hand: <sys/wait.h> brings the host's <signal.h>, whose
     * names clash with the kernel's signal.h in the tests that use both. */
    bool panicked = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == PANIC_EXIT_STATUS;
    if (!panicked || !strstr(out, needle)) {
        snprintf(why, len, "status 0x%x, output: %.300s", status, out);
        return false;
    }
    return true;
}

#endif
