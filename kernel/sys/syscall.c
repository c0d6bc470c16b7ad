/* SPDX-License-Identifier: MIT */
/*
 * syscall.c — system-call dispatch and the calls that are only argument checking around
 * another module (ABI in include/uapi/zt_syscall.h).
 *
 * Every call checks all of its arguments before changing anything, returns -errno for
 * bad input, and reads or writes user memory only with copy_from_user/copy_to_user.
 * Runs in the calling task's context with IRQs enabled.
 */
#include "kernel/syscall.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/clock.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/device.h"
#include "kernel/exec.h"
#include "kernel/fd.h"
#include "kernel/filemap.h"
#include "kernel/fs_sys.h"
#include "kernel/futex.h"
#include "kernel/hwnoise.h"
#include "kernel/isolate.h"
#include "kernel/kcov.h"
#include "kernel/lib.h"
#include "kernel/mounts.h"
#include "kernel/owner.h"
#include "kernel/pipe.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/ptimer.h"
#include "kernel/repartition.h"
#include "kernel/sched.h"
#include "kernel/schedattr.h"
#include "kernel/signal.h"
#include "kernel/sysdebug.h"
#include "kernel/sysinfo.h"
#include "kernel/systime.h"
#include "kernel/task.h"
#include "kernel/trace.h"
#include "kernel/wait.h"
#include "uapi/zt_clock.h" /* the clock-id rules the vDSO shares */
#include "uapi/zt_debug.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "uapi/zt_syscall.h"

/* ---- identity and scheduling ---- */

static long sys_getpid(struct trap_frame *f)
{
    return current()->proc->pid;
}

static long sys_getppid(struct trap_frame *f)
{
    struct process *parent = current()->proc->parent;
    return parent ? parent->pid : 0;
}

static long sys_gettid(struct trap_frame *f)
{
    return current()->tid;
}

static long sys_sched_yield(struct trap_frame *f)
{
    sched_yield_current();
    return 0;
}

static long sys_getcpu(struct trap_frame *f)
{
    unsigned cpu = this_cpu_id(), node = 0;
    if (arch_frame_arg(f, 0) &&
        copy_to_user(current_vm(), arch_frame_arg(f, 0), &cpu, sizeof(cpu))) {
        return -EFAULT;
    }
    if (arch_frame_arg(f, 1) &&
        copy_to_user(current_vm(), arch_frame_arg(f, 1), &node, sizeof(node))) {
        return -EFAULT;
    }
    return 0;
}

/* The task `tid` names (0 = the caller); proc_lock held by the caller. */
static struct task *task_of(int tid)
{
    ASSERT_HELD(&proc_lock);
    return tid == 0 ? current() : tid > 0 ? task_find_locked(tid) : 0;
}

/* As Linux: a mask shorter than the kernel's has its missing CPUs cleared, a longer one is
 * read only as far as the kernel's (CPUs past MAX_CPUS do not exist). */
static long sys_sched_setaffinity(struct trap_frame *f)
{
    cpumask_t mask = CPUMASK_NONE;
    if (copy_from_user(current_vm(), &mask, arch_frame_arg(f, 2),
                       MIN(arch_frame_arg(f, 1), sizeof(mask)))) {
        return -EFAULT;
    }
    mask = cpumask_and(mask, cpumask_load(&cpus_online));
    if (cpumask_empty(mask)) {
        return -EINVAL;
    }
    struct sched_move move;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = task_of((int)arch_frame_arg(f, 0));
    long r = t ? sched_set_affinity(t, mask, &move) : -ESRCH;
    spin_unlock_irqrestore(&proc_lock, flags);
    if (r == 0 && t == current()) {
        schedule(); /* move now if this CPU is no longer allowed */
    } else if (r == 0) {
        sched_wait_moved(&move); /* returns once it runs where it may (Linux does too) */
    }
    return r;
}

/* As Linux: the buffer must hold a bit for every CPU of the machine and be a whole number of
 * 64-bit words; what is written, and returned, is the words that cover the machine's CPUs
 * (8 bytes up to 64 CPUs, as before there were more), or fewer if the buffer is smaller. */
