/*
 * entry.c — the kernel side of every exception from user space: accounting on entry, the
 * pending work on the way out (reschedule, signals, the timer), and user faults.
 *
 * kernel_exit_to_user runs with IRQs masked from its first line to the eret in vectors.S,
 * so no interrupt can arrive between the last scheduling decision, the timer
 * reprogramming and the return to user space.
 */
#include "kernel/entry.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/isolate.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "uapi/zt_events.h"
#include "uapi/zt_syscall.h"

void kernel_entry_from_user(struct trap_frame *f)
{
    ASSERT_IRQS_MASKED();
    ASSERT(spin_held_count() == 0); /* user space holds no kernel lock */
    acct_enter_kernel(current());
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
    dataplane_quiesce();
    isol_exit_to_user(); /* and more if t is isolated */
    timer_reprogram();
    acct_exit_kernel(t);
}

void kernel_exit_irq(void)
{
    timer_reprogram(); /* a level-triggered timer that fired must be quieted before IRQs
                          are enabled again in the interrupted kernel code */
}

/* A new task's first return to user space. */
static void kernel_first_return_to_user(struct trap_frame *f)
{
    if (current()->proc->pid == 1) {
        boot_note_init_start(); /* boot time: to init's first instruction */
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
    bool known = e->kind < SYNC_NR_KINDS && e->kind != SYNC_OTHER && e->kind != SYNC_SYSCALL;
    int sig = known ? signal_of[e->kind] : SIGILL;
    signal_fault(sig, known ? names[e->kind] : e->name, e->addr, e->pc);
}
