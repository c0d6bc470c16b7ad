/* SPDX-License-Identifier: MIT */
/*
 * task.h — processes (an address space and the things its threads share) and tasks (one
 * thread each, the unit the scheduler runs).
 *
 * Lifetime: a process is created by spawn (proc_spawn) with one task; clone adds tasks.
 * A task that exits becomes TASK_DEAD and is freed by the next task to run on its CPU, once
 * it is off that CPU (sched.c, task_free).  Only then is its exit made visible: the
 * CLONE_CHILD_CLEARTID word is cleared and futex-woken, and when the last task of a process
 * is freed, the process frees its memory, becomes a zombie and wakes its parent; wait4
 * reaps it.  So whoever observes an exit also observes every page of it freed (the leak
 * tests count on this).  Orphans are given to init (pid 1).
 *
 * Locks (in this order when nested): proc_lock (global: the process tree, pids, thread
 * lists, exit/zombie transitions, signal state) -> a wait queue's lock -> a run queue lock.
 * A process's vm_lock is independent of these (never held while taking them).
 */
#ifndef ZT_KERNEL_TASK_H
#define ZT_KERNEL_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cpumask.h"
#include "kernel/list.h"
#include "kernel/spinlock.h"
#include "kernel/timer.h"
#include "kernel/vm.h"
#include "kernel/wait.h"
#include "kernel/work.h"
#include "uapi/zt_syscall.h"

enum task_state {
    TASK_RUNNABLE = 0, /* on a run queue, or running */
    TASK_SLEEPING,     /* blocked on a wait queue or timer; a wakeup makes it runnable */
    TASK_WAKING,       /* being placed on a run queue by its waker */
    TASK_DEAD,         /* exited; freed once off its CPU */
};

struct process;
struct fdtable;

struct sigaction_k {
    uint64_t handler; /* 0 = SIG_DFL, 1 = SIG_IGN, else user address */
    uint64_t flags;
    uint64_t restorer;
    uint64_t mask;
};

/* What a pending signal carries besides its number (the parts of Linux's siginfo zerotick
 * keeps; signal.c builds the rest): si_code, si_pid and one more word — si_value (sigqueue),
 * si_status (SIGCHLD) or si_addr (a fault).  si_uid is 0: there is one user, root. */
struct sig_info {
    int32_t code;
    int32_t pid;
    uint64_t value;
};

struct task {
    struct arch_context ctx; /* kernel registers while switched out */
    struct arch_fpsimd fp;   /* user FP/SIMD registers while switched out */
    uint64_t tls;            /* user TPIDR_EL0 while switched out */

    int tid;
    struct process *proc;   /* NULL for kernel threads and idle tasks */
    bool is_idle;           /* its CPU's idle task */
    void (*kfn)(void *arg); /* kernel threads: the function they run */
    void *karg;
    char name[ZT_NAME_LEN];

    /* scheduling (guarded by the run queue lock of `cpu`) */
    enum task_state state;
    bool on_cpu;       /* its registers are live on `cpu` (switch-out not finished) */
    bool need_migrate; /* its affinity no longer includes `cpu` */
    unsigned cpu;
    cpumask_t affinity;
    struct list rq_link; /* on its run queue while waiting to run */

    uint64_t kstack_top;
    struct trap_frame *frame; /* user registers, at the top of the kernel stack */

    /* blocking */
    struct waitq *waiting_on; /* wait queue it sleeps on (guarded by that queue's lock) */
    struct list wait_link;
    int wake_reason; /* 0 woken, -EINTR interrupted, -ETIMEDOUT timer */
    struct timer sleep_timer;
    struct waitq sleep_wq; /* what sleep_until sleeps on (nobody else waits there) */
    struct vm *futex_vm;   /* address space and user address it waits on in FUTEX_WAIT */
    uint64_t futex_uaddr;  /* (0 otherwise) */

    /* accounting, in counter cycles (acct.c): totals up to its last switch-out, and its CPU's
     * settled totals at its switch-in */
    uint64_t user_cycles;
    uint64_t sys_cycles;
    uint64_t acct_base_user;
    uint64_t acct_base_sys;

    /* threads */
    struct list thread_link;  /* in proc->threads (proc_lock) */
    uint64_t clear_child_tid; /* user address zeroed and futex-woken at exit */

