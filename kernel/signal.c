/*
 * signal.c — signals (contract in include/kernel/signal.h).
 *
 * Pending sets and handlers are guarded by proc_lock.  Delivery happens only on the
 * target's own CPU in signal_deliver(), with IRQs masked, right before it returns to user
 * space; senders never touch another task's registers.
 */
#include "kernel/signal.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/hklog.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"

#define SIGBIT(sig) (1ull << ((sig)-1))
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(19 /* SIGSTOP */))
#define DEFAULT_IGNORED                                                                            \
    (SIGBIT(SIGCHLD) | SIGBIT(18) | SIGBIT(19) | SIGBIT(20) | SIGBIT(23) |                         \
     SIGBIT(28)) /* CHLD CONT STOP TSTP URG WINCH: no job control here */

static const char *const names[ZT_NSIG + 1] = {
    [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
    [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
    [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM", [SIGCHLD] = "SIGCHLD",
};

const char *signal_name(int sig)
{
    return sig > 0 && sig <= ZT_NSIG && names[sig] ? names[sig] : "signal";
}

static uint64_t deliverable(const struct task *t)
{
    return (t->sig_pending | t->proc->sig_pending) & ~(t->sig_blocked & ~UNBLOCKABLE);
}

bool signal_pending(const struct task *t)
{
    return t->proc && (t->proc->exiting || deliverable(t));
}

bool signal_fatal_pending(const struct task *t)
{
    uint64_t pending = __atomic_load_n(&t->sig_pending, __ATOMIC_RELAXED) |
                       (t->proc ? __atomic_load_n(&t->proc->sig_pending, __ATOMIC_RELAXED) : 0);
    return t->proc &&
           (__atomic_load_n(&t->proc->exiting, __ATOMIC_RELAXED) || (pending & SIGBIT(SIGKILL)));
}

bool signal_interrupts(const struct task *t)
{
    if (!t->proc) {
        return false;
    }
    uint64_t d = deliverable(t);
    for (; d; d &= d - 1) {
        int sig = __builtin_ctzll(d) + 1;
        uint64_t h = __atomic_load_n(&t->proc->sigactions[sig - 1].handler, __ATOMIC_RELAXED);
        if (sig == SIGKILL || h > SIG_IGN || (h == SIG_DFL && !(DEFAULT_IGNORED & SIGBIT(sig)))) {
            return true;
        }
    }
    return __atomic_load_n(&t->proc->exiting, __ATOMIC_RELAXED);
}

void signal_kick(struct task *t)
{
    waitq_interrupt(t);
    unsigned cpu = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
    if (cpu != this_cpu_id() && sched_current(cpu) == t) {
        ipi_send(cpu, IPI_SIGNAL);
    }
}

static bool valid_signal(int sig)
{
    return sig >= 1 && sig <= ZT_NSIG;
}

/* As on Linux, init gets only the signals it handles, whoever sends them and by whichever
 * call (kill, tgkill, the tty's ^C): `kill -9 1` must not power the machine off.  Both send
 * functions below ask this first; they are the only ways a signal reaches a task. */
static bool init_refuses(const struct process *p, int sig)
{
    return p->pid == 1 && p->sigactions[sig - 1].handler <= SIG_IGN;
}

int signal_send_proc_locked(struct process *p, int sig)
{
    ASSERT_HELD(&proc_lock);
    if (!valid_signal(sig)) {
        return -EINVAL;
    }
    if (init_refuses(p, sig)) {
        return 0;
    }
    __atomic_fetch_or(&p->sig_pending, SIGBIT(sig), __ATOMIC_SEQ_CST);
    list_for_each(pos, &p->threads)
    {
        signal_kick(container_of(pos, struct task, thread_link));
    }
    return 0;
}

int signal_send_task_locked(struct task *t, int sig)
{
    ASSERT_HELD(&proc_lock);
    if (!valid_signal(sig)) {
        return -EINVAL;
    }
    if (init_refuses(t->proc, sig)) {
        return 0;
    }
    __atomic_fetch_or(&t->sig_pending, SIGBIT(sig), __ATOMIC_SEQ_CST);
    signal_kick(t);
    return 0;
}

/* Take the lowest deliverable signal off the pending sets (proc_lock held); 0 if none. */
static int dequeue_signal(struct task *t)
{
    ASSERT_HELD(&proc_lock);
    uint64_t d = deliverable(t);
    if (!d) {
        return 0;
    }
    int sig = __builtin_ctzll(d) + 1;
    if (t->sig_pending & SIGBIT(sig)) {
        t->sig_pending &= ~SIGBIT(sig);
    } else {
        t->proc->sig_pending &= ~SIGBIT(sig);
    }
    return sig;
}

/* Run the handler: push the interrupted context and enter it.  False if the user stack
 * cannot take the frame (the caller then kills the process). */
static bool run_handler(struct task *t, struct trap_frame *f, int sig, struct sigaction_k *sa)
{
    uint64_t blocked = t->sig_blocked;
    if (arch_signal_push(&t->proc->vm, f, sig, sa->handler, sa->restorer, blocked) != 0) {
        return false;
    }
    t->sig_blocked |= sa->mask | ((sa->flags & SA_NODEFER) ? 0 : SIGBIT(sig));
    if (sa->flags & SA_RESETHAND) {
        sa->handler = SIG_DFL;
    }
    return true;
}

void signal_deliver(struct trap_frame *f)
{
    struct task *t = current();
    struct process *p = t->proc;
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&proc_lock);
        if (p->exiting) {
            int status = p->exit_status_pending;
            spin_unlock_irqrestore(&proc_lock, flags);
            task_exit(status);
        }
        int sig = dequeue_signal(t);
        if (!sig) {
            spin_unlock_irqrestore(&proc_lock, flags);
            return;
        }
        struct sigaction_k *sa = &p->sigactions[sig - 1];
        bool ignored =
            sa->handler == SIG_IGN || (sa->handler == SIG_DFL && (DEFAULT_IGNORED & SIGBIT(sig)));
        if (sig == SIGKILL || (!ignored && sa->handler == SIG_DFL)) {
            spin_unlock_irqrestore(&proc_lock, flags);
            proc_exit_group(sig); /* wait status: killed by sig */
        }
        if (!ignored && !run_handler(t, f, sig, sa)) {
            spin_unlock_irqrestore(&proc_lock, flags);
            hklog("pid %d (%s) killed: no room on the user stack for a %s handler frame", p->pid,
                  p->name, signal_name(sig));
            proc_exit_group(SIGSEGV);
        }
        spin_unlock_irqrestore(&proc_lock, flags);
        if (!ignored) {
            return; /* one handler at a time: the rest wait for its sigreturn */
        }
    }
}

void signal_fault(int sig, const char *what, uint64_t addr, uint64_t pc)
{
    struct task *t = current();
    struct process *p = t->proc;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct sigaction_k *sa = &p->sigactions[sig - 1];
    bool handled = sa->handler > SIG_IGN && !(t->sig_blocked & SIGBIT(sig));
    if (handled) {
        t->sig_pending |= SIGBIT(sig);
        spin_unlock_irqrestore(&proc_lock, flags);
        return; /* signal_deliver runs the handler on the way out */
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    hklog("pid %d (%s) killed: %s at 0x%lx (pc 0x%lx)", p->pid, t->name, what, (unsigned long)addr,
          (unsigned long)pc);
    proc_exit_group(sig);
}

long sys_rt_sigaction(int sig, uint64_t act, uint64_t oldact, uint64_t sigsetsize)
{
    struct task *t = current();
    struct sigaction_k k;
    if (!valid_signal(sig) || sigsetsize != 8 || (act && (sig == SIGKILL || sig == 19))) {
        return -EINVAL;
    }
    if (act && copy_from_user(&t->proc->vm, &k, act, sizeof(k))) {
        return -EFAULT;
    }
    if (act && k.handler > SIG_IGN && !(k.flags & SA_RESTORER)) {
        return -EINVAL; /* no vDSO trampoline here: the C library must supply a restorer */
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct sigaction_k old = t->proc->sigactions[sig - 1];
    if (act) {
        t->proc->sigactions[sig - 1] = k;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (oldact && copy_to_user(&t->proc->vm, oldact, &old, sizeof(old))) {
        return -EFAULT;
    }
    return 0;
}

long sys_rt_sigprocmask(int how, uint64_t set, uint64_t oldset, uint64_t sigsetsize)
{
    struct task *t = current();
    uint64_t m = 0, old = t->sig_blocked;
    if (sigsetsize != 8 || (set && how != 0 && how != 1 && how != 2)) {
        return -EINVAL;
    }
    if (set && copy_from_user(&t->proc->vm, &m, set, sizeof(m))) {
        return -EFAULT;
    }
    if (oldset && copy_to_user(&t->proc->vm, oldset, &old, sizeof(old))) {
        return -EFAULT;
    }
    if (set) {
        uint64_t nb = how == 0 ? old | m : how == 1 ? old & ~m : m; /* BLOCK UNBLOCK SETMASK */
        t->sig_blocked = nb & ~UNBLOCKABLE;
    }
    return 0;
}

long sys_rt_sigreturn(struct trap_frame *f)
{
    struct task *t = current();
    uint64_t blocked;
    if (arch_signal_pop(&t->proc->vm, f, &blocked) != 0) {
        hklog("pid %d (%s) killed: bad signal frame at 0x%lx", t->proc->pid, t->name,
              (unsigned long)arch_frame_sp(f));
        proc_exit_group(SIGSEGV);
    }
    t->sig_blocked = blocked & ~UNBLOCKABLE;
    return (long)arch_frame_arg(f, 0); /* keep the restored x0 */
}
