/* SPDX-License-Identifier: MIT */
/*
 * osnoise — the noise meter: how much of each CPU a busy user thread really gets.
 *
 *   osnoise -c LIST -t SECONDS [-T US] [-i] [-s] [-H] [-P] [-J]
 *   osnoise -w -c LIST -t SECONDS [-T US] [-P]
 *
 * One sampling thread per CPU of LIST (Linux cpulist form, "2-3,5"), pinned there, reads
 * CNTVCT_EL0 in a loop for SECONDS of guest time.  Two consecutive reads further apart than
 * the threshold (-T, default 5 us, the default of Linux's osnoise tracer) are one noise
 * sample.  -i isolates each sampling thread (prctl PR_SET_TASK_ISOLATION; the CPUs must be
 * dataplane CPUs), -s makes that strict (and implies -i), -H adds a histogram of every gap.
 *
 * Output: the table of `rtla osnoise top` (docs/osnoise.md explains each column), one row per
 * CPU, times in microseconds; then two lines per CPU with what the table cannot show:
 *   osnoise: cpu 2 hw_noise_us 310 os_noise_us 0 samples 51234567 kernel_entries 0 ctx_switches 0
 *   osnoise: cpu 2 window exceptions 0 syscalls 0 irqs 0
 * The first splits Noise by kind and says how far the CPU's counters of kernel entries from
 * user space and of context switches moved while it was sampled.  The second is what the
 * kernel counted on that CPU inside the measurement window (below), marker calls left out:
 * the numbers tools/exclog must find in QEMU's log between the markers.
 * With -H, per CPU and log2 bucket, the number of gaps with lo_us <= gap < hi_us:
 *   osnoise-hist: threshold_us 5
 *   osnoise-hist: cpu 2 lo_us 0 hi_us 1 count 51234000
 * tools/plot-noise turns those lines into a PNG.  With -P, sysjitter's columns per CPU: the
 * noise samples per second and the percentiles of their length up to 99.999 %, in whole
 * microseconds (the 1 us bucket the sample at that rank fell in; 512: longer):
 *   osnoise-pct: cpu 2 interruptions 12 per_s 6.000 p50_us 7 p90_us 9 ... p99.999_us 40 max_us 40
 * With -J, oslat's buckets: every gap (not only noise) by whole microsecond, one JSON object
 * per CPU on one line (counts[0]: gaps under 1 us; gaps of 512 us or more in "overflow"):
 *   osnoise-json: {"cpu": 2, "threshold_us": 5, "samples": N, "bucket_us": 1, "counts": [...],
 *                  "overflow_us": 512, "overflow": 0, "max_us": 40}
 * With -w (rtla hwnoise), the sampling is done by the kernel with IRQs masked (zt_hwnoise,
 * kernel/sys/hwnoise.c) in passes of at most 100 ms, so no interrupt can be among the gaps: every
 * noise sample is HW noise (the hardware, or the host under QEMU).  Only dataplane CPUs
 * allow it (-EPERM elsewhere), and Linux has no such call (-ENOSYS; its own hwnoise is the
 * osnoise tracer's).  Runtime is the sum of the passes (the few instructions between two
 * passes, IRQs open, are not sampled); the window then holds exactly one system call per
 * pass; -i, -s, -H and -J do not apply.
 * The same file runs under Linux (make compare): there is no counter page, so no gap can be
 * classified; the HW, IRQ and Thread columns say "-" and -i fails (Linux has no task
 * isolation), everything else is measured the same way.  Exit status: 0, 1 if a sampling thread
 * could not start or isolate, 2 for bad arguments.
 *
 * How a gap is classified, without a system call.  The kernel keeps each CPU's counters in a
 * page every process has mapped read-only (ZT_COUNTERS_VA, uapi/zt_syscall.h).  Anything that
 * takes the CPU away from the sampling thread starts with an exception from EL0 that is not
 * a system call of its own (the loop makes none), so `user_other` moves; the loop loads that
 * one word next to each counter read and looks at the rest of the page only when it moved.  A noise
 * sample during which the CPU entered the kernel is OS noise; one without any kernel entry is "HW"
 * noise: the CPU was taken by something the kernel never saw (under QEMU/TCG, the host descheduling
 * the vCPU thread). The counts follow Linux's osnoise: IRQ counts every IRQ exception taken while
 * sampling, Thread every other task that ran meanwhile, whether or not the gap passed the
 * threshold; HW counts the noise samples with no kernel entry.  NMI and Softirq are always 0 here:
 * aarch64 has no NMI in this kernel and deferred work runs on housekeeping CPUs only.
 *
 * The loop reads time, then the counter word.  An exception exactly between the two shows
 * in this iteration's word but lengthens the next gap, so a short gap whose word moved
 * hands its "kernel was entered" mark to the next gap (`carried`).
 *
 * Measurement windows: each sampling thread opens a window in QEMU's exception log just
 * before sampling and closes it right after (svc #0x5a5a / #0xa5a5, tools/exclog): with -i
 * the isolating prctl itself and the one ending isolation, as user/isol.c does; otherwise a
 * getpid.  Nothing inside a window is a system call or fault of the sampling thread; all
 * printing is done by the main thread (on housekeeping) after the samplers ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latstat.h"
#include "zt.h"

#define MAX_SAMPLERS         64
#define HIST_BUCKETS         32 /* bucket b >= 1: 2^(b-1) <= gap_us < 2^b; bucket 0: < 1 us */
#define DEFAULT_THRESHOLD_US 5
#define PERIOD_US            1000000         /* rtla's default osnoise period and runtime: 1 s */
#define US_BUCKETS           LATSTAT_BUCKETS /* per-us buckets 0..511 us; longer: overflow */
#define HW_PASSES_PER_PERIOD (PERIOD_US / ZT_HWNOISE_MAX_US)

