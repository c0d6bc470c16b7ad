/* SPDX-License-Identifier: MIT */
/*
 * trace — dump the kernel's per-CPU trace rings as text a host tool can parse.
 *
 *   trace [-c LIST]... [-k]          LIST: a CPU or a Linux cpulist ("2-3", "0,511")
 *
 * Drains the ring of every online CPU (or of each CPU given with -c) with zt_trace and
 * prints one line per event.  The format is stable (tools/trace2json and tools/plot-trace
 * read it from a console log; docs/tracing.md describes it):
 *
 *   T freq <hz>                          the counter frequency (CNTFRQ_EL0)
 *   T cutoff <cycles>                     the counter when draining began: later events
 *                                        (the dump's own system calls) are not shown
 *   T <cpu> <cycles> <type> <a> <b>       one event, in ring order per CPU, all decimal
 *   T cpu <cpu> events <n>               how many events were shown for that CPU
 *   T end <total>                        the last line: the dump is complete
 *
 * <type> is one of exc-entry exc-exit irq syscall ipi-send ipi-recv timer-arm timer-disarm
 * switch isol-enter isol-exit isol-violation lost (or type<N> for a type this program does
 * not know); <a> and <b> are the raw fields of struct zt_trace_event (uapi/zt_syscall.h).
 *
 * Every ring is read into memory first and printed afterwards, so the console writes (which
 * enter the kernel and are traced on this CPU) never push unread events out of a ring.
 * Lines go out in batches of whole lines no longer than the kernel's 256-byte console
 * chunk, so another program writing meanwhile can only land between lines.
 *
 * -k keeps the events in the rings (no ZT_TRACE_CLEAR).  zt_trace has no cursor, so a
 * read that does not consume shows only the oldest 128 events of each CPU.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

#define MAX_CPUS  ZT_MAX_CPUS
#define CHUNK     128 /* zt_trace copies at most this many events per call */
#define OUT_BATCH 256 /* the kernel writes the console in chunks of this many bytes */

struct ring_copy {
    struct zt_trace_event *ev;
    size_t n, cap;
};

static struct ring_copy copies[MAX_CPUS];
static bool wanted[MAX_CPUS];
static int keep;

#define TYPE_NAME_(n, name, str) [n] = str,
static const char *const type_names[] = {ZT_TRACE_TYPES(TYPE_NAME_)}; /* uapi/zt_events.h */
#undef TYPE_NAME_

static void usage(void)
{
    fprintf(stderr, "usage: trace [-c LIST]... [-k]\n");
    exit(2);
}

/* ---- output: whole lines, batched ---- */

static char out[OUT_BATCH];
static size_t out_len;

static void out_flush(void)
{
    size_t done = 0;
    while (done < out_len) {
        long r = zt_write(1, out + done, out_len - done);
        if (r <= 0) {
            break; /* the console is gone: nothing better to do */
        }
        done += (size_t)r;
    }
    out_len = 0;
}

static void out_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void out_line(const char *fmt, ...)
{
    char line[OUT_BATCH];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
    if (out_len + len > sizeof(out)) {
        out_flush();
    }
    memcpy(out + out_len, line, len);
    out_len += len;
}

/* ---- arguments ---- */

/* Online CPUs into `online`; returns how many CPUs the machine has. */
static int read_cpus(bool *online)
{
    static struct zt_cpu_info info[MAX_CPUS];
    long n = zt_cpus(info, MAX_CPUS);
    if (n < 0) {
        fprintf(stderr, "trace: zt_cpus failed: %s\n", zt_errno_name((int)-n));
        exit(1);
    }
    int total = n < MAX_CPUS ? (int)n : MAX_CPUS;
    for (int c = 0; c < total; c++) {
        if (info[c].cpu < MAX_CPUS) {
            online[info[c].cpu] = info[c].online != 0;
        }
    }
    return total;
}

