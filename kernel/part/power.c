/* SPDX-License-Identifier: MIT */
/*
 * power.c — powering the machine off: stop every other CPU, print the exit statistics if
 * asked (exit_stats=1), hand the status to the arch (contract in include/kernel/power.h).
 *
 * The statistics are printed only once every other CPU has stopped, so each CPU's counters
 * are final and can be compared with QEMU's own exception log (tests/qemu/test_tickless.py).
 */
#include "kernel/power.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/lib.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "kernel/work.h"

static bool exit_stats;

void power_init(bool print_exit_stats)
{
    exit_stats = print_exit_stats;
}

/* What exit_stats prints for one CPU. */
struct exit_counts {
    uint64_t exc[EXC_NR_KINDS];
    uint64_t svc, timer;
};

static void exit_counts_read(unsigned c, struct exit_counts *k)
{
    for (int i = 0; i < EXC_NR_KINDS; i++) {
        k->exc[i] = stats_exceptions(c, (enum exc_kind)i); /* system calls included */
    }
    k->svc = stats_syscalls(c);
    k->timer = STAT_READ(c, irq_class[IRQ_CLASS_TIMER]);
}

static bool exit_counts_equal(const struct exit_counts *a, const struct exit_counts *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

/* Above this many CPUs, a run of consecutive online CPUs with the same counts is one line
 * ("exit-stats: cpus 2-511 ... each"), so a 512-CPU machine's report stays readable. */
#define EXIT_STATS_RUNS_ABOVE 16

/* Every exception each online CPU took since boot, by kind (QEMU's log must agree): one line
 * per CPU, or per run of equal CPUs on a large machine. */
static void print_exit_stats(void)
{
    struct exit_counts k, next;
    for (unsigned c = 0; c < ncpus; c++) {
        if (!cpumask_has(cpus_online, c)) {
            continue;
        }
        exit_counts_read(c, &k);
        unsigned last = c;
        while (ncpus > EXIT_STATS_RUNS_ABOVE && last + 1 < ncpus &&
               cpumask_has(cpus_online, last + 1)) {
            exit_counts_read(last + 1, &next);
            if (!exit_counts_equal(&k, &next)) {
                break;
            }
            last++;
        }
        char who[24];
        if (last == c) {
            ksnprintf(who, sizeof(who), "cpu %u", c);
        } else {
            ksnprintf(who, sizeof(who), "cpus %u-%u", c, last);
        }
        printk("exit-stats: %s sync %lu irq %lu fiq %lu serror %lu svc %lu timer %lu%s\n", who,
               (unsigned long)k.exc[EXC_SYNC], (unsigned long)k.exc[EXC_IRQ],
               (unsigned long)k.exc[EXC_FIQ], (unsigned long)k.exc[EXC_SERROR],
               (unsigned long)k.svc, (unsigned long)k.timer, last == c ? "" : " each");
        c = last;
    }
    char cpus_used[160];
    cpulist_format(work_cpus_used(), cpus_used, sizeof(cpus_used));
    printk("exit-stats: work %lu items on cpus %s\n", (unsigned long)work_items_run(), cpus_used);
}

_Noreturn void power_off(int status)
{
    arch_irq_disable();
    ipi_stop_others();
    hklog_flush(); /* lines a dataplane CPU queued are not lost */
    if (exit_stats) {
        print_exit_stats();
    }
    arch_poweroff(status);
}
