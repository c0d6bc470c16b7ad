/* SPDX-License-Identifier: MIT */
/*
 * acct.h — CPU-time accounting without a tick.
 *
 * Every transition is timestamped with the counter (times are in counter cycles, cycles.h): entry
 * to the kernel from user space, return to user space, and every context switch.  The time since
 * the CPU's previous transition is charged to whatever it was doing: user, system or idle time of
 * the CPU, and user or system time of the task that ran.  The result is exact whether a tick runs
 * or not.  Each CPU writes only its own state; other CPUs read it with relaxed loads.
 *
 * How a transition costs two additions.  Each CPU bucket (user, sys, idle) holds the total of its
 * finished intervals minus the start of the interval in progress, if it is the bucket in progress.
 * A transition at counter value T from bucket A to bucket B is then A += T, B -= T: no stamp to
 * load, no mode to store.  The bucket in progress is the one that reads negative as a signed
 * number (its total so far is smaller than the counter value its interval began at, since the
 * counter was already running when accounting began); a reader adds the current counter value to
 * it.  A task's times are folded from its CPU's buckets when it is switched out (the buckets'
 * values at its switch-in are kept in the task), so an entry or exit touches nothing of the task.
 */
#ifndef ZT_KERNEL_ACCT_H
#define ZT_KERNEL_ACCT_H

#include <stdint.h>

#include "kernel/cpu.h"

struct task;

enum acct_mode {
    ACCT_IDLE = 0,
    ACCT_USER,
    ACCT_SYS,
};

/* A CPU's times, the interval in progress included (acct_cpu_read). */
struct acct_times {
    uint64_t user_cycles;
    uint64_t sys_cycles;
    uint64_t idle_cycles;
    enum acct_mode mode; /* what the CPU was doing when read */
};

/* User -> kernel at `now` on this CPU (a's CPU).  Inline: the system-call path uses it.  This CPU,
 * IRQs masked.  Plain stores, which the compiler pairs into one stp: each 64-bit half is still
 * written whole (an aligned 64-bit store is single-copy atomic, ARM ARM B2.2.1), which is all a
 * reader needs; GCC's __atomic stores would cost an address computation each. */
static inline void acct_user_to_sys(struct cpu_acct *a, uint64_t now)
{
    struct acct_user_sys v = a->us;
    v.user += now;
    v.sys -= now;
    __builtin_memcpy(&a->us, &v, sizeof(v)); /* GCC 12 pairs this store, not `a->us = v` */
}

/* Kernel -> user at `now` on this CPU. */
static inline void acct_sys_to_user(struct cpu_acct *a, uint64_t now)
{
    struct acct_user_sys v = a->us;
    v.user -= now;
    v.sys += now;
    __builtin_memcpy(&a->us, &v, sizeof(v)); /* GCC 12 pairs this store, not `a->us = v` */
}

/* Bring-up of `cpu`: it starts idle, now. */
void acct_init_cpu(unsigned cpu);
/* User -> kernel on this CPU (every exception from user space but the system-call fast path,
 * which calls acct_user_to_sys itself). */
void acct_enter_kernel(void);
/* Kernel -> user on this CPU. */
void acct_exit_kernel(void);
/* Context switch at `now`, IRQs masked: prev's times so far are folded into it, next's start. */
void acct_switch(struct task *prev, struct task *next, uint64_t now);
/* Totals for CPU `cpu`, the interval in progress included (readable from any CPU, without
 * disturbing `cpu`). */
void acct_cpu_read(unsigned cpu, struct acct_times *out);
/* t's user and system cycles, the interval in progress included if t is running (on any
 * CPU). */
void acct_task_read(const struct task *t, uint64_t *user, uint64_t *sys);

#endif
