/* SPDX-License-Identifier: MIT */
/*
 * isolstat — the isolation audit: for each dataplane CPU (or the CPUs given with -c), what
 * could still interrupt it, read from kernel state without disturbing it.
 *
 *   isolstat [-c LIST]...     LIST: a CPU or a Linux cpulist ("3", "1-511", "122-123")
 *
 * Expected, and shown as such: SGIs (the IPIs a CPU's own tasks may need) and the local
 * timer's PPI (armed only for the task's own timers or contention).  Everything else is a
 * finding, marked with "!": device interrupts (SPIs) routed to the CPU, other PPIs enabled,
 * the local timer armed, timers queued (with who armed them), cross-CPU requests pending,
 * other runnable tasks, free pages parked in its per-CPU cache.  The last line per CPU is
 * "isolstat: cpu N clean" or "isolstat: cpu N: K findings"; the exit status is the number of
 * CPUs with findings (capped at 100).  An empty audit is the guarantee.  A housekeeping CPU
 * named with -c is not audited: what could reach it is its work, so its lines are marked "-"
 * and its last line says "housekeeping, not audited"; it never counts as a finding.
 *
 * On a large machine the audit stays readable: when more than ISOLSTAT_FULL_UPTO CPUs are
 * audited, a clean CPU without an isolated task is one of a run ("isolstat: cpus 2-510
 * clean, no isolated task"), and only CPUs with an isolated task or a finding get their
 * paragraph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void print_header(const struct zt_isol_audit *a)
{
    printf("cpu %u: %s", a->cpu, a->dataplane ? "dataplane" : "housekeeping");
    if (a->isolated) {
        printf(", isolated: pid %d tid %d (%s), %s, %s, for %.1f ms, %llu interruptions\n", a->pid,
               a->tid, a->name, a->strict ? "strict" : "not strict",
               a->in_user ? "in user space" : "in the kernel", ms(a->isolated_ns),
               (unsigned long long)a->interruptions);
    } else {
        printf(", no isolated task\n");
    }
    printf("  enabled: SGI mask 0x%04x (IPIs), local timer PPI %u %s\n", a->sgis_enabled,
           a->timer_intid, a->ppis_enabled & (1u << (a->timer_intid - 16)) ? "on" : "off");
}

/* What could interrupt the CPU, one line each, marked `mark` ('!' for a finding); how many. */
static int findings(const struct zt_isol_audit *a, char mark)
{
    int n = 0;
    uint32_t other_ppis = a->ppis_enabled & ~(1u << (a->timer_intid - 16));
    for (unsigned i = 0; i < 16; i++) {
        if (other_ppis & (1u << i)) {
            printf("  %c PPI %u enabled\n", mark, 16 + i), n++;
        }
    }
    for (unsigned i = 0; i < a->nspis; i++) {
        printf("  %c device interrupt SPI %u routed here\n", mark, a->spis[i]), n++;
    }
    if (a->timer_armed) {
        printf("  %c local timer armed: fires in %.3f ms\n", mark, ms(a->timer_programmed_ns)), n++;
    }
    for (unsigned i = 0; i < a->ntimers && i < ZT_AUDIT_MAX_TIMERS; i++) {
        printf("  %c timer due in %.3f ms, armed by tid %d at kernel address 0x%llx\n", mark,
               ms(a->timers[i].due_ns), a->timers[i].owner_tid,
               (unsigned long long)a->timers[i].armed_by);
        n++;
    }
    if (a->pending_calls) {
        printf("  %c cross-CPU requests pending (mask 0x%llx): run at its next kernel entry\n",
               mark, (unsigned long long)a->pending_calls);
        n++;
    }
    if (a->other_runnable) {
        printf("  %c %u other runnable task(s)\n", mark, a->other_runnable), n++;
    }
    if (a->cached_pages && a->isolated && a->in_user) {
        printf("  %c %u free pages parked in its per-CPU cache\n", mark, a->cached_pages), n++;
    }
    printf("  requests deferred instead of interrupting it, since boot: %llu\n",
           (unsigned long long)a->deferred_total);
    return n;
}

