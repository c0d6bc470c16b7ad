/* SPDX-License-Identifier: MIT */
/*
 * timerlat — timer wake-up latency, as Linux's rtla timerlat measures it: the one place a
 * tickless dataplane CPU is supposed to take interrupts.
 *
 *   timerlat -c LIST -t SECONDS [-p PERIOD_US]
 *
 * One thread per CPU of LIST (a Linux cpulist), pinned there, sleeps to the absolute
 * CLOCK_MONOTONIC times start + k * PERIOD (clock_nanosleep with TIMER_ABSTIME; default
 * period 1000 us, rtla's) for SECONDS of guest time, and after each wake-up reads the clock.
 * Two latencies per wake-up, both from the expected expiry:
 *   irq   when the kernel's timer interrupt handler ran: zerotick publishes the counter at
 *         the handler's start and the deadline in the hardware in the CPU's counter page
 *         (timer_irq_at, timer_irq_deadline; uapi/zt_syscall.h).  Counted only for a
 *         wake-up that came with exactly one timer interrupt on the CPU whose deadline is the
 *         expected expiry (to within one counter cycle); the others are `unmatched`.
 *   task  when the thread read CLOCK_MONOTONIC after clock_nanosleep returned
 *         (clock_gettime, a system call on both kernels: this program reads no vDSO).
 * Output per CPU (ns for min/avg/max, whole microseconds for the percentiles, the 1 us
 * bucket the value at that rank fell in, 512: longer):
 *   timerlat: cpu 3 wakeups 1000 overruns 0 timer_irqs 1000 unmatched 0
 *   timerlat: cpu 3 irq n 1000 min_ns 1936 avg_ns 2010 max_ns 2400 p50_us 2 ... p99.999_us 2
 *   timerlat: cpu 3 task n 1000 min_ns ... p99.999_us 9
 *   timerlat: cpu 3 window exceptions 2000 syscalls 2000 irqs 0
 * `overruns`: expiries skipped because a wake-up came a whole period late or more.  The window
 * line is what the kernel counted on the CPU inside the thread's measurement window (the
 * markers of tools/exclog, a getpid each; the first clock read is before it): per wake-up one
 * clock_nanosleep, one clock_gettime and, on a tickless CPU, one timer interrupt.  `irqs`
 * counts IRQ exceptions: the timer interrupt that ends the sleep finds the CPU idle, and the
 * idle loop acknowledges it with IRQs masked (sched_idle), so it is in timer_irqs but took
 * no exception.
 * Under Linux (make compare) the same file runs: there is no counter page, so the irq line
 * says "unavailable" and timer_irqs and the window line are left out (Linux's own IRQ-side
 * figure is its timerlat tracer's).  Under QEMU -icount every figure is guest time.
 * Exit status: 0, 1 if a thread could not start or a call failed, 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latstat.h"
#include "zt.h"

#define MAX_THREADS       64
#define DEFAULT_PERIOD_US 1000

struct waker {
    int cpu;
    zt_thread_t *thread;
    long error;                                      /* -errno of the failing call, or 0 */
    const char *where;                               /* its name */
    const volatile struct zt_cpu_counters *counters; /* NULL under Linux */
    uint64_t first_ns;                               /* the clock read before the window */
    uint64_t wakeups, overruns, timer_irqs, unmatched;
    uint64_t before_exc, before_svc, before_irq, after_exc, after_svc, after_irq;
    struct latstat irq, task;
} __attribute__((aligned(64)));

static struct waker wakers[MAX_THREADS];
static int nwakers;
static volatile int go; /* 1: start, -1: give up */
static struct zt_cpuset cpu_mask;
static double seconds;
static unsigned long period_us = DEFAULT_PERIOD_US;
static uint64_t nperiods;

static void usage(const char *why)
{
    fprintf(stderr, "timerlat: %s\n", why);
    fprintf(stderr, "usage: timerlat -c LIST -t SECONDS [-p PERIOD_US]\n"
                    "  -c LIST       CPUs, e.g. 2-3,5 (at most 64)\n"
                    "  -t SECONDS    how long, in guest time (at most 3600)\n"
                    "  -p PERIOD_US  timer period in microseconds, 100..1000000 (default 1000)\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    static const struct zt_meter_opts opts = {
        &cpu_mask, MAX_THREADS, &seconds, &period_us, 100, 1000000, "bad period (100..1000000 us)"};
    bool have_cpus = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-c") && strcmp(a, "-t") && strcmp(a, "-p")) {
            usage("unknown option");
        }
        if (!v) {
            usage("option needs a value");
        }
        i++;
        const char *bad = zt_meter_option(&opts, a[1], v);
        if (bad) {
            usage(bad);
        }
        have_cpus |= a[1] == 'c';
    }
    if (!have_cpus || seconds <= 0) {
        usage("-c LIST and -t SECONDS are required");
    }
    nperiods = (uint64_t)(seconds * 1e6) / period_us;
    if (nperiods == 0) {
        usage("-t is shorter than one period");
    }
}

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* The IRQ side of one wake-up, from the counter page: `irqs` timer interrupts came while the
 * thread slept; the last one's deadline must be the expected expiry `due` (ns). */
static void note_irq(struct waker *w, uint64_t irqs, uint64_t due)
{
    const volatile struct zt_cpu_counters *c = w->counters;
    uint64_t deadline_ns = zt_counter_to_ns(c->timer_irq_deadline);
    uint64_t cycle_ns = 1000000000ull / zt_counter_freq() + 1;
    w->timer_irqs += irqs;
    if (irqs != 1 || deadline_ns + cycle_ns <= due || deadline_ns >= due + cycle_ns) {
        w->unmatched++;
        return;
    }
    latstat_add(&w->irq, (int64_t)(zt_counter_to_ns(c->timer_irq_at) - due));
}