static long sys_sched_getaffinity(struct trap_frame *f)
{
    size_t machine = (ncpus + 63) / 64 * 8;
    if (arch_frame_arg(f, 1) < (ncpus + 7) / 8 || (arch_frame_arg(f, 1) & 7)) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = task_of((int)arch_frame_arg(f, 0));
    cpumask_t mask = t ? t->affinity : CPUMASK_NONE;
    spin_unlock_irqrestore(&proc_lock, flags);
    if (!t) {
        return -ESRCH;
    }
    size_t len = MIN(arch_frame_arg(f, 1), machine);
    return copy_to_user(current_vm(), arch_frame_arg(f, 2), &mask, len) ? -EFAULT : (long)len;
}

/* ---- memory ---- */

static long sys_mmap(struct trap_frame *f)
{
    unsigned flags = (unsigned)arch_frame_arg(f, 3);
    if (!(flags & MAP_ANONYMOUS)) { /* a file (filemap.c) */
        return filemap_mmap(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                            (unsigned)arch_frame_arg(f, 2), flags, (int)arch_frame_arg(f, 4),
                            arch_frame_arg(f, 5));
    }
    if ((flags & (MAP_SHARED | MAP_PRIVATE)) == MAP_SHARED && (long)arch_frame_arg(f, 4) == -1) {
        return filemap_mmap_anon_shared(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                                        (unsigned)arch_frame_arg(f, 2), flags);
    }
    return vm_mmap(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                   (unsigned)arch_frame_arg(f, 2), (unsigned)arch_frame_arg(f, 3),
                   (long)arch_frame_arg(f, 4), arch_frame_arg(f, 5));
}

static long sys_munmap(struct trap_frame *f)
{
    return vm_munmap(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1));
}

static long sys_brk(struct trap_frame *f)
{
    return vm_brk(current_vm(), arch_frame_arg(f, 0));
}

/* ---- threads, processes, signals ---- */

static long sys_exit(struct trap_frame *f)
{
    task_exit((int)((arch_frame_arg(f, 0) & 0xff) << 8));
}

static long sys_exit_group(struct trap_frame *f)
{
    proc_exit_group((int)((arch_frame_arg(f, 0) & 0xff) << 8));
}

static long sys_set_tid_address(struct trap_frame *f)
{
    current()->clear_child_tid = arch_frame_arg(f, 0);
    return current()->tid;
}

static long sys_clone(struct trap_frame *f)
{
    return task_clone(arch_frame_arg(f, 0), arch_frame_arg(f, 1), arch_frame_arg(f, 2),
                      arch_frame_arg(f, 3), arch_frame_arg(f, 4));
}

/* FUTEX_(CMP_)REQUEUE: instead of moving up to val2 waiters to uaddr2, wake them: a
 * waiter rechecks its word after any wakeup, so an early one only costs a retry. */
static long futex_requeue(struct trap_frame *f, bool cmp)
{
    uint32_t cur;
    int n = (int)arch_frame_arg(f, 2), n2 = (int)arch_frame_arg(f, 3);
    if (n < 0 || n2 < 0 || (arch_frame_arg(f, 4) & 3)) {
        return -EINVAL;
    }
    if (cmp && copy_from_user(current_vm(), &cur, arch_frame_arg(f, 0), sizeof(cur))) {
        return -EFAULT;
    }
    if (cmp && cur != (uint32_t)arch_frame_arg(f, 5)) {
        return -EAGAIN;
    }
    return futex_wake(current_vm(), arch_frame_arg(f, 0), n > INT32_MAX - n2 ? INT32_MAX : n + n2);
}

/* FUTEX_WAIT/WAKE and their _BITSET forms with the match-any bitset (what C libraries use
 * for plain and absolute-timeout waits); an absolute timeout is on CLOCK_MONOTONIC, or on
 * CLOCK_REALTIME (wall time, kernel/lib/clock.c) with FUTEX_CLOCK_REALTIME. */
