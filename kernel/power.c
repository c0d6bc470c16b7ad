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
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "kernel/work.h"

static bool exit_stats;

void power_init(bool print_exit_stats)
{
    exit_stats = print_exit_stats;
}

/* One line per CPU: every exception it took since boot, by kind (QEMU's log must agree). */
static void print_exit_stats(void)
{
    for (unsigned c = 0; c < ncpus; c++) {
        if (!cpumask_has(cpus_online, c)) {
            continue;
        }
        uint64_t k[EXC_NR_KINDS];
        for (int i = 0; i < EXC_NR_KINDS; i++) {
            k[i] = stats_exceptions(c, (enum exc_kind)i);
        }
        printk("exit-stats: cpu %u sync %lu irq %lu fiq %lu serror %lu svc %lu timer %lu\n", c,
               (unsigned long)k[EXC_SYNC], (unsigned long)k[EXC_IRQ], (unsigned long)k[EXC_FIQ],
               (unsigned long)k[EXC_SERROR], (unsigned long)stats_syscalls(c),
               (unsigned long)STAT_READ(c, irq_class[IRQ_CLASS_TIMER]));
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
