/* SPDX-License-Identifier: MIT */
/*
 * signal.c — signals (contract in include/kernel/signal.h).
 *
 * Pending sets, what each pending signal carries (sig_infos) and handlers are guarded by
 * proc_lock.  Delivery happens only on the target's own CPU in signal_deliver(), with IRQs
 * masked, right before it returns to user space; senders never touch another task's
 * registers.  The siginfo a handler gets is Linux's layout, built here from the sig_info
 * kept (include/uapi/asm-generic/siginfo.h in Linux: 128 bytes, the union at offset 16 on a
 * 64-bit machine; which union member by si_code, as Linux's siginfo_layout decides).
 */
#include "kernel/signal.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"

#define SIGBIT(sig) (1ull << ((sig)-1))
#define UNBLOCKABLE (SIGBIT(SIGKILL) | SIGBIT(19 /* SIGSTOP */))
#define DEFAULT_IGNORED                                                                            \
    (SIGBIT(SIGCHLD) | SIGBIT(18) | SIGBIT(19) | SIGBIT(20) | SIGBIT(21) | SIGBIT(22) |            \
     SIGBIT(23) | SIGBIT(28)) /* CHLD CONT STOP TSTP TTIN TTOU URG WINCH: no job-control stops */
#define SS_ONSTACK 1
#define SS_DISABLE 2

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

const struct sig_info signal_info_kernel = {SI_KERNEL, 0, 0};

struct sig_info signal_info_from_caller(int code)
{
    struct task *t = current();
    return (struct sig_info){code, t && t->proc ? t->proc->pid : 0, 0};
}

/* Does si_code say a fault's layout (si_addr) for sig?  Linux: a kernel code (> 0) of one of
 * the fault signals. */
static bool fault_layout(int sig, int32_t code)
{
    bool fault_sig =
        sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP;
    return fault_sig && code > 0 && code < SI_KERNEL;
}

void signal_siginfo(int sig, const struct sig_info *info, int32_t out[SIGINFO_BYTES / 4])
{
    memset(out, 0, SIGINFO_BYTES);
    out[0] = sig; /* si_errno (out[1]) stays 0, and so does the padding at out[3] */
    out[2] = info->code;
    if (fault_layout(sig, info->code)) {
        memcpy(&out[4], &info->value, sizeof(info->value)); /* si_addr */
        return;
    }
    out[4] = info->pid;                                 /* si_pid; si_uid (out[5]) is root's, 0 */
    memcpy(&out[6], &info->value, sizeof(info->value)); /* si_value, or si_status (SIGCHLD) */
}

struct sig_info signal_info_from_siginfo(int sig, const int32_t in[SIGINFO_BYTES / 4])
{
    struct sig_info info = {in[2], in[4], 0};
    memcpy(&info.value, fault_layout(sig, in[2]) ? &in[4] : &in[6], sizeof(info.value));
    return info;
}

/* Record sig pending in *pending with `info`, unless it is pending already (then the first
 * one's info stays: a merged signal, as on Linux).  proc_lock held. */
static void add_pending(uint64_t *pending, struct sig_info *infos, int sig,
                        const struct sig_info *info)
{
    if (infos && !(*pending & SIGBIT(sig))) {
        infos[sig - 1] = *info;
    }
    __atomic_fetch_or(pending, SIGBIT(sig), __ATOMIC_SEQ_CST);
}

bool signal_pending(const struct task *t)
{
    return t->proc && (t->proc->exiting || t->exec_kill || deliverable(t));
}

