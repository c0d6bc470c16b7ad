/* SPDX-License-Identifier: MIT */
/*
 * task.c — processes and tasks: spawn, clone, exit, wait (contract in include/kernel/task.h).
 *
 * Lock order: proc_lock -> wait queue locks -> run queue locks.  proc_lock guards the
 * process list and tree, every thread list, process state and signal state.  A task's
 * memory is freed by sched.c once it is off its CPU; a process's memory is freed by its
 * last exiting thread, and its struct by the parent's wait4.
 */
#include "kernel/task.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/device.h"
#include "kernel/exec.h"
#include "kernel/fd.h"
#include "kernel/futex.h"
#include "kernel/isolate.h"
#include "kernel/kmem.h"
#include "kernel/kstack.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/pid.h"
#include "kernel/power.h"
#include "kernel/printk.h"
#include "kernel/ptimer.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/tty.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"

spinlock_t proc_lock = SPINLOCK_INIT_RANK(LOCK_PROC);
struct list all_procs = LIST_INIT(all_procs);
struct process *init_proc;
static unsigned nprocs;           /* processes alive or zombie (not yet reaped) */
static uint64_t nprocs_created;   /* processes made since boot (/proc/stat) */
static unsigned max_procs = 4096; /* proc_set_limit: spawn says -EAGAIN past it */

/* Where a new user task's first instructions are: entry.c's return to user space, handed in
 * by main.c (docs/layout.md: entry.c is a layer above this file). */
static void (*user_first_run)(struct task *prev);

void task_set_first_run(void (*fn)(struct task *prev))
{
    user_first_run = fn;
}

void proc_set_limit(unsigned n)
{
    max_procs = n;
}

/* A task with a kernel stack whose first switch-in returns to user space via its frame. */
struct task *task_alloc(struct process *p, int tid)
{
    struct task *t = kmem_alloc(sizeof(*t));
    if (!t) {
        return 0;
    }
    t->sig_infos = kmem_alloc(ZT_NSIG * sizeof(struct sig_info));
    t->kstack_top = t->sig_infos ? kstack_alloc() : 0;
    if (!t->kstack_top) {
        kmem_free(t->sig_infos, ZT_NSIG * sizeof(struct sig_info));
        kmem_free(t, sizeof(*t));
        return 0;
    }
    t->tid = tid;
    t->proc = p;
    t->frame = (struct trap_frame *)(t->kstack_top - sizeof(struct trap_frame));
    t->state = TASK_WAKING;
    list_init(&t->rq_link);
    list_init(&t->wait_link);
    list_init(&t->thread_link);
    timer_init(&t->sleep_timer, 0);
    waitq_init(&t->sleep_wq);
    ASSERT(user_first_run); /* main.c hands it in before the first process */
    arch_context_init(&t->ctx, t->frame, user_first_run);
    return t;
}

struct task *kthread_start(const char *name, void (*fn)(void *arg), void *arg, cpumask_t affinity)
{
    int tid = pid_alloc();
    struct task *t = tid > 0 ? task_alloc(0, tid) : 0;
    if (!t) {
        if (tid > 0) {
            pid_free(tid);
        }
        return 0;
    }
    arch_context_init(&t->ctx, t->frame, sched_kthread_first_run);
    kstrlcpy(t->name, name, sizeof(t->name));
    t->kfn = fn;
    t->karg = arg;
    t->affinity = affinity;
    t->cpu = cpumask_first(affinity);
    sched_start_task(t);
    return t;
}

/* Give back a task's memory (never ran, or dead and off its CPU).  Under proc_lock: a
 * reader holding it (cpus, isolstat) may be looking at this task as some CPU's current. */
void task_panic_describe(void)
{
    const struct task *t = this_cpu()->current_task;
    if (t) {
        printk("panic: CPU %u was running %pE (tid %d%s)\n", this_cpu_id(), t->name, t->tid,
               t->proc ? "" : ", kernel");
    }
}

