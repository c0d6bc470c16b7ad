/*
 * isolstat — the isolation audit: for each dataplane CPU (or the CPUs given with -c), what
 * could still interrupt it, read from kernel state without disturbing it.
 *
 *   isolstat [-c CPU]...
 *
 * Expected, and shown as such: SGIs (the IPIs a CPU's own tasks may need) and the local
 * timer's PPI (armed only for the task's own timers or contention).  Everything else is a
 * finding, marked with "!": device interrupts (SPIs) routed to the CPU, other PPIs enabled,
 * the local timer armed, timers queued (with who armed them), cross-CPU requests pending,
 * other runnable tasks, free pages parked in its per-CPU cache.  The last line per CPU is
 * "isolstat: cpu N clean" or "isolstat: cpu N: K findings"; the exit status is the number of
 * CPUs with findings (capped at 100).  An empty audit is the guarantee.
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

static int findings(const struct zt_isol_audit *a)
{
    int n = 0;
    uint32_t other_ppis = a->ppis_enabled & ~(1u << (a->timer_intid - 16));
    for (unsigned i = 0; i < 16; i++) {
        if (other_ppis & (1u << i)) {
            printf("  ! PPI %u enabled\n", 16 + i), n++;
        }
    }
    for (unsigned i = 0; i < a->nspis; i++) {
        printf("  ! device interrupt SPI %u routed here\n", a->spis[i]), n++;
    }
    if (a->timer_armed) {
        printf("  ! local timer armed: fires in %.3f ms\n", ms(a->timer_programmed_ns)), n++;
    }
    for (unsigned i = 0; i < a->ntimers && i < ZT_AUDIT_MAX_TIMERS; i++) {
        printf("  ! timer due in %.3f ms, armed by tid %d at kernel address 0x%llx\n",
               ms(a->timers[i].due_ns), a->timers[i].owner_tid,
               (unsigned long long)a->timers[i].armed_by);
        n++;
    }
    if (a->pending_calls) {
        printf("  ! cross-CPU requests pending (mask 0x%llx): run at its next kernel entry\n",
               (unsigned long long)a->pending_calls);
        n++;
    }
    if (a->other_runnable) {
        printf("  ! %u other runnable task(s)\n", a->other_runnable), n++;
    }
    if (a->cached_pages && a->isolated && a->in_user) {
        printf("  ! %u free pages parked in its per-CPU cache\n", a->cached_pages), n++;
    }
    printf("  requests deferred instead of interrupting it, since boot: %llu\n",
           (unsigned long long)a->deferred_total);
    return n;
}

static int audit(unsigned cpu)
{
    struct zt_isol_audit a;
    long r = zt_syscall2(SYS_zt_isolstat, cpu, &a);
    if (r) {
        printf("isolstat: cpu %u: %s\n", cpu, zt_errno_name((int)-r));
        return 1;
    }
    print_header(&a);
    int n = findings(&a);
    if (n) {
        printf("isolstat: cpu %u: %d finding%s\n", cpu, n, n == 1 ? "" : "s");
    } else {
        printf("isolstat: cpu %u clean\n", cpu);
    }
    return n != 0;
}

int main(int argc, char **argv)
{
    struct zt_cpu_info cpus[64];
    int bad = 0, any = 0;
    for (int i = 1; i < argc; i++) {
        char *end = "";
        long cpu = -1;
        if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            cpu = strtol(argv[++i], &end, 10);
        }
        if (cpu < 0 || *end || end == argv[i]) {
            fprintf(stderr, "usage: isolstat [-c CPU]...\n");
            return 100;
        }
        bad += audit((unsigned)cpu);
        any = 1;
    }
    if (!any) {
        long ncpus = zt_cpus(cpus, 64);
        for (int c = 0; c < ncpus && c < 64; c++) {
            if (cpus[c].dataplane && cpus[c].online) {
                bad += audit((unsigned)c);
                any = 1;
            }
        }
    }
    if (!any) {
        printf("isolstat: no dataplane CPUs (boot with dataplane=LIST)\n");
    }
    return bad > 100 ? 100 : bad;
}
