/* SPDX-License-Identifier: MIT */
/*
 * cpuview.c — what the shell's `cpus` shows, readable on 4 CPUs and on 512: one paragraph
 * per CPU (`cpus -c LIST`, or every CPU of a small machine), or a summary with one line per
 * run of consecutive CPUs in the same role and state (`cpus -s`, and the default above
 * ZT_CPUS_SUMMARY_ABOVE CPUs).  The numbers come from zt_cpus, read without disturbing any
 * CPU (a dataplane CPU is never interrupted to be shown).  `cpus -i` shows the checked
 * kernel's irqs-off records instead (zt_irqsoff_print, irqsoff.c), `cpus -i -r` starts new
 * ones.
 *
 * Single-threaded use: the results go to stdout; nothing is kept between calls.
 */
#include "zt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct zt_cpu_info *zt_cpus_all(long *n)
{
    long want = zt_cpus(NULL, 0);
    struct zt_cpu_info *all;

    if (want <= 0) {
        *n = want < 0 ? want : -ENODEV;
        return NULL;
    }
    all = calloc((size_t)want, sizeof(*all));
    if (all == NULL) {
        *n = -ENOMEM;
        return NULL;
    }
    *n = zt_cpus(all, (size_t)want);
    if (*n < 0) {
        free(all);
        return NULL;
    }
    *n = *n < want ? *n : want;
    return all;
}

void zt_cpus_print_one(const struct zt_cpu_info *c)
{
    printf("cpu%u: %s, %s, running ", c->cpu,
           !c->online     ? "no role"
           : c->dataplane ? "dataplane"
                          : "housekeeping",
           c->online ? "online" : "offline");
    if (c->cur_tid == 0) {
        printf("idle");
    } else if (c->cur_pid == 0) {
        printf("kernel thread tid %d (%.*s)", c->cur_tid, ZT_NAME_LEN, c->cur_name);
    } else {
        printf("pid %d tid %d (%.*s)", c->cur_pid, c->cur_tid, ZT_NAME_LEN, c->cur_name);
    }
    printf(", nr_running %u\n", c->nr_running);
    printf("  exceptions: sync %llu irq %llu fiq %llu serror %llu; syscalls %llu; "
           "last second %llu\n",
           (unsigned long long)c->exc_sync, (unsigned long long)c->exc_irq,
           (unsigned long long)c->exc_fiq, (unsigned long long)c->exc_serror,
           (unsigned long long)c->syscalls, (unsigned long long)c->exc_per_s);
    printf("  interrupts: timer %llu ipi %llu uart %llu other %llu\n",
           (unsigned long long)c->irq_timer, (unsigned long long)c->irq_ipi,
           (unsigned long long)c->irq_uart, (unsigned long long)c->irq_other);
    printf("  context switches %llu; timer arms %llu disarms %llu\n",
           (unsigned long long)c->ctx_switches, (unsigned long long)c->timer_arms,
           (unsigned long long)c->timer_disarms);
    printf("  time (ms): user %llu sys %llu idle %llu\n",
           (unsigned long long)(c->user_ns / 1000000), (unsigned long long)(c->sys_ns / 1000000),
           (unsigned long long)(c->idle_ns / 1000000));
}

static const char *role_of(const struct zt_cpu_info *c)
{
    return !c->online ? "offline" : c->dataplane ? "dataplane" : "housekeeping";
}

static bool same_run(const struct zt_cpu_info *a, const struct zt_cpu_info *b)
{
    return a->online == b->online && a->dataplane == b->dataplane &&
           (a->cur_tid == 0) == (b->cur_tid == 0);
}

static uint64_t exceptions_of(const struct zt_cpu_info *c)
{
    return c->exc_sync + c->exc_irq + c->exc_fiq + c->exc_serror;
}

