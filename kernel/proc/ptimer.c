/* SPDX-License-Identifier: MIT */
/*
 * ptimer.c — timers that signal a process: setitimer/getitimer (ITIMER_REAL, what glibc's
 * alarm() uses to bound a test) and the POSIX timers timer_create, timer_settime,
 * timer_gettime, timer_getoverrun and timer_delete (stress-ng's timer stressor).
 *
 * A timer is a kernel timer (timer.h) armed on the CPU of the thread that sets it, so a
 * thread on a dataplane CPU owns only timers it asked for, which interrupt no other CPU;
 * its callback runs in that CPU's timer interrupt, sends the signal (proc_lock) and, for an
 * interval timer, re-arms itself for the next period.  A period missed while the signal was
 * still pending counts as an overrun, reported by timer_getoverrun for the signal delivered
 * last, as Linux does.  Clocks: CLOCK_REALTIME and CLOCK_MONOTONIC, both counted by the one
 * counter (an absolute CLOCK_REALTIME time is turned into the counter's time with the wall
 * clock's offset at timer_settime, kernel/lib/clock.c); CPU-time clocks and
 * ITIMER_VIRTUAL/ITIMER_PROF are -EINVAL (no tick samples CPU time).  Notification: SIGEV_SIGNAL
 * (the process), SIGEV_THREAD_ID (one of its threads), SIGEV_NONE; SIGEV_THREAD, which glibc builds
 * on SIGEV_THREAD_ID and sigwaitinfo (-ENOSYS here), is refused by glibc's helper then.  The signal
 * carries its number and code only (as every signal here): not the timer's id or value.
 *
 * At most PTIMER_MAX POSIX timers a process (-EAGAIN past it), and ITIMER_REAL, all in one
 * page the process gets at its first timer and gives back when it is torn down (so no object
 * allocator class keeps memory for them).  They go at execve (POSIX timers; ITIMER_REAL
 * stays, as on Linux) and at teardown; a child of fork starts without any.
 *
 * Locks: proc_lock guards a process's table and every timer's fields; timer_cancel runs with
 * no lock held (the callback takes proc_lock), on a slot marked dying, which nothing finds
 * or reuses until the cancel has returned.
 */
#include "kernel/ptimer.h"
#include "arch.h"
#include "kernel/clock.h"
#include "kernel/cycles.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/vm.h"
#include "uapi/zt_clock.h"
#include "uapi/zt_errno.h"

#define ITIMER_REAL     0
#define SIGEV_SIGNAL    0
#define SIGEV_NONE      1
#define SIGEV_THREAD    2
#define SIGEV_THREAD_ID 4
#define REAL_SLOT       0 /* the table's slot for ITIMER_REAL; POSIX timer id n is slot n + 1 */
#define SECONDS_MAX     (1ll << 32)

enum slot_state { SLOT_FREE = 0, SLOT_LIVE, SLOT_DYING };

struct ptimer {
    struct timer timer;
    struct process *proc;
    enum slot_state state;
    int signo, notify, tid;
    int clock;             /* CLOCK_REALTIME or CLOCK_MONOTONIC: what an absolute time means */
    bool active;           /* set: it expires at `expires`; a firing that finds it clear, or */
    uint64_t expires;      /* finds the counter before `expires`, is a stale one: nothing */
    uint64_t interval;     /* counter cycles; 0: one shot */
    uint64_t overrun;      /* periods missed since the last signal was sent */
    uint64_t overrun_last; /* what timer_getoverrun says: for the signal sent last */
};

/* Slot REAL_SLOT is ITIMER_REAL, slot n + 1 POSIX timer n. */
struct ptimers {
    struct ptimer slot[PTIMER_MAX + 1];
};
_Static_assert(sizeof(struct ptimers) <= PAGE_SIZE, "a process's timers fit in a page");

/* ---- the callback ---- */