_Static_assert(US_BUCKETS == ZT_HWNOISE_BUCKETS, "-w folds the kernel's buckets into ours");

/* A CPU's kernel counters at one moment (the fields osnoise reports). */
struct snapshot {
    uint64_t from_user; /* user_other: entries from EL0 but system calls */
    uint64_t exceptions, exc_irq, ctx_switches, syscalls;
};

struct sampler {
    int cpu;
    zt_thread_t *thread;
    long error;           /* the isolating prctl's or zt_hwnoise's -errno, or 0 */
    const char *error_in; /* which of the two */
    const volatile struct zt_cpu_counters *counters;
    /* loop state */
    uint64_t start, end, next_boundary;
    bool carried;           /* the previous (short) gap's counter word moved: see the top */
    struct snapshot snap;   /* at the last time from_user moved (or the start) */
    struct snapshot first;  /* when sampling began */
    struct snapshot before; /* just before the call opening the window */
    struct snapshot after;  /* just before the call closing it */
    /* results, in counter cycles and counts */
    uint64_t runtime, noise, hw_noise, period_noise, max_period_noise, max_single;
    uint64_t samples, hw_count, irq_count, thread_count, max_gap;
    uint32_t periods;
    uint64_t hist[HIST_BUCKETS];
    uint64_t us_hist[US_BUCKETS + 1];  /* every gap of 1 us or more, by whole us; [0]: none */
    uint64_t noise_us[US_BUCKETS + 1]; /* the noise samples (gaps over the threshold) */
    struct zt_hwnoise hw;              /* -w: the last pass */
} __attribute__((aligned(64)));

static struct sampler samplers[MAX_SAMPLERS];
static int nsamplers;
static volatile int go; /* 1: start sampling, -1: give up (a sampler could not start) */

/* Options, and the same in counter cycles. */
static struct zt_cpuset cpu_mask;
static double seconds;
static unsigned long threshold_us = DEFAULT_THRESHOLD_US;
static int isolate, strict, want_hist, want_json, want_pct, hw_mode;
/* Linux (make compare): no counter page, so no kernel entry is ever seen: every noise sample
 * stays unclassified (the HW, IRQ and Thread columns say "-"). */
