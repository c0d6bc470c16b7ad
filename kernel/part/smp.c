/* SPDX-License-Identifier: MIT */
/*
 * smp.c — SMP bring-up, and starting and stopping single CPUs at run time (contract in
 * include/kernel/smp.h).
 *
 * At boot the boot CPU gives every other CPU of the device tree a kernel stack and a trace
 * ring and starts it with arch_cpu_start (PSCI CPU_ON), all at once, then waits until each
 * has reported itself online or a generous guest-time limit has passed.  A CPU whose start
 * fails, or that never reports, is named and left out; the boot goes on.
 *
 * Each secondary CPU then runs the per-CPU half of kernel_main in secondary_main and becomes
 * idle.
 *
 * At run time (kernel/part/repartition.c drives both): smp_cpu_start brings one offline CPU up the
 * same way; a CPU being taken offline runs smp_stop_this from its idle loop once nothing is
 * left on it, and the requesting CPU (smp_wait_off) frees its stack and trace ring only
 * after the firmware says it is off, since until then it may still be running on them.
 * Context: boot CPU at boot; afterwards the partition request's task (IRQs enabled), except
 * smp_stop_this (the stopping CPU, IRQs masked).
 */
#include "kernel/smp.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/irqsoff.h"
#include "kernel/kstack.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "uapi/zt_errno.h"

#define ONLINE_WAIT_SECONDS 5

static void mark_online(struct cpu *c)
{
    ASSERT(c->id < ncpus && c == this_cpu()); /* each CPU says so itself */
    c->online_counter = arch_counter_read();
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
    cpumask_set_atomic(&cpus_online, c->id);
}

/* What a CPU needs before it runs: a kernel stack and a trace ring.  0 or -ENOMEM. */
static int give_memory(struct cpu *c)
{
    c->kstack_top = kstack_alloc();
    if (!c->kstack_top) {
        return -ENOMEM;
    }
    c->arch.boot_sp = c->kstack_top;
    if (trace_init_cpu(c->id) != 0) {
        kstack_free(c->kstack_top);
        c->kstack_top = 0;
        return -ENOMEM;
    }
    return 0;
}

static void take_memory(struct cpu *c)
{
    /* never the stack this CPU runs on, nor one a CPU still running could be using */
    ASSERT(c->id != this_cpu_id() && !__atomic_load_n(&c->online, __ATOMIC_ACQUIRE));
    trace_free_cpu(c->id);
    if (c->kstack_top) {
        kstack_free(c->kstack_top);
        c->kstack_top = 0;
    }
}

/* Give CPU `id` its memory and start it.  0, or -ENOMEM / -EIO with a message. */
static int start_one(unsigned id, const char *who)
{
    ASSERT(id > 0 && id < ncpus && id != this_cpu_id()); /* CPU 0 is never started again */
    struct cpu *c = &cpus[id];
    c->id = id;
    c->stopping = false;
    if (give_memory(c) != 0) {
        printk("%s: CPU %u: no memory for its stack or trace ring; left offline\n", who, id);
        return -ENOMEM;
    }
    stats_init_cpu(id);
    int err = arch_cpu_start(id, c);
    if (err) {
        printk("%s: CPU %u failed to start (PSCI CPU_ON error %d); left offline\n", who, id, err);
        take_memory(c);
        arch_cpu_release(id, c);
        return -EIO;
    }
    return 0;
}

static bool wait_online(cpumask_t want)
{
    uint64_t limit = arch_counter_read() + ONLINE_WAIT_SECONDS * arch_counter_freq();
    while (!cpumask_empty(cpumask_andnot(want, cpumask_load(&cpus_online))) &&
           arch_counter_read() < limit) {
        arch_cpu_relax();
    }
    return cpumask_empty(cpumask_andnot(want, cpumask_load(&cpus_online)));
}

static unsigned long boot_bytes_per_cpu;

unsigned long smp_boot_bytes_per_cpu(void)
{
    return boot_bytes_per_cpu;
}

void smp_boot(void)
{
    size_t free_before = page_free_count();
    cpumask_t started = cpumask_of(0);
    mark_online(&cpus[0]);
    for (unsigned id = 1; id < ncpus; id++) {
        if (start_one(id, "smp") == 0) {
            cpumask_set(&started, id);
        }
    }
    wait_online(started);
    cpumask_t missing = cpumask_andnot(started, cpumask_load(&cpus_online));
    for_each_cpu(id, missing) {
        printk("smp: CPU %u started but never came online; left offline\n", id);
    }
    unsigned up = cpumask_weight(cpumask_load(&cpus_online)) - 1;
    size_t taken = (free_before - page_free_count()) * PAGE_SIZE;
    boot_bytes_per_cpu = up ? (unsigned long)((taken + up - 1) / up) : 0;
}

int smp_cpu_start(unsigned id)
{
    int r = start_one(id, "partition");
    if (r != 0) {
        return r;
    }
    if (!wait_online(cpumask_of(id))) {
        /* Its memory stays: it may still come up and run on it. */
        printk("partition: CPU %u started but did not come online within %u s\n", id,
               ONLINE_WAIT_SECONDS);
        return -EIO;
    }
    return 0;
}

_Noreturn void secondary_main(struct cpu *c, uint64_t entry_counter)
{
    c->start_counter = entry_counter;
    arch_secondary_init(c);
    sched_init_cpu(c);
    timer_init_cpu(c->id);
    ipi_init_cpu();
    mark_online(c);
    sched_idle(); /* never returns */
}

_Noreturn void smp_stop_this(void)
{
    ASSERT_IRQS_MASKED();
    struct cpu *c = this_cpu();
    ASSERT(c->stopping && sched_cpu_is_empty(c->id));
    ASSERT(!cpumask_test_atomic(&cpus_online, c->id));
    ipi_run_calls(); /* what was asked of it before it left cpus_online */
    /* A task evicted in the middle of a system call may have armed a timer here before it
     * slept: it goes to a housekeeping CPU rather than off with this one. */
    unsigned to =
        cpumask_first(cpumask_and(cpumask_load(&cpus_housekeeping), cpumask_load(&cpus_online)));
    if (timer_evacuate(c->id, to, 0, 0, 0)) {
        ipi_send(to, IPI_KICK);
    }
    page_drain_local(); /* its cached free pages go back to everyone */
    irqsoff_cpu_off();  /* checked builds: the span open now ends unrecorded */
    c->stopping = false;
    __atomic_store_n(&c->online, false, __ATOMIC_RELEASE); /* smp_wait_off may go on */
    arch_cpu_off();
}

int smp_wait_off(unsigned id)
{
    struct cpu *c = &cpus[id];
    uint64_t limit = arch_counter_read() + ONLINE_WAIT_SECONDS * arch_counter_freq();
    while ((__atomic_load_n(&c->online, __ATOMIC_ACQUIRE) || !arch_cpu_is_off(id)) &&
           arch_counter_read() < limit) {
        arch_cpu_relax();
    }
    if (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE) || !arch_cpu_is_off(id)) {
        printk("partition: CPU %u did not power off within %u s; its memory is kept\n", id,
               ONLINE_WAIT_SECONDS);
        return -EIO;
    }
    take_memory(c);
    arch_cpu_release(id, c);
    return 0;
}