static bool is_pending_locked(const struct ptimer *pt, const struct task *t)
{
    ASSERT_HELD(&proc_lock);
    uint64_t bit = 1ull << (pt->signo - 1);
    return (pt->proc->sig_pending & bit) || (t && (t->sig_pending & bit));
}

/* The thread SIGEV_THREAD_ID names, if it is still one of the process's (proc_lock held). */
static struct task *target_thread_locked(const struct ptimer *pt)
{
    ASSERT_HELD(&proc_lock);
    struct task *t = pt->notify == SIGEV_THREAD_ID ? task_find_locked(pt->tid) : 0;
    return t && t->proc == pt->proc ? t : 0;
}

/* Timer interrupt of the CPU it is armed on (IRQs masked). */
static void ptimer_fire(struct timer *tm)
{
    ASSERT_IRQS_MASKED();
    struct ptimer *pt = container_of(tm, struct ptimer, timer);
    uint64_t now = arch_counter_read();
    spin_lock(&proc_lock);
    if (!pt->active || now < pt->expires) {
        spin_unlock(&proc_lock); /* disarmed, or set again while this callback waited */
        return;
    }
    pt->active = pt->interval != 0;
    struct task *t = target_thread_locked(pt);
    if (pt->notify == SIGEV_NONE || pt->proc->state != PROC_ALIVE) {
        /* nothing to tell */
    } else if (is_pending_locked(pt, t)) {
        pt->overrun++;
    } else {
        pt->overrun_last = pt->overrun;
        pt->overrun = 0;
        if (t) {
            signal_send_task_locked(t, pt->signo, &signal_info_kernel);
        } else if (pt->notify != SIGEV_THREAD_ID) {
            signal_send_proc_locked(pt->proc, pt->signo, &signal_info_kernel);
        }
    }
    if (pt->interval) {
        uint64_t next = pt->expires + pt->interval;
        if (next <= now) { /* periods that passed unseen (a long interrupt-masked stretch) */
            uint64_t missed = (now - next) / pt->interval + 1;
            pt->overrun += missed;
            next += missed * pt->interval;
        }
        pt->expires = next;
        timer_arm(tm, next);
    }
    spin_unlock(&proc_lock);
}

/* ---- the table ---- */