static const struct zt_cpu_counters no_counters;
static bool classified = true;
static uint64_t threshold_cycles, run_cycles, period_cycles;
static uint64_t bucket_end_cycles[HIST_BUCKETS]; /* first cycle count of bucket b + 1 */

static void usage(const char *why)
{
    fprintf(stderr, "osnoise: %s\n", why);
    fprintf(stderr, "usage: osnoise -c LIST -t SECONDS [-T US] [-i] [-s] [-H] [-P] [-J]\n"
                    "       osnoise -w -c LIST -t SECONDS [-T US] [-P]\n"
                    "  -c LIST     CPUs to sample, e.g. 2-3,5\n"
                    "  -t SECONDS  how long, in guest time (at most 3600)\n"
                    "  -T US       noise threshold in microseconds (default 5)\n"
                    "  -i          isolate each sampling thread (dataplane CPUs only)\n"
                    "  -s          strict isolation (implies -i)\n"
                    "  -H          print a histogram of gap lengths\n"
                    "  -P          percentiles of the noise samples, interruptions per second\n"
                    "  -J          every gap in 1 us buckets, as one JSON line per CPU\n"
                    "  -w          hardware noise: the kernel samples with IRQs masked\n"
                    "              (dataplane CPUs of zerotick only, as rtla hwnoise)\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    static const struct zt_meter_opts opts = {&cpu_mask,
                                              MAX_SAMPLERS,
                                              &seconds,
                                              &threshold_us,
                                              1,
                                              1000000,
                                              "bad threshold (1..1000000 us)"};
    bool have_cpus = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-i") || !strcmp(a, "-s") || !strcmp(a, "-H")) {
            *(a[1] == 'i' ? &isolate : a[1] == 's' ? &strict : &want_hist) = 1;
            continue;
        }
        if (!strcmp(a, "-J") || !strcmp(a, "-P") || !strcmp(a, "-w")) {
            *(a[1] == 'J' ? &want_json : a[1] == 'P' ? &want_pct : &hw_mode) = 1;
            continue;
        }
        if (!strcmp(a, "-c") || !strcmp(a, "-t") || !strcmp(a, "-T")) {
            if (!v) {
                usage("option needs a value");
            }
            i++;
        } else {
            usage("unknown option");
        }
        const char *bad = zt_meter_option(&opts, a[1], v);
        if (bad) {
            usage(bad);
        }
        have_cpus |= a[1] == 'c';
    }
    if (!have_cpus || seconds <= 0) {
        usage("-c LIST and -t SECONDS are required");
    }
    isolate |= strict;
    if (hw_mode && (isolate || want_hist || want_json)) {
        usage("-w samples in the kernel: -i, -s, -H and -J do not apply");
    }
}

static uint64_t cycles_to_us(uint64_t cycles)
{
    return zt_counter_to_ns(cycles) / 1000;
}

/* The smallest cycle count that is at least `us` microseconds. */
static uint64_t us_to_cycles_ceil(uint64_t us)
{
    uint64_t freq = zt_counter_freq();
    return (us * freq + 999999) / 1000000;
}

static void setup_cycles(void)
{
    uint64_t freq = zt_counter_freq();
    /* gap_us > T  <=>  gap_cycles * 1e6 > T * freq  <=>  gap_cycles > floor(T * freq / 1e6) */
    threshold_cycles = threshold_us * freq / 1000000;
    run_cycles = (uint64_t)(seconds * (double)freq);
    period_cycles = us_to_cycles_ceil(PERIOD_US);
    for (int b = 0; b < HIST_BUCKETS; b++) {
        bucket_end_cycles[b] = us_to_cycles_ceil(1ull << b);
    }
}

static void snapshot_read(const volatile struct zt_cpu_counters *c, struct snapshot *s)
{
    s->from_user = c->user_other;
    s->exceptions = zt_counters_exceptions(c);
    s->exc_irq = c->exc_irq;
    s->ctx_switches = c->ctx_switches;
    s->syscalls = c->syscalls;
}

/* The per-microsecond bucket of a gap: whole microseconds, US_BUCKETS for anything longer. */
static unsigned us_bucket(uint64_t gap)
{
    uint64_t us = cycles_to_us(gap);
    return us < US_BUCKETS ? (unsigned)us : US_BUCKETS;
}

