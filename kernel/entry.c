/* SPDX-License-Identifier: MIT */
/*
 * entry.c — the kernel side of every exception from user space: accounting on entry, the
 * pending work on the way out (reschedule, signals, the timer), and user faults.
 *
 * kernel_exit_to_user runs with IRQs masked from its first line to the eret in vectors.S,
 * so no interrupt can arrive between the last scheduling decision, the timer
 * reprogramming and the return to user space.
 *
 * System calls have a fast path (kernel_syscall).  Everything the kernel may have to do
 * around a call besides running it is announced in two places that a few loads read: the
 * CPU's slow_work word (struct cpu: a switch due, the timer's inputs changed or its state
 * unknown, a dataplane CPU to quiesce, an isolated task's hooks, tracing) and the calling
 * task's and process's pending signals and exit.  While all are clear, a system call costs
 * one counter increment (stats_syscall), the two accounting stamps and the call itself; as
 * soon as any is set, the call's entry or exit takes the slow path, which is the path every
 * other exception takes and checks each reason again.
 */
#include "kernel/entry.h"

#include <stddef.h>

#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/dataplane.h"
#include "kernel/irqsoff.h"
#include "kernel/isolate.h"
#include "kernel/kcov.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/stats.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_events.h"
#include "uapi/zt_syscall.h"

void kernel_entry_from_user(struct trap_frame *f)
{
    ASSERT_IRQS_MASKED();
    ASSERT(spin_held_count() == 0); /* user space holds no kernel lock */
    acct_enter_kernel();
    isol_kernel_entry();
    dataplane_kernel_entry(); /* requests deferred while this dataplane CPU ran user code */
}

void kernel_exit_to_user(struct trap_frame *f)
{
    arch_irq_disable();
    while (sched_need_resched()) {
        schedule();
    }
    struct task *t = current();
    if (signal_pending(t)) {
        signal_deliver(f); /* may run a handler (changes f) or end the task */
        while (sched_need_resched()) {
            schedule();
        }
    }
    if (t->sys_restart || t->restore_sigmask) {
        signal_exit_to_user(f);
    }
    dataplane_quiesce();
    isol_exit_to_user(); /* and more if t is isolated */
    timer_reprogram();
    ASSERT(spin_held_count() == 0 && t == current()); /* user space holds no kernel lock */
    acct_exit_kernel();
    kcov_call_ends();        /* the coverage kernel records no more of this task's call */
    irqsoff_note_unmasked(); /* user space runs with interrupts enabled (checked builds) */
}

/* Could the way out have a signal to deliver to t, or t's process be ending?  A superset of
 * signal_pending (blocked signals count too), one load per word and no lock: signal_pending
 * decides on the slow path.  A signal sent from another CPU while t runs here is followed
 * by an IPI, which sends the next exit down the slow path anyway. */
static inline bool signal_may_be_pending(const struct task *t)
{
    const volatile struct process *p = t->proc; /* volatile: each a whole load, not cached */
    const volatile struct task *vt = t;
    return vt->sig_pending || p->sig_pending || p->exiting;
}

/* The bytes of slow_work that only the timer needs: a fast system call leaves them to its
 * exit, which reprograms the timer without the full frame (timer_reprogram needs none). */
#define SLOW_WORK_BYTE(field)                                                                      \
    (0xffull << 8 * (offsetof(struct cpu, field) - offsetof(struct cpu, slow_work)))
static inline uint64_t slow_work_timer_bytes(void)
{
    _Static_assert(offsetof(struct cpu, timer_stale) - offsetof(struct cpu, slow_work) < 8 &&
                       offsetof(struct cpu, timer_quick) - offsetof(struct cpu, slow_work) < 8,
                   "the timer's flags are bytes of slow_work");
    return SLOW_WORK_BYTE(timer_dirty) | SLOW_WORK_BYTE(timer_stale) |
           SLOW_WORK_BYTE(timer_quick); /* little-endian */
}

/* A system call when something else is to be done around it: the path of every exception. */
static void syscall_slow(struct trap_frame *f, unsigned svc_imm)
{
    trace_event(ZT_TR_EXC_ENTRY, (uint64_t)EXC_SYNC | (uint64_t)FROM_USER << 8, SYNC_SYSCALL);
    kernel_entry_from_user(f);
    syscall_dispatch(f, svc_imm);
    kernel_exit_to_user(f);
    stats_exception_exit(EXC_SYNC);
}

syscall_fn kernel_syscall_enter(uint64_t nr)
{
    ASSERT_IRQS_MASKED();
    ASSERT(spin_held_count() == 0); /* user space holds no kernel lock */
    irqsoff_note_masked();          /* the SVC masked them (checked builds) */
    kcov_call_begins();             /* the coverage kernel records the call from here */
    struct cpu *c = this_cpu();
    stats_syscall(c);
    if (__builtin_expect(c->slow_work != 0 || nr >= SYSCALL_FAST_NR, 0)) {
        return 0;
    }
    syscall_fn fn = syscall_fast_table[nr];
    if (__builtin_expect(fn != 0, 1)) {
        acct_user_to_sys(&c->acct, arch_counter_read_entry());
        irqsoff_note_unmasked(); /* vectors.S enables them around the call */
    }
    return fn;
}

