/* SPDX-License-Identifier: MIT */
/*
 * isol — the task-isolation experiment.
 *
 *   isol -c CPU -t SECONDS [-s] [-v syscall|fault|undef] [-g SIG] [-m] [-z MS] [-r N]
 *        [-A] [-M CPU2] [-x ERRNO] [-E]
 *
 * Pins itself to CPU, isolates with prctl(PR_SET_TASK_ISOLATION) (strict with -s), spins for
 * SECONDS of guest time reading the counter (no system calls), ends isolation and exits 0.
 * The isolating prctl is issued as `svc #0x5a5a` and the one that ends isolation as
 * `svc #0xa5a5`, so QEMU's exception log shows exactly what reached the CPU in between.
 *   -v KIND   commit that violation halfway: a write() syscall, a store to an unmapped
 *             address, or an undefined instruction
 *   -g SIG    install a handler for SIG and ask for it on violations (PR_TASK_ISOLATION_SET_SIG)
 *   -m        a sibling thread of this process maps and unmaps memory on CPU 0 meanwhile
 *             (same address space: TLB invalidations that on Linux would be IPIs)
 *   -z MS     right after isolating, sleep MS milliseconds (a timer the task asked for)
 *   -r N      instead: enable and disable isolation N times, check no page leaked
 *   -A        do not pin first (admission must refuse: the affinity is not one CPU)
 *   -M CPU2   halfway, move itself to CPU2 (sched_setaffinity): isolation must end there
 *   -x ERRNO  expect the isolating prctl to fail with -ERRNO (e.g. EINVAL, EAGAIN): exit 0
 *             if it does, 1 otherwise
 *   -E        close the window with PR_GET_TASK_ISOLATION instead, and print the flags it
 *             returns ("isol: isolation flags at the end N"): 0 once something else (a
 *             partition change) ended the isolation
 *
 * Under Linux (make compare runs this very file there) the prctl fails with -EINVAL, as
 * mainline has no task isolation: isol says so and spins through the same window anyway.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

static int cpu = -1, strict, mapper_on, no_pin, cycles, sleep_ms, handler_sig, move_to = -1;
static int flags_at_end;
static double seconds;
static const char *violation, *expect_err;
static volatile int mapper_stop, got_signal;
static volatile int *volatile unmapped = (volatile int *)0x10; /* page 0 is never mapped */

static void usage(void)
{
    fprintf(stderr, "usage: isol -c CPU -t SECONDS [-s] [-v syscall|fault|undef] [-g SIG] [-m] "
                    "[-z MS] [-r N] [-A] [-M CPU2] [-x ERRNO] [-E]\n");
    exit(2);
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-E")) {
            flags_at_end = 1;
            continue;
        }
        if (!strcmp(a, "-s") || !strcmp(a, "-m") || !strcmp(a, "-A")) {
            *(a[1] == 's' ? &strict : a[1] == 'm' ? &mapper_on : &no_pin) = 1;
            continue;
        }
        if (!v) {
            usage();
        }
        i++;
        if (!strcmp(a, "-c")) {
            cpu = atoi(v);
        } else if (!strcmp(a, "-t")) {
            seconds = strtod(v, NULL);
        } else if (!strcmp(a, "-v")) {
            violation = v;
        } else if (!strcmp(a, "-g")) {
            handler_sig = atoi(v);
        } else if (!strcmp(a, "-z")) {
            sleep_ms = atoi(v);
        } else if (!strcmp(a, "-r")) {
            cycles = atoi(v);
        } else if (!strcmp(a, "-x")) {
            expect_err = v;
        } else if (!strcmp(a, "-M")) {
            move_to = atoi(v);
        } else {
            usage();
        }
    }
    if (cpu < 0 || cpu >= zt_nr_cpus() || (!cycles && (seconds <= 0 || seconds > 3600))) {
        usage();
    }
    if (violation && strcmp(violation, "syscall") && strcmp(violation, "fault") &&
        strcmp(violation, "undef")) {
        usage();
    }
}

static void on_signal(int sig)
{
    got_signal = sig;
}

static long mapper(void *arg)
{
    while (!mapper_stop) {
        long a =
            zt_mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a > 0) {
            memset((void *)a, 1, 16 * 4096);
            zt_munmap((void *)a, 16 * 4096);
        }
    }
    return 0;
}

static unsigned long isolation_flags(void)
{
    return PR_TASK_ISOLATION_ENABLE | (strict ? PR_TASK_ISOLATION_STRICT : 0) |
           PR_TASK_ISOLATION_SET_SIG(handler_sig);
}

/* The violation, committed halfway through the window. */
static void commit_violation(void)
{
    if (!strcmp(violation, "syscall")) {
        zt_write(1, "isol: this write is a violation\n", 32);
    } else if (!strcmp(violation, "fault")) {
        *unmapped = 1;
    } else {
        __asm__ volatile(".inst 0x00000000");
    }
}