/* One summary line for CPUs first..last (one run). */
static void print_run(const struct zt_cpu_info *first, const struct zt_cpu_info *last)
{
    uint64_t exc = 0, irq = 0, sys = 0, sw = 0, rate = 0;
    char who[16], what[48];

    for (const struct zt_cpu_info *c = first; c <= last; c++) {
        exc += exceptions_of(c);
        irq += c->exc_irq;
        sys += c->syscalls;
        sw += c->ctx_switches;
        rate = c->exc_per_s > rate ? c->exc_per_s : rate;
    }
    if (first == last) {
        snprintf(who, sizeof(who), "%u", first->cpu);
    } else {
        snprintf(who, sizeof(who), "%u-%u", first->cpu, last->cpu);
    }
    if (!first->online) {
        printf("  %-8s %-12s\n", who, role_of(first));
        return;
    }
    if (first->cur_tid == 0) {
        snprintf(what, sizeof(what), "idle");
    } else if (first == last) {
        snprintf(what, sizeof(what), "running %s%d (%.*s)", first->cur_pid ? "pid " : "tid ",
                 first->cur_pid ? first->cur_pid : first->cur_tid, ZT_NAME_LEN, first->cur_name);
    } else {
        snprintf(what, sizeof(what), "%ld busy", (long)(last - first) + 1);
    }
    printf("  %-8s %-12s %-26s %10llu %9llu %9llu %9llu %8llu\n", who, role_of(first), what,
           (unsigned long long)exc, (unsigned long long)irq, (unsigned long long)sys,
           (unsigned long long)sw, (unsigned long long)rate);
}

void zt_cpus_print_summary(const struct zt_cpu_info *cpus, long n)
{
    long online = 0, dataplane = 0;

    for (long i = 0; i < n; i++) {
        online += cpus[i].online;
        dataplane += cpus[i].online && cpus[i].dataplane;
    }
    printf("cpus: %ld CPUs: %ld housekeeping, %ld dataplane, %ld offline\n", n, online - dataplane,
           dataplane, n - online);
    printf("  %-8s %-12s %-26s %10s %9s %9s %9s %8s\n", "CPUS", "ROLE", "NOW", "EXCEPTIONS", "IRQS",
           "SYSCALLS", "SWITCHES", "MAX/S");
    for (long i = 0, j; i < n; i = j + 1) {
        for (j = i; j + 1 < n && same_run(&cpus[i], &cpus[j + 1]); j++) {
        }
        print_run(&cpus[i], &cpus[j]);
    }
}

/* cpus -i [-r]: the irqs-off check's records (zt_irqsoff_print), -r starting new ones. */
static int irqsoff_command(bool reset)
{
    long r = zt_irqsoff_print(reset ? ZT_IRQSOFF_RESET : 0);
    if (r == -ENODEV) {
        printf("cpus: this kernel has no irqs-off check (the checked kernel has: make checked, "
               "make run DEBUG=1)\n");
    } else if (r < 0) {
        printf("cpus: zt_irqsoff failed: %s\n", zt_errno_name((int)-r));
    }
    return r < 0;
}

int zt_cpus_command(int argc, char *const argv[])
{
    struct zt_cpuset only;
    bool summary = false, all = false, some = false, irqsoff = false, reset = false;
    long n;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0) {
            summary = true;
        } else if (strcmp(argv[i], "-a") == 0) {
            all = true;
        } else if (strcmp(argv[i], "-i") == 0) {
            irqsoff = true;
        } else if (strcmp(argv[i], "-r") == 0 && irqsoff) {
            reset = true;
        } else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc &&
                   zt_cpulist_parse(argv[i + 1], &only) == 0) {
            some = true;
            i++;
        } else {
            printf("usage: cpus [-s | -a | -c LIST | -i [-r]]   (a summary by default above %d "
                   "CPUs)\n",
                   ZT_CPUS_SUMMARY_ABOVE);
            return 2;
        }
    }
    if (irqsoff) {
        return irqsoff_command(reset);
    }
    struct zt_cpu_info *cpus = zt_cpus_all(&n);
    if (cpus == NULL) {
        printf("cpus: zt_cpus failed: %s\n", zt_errno_name((int)-n));
        return 1;
    }
    if (summary || (!all && !some && n > ZT_CPUS_SUMMARY_ABOVE)) {
        zt_cpus_print_summary(cpus, n);
    } else {
        for (long i = 0; i < n; i++) {
            if (!some || zt_cpuset_has(&only, (int)i)) {
                zt_cpus_print_one(&cpus[i]);
            }
        }
    }
    free(cpus);
    return 0;
}