void task_release(struct task *t)
{
    ASSERT(t->state == TASK_WAKING || t->state == TASK_DEAD); /* never ran, or dead */
    ASSERT(!t->on_cpu && list_empty(&t->rq_link) && !t->waiting_on);
#ifdef ZT_COVER
    if (t->kcov) { /* its coverage bitmap (kernel/sys/kcov.c) */
        for (unsigned i = 0; i < t->kcov->npages; i++) {
            page_free(virt_to_phys(t->kcov->page[i]));
        }
        kmem_free(t->kcov, sizeof(*t->kcov));
    }
#endif
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    kstack_free(t->kstack_top);
    kmem_free(t->sig_infos, ZT_NSIG * sizeof(struct sig_info));
    kmem_free(t, sizeof(*t));
    spin_unlock_irqrestore(&proc_lock, flags);
}

static void proc_finish(struct process *p);

/* A dead task is off its CPU (sched.c calls this on the next task's stack): free it,
 * then make its exit visible. */
void task_free(struct task *t)
{
    struct process *p = t->proc;
    uint64_t ctid = t->clear_child_tid;
    ASSERT(t->state == TASK_DEAD && list_empty(&t->thread_link)); /* task_exit unlinked it */
    if (!p || t->tid != p->pid) {
        pid_free(t->tid); /* a process's own id stays taken until it is reaped */
    }
    task_release(t);
    if (!p) {
        return; /* a kernel thread */
    }
    if (ctid) {
        int zero = 0;
        if (copy_to_user(p->vm, ctid, &zero, sizeof(zero)) == 0) {
            futex_wake(p->vm, ctid, 1);
        }
    }
    unsigned left = __atomic_sub_fetch(&p->unfreed_tasks, 1, __ATOMIC_ACQ_REL);
    ASSERT(left != (unsigned)-1); /* each task is freed once */
    if (left == 0) {
        proc_finish(p);
    } else if (left == 1 && __atomic_load_n(&p->exec_task, __ATOMIC_ACQUIRE)) {
        waitq_wake_all(&p->exec_wq); /* execve waits for the last other thread */
    }
}

static void proc_teardown(struct work *w);

/* A new process record with its id and empty address space, limits and mask from
 * `parent` (defaults for init); no descriptors, directory or program yet (the creator sets
 * them).  0, or -EAGAIN (too many processes, or no id) / -ENOMEM. */
int proc_alloc(const char *name, const struct process *parent, struct vm *share,
               struct process **out)
{
    if (__atomic_add_fetch(&nprocs, 1, __ATOMIC_RELAXED) > max_procs) {
        __atomic_sub_fetch(&nprocs, 1, __ATOMIC_RELAXED);
        return -EAGAIN; /* zombies nobody reaps cannot fill memory */
    }
    struct process *p = kmem_alloc(sizeof(*p));
    struct sig_info *infos = p ? kmem_alloc(ZT_NSIG * sizeof(*infos)) : 0;
    int pid = infos ? pid_alloc() : -ENOMEM;
    if (pid >= 0) {
        p->vm = share ? share : vm_create(); /* share: the caller's vm_get */
    }
    if (pid < 0 || !p->vm) {
        if (pid > 0) {
            pid_free(pid);
        }
        kmem_free(infos, ZT_NSIG * sizeof(*infos));
        kmem_free(p, sizeof(*p));
        __atomic_sub_fetch(&nprocs, 1, __ATOMIC_RELAXED);
        return pid < 0 ? pid : -ENOMEM;
    }
    p->pid = pid;
    p->sig_infos = infos;
    p->start_cycles = arch_counter_read();
    __atomic_add_fetch(&nprocs_created, 1, __ATOMIC_RELAXED);
    kstrlcpy(p->name, name, sizeof(p->name));
    p->umask = parent ? parent->umask : 022;
    if (parent) {
        p->cap_eff_dropped = parent->cap_eff_dropped;
        p->cap_perm_dropped = parent->cap_perm_dropped;
        p->cap_inheritable = parent->cap_inheritable;
        p->mempolicy_mode = parent->mempolicy_mode;
        p->mempolicy_nodes = parent->mempolicy_nodes;
    }
    if (parent) {
        memcpy(p->rlimits, parent->rlimits, sizeof(p->rlimits));
    } else {
        rlimit_init_defaults(p->rlimits);
    }
    p->exit_signal = SIGCHLD;
    waitq_init(&p->vfork_wq);
    waitq_init(&p->exec_wq);
    list_init(&p->children);
    list_init(&p->sibling);
    list_init(&p->threads);
    list_init(&p->all_link);
    waitq_init(&p->child_exit);
    work_init(&p->teardown, "process teardown", proc_teardown);
    *out = p;
    return 0;
}

