/* SPDX-License-Identifier: MIT */
/*
 * isolate.h — task isolation: prctl(PR_SET_TASK_ISOLATION), quiescing a dataplane CPU on
 * every return to its isolated task, strict mode, "who interrupted me" reports, and the
 * audit isolstat shows.
 *
 * A task isolates itself on a dataplane CPU that is its only allowed CPU and that no other
 * task wants.  From then on, every return to it quiesces the CPU (nothing cached, no timer
 * but the task's own), and every kernel entry from its user space is classified: a system
 * call it made (in strict mode only prctl to change isolation, exit and exit_group are
 * allowed; any other is an interruption), a fault, or an interrupt.  Interruptions are
 * counted; in strict mode each is a
 * violation that ends isolation with a report and the configured signal (or SIGKILL); with
 * isol_debug=1 every interruption, and every timer armed on the CPU, is reported.  Reports
 * are printed by the housekeeping worker, never by the isolated CPU.
 *
 * Context: the hooks below run on the isolated CPU with IRQs masked (isol_syscall before
 * the call enables them), except isol_prctl (syscall context) and isol_audit (any CPU;
 * reads only).  Only the owning CPU changes its isolation state.
 */
#ifndef ZT_KERNEL_ISOLATE_H
#define ZT_KERNEL_ISOLATE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpu.h"
#include "uapi/zt_syscall.h"

struct task;
struct timer;
struct trap_frame;
struct exc_info;

/* Boot: `debug` (isol_debug=1) reports every interruption and every timer armed on an
 * isolated CPU, not only strict violations. */
void isol_init(bool debug);
/* prctl(PR_SET_TASK_ISOLATION, flags) and prctl(PR_GET_TASK_ISOLATION). */
long isol_prctl(unsigned long option, unsigned long flags);

/* Kernel entry from user space on this CPU (before the handler). */
void isol_kernel_entry_owned(void);
/* A syscall from user space (`name`: the dispatcher's name for it, for the report): true if
 * it is a strict violation and must not run (the task has been sentenced; the way out
 * delivers the signal). */
bool isol_syscall_owned(uint64_t nr, const char *name, const struct trap_frame *f);
/* A fault from user space: true if strict isolation handled it. */
bool isol_exception_owned(const struct exc_info *e);
/* An interrupt taken on this CPU while an isolated task owns it (irq_dispatch, through the
 * observer isol_init hands to irq_set_isolation_observer): its class and number. */
void isol_interrupt_owned(enum irq_class cls, unsigned n);
/* The last step before returning to user space: quiesce if the task is isolated. */
void isol_exit_to_user_owned(void);
/* End t's isolation and give its CPU back (exit, prctl, a move, a violation): the one
 * function that empties a CPU's isolation slot.  t is current, or cannot run (not running,
 * or asleep) and its run-queue lock is held (THE RULE in isolate.c).  Nothing if t is not
 * isolated. */
void isol_release(struct task *t);

/* A partition change, on the CPU it takes from the dataplane (IRQs masked): end the
 * isolation of the task that owns this CPU, if any, and report it ("isolation: pid N (name)
 * on cpu C: isolation ended: <why>"); a strict task also gets its signal (SIGKILL unless it
 * set one), as for any break of strict isolation.  The IPI that brought the request is not
 * counted as an interruption (isol_interrupt_owned knows IPI_PARTITION). */
void isol_end_here(const char *why);
/* Does an isolated task own `cpu`?  If so its pid and name (for a refusal's message). */
bool isol_owner(unsigned cpu, int *pid, char name[ZT_NAME_LEN]);

/* The hooks above in their fast form: one load on a CPU that no isolated task owns. */
static inline void isol_kernel_entry(void)
{
    if (this_cpu()->isol_owned) {
        isol_kernel_entry_owned();
    }
}

/* A macro, not an inline function, so that `name` is evaluated only on an owned CPU: the
 * system-call fast path pays one load, as before the name was passed. */
#define isol_syscall(nr, name, f) (this_cpu()->isol_owned && isol_syscall_owned((nr), (name), (f)))

static inline bool isol_exception(const struct exc_info *e)
{
    return this_cpu()->isol_owned && isol_exception_owned(e);
}

static inline void isol_exit_to_user(void)
{
    if (this_cpu()->isol_owned) {
        isol_exit_to_user_owned();
    }
}

/* Does `cpu` run an isolated task that is in user space right now? */
bool isol_cpu_in_user(unsigned cpu);

/* isolstat: what could still reach `cpu`.  0 or -EINVAL. */
int isol_audit(unsigned cpu, struct zt_isol_audit *out);

#endif