/* The measurement: nperiods absolute sleeps, two system calls each, nothing else. */
static void run_periods(struct waker *w)
{
    uint64_t period_ns = period_us * 1000ull, due = w->first_ns + period_ns;
    for (uint64_t k = 0; k < nperiods; k++) {
        uint64_t irqs = w->counters ? w->counters->irq_timer : 0;
        struct timespec want = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)}, now;
        long r = zt_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &want, NULL);
        long g = zt_clock_gettime(CLOCK_MONOTONIC, &now);
        if (r || g) {
            w->error = r ? r : g;
            w->where = r ? "clock_nanosleep" : "clock_gettime";
            return;
        }
        uint64_t t = ts_ns(&now);
        w->wakeups++;
        latstat_add(&w->task, (int64_t)(t - due));
        if (w->counters) {
            note_irq(w, w->counters->irq_timer - irqs, due);
        }
        due += period_ns;
        while (due <= t) {
            due += period_ns;
            w->overruns++;
        }
    }
}

static void counts(const struct waker *w, uint64_t *exc, uint64_t *svc, uint64_t *irq)
{
    const volatile struct zt_cpu_counters *c = w->counters;
    if (!c) {
        *exc = *svc = *irq = 0;
        return;
    }
    *exc = zt_counters_exceptions(c);
    *svc = c->syscalls;
    *irq = c->exc_irq;
}

static long waker_main(void *arg)
{
    struct waker *w = arg;
    struct timespec ts;
    int state;
    while ((state = go) == 0) {
        /* wait on this CPU until every thread is in place */
    }
    if (state < 0) {
        return 0;
    }
    long r = zt_clock_gettime(CLOCK_MONOTONIC, &ts);
    if (r) {
        w->error = r;
        w->where = "clock_gettime";
        return 0;
    }
    w->first_ns = ts_ns(&ts);
    counts(w, &w->before_exc, &w->before_svc, &w->before_irq);
    zt_window_open();
    run_periods(w);
    counts(w, &w->after_exc, &w->after_svc, &w->after_irq);
    zt_window_close();
    return 0;
}

static void print_series(int cpu, const char *name, const struct latstat *s)
{
    printf("timerlat: cpu %d %s n %llu min_ns %llu avg_ns %llu max_ns %llu", cpu, name,
           (unsigned long long)s->n, (unsigned long long)s->min_ns,
           (unsigned long long)latstat_avg_ns(s), (unsigned long long)s->max_ns);
    for (int k = 0; k < LATSTAT_NPCT; k++) {
        printf(" %s_us %u", latstat_pct_names[k],
               latstat_percentile(s->us, s->n, latstat_pct[k][0], latstat_pct[k][1]));
    }
    printf(" early %llu\n", (unsigned long long)s->early);
}

static void print_waker(const struct waker *w)
{
    if (!w->counters) {
        printf("timerlat: cpu %d wakeups %llu overruns %llu timer_irqs - unmatched -\n", w->cpu,
               (unsigned long long)w->wakeups, (unsigned long long)w->overruns);
        printf("timerlat: cpu %d irq unavailable (Linux %s: no counter page; Linux's IRQ-side "
               "figure is its timerlat tracer's)\n",
               w->cpu, zt_kernel_release());
        print_series(w->cpu, "task", &w->task);
        return;
    }
    printf("timerlat: cpu %d wakeups %llu overruns %llu timer_irqs %llu unmatched %llu\n", w->cpu,
           (unsigned long long)w->wakeups, (unsigned long long)w->overruns,
           (unsigned long long)w->timer_irqs, (unsigned long long)w->unmatched);
    print_series(w->cpu, "irq", &w->irq);
    print_series(w->cpu, "task", &w->task);
    /* the opening svc is inside the window and counted in `before..after`: left out */
    printf("timerlat: cpu %d window exceptions %llu syscalls %llu irqs %llu\n", w->cpu,
           (unsigned long long)(w->after_exc - w->before_exc - 1),
           (unsigned long long)(w->after_svc - w->before_svc - 1),
           (unsigned long long)(w->after_irq - w->before_irq));
}

static bool start_wakers(void)
{
    for (int cpu = 0; cpu < ZT_MAX_CPUS && nwakers < MAX_THREADS; cpu++) {
        if (!zt_cpuset_has(&cpu_mask, cpu)) {
            continue;
        }
        struct waker *w = &wakers[nwakers];
        w->cpu = cpu;
        w->counters = zt_counters_page(cpu);
        w->thread = zt_thread_create(waker_main, w, cpu);
        if (!w->thread) {
            printf("timerlat: cannot start a thread on cpu %d: %s\n", cpu, zt_errno_name(errno));
            return false;
        }
        nwakers++;
    }
    return true;
}

int main(int argc, char **argv)
{
    int status;
    parse_args(argc, argv);
    printf("timerlat: %d CPUs, %.3f s, period %lu us, %llu wake-ups per CPU\n",
           zt_cpuset_count(&cpu_mask), seconds, period_us, (unsigned long long)nperiods);
    fflush(stdout);
    bool started = start_wakers();
    __atomic_store_n(&go, started ? 1 : -1, __ATOMIC_RELEASE);
    status = started ? 0 : 1;
    for (int i = 0; i < nwakers; i++) {
        zt_thread_join(wakers[i].thread);
    }
    for (int i = 0; started && i < nwakers; i++) {
        const struct waker *w = &wakers[i];
        if (w->error) {
            printf("timerlat: cpu %d: %s failed: -%s\n", w->cpu, w->where,
                   zt_errno_name((int)-w->error));
            status = 1;
        } else {
            print_waker(w);
        }
    }
    return status;
}
