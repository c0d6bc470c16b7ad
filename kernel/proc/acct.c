/* SPDX-License-Identifier: MIT */
/*
 * acct.c — tick-free CPU time accounting (contract and the bucket arithmetic in
 * include/kernel/acct.h).
 *
 * State per CPU in cpus[c].acct (struct cpu, so the system-call path reaches it from the CPU
 * pointer it already holds): three buckets, one of them in progress.  Written only by its CPU
 * with IRQs masked (every caller runs in exception entry/exit or in schedule); read anywhere.
 * Because the bucket in progress shows in its sign, a reader on a housekeeping CPU adds the
 * interval in progress itself: a dataplane CPU running user code for minutes is never asked to
 * fold its time.
 *
 * Per task: user_cycles and sys_cycles hold its times up to its last switch-out; while it runs,
 * acct_base_user/acct_base_sys hold its CPU's settled user and system totals at its switch-in,
 * so its time so far is its totals plus how far the CPU's totals moved since.
 *
 * A reader may catch the owner between the two stores of a transition (both buckets or neither
 * in progress) or a task between its switch and the fold: it reads again (a transition is a few
 * instructions long), and after READ_TRIES gives the figure it has, off by at most the
 * interval being closed.
 */
#include "kernel/acct.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/panic.h"
#include "kernel/task.h"

#define READ_TRIES 100

#define SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define GET(field)    __atomic_load_n(&(field), __ATOMIC_RELAXED)

void acct_init_cpu(unsigned cpu)
{
    ASSERT(cpu < MAX_CPUS);
    struct cpu_acct *a = &cpus[cpu].acct;
    SET(a->us.user, 0);
    SET(a->us.sys, 0);
    SET(a->idle, -arch_counter_read()); /* idle since now (the counter is past 0 by now) */
}

void acct_enter_kernel(void)
{
    ASSERT_IRQS_MASKED();
    acct_user_to_sys(&this_cpu()->acct, arch_counter_read());
}

void acct_exit_kernel(void)
{
    ASSERT_IRQS_MASKED();
    acct_sys_to_user(&this_cpu()->acct, arch_counter_read());
}

void acct_switch(struct task *prev, struct task *next, uint64_t now)
{
    ASSERT_IRQS_MASKED();
    struct cpu_acct *a = &this_cpu()->acct;
    if (prev->is_idle) {
        SET(a->idle, a->idle + now); /* idle -> system */
        SET(a->us.sys, a->us.sys - now);
    } else {
        /* prev ran since its switch-in: what the CPU's user and (settled) system totals
         * gained meanwhile is its. */
        SET(prev->user_cycles, prev->user_cycles + (a->us.user - prev->acct_base_user));
        SET(prev->sys_cycles, prev->sys_cycles + (a->us.sys + now - prev->acct_base_sys));
    }
    if (next->is_idle) {
        SET(a->us.sys, a->us.sys + now); /* system -> idle */
        SET(a->idle, a->idle - now);
    } else {
        SET(next->acct_base_user, a->us.user);
        SET(next->acct_base_sys, a->us.sys + now);
    }
}

static bool in_progress(uint64_t v)
{
    return (int64_t)v < 0;
}

void acct_cpu_read(unsigned cpu, struct acct_times *out)
{
    ASSERT(cpu < MAX_CPUS);
    struct cpu_acct *a = &cpus[cpu].acct;
    uint64_t u, s, i, now;
    for (int tries = 0;; tries++) {
        u = GET(a->us.user);
        s = GET(a->us.sys);
        i = GET(a->idle);
        now = arch_counter_read();
        if (in_progress(u) + in_progress(s) + in_progress(i) == 1 || tries == READ_TRIES) {
            break;
        }
    }
    out->user_cycles = in_progress(u) ? u + now : u;
    out->sys_cycles = in_progress(s) ? s + now : s;
    out->idle_cycles = in_progress(i) ? i + now : i;
    out->mode = in_progress(u) ? ACCT_USER : in_progress(s) ? ACCT_SYS : ACCT_IDLE;
}

void acct_task_read(const struct task *t, uint64_t *user, uint64_t *sys)
{
    for (int tries = 0;; tries++) {
        *user = GET(t->user_cycles);
        *sys = GET(t->sys_cycles);
        unsigned cpu = GET(t->cpu);
        /* Not running: its totals are whole.  Running (the CPU's current task, which sched.c
         * keeps): add how far the CPU's totals moved since its switch-in. */
        if (cpu >= MAX_CPUS || GET(cpus[cpu].current_task) != t) {
            return;
        }
        uint64_t base_user = GET(t->acct_base_user), base_sys = GET(t->acct_base_sys);
        struct acct_times now;
        acct_cpu_read(cpu, &now);
        bool same = GET(cpus[cpu].current_task) == t && GET(t->user_cycles) == *user &&
                    GET(t->acct_base_user) == base_user && GET(t->acct_base_sys) == base_sys;
        if (same || tries == READ_TRIES) {
            *user += now.user_cycles - base_user;
            *sys += now.sys_cycles - base_sys;
            return;
        }
    }
}
