/* SPDX-License-Identifier: MIT */
/*
 * spin — the tickless experiment: busy tasks pinned to one CPU, and a measurement window
 * QEMU's own exception log can see.
 *
 *   spin -c CPU -t SECONDS [-n TASKS] [-a SECONDS]
 *
 * Starts TASKS threads (default 1) pinned to CPU.  Once all of them run, task 0 opens the
 * window with a getpid issued as `svc #0x5a5a`; every task spins on the counter (no system
 * call) for SECONDS of guest time; task 0 closes the window with `svc #0xa5a5`.  With -a,
 * tasks 1..N-1 then exit and task 0, alone on the CPU, spins through a second window of
 * that many seconds.  At the end it prints each window's length and each task's user and
 * system time (from the kernel's tick-free accounting), one line each:
 *   spin: window 1 cpu 3 tasks 2 ms 5000.012
 *   spin: task 0 tid 5 cpu 3 user_ms 2501.337 sys_ms 0.412
 * The coordinating main thread stays on its own (housekeeping) CPU and makes all the
 * system calls; the spinning tasks make none inside a window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

#define MAX_TASKS 16

static volatile int started;         /* tasks that are running on the CPU */
static volatile uint64_t window_end; /* counter value the current window ends at, 0 = none */
static volatile int phase_done;      /* tasks done with the current phase */
static volatile int alone;           /* task 0 may start window 2 (the others are gone) */
static volatile int window_closed;   /* task 0 has closed window 1 */
static int release[2];               /* futexes: [0] task 0 waits here, [1] the others */
static uint64_t window_cycles[2];
static int ntasks, cpu;
static uint64_t seconds_cycles, alone_cycles;

static uint64_t parse_seconds(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || v <= 0 || v > 3600) {
        fprintf(stderr, "spin: bad number of seconds '%s'\n", s);
        exit(2);
    }
    return (uint64_t)(v * (double)zt_counter_freq());
}

/* Spin until the window task 0 opened has ended (no system calls in here). */
static void spin_window(void)
{
    while (!window_end) {
    }
    while (zt_counter() < window_end) {
    }
}

/* One timed window on this CPU, opened and closed by the caller (task 0).  The line
 * announcing it is written before the window opens, so it costs the window nothing. */
static void run_window(int index, uint64_t cycles)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "spin: window %d opening on cpu %d\n", index + 1, cpu);
    zt_write(1, line, (size_t)n);
    zt_window_open();
    uint64_t t0 = zt_counter();
    window_end = t0 + cycles;
    spin_window();
    zt_window_close();
    window_cycles[index] = zt_counter() - t0;
    window_closed = 1;
}

static void wait_release(int *flag)
{
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
        zt_futex_wait(flag, 0, NULL);
    }
}

static void do_release(int *flag)
{
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    zt_futex_wake(flag, MAX_TASKS);
}

static long task_main(void *arg)
{
    int index = (int)(long)arg;
    __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
    while (started < ntasks) {
    }
    if (index == 0) {
        run_window(0, seconds_cycles);
    } else {
        spin_window();
        while (!window_closed) {
            /* no system call until task 0 has closed the window */
        }
    }
    __atomic_fetch_add(&phase_done, 1, __ATOMIC_SEQ_CST);
    if (index == 0 && alone_cycles) {
        while (!alone) {
        }
        window_end = 0;
        run_window(1, alone_cycles);
        __atomic_fetch_add(&phase_done, 1, __ATOMIC_SEQ_CST);
    }
    wait_release(&release[index == 0 ? 0 : 1]);
    return 0;
}

static void wait_phase(int count)
{
    while (phase_done < count) {
        zt_sleep_ns(5 * 1000 * 1000);
    }
}

static void print_tasks(zt_thread_t **threads, int from, int to)
{
    struct zt_task_info info[64];
    long n = zt_tasks(info, 64);
    for (int i = from; i < to; i++) {
        int tid = zt_thread_tid(threads[i]);
        for (long k = 0; k < n && k < 64; k++) {
            if (info[k].tid == tid) {
                printf("spin: task %d tid %d cpu %d user_ms %.3f sys_ms %.3f\n", i, tid,
                       info[k].cpu, info[k].user_ns / 1e6, info[k].sys_ns / 1e6);
            }
        }
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: spin -c CPU -t SECONDS [-n TASKS] [-a SECONDS]\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    cpu = -1;
    ntasks = 1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) {
            usage();
        }
        if (strcmp(argv[i], "-c") == 0) {
            cpu = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-t") == 0) {
            seconds_cycles = parse_seconds(argv[++i]);
        } else if (strcmp(argv[i], "-n") == 0) {
            ntasks = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-a") == 0) {
            alone_cycles = parse_seconds(argv[++i]);
        } else {
            usage();
        }
    }
    if (cpu < 0 || cpu >= zt_nr_cpus() || !seconds_cycles || ntasks < 1 || ntasks > MAX_TASKS) {
        fprintf(stderr, "spin: need -c CPU (0..%d), -t SECONDS, 1..%d tasks\n", zt_nr_cpus() - 1,
                MAX_TASKS);
        exit(2);
    }
}

static double cycles_ms(uint64_t t)
{
    return (double)zt_counter_to_ns(t) / 1e6;
}

int main(int argc, char **argv)
{
    zt_thread_t *threads[MAX_TASKS];
    parse_args(argc, argv);
    for (int i = 0; i < ntasks; i++) {
        threads[i] = zt_thread_create(task_main, (void *)(long)i, cpu);
        if (!threads[i]) {
            fprintf(stderr, "spin: cannot start task %d on cpu %d\n", i, cpu);
            return 1;
        }
    }
    wait_phase(ntasks);
    printf("spin: window 1 cpu %d tasks %d ms %.3f\n", cpu, ntasks, cycles_ms(window_cycles[0]));
    print_tasks(threads, 0, ntasks);
    do_release(&release[1]); /* tasks 1..N-1 exit */
    for (int i = 1; i < ntasks; i++) {
        zt_thread_join(threads[i]);
    }
    if (alone_cycles) {
        alone = 1; /* task 0 is alone on the CPU now */
        wait_phase(ntasks + 1);
        printf("spin: window 2 cpu %d tasks 1 ms %.3f\n", cpu, cycles_ms(window_cycles[1]));
        print_tasks(threads, 0, 1);
    }
    do_release(&release[0]);
    zt_thread_join(threads[0]);
    return 0;
}