/* from_user moved: count what happened since the last snapshot. */
static __attribute__((noinline)) void count_entries(struct sampler *s)
{
    struct snapshot now;
    snapshot_read(s->counters, &now);
    uint64_t switches = now.ctx_switches - s->snap.ctx_switches;
    s->irq_count += now.exc_irq - s->snap.exc_irq;
    /* Every switch away from the sampler but the one back to it starts another task:
     * sampler -> A -> B -> sampler is 3 switches, 2 tasks. */
    if (switches) {
        s->thread_count += switches - 1;
    }
    s->snap = now;
}

/* The slow path: a gap over the threshold, a kernel entry, or one carried from before. */
static __attribute__((noinline)) void on_gap(struct sampler *s, uint64_t gap, uint64_t from_user)
{
    bool entered = from_user != s->snap.from_user;
    if (entered) {
        count_entries(s);
    }
    if (gap <= threshold_cycles) {
        s->carried = entered;
        return;
    }
    s->noise += gap;
    s->period_noise += gap;
    s->noise_us[us_bucket(gap)]++;
    if (gap > s->max_single) {
        s->max_single = gap;
    }
    if (!entered && !s->carried) {
        s->hw_count++;
        s->hw_noise += gap;
    }
    s->carried = false;
}

static __attribute__((noinline)) void hist_add(struct sampler *s, uint64_t gap)
{
    int b = 1;
    while (b < HIST_BUCKETS - 1 && gap >= bucket_end_cycles[b]) {
        b++;
    }
    s->hist[b]++;
    s->us_hist[us_bucket(gap)]++;
    if (gap > s->max_gap) {
        s->max_gap = gap;
    }
}

/* The first read at or after the next period boundary: close the period (the gap that
 * crossed it counts in it).  Returns false at the end of the run. */
static __attribute__((noinline)) bool cross_boundary(struct sampler *s, uint64_t t)
{
    if (s->period_noise > s->max_period_noise) {
        s->max_period_noise = s->period_noise;
    }
    s->period_noise = 0;
    while (s->next_boundary <= t) {
        s->periods++;
        if (s->next_boundary == s->end) {
            return false;
        }
        s->next_boundary += period_cycles;
        if (s->next_boundary > s->end) {
            s->next_boundary = s->end; /* -t not a whole number of periods: a short last one */
        }
    }
    return true;
}

/* The sampling loop: no system call, no fault, nothing but loads, compares and counting. */
static void sample(struct sampler *s)
{
    const volatile uint64_t *from_user = &s->counters->user_other;
    uint64_t bucket0_end = bucket_end_cycles[0];
    snapshot_read(s->counters, &s->snap);
    s->first = s->snap;
    uint64_t prev = zt_counter();
    s->start = prev;
    s->end = prev + run_cycles;
    s->next_boundary = prev + (period_cycles < run_cycles ? period_cycles : run_cycles);
    for (;;) {
        uint64_t t = zt_counter();
        uint64_t f = *from_user;
        uint64_t gap = t - prev;
        prev = t;
        s->samples++;
        if (__builtin_expect(gap < bucket0_end, 1)) {
            s->hist[0]++;
        } else {
            hist_add(s, gap);
        }
        if (__builtin_expect(gap > threshold_cycles || f != s->snap.from_user || s->carried, 0)) {
            on_gap(s, gap, f);
        }
        if (__builtin_expect(t >= s->next_boundary, 0) && !cross_boundary(s, t)) {
            break;
        }
    }
    s->runtime = prev - s->start;
}

/* -w: fold one zt_hwnoise pass (pass number `pass`) into the sampler's totals; a period is
 * HW_PASSES_PER_PERIOD passes. */