/* What a process holds besides memory: descriptors, directory, program. */
#ifdef ZT_HOST
/* Host tests only: called by proc_cwd_get between its read of p->cwd and the reference it
 * takes, so a test can play another thread's chdir at that moment (VFS-24). */
void (*proc_cwd_hook)(struct process *p);
#endif

struct inode *proc_cwd_get(struct process *p)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct inode *cwd = p->cwd;
#ifdef ZT_HOST
    if (proc_cwd_hook) {
        proc_cwd_hook(p);
    }
#endif
    inode_get(cwd);
    spin_unlock_irqrestore(&proc_lock, flags);
    return cwd;
}

void proc_set_cwd(struct process *p, struct inode *dir)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct inode *old = p->cwd;
    p->cwd = dir;
    spin_unlock_irqrestore(&proc_lock, flags);
    inode_put(old); /* a removed directory is freed here when nothing else holds it */
}

void proc_release_files(struct process *p)
{
    if (p->files) {
        fdtable_free(p->files);
        p->files = 0;
    }
    if (p->cwd) {
        inode_put(p->cwd);
        p->cwd = 0;
    }
    if (p->exe) {
        inode_put(p->exe);
        p->exe = 0;
    }
}

/* The record of a reaped process (or one that never started). */
void proc_free(struct process *p)
{
    ASSERT(p->unfreed_tasks == 0 && list_empty(&p->threads) && list_empty(&p->children));
    ASSERT(list_empty(&p->all_link) && list_empty(&p->sibling)); /* off every list */
    ASSERT(__atomic_load_n(&nprocs, __ATOMIC_RELAXED) > 0);
    pid_free(p->pid);
    kmem_free(p->sig_infos, ZT_NSIG * sizeof(struct sig_info));
    kmem_free(p, sizeof(*p));
    __atomic_sub_fetch(&nprocs, 1, __ATOMIC_RELAXED);
}

const char *path_basename(const char *path)
{
    const char *b = path;
    for (const char *s = path; *s; s++) {
        if (*s == '/') {
            b = s + 1;
        }
    }
    return b;
}

/* Load `path` into p's empty address space and prepare t to start it. */
static int load_program(struct process *p, struct task *t, const char *path,
                        const struct exec_strv *argv, const struct exec_strv *envp)
{
    struct exec_start start;
    int r = exec_load(p->vm, p->cwd, path, argv, envp, &start, &p->exe);
    if (r == 0) {
        arch_user_frame_init(t->frame, start.pc, start.sp);
    }
    return r;
}

/* Descriptors, directory, group and session of a new process: spawn inherits the
 * parent's (close-on-exec descriptors dropped); init gets the console as 0, 1 and 2, the
 * root, and is pid = pgid = sid 1. */
static int proc_inherit(struct process *p, struct process *parent)
{
    if (parent) {
        unsigned long flags = spin_lock_irqsave(&proc_lock);
        p->pgid = parent->pgid;
        p->sid = parent->sid;
        p->cwd = parent->cwd;
        inode_get(p->cwd);
        spin_unlock_irqrestore(&proc_lock, flags);
        p->files = fdtable_new(parent->files, true);
        return p->files ? 0 : -ENOMEM;
    }
    struct file *console;
    p->pgid = p->sid = p->pid;
    p->cwd = vfs_root;
    inode_get(p->cwd);
    p->files = fdtable_new(0, false);
    if (!p->files || devfs_open_console(&console) != 0) {
        return -ENOMEM;
    }
    for (int fd = 0; fd < 3; fd++) {
        fdtable_set(p->files, fd, console);
        if (fd < 2) {
            file_get(console);
        }
    }
    tty_set_foreground(p->pgid);
    return 0;
}

