/*
 * acct.c — tick-free CPU time accounting (contract in include/kernel/acct.h).
 *
 * State per CPU in accts[]; written only by its CPU with IRQs masked (every caller runs in
 * exception entry/exit or in schedule), read anywhere.  Task counters are written only by
 * the CPU the task runs on.
 */
#include "kernel/acct.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/sched.h"
#include "kernel/task.h"

static struct cpu_acct accts[MAX_CPUS];

#define ADD(field, d) __atomic_store_n(&(field), (field) + (d), __ATOMIC_RELAXED)

void acct_init_cpu(unsigned cpu)
{
    accts[cpu].stamp = arch_counter_read();
}

static uint64_t interval(struct cpu_acct *a, uint64_t now)
{
    uint64_t d = now - a->stamp;
    a->stamp = now;
    return d;
}

void acct_enter_kernel(struct task *t)
{
    struct cpu_acct *a = &accts[this_cpu_id()];
    uint64_t d = interval(a, arch_counter_read());
    ADD(t->user_ticks, d);
    ADD(a->user_ticks, d);
}

void acct_exit_kernel(struct task *t)
{
    struct cpu_acct *a = &accts[this_cpu_id()];
    uint64_t d = interval(a, arch_counter_read());
    ADD(t->sys_ticks, d);
    ADD(a->sys_ticks, d);
}

void acct_switch(struct task *prev, struct task *next, uint64_t now)
{
    struct cpu_acct *a = &accts[this_cpu_id()];
    uint64_t d = interval(a, now);
    if (sched_is_idle_task(prev)) {
        ADD(a->idle_ticks, d);
    } else {
        ADD(prev->sys_ticks, d);
        ADD(a->sys_ticks, d);
    }
}

void acct_cpu_read(unsigned cpu, struct cpu_acct *out)
{
    struct cpu_acct *a = &accts[cpu];
    out->user_ticks = __atomic_load_n(&a->user_ticks, __ATOMIC_RELAXED);
    out->sys_ticks = __atomic_load_n(&a->sys_ticks, __ATOMIC_RELAXED);
    out->idle_ticks = __atomic_load_n(&a->idle_ticks, __ATOMIC_RELAXED);
    out->stamp = __atomic_load_n(&a->stamp, __ATOMIC_RELAXED);
    uint64_t now = arch_counter_read();
    if (sched_is_idle_task(sched_current(cpu)) && now > out->stamp) {
        out->idle_ticks += now - out->stamp; /* idle right now: count the interval so far */
    }
}

/* The running task's current interval is system time: this is called from a syscall. */
void acct_task_read(const struct task *t, uint64_t *user, uint64_t *sys)
{
    *user = __atomic_load_n(&t->user_ticks, __ATOMIC_RELAXED);
    *sys = __atomic_load_n(&t->sys_ticks, __ATOMIC_RELAXED);
    if (t == sched_current(this_cpu_id())) {
        *sys += arch_counter_read() - accts[this_cpu_id()].stamp;
    }
}

uint64_t acct_ticks_to_ns(uint64_t ticks)
{
    uint64_t f = arch_counter_freq();
    return ticks / f * 1000000000ull + ticks % f * 1000000000ull / f;
}