static void hw_fold(struct sampler *s, unsigned pass)
{
    const struct zt_hwnoise *h = &s->hw;
    if (pass % HW_PASSES_PER_PERIOD == 0) {
        s->periods++;
        s->period_noise = 0;
    }
    s->runtime += h->end - h->start;
    s->samples += h->samples;
    s->noise += h->noise;
    s->hw_noise += h->noise;
    s->period_noise += h->noise;
    s->hw_count += h->count;
    if (s->period_noise > s->max_period_noise) {
        s->max_period_noise = s->period_noise;
    }
    if (h->count && h->max_gap > s->max_single) {
        s->max_single = h->max_gap; /* the longest gap is a noise sample when there is one */
    }
    for (unsigned b = 0; b <= US_BUCKETS; b++) {
        s->noise_us[b] += h->us[b];
    }
}

/* -w: passes of at most ZT_HWNOISE_MAX_US until -t is used up; one system call each. */
static void sample_hw(struct sampler *s)
{
    uint64_t left_us = (uint64_t)(seconds * 1e6 + 0.5);
    for (unsigned pass = 0; left_us > 0; pass++) {
        uint64_t us = left_us < ZT_HWNOISE_MAX_US ? left_us : ZT_HWNOISE_MAX_US;
        long r = zt_hwnoise(us, threshold_us, &s->hw);
        if (r) {
            s->error = r;
            s->error_in = "zt_hwnoise";
            return;
        }
        hw_fold(s, pass);
        left_us -= us;
    }
}

static unsigned long isolation_flags(void)
{
    return PR_TASK_ISOLATION_ENABLE | (strict ? PR_TASK_ISOLATION_STRICT : 0);
}

/* Open this CPU's window in QEMU's log; with -i that is the isolating prctl itself. */
static long window_open(void)
{
    if (isolate) {
        return zt_syscall6_mark_open(SYS_prctl, PR_SET_TASK_ISOLATION, (long)isolation_flags(), 0,
                                     0, 0, 0);
    }
    zt_window_open();
    return 0;
}

static void window_close(void)
{
    if (isolate) {
        zt_syscall6_mark_close(SYS_prctl, PR_SET_TASK_ISOLATION, 0, 0, 0, 0, 0);
    } else {
        zt_window_close();
    }
}

static long sampler_main(void *arg)
{
    struct sampler *s = arg;
    int state;
    while ((state = go) == 0) {
        /* wait on this CPU (no system call) until every sampler is in place */
    }
    if (state < 0) {
        return 0;
    }
    /* The window's counts: from before the opening call (the window holds everything after
     * its svc, the call's own work included) to before the closing call (whose work is
     * outside).  The opening svc itself is subtracted when printing. */
    snapshot_read(s->counters, &s->before);
    s->error = window_open();
    s->error_in = "prctl(PR_SET_TASK_ISOLATION)";
    if (s->error == 0) {
        if (hw_mode) {
            snapshot_read(s->counters, &s->first);
            sample_hw(s);
            snapshot_read(s->counters, &s->snap); /* kernel_entries: one per pass */
        } else {
            sample(s);
        }
    }
    snapshot_read(s->counters, &s->after);
    window_close();
    return 0;
}

/* "  0 00:00:05", as rtla prints its duration. */
static void format_duration(char *buf, size_t len, uint64_t cycles)
{
    uint64_t sec = zt_counter_to_ns(cycles) / 1000000000ull;
    snprintf(buf, len, "%3d %02d:%02d:%02d", (int)(sec / 86400), (int)(sec / 3600 % 24),
             (int)(sec / 60 % 60), (int)(sec % 60));
}