/* Create a process running `path`; parent NULL for init.  Returns it, or NULL and *err. */
static struct process *proc_create(struct process *parent, const char *path,
                                   const struct exec_strv *argv, const struct exec_strv *envp,
                                   cpumask_t affinity, int *err)
{
    struct process *p = 0;
    *err = proc_alloc(path_basename(path), parent, 0, &p);
    if (*err) {
        return 0;
    }
    struct task *t = task_alloc(p, p->pid);
    *err = t ? proc_inherit(p, parent) : -ENOMEM;
    if (*err == 0) {
        *err = load_program(p, t, path, argv, envp);
    }
    if (*err) {
        if (t) {
            task_release(t);
        }
        proc_release_files(p);
        vm_put(p->vm);
        proc_free(p);
        return 0;
    }
    kstrlcpy(t->name, p->name, sizeof(t->name));
    t->affinity = affinity;
    t->cpu = cpumask_first(affinity);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    proc_link_locked(p, parent, t);
    spin_unlock_irqrestore(&proc_lock, flags);
    sched_start_task(t);
    return p;
}

void proc_link_locked(struct process *p, struct process *parent, struct task *t)
{
    ASSERT_HELD(&proc_lock);
    ASSERT(list_empty(&p->threads) && list_empty(&p->all_link) && t->proc == p); /* new */
    p->parent = parent;
    if (parent) {
        list_add_tail(&parent->children, &p->sibling);
    }
    list_add_tail(&all_procs, &p->all_link);
    list_add_tail(&p->threads, &t->thread_link);
    p->nthreads = 1;
    p->unfreed_tasks = 1;
}

int proc_start_init(char *const argv[])
{
    int err;
    struct exec_strv args = {0, 0, argv}, env = {0, 0, exec_default_env};
    init_proc = proc_create(0, argv[0], &args, &env, cpus_housekeeping, &err);
    return init_proc ? init_proc->pid : err;
}

int proc_spawn(const char *path, const struct exec_strv *argv, const struct exec_strv *envp,
               cpumask_t affinity)
{
    int err;
    struct process *p = proc_create(current()->proc, path, argv, envp, affinity, &err);
    return p ? p->pid : err;
}

void task_copy_caller(struct task *t, const struct task *me, uint64_t flags, uint64_t stack,
                      uint64_t tls, uint64_t ctid)
{
    *t->frame = *me->frame; /* same registers, then: */
    arch_frame_set_return(t->frame, 0);
    if (stack) {
        arch_frame_set_sp(t->frame, stack);
    }
    arch_fpsimd_save(&t->fp);
    t->tls = (flags & CLONE_SETTLS) ? tls : arch_tls_read();
    t->clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    t->affinity = me->affinity;
    t->cpu = me->cpu;
    t->sig_blocked = me->sig_blocked;
    kstrlcpy(t->name, me->name, sizeof(t->name));
    bool keep = !me->reset_on_fork || (flags & CLONE_THREAD); /* threads keep it, as on Linux */
    t->sched_policy = keep ? me->sched_policy : 0;
    t->rt_priority = keep ? me->rt_priority : 0;
    t->reset_on_fork = keep && me->reset_on_fork;
}

