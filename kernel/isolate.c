/* SPDX-License-Identifier: MIT */
/*
 * isolate.c — task isolation (contract in include/kernel/isolate.h).
 *
 * The API is Chris Metcalf's (2015): prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE
 * [| PR_TASK_ISOLATION_STRICT] [| PR_TASK_ISOLATION_SET_SIG(sig)]).  The design answers
 * the objections to it: admission yields instead of spinning until the tick stops; the
 * reasons for interruptions are removed (tickless timer, housekeeping routing, deferred
 * cross-CPU calls, broadcast TLB maintenance) rather than waited out; a violation names
 * its cause.
 *
 * State per CPU (isols[cpu]), written only by that CPU except `task` (set by the isolating
 * task itself on that CPU, cleared by it or at its exit) and the IPI sender notes (written
 * by senders, read by the receiver).  Reports go through a small ring under report_lock
 * (leaf, IRQs masked) and are printed by a work item on housekeeping.
 */
#include "kernel/isolate.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/vm.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"

#define ISOL_KNOWN_FLAGS                                                                           \
    (PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT | PR_TASK_ISOLATION_SET_SIG(0x7f))
#define ADMISSION_YIELDS 3
#define BT_DEPTH         IPI_BT_DEPTH /* a sender's call path, as ipi.c keeps it */

/*
 * The slot: isols[c].task names the task isolated on CPU c.
 *
 * THE RULE: a task holds a slot exactly while its isol_flags are non-zero, and then
 * t->isol_cpu is that slot's CPU.  The slot is taken only by the task itself, on that CPU
 * (isol_enable), and given back only by isol_release(t), which every path that ends the
 * task's hold on the CPU calls before anything else can happen to the task:
 *   - the task itself: prctl(PR_SET_TASK_ISOLATION, 0), a strict violation, exit (first
 *     thing in task_exit), an affinity that is no longer exactly the CPU
 *     (isol_exit_to_user);
 *   - schedule() on the CPU, when a move takes the running task off it;
 *   - sched_set_affinity, for a task that is not running or is asleep (it runs no isolation
 *     code until woken), under that task's run-queue lock, when the new mask is not
 *     exactly the CPU.
 * Those callers own the task at that moment (it is current, or its run-queue lock is held
 * while it cannot run), so there is one releaser at a time, and a task is freed only
 * after it exited, so the slot never names a freed task.  Anyone but the task itself reads
 * the slot's task under proc_lock (task_release takes it before freeing).
 * The other fields are written by the owning CPU, except that isol_release clears in_user,
 * entry_pending and the CPU's isol_owned flag from the releasing CPU, before the slot.
 */
struct isol_cpu {
    struct task *task;      /* the isolated task owning this CPU, NULL if none */
    bool in_user;           /* it is in user space right now */
    bool entry_pending;     /* this kernel entry came from its user space, unclassified */
    uint64_t since;         /* counter value when isolation began */
    uint64_t interruptions; /* entries it did not ask for, since `since` */
} __attribute__((aligned(64)));

static struct isol_cpu isols[MAX_CPUS];
PERCPU_ARRAY(isols);
static bool isol_debug; /* isol_debug=1: report every interruption (isol_init) */

/* ---- reports, printed on housekeeping (hklog) ---- */

#define report(bt, ...) hklog_bt("isolation:   sender's call path:", bt, __VA_ARGS__)

static void note_timer_arm(const struct timer *t);

void isol_init(bool debug)
{
    isol_debug = debug;
    ipi_keep_backtraces(debug); /* an IPI's report names its sender's call path */
    timer_set_arm_observer(debug ? note_timer_arm : 0); /* timers armed on isolated CPUs */
    irq_set_isolation_observer(isol_interrupt_owned);   /* interruptions of isolated tasks */
}

/* ---- state ---- */

static struct isol_cpu *mine(void)
{
    return &isols[this_cpu_id()];
}

bool isol_cpu_in_user(unsigned cpu)
{
    return cpu < MAX_CPUS && __atomic_load_n(&isols[cpu].in_user, __ATOMIC_SEQ_CST);
}

/* Give back t's slot (THE RULE above: t is current, or cannot run and its run-queue lock
 * is held).  Its CPU stays a dataplane CPU, so requests for it still wait for its next kernel
 * exit or idle. */