/* The process's table, made on first use; NULL when out of memory.  No lock held. */
static struct ptimers *table(struct process *p)
{
    struct ptimers *tab = __atomic_load_n(&p->timers, __ATOMIC_ACQUIRE);
    if (tab) {
        return tab;
    }
    paddr_t pa = page_alloc(); /* zeroed: every slot free */
    struct ptimers *fresh = pa ? phys_to_virt(pa) : 0;
    if (!fresh) {
        return 0;
    }
    if (!__atomic_compare_exchange_n(&p->timers, &tab, fresh, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        page_free(pa); /* another thread made it first */
        return tab;
    }
    return fresh;
}

/* Make slot i a live timer (proc_lock held); false if it is taken. */
static bool claim_locked(struct ptimers *tab, int i, struct process *p, int signo, int notify,
                         int tid)
{
    ASSERT_HELD(&proc_lock);
    struct ptimer *pt = &tab->slot[i];
    if (pt->state != SLOT_FREE) {
        return false;
    }
    memset(pt, 0, sizeof(*pt));
    timer_init(&pt->timer, ptimer_fire);
    pt->state = SLOT_LIVE;
    pt->proc = p;
    pt->signo = signo;
    pt->notify = notify;
    pt->tid = tid;
    return true;
}

/* Live timer i of tab (proc_lock held), or NULL. */
static struct ptimer *live_locked(struct ptimers *tab, int i)
{
    ASSERT_HELD(&proc_lock);
    return tab && tab->slot[i].state == SLOT_LIVE ? &tab->slot[i] : 0;
}

/* Take slot i out of use: true if it was live.  The timer is cancelled with no lock held,
 * and only then is the slot free again. */
static bool drop_slot(struct process *p, struct ptimers *tab, int i)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct ptimer *pt = live_locked(tab, i);
    if (pt) {
        pt->state = SLOT_DYING;
        pt->active = false;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (!pt) {
        return false;
    }
    timer_cancel(&pt->timer); /* waits if its callback runs elsewhere */
    flags = spin_lock_irqsave(&proc_lock);
    pt->state = SLOT_FREE;
    spin_unlock_irqrestore(&proc_lock, flags);
    return true;
}

/* Drop slots [from, to] of p's table. */
static void drop_slots(struct process *p, int from, int to)
{
    struct ptimers *tab = __atomic_load_n(&p->timers, __ATOMIC_ACQUIRE);
    for (int i = from; tab && i <= to; i++) {
        drop_slot(p, tab, i);
    }
}

void ptimer_exec(struct process *p)
{
    drop_slots(p, REAL_SLOT + 1, PTIMER_MAX);
}

void ptimer_exit(struct process *p)
{
    drop_slots(p, REAL_SLOT, PTIMER_MAX);
    struct ptimers *tab = p->timers;
    p->timers = 0;
    if (tab) {
        page_free(virt_to_phys(tab));
    }
}

/* ---- times ---- */

static bool valid_ts(const struct timespec_k *ts, int64_t unit_max)
{
    return ts->sec >= 0 && ts->sec <= SECONDS_MAX && ts->nsec >= 0 && ts->nsec < unit_max;
}

static uint64_t ts_cycles(const struct timespec_k *ts, uint64_t unit_ns)
{
    return cycles_from_ns((uint64_t)ts->sec * NS_PER_SEC + (uint64_t)ts->nsec * unit_ns);
}

static void cycles_ts(uint64_t cycles, struct timespec_k *ts, uint64_t unit_ns)
{
    uint64_t ns = cycles_to_ns(cycles);
    ts->sec = (int64_t)(ns / NS_PER_SEC);
    ts->nsec = (int64_t)(ns % NS_PER_SEC / unit_ns);
}

/* What is left of pt's period and its interval (proc_lock held). */
static void remaining_locked(const struct ptimer *pt, uint64_t *left, uint64_t *interval)
{
    ASSERT_HELD(&proc_lock);
    uint64_t now = arch_counter_read();
    *left = pt->active ? (pt->expires > now ? pt->expires - now : 1) : 0;
    *interval = pt->interval;
}

/* Arm pt for `value` cycles from now (or at `value` when absolute) with `interval`; value 0
 * disarms (a firing already under way then finds it inactive).  proc_lock held: the timer
 * goes on this CPU's queue. */
static void set_locked(struct ptimer *pt, uint64_t value, uint64_t interval, bool absolute)
{
    ASSERT_HELD(&proc_lock);
    pt->interval = interval;
    pt->overrun = pt->overrun_last = 0;
    pt->active = value != 0;
    if (value) {
        pt->expires = absolute ? MAX(value, 1) : arch_counter_read() + value;
        timer_arm(&pt->timer, pt->expires);
    }
}

/* ---- setitimer, getitimer ---- */

/* The times of slot i of p's table (zeros without a timer there): its interval and what is
 * left, each a timespec with `unit_ns` in its second field (1000: a timeval). */
static bool times_of(struct process *p, int i, struct timespec_k v[2], uint64_t unit_ns)
{
    uint64_t left = 0, interval = 0;
    struct ptimers *tab = __atomic_load_n(&p->timers, __ATOMIC_ACQUIRE);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct ptimer *pt = live_locked(tab, i);
    if (pt) {
        remaining_locked(pt, &left, &interval);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    cycles_ts(interval, &v[0], unit_ns);
    cycles_ts(left, &v[1], unit_ns);
    return pt != 0;
}

long sys_getitimer(struct trap_frame *f)
{
    struct timespec_k v[2];
    if (arch_frame_arg(f, 0) != ITIMER_REAL) {
        return -EINVAL;
    }
    times_of(current()->proc, REAL_SLOT, v, 1000);
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), v, sizeof(v))
               ? -EFAULT
               : 0; /* struct itimerval */
}