#define ISOLSTAT_FULL_UPTO 16

/* A run of clean CPUs without an isolated task, not printed yet (first < 0: none). */
static int run_first = -1, run_last = -1;

static void flush_run(void)
{
    if (run_first >= 0 && run_first == run_last) {
        printf("isolstat: cpu %d clean, no isolated task\n", run_first);
    } else if (run_first >= 0) {
        printf("isolstat: cpus %d-%d clean, no isolated task\n", run_first, run_last);
    }
    run_first = run_last = -1;
}

/* The audit of one CPU: its paragraph, or (brief) a place in a run of quiet clean CPUs.
 * Returns 1 if it has findings. */
static int audit(unsigned cpu, bool brief)
{
    struct zt_isol_audit a;
    long r = zt_isolstat(cpu, &a);
    if (r) {
        flush_run();
        printf("isolstat: cpu %u: %s\n", cpu, zt_errno_name((int)-r));
        return 1;
    }
    if (brief && !a.isolated && !a.timer_armed && !a.ntimers && !a.nspis && !a.pending_calls &&
        !a.other_runnable && !(a.ppis_enabled & ~(1u << (a.timer_intid - 16)))) {
        if (run_first >= 0 && run_last + 1 != (int)cpu) {
            flush_run();
        }
        run_first = run_first < 0 ? (int)cpu : run_first;
        run_last = (int)cpu;
        return 0; /* no finding: exactly what findings() would say */
    }
    flush_run();
    if (!a.dataplane) {
        /* Device interrupts, timers and other tasks are a housekeeping CPU's work: what is
         * there is shown (unless brief), marked "-", and nothing is counted. */
        if (!brief) {
            print_header(&a);
            findings(&a, '-');
        }
        printf("isolstat: cpu %u: housekeeping, not audited (its interrupts, timers and tasks "
               "are its work, not findings)\n",
               cpu);
        return 0;
    }
    print_header(&a);
    int n = findings(&a, '!');
    if (n) {
        printf("isolstat: cpu %u: %d finding%s\n", cpu, n, n == 1 ? "" : "s");
    } else {
        printf("isolstat: cpu %u clean\n", cpu);
    }
    return n != 0;
}

int main(int argc, char **argv)
{
    struct zt_cpuset want, one;
    bool any = false;
    int bad = 0;
    long n;
    zt_cpuset_zero(&want);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") != 0 || i + 1 >= argc || zt_cpulist_parse(argv[++i], &one) != 0) {
            fprintf(stderr, "usage: isolstat [-c LIST]...\n");
            return 100;
        }
        for (int w = 0; w < ZT_CPUSET_WORDS; w++) {
            want.bits[w] |= one.bits[w];
        }
        any = true;
    }
    struct zt_cpu_info *cpus = zt_cpus_all(&n);
    if (cpus == NULL) {
        printf("isolstat: zt_cpus failed: %s\n", zt_errno_name((int)-n));
        return 100;
    }
    for (long c = 0; !any && c < n; c++) {
        if (cpus[c].dataplane && cpus[c].online) {
            zt_cpuset_add(&want, (int)c);
        }
    }
    bool brief = zt_cpuset_count(&want) > ISOLSTAT_FULL_UPTO;
    for (int c = 0; c < ZT_MAX_CPUS; c++) {
        if (zt_cpuset_has(&want, c)) {
            bad += audit((unsigned)c, brief); /* a CPU the machine lacks: its error line */
        }
    }
    flush_run();
    if (zt_cpuset_count(&want) == 0) {
        printf("isolstat: no dataplane CPUs (boot with dataplane=LIST)\n");
    }
    free(cpus);
    return bad > 100 ? 100 : bad;
}