    /* signals (proc_lock) */
    uint64_t sig_pending;       /* sent to this thread */
    struct sig_info *sig_infos; /* [ZT_NSIG]: what each pending one carries (task_alloc) */
    uint64_t sig_blocked;
    uint64_t saved_sigmask; /* sig_blocked to restore after rt_sigsuspend/ppoll/pselect6 */
    bool restore_sigmask;   /* ... when this is set (signal.c) */
    uint64_t altstack_sp, altstack_size; /* sigaltstack (0 size: none) */
    int altstack_flags;

    /* system calls */
    uint64_t sys_orig_x0; /* x0 at entry, for restarting an interrupted call */
    bool sys_restart;     /* the call returned -ERESTARTSYS: restart or -EINTR (signal.c) */
    bool exec_kill;       /* another thread of its process runs execve: exit (proc_lock) */
    uint64_t robust_list; /* set_robust_list head (recorded, not walked) */

    /* scheduling policy asked for (kernel/proc/schedattr.c: recorded, see there) */
    uint8_t sched_policy; /* SCHED_OTHER, _FIFO, _RR, _BATCH, _IDLE */
    uint8_t rt_priority;  /* 1..99 for FIFO and RR, else 0 */
    bool reset_on_fork;   /* SCHED_RESET_ON_FORK: children start as SCHED_OTHER */

    /* task isolation (isolate.c) */
    unsigned isol_flags; /* PR_TASK_ISOLATION_* while isolated, else 0 */
    unsigned isol_cpu;   /* the CPU whose isolation slot it holds (when isol_flags != 0) */

#ifdef ZT_COVER
    /* coverage kernel (kernel/sys/kcov.c): the blocks its system calls reached since it last
     * collected them (NULL: it does not record; freed with the task), and whether it is in a
     * system call now (between its entry and its return to user space) */
    struct kcov_task *kcov;
    bool kcov_in_call;
#endif
};

#ifdef ZT_COVER
/* A recording task's bitmap: one bit per 4-byte instruction slot of the kernel's text, in
 * pages of KCOV_BITS_PER_PAGE bits (no contiguous allocation needed). */
#define KCOV_MAX_PAGES     16
#define KCOV_BITS_PER_PAGE (PAGE_SIZE * 8)
struct kcov_task {
    unsigned npages;
    uint64_t *page[KCOV_MAX_PAGES];
};
#endif

enum proc_state {
    PROC_ALIVE = 0,
    PROC_ZOMBIE, /* all threads gone; exit status kept for wait4 */
};

/* Resource limits (prlimit64), Linux's numbering. */
#define RLIM_NLIMITS  16
#define RLIMIT_STACK  3
#define RLIMIT_NOFILE 7

struct rlimit_k {
    uint64_t cur, max;
};

/* Words of struct process's nosys_seen bitmap: one bit per system call number below
 * 64 * PROC_NOSYS_WORDS - 1, the last bit for every number above (kernel/sys/sysdebug.c). */
#define PROC_NOSYS_WORDS 8

struct process {
    int pid;
    int pgid, sid; /* process group and session (proc_lock) */
    char name[ZT_NAME_LEN];
    enum proc_state state;
    int wait_status;         /* Linux wait status once a zombie */
    bool exiting;            /* exit_group or fatal signal under way */
    int exit_status_pending; /* wait status exit_group chose */

    struct process *parent;
    struct list children;    /* its children (proc_lock) */
    struct list sibling;     /* in parent->children */
    struct list all_link;    /* in the list of all processes */
    struct waitq child_exit; /* the parent's wait4 sleeps here */

    struct list threads;    /* its tasks (proc_lock) */
    unsigned nthreads;      /* alive (not yet exited) */
    unsigned unfreed_tasks; /* tasks not yet freed; the last task_free ends the process */
    int last_exit_status;   /* wait status of the last thread to exit */

    struct vm *vm;        /* address space (vm.h): its own, or its vfork parent's until its
                             execve or exit (counted: vm_get/vm_put); NULL once torn down */
    struct work teardown; /* frees the memory and reports the exit, on housekeeping */

    uint64_t sig_pending;       /* sent to the process (proc_lock) */
    struct sig_info *sig_infos; /* [ZT_NSIG]: what each pending one carries (proc_alloc) */
    struct sigaction_k sigactions[ZT_NSIG];

    uint64_t nosys_seen[PROC_NOSYS_WORDS]; /* unimplemented calls reported (sysdebug.c) */

