/* SPDX-License-Identifier: MIT */
/*
 * fork.c — new processes as copies (clone without CLONE_THREAD: fork and vfork), the end of
 * execve (replacing the image), and process groups and sessions.
 *
 * fork copies the address space eagerly: zerotick has no copy-on-write, because a
 * dataplane task must never take a page fault it did not ask for.  So a fork costs a copy
 * of every mapped page (the kernel's counter and signal-return pages are shared).  vfork
 * (CLONE_VFORK, with or without CLONE_VM) is a fork whose parent waits until the child
 * execs or exits (or a signal comes); the child writes to a copy, not to the parent's memory
 * (a difference from Linux that only a program relying on vfork's sharing would notice).
 *
 * execve ends the other threads of the process first (they exit on their way back to user
 * space, as on an exit_group, and the caller waits until each has been freed), then moves
 * the new address space in; the caller becomes the main thread (its id the pid).
 *
 * Locks: proc_lock for the tree, groups and sessions.
 */
#include "arch.h"
#include "kernel/device.h"
#include "kernel/exec.h"
#include "kernel/fd.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/pid.h"
#include "kernel/ptimer.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define CLONE_VFORK 0x00004000

/* Descriptors, directory, program, signal actions, group and session from `me`. */
static int fork_state(struct process *p, struct process *me, int exit_signal)
{
    p->files = fdtable_new(me->files, false);
    if (!p->files) {
        return -ENOMEM;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    p->cwd = me->cwd;
    inode_get(p->cwd);
    p->exe = me->exe;
    if (p->exe) {
        inode_get(p->exe);
    }
    p->pgid = me->pgid;
    p->sid = me->sid;
    memcpy(p->sigactions, me->sigactions, sizeof(p->sigactions));
    spin_unlock_irqrestore(&proc_lock, flags);
    p->exit_signal = exit_signal;
    return 0;
}

/* The child's only task: the caller's registers with x0 = 0. */
static struct task *fork_task(struct process *p, struct task *me, uint64_t flags, uint64_t stack,
                              uint64_t tls, uint64_t ctid)
{
    struct task *t = task_alloc(p, p->pid);
    if (!t) {
        return 0;
    }
    task_copy_caller(t, me, flags, stack, tls, ctid);
    t->altstack_sp = me->altstack_sp; /* fork keeps the signal stack; a new thread has none */
    t->altstack_size = me->altstack_size;
    return t;
}

static void fork_undo(struct process *p, struct task *t)
{
    if (t) {
        task_release(t);
    }
    proc_release_files(p);
    vm_put(p->vm);
    proc_free(p);
}

/* Block every signal but SIGKILL (and SIGSTOP, fatal here) for a wait only they may end, as
 * Linux's killable waits: the rest stay pending until the mask comes back.  Returns the mask
 * to restore. */
static uint64_t block_all_but_fatal(struct task *me)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock); /* signal_kick reads it under it */
    uint64_t blocked = me->sig_blocked;
    me->sig_blocked = ~0ull;
    spin_unlock_irqrestore(&proc_lock, flags);
    return blocked;
}

static void restore_blocked(struct task *me, uint64_t blocked)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    me->sig_blocked = blocked;
    spin_unlock_irqrestore(&proc_lock, flags);
}

/* The parent of a CLONE_VFORK child waits until the child has exec'd or exited: the child runs
 * on its memory meanwhile.  Only a fatal signal ends the wait early (the parent dies then). */
static void vfork_wait(struct process *child)
{
    struct task *me = current();
    uint64_t blocked = block_all_but_fatal(me);
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&child->vfork_wq.lock);
        if (__atomic_load_n(&child->vfork_done, __ATOMIC_ACQUIRE)) {
            spin_unlock_irqrestore(&child->vfork_wq.lock, flags);
            break;
        }
        if (waitq_sleep_locked(&child->vfork_wq, flags, 0) == -EINTR) {
            break; /* SIGKILL or exit_group: the parent ends anyway */
        }
    }
    restore_blocked(me, blocked);
}

void vfork_release(struct process *p)
{
    unsigned long flags = spin_lock_irqsave(&p->vfork_wq.lock);
    __atomic_store_n(&p->vfork_done, true, __ATOMIC_RELEASE);
    waitq_wake_locked(&p->vfork_wq, 1 << 30);
    spin_unlock_irqrestore(&p->vfork_wq.lock, flags);
}