int task_clone(uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid)
{
    if (!(flags & CLONE_THREAD)) {
        return proc_fork(flags, stack, ptid, tls, ctid);
    }
    const uint64_t need = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    const uint64_t known = need | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM | CLONE_SETTLS |
                           CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID |
                           CLONE_DETACHED;
    if ((flags & need) != need || (flags & ~known & ~0xffull) || (stack & 15) || !stack) {
        return -EINVAL;
    }
    struct task *me = current();
    struct process *p = me->proc;
    int tid = pid_alloc();
    if (tid < 0) {
        return tid;
    }
    if (((flags & CLONE_PARENT_SETTID) && copy_to_user(p->vm, ptid, &tid, sizeof(tid))) ||
        ((flags & CLONE_CHILD_SETTID) && copy_to_user(p->vm, ctid, &tid, sizeof(tid)))) {
        pid_free(tid);
        return -EFAULT;
    }
    struct task *t = task_alloc(p, tid);
    if (!t) {
        pid_free(tid);
        return -ENOMEM;
    }
    task_copy_caller(t, me, flags, stack, tls, ctid);
    unsigned long irq = spin_lock_irqsave(&proc_lock);
    if (p->exiting) {
        spin_unlock_irqrestore(&proc_lock, irq);
        task_release(t);
        pid_free(tid);
        return -EAGAIN;
    }
    list_add_tail(&p->threads, &t->thread_link);
    p->nthreads++;
    __atomic_add_fetch(&p->unfreed_tasks, 1, __ATOMIC_RELAXED);
    spin_unlock_irqrestore(&proc_lock, irq);
    sched_start_task(t);
    return tid;
}

/* Give p's children to init and wake init if one of them is already a zombie (proc_lock). */
static void reparent_children(struct process *p)
{
    ASSERT_HELD(&proc_lock);
    ASSERT(p != init_proc); /* init's end powers the machine off first */
    bool zombie = false;
    list_for_each_safe(pos, tmp, &p->children) {
        struct process *c = container_of(pos, struct process, sibling);
        if (c->pdeath_signal && c->state == PROC_ALIVE) {
            signal_send_proc_locked(c, c->pdeath_signal,
                                    &signal_info_kernel); /* prctl(PR_SET_PDEATHSIG) */
        }
        list_del(&c->sibling);
        c->parent = init_proc;
        list_add_tail(&init_proc->children, &c->sibling);
        zombie |= c->state == PROC_ZOMBIE;
    }
    if (zombie) {
        waitq_wake_all(&init_proc->child_exit);
    }
}

static int wstatus_code(int wstatus)
{
    return (wstatus & 0x7f) ? 128 + (wstatus & 0x7f) : (wstatus >> 8) & 0xff;
}

/* The process's last task has been freed: free its memory, become a zombie, tell the
 * parent (or power off, for init).  Deferred work, so a dataplane CPU whose task exited
 * spends no time tearing its address space down; no CPU has that space active any more. */
static void proc_teardown(struct work *w)
{
    struct process *p = container_of(w, struct process, teardown);
    ASSERT(p->unfreed_tasks == 0 && p->nthreads == 0 && p->state == PROC_ALIVE);
    ptimer_exit(p);        /* no timer of it fires from now on */
    device_release_all(p); /* reset its devices before their DMA pages are freed */
    vfork_release(p);      /* before it is a zombie: once reaped, p is gone */
    proc_release_files(p); /* pipe ends close now: readers see end of file */
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct vm *vm = p->vm;
    p->vm = 0; /* zt_tasks reads it under proc_lock */
    spin_unlock_irqrestore(&proc_lock, flags);
    vm_put(vm); /* the last user (no vfork child shares it) unmaps and frees it here */
    flags = spin_lock_irqsave(&proc_lock);
    p->wait_status = p->exiting ? p->exit_status_pending : p->last_exit_status;
    p->state = PROC_ZOMBIE;
    if (p == init_proc) {
        spin_unlock_irqrestore(&proc_lock, flags);
        int code = wstatus_code(p->wait_status);
        printk("init exited with status %d\n", code);
        power_off(code);
    }
    reparent_children(p);
    if (p->exit_signal) { /* CLD_EXITED with the exit code, or CLD_KILLED with the signal */
        bool killed = (p->wait_status & 0x7f) != 0;
        struct sig_info info = {
            killed ? CLD_KILLED : CLD_EXITED, p->pid,
            (uint64_t)(killed ? p->wait_status & 0x7f : (p->wait_status >> 8) & 0xff)};
        signal_send_proc_locked(p->parent, p->exit_signal, &info);
    }
    waitq_wake_all(&p->parent->child_exit); /* under proc_lock: the parent cannot go away */
    spin_unlock_irqrestore(&proc_lock, flags);
}