static long sys_futex(struct trap_frame *f)
{
    int op = (int)arch_frame_arg(f, 1) & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    bool bitset = op == FUTEX_WAIT_BITSET || op == FUTEX_WAKE_BITSET;
    if (bitset && (uint32_t)arch_frame_arg(f, 5) != FUTEX_BITSET_MATCH_ANY) {
        return (uint32_t)arch_frame_arg(f, 5) == 0 ? -EINVAL
                                                   : -ENOSYS; /* selective wakeups: not done */
    }
    if (op == FUTEX_REQUEUE || op == FUTEX_CMP_REQUEUE) {
        return futex_requeue(f, op == FUTEX_CMP_REQUEUE);
    }
    if (op == FUTEX_WAKE || op == FUTEX_WAKE_BITSET) {
        return futex_wake(current_vm(), arch_frame_arg(f, 0),
                          (int)arch_frame_arg(f, 2) < 0 ? 0 : (int)arch_frame_arg(f, 2));
    }
    if (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET) {
        return -ENOSYS;
    }
    uint64_t deadline = 0;
    if (arch_frame_arg(f, 3)) {
        struct timespec_k ts;
        int r = systime_read_timespec(arch_frame_arg(f, 3), &ts);
        if (r) {
            return r;
        }
        uint64_t t = timespec_to_cycles(&ts);
        if (op == FUTEX_WAIT_BITSET && (arch_frame_arg(f, 1) & FUTEX_CLOCK_REALTIME)) {
            t = clock_wall_to_counter((uint64_t)ts.sec * NS_PER_SEC + (uint64_t)ts.nsec);
        }
        deadline = op == FUTEX_WAIT_BITSET ? MAX(t, 1) : arch_counter_read() + t; /* absolute */
    }
    return futex_wait(current_vm(), arch_frame_arg(f, 0), (uint32_t)arch_frame_arg(f, 2), deadline);
}

static long sys_wait4(struct trap_frame *f)
{
    int status = 0;
    uint64_t user = 0, sys = 0;
    if ((arch_frame_arg(f, 1) &&
         vm_check_range(current_vm(), arch_frame_arg(f, 1), sizeof(status), PROT_WRITE)) ||
        (arch_frame_arg(f, 3) &&
         vm_check_range(current_vm(), arch_frame_arg(f, 3), RUSAGE_BYTES, PROT_WRITE))) {
        return -EFAULT; /* checked before reaping: the child stays waitable */
    }
    int r = proc_wait((int)arch_frame_arg(f, 0), &status, (int)arch_frame_arg(f, 2), &user, &sys);
    if (r > 0 && arch_frame_arg(f, 1) &&
        copy_to_user(current_vm(), arch_frame_arg(f, 1), &status, sizeof(status))) {
        return -EFAULT;
    }
    if (r > 0 && arch_frame_arg(f, 3) && rusage_put(arch_frame_arg(f, 3), user, sys)) {
        return -EFAULT;
    }
    return r;
}

/* kill(pid > 0): that process (a zombie takes nothing, and the call succeeds: Linux); 0: the
 * caller's group; -1: every process but init and the caller; < -1: group -pid. */