    struct fdtable *files; /* descriptors, shared by the threads (fd.h) */
    struct inode *cwd;     /* working directory (proc_lock; referenced): proc_cwd_get */
    struct inode *exe;     /* the program it runs (/proc/self/exe; referenced) */
    unsigned umask;
    struct rlimit_k rlimits[RLIM_NLIMITS]; /* proc_lock */
    int exit_signal;                       /* sent to the parent at exit (SIGCHLD or 0) */
    bool vfork_done;                       /* a vfork child has exec'd or exited */
    struct task *exec_task;                /* the thread in execve ending the others */
    struct waitq exec_wq;                  /* it waits here for them to be freed */
    struct waitq vfork_wq;                 /* its vfork parent sleeps here */
    uint64_t child_user_cycles;            /* times of reaped children (getrusage, times) */
    uint64_t child_sys_cycles;

    uint64_t dead_user_cycles; /* accounting of threads that already exited */
    uint64_t dead_sys_cycles;
    uint64_t start_cycles;  /* counter value when it was created (/proc/PID/stat) */
    struct ptimers *timers; /* setitimer and POSIX timers, made on first use (ptimer.c) */
    /* prctl settings (kernel/sys/prctl.c), proc_lock */
    int pdeath_signal;       /* sent to it when its parent process exits (0: none) */
    bool not_dumpable;       /* PR_SET_DUMPABLE 0 (there are no core dumps here) */
    bool no_new_privs;       /* PR_SET_NO_NEW_PRIVS (one user: nothing to gain anyway) */
    bool thp_disable;        /* PR_SET_THP_DISABLE (there are no huge pages) */
    uint64_t timer_slack_ns; /* PR_SET_TIMERSLACK (timers are exact here: reported only) */
    /* capset (sysmisc.c), proc_lock: the capabilities dropped from the effective and permitted
     * sets (0: root holds every one) and the inheritable set; kept across fork, reset at
     * execve (root regains them, as on Linux); nothing in zerotick checks them */
    uint64_t cap_eff_dropped, cap_perm_dropped, cap_inheritable;
    /* set_mempolicy (sysmisc.c), proc_lock: the policy asked for and its node mask; one memory
     * node (0) holds everything whatever it says; kept across fork and execve */
    int mempolicy_mode;
    uint64_t mempolicy_nodes;
};

extern spinlock_t proc_lock;

/* The task running on this CPU. */
static inline struct task *current(void)
{
    return this_cpu()->current_task;
}

/* The address space of the calling process (system calls: where user pointers point). */
static inline struct vm *current_vm(void)
{
    return current()->proc->vm;
}

struct exec_strv;
/* At most n processes alive or not yet reaped (boot: max_procs=); spawn says -EAGAIN past
 * it, so a parent that never reaps cannot fill memory with zombies. */
void proc_set_limit(unsigned n);

/* Start the first process: argv[0] (/bin/init) with `argv` (NULL-terminated) and the
 * default environment.  Returns its pid or -errno. */
int proc_start_init(char *const argv[]);

/* spawn(): a new process running `path` with argv and envp, child of the current process. */
int proc_spawn(const char *path, const struct exec_strv *argv, const struct exec_strv *envp,
               cpumask_t affinity);

/* clone(): with CLONE_THREAD a new task in the current process, else a new process that
 * is a copy of this one (fork; CLONE_VFORK: the caller waits until it execs or exits).
 * The child starts at the caller's frame with x0 = 0, SP = `stack` (0: the caller's).
 * Returns the new tid/pid or -errno. */
int task_clone(uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid);

/* execve's point of no return: the current process (one thread) takes the address space
 * `vm` (moved in and freed), starts at `start`, runs `exe` named `name`. */
struct exec_start;
struct inode;
void proc_exec_commit(struct vm *vm, const struct exec_start *start, struct inode *exe,
                      const char *name);
/* The working directory of p, referenced (inode_put when done).  p->cwd is read and changed
 * only under proc_lock: a thread that read the pointer without it could see another thread's
 * chdir drop the last reference to a removed directory before it took its own (issue 20,
 * item 3; VFS-24). */
struct inode *proc_cwd_get(struct process *p);
/* Make `dir` (referenced: the reference passes to p) p's working directory. */
void proc_set_cwd(struct process *p, struct inode *dir);
/* Does any process belong to process group `pgid`? */
bool pgrp_exists(int pgid);
/* Processes alive (sysinfo). */
unsigned proc_count(void);