void isol_release(struct task *t)
{
    if (!t->isol_flags) {
        return;
    }
    unsigned cpu = t->isol_cpu;
    ASSERT(cpu < MAX_CPUS);
    struct isol_cpu *ic = &isols[cpu];
    trace_event(ZT_TR_ISOL_EXIT, (uint64_t)t->tid, 0);
    t->isol_flags = 0;
    __atomic_store_n(&cpus[cpu].isol_owned, false, __ATOMIC_RELAXED);
    __atomic_store_n(&ic->in_user, false, __ATOMIC_SEQ_CST);
    ic->entry_pending = false;
    struct task *expected = t;
    bool held = __atomic_compare_exchange_n(&ic->task, &expected, 0, false, __ATOMIC_SEQ_CST,
                                            __ATOMIC_RELAXED);
    ASSERT(held); /* isol_flags != 0 means the slot is t's */
}

/* ---- timers and signals that are not the isolated task's ---- */

#define TIMERS_SEEN 4 /* timers of a CPU looked at: the earliest, which would fire first */

/* The timers queued on `cpu` (among its TIMERS_SEEN earliest) that are not t's own: another
 * task's or the kernel's.  How many, in out[0 .. that). */
static inline __attribute__((always_inline)) int foreign_timers(const struct task *t, unsigned cpu,
                                                                struct timer out[TIMERS_SEEN])
{
    int queued = timer_list(cpu, out, TIMERS_SEEN), found = 0;
    for (int i = 0; i < queued && i < TIMERS_SEEN; i++) {
        if (out[i].owner_tid != t->tid) {
            out[found++] = out[i];
        }
    }
    return found;
}

/* Strict mode's promise when isolation breaks (proc_lock held): t gets the signal it chose if
 * its process handles it, and survives no longer isolated; otherwise the process is killed. */
static void strict_signal_locked(struct task *t, struct process *p, int sig)
{
    ASSERT_HELD(&proc_lock);
    if (sig && p->sigactions[sig - 1].handler > SIG_IGN) {
        signal_send_task_locked(t, sig, &signal_info_kernel);
    } else {
        signal_send_proc_locked(p, SIGKILL, &signal_info_kernel);
    }
}

/* ---- admission (prctl) ---- */

/* A timer of another task (or of the kernel) queued on `cpu` would fire during t's
 * isolation: say so and refuse (a sleeper pinned there wakes there). */
static bool foreign_timer(const struct task *t, unsigned cpu)
{
    struct timer found[TIMERS_SEEN];
    if (!foreign_timers(t, cpu, found)) {
        return false;
    }
    report(0,
           "isolation: tid %d not admitted on cpu %u: a timer of tid %d (armed at %lx) is queued "
           "there",
           t->tid, cpu, found[0].owner_tid, (unsigned long)found[0].armed_by);
    return true;
}

static long isol_enable(struct task *t, unsigned long flags)
{
    ASSERT(t == current()); /* only the task itself takes a slot */
    unsigned cpu = cpumask_only_of_and(&t->affinity, &t->affinity);
    int sig = PR_TASK_ISOLATION_GET_SIG(flags);
    if ((flags & ~(unsigned long)ISOL_KNOWN_FLAGS) || sig > ZT_NSIG) {
        return -EINVAL;
    }
    if (cpu >= MAX_CPUS || !cpu_is_dataplane(cpu)) {
        return -EINVAL; /* exactly one CPU, and a dataplane one */
    }
    if (this_cpu_id() != cpu) {
        schedule(); /* its affinity moves it; a task that got here is being moved */
        if (this_cpu_id() != cpu) {
            return -EAGAIN;
        }
    }
    struct task *owner = __atomic_load_n(&isols[cpu].task, __ATOMIC_ACQUIRE);
    if (owner && owner != t) {
        return -EBUSY;
    }
    struct vm *vm = t->proc ? t->proc->vm : 0;
    if (vm && __atomic_load_n(&vm->stack_partial, __ATOMIC_RELAXED) && vm_populate_stack(vm)) {
        return -ENOMEM; /* its stack in full first: no page fault may interrupt it later */
    }
    ASSERT(!t->isol_flags || t->isol_cpu == cpu); /* THE RULE: a move released it */
    for (int i = 0; i < ADMISSION_YIELDS && sched_nr_running(cpu) > 1; i++) {
        sched_yield_current(); /* let the others run and perhaps finish: never busy-wait */
    }
    if (sched_nr_running(cpu) > 1 || foreign_timer(t, cpu)) {
        return -EAGAIN;
    }
    struct isol_cpu *ic = &isols[cpu];
    t->isol_cpu = cpu;
    t->isol_flags = (unsigned)flags;
    trace_event(ZT_TR_ISOL_ENTER, (uint64_t)t->tid, flags);
    ic->since = arch_counter_read();
    ic->interruptions = 0;
    __atomic_store_n(&ic->task, t, __ATOMIC_RELEASE);
    this_cpu()->isol_owned = true;
    return 0; /* the way out (isol_exit_to_user) quiesces the CPU */
}

