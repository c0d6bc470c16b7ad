/* SPDX-License-Identifier: MIT */
/*
 * schedattr.c — the scheduling policy calls of Linux (sched_setscheduler, sched_getscheduler,
 * sched_setparam, sched_getparam, sched_get_priority_max/min, sched_rr_get_interval), which
 * real-time programs make first: cyclictest and oslat ask for SCHED_FIFO, and glibc's
 * pthread_create makes the call for a thread created with an explicit policy, failing the
 * creation if it fails.
 *
 * What the policies mean here.  zerotick has one scheduling class: the runnable tasks of a
 * CPU share it in turns of one time slice (1/hz s), and a CPU with one runnable task runs it
 * without a timer.  Every policy is accepted, checked as Linux checks it (SCHED_FIFO and
 * SCHED_RR with a priority 1..99, the others with 0; SCHED_DEADLINE only through
 * sched_setattr, which is not provided), recorded per thread, inherited by threads and
 * children (not by children with SCHED_RESET_ON_FORK) and reported (sched_getscheduler,
 * /proc/PID/stat's policy and rt_priority), but it changes no scheduling decision: a
 * real-time thread on housekeeping shares its CPU in slices like any other.  What real-time
 * programs want from SCHED_FIFO — nothing preempts them — a dataplane CPU gives its one task
 * whatever its policy (docs/isolation.md).  One root user: no privilege is needed.
 *
 * Locks: a thread's policy is written and read under proc_lock (task_find_locked).
 */
#include "kernel/schedattr.h"
#include "arch.h"
#include "kernel/cycles.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"

#define SCHED_OTHER         0
#define SCHED_FIFO          1
#define SCHED_RR            2
#define SCHED_BATCH         3
#define SCHED_IDLE          5
#define SCHED_RESET_ON_FORK 0x40000000
#define RT_PRIO_MAX         99

static bool is_rt(int policy)
{
    return policy == SCHED_FIFO || policy == SCHED_RR;
}

static bool policy_known(int policy)
{
    return policy == SCHED_OTHER || is_rt(policy) || policy == SCHED_BATCH || policy == SCHED_IDLE;
}

/* Is `prio` what `policy` takes (Linux: 1..99 for FIFO and RR, 0 for the others)? */
static bool prio_fits(int policy, int prio)
{
    return is_rt(policy) ? prio >= 1 && prio <= RT_PRIO_MAX : prio == 0;
}

/* The thread `pid` names (0: the caller), or NULL (proc_lock held). */
static struct task *target_locked(int pid)
{
    ASSERT_HELD(&proc_lock);
    return pid == 0 ? current() : task_find_locked(pid);
}

/* Set policy (or keep the current one when policy < 0) and priority of thread pid. */
static long set_sched(int pid, int policy, uint64_t uparam)
{
    int prio;
    bool reset = policy >= 0 && (policy & SCHED_RESET_ON_FORK);
    policy = policy >= 0 ? policy & ~SCHED_RESET_ON_FORK : policy;
    if (pid < 0 || !uparam || (policy >= 0 && !policy_known(policy))) {
        return -EINVAL;
    }
    if (copy_from_user(current_vm(), &prio, uparam, sizeof(prio))) {
        return -EFAULT;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = target_locked(pid);
    int keep = t ? t->sched_policy : 0;
    long r = !t ? -ESRCH : !prio_fits(policy >= 0 ? policy : keep, prio) ? -EINVAL : 0;
    if (r == 0) {
        t->sched_policy = (uint8_t)(policy >= 0 ? policy : keep);
        t->rt_priority = (uint8_t)prio;
        t->reset_on_fork = policy >= 0 ? reset : t->reset_on_fork;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

long sys_sched_setscheduler(struct trap_frame *f)
{
    int policy = (int)arch_frame_arg(f, 1);
    return policy < 0 ? -EINVAL
                      : set_sched((int)arch_frame_arg(f, 0), policy, arch_frame_arg(f, 2));
}

long sys_sched_setparam(struct trap_frame *f)
{
    return set_sched((int)arch_frame_arg(f, 0), -1, arch_frame_arg(f, 1));
}

/* Policy (with SCHED_RESET_ON_FORK) and priority of thread pid: 0 or -errno. */
static long get_sched(int pid, int *policy, int *prio)
{
    if (pid < 0) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = target_locked(pid);
    if (t) {
        *policy = t->sched_policy | (t->reset_on_fork ? SCHED_RESET_ON_FORK : 0);
        *prio = t->rt_priority;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return t ? 0 : -ESRCH;
}

long sys_sched_getscheduler(struct trap_frame *f)
{
    int policy, prio;
    long r = get_sched((int)arch_frame_arg(f, 0), &policy, &prio);
    return r ? r : policy;
}

long sys_sched_getparam(struct trap_frame *f)
{
    int policy, prio;
    long r = arch_frame_arg(f, 1) ? get_sched((int)arch_frame_arg(f, 0), &policy, &prio) : -EINVAL;
    if (r) {
        return r;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), &prio, sizeof(prio)) ? -EFAULT : 0;
}

long sys_sched_get_priority_max(struct trap_frame *f)
{
    int policy = (int)arch_frame_arg(f, 0);
    return !policy_known(policy) ? -EINVAL : is_rt(policy) ? RT_PRIO_MAX : 0;
}

long sys_sched_get_priority_min(struct trap_frame *f)
{
    int policy = (int)arch_frame_arg(f, 0);
    return !policy_known(policy) ? -EINVAL : is_rt(policy) ? 1 : 0;
}

/* The time slice a SCHED_RR (or any time-shared) thread gets: one slice, 1/hz s; a FIFO
 * thread's is 0 (it is never sliced, on Linux). */
long sys_sched_rr_get_interval(struct trap_frame *f)
{
    int policy, prio;
    long r = get_sched((int)arch_frame_arg(f, 0), &policy, &prio);
    if (r) {
        return r;
    }
    uint64_t ns =
        (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ? 0 : cycles_to_ns(timer_slice_cycles());
    int64_t ts[2] = {(int64_t)(ns / NS_PER_SEC), (int64_t)(ns % NS_PER_SEC)};
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), ts, sizeof(ts)) ? -EFAULT : 0;
}