/* End the current task (exit) or its whole process (exit_group) with Linux wait
 * status `wstatus` (exit code << 8, or signal number).  Never returns. */
_Noreturn void task_exit(int wstatus);
_Noreturn void proc_exit_group(int wstatus);

/* wait4 for the current process (pid: > 0 that child, -1 any, 0 the caller's group, < -1
 * group -pid).  Returns the reaped pid, 0 (WNOHANG, none ready) or -errno; fills *wstatus
 * and the child's user and system counter ticks (its own and its reaped children's). */
int proc_wait(int pid, int *wstatus, int options, uint64_t *user, uint64_t *sys);

/* Look up a task by tid / process by pid (proc_lock must be held). */
struct task *task_find_locked(int tid);
struct process *proc_find_locked(int pid);
/* The process whose id is `id`, a zombie too, or else the process of the thread `id`
 * (proc_lock held): what /proc/ID shows.  NULL if none. */
struct process *proc_of_id_locked(int id);
/* Call fn for every process, zombies included, in creation order (proc_lock held). */
void proc_for_each_locked(void (*fn)(struct process *p, void *arg), void *arg);
/* Processes created since boot (/proc/stat "processes"). */
uint64_t proc_created(void);

/* A kernel thread running fn(arg) forever on the CPUs of `affinity` (housekeeping work). */
/* A task a partition change would strand (kernel/part/repartition.c): one that may run on no CPU
 * of `online_after`, or one on a CPU of `leaving` (running there, or last ran there) that may
 * run on no CPU of `hk_after`, so that moving it would put it on another dataplane CPU.
 * Fills *out with the first one found (nowhere: the first kind); false if none. */
struct task_where {
    int pid, tid;
    unsigned cpu;
    bool nowhere;
    char name[ZT_NAME_LEN];
};
bool task_find_stranded(cpumask_t leaving, cpumask_t online_after, cpumask_t hk_after,
                        struct task_where *out);
struct task *kthread_start(const char *name, void (*fn)(void *arg), void *arg, cpumask_t affinity);

/* Free a dead task (called by sched.c once it is off its CPU). */
void task_free(struct task *t);

/* Boot: the function every new user task starts in (entry.c's kernel_task_first_run, which
 * arch_context_init is given), handed in by main.c before the first process. */
void task_set_first_run(void (*fn)(struct task *prev));

/* Process groups and sessions (fork.c): setpgid, getpgid, getsid, setsid. */
long sys_setpgid(struct trap_frame *f);
long sys_getpgid(struct trap_frame *f);
long sys_getsid(struct trap_frame *f);
long sys_setsid(struct trap_frame *f);

/* For panic(): "panic: CPU N was running NAME (tid T)" about this CPU's task (main.c hands
 * it to panic_set_hooks). */
void task_panic_describe(void);

/* ---- shared by task.c and fork.c only ---- */
extern struct list all_procs;
extern struct process *init_proc;
struct task *task_alloc(struct process *p, int tid);
/* clone: t (fresh from task_alloc) starts as a copy of the calling task `me`: the same
 * registers but 0 returned (and SP = stack if stack != 0), FP/SIMD state, TLS (or `tls` with
 * CLONE_SETTLS), the clear-child-tid word `ctid` with CLONE_CHILD_CLEARTID, affinity, CPU,
 * blocked signals and name. */
void task_copy_caller(struct task *t, const struct task *me, uint64_t flags, uint64_t stack,
                      uint64_t tls, uint64_t ctid);
void task_release(struct task *t);
int proc_alloc(const char *name, const struct process *parent, struct vm *share,
               struct process **out);
void proc_release_files(struct process *p);
void proc_free(struct process *p);
/* A new process p (from proc_alloc) with its one task t joins the tree as a child of parent
 * (NULL: init) and the list of all processes (proc_lock held). */
void proc_link_locked(struct process *p, struct process *parent, struct task *t);
int proc_fork(uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t tls, uint64_t ctid);
void vfork_release(struct process *p);
int proc_end_other_threads(void);
const char *path_basename(const char *path);
void rlimit_init_defaults(struct rlimit_k *lim);

/* Fill `out` with up to n entries, starting after the first `skip` in list order; returns
 * the number of tasks in total. */
int task_list_info(struct zt_task_info *out, int skip, int n);

#endif