/* The end of a fast exit: back to user space unless a signal may be pending. */
static inline bool syscall_exit_fast(struct cpu *c)
{
    if (__builtin_expect(signal_may_be_pending(c->current_task), 0)) {
        return false;
    }
    acct_sys_to_user(&c->acct, arch_counter_read_exit());
    kcov_call_ends();
    irqsoff_note_unmasked(); /* the eret to user space */
    return true;
}

bool kernel_syscall_exit(void)
{
    ASSERT_IRQS_MASKED();
    irqsoff_note_masked();      /* vectors.S masked them after the call */
    struct cpu *c = this_cpu(); /* the call may have slept and woken on another CPU */
    ASSERT(!c->current_task->sys_restart && !c->current_task->restore_sigmask); /* FULL only */
    if (__builtin_expect(c->slow_work != 0, 0)) {
        if ((c->slow_work & ~slow_work_timer_bytes()) != 0) {
            return false;
        }
        /* Only the timer: what the slow path would do for it, without the full frame
         * (timer_reprogram needs none); then the fast exit. */
        timer_reprogram();
        c = this_cpu();
    }
    return syscall_exit_fast(c);
}

void kernel_syscall_exit_restart(struct trap_frame *f, long r)
{
    ASSERT(r == -ERESTARTSYS);
    irqsoff_note_masked(); /* vectors.S masked them after the call */
    struct task *t = current();
    t->sys_orig_x0 = arch_frame_arg(f, 0); /* restarted with it, or failed with EINTR */
    t->sys_restart = true;
    arch_frame_set_return(f, (uint64_t)r);
    kernel_exit_to_user(f);
}

void kernel_syscall_slow(struct trap_frame *f, unsigned svc_imm)
{
    syscall_slow(f, svc_imm);
}

void kernel_syscall_exit_slow(struct trap_frame *f)
{
    kernel_exit_to_user(f);
}

void kernel_exit_irq(void)
{
    /* the interrupted kernel code gets IRQs back only after the eret */
    ASSERT_IRQS_MASKED();
    timer_reprogram(); /* a level-triggered timer that fired must be quieted before IRQs
                          are enabled again in the interrupted kernel code */
}

/* A new task's first return to user space. */
/* init is about to run its first instruction: the boot time, to it. */
static void note_init_start(void)
{
    uint64_t d = arch_counter_read() - arch_boot_info()->entry_counter;
    printk("boot: init starts %lu us (%lu counter cycles) after the first instruction\n",
           (unsigned long)cycles_to_us(d), (unsigned long)d);
}

static void kernel_first_return_to_user(struct trap_frame *f)
{
    if (current()->proc->pid == 1) {
        note_init_start(); /* boot time: to init's first instruction */
    }
    kernel_exit_to_user(f);
}

void kernel_task_first_run(struct task *prev)
{
    sched_finish_first_switch(prev);
    kernel_first_return_to_user(current()->frame);
}

/* A synchronous exception from user space that is not a system call: a signal, with the
 * report signal_fault prints if nothing handles it. */
void user_exception(struct trap_frame *f, const struct exc_info *e)
{
    ASSERT_IRQS_MASKED();
    static const int signal_of[SYNC_NR_KINDS] = {
        [SYNC_DATA_FAULT] = SIGSEGV, [SYNC_INSN_FAULT] = SIGSEGV, [SYNC_DATA_ALIGN] = SIGBUS,
        [SYNC_PC_ALIGN] = SIGBUS,    [SYNC_SP_ALIGN] = SIGBUS,    [SYNC_UNDEFINED] = SIGILL,
        [SYNC_BREAKPOINT] = SIGTRAP, [SYNC_FP] = SIGFPE,          [SYNC_OTHER] = SIGILL,
    };
#define SYNC_NAME_(n, name, str) [SYNC_##name] = str,
    static const char *const names[SYNC_NR_KINDS] = {ZT_SYNC_KINDS(SYNC_NAME_)};
#undef SYNC_NAME_
    if (isol_exception(e)) {
        return; /* a strict isolation violation: the task has been sentenced */
    }
    if ((e->kind == SYNC_DATA_FAULT || e->kind == SYNC_INSN_FAULT) &&
        vm_fault(current()->proc->vm, e->addr, e->access) == 0) {
        return; /* a stack page populated on first touch: the access runs again */
    }
    bool known = e->kind < SYNC_NR_KINDS && e->kind != SYNC_OTHER && e->kind != SYNC_SYSCALL;
    int sig = known ? signal_of[e->kind] : SIGILL;
    signal_fault(sig, known ? names[e->kind] : e->name, e->addr, e->pc);
}