static long sys_kill(struct trap_frame *f)
{
    int pid = (int)arch_frame_arg(f, 0), sig = (int)arch_frame_arg(f, 1);
    struct process *me = current()->proc;
    const struct sig_info info = signal_info_from_caller(SI_USER);
    if (sig < 0 || sig > ZT_NSIG || pid == INT32_MIN) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    long r;
    if (pid > 0) {
        struct process *p = proc_of_id_locked(pid);
        r = !p || p->pid != pid             ? -ESRCH
            : sig && p->state == PROC_ALIVE ? signal_send_proc_locked(p, sig, &info)
                                            : 0;
    } else if (pid == -1) {
        r = -ESRCH;
        list_for_each(pp, &all_procs) {
            struct process *p = container_of(pp, struct process, all_link);
            if (p->state == PROC_ALIVE && p->pid != 1 && p != me) {
                r = sig ? signal_send_proc_locked(p, sig, &info) : 0;
            }
        }
    } else {
        r = signal_send_pgrp_locked(pid ? -pid : me->pgid, sig, &info);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

/* Send sig with `info` to thread tid, of process tgid unless tgid is 0 (tkill); sig 0 checks
 * only.  -ESRCH, then -EINVAL for a bad signal, in Linux's order (do_send_specific). */
static long send_to_thread(int tgid, int tid, int sig, const struct sig_info *info)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = task_find_locked(tid);
    long r = (!t || (tgid && t->proc->pid != tgid)) ? -ESRCH
             : sig < 0 || sig > ZT_NSIG             ? -EINVAL
             : sig                                  ? signal_send_task_locked(t, sig, info)
                                                    : 0;
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

/* tgkill and tkill (what raise uses): si_code SI_TKILL, si_pid the caller's process. */
static long sys_tgkill(struct trap_frame *f)
{
    int tgid = (int)arch_frame_arg(f, 0), tid = (int)arch_frame_arg(f, 1),
        sig = (int)arch_frame_arg(f, 2);
    const struct sig_info info = signal_info_from_caller(SI_TKILL);
    return tgid <= 0 || tid <= 0 ? -EINVAL : send_to_thread(tgid, tid, sig, &info);
}

static long sys_tkill(struct trap_frame *f)
{
    int tid = (int)arch_frame_arg(f, 0), sig = (int)arch_frame_arg(f, 1);
    const struct sig_info info = signal_info_from_caller(SI_TKILL);
    return tid <= 0 ? -EINVAL : send_to_thread(0, tid, sig, &info);
}

/* rt_sigqueueinfo(pid, sig, info) and rt_tgsigqueueinfo(tgid, tid, sig, info): the signal
 * carries the caller's siginfo (si_code, si_pid, si_value; si_signo is sig, si_uid root's).
 * As on Linux, a caller may claim a kernel code (>= 0) or SI_TKILL only for a signal to
 * itself (-EPERM otherwise), so no process can pass for the kernel or a kill() (Linux's
 * kernel/signal.c, do_rt_sigqueueinfo).  Checked in Linux's order: -EFAULT, (-EINVAL for a
 * bad id,) -EPERM, -ESRCH, -EINVAL for a bad signal. */
static bool may_queue(const int32_t *raw, int target_tid)
{
    return !((raw[2] >= 0 || raw[2] == SI_TKILL) && target_tid != current()->tid);
}

static long sys_rt_sigqueueinfo(struct trap_frame *f)
{
    int pid = (int)arch_frame_arg(f, 0), sig = (int)arch_frame_arg(f, 1);
    int32_t raw[SIGINFO_BYTES / 4];
    if (copy_from_user(current_vm(), raw, arch_frame_arg(f, 2), sizeof(raw))) {
        return -EFAULT;
    }
    if (!may_queue(raw, pid)) {
        return -EPERM;
    }
    const struct sig_info info = signal_info_from_siginfo(sig, raw);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = pid > 0 ? task_find_locked(pid) : 0; /* any thread names its process */
    long r = !t                         ? -ESRCH
             : sig < 0 || sig > ZT_NSIG ? -EINVAL
             : sig                      ? signal_send_proc_locked(t->proc, sig, &info)
                                        : 0;
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

static long sys_rt_tgsigqueueinfo(struct trap_frame *f)
{
    int tgid = (int)arch_frame_arg(f, 0), tid = (int)arch_frame_arg(f, 1),
        sig = (int)arch_frame_arg(f, 2);
    int32_t raw[SIGINFO_BYTES / 4];
    if (copy_from_user(current_vm(), raw, arch_frame_arg(f, 3), sizeof(raw))) {
        return -EFAULT;
    }
    if (tgid <= 0 || tid <= 0) {
        return -EINVAL;
    }
    if (!may_queue(raw, tid)) {
        return -EPERM;
    }
    const struct sig_info info = signal_info_from_siginfo(sig, raw);
    return send_to_thread(tgid, tid, sig, &info);
}

static long sys_rt_sigaction_f(struct trap_frame *f)
{
    return sys_rt_sigaction((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), arch_frame_arg(f, 2),
                            arch_frame_arg(f, 3));
}

static long sys_rt_sigprocmask_f(struct trap_frame *f)
{
    return sys_rt_sigprocmask((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), arch_frame_arg(f, 2),
                              arch_frame_arg(f, 3));
}

static long sys_rt_sigreturn_f(struct trap_frame *f)
{
    return sys_rt_sigreturn(f);
}

static long sys_rt_sigsuspend_f(struct trap_frame *f)
{
    return sys_rt_sigsuspend(arch_frame_arg(f, 0), arch_frame_arg(f, 1));
}

static long sys_sigaltstack_f(struct trap_frame *f)
{
    return sys_sigaltstack(arch_frame_arg(f, 0), arch_frame_arg(f, 1));
}

static long sys_rt_sigpending_f(struct trap_frame *f)
{
    return sys_rt_sigpending(arch_frame_arg(f, 0), arch_frame_arg(f, 1));
}

static long sys_uname(struct trap_frame *f)
{
    static const char fields[6][65] = {ZT_SYSNAME, "zerotick", ZT_RELEASE, "tickless SMP kernel",
                                       "aarch64",  "(none)"};
    return copy_to_user(current_vm(), arch_frame_arg(f, 0), fields, sizeof(fields)) ? -EFAULT : 0;
}

struct syscall_entry {
    syscall_fn fn;
    const char *name; /* for isolation reports */
};

/*
 * The Linux calls: X(name, function, path).  path FAST: the call reads only its arguments
 * (x0-x5, x8) from the frame, writes only its result (x0) and leaves nothing for the way out
 * but what entry.c's exit check sees (signals, exit, a -ERESTARTSYS result), so the
 * system-call fast path (entry.c, vectors.S) may run it with the part of the frame it saved
 * (x0-x18, x30, the return address and state).  FULL: it reads or rewrites the rest of the
 * user registers (clone and fork copy them into the child, execve replaces them, rt_sigreturn
 * restores them, sigaltstack reads SP), or it leaves work for the slow exit (rt_sigsuspend,
 * ppoll and pselect6 set a temporary signal mask that the exit restores), so it runs after
 * the whole frame is saved and returns through the full exit.  A new call is FULL until
 * shown otherwise: the checked kernel fills the unsaved part of the frame with a poison value
 * on the fast path, so a FAST call that reads it fails loudly in make test.
 */
#define LINUX_CALLS(X)                                                                             \
    X(getcwd, sys_getcwd, FAST)                                                                    \
    X(dup, sys_dup, FAST)                                                                          \
    X(dup3, sys_dup3, FAST)                                                                        \
    X(fcntl, sys_fcntl, FAST)                                                                      \
    X(ioctl, sys_ioctl, FAST)                                                                      \
    X(mkdirat, sys_mkdirat, FAST)                                                                  \
    X(unlinkat, sys_unlinkat, FAST)                                                                \
    X(symlinkat, sys_symlinkat, FAST)                                                              \
    X(renameat, sys_renameat, FAST)                                                                \
    X(statfs, sys_statfs, FAST)                                                                    \
    X(fstatfs, sys_fstatfs, FAST)                                                                  \
    X(ftruncate, sys_ftruncate, FAST)                                                              \
    X(faccessat, sys_faccessat, FAST)                                                              \
    X(chdir, sys_chdir, FAST)                                                                      \
    X(fchdir, sys_fchdir, FAST)                                                                    \
    X(fchmod, sys_fchmod, FAST)                                                                    \
    X(fchownat, sys_fchownat, FAST)                                                                \
    X(fchown, sys_fchown, FAST)                                                                    \
    X(fchmodat, sys_fchmodat, FAST)                                                                \
    X(openat, sys_openat, FAST)                                                                    \
    X(close, sys_close, FAST)                                                                      \
    X(pipe2, sys_pipe2, FAST)                                                                      \
    X(getdents64, sys_getdents64, FAST)                                                            \
    X(lseek, sys_lseek, FAST)                                                                      \
    X(read, sys_read, FAST)                                                                        \
    X(write, sys_write, FAST)                                                                      \
    X(readv, sys_readv, FAST)                                                                      \
    X(writev, sys_writev, FAST)                                                                    \
    X(pread64, sys_pread64, FAST)                                                                  \
    X(pwrite64, sys_pwrite64, FAST)                                                                \
    X(pselect6, sys_pselect6, FULL)                                                                \
    X(ppoll, sys_ppoll, FULL)                                                                      \
    X(readlinkat, sys_readlinkat, FAST)                                                            \
    X(newfstatat, sys_newfstatat, FAST)                                                            \
    X(fstat, sys_fstat, FAST)                                                                      \
    X(fsync, sys_fsync, FAST)                                                                      \
    X(fdatasync, sys_fsync, FAST)                                                                  \
    X(utimensat, sys_utimensat, FAST)                                                              \
    X(exit, sys_exit, FAST)                                                                        \
    X(exit_group, sys_exit_group, FAST)                                                            \
    X(set_tid_address, sys_set_tid_address, FAST)                                                  \
    X(futex, sys_futex, FAST)                                                                      \
    X(set_robust_list, sys_set_robust_list, FAST)                                                  \
    X(nanosleep, sys_nanosleep, FAST)                                                              \
    X(getitimer, sys_getitimer, FAST)                                                              \
    X(setitimer, sys_setitimer, FAST)                                                              \
    X(timer_create, sys_timer_create, FAST)                                                        \
    X(timer_gettime, sys_timer_gettime, FAST)                                                      \
    X(timer_getoverrun, sys_timer_getoverrun, FAST)                                                \
    X(timer_settime, sys_timer_settime, FAST)                                                      \
    X(timer_delete, sys_timer_delete, FAST)                                                        \
    X(clock_gettime, sys_clock_gettime, FAST)                                                      \
    X(clock_getres, sys_clock_getres, FAST)                                                        \
    X(clock_nanosleep, sys_clock_nanosleep, FAST)                                                  \
    X(sched_setaffinity, sys_sched_setaffinity, FAST)                                              \
    X(sched_setparam, sys_sched_setparam, FAST)                                                    \
    X(sched_setscheduler, sys_sched_setscheduler, FAST)                                            \
    X(sched_getscheduler, sys_sched_getscheduler, FAST)                                            \
    X(sched_getparam, sys_sched_getparam, FAST)                                                    \
    X(sched_get_priority_max, sys_sched_get_priority_max, FAST)                                    \
    X(sched_get_priority_min, sys_sched_get_priority_min, FAST)                                    \
    X(sched_rr_get_interval, sys_sched_rr_get_interval, FAST)                                      \
    X(sched_getaffinity, sys_sched_getaffinity, FAST)                                              \
    X(sched_yield, sys_sched_yield, FAST)                                                          \
    X(kill, sys_kill, FAST)                                                                        \
    X(tkill, sys_tkill, FAST)                                                                      \
    X(tgkill, sys_tgkill, FAST)                                                                    \
    X(rt_sigqueueinfo, sys_rt_sigqueueinfo, FAST)                                                  \
    X(rt_tgsigqueueinfo, sys_rt_tgsigqueueinfo, FAST)                                              \
    X(sigaltstack, sys_sigaltstack_f, FULL)                                                        \
    X(rt_sigsuspend, sys_rt_sigsuspend_f, FULL)                                                    \
    X(rt_sigaction, sys_rt_sigaction_f, FAST)                                                      \
    X(rt_sigprocmask, sys_rt_sigprocmask_f, FAST)                                                  \
    X(rt_sigpending, sys_rt_sigpending_f, FAST)                                                    \
    X(rt_sigreturn, sys_rt_sigreturn_f, FULL)                                                      \
    X(setgid, sys_setid, FAST)                                                                     \
    X(setuid, sys_setid, FAST)                                                                     \
    X(getresuid, sys_getresid, FAST)                                                               \
    X(getresgid, sys_getresid, FAST)                                                               \
    X(times, sys_times, FAST)                                                                      \
    X(capget, sys_capget, FAST)                                                                    \
    X(capset, sys_capset, FAST)                                                                    \
    X(setpgid, sys_setpgid, FAST)                                                                  \
    X(getpgid, sys_getpgid, FAST)                                                                  \
    X(getsid, sys_getsid, FAST)                                                                    \
    X(setsid, sys_setsid, FAST)                                                                    \
    X(getgroups, sys_getgroups, FAST)                                                              \
    X(uname, sys_uname, FAST)                                                                      \
    X(getrlimit, sys_getrlimit, FAST)                                                              \
    X(setrlimit, sys_setrlimit, FAST)                                                              \
    X(getrusage, sys_getrusage, FAST)                                                              \
    X(umask, sys_umask, FAST)                                                                      \
    X(prctl, sys_prctl, FAST)                                                                      \
    X(getcpu, sys_getcpu, FAST)                                                                    \
    X(gettimeofday, sys_gettimeofday, FAST)                                                        \
    X(getpid, sys_getpid, FAST)                                                                    \
    X(getppid, sys_getppid, FAST)                                                                  \
    X(getuid, sys_getuid, FAST)                                                                    \
    X(geteuid, sys_getuid, FAST)                                                                   \
    X(getgid, sys_getuid, FAST)                                                                    \
    X(getegid, sys_getuid, FAST)                                                                   \
    X(gettid, sys_gettid, FAST)                                                                    \
    X(sysinfo, sys_sysinfo, FAST)                                                                  \
    X(brk, sys_brk, FAST)                                                                          \
    X(munmap, sys_munmap, FAST)                                                                    \
    X(clone, sys_clone, FULL)                                                                      \
    X(execve, sys_execve, FULL)                                                                    \
    X(mmap, sys_mmap, FAST)                                                                        \
    X(mprotect, sys_mprotect, FAST)                                                                \
    X(madvise, sys_madvise, FAST)                                                                  \
    X(msync, sys_msync, FAST)                                                                      \
    X(mbind, sys_mbind, FAST)                                                                      \
    X(get_mempolicy, sys_get_mempolicy, FAST)                                                      \
    X(set_mempolicy, sys_set_mempolicy, FAST)                                                      \
    X(mlock, sys_mlock, FAST)                                                                      \
    X(munlock, sys_munlock, FAST)                                                                  \
    X(mlockall, sys_mlockall, FAST)                                                                \
    X(munlockall, sys_munlockall, FAST)                                                            \
    X(wait4, sys_wait4, FAST)                                                                      \
    X(prlimit64, sys_prlimit64, FAST)                                                              \
    X(renameat2, sys_renameat2, FAST)                                                              \
    X(getrandom, sys_getrandom, FAST)                                                              \
    X(membarrier, sys_membarrier, FAST)                                                            \
    X(mlock2, sys_mlock2, FAST)                                                                    \
    X(statx, sys_statx, FAST)                                                                      \
    X(faccessat2, sys_faccessat2, FAST)

#define ENTRY_(name, fn, path)   [SYS_##name] = {fn, #name},
#define FAST_FN_FAST(name, fn)   [SYS_##name] = fn,
#define FAST_FN_FULL(name, fn)   /* not on the fast path */
#define FAST_FN_(name, fn, path) FAST_FN_##path(name, fn)
#define ZT_CALL(name)            [SYS_zt_##name - 1024] = {sys_zt_##name, "zt_" #name}

static const struct syscall_entry linux_calls[] = {LINUX_CALLS(ENTRY_)};

/* What the fast path may run, by number; NULL sends the call down the full path. */
const syscall_fn syscall_fast_table[SYSCALL_FAST_NR] = {LINUX_CALLS(FAST_FN_)};

static const struct syscall_entry zt_calls[] = {
    ZT_CALL(spawn),     ZT_CALL(tasks),    ZT_CALL(cpus),  ZT_CALL(poweroff),
    ZT_CALL(meminfo),   ZT_CALL(isolstat), ZT_CALL(trace), ZT_CALL(devices),
    ZT_CALL(claim),     ZT_CALL(release), /* device.c */
    ZT_CALL(partition),                   /* repartition.c */
    ZT_CALL(hwnoise),                     /* hwnoise.c */
    ZT_CALL(kcov),                        /* kcov.c (coverage kernel) */
    ZT_CALL(irqsoff),                     /* sysinfo.c (checked kernels) */
};

static const struct syscall_entry *lookup(uint64_t nr)
{
    if (nr < ARRAY_SIZE(linux_calls)) {
        return &linux_calls[nr];
    }
    if (nr >= 1024 && nr - 1024 < ARRAY_SIZE(zt_calls)) {
        return &zt_calls[nr - 1024];
    }
    return 0;
}

const char *syscall_name(uint64_t nr)
{
    const struct syscall_entry *e = lookup(nr);
    return e && e->name ? e->name : "unknown";
}

void syscall_dispatch(struct trap_frame *f, unsigned svc_imm)
{
    ASSERT_IRQS_MASKED(); /* the exception entry's state (syscall.h) */
    uint64_t nr = arch_frame_sysno(f);
    trace_event(ZT_TR_SYSCALL, nr, svc_imm);
    if (isol_syscall(nr, syscall_name(nr), f)) {
        arch_frame_set_return(f, (uint64_t)-EPERM); /* a strict violation: it does not run */
        return;
    }
    syscall_run(f);
}

void syscall_run(struct trap_frame *f)
{
    uint64_t nr = arch_frame_sysno(f);
    const struct syscall_entry *e = lookup(nr);
    syscall_fn fn = e ? e->fn : 0;
    ASSERT_IRQS_MASKED();
    arch_irq_enable(); /* system calls run with interrupts enabled */
    if (!fn) {
        sysdebug_unknown(nr);
    }
    struct task *t = current();
    t->sys_orig_x0 = arch_frame_arg(f, 0);
    long r = fn ? fn(f) : -ENOSYS;
    /* no call returns holding a lock */
    ASSERT(spin_held_count() == 0 && t == current());
    /* Settled on the way out (signal.c).  rt_sigreturn returns the x0 it restored, which is
     * the interrupted code's, not a result: a program holding -ERESTARTSYS there had its PC
     * moved back an instruction and x0 replaced after every handler (Linux: forget_syscall). */
    t->sys_restart = r == -ERESTARTSYS && nr != SYS_rt_sigreturn;
    arch_frame_set_return(f, (uint64_t)r);
    arch_irq_disable();
}