static int enable_disable_cycles(void)
{
    struct zt_meminfo before, after;
    /* The free page count is global: let the shell that started us settle into wait4
     * first, so its own allocations and frees do not land between the two readings. */
    zt_sleep_ns(200 * 1000 * 1000);
    /* The first enable populates what is left of this process's stack (no page fault may
     * come once it is isolated): counted from after it, as pages the process keeps. */
    if (zt_prctl(PR_SET_TASK_ISOLATION, isolation_flags(), 0, 0, 0) ||
        zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0)) {
        printf("isol: the first enable/disable cycle failed\n");
        return 1;
    }
    zt_meminfo(&before);
    for (int i = 0; i < cycles; i++) {
        long r = zt_prctl(PR_SET_TASK_ISOLATION, isolation_flags(), 0, 0, 0);
        long r2 = zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
        if (r || r2) {
            printf("isol: cycle %d: prctl returned %ld / %ld\n", i, r, r2);
            return 1;
        }
    }
    zt_meminfo(&after);
    printf("isol: %d enable/disable cycles, free pages %llu before, %llu after\n", cycles,
           (unsigned long long)before.free_pages, (unsigned long long)after.free_pages);
    return before.free_pages == after.free_pages ? 0 : 1;
}

static int expected_failure(long r)
{
    printf("isol: prctl returned %s%s, expected -%s\n", r ? "-" : "",
           r ? zt_errno_name((int)-r) : "0", expect_err);
    return r < 0 && !strcmp(zt_errno_name((int)-r), expect_err) ? 0 : 1;
}

int main(int argc, char **argv)
{
    zt_thread_t *sibling = NULL;
    parse(argc, argv);
    if (handler_sig && zt_signal(handler_sig, on_signal, 0) != 0) {
        printf("isol: cannot install a handler for signal %d\n", handler_sig);
        return 1;
    }
    if (mapper_on && !(sibling = zt_thread_create(mapper, NULL, 0))) {
        printf("isol: cannot start the mapper thread\n");
        return 1;
    }
    if (!no_pin && zt_pin(cpu) != 0) {
        printf("isol: cannot pin to cpu %d\n", cpu);
        return 1;
    }
    if (cycles) {
        return enable_disable_cycles();
    }
    /* make compare: mainline Linux has no task isolation (48 is not a prctl there); said
     * before the window opens, so the line costs the window nothing. */
    bool no_isolation = zt_on_linux();
    if (no_isolation && !expect_err) {
        printf("isol: Linux %s has no PR_SET_TASK_ISOLATION: spinning without it\n",
               zt_kernel_release());
    }
    fflush(stdout);
    long r = zt_syscall6_mark_open(SYS_prctl, PR_SET_TASK_ISOLATION, (long)isolation_flags(), 0, 0,
                                   0, 0);
    if (expect_err) {
        zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
        return expected_failure(r);
    }
    if (r == -EINVAL && no_isolation && !expect_err) {
        r = 0; /* said above: the window stays open, the task spins as nohz_full leaves it */
    }
    if (r != 0) {
        zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
        printf("isol: prctl(PR_SET_TASK_ISOLATION) failed: -%s\n", zt_errno_name((int)-r));
        return 1;
    }
    uint64_t start = zt_counter(), cycles = (uint64_t)(seconds * (double)zt_counter_freq());
    if (sleep_ms) {
        zt_sleep_ns((uint64_t)sleep_ms * 1000000ull);
    }
    bool violated = false;
    while (zt_counter() - start < cycles) {
        if (violation && !violated && zt_counter() - start >= cycles / 2) {
            violated = true;
            commit_violation();
        }
        if (move_to >= 0 && zt_counter() - start >= cycles / 2) {
            long r = zt_pin(move_to);
            long flags = zt_prctl(PR_GET_TASK_ISOLATION, 0, 0, 0, 0);
            printf("isol: moved to cpu %d (%ld); isolation flags now %ld\n", zt_cpu(), r, flags);
            move_to = -1;
        }
    }
    long at_end = 0;
    if (flags_at_end) {
        at_end = zt_syscall6_mark_close(SYS_prctl, PR_GET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    }
    zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    uint64_t end = zt_counter(); /* the window: from isolating to ending isolation */
    if (flags_at_end) {
        printf("isol: isolation flags at the end %ld\n", at_end);
    }
    mapper_stop = 1;
    if (sibling) {
        zt_thread_join(sibling);
    }
    if (got_signal) {
        printf("isol: signal %d (%s) received; still running, no longer isolated\n", got_signal,
               zt_signal_name(got_signal));
    }
    printf("isol: isolated on cpu %d for %.3f s\n", cpu,
           (double)zt_counter_to_ns(end - start) / 1e9);
    return 0;
}
