/* SPDX-License-Identifier: MIT */
/*
 * systime.c — the time system calls: nanosleep, clock_gettime, clock_getres, clock_nanosleep
 * and gettimeofday, for every clock id Linux accepts (contract in include/kernel/systime.h).
 *
 * Which id reads what, and which errno Linux gives where it refuses one, is written once in
 * include/uapi/zt_clock.h, which a vDSO reading the counter from user space uses too; this file
 * adds what only the kernel can do: the CPU-time clocks (kernel/proc/acct.c's exact user and
 * system time of a thread, summed over a process) and sleeping.  Monotonic and wall time come
 * from kernel/lib/clock.c.
 *
 * Every call checks the clock id, then the pid it may name, then the user pointers, before it
 * writes anything or sleeps.  Syscall context, IRQs enabled; proc_lock is taken to find a
 * process or thread and read its times.
 */
#include "kernel/systime.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/clock.h"
#include "kernel/cycles.h"
#include "kernel/lib.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "kernel/wait.h"
#include "uapi/zt_clock.h"
#include "uapi/zt_errno.h"

/* ---- timespecs ---- */

int systime_read_timespec(uint64_t uptr, struct timespec_k *ts)
{
    if (copy_from_user(current_vm(), ts, uptr, sizeof(*ts))) {
        return -EFAULT;
    }
    return timespec_is_valid(ts) ? 0 : -EINVAL; /* the one rule (cycles.h: Linux's) */
}

static long write_ns(uint64_t uptr, uint64_t ns)
{
    struct timespec_k ts = timespec_from_ns(ns);
    return copy_to_user(current_vm(), uptr, &ts, sizeof(ts)) ? -EFAULT : 0;
}

/* Sleep until `deadline`; on a signal, report the time left in *urem (if given). */
static long sleep_and_report(uint64_t deadline, uint64_t urem)
{
    int r = sleep_until(deadline);
    if (r == -EINTR && urem) {
        uint64_t now = arch_counter_read();
        write_ns(urem, now < deadline ? cycles_to_ns(deadline - now) : 0);
    }
    return r;
}

long sys_nanosleep(struct trap_frame *f)
{
    struct timespec_k ts;
    int r = systime_read_timespec(arch_frame_arg(f, 0), &ts);
    if (r) {
        return r;
    }
    uint64_t deadline = arch_counter_read() + timespec_to_cycles(&ts);
    return sleep_and_report(deadline, arch_frame_arg(f, 1));
}

/* ---- CPU-time clocks ---- */

/* Whose CPU time a CPU-time clock id names: one thread, or every thread of a process. */
struct cpu_clock {
    int id; /* the tid or the pid */
    bool thread;
    int kind; /* ZT_CPUCLOCK_PROF, _VIRT or _SCHED */
};

/* Decode a CPU-time id (2, 3 or an encoded one); false for an encoded id whose kind is not a
 * CPU clock.  `id` 0 stands for the caller. */
static bool cpu_clock_decode(int clk, struct cpu_clock *c)
{
    if (clk == ZT_CLOCK_PROCESS_CPUTIME_ID || clk == ZT_CLOCK_THREAD_CPUTIME_ID) {
        *c = (struct cpu_clock){0, clk == ZT_CLOCK_THREAD_CPUTIME_ID, ZT_CPUCLOCK_SCHED};
        return true;
    }
    *c = (struct cpu_clock){ZT_CPUCLOCK_PID(clk), ZT_CPUCLOCK_PERTHREAD(clk),
                            ZT_CPUCLOCK_WHICH(clk)};
    return c->kind != ZT_CPUCLOCK_FD;
}

/* User and system cycles of every thread of p, alive and exited (proc_lock held). */
static void process_times_locked(struct process *p, uint64_t *user, uint64_t *sys)
{
    ASSERT_HELD(&proc_lock);
    *user = p->dead_user_cycles;
    *sys = p->dead_sys_cycles;
    list_for_each(pos, &p->threads) {
        uint64_t u, s;
        acct_task_read(container_of(pos, struct task, thread_link), &u, &s);
        *user += u;
        *sys += s;
    }
}

/* The clock's time now in ns, and how many threads advance it (*runners, may be NULL).
 * -EINVAL when it names nobody the caller may read: a thread outside the caller's process,
 * a pid that is no process (Linux's rules; `gettime`: a process clock may also name the
 * caller's own tid, as clock_gettime allows on Linux). */
