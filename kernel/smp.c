/*
 * smp.c — SMP bring-up (contract in include/kernel/smp.h).
 *
 * The boot CPU gives every other CPU of the device tree a kernel stack and starts it with
 * arch_cpu_start (PSCI CPU_ON on aarch64), all at once, then waits until each has reported
 * itself online or a generous guest-time limit has passed.  A CPU whose start fails, or that
 * never reports, is named and left out; the boot goes on.  Each secondary CPU then runs the
 * per-CPU half of kernel_main in secondary_main and becomes idle.
 */
#include "kernel/smp.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/kstack.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/timer.h"
#include "kernel/trace.h"

#define ONLINE_WAIT_SECONDS 5

static void mark_online(struct cpu *c)
{
    c->online_counter = arch_counter_read();
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
    __atomic_fetch_or(&cpus_online, CPUMASK_BIT(c->id), __ATOMIC_RELEASE);
}

static int start_one(unsigned id)
{
    struct cpu *c = &cpus[id];
    c->id = id;
    c->kstack_top = kstack_alloc();
    if (!c->kstack_top) {
        printk("smp: CPU %u: no memory for its stack; left offline\n", id);
        return -1;
    }
    c->arch.boot_sp = c->kstack_top;
    trace_init_cpu(id);
    stats_init_cpu(id);
    int err = arch_cpu_start(id, c);
    if (err) {
        printk("smp: CPU %u failed to start (PSCI CPU_ON error %d); left offline\n", id, err);
        return -1;
    }
    return 0;
}

void smp_boot(void)
{
    cpumask_t started = CPUMASK_BIT(0);
    mark_online(&cpus[0]);
    for (unsigned id = 1; id < ncpus; id++) {
        if (start_one(id) == 0) {
            started |= CPUMASK_BIT(id);
        }
    }
    uint64_t limit = arch_counter_read() + ONLINE_WAIT_SECONDS * arch_counter_freq();
    while (__atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE) != started &&
           arch_counter_read() < limit) {
        arch_cpu_relax();
    }
    cpumask_t missing = started & ~__atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE);
    for (unsigned id = 0; id < ncpus; id++) {
        if (cpumask_has(missing, id)) {
            printk("smp: CPU %u started but never came online; left offline\n", id);
        }
    }
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