/* The CPUs of list s (each must exist and be online) into wanted[]. */
static void parse_cpus(const char *s, int ncpus, const bool *online)
{
    struct zt_cpuset set;
    if (zt_cpulist_parse(s, &set) != 0) {
        fprintf(stderr, "trace: bad CPU list '%s'\n", s);
        exit(2);
    }
    for (int c = 0; c < MAX_CPUS; c++) {
        if (!zt_cpuset_has(&set, c)) {
            continue;
        }
        if (c >= ncpus) {
            fprintf(stderr, "trace: no CPU %d: this machine has CPUs 0-%d\n", c, ncpus - 1);
            exit(2);
        }
        if (!online[c]) {
            fprintf(stderr, "trace: CPU %d is not online\n", c);
            exit(2);
        }
        wanted[c] = true;
    }
}

static void parse_args(int argc, char **argv, int ncpus, const bool *online)
{
    bool any = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k")) {
            keep = 1;
        } else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            parse_cpus(argv[++i], ncpus, online);
            any = true;
        } else {
            usage();
        }
    }
    for (int c = 0; !any && c < ncpus; c++) {
        wanted[c] = online[c];
    }
}

/* ---- draining ---- */

static void append(struct ring_copy *rc, const struct zt_trace_event *ev, size_t n)
{
    if (rc->n + n > rc->cap) {
        size_t cap = rc->cap ? rc->cap * 2 : 256;
        while (cap < rc->n + n) {
            cap *= 2;
        }
        struct zt_trace_event *p = realloc(rc->ev, cap * sizeof(*p));
        if (!p) {
            fprintf(stderr, "trace: out of memory after %zu events\n", rc->n);
            exit(1);
        }
        rc->ev = p;
        rc->cap = cap;
    }
    memcpy(rc->ev + rc->n, ev, n * sizeof(*ev));
    rc->n += n;
}

/*
 * Copy cpu's ring up to `cutoff`.  Reading with ZT_TRACE_CLEAR until a call returns 0 would
 * never end for the CPU this program runs on (each call traces its own entry), so it stops
 * at the first event recorded after draining began.
 */
static void drain(int cpu, uint64_t cutoff)
{
    static struct zt_trace_event chunk[CHUNK];
    for (;;) {
        long n = zt_syscall4(SYS_zt_trace, cpu, chunk, CHUNK, keep ? 0 : ZT_TRACE_CLEAR);
        if (n == -ENOSYS) {
            fprintf(stderr, "trace: the kernel has no zt_trace system call (ENOSYS)\n");
            exit(1);
        }
        if (n == -ENODATA) {
            fprintf(stderr, "trace: tracing is off: boot with trace=1\n");
            exit(1);
        }
        if (n < 0) {
            fprintf(stderr, "trace: zt_trace(cpu %d) failed: %s\n", cpu, zt_errno_name((int)-n));
            exit(1);
        }
        long upto = 0;
        while (upto < n && chunk[upto].ts < cutoff) {
            upto++;
        }
        append(&copies[cpu], chunk, (size_t)upto);
        if (n == 0 || upto < n || keep) {
            return;
        }
    }
}

static const char *type_name(uint32_t type, char *buf, size_t len)
{
    if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type]) {
        return type_names[type];
    }
    snprintf(buf, len, "type%u", type);
    return buf;
}

static void print_cpu(int cpu)
{
    const struct ring_copy *rc = &copies[cpu];
    char buf[16];
    for (size_t i = 0; i < rc->n; i++) {
        const struct zt_trace_event *e = &rc->ev[i];
        out_line("T %u %llu %s %llu %llu\n", e->cpu, (unsigned long long)e->ts,
                 type_name(e->type, buf, sizeof(buf)), (unsigned long long)e->a,
                 (unsigned long long)e->b);
    }
    out_line("T cpu %d events %zu\n", cpu, rc->n);
}

int main(int argc, char **argv)
{
    static bool online[MAX_CPUS];
    int ncpus = read_cpus(online);
    parse_args(argc, argv, ncpus, online);
    uint64_t cutoff = zt_counter();
    for (int c = 0; c < ncpus; c++) {
        if (wanted[c]) {
            drain(c, cutoff);
        }
    }
    size_t total = 0;
    out_line("T freq %llu\n", (unsigned long long)zt_counter_freq());
    out_line("T cutoff %llu\n", (unsigned long long)cutoff);
    for (int c = 0; c < ncpus; c++) {
        if (wanted[c]) {
            print_cpu(c);
            total += copies[c].n;
        }
    }
    out_line("T end %zu\n", total);
    out_flush();
    return 0;
}