int proc_fork(uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
    const uint64_t known = CLONE_VM | CLONE_VFORK | CLONE_SETTLS | CLONE_PARENT_SETTID |
                           CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | 0xff;
    int exit_signal = (int)(flags & 0xff);
    if ((flags & ~known) || ((flags & CLONE_VM) && !(flags & CLONE_VFORK)) || (stack & 15) ||
        exit_signal > ZT_NSIG) {
        return -EINVAL; /* an address space is shared between processes only by vfork */
    }
    struct task *me = current(), *t = 0;
    struct process *parent = me->proc, *p = 0;
    bool share = flags & CLONE_VM; /* vfork: the child runs on the parent's address space */
    if (share) {
        vm_get(parent->vm);
    }
    int r = proc_alloc(parent->name, parent, share ? parent->vm : 0, &p);
    if (r) {
        if (share) {
            vm_put(parent->vm);
        }
        return r;
    }
    r = share ? 0 : vm_copy(p->vm, parent->vm);
    if (r == 0) {
        r = fork_state(p, parent, exit_signal);
    }
    if (r == 0) {
        t = fork_task(p, me, flags, stack, tls, ctid);
        r = t ? 0 : -ENOMEM;
    }
    int pid = p->pid;
    if (r == 0 && (flags & CLONE_CHILD_SETTID) && copy_to_user(p->vm, ctid, &pid, sizeof(pid))) {
        r = -EFAULT;
    }
    if (r == 0 && (flags & CLONE_PARENT_SETTID) &&
        copy_to_user(parent->vm, ptid, &pid, sizeof(pid))) {
        r = -EFAULT;
    }
    unsigned long irq = spin_lock_irqsave(&proc_lock);
    if (r == 0 && parent->exiting) {
        r = -EAGAIN;
    }
    if (r) {
        spin_unlock_irqrestore(&proc_lock, irq);
        fork_undo(p, t);
        return r;
    }
    proc_link_locked(p, parent, t);
    spin_unlock_irqrestore(&proc_lock, irq);
    sched_start_task(t);
    if (flags & CLONE_VFORK) {
        vfork_wait(p);
    }
    return pid;
}

/* ---- execve ---- */

/* Before execve replaces the image: every other thread of the process exits and is freed
 * (so none can touch the old address space again).  0, or -EAGAIN (an exit or another
 * execve is under way) / -EINTR (a fatal signal came meanwhile: the process is ending). */
