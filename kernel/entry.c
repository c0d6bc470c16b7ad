/*
 * entry.c — the kernel side of every exception from user space: accounting on entry, the
 * pending work on the way out (reschedule, signals, the timer), and user faults.
 *
 * kernel_exit_to_user runs with IRQs masked from its first line to the eret in vectors.S,
 * so no interrupt can arrive between the last scheduling decision, the timer
 * reprogramming and the return to user space.
 */
#include "kernel/trap.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/isolate.h"
#include "kernel/page.h"
#include "kernel/main.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "uapi/zt_syscall.h"

void kernel_entry_from_user(struct trap_frame *f)
{
    acct_enter_kernel(current());
    isol_kernel_entry();
    ipi_run_calls_dataplane(); /* requests deferred while this dataplane CPU ran user code */
}

/* A dataplane CPU keeps nothing another CPU could need while it runs user code or idles:
 * free pages go back from its cache, and deferred requests run. */
void dataplane_quiesce(void)
{
    if (this_cpu()->dataplane) {
        page_drain_local();
        ipi_run_calls_dataplane_slow();
    }
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
    acct_exit_kernel(t);
}

/* A new task's first return to user space (from sched.c's first_run). */
void kernel_first_return_to_user(struct trap_frame *f)
{
    if (current()->proc->pid == 1) {
        boot_note_init_start(); /* boot time: to init's first instruction */
    }
    kernel_exit_to_user(f);
}

/* Data abort ISS: DFSC 0b100001 is an alignment fault (ARM ARM D17.2.40). */
static bool is_alignment_fault(uint64_t esr)
{
    return (esr & 0x3f) == 0x21;
}

void user_exception(struct trap_frame *f, const struct user_fault *uf)
{
    if (isol_exception(uf)) {
        return; /* a strict isolation violation: the task has been sentenced */
    }
    switch (uf->ec) {
    case 0x24:
        if (is_alignment_fault(uf->esr)) {
            signal_fault(SIGBUS, "alignment fault", uf->far, uf->pc);
        } else {
            signal_fault(SIGSEGV, "data abort", uf->far, uf->pc);
        }
        break;
    case 0x20:
        signal_fault(SIGSEGV, "instruction abort", uf->far, uf->pc);
        break;
    case 0x22:
        signal_fault(SIGBUS, "PC alignment fault", uf->pc, uf->pc);
        break;
    case 0x26:
        signal_fault(SIGBUS, "SP alignment fault", arch_frame_sp(f), uf->pc);
        break;
    case 0x00:
        signal_fault(SIGILL, "undefined instruction", uf->pc, uf->pc);
        break;
    case 0x3c:
        signal_fault(SIGTRAP, "breakpoint", uf->pc, uf->pc);
        break;
    case 0x2c:
        signal_fault(SIGFPE, "floating-point exception", uf->pc, uf->pc);
        break;
    default:
        signal_fault(SIGILL, uf->class_name, uf->pc, uf->pc);
        break;
    }
}