long isol_prctl(unsigned long option, unsigned long flags)
{
    struct task *t = current();
    if (option == PR_GET_TASK_ISOLATION) {
        return t->isol_flags;
    }
    if (!(flags & PR_TASK_ISOLATION_ENABLE)) {
        if (flags) {
            return -EINVAL;
        }
        isol_release(t);
        return 0;
    }
    return isol_enable(t, flags);
}

/* ---- entries from user space ---- */

void isol_kernel_entry_owned(void)
{
    ASSERT_IRQS_MASKED();
    struct isol_cpu *ic = mine();
    if (!ic->task) {
        return;
    }
    __atomic_store_n(&ic->in_user, false, __ATOMIC_SEQ_CST);
    ic->entry_pending = current() == ic->task;
    /* Requests deferred while it ran in user space: kernel_entry_from_user runs them next,
     * as on every dataplane CPU (an isolated CPU always is one). */
}

/* An interruption of the isolated task: count it, report it (strict, or isol_debug), and
 * in strict mode end isolation and deliver the configured signal (or SIGKILL).  Returns
 * true for a strict violation: the syscall that caused it does not run, a fault is not
 * handled as a fault this time (the handler runs; the instruction then runs again, no
 * longer isolated). */
static bool interruption(const uint64_t *bt, const char *cause)
{
    struct isol_cpu *ic = mine();
    struct task *t = ic->task;
    ASSERT(t && t == current()); /* entry_pending: this entry came from t's user space */
    ic->entry_pending = false;
    ic->interruptions++;
    bool strict = t->isol_flags & PR_TASK_ISOLATION_STRICT;
    if (!strict && !isol_debug) {
        return false;
    }
    report(bt, "isolation: pid %d (%pE) on cpu %u: %s%s", t->proc->pid, t->name, this_cpu_id(),
           cause, strict ? "" : " [debug: not strict, task continues]");
    if (!strict) {
        return false;
    }
    int sig = PR_TASK_ISOLATION_GET_SIG(t->isol_flags);
    struct process *p = t->proc;
    trace_event(ZT_TR_ISOL_VIOLATION, (uint64_t)t->tid, 0);
    isol_release(t);
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    strict_signal_locked(t, p, sig);
    spin_unlock_irqrestore(&proc_lock, flags);
    return true;
}

static bool allowed_syscall(uint64_t nr, const struct trap_frame *f)
{
    return nr == SYS_exit || nr == SYS_exit_group ||
           (nr == SYS_prctl && (arch_frame_arg(f, 0) == PR_SET_TASK_ISOLATION ||
                                arch_frame_arg(f, 0) == PR_GET_TASK_ISOLATION));
}

bool isol_syscall_owned(uint64_t nr, const char *name, const struct trap_frame *f)
{
    ASSERT_IRQS_MASKED();
    struct isol_cpu *ic = mine();
    if (!ic->entry_pending) {
        return false;
    }
    bool strict = ic->task->isol_flags & PR_TASK_ISOLATION_STRICT;
    if (allowed_syscall(nr, f) || !strict) {
        ic->entry_pending = false; /* a call it made, not an interruption (unless strict) */
        return false;
    }
    char cause[64];
    ksnprintf(cause, sizeof(cause), "syscall %lu (%s)", (unsigned long)nr, name);
    return interruption(0, cause);
}

