/* SPDX-License-Identifier: MIT */
/*
 * prctl.c — prctl(2): the thread's name, task isolation (isolate.c), and the settings test
 * harnesses and real-time programs make, each checked as Linux checks it and kept:
 *
 *   PR_SET/GET_NAME            the thread's name (16 bytes, longer names cut)
 *   PR_SET/GET_PDEATHSIG       a signal the process gets when its parent process exits
 *                              (Linux: when the parent thread exits; here the whole process)
 *   PR_SET/GET_DUMPABLE        0 or 1, kept and reported; there are no core dumps here
 *   PR_SET/GET_TIMERSLACK      kept and reported (default 50 us, Linux's); timers are exact
 *                              here and never slacked
 *   PR_SET/GET_NO_NEW_PRIVS    kept; one root user, no set-user-id programs: nothing changes
 *   PR_SET/GET_THP_DISABLE     kept; there are no transparent huge pages
 *   PR_GET_SECCOMP             0: no seccomp filter exists here
 *   PR_CAPBSET_READ            1 for every capability Linux 6.1 knows (0..40): one root user
 *   PR_SET/GET_TASK_ISOLATION  isolate.c
 * Anything else is -EINVAL, as Linux says for an option it does not know.
 *
 * Locks: the process's settings under proc_lock; the name is the calling thread's own.
 */
#include "arch.h"
#include "kernel/isolate.h"
#include "kernel/lib.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "uapi/zt_syscall.h"

#define PR_SET_PDEATHSIG    1
#define PR_GET_PDEATHSIG    2
#define PR_GET_DUMPABLE     3
#define PR_SET_DUMPABLE     4
#define PR_GET_SECCOMP      21
#define PR_CAPBSET_READ     23
#define PR_SET_TIMERSLACK   29
#define PR_GET_TIMERSLACK   30
#define PR_SET_NO_NEW_PRIVS 38
#define PR_GET_NO_NEW_PRIVS 39
#define PR_SET_THP_DISABLE  41
#define PR_GET_THP_DISABLE  42
#define CAP_LAST_CAP        40
#define DEFAULT_SLACK_NS    50000

static long set_name(uint64_t uname)
{
    char name[ZT_NAME_LEN];
    if (strncpy_from_user(current_vm(), name, uname, sizeof(name)) < 0) {
        name[sizeof(name) - 1] = 0; /* Linux truncates long names */
        if (copy_from_user(current_vm(), name, uname, sizeof(name) - 1)) {
            return -EFAULT;
        }
    }
    kstrlcpy(current()->name, name, sizeof(current()->name));
    return 0;
}

/* Store a process setting under proc_lock. */
static void set_locked_int(int *field, int v)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    *field = v;
    spin_unlock_irqrestore(&proc_lock, flags);
}

static void set_locked_bool(bool *field, bool v)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    *field = v;
    spin_unlock_irqrestore(&proc_lock, flags);
}

/* The options that only read a setting. */
static long get_option(struct trap_frame *f, struct process *p)
{
    int sig;
    switch (arch_frame_arg(f, 0)) {
    case PR_GET_PDEATHSIG:
        sig = __atomic_load_n(&p->pdeath_signal, __ATOMIC_RELAXED);
        return copy_to_user(current_vm(), arch_frame_arg(f, 1), &sig, sizeof(sig)) ? -EFAULT : 0;
    case PR_GET_DUMPABLE:
        return !__atomic_load_n(&p->not_dumpable, __ATOMIC_RELAXED);
    case PR_GET_SECCOMP:
        return 0;
    case PR_CAPBSET_READ:
        return arch_frame_arg(f, 1) <= CAP_LAST_CAP ? 1 : -EINVAL;
    case PR_GET_TIMERSLACK:
        return p->timer_slack_ns ? (long)p->timer_slack_ns : DEFAULT_SLACK_NS;
    case PR_GET_NO_NEW_PRIVS:
        return arch_frame_arg(f, 1) || arch_frame_arg(f, 2) || arch_frame_arg(f, 3) ||
                       arch_frame_arg(f, 4)
                   ? -EINVAL
                   : p->no_new_privs;
    case PR_GET_THP_DISABLE:
        return arch_frame_arg(f, 1) || arch_frame_arg(f, 2) || arch_frame_arg(f, 3) ||
                       arch_frame_arg(f, 4)
                   ? -EINVAL
                   : p->thp_disable;
    case PR_GET_NAME:
        return copy_to_user(current_vm(), arch_frame_arg(f, 1), current()->name, ZT_NAME_LEN)
                   ? -EFAULT
                   : 0;
    default:
        return -EINVAL;
    }
}

long sys_prctl(struct trap_frame *f)
{
    struct process *p = current()->proc;
    switch (arch_frame_arg(f, 0)) {
    case PR_SET_NAME:
        return set_name(arch_frame_arg(f, 1));
    case PR_SET_PDEATHSIG:
        if (arch_frame_arg(f, 1) > ZT_NSIG) {
            return -EINVAL;
        }
        set_locked_int(&p->pdeath_signal, (int)arch_frame_arg(f, 1));
        return 0;
    case PR_SET_DUMPABLE:
        if (arch_frame_arg(f, 1) > 1) {
            return -EINVAL;
        }
        set_locked_bool(&p->not_dumpable, arch_frame_arg(f, 1) == 0);
        return 0;
    case PR_SET_TIMERSLACK:
        p->timer_slack_ns = arch_frame_arg(f, 1); /* 0: back to the default */
        return 0;
    case PR_SET_NO_NEW_PRIVS:
        if (arch_frame_arg(f, 1) != 1 || arch_frame_arg(f, 2) || arch_frame_arg(f, 3) ||
            arch_frame_arg(f, 4)) {
            return -EINVAL;
        }
        set_locked_bool(&p->no_new_privs, true); /* once set, never cleared */
        return 0;
    case PR_SET_THP_DISABLE:
        if (arch_frame_arg(f, 2) || arch_frame_arg(f, 3) || arch_frame_arg(f, 4)) {
            return -EINVAL;
        }
        set_locked_bool(&p->thp_disable, arch_frame_arg(f, 1) != 0);
        return 0;
    case PR_SET_TASK_ISOLATION:
    case PR_GET_TASK_ISOLATION:
        return isol_prctl(arch_frame_arg(f, 0), arch_frame_arg(f, 1));
    default:
        return get_option(f, p);
    }
}