bool signal_fatal_pending(const struct task *t)
{
    uint64_t pending = __atomic_load_n(&t->sig_pending, __ATOMIC_RELAXED) |
                       (t->proc ? __atomic_load_n(&t->proc->sig_pending, __ATOMIC_RELAXED) : 0);
    return t->proc &&
           (__atomic_load_n(&t->proc->exiting, __ATOMIC_RELAXED) ||
            __atomic_load_n(&t->exec_kill, __ATOMIC_RELAXED) || (pending & SIGBIT(SIGKILL)));
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

bool signal_wakes(const struct task *t)
{
    return t->proc && (__atomic_load_n(&t->exec_kill, __ATOMIC_RELAXED) || signal_interrupts(t));
}

void signal_kick(struct task *t)
{
    /* The pending bit is set; now t's mask.  Pairs with the fence a sleeper makes between
     * setting its mask (a temporary one: rt_sigsuspend, ppoll) and looking for signals
     * (waitq_sleep_locked): either it sees the signal, or this sees its new mask. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!signal_wakes(t)) {
        return; /* blocked or ignored: it stays pending, no wait ends, no CPU is interrupted */
    }
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

int signal_send_proc_locked(struct process *p, int sig, const struct sig_info *info)
{
    ASSERT_HELD(&proc_lock);
    ASSERT(p->state == PROC_ALIVE); /* a zombie's threads are gone: no one would take it */
    if (!valid_signal(sig)) {
        return -EINVAL;
    }
    if (init_refuses(p, sig)) {
        return 0;
    }
    add_pending(&p->sig_pending, p->sig_infos, sig, info);
    list_for_each(pos, &p->threads) {
        signal_kick(container_of(pos, struct task, thread_link));
    }
    return 0;
}

int signal_send_task_locked(struct task *t, int sig, const struct sig_info *info)
{
    ASSERT_HELD(&proc_lock);
    ASSERT(t->proc && t->state != TASK_DEAD); /* a user task, still on its process's list */
    if (!valid_signal(sig)) {
        return -EINVAL;
    }
    if (init_refuses(t->proc, sig)) {
        return 0;
    }
    add_pending(&t->sig_pending, t->sig_infos, sig, info);
    signal_kick(t);
    return 0;
}

/* Take the lowest deliverable signal off the pending sets (the thread's first), with its
 * info; 0 if none. */
int signal_dequeue_locked(struct task *t, struct sig_info *info)
{
    ASSERT_HELD(&proc_lock);
    uint64_t d = deliverable(t);
    if (!d) {
        return 0;
    }
    int sig = __builtin_ctzll(d) + 1;
    bool mine = t->sig_pending & SIGBIT(sig);
    struct sig_info *infos = mine ? t->sig_infos : t->proc->sig_infos;
    *info = infos ? infos[sig - 1] : signal_info_kernel;
    __atomic_and_fetch(mine ? &t->sig_pending : &t->proc->sig_pending, ~SIGBIT(sig),
                       __ATOMIC_RELAXED);
    return sig;
}

/* Is the user stack pointer on t's alternate signal stack? */
static bool on_altstack(const struct task *t, uint64_t sp)
{
    return t->altstack_size && sp > t->altstack_sp && sp - t->altstack_sp <= t->altstack_size;
}

/* A system call interrupted by this signal: restart it (SA_RESTART) or fail it with EINTR. */
static void settle_restart(struct task *t, struct trap_frame *f, const struct sigaction_k *sa)
{
    if (!t->sys_restart) {
        return;
    }
    t->sys_restart = false;
    if (sa->flags & SA_RESTART) {
        arch_frame_restart_syscall(f, t->sys_orig_x0);
    } else {
        arch_frame_set_return(f, (uint64_t)-EINTR);
    }
}

/* Run the handler: push the interrupted context and enter it.  False if the user stack
 * cannot take the frame (the caller then kills the process). */
static bool run_handler(struct task *t, struct trap_frame *f, int sig, struct sigaction_k *sa,
                        const struct sig_info *info)
{
    ASSERT_HELD(&proc_lock);
    ASSERT(t == current() && sa == &t->proc->sigactions[sig - 1] && sa->handler > SIG_IGN);
    uint64_t sp = arch_frame_sp(f);
    int32_t siginfo[SIGINFO_BYTES / 4];
    signal_siginfo(sig, info, siginfo);
    settle_restart(t, f, sa);
    struct arch_sigsetup s = {
        .sig = sig,
        .info = siginfo,
        .handler = sa->handler,
        .restorer = (sa->flags & SA_RESTORER) ? sa->restorer : ZT_SIGTRAMP_VA,
        .frame_top = sp,
        .blocked = t->restore_sigmask ? t->saved_sigmask : t->sig_blocked,
        .ss_sp = t->altstack_sp,
        .ss_size = t->altstack_size,
        .ss_flags = t->altstack_size ? (on_altstack(t, sp) ? SS_ONSTACK : 0) : SS_DISABLE,
        .fault_address = fault_layout(sig, info->code) ? info->value : 0,
    };
    if ((sa->flags & SA_ONSTACK) && t->altstack_size && !on_altstack(t, sp)) {
        s.frame_top = t->altstack_sp + t->altstack_size;
    }
    if (arch_signal_push(t->proc->vm, f, &s) != 0) {
        return false;
    }
    t->restore_sigmask = false;
    t->sig_blocked |= sa->mask | ((sa->flags & SA_NODEFER) ? 0 : SIGBIT(sig));
    t->sig_blocked &= ~UNBLOCKABLE;
    if (sa->flags & SA_RESETHAND) {
        sa->handler = SIG_DFL;
    }
    return true;
}

void signal_deliver(struct trap_frame *f)
{
    ASSERT_IRQS_MASKED(); /* on the way out to user space: nothing may run in between */
    struct task *t = current();
    struct process *p = t->proc;
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&proc_lock);
        if (p->exiting || t->exec_kill) { /* exit_group, or another thread's execve */
            int status = p->exit_status_pending;
            spin_unlock_irqrestore(&proc_lock, flags);
            task_exit(status);
        }
        struct sig_info info;
        int sig = signal_dequeue_locked(t, &info);
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
        if (!ignored && !run_handler(t, f, sig, sa, &info)) {
            spin_unlock_irqrestore(&proc_lock, flags);
            hklog("pid %d (%pE) killed: no room on the user stack for a %s handler frame", p->pid,
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
    ASSERT(valid_signal(sig) && sig != SIGKILL); /* a fault's signal, chosen by the kernel */
    /* si_code: SEGV_ACCERR for a page that is mapped but does not allow the access, else
     * SEGV_MAPERR; for the other fault signals the code of value 1 (ILL_ILLOPC, BUS_ADRALN,
     * TRAP_BRKPT, FPE_INTDIV); si_addr: where. */
    int32_t code = 1;
    if (sig == SIGSEGV) {
        unsigned long irq = spin_lock_irqsave(&p->vm->lock);
        code = arch_as_lookup(&p->vm->as, addr & ~(uint64_t)(PAGE_SIZE - 1), 0) ? SEGV_ACCERR
                                                                                : SEGV_MAPERR;
        spin_unlock_irqrestore(&p->vm->lock, irq);
    }
    const struct sig_info info = {code, 0, addr};
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct sigaction_k *sa = &p->sigactions[sig - 1];
    bool handled = sa->handler > SIG_IGN && !(t->sig_blocked & SIGBIT(sig));
    if (handled) {
        add_pending(&t->sig_pending, t->sig_infos, sig, &info);
        spin_unlock_irqrestore(&proc_lock, flags);
        return; /* signal_deliver runs the handler on the way out */
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    hklog("pid %d (%pE) killed: %s at 0x%lx (pc 0x%lx)", p->pid, t->name, what, (unsigned long)addr,
          (unsigned long)pc);
    proc_exit_group(sig);
}

void signal_exit_to_user(struct trap_frame *f)
{
    ASSERT_IRQS_MASKED();
    struct task *t = current();
    if (t->sys_restart) { /* interrupted, but no handler ran: the call starts again */
        t->sys_restart = false;
        arch_frame_restart_syscall(f, t->sys_orig_x0);
    }
    if (t->restore_sigmask) {
        t->restore_sigmask = false;
        t->sig_blocked = t->saved_sigmask;
    }
}

void signal_set_temp_mask(uint64_t mask)
{
    struct task *t = current();
    if (!t->restore_sigmask) {
        t->saved_sigmask = t->sig_blocked;
        t->restore_sigmask = true;
    }
    t->sig_blocked = mask & ~UNBLOCKABLE;
}

long sys_rt_sigsuspend(uint64_t umask, uint64_t sigsetsize)
{
    struct task *t = current();
    uint64_t m;
    if (sigsetsize != 8) {
        return -EINVAL;
    }
    if (copy_from_user(t->proc->vm, &m, umask, sizeof(m))) {
        return -EFAULT;
    }
    signal_set_temp_mask(m);
    struct waitq wq; /* nobody knows it: only a signal ends the sleep */
    waitq_init(&wq);
    for (;;) { /* an ignored signal wakes no one (signal_wakes); one taken meanwhile by
                  another thread of the process leaves this one asleep again */
        unsigned long flags = spin_lock_irqsave(&wq.lock);
        if (waitq_sleep_locked(&wq, flags, 0) == -EINTR && signal_wakes(t)) {
            return -EINTR;
        }
    }
}

long sys_sigaltstack(uint64_t uss, uint64_t uold)
{
    struct task *t = current();
    struct {
        uint64_t sp;
        int32_t flags, pad;
        uint64_t size;
    } ss, old = {t->altstack_sp, 0, 0, t->altstack_size};
    bool on = on_altstack(t, arch_frame_sp(t->frame));
    old.flags = t->altstack_size ? (on ? SS_ONSTACK : 0) : SS_DISABLE;
    if (uss) {
        if (copy_from_user(t->proc->vm, &ss, uss, sizeof(ss))) {
            return -EFAULT;
        }
        if (on) {
            return -EPERM;
        }
        if (ss.flags & ~(SS_DISABLE | (int32_t)0x80000000 /* SS_AUTODISARM */)) {
            return -EINVAL;
        }
        if (!(ss.flags & SS_DISABLE) && ss.size < ARCH_SIGFRAME_BYTES) {
            return -ENOMEM;
        }
    }
    if (uold && copy_to_user(t->proc->vm, uold, &old, sizeof(old))) {
        return -EFAULT;
    }
    if (uss) {
        bool off = ss.flags & SS_DISABLE;
        t->altstack_sp = off ? 0 : ss.sp;
        t->altstack_size = off ? 0 : ss.size;
    }
    return 0;
}

long sys_rt_sigpending(uint64_t uset, uint64_t sigsetsize)
{
    struct task *t = current();
    if (sigsetsize != 8) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    uint64_t set = (t->sig_pending | t->proc->sig_pending) & t->sig_blocked;
    spin_unlock_irqrestore(&proc_lock, flags);
    return copy_to_user(t->proc->vm, uset, &set, sizeof(set)) ? -EFAULT : 0;
}

int signal_send_pgrp_locked(int pgid, int sig, const struct sig_info *info)
{
    extern struct list all_procs;
    ASSERT_HELD(&proc_lock);
    int found = 0;
    list_for_each(pp, &all_procs) {
        struct process *p = container_of(pp, struct process, all_link);
        if (p->state == PROC_ALIVE && p->pgid == pgid) {
            found++;
            if (sig) {
                signal_send_proc_locked(p, sig, info);
            }
        }
    }
    return found ? 0 : -ESRCH;
}

long sys_rt_sigaction(int sig, uint64_t act, uint64_t oldact, uint64_t sigsetsize)
{
    struct task *t = current();
    struct sigaction_k k;
    if (!valid_signal(sig) || sigsetsize != 8 || (act && (sig == SIGKILL || sig == 19))) {
        return -EINVAL;
    }
    if (act && copy_from_user(t->proc->vm, &k, act, sizeof(k))) {
        return -EFAULT;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct sigaction_k old = t->proc->sigactions[sig - 1];
    if (act) {
        t->proc->sigactions[sig - 1] = k;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (oldact && copy_to_user(t->proc->vm, oldact, &old, sizeof(old))) {
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
    if (set && copy_from_user(t->proc->vm, &m, set, sizeof(m))) {
        return -EFAULT;
    }
    if (oldset && copy_to_user(t->proc->vm, oldset, &old, sizeof(old))) {
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
    struct arch_sigsetup s;
    if (arch_signal_pop(t->proc->vm, f, &s) != 0) {
        hklog("pid %d (%pE) killed: bad signal frame at 0x%lx", t->proc->pid, t->name,
              (unsigned long)arch_frame_sp(f));
        proc_exit_group(SIGSEGV);
    }
    t->sig_blocked = s.blocked & ~UNBLOCKABLE;
    t->sys_restart = false;
    return (long)arch_frame_arg(f, 0); /* keep the restored x0 */
}
