/* SPDX-License-Identifier: MIT */
/*
 * load — housekeeping disturbance generator for the isolation tests.
 *
 *   load -t SECONDS [-q | -f]
 *
 * For SECONDS of guest time, on the CPUs it was given (by default, like every spawned
 * process, the housekeeping CPUs), four threads keep the kernel busy with everything that
 * on Linux reaches other CPUs:
 *   spawner  spawns /bin/true and waits for it (process creation, exit, deferred teardown
 *            work, wakeups across CPUs)
 *   writer   writes lines to the console (UART output)
 *   sleeper  sleeps 1 ms at a time (timers, wakeups)
 *   mapper   maps, touches and unmaps 64 KiB at a time in this process (page tables, TLB
 *            invalidation that Linux would send IPIs for)
 * At the end it prints how much of each it did:
 *   load: 6.0 s: 120 spawns, 300 writes, 2500 sleeps, 4000 maps
 * -q: the writer writes nothing (fewer console bytes, same everything else).
 * -f: the writer floods the console: it writes without pausing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

static uint64_t end;
static int quiet, flood;
static volatile uint64_t spawns, writes, sleeps, maps;

static bool running(void)
{
    return zt_counter() < end;
}

static long spawner(void *arg)
{
    char *argv[] = {"/bin/true", NULL};
    while (running()) {
        int status;
        long pid = zt_spawn("/bin/true", argv, 0);
        if (pid > 0 && zt_wait((int)pid, &status) == pid) {
            spawns++;
        }
    }
    return 0;
}

static long writer(void *arg)
{
    char line[96];
    while (running()) {
        if (!quiet) {
            int n = snprintf(line, sizeof(line), "load: line %llu from the writer thread\n",
                             (unsigned long long)writes);
            zt_write(1, line, (size_t)n);
        }
        writes++;
        if (!flood) {
            zt_sleep_ns(20 * 1000 * 1000);
        }
    }
    return 0;
}

static long sleeper(void *arg)
{
    while (running()) {
        zt_sleep_ns(1000 * 1000);
        sleeps++;
    }
    return 0;
}

static long mapper(void *arg)
{
    const size_t len = 64 * 1024;
    while (running()) {
        long a = zt_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a < 0) {
            fprintf(stderr, "load: mmap failed: %s\n", zt_errno_name((int)-a));
            return 1;
        }
        memset((void *)a, 0x5a, len);
        zt_munmap((void *)a, len);
        maps++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            seconds = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "-q") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "-f") == 0) {
            flood = 1;
        } else {
            seconds = 0;
            break;
        }
    }
    if (seconds <= 0 || seconds > 3600) {
        fprintf(stderr, "usage: load -t SECONDS [-q | -f]\n");
        return 2;
    }
    end = zt_counter() + (uint64_t)(seconds * (double)zt_counter_freq());
    long (*fns[])(void *) = {spawner, writer, sleeper, mapper};
    zt_thread_t *threads[4];
    for (int i = 0; i < 4; i++) {
        threads[i] = zt_thread_create(fns[i], NULL, -1);
        if (!threads[i]) {
            fprintf(stderr, "load: cannot start thread %d\n", i);
            return 1;
        }
    }
    long failed = 0;
    for (int i = 0; i < 4; i++) {
        failed |= zt_thread_join(threads[i]);
    }
    printf("load: %.1f s: %llu spawns, %llu writes, %llu sleeps, %llu maps\n", seconds,
           (unsigned long long)spawns, (unsigned long long)writes, (unsigned long long)sleeps,
           (unsigned long long)maps);
    return failed ? 1 : 0;
}