static void proc_finish(struct process *p)
{
    work_queue(&p->teardown);
}

_Noreturn void task_exit(int wstatus)
{
    struct task *t = current();
    struct process *p = t->proc;
    isol_release(t);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    ASSERT(p->nthreads > 0 && !list_empty(&t->thread_link));
    list_del(&t->thread_link);
    if (--p->nthreads == 0) {
        p->last_exit_status = wstatus;
    }
    uint64_t user, sys;
    acct_task_read(t, &user, &sys);
    p->dead_user_cycles += user;
    p->dead_sys_cycles += sys;
    spin_unlock_irqrestore(&proc_lock, flags);
    sched_exit_current(); /* task_free, on the next task, does the rest */
}

_Noreturn void proc_exit_group(int wstatus)
{
    struct task *me = current();
    struct process *p = me->proc;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    if (!p->exiting) {
        p->exiting = true;
        p->exit_status_pending = wstatus;
    }
    list_for_each(pos, &p->threads) {
        struct task *t = container_of(pos, struct task, thread_link);
        if (t != me) {
            signal_kick(t); /* it notices p->exiting on its way back to user space */
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    task_exit(wstatus);
}

/* Does child c match wait4's pid argument (me: the waiter)? */
static bool wait_matches(const struct process *me, const struct process *c, int pid)
{
    return pid == -1 || (pid > 0 && c->pid == pid) || (pid == 0 && c->pgid == me->pgid) ||
           (pid < -1 && c->pgid == -pid);
}

/* A child of `me` matching `pid` that is a zombie; *any set if one matches. */
static struct process *find_zombie(struct process *me, int pid, bool *any)
{
    ASSERT_HELD(&proc_lock);
    *any = false;
    list_for_each(pos, &me->children) {
        struct process *c = container_of(pos, struct process, sibling);
        if (wait_matches(me, c, pid)) {
            *any = true;
            if (c->state == PROC_ZOMBIE) {
                return c;
            }
        }
    }
    return 0;
}

int proc_wait(int pid, int *wstatus, int options, uint64_t *user, uint64_t *sys)
{
    struct process *me = current()->proc;
    const int known = WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WALL | __WCLONE;
    if (pid == INT32_MIN || (options & ~known)) {
        return -EINVAL;
    }
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&proc_lock);
        bool any;
        struct process *z = find_zombie(me, pid, &any);
        if (z) {
            ASSERT(z->parent == me);
            list_del(&z->sibling);
            list_del(&z->all_link);
            *user = z->dead_user_cycles + z->child_user_cycles;
            *sys = z->dead_sys_cycles + z->child_sys_cycles;
            me->child_user_cycles += *user;
            me->child_sys_cycles += *sys;
            spin_unlock_irqrestore(&proc_lock, flags);
            int zpid = z->pid;
            *wstatus = z->wait_status;
            proc_free(z);
            return zpid;
        }
        if (!any || (options & WNOHANG)) {
            spin_unlock_irqrestore(&proc_lock, flags);
            return any ? 0 : -ECHILD;
        }
        spin_lock(&me->child_exit.lock);
        spin_unlock(&proc_lock);
        int r = waitq_sleep_locked(&me->child_exit, flags, 0);
        if (r == -EINTR) {
            return -ERESTARTSYS;
        }
    }
}

struct task *task_find_locked(int tid)
{
    ASSERT_HELD(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        list_for_each(tp, &p->threads) {
            struct task *t = container_of(tp, struct task, thread_link);
            if (t->tid == tid) {
                return t;
            }
        }
    }
    return 0;
}