int proc_end_other_threads(void)
{
    struct task *me = current();
    struct process *p = me->proc;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    if (p->exiting || p->exec_task) {
        spin_unlock_irqrestore(&proc_lock, flags);
        return -EAGAIN;
    }
    __atomic_store_n(&p->exec_task, me, __ATOMIC_RELEASE);
    list_for_each(pos, &p->threads) {
        struct task *t = container_of(pos, struct task, thread_link);
        if (t != me) {
            t->exec_kill = true;
            signal_kick(t); /* it exits on its way back to user space */
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    uint64_t blocked = block_all_but_fatal(me); /* only a fatal signal may end the wait */
    int r = 0;
    for (;;) {
        flags = spin_lock_irqsave(&p->exec_wq.lock);
        if (__atomic_load_n(&p->unfreed_tasks, __ATOMIC_ACQUIRE) == 1) {
            spin_unlock_irqrestore(&p->exec_wq.lock, flags);
            break;
        }
        if (waitq_sleep_locked(&p->exec_wq, flags, 0) == -EINTR) {
            r = -EINTR; /* SIGKILL or exit_group: the process ends anyway */
            break;
        }
    }
    restore_blocked(me, blocked);
    __atomic_store_n(&p->exec_task, 0, __ATOMIC_RELEASE);
    return r;
}

/* The thread that execs becomes the process's main thread: its id is the pid (the main
 * thread that held it has been freed). */
static void become_main_thread(struct task *t, struct process *p)
{
    if (t->tid == p->pid) {
        return;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    int old = t->tid;
    t->tid = p->pid;
    spin_unlock_irqrestore(&proc_lock, flags);
    pid_free(old);
}

/* Signal actions after exec: handlers back to the default, ignored signals stay ignored. */
static void reset_signals_locked(struct process *p, struct task *t)
{
    for (int i = 0; i < ZT_NSIG; i++) {
        struct sigaction_k *sa = &p->sigactions[i];
        if (sa->handler != SIG_IGN) {
            *sa = (struct sigaction_k){0, 0, 0, 0};
        }
    }
    t->altstack_sp = t->altstack_size = 0;
    t->altstack_flags = 0;
}

void proc_exec_commit(struct vm *vm, const struct exec_start *start, struct inode *exe,
                      const char *name)
{
    struct task *t = current();
    struct process *p = t->proc;
    static const struct arch_fpsimd zero_fp;
    /* A claimed device ends with the image that drove it: it would go on with the old image's
     * DMA addresses, into pages nothing maps any more, and a later zt_release would unmap
     * whatever the new image put at the old addresses.  Reset, unmap from the old image, free
     * (device.c's release path), before the old image is destroyed. */
    device_release_all(p);
    fdtable_close_on_exec(p->files);
    ptimer_exec(p); /* POSIX timers do not survive execve */
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    reset_signals_locked(p, t);
    p->cap_eff_dropped = p->cap_perm_dropped = 0; /* root's program holds every capability */
    struct inode *old_exe = p->exe;
    p->exe = exe;
    kstrlcpy(p->name, name, sizeof(p->name));
    kstrlcpy(t->name, name, sizeof(t->name));
    spin_unlock_irqrestore(&proc_lock, flags);
    /* The new address space replaces the old under proc_lock (zt_tasks reads p->vm under it)
     * with IRQs masked (no switch-in may activate the old one after this CPU left it).  The
     * old one is destroyed by its last user: here, unless a vfork parent shares it. */
    flags = spin_lock_irqsave(&proc_lock);
    struct vm *old = p->vm;
    p->vm = vm;
    arch_as_activate(&vm->as);
    spin_unlock_irqrestore(&proc_lock, flags);
    vm_put(old);
    if (old_exe) {
        inode_put(old_exe);
    }
    become_main_thread(t, p);
    arch_user_frame_init(t->frame, start->pc, start->sp);
    arch_tls_write(0);
    arch_fpsimd_restore(&zero_fp);
    t->clear_child_tid = 0;
    t->robust_list = 0;
    vfork_release(p);
}

/* ---- process groups and sessions ---- */

/* The process `pid` names for a group call (0: the caller), or NULL (proc_lock held). */
static struct process *target_locked(int pid)
{
    return pid == 0 ? current()->proc : proc_find_locked(pid);
}

long sys_setpgid(struct trap_frame *f)
{
    int pid = (int)arch_frame_arg(f, 0), pgid = (int)arch_frame_arg(f, 1);
    struct process *me = current()->proc;
    if (pid < 0 || pgid < 0) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = target_locked(pid);
    long r = !p                           ? -ESRCH
             : p != me && p->parent != me ? -ESRCH
             : p->sid != me->sid          ? -EPERM
             : p->pid == p->sid           ? -EPERM /* a session leader stays put */
                                          : 0;
    int want = pgid ? pgid : (p ? p->pid : 0);
    if (r == 0 && want != p->pid) {
        bool ok = false;
        list_for_each(pp, &all_procs) {
            struct process *q = container_of(pp, struct process, all_link);
            ok |= q->pgid == want && q->sid == me->sid; /* a zombie still holds its group */
        }
        r = ok ? 0 : -EPERM;
    }
    if (r == 0) {
        p->pgid = want;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

static long get_id(int pid, bool session)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = pid < 0 ? 0 : target_locked(pid);
    long r = !p ? -ESRCH : session ? p->sid : p->pgid;
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

long sys_getpgid(struct trap_frame *f)
{
    return get_id((int)arch_frame_arg(f, 0), false);
}

long sys_getsid(struct trap_frame *f)
{
    return get_id((int)arch_frame_arg(f, 0), true);
}

long sys_setsid(struct trap_frame *f)
{
    struct process *me = current()->proc;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    bool leader = false;
    list_for_each(pp, &all_procs) {
        struct process *q = container_of(pp, struct process, all_link);
        leader |= q->pgid == me->pid;
    }
    long r = leader ? -EPERM : me->pid;
    if (!leader) {
        me->pgid = me->sid = me->pid;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}