/* rtla osnoise top's header and column layout, so its readers need nothing new. */
static void print_table(void)
{
    uint64_t longest = 0;
    char duration[32];
    for (int i = 0; i < nsamplers; i++) {
        if (samplers[i].runtime > longest) {
            longest = samplers[i].runtime;
        }
    }
    format_duration(duration, sizeof(duration), longest);
    printf("%42s%s\n", "", "Operating System Noise");
    printf("duration: %9s | time is in us\n", duration);
    printf("CPU Period       Runtime        Noise  %% CPU Aval   Max Noise   Max Single"
           "          HW          NMI          IRQ      Softirq       Thread\n");
    for (int i = 0; i < nsamplers; i++) {
        const struct sampler *s = &samplers[i];
        uint64_t runtime = cycles_to_us(s->runtime), noise = cycles_to_us(s->noise);
        if (s->error || runtime == 0) {
            continue;
        }
        /* available share in units of 1e-5 percent, rounded down */
        uint64_t avail = (runtime - (noise < runtime ? noise : runtime)) * 10000000ull / runtime;
        printf("%3d #%-6u %12llu %12llu   %3u.%05u%12llu %12llu", s->cpu, s->periods,
               (unsigned long long)runtime, (unsigned long long)noise, (unsigned)(avail / 100000),
               (unsigned)(avail % 100000), (unsigned long long)cycles_to_us(s->max_period_noise),
               (unsigned long long)cycles_to_us(s->max_single));
        if (classified) {
            printf("%12llu %12u %12llu %12u %12llu\n", (unsigned long long)s->hw_count, 0u,
                   (unsigned long long)s->irq_count, 0u, (unsigned long long)s->thread_count);
        } else {
            printf("%12s %12s %12s %12s %12s\n", "-", "-", "-", "-", "-");
        }
    }
}

static unsigned long long diff(uint64_t later, uint64_t earlier)
{
    return (unsigned long long)(later - earlier);
}

/* What the table cannot show: noise time by kind, and the kernel's own counts. */
static void print_details(void)
{
    for (int i = 0; i < nsamplers; i++) {
        const struct sampler *s = &samplers[i];
        if (s->error) {
            continue;
        }
        if (!classified) {
            printf("osnoise: cpu %d noise not classified (no counter page: %s %s) samples %llu\n",
                   s->cpu, zt_on_linux() ? "Linux" : "?", zt_kernel_release(),
                   (unsigned long long)s->samples);
            continue;
        }
        printf("osnoise: cpu %d hw_noise_us %llu os_noise_us %llu samples %llu kernel_entries %llu "
               "ctx_switches %llu\n",
               s->cpu, (unsigned long long)cycles_to_us(s->hw_noise),
               (unsigned long long)cycles_to_us(s->noise - s->hw_noise),
               (unsigned long long)s->samples,
               diff(s->snap.from_user, s->first.from_user) +
                   diff(s->snap.syscalls, s->first.syscalls),
               diff(s->snap.ctx_switches, s->first.ctx_switches));
        printf("osnoise: cpu %d window exceptions %llu syscalls %llu irqs %llu\n", s->cpu,
               diff(s->after.exceptions, s->before.exceptions) - 1,
               diff(s->after.syscalls, s->before.syscalls) - 1,
               diff(s->after.exc_irq, s->before.exc_irq));
    }
}

static void print_hist(void)
{
    printf("osnoise-hist: threshold_us %lu\n", threshold_us);
    for (int i = 0; i < nsamplers; i++) {
        const struct sampler *s = &samplers[i];
        int last = HIST_BUCKETS - 1;
        if (s->error) {
            continue;
        }
        while (last > 0 && s->hist[last] == 0) {
            last--;
        }
        for (int b = 0; b <= last; b++) {
            printf("osnoise-hist: cpu %d lo_us %llu hi_us %llu count %llu\n", s->cpu,
                   b ? 1ull << (b - 1) : 0ull, 1ull << b, (unsigned long long)s->hist[b]);
        }
    }
}

/* sysjitter's columns: interruptions (noise samples) per second and the percentiles of
 * their length, in whole microseconds (the bucket: 7 means 7 <= gap < 8 us; 512 longer). */
static void print_pct(void)
{
    for (int i = 0; i < nsamplers; i++) {
        const struct sampler *s = &samplers[i];
        uint64_t n = 0;
        if (s->error || s->runtime == 0) {
            continue;
        }
        for (unsigned b = 0; b <= US_BUCKETS; b++) {
            n += s->noise_us[b];
        }
        uint64_t per_s_milli = n * 1000ull * zt_counter_freq() / s->runtime;
        printf("osnoise-pct: cpu %d interruptions %llu per_s %llu.%03llu", s->cpu,
               (unsigned long long)n, (unsigned long long)(per_s_milli / 1000),
               (unsigned long long)(per_s_milli % 1000));
        for (int k = 0; k < LATSTAT_NPCT; k++) {
            printf(" %s_us %u", latstat_pct_names[k],
                   latstat_percentile(s->noise_us, n, latstat_pct[k][0], latstat_pct[k][1]));
        }
        printf(" max_us %llu\n", (unsigned long long)cycles_to_us(s->max_single));
    }
}

