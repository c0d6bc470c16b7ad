/*
 * acct.c — tick-free CPU time accounting (contract in include/kernel/acct.h).
 *
 * State per CPU in accts[]: totals, the counter value of the last transition, and what the
 * CPU has been doing since (user, kernel or idle).  Written only by its CPU with IRQs masked
 * (every caller runs in exception entry/exit or in schedule); read anywhere.  Because the
 * current mode is published, a reader on a housekeeping CPU adds the interval in progress
 * itself: a dataplane CPU running user code for minutes is never asked to fold its time.
 */
#include "kernel/acct.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/panic.h"
#include "kernel/task.h"

static struct cpu_acct accts[MAX_CPUS];
PERCPU_ARRAY(accts);

#define ADD(field, d) __atomic_store_n(&(field), (field) + (d), __ATOMIC_RELAXED)
#define SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELEASE)

void acct_init_cpu(unsigned cpu)
{
    accts[cpu].stamp = arch_counter_read();
    accts[cpu].mode = ACCT_IDLE;
}

static uint64_t interval(struct cpu_acct *a, uint64_t now)
{
    uint64_t d = now - a->stamp;
    SET(a->stamp, now);
    return d;
}

void acct_enter_kernel(struct task *t)
{
    ASSERT_IRQS_MASKED();
    struct cpu_acct *a = percpu_elem(accts, this_cpu_id());
    uint64_t d = interval(a, arch_counter_read());
    ADD(t->user_cycles, d);
    ADD(a->user_cycles, d);
    SET(a->mode, ACCT_SYS);
}

void acct_exit_kernel(struct task *t)
{
    ASSERT_IRQS_MASKED();
    struct cpu_acct *a = percpu_elem(accts, this_cpu_id());
    uint64_t d = interval(a, arch_counter_read());
    ADD(t->sys_cycles, d);
    ADD(a->sys_cycles, d);
    SET(a->mode, ACCT_USER);
}

void acct_switch(struct task *prev, struct task *next, uint64_t now)
{
    ASSERT_IRQS_MASKED();
    struct cpu_acct *a = percpu_elem(accts, this_cpu_id());
    uint64_t d = interval(a, now);
    if (prev->is_idle) {
        ADD(a->idle_cycles, d);
    } else {
        ADD(prev->sys_cycles, d);
        ADD(a->sys_cycles, d);
    }
    SET(a->mode, next->is_idle ? ACCT_IDLE : ACCT_SYS);
}

/* The interval in progress on `cpu`, and what it is being spent on. */
static uint64_t in_progress(unsigned cpu, enum acct_mode *mode)
{
    struct cpu_acct *a = percpu_elem(accts, cpu);
    *mode = __atomic_load_n(&a->mode, __ATOMIC_ACQUIRE);
    uint64_t stamp = __atomic_load_n(&a->stamp, __ATOMIC_ACQUIRE), now = arch_counter_read();
    return now > stamp ? now - stamp : 0;
}

void acct_cpu_read(unsigned cpu, struct cpu_acct *out)
{
    struct cpu_acct *a = percpu_elem(accts, cpu);
    enum acct_mode mode;
    uint64_t d = in_progress(cpu, &mode);
    out->user_cycles = __atomic_load_n(&a->user_cycles, __ATOMIC_RELAXED);
    out->sys_cycles = __atomic_load_n(&a->sys_cycles, __ATOMIC_RELAXED);
    out->idle_cycles = __atomic_load_n(&a->idle_cycles, __ATOMIC_RELAXED);
    out->stamp = __atomic_load_n(&a->stamp, __ATOMIC_RELAXED);
    out->mode = mode;
    *(mode == ACCT_USER  ? &out->user_cycles
      : mode == ACCT_SYS ? &out->sys_cycles
                         : &out->idle_cycles) += d;
}

void acct_task_read(const struct task *t, uint64_t *user, uint64_t *sys)
{
    *user = __atomic_load_n(&t->user_cycles, __ATOMIC_RELAXED);
    *sys = __atomic_load_n(&t->sys_cycles, __ATOMIC_RELAXED);
    unsigned cpu = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
    /* Running: add what it is doing now (the CPU's current task, which sched.c keeps). */
    if (cpu < MAX_CPUS && __atomic_load_n(&cpus[cpu].current_task, __ATOMIC_RELAXED) == t) {
        enum acct_mode mode;
        uint64_t d = in_progress(cpu, &mode);
        *(mode == ACCT_USER ? user : sys) += d;
    }
}
