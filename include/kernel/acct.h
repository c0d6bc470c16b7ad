/*
 * acct.h — CPU-time accounting without a tick.
 *
 * Every transition is timestamped with the counter (times are in counter cycles, cycles.h): entry
 * to the kernel from user space, return to user space, and every context switch.  The time since
 * the CPU's previous timestamp is charged to whoever ran in that interval: the task's user or
 * system time and the CPU's user, system or idle time.  The result is exact whether a tick runs or
 * not. Each CPU writes only its own state; other CPUs read it with relaxed loads.
 */
#ifndef ZT_KERNEL_ACCT_H
#define ZT_KERNEL_ACCT_H

#include <stdint.h>

struct task;

enum acct_mode {
    ACCT_IDLE = 0,
    ACCT_USER,
    ACCT_SYS,
};

struct cpu_acct {
    uint64_t user_cycles;
    uint64_t sys_cycles;
    uint64_t idle_cycles;
    uint64_t stamp;      /* counter value of the last transition */
    enum acct_mode mode; /* what the CPU has been doing since `stamp` */
};

void acct_init_cpu(unsigned cpu);
/* User -> kernel on this CPU: charge the interval to t's user time. */
void acct_enter_kernel(struct task *t);
/* Kernel -> user: charge the interval to t's system time. */
void acct_exit_kernel(struct task *t);
/* Context switch at `now`: charge the interval to prev (system time, or idle). */
void acct_switch(struct task *prev, struct task *next, uint64_t now);
/* Totals for CPU `cpu`, the interval in progress included (readable from any CPU, without
 * disturbing `cpu`). */
void acct_cpu_read(unsigned cpu, struct cpu_acct *out);
/* t's user and system cycles, the interval in progress included if t is running (on any
 * CPU). */
void acct_task_read(const struct task *t, uint64_t *user, uint64_t *sys);

#endif