/* oslat's buckets: every gap by whole microsecond, one JSON object per CPU and line. */
static void print_json(void)
{
    for (int i = 0; i < nsamplers; i++) {
        const struct sampler *s = &samplers[i];
        int last = US_BUCKETS - 1;
        if (s->error) {
            continue;
        }
        while (last > 0 && s->us_hist[last] == 0) {
            last--;
        }
        printf("osnoise-json: {\"cpu\": %d, \"threshold_us\": %lu, \"samples\": %llu, "
               "\"bucket_us\": 1, \"counts\": [%llu",
               s->cpu, threshold_us, (unsigned long long)s->samples,
               (unsigned long long)s->hist[0]);
        for (int b = 1; b <= last; b++) {
            printf(", %llu", (unsigned long long)s->us_hist[b]);
        }
        printf("], \"overflow_us\": %d, \"overflow\": %llu, \"max_us\": %llu}\n", US_BUCKETS,
               (unsigned long long)s->us_hist[US_BUCKETS],
               (unsigned long long)cycles_to_us(s->max_gap));
    }
}

/* Why a sampler did not sample, in words a reader can act on. */
static void report_error(const struct sampler *s)
{
    int e = (int)-s->error;
    const char *why = "";
    if (hw_mode && e == ENOSYS) {
        why = zt_on_linux() ? " (Linux has no such call: its hardware-noise mode is the osnoise "
                              "tracer's, rtla hwnoise)"
                            : " (this kernel has no zt_hwnoise)";
    } else if (hw_mode && e == EPERM) {
        why = " (IRQs are masked only on a dataplane CPU)";
    }
    printf("osnoise: cpu %d: %s failed: -%s%s\n", s->cpu, s->error_in, zt_errno_name(e), why);
}

/* Start one pinned sampler per CPU; on failure tell the started ones to give up. */
static bool start_samplers(void)
{
    for (int cpu = 0; cpu < ZT_MAX_CPUS && nsamplers < MAX_SAMPLERS; cpu++) {
        if (!zt_cpuset_has(&cpu_mask, cpu)) {
            continue;
        }
        struct sampler *s = &samplers[nsamplers];
        s->cpu = cpu;
        s->counters = zt_counters_page(cpu);
        if (!s->counters) {
            s->counters = &no_counters;
            classified = false;
        }
        s->thread = zt_thread_create(sampler_main, s, cpu);
        if (!s->thread) {
            printf("osnoise: cannot start a sampling thread on cpu %d: %s\n", cpu,
                   zt_errno_name(errno));
            return false;
        }
        nsamplers++;
    }
    return true;
}

int main(int argc, char **argv)
{
    int status = 0;
    bool started;
    parse_args(argc, argv);
    setup_cycles();
    printf("osnoise: %d CPUs, %.3f s, threshold %lu us, %s\n", zt_cpuset_count(&cpu_mask), seconds,
           threshold_us,
           hw_mode   ? "hardware noise (IRQs masked, in the kernel)"
           : strict  ? "strict isolation"
           : isolate ? "isolated"
                     : "not isolated");
    fflush(stdout);
    started = start_samplers();
    __atomic_store_n(&go, started ? 1 : -1, __ATOMIC_RELEASE);
    status = started ? 0 : 1;
    for (int i = 0; i < nsamplers; i++) {
        zt_thread_join(samplers[i].thread);
        if (samplers[i].error) {
            report_error(&samplers[i]);
            status = 1;
        }
    }
    if (started) {
        print_table();
        print_details();
        if (want_hist) {
            print_hist();
        }
        if (want_pct) {
            print_pct();
        }
        if (want_json) {
            print_json();
        }
    }
    return status;
}