bool task_find_stranded(cpumask_t leaving, cpumask_t online_after, cpumask_t hk_after,
                        struct task_where *out)
{
    bool found = false;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        list_for_each(tp, &p->threads) {
            struct task *t = container_of(tp, struct task, thread_link);
            cpumask_t aff = cpumask_load(&t->affinity);
            unsigned cpu = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
            bool nowhere = !cpumask_intersects(aff, online_after);
            bool onto_dataplane = cpumask_has(leaving, cpu) && !cpumask_intersects(aff, hk_after);
            if (!found && t->state != TASK_DEAD && (nowhere || onto_dataplane)) {
                found = true;
                out->pid = p->pid;
                out->tid = t->tid;
                out->cpu = cpu;
                out->nowhere = nowhere;
                kstrlcpy(out->name, t->name, sizeof(out->name));
            }
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return found;
}

struct process *proc_find_locked(int pid)
{
    ASSERT_HELD(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        if (p->pid == pid && p->state == PROC_ALIVE) {
            return p;
        }
    }
    return 0;
}

struct process *proc_of_id_locked(int id)
{
    ASSERT_HELD(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        if (p->pid == id) {
            return p;
        }
    }
    struct task *t = task_find_locked(id);
    return t ? t->proc : 0;
}

void proc_for_each_locked(void (*fn)(struct process *p, void *arg), void *arg)
{
    ASSERT_HELD(&proc_lock);
    list_for_each(pp, &all_procs) {
        fn(container_of(pp, struct process, all_link), arg);
    }
}

uint64_t proc_created(void)
{
    return __atomic_load_n(&nprocs_created, __ATOMIC_RELAXED);
}

static char state_letter(const struct task *t)
{
    switch (t->state) {
    case TASK_RUNNABLE:
        return sched_current(t->cpu) == t ? 'R' : 'r';
    case TASK_SLEEPING:
        return 'S';
    case TASK_WAKING:
        return 'r';
    default:
        return 'Z';
    }
}

static void fill_info(struct zt_task_info *out, const struct process *p, const struct task *t)
{
    ASSERT_HELD(&proc_lock); /* the task and process cannot be freed meanwhile */
    uint64_t user = 0, sys = 0;
    out->pid = p->pid;
    out->ppid = p->parent ? p->parent->pid : 0;
    kstrlcpy(out->name, t ? t->name : p->name, sizeof(out->name));
    if (t) {
        acct_task_read(t, &user, &sys);
        out->tid = t->tid;
        out->cpu = (int32_t)t->cpu;
        out->state = state_letter(t);
        out->isolated = (uint8_t)t->isol_flags;
        cpumask_t aff = cpumask_load(&t->affinity);
        memcpy(&out->affinity, &aff, sizeof(out->affinity)); /* the same layout (cpu.c) */
    } else {
        out->tid = p->pid;
        out->cpu = -1;
        out->state = 'Z';
        user = p->dead_user_cycles;
        sys = p->dead_sys_cycles;
    }
    out->vm_regions = p->vm ? __atomic_load_n(&p->vm->nregions, __ATOMIC_RELAXED) : 0;
    out->vm_pages = p->vm ? __atomic_load_n(&p->vm->pages, __ATOMIC_RELAXED) : 0;
    out->user_ns = cycles_to_ns(user);
    out->sys_ns = cycles_to_ns(sys);
}

int task_list_info(struct zt_task_info *out, int skip, int n)
{
    int count = 0;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        if (p->state == PROC_ZOMBIE) {
            if (count >= skip && count - skip < n) {
                fill_info(&out[count - skip], p, 0);
            }
            count++;
            continue;
        }
        list_for_each(tp, &p->threads) {
            if (count >= skip && count - skip < n) {
                fill_info(&out[count - skip], p, container_of(tp, struct task, thread_link));
            }
            count++;
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return count;
}

bool pgrp_exists(int pgid)
{
    bool found = false;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        found |= p->pgid == pgid; /* zombies too: not yet reaped, still members */
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return found;
}

unsigned proc_count(void)
{
    unsigned n = 0;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    list_for_each(pp, &all_procs) {
        n++;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return n;
}