static int cpu_clock_read(const struct cpu_clock *c, bool gettime, uint64_t *ns, unsigned *runners)
{
    struct task *me = current();
    uint64_t user = 0, sys = 0;
    int r = 0;
    unsigned n = 1;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    if (c->thread) {
        struct task *t = c->id == 0 ? me : task_find_locked(c->id);
        if (t && t->proc == me->proc) {
            acct_task_read(t, &user, &sys);
        } else {
            r = -EINVAL;
        }
    } else {
        struct process *p = c->id == 0 ? me->proc : proc_find_locked(c->id);
        if (!p && gettime && c->id == me->tid) {
            p = me->proc;
        }
        if (p) {
            process_times_locked(p, &user, &sys);
            n = MAX(p->nthreads, 1u);
        } else {
            r = -EINVAL;
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    *ns = cycles_to_ns(c->kind == ZT_CPUCLOCK_VIRT ? user : user + sys);
    if (runners) {
        *runners = n;
    }
    return r;
}

/* ---- clock_gettime, clock_getres, gettimeofday ---- */

/* The time of clock `clk` now (ns), or -EINVAL. */
static int clock_read(int clk, bool gettime, uint64_t *ns)
{
    int r = zt_clock_read_error(clk);
    if (r) {
        return r;
    }
    if (zt_clock_is_counter_time(clk)) {
        *ns = zt_clock_counter_time_ns(clk, clock_monotonic_ns(), clock_wall_offset_ns());
        return 0;
    }
    struct cpu_clock c;
    if (!cpu_clock_decode(clk, &c)) {
        return -EINVAL;
    }
    return cpu_clock_read(&c, gettime, ns, 0);
}

long sys_clock_gettime(struct trap_frame *f)
{
    uint64_t ns;
    int r = clock_read((int)arch_frame_arg(f, 0), true, &ns);
    return r ? r : write_ns(arch_frame_arg(f, 1), ns);
}

/* One counter cycle for every clock: the CPU-time clocks are kept in the same cycles. */
long sys_clock_getres(struct trap_frame *f)
{
    uint64_t ns;
    int r =
        clock_read((int)arch_frame_arg(f, 0), false, &ns); /* checks the id and any pid it names */
    if (r) {
        return r;
    }
    uint64_t freq = arch_counter_freq();
    return arch_frame_arg(f, 1) ? write_ns(arch_frame_arg(f, 1), (NS_PER_SEC + freq - 1) / freq)
                                : 0;
}

struct timeval_k {
    int64_t sec, usec;
};

long sys_gettimeofday(struct trap_frame *f)
{
    uint64_t us = clock_realtime_ns() / 1000;
    struct timeval_k tv = {(int64_t)(us / 1000000), (int64_t)(us % 1000000)};
    if (arch_frame_arg(f, 0) && copy_to_user(current_vm(), arch_frame_arg(f, 0), &tv, sizeof(tv))) {
        return -EFAULT;
    }
    return 0; /* the timezone argument is obsolete; ignored as on Linux */
}

/* ---- clock_nanosleep ---- */

/* Sleep until the CPU-time clock `c` reaches deadline_ns.  Nothing wakes a sleeper when
 * another thread's CPU time reaches a value, so it sleeps in steps: the time still missing
 * divided by the threads that could be using it is the earliest the clock can get there; it
 * then looks again.  It never wakes late by more than one step's rounding and never returns
 * early.  The clock's owner gone (the process exited): done.  On a signal, -EINTR with the
 * CPU time still missing in *urem (relative sleeps). */
static long cpu_clock_sleep(const struct cpu_clock *c, uint64_t deadline_ns, uint64_t urem)
{
    for (;;) {
        uint64_t now_ns;
        unsigned runners;
        if (cpu_clock_read(c, false, &now_ns, &runners) != 0 || now_ns >= deadline_ns) {
            return 0;
        }
        uint64_t step = MAX(cycles_from_ns((deadline_ns - now_ns) / runners), 1);
        int r = sleep_until(arch_counter_read() + step);
        if (r == -EINTR) {
            if (urem && cpu_clock_read(c, false, &now_ns, 0) == 0) {
                write_ns(urem, now_ns < deadline_ns ? deadline_ns - now_ns : 0);
            }
            return r;
        }
    }
}

long sys_clock_nanosleep(struct trap_frame *f)
{
    int clk = (int)arch_frame_arg(f, 0);
    bool abs = (arch_frame_arg(f, 1) & ZT_TIMER_ABSTIME) !=
               0; /* other flag bits are ignored, as on Linux */
    struct timespec_k ts;
    struct cpu_clock c;
    uint64_t now_ns;
    int r = zt_clock_nanosleep_error(clk, current()->tid);
    if (r == 0 && !zt_clock_is_counter_time(clk)) {
        r = cpu_clock_decode(clk, &c) ? cpu_clock_read(&c, false, &now_ns, 0) : -EINVAL;
    }
    if (r == 0) {
        r = systime_read_timespec(arch_frame_arg(f, 2), &ts);
    }
    if (r) {
        return r;
    }
    uint64_t want_ns = (uint64_t)ts.sec * NS_PER_SEC + (uint64_t)ts.nsec;
    if (!zt_clock_is_counter_time(clk)) {
        return cpu_clock_sleep(&c, abs ? want_ns : now_ns + want_ns,
                               abs ? 0 : arch_frame_arg(f, 3));
    }
    if (!abs) {
        return sleep_and_report(arch_counter_read() + timespec_to_cycles(&ts),
                                arch_frame_arg(f, 3));
    }
    bool wall = zt_clock_kind(clk) == ZT_CLOCK_WALL;
    return sleep_and_report(wall ? clock_wall_to_counter(want_ns) : cycles_from_ns(want_ns), 0);
}