/* The report names the arch's own words for the exception ("data abort (lower EL)"), except
 * for an undefined instruction, whose arch name says less than the kind's. */
bool isol_exception_owned(const struct exc_info *e)
{
    ASSERT_IRQS_MASKED();
    if (!mine()->entry_pending) {
        return false;
    }
    char cause[96];
    bool fault =
        e->kind == SYNC_DATA_FAULT || e->kind == SYNC_DATA_ALIGN || e->kind == SYNC_INSN_FAULT;
    ksnprintf(cause, sizeof(cause), "%s at 0x%lx (pc 0x%lx)",
              e->kind == SYNC_UNDEFINED ? "undefined instruction" : e->name,
              (unsigned long)(fault ? e->addr : e->pc), (unsigned long)e->pc);
    return interruption(0, cause);
}

void isol_interrupt_owned(enum irq_class cls, unsigned n)
{
    ASSERT_IRQS_MASKED();
    struct isol_cpu *ic = mine();
    if (!ic->entry_pending) {
        return;
    }
    char cause[80];
    uint64_t sender_bt[BT_DEPTH];
    const uint64_t *bt = 0;
    if (cls == IRQ_CLASS_IPI && n == IPI_PARTITION) {
        ic->entry_pending = false; /* not an interruption: the partition handler that runs
                                      next ends the isolation itself (isol_end_here) */
        return;
    }
    if (cls == IRQ_CLASS_IPI && n < IPI_NR) {
        int sender = ipi_last_sender(this_cpu_id(), n, sender_bt);
        ksnprintf(cause, sizeof(cause), "IPI from cpu %d (%s)", sender, ipi_reason_name(n));
        bt = sender_bt;
    } else if (cls == IRQ_CLASS_TIMER) {
        ksnprintf(cause, sizeof(cause), "interrupt %u (local timer)", n);
    } else {
        ksnprintf(cause, sizeof(cause), "interrupt %u (device)", n);
    }
    interruption(bt, cause);
}

static void note_timer_arm(const struct timer *t)
{
    struct isol_cpu *ic = mine();
    struct task *owner = __atomic_load_n(&ic->task, __ATOMIC_ACQUIRE);
    if (!owner || !isol_debug) {
        return;
    }
    /* Only the owner, if it is the one running here, may be looked at without proc_lock. */
    bool by_owner = owner == current() && t->owner_tid == owner->tid;
    report(0, "isolation: timer armed on isolated cpu %u by tid %d (%pE) at %lx, due in %lu us",
           this_cpu_id(), t->owner_tid, by_owner ? owner->name : "other",
           (unsigned long)t->armed_by,
           (unsigned long)cycles_to_us(t->deadline - arch_counter_read()));
}

/* ---- a partition change takes the CPU ---- */