long sys_setitimer(struct trap_frame *f)
{
    struct timespec_k v[2], old[2];
    struct process *p = current()->proc;
    if (arch_frame_arg(f, 0) != ITIMER_REAL) {
        return -EINVAL;
    }
    if (arch_frame_arg(f, 1) && copy_from_user(current_vm(), v, arch_frame_arg(f, 1), sizeof(v))) {
        return -EFAULT;
    }
    if (arch_frame_arg(f, 1) && (!valid_ts(&v[0], 1000000) || !valid_ts(&v[1], 1000000))) {
        return -EINVAL;
    }
    if (arch_frame_arg(f, 2) &&
        vm_check_range(current_vm(), arch_frame_arg(f, 2), sizeof(old), PROT_WRITE)) {
        return -EFAULT;
    }
    struct ptimers *tab = table(p);
    if (!tab) {
        return -ENOMEM;
    }
    times_of(p, REAL_SLOT, old, 1000);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    claim_locked(tab, REAL_SLOT, p, SIGALRM, SIGEV_SIGNAL, 0); /* unless it is there */
    struct ptimer *pt = live_locked(tab, REAL_SLOT);
    if (arch_frame_arg(f, 1) && pt) {
        set_locked(pt, ts_cycles(&v[1], 1000), ts_cycles(&v[0], 1000), false);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (!pt) {
        return -EBUSY; /* being taken down by exec in another thread */
    }
    return arch_frame_arg(f, 2) &&
                   copy_to_user(current_vm(), arch_frame_arg(f, 2), old, sizeof(old))
               ? -EFAULT
               : 0;
}

/* ---- POSIX timers ---- */

/* struct sigevent's start: value (8 bytes), signo, notify, then the thread id. */
struct sigevent_k {
    uint64_t value;
    int32_t signo, notify, tid;
};

static bool clock_ok(int clk)
{
    return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC;
}

/* A free slot of tab made a live timer (proc_lock held): the new timer's id, or -1. */
static int place_locked(struct ptimers *tab, struct process *p, const struct sigevent_k *ev)
{
    ASSERT_HELD(&proc_lock);
    for (int i = REAL_SLOT + 1; i <= PTIMER_MAX; i++) {
        if (claim_locked(tab, i, p, ev->signo, ev->notify, ev->tid)) {
            return i - 1;
        }
    }
    return -1;
}

long sys_timer_create(struct trap_frame *f)
{
    struct sigevent_k ev = {0, SIGALRM, SIGEV_SIGNAL, 0};
    struct process *p = current()->proc;
    if (!clock_ok((int)arch_frame_arg(f, 0))) {
        return -EINVAL;
    }
    if (arch_frame_arg(f, 1) &&
        copy_from_user(current_vm(), &ev, arch_frame_arg(f, 1), sizeof(ev))) {
        return -EFAULT;
    }
    bool signals = ev.notify == SIGEV_SIGNAL || ev.notify == SIGEV_THREAD_ID;
    if ((!signals && ev.notify != SIGEV_NONE) ||
        (signals && (ev.signo < 1 || ev.signo > ZT_NSIG))) {
        return -EINVAL; /* SIGEV_THREAD is glibc's, built on SIGEV_THREAD_ID */
    }
    if (vm_check_range(current_vm(), arch_frame_arg(f, 2), sizeof(int), PROT_WRITE)) {
        return -EFAULT;
    }
    struct ptimers *tab = table(p);
    if (!tab) {
        return -ENOMEM;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = ev.notify == SIGEV_THREAD_ID ? task_find_locked(ev.tid) : 0;
    bool thread_ok = ev.notify != SIGEV_THREAD_ID || (t && t->proc == p);
    int id = thread_ok ? place_locked(tab, p, &ev) : -1;
    if (id >= 0) {
        tab->slot[id + 1].clock = (int)arch_frame_arg(f, 0);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (id < 0) {
        return thread_ok ? -EAGAIN : -EINVAL;
    }
    if (copy_to_user(current_vm(), arch_frame_arg(f, 2), &id, sizeof(id))) {
        drop_slots(p, id + 1, id + 1); /* unmapped since the check */
        return -EFAULT;
    }
    return 0;
}

/* POSIX timer `id` of the caller's process (proc_lock held), or NULL. */
static struct ptimer *posix_timer_locked(long id)
{
    ASSERT_HELD(&proc_lock);
    struct ptimers *tab = current()->proc->timers;
    return id >= 0 && id < PTIMER_MAX ? live_locked(tab, (int)id + 1) : 0;
}

long sys_timer_settime(struct trap_frame *f)
{
    struct timespec_k v[2], old[2] = {{0, 0}, {0, 0}};
    if (arch_frame_arg(f, 1) & ~(uint64_t)TIMER_ABSTIME) {
        return -EINVAL;
    }
    if (copy_from_user(current_vm(), v, arch_frame_arg(f, 2), sizeof(v))) {
        return -EFAULT;
    }
    if (!valid_ts(&v[0], NS_PER_SEC) || !valid_ts(&v[1], NS_PER_SEC)) {
        return -EINVAL;
    }
    if (arch_frame_arg(f, 3) &&
        vm_check_range(current_vm(), arch_frame_arg(f, 3), sizeof(old), PROT_WRITE)) {
        return -EFAULT;
    }
    bool absolute = arch_frame_arg(f, 1) & TIMER_ABSTIME;
    uint64_t value = v[1].sec || v[1].nsec ? MAX(ts_cycles(&v[1], 1), 1) : 0;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct ptimer *pt = posix_timer_locked((long)arch_frame_arg(f, 0));
    if (pt) {
        uint64_t left, interval;
        remaining_locked(pt, &left, &interval);
        cycles_ts(interval, &old[0], 1);
        cycles_ts(left, &old[1], 1);
        if (absolute && value && pt->clock == CLOCK_REALTIME) { /* a wall time: the counter's */
            uint64_t ns = (uint64_t)v[1].sec * NS_PER_SEC + (uint64_t)v[1].nsec;
            value = MAX(clock_wall_to_counter(ns), 1);
        }
        set_locked(pt, value, ts_cycles(&v[0], 1), absolute);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (!pt) {
        return -EINVAL;
    }
    return arch_frame_arg(f, 3) &&
                   copy_to_user(current_vm(), arch_frame_arg(f, 3), old, sizeof(old))
               ? -EFAULT
               : 0;
}

long sys_timer_gettime(struct trap_frame *f)
{
    struct timespec_k v[2];
    long id = (long)arch_frame_arg(f, 0);
    if (id < 0 || id >= PTIMER_MAX || !times_of(current()->proc, (int)id + 1, v, 1)) {
        return -EINVAL;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), v, sizeof(v)) ? -EFAULT
                                                                          : 0; /* itimerspec */
}

long sys_timer_getoverrun(struct trap_frame *f)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct ptimer *pt = posix_timer_locked((long)arch_frame_arg(f, 0));
    uint64_t n = pt ? pt->overrun_last : 0;
    spin_unlock_irqrestore(&proc_lock, flags);
    return pt ? (long)MIN(n, (uint64_t)INT32_MAX) : -EINVAL; /* DELAYTIMER_MAX */
}

long sys_timer_delete(struct trap_frame *f)
{
    long id = (long)arch_frame_arg(f, 0);
    struct process *p = current()->proc;
    struct ptimers *tab = __atomic_load_n(&p->timers, __ATOMIC_ACQUIRE);
    return tab && id >= 0 && id < PTIMER_MAX && drop_slot(p, tab, (int)id + 1) ? 0 : -EINVAL;
}