bool isol_owner(unsigned cpu, int *pid, char name[ZT_NAME_LEN])
{
    if (cpu >= MAX_CPUS) {
        return false;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock); /* the task cannot be freed */
    struct task *t = __atomic_load_n(&isols[cpu].task, __ATOMIC_ACQUIRE);
    if (t) {
        *pid = t->proc->pid;
        kstrlcpy(name, t->name, ZT_NAME_LEN);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return t != 0;
}

void isol_end_here(const char *why)
{
    ASSERT_IRQS_MASKED();
    unsigned cpu = this_cpu_id();
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct task *t = isols[cpu].task;
    if (!t) {
        spin_unlock_irqrestore(&proc_lock, flags);
        return;
    }
    struct process *p = t->proc;
    int pid = p->pid, sig = PR_TASK_ISOLATION_GET_SIG(t->isol_flags);
    bool strict = t->isol_flags & PR_TASK_ISOLATION_STRICT;
    char name[ZT_NAME_LEN];
    kstrlcpy(name, t->name, sizeof(name));
    if (t == current()) {
        isol_release(t); /* THE RULE: we interrupted t itself */
    } else {
        sched_isol_release_parked(t); /* THE RULE: t cannot run while we are here */
    }
    if (strict) {
        strict_signal_locked(t, p, sig);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    report(0, "isolation: pid %d (%pE) on cpu %u: isolation ended: %s%s", pid, name, cpu, why,
           strict ? "" : " [not strict, task continues]");
}

/* ---- the way back to user space ---- */

/* Kernel timers must not fire here.  There are none by design — kernel-internal timers are
 * armed only on housekeeping CPUs (work.c) — so finding one that is not the task's own is
 * reported as a kernel bug (it is not moved: it would fire where it is). */
static void check_timers(struct task *t)
{
    struct timer found[TIMERS_SEEN];
    int n = foreign_timers(t, this_cpu_id(), found);
    for (int i = 0; i < n; i++) {
        report(0, "isolation: kernel timer armed at %lx by tid %d found on isolated cpu %u",
               (unsigned long)found[i].armed_by, found[i].owner_tid, this_cpu_id());
    }
}

void isol_exit_to_user_owned(void)
{
    ASSERT_IRQS_MASKED();
    struct isol_cpu *ic = mine();
    struct task *t = current();
    if (!ic->task || ic->task != t || !(t->isol_flags & PR_TASK_ISOLATION_ENABLE)) {
        return;
    }
    if (!cpumask_is_only(&t->affinity, this_cpu_id())) {
        isol_release(t); /* someone moved it: isolation ends here, on its own CPU */
        return;
    }
    /* kernel_exit_to_user has just drained this CPU's page cache and run its deferred
     * requests (dataplane_quiesce): nothing is parked here that another CPU would ask for. */
    check_timers(t);
    ic->entry_pending = false;
    __atomic_store_n(&ic->in_user, true, __ATOMIC_SEQ_CST);
}

/* ---- audit ---- */

static void audit_timers(unsigned cpu, struct zt_isol_audit *out, uint64_t now)
{
    struct timer ts[ZT_AUDIT_MAX_TIMERS];
    int n = timer_list(cpu, ts, ZT_AUDIT_MAX_TIMERS);
    out->ntimers = (uint32_t)n;
    for (int i = 0; i < n && i < ZT_AUDIT_MAX_TIMERS; i++) {
        out->timers[i].due_ns = ts[i].deadline > now ? cycles_to_ns(ts[i].deadline - now) : 0;
        out->timers[i].owner_tid = ts[i].owner_tid;
        out->timers[i].armed_by = ts[i].armed_by;
    }
    uint64_t hw = timer_programmed(cpu);
    out->timer_armed = hw != 0;
    out->timer_programmed_ns = hw > now ? cycles_to_ns(hw - now) : 0;
}

int isol_audit(unsigned cpu, struct zt_isol_audit *out)
{
    if (cpu >= ncpus || !cpumask_test_atomic(&cpus_online, cpu)) {
        return -EINVAL;
    }
    memset(out, 0, sizeof(*out));
    uint64_t now = arch_counter_read();
    struct isol_cpu *ic = &isols[cpu];
    out->cpu = cpu;
    out->dataplane = cpu_is_dataplane(cpu);
    unsigned long flags = spin_lock_irqsave(&proc_lock); /* the task cannot be freed */
    struct task *t = __atomic_load_n(&ic->task, __ATOMIC_ACQUIRE);
    if (t) {
        out->isolated = 1;
        out->strict = (t->isol_flags & PR_TASK_ISOLATION_STRICT) != 0;
        out->in_user = isol_cpu_in_user(cpu);
        out->pid = t->proc->pid;
        out->tid = t->tid;
        kstrlcpy(out->name, t->name, sizeof(out->name));
        out->isolated_ns = cycles_to_ns(now - ic->since);
        out->interruptions = ic->interruptions;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    arch_irq_audit(cpu, out); /* what the interrupt controller lets through */
    audit_timers(cpu, out, now);
    out->pending_calls = ipi_pending_calls(cpu);
    out->deferred_total = ipi_deferred_calls(cpu);
    unsigned running = sched_nr_running(cpu), owner_runs = 0;
    flags = spin_lock_irqsave(&proc_lock);
    t = __atomic_load_n(&ic->task, __ATOMIC_ACQUIRE);
    owner_runs = t && t->state == TASK_RUNNABLE;
    spin_unlock_irqrestore(&proc_lock, flags);
    out->other_runnable = running > owner_runs ? running - owner_runs : 0;
    out->cached_pages = page_cached_on(cpu);
    return 0;
}
