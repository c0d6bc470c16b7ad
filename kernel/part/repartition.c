/* SPDX-License-Identifier: MIT */
/*
 * repartition.c — changing a CPU's role at run time: housekeeping <-> dataplane, offline and
 * back online (contract in include/kernel/repartition.h; the protocol and why it needs no
 * global rendezvous: docs/partition.md).
 *
 * A change has two halves.  The requesting CPU (a task in zt_partition, IRQs enabled) does
 * everything that can be done from outside: the masks other CPUs consult, interrupt routing
 * (the distributor), the watchdog's timers, the worker's affinity, and, for offline, freeing
 * what the CPU ran on once the firmware says it is off.  The changed CPU does what only it
 * can do, in one step with IRQs masked (`local_step`, run by IPI_PARTITION, or directly when
 * the requester runs on it): end an isolation, hand its timers to a housekeeping CPU, send
 * away the tasks that may no longer run there, flip its own `dataplane` flag, give back its
 * page cache and run what was deferred for it.  The requester waits for that step and for
 * nothing else: no other dataplane CPU is asked, interrupted or waited for.
 *
 * Ordering.  Every mask is written with sequentially consistent atomics before the IPI that
 * asks for the local step, and the step takes the run-queue and timer-queue locks that the
 * readers of those masks take (place_task checks cpu_accepts under the queue's lock), so a
 * placement or a deferred request that raced with the change is either seen by the step or
 * sees the new masks.  Requests deferred for a dataplane CPU (ipi_call) are run by the step
 * after the flip in both directions, so none is stranded between the two views.
 *
 * Locks: `busy` under mutex_wq.lock serialises changes (a sleeping mutex: a change may wait
 * milliseconds for a CPU to power off).  The step takes proc_lock (isolation), run-queue and
 * timer-queue locks, in lockrank.h's order, never more than the functions it calls take.
 */
#include "kernel/repartition.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/isolate.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/partition.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/vm.h"
#include "kernel/wait.h"
#include "kernel/watchdog.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

/* What the changed CPU is asked to do. */
enum step {
    STEP_TO_DATAPLANE = 1,
    STEP_TO_HOUSEKEEPING,
    STEP_OFFLINE,
};

/* The mailbox of one CPU: written by the requester before the IPI, `done` by the CPU. */
struct request {
    enum step step;
    unsigned timers_to;        /* the housekeeping CPU that takes its timers */
    uint64_t seq;              /* requests made */
    uint64_t done;             /* requests carried out (release: the step's effects first) */
    struct task *evicted;      /* its running task had to leave (compared, never used) */
    uint64_t switches_at_step; /* its context switches when the step ran */
} __attribute__((aligned(64)));

static struct request reqs[MAX_CPUS];
PERCPU_ARRAY(reqs);
static struct waitq mutex_wq = {SPINLOCK_INIT_RANK(LOCK_WAITQ), LIST_INIT(mutex_wq.tasks)};
static bool busy;

/* ---- the step on the changed CPU ---- */

/* A timer that stays on a CPU leaving housekeeping: the sleep of a task that may run on no
 * online housekeeping CPU (a dataplane task-to-be keeps its own timer, as isolation allows). */
static bool keep_pinned_sleeper(const struct timer *tm, void *unused)
{
    struct task *t = waitq_sleeper_of(tm);
    return t && !cpumask_intersects3(&t->affinity, &cpus_online, &cpus_housekeeping);
}

/* Hand CPU `from`'s timers to housekeeping CPU `to` (any CPU may do it); how many moved. */
static unsigned hand_timers(unsigned from, unsigned to, bool keep_pinned)
{
    unsigned moved = 0;
    if (timer_evacuate(from, to, keep_pinned ? keep_pinned_sleeper : 0, 0, &moved)) {
        ipi_send(to, IPI_KICK); /* a housekeeping CPU: it must reprogram for them */
    }
    return moved;
}

/* This CPU's own flag and the global sets, in the order that strands no deferred request:
 * the sets first (new requests go the new way), then the flag, then what was deferred. */
static void flip_role(unsigned me, bool dataplane)
{
    if (dataplane) {
        cpumask_set_atomic(&cpus_dataplane, me);
    } else {
        cpumask_clear_atomic(&cpus_dataplane, me);
        cpumask_set_atomic(&cpus_housekeeping, me);
    }
    dataplane_set_role(this_cpu(), dataplane);
    timer_set_dataplane(dataplane);
}

static void local_step(void)
{
    ASSERT_IRQS_MASKED();
    unsigned me = this_cpu_id();
    struct request *rq = &reqs[me];
    enum step step = rq->step;
    ASSERT(rq->done + 1 == rq->seq); /* one request at a time, not yet carried out */
    ASSERT(step >= STEP_TO_DATAPLANE && step <= STEP_OFFLINE);
    if (step == STEP_TO_HOUSEKEEPING || step == STEP_OFFLINE) {
        isol_end_here(step == STEP_OFFLINE ? "the cpu goes offline"
                                           : "the cpu becomes housekeeping");
    }
    if (step == STEP_TO_DATAPLANE || step == STEP_OFFLINE) {
        hand_timers(me, rq->timers_to, step == STEP_TO_DATAPLANE);
    }
    if (step != STEP_OFFLINE) {
        flip_role(me, step == STEP_TO_DATAPLANE);
    }
    rq->evicted = 0;
    if (step != STEP_TO_HOUSEKEEPING) {
        struct task *cur = current();
        if (sched_evacuate_this_cpu(step == STEP_OFFLINE)) {
            rq->evicted = cur;
            rq->switches_at_step = STAT_READ(me, ctx_switches);
        }
    }
    if (step == STEP_OFFLINE) {
        this_cpu()->stopping = true; /* its idle loop powers it off once it is empty */
    }
    page_drain_local();
    ipi_run_calls();
    __atomic_store_n(&rq->done, rq->seq, __ATOMIC_RELEASE);
}

/* IPI_PARTITION: the requester asks this CPU for its step. */
static void partition_ipi(unsigned reason)
{
    local_step();
}

void repartition_init(void)
{
    ipi_set_handler(IPI_PARTITION, partition_ipi);
}

/* ---- the requester's side ---- */

/* Ask `cpu` for `step` and wait until it is done.  Only `cpu` is interrupted. */
static void ask(unsigned cpu, enum step step, unsigned timers_to)
{
    ASSERT(cpu > 0 && cpu < ncpus); /* partition_step's checks: CPU 0 never changes */
    ASSERT(step == STEP_TO_HOUSEKEEPING || cpumask_test_atomic(&cpus_housekeeping, timers_to));
    struct request *rq = &reqs[cpu];
    rq->step = step;
    rq->timers_to = timers_to;
    uint64_t seq = ++rq->seq;
    if (cpu == this_cpu_id()) {
        unsigned long flags = arch_irq_save();
        local_step();
        arch_irq_restore(flags);
        return;
    }
    ipi_send(cpu, IPI_PARTITION);
    while (__atomic_load_n(&rq->done, __ATOMIC_ACQUIRE) != seq) {
        arch_cpu_relax();
    }
}

/* Wait until the task the step told to leave `cpu` has switched away. */
static void wait_evicted(unsigned cpu)
{
    struct request *rq = &reqs[cpu];
    if (!rq->evicted || cpu == this_cpu_id()) {
        return;
    }
    while (sched_current(cpu) == rq->evicted &&
           STAT_READ(cpu, ctx_switches) - rq->switches_at_step < 2) {
        arch_cpu_relax();
    }
}

static cpumask_t online_hk(void)
{
    return cpumask_and(cpumask_load(&cpus_housekeeping), cpumask_load(&cpus_online));
}

/* Housekeeping: the other CPUs take over its interrupts, watchdog duty and the worker. */
static void leave_housekeeping(unsigned cpu)
{
    cpumask_clear_atomic(&cpus_housekeeping, cpu);
    cpumask_t hk = online_hk();
    ASSERT(!cpumask_empty(hk)); /* partition_step keeps the last housekeeping CPU */
    watchdog_update(hk);
    irq_route_away(cpu, hk);
    work_set_cpus(hk);
}

static int to_dataplane(unsigned cpu)
{
    leave_housekeeping(cpu);
    unsigned to = cpumask_first(online_hk());
    ask(cpu, STEP_TO_DATAPLANE, to);
    if (reqs[cpu].evicted && cpu != this_cpu_id()) {
        wait_evicted(cpu);
        /* The evicted task may have been inside a system call that then slept with a
         * timeout, arming its timer there after the step: that timer goes too, and the CPU
         * (the one being changed) reprograms for its loss. */
        if (hand_timers(cpu, to, true)) {
            ipi_send(cpu, IPI_KICK);
        }
    }
    return 0;
}

static int to_housekeeping(unsigned cpu)
{
    ask(cpu, STEP_TO_HOUSEKEEPING, 0);
    cpumask_t hk = online_hk();
    watchdog_update(hk);
    work_set_cpus(hk);
    return 0;
}

static int to_offline(unsigned cpu)
{
    bool was_hk = !cpus[cpu].dataplane;
    cpumask_clear_atomic(&cpus_online, cpu);
    cpumask_clear_atomic(&cpus_dataplane, cpu);
    if (was_hk) {
        leave_housekeeping(cpu);
    }
    ask(cpu, STEP_OFFLINE, cpumask_first(online_hk()));
    if (cpu == this_cpu_id()) {
        schedule(); /* the step evicted us: leave the CPU so it can stop */
    }
    int r = smp_wait_off(cpu);
    dataplane_set_role(&cpus[cpu], false); /* it is off: its flags are ours to write */
    return r;
}

static int to_online(unsigned cpu, bool dataplane)
{
    dataplane_set_role(&cpus[cpu], dataplane);
    cpumask_set_atomic(dataplane ? &cpus_dataplane : &cpus_housekeeping, cpu);
    int r = smp_cpu_start(cpu);
    if (r != 0) {
        cpumask_clear_atomic(dataplane ? &cpus_dataplane : &cpus_housekeeping, cpu);
        return r;
    }
    if (!dataplane) {
        cpumask_t hk = online_hk();
        watchdog_update(hk);
        work_set_cpus(hk);
    }
    return 0;
}

int repartition_apply(unsigned cpu, enum partition_role to)
{
    enum partition_role from = !cpumask_test_atomic(&cpus_online, cpu) ? PART_OFFLINE
                               : cpus[cpu].dataplane                   ? PART_DATAPLANE
                                                                       : PART_HOUSEKEEPING;
    int r;
    if (from == PART_OFFLINE) {
        r = to_online(cpu, to == PART_DATAPLANE);
    } else if (to == PART_OFFLINE) {
        r = to_offline(cpu);
    } else if (to == PART_DATAPLANE) {
        r = to_dataplane(cpu);
    } else {
        r = to_housekeeping(cpu);
    }
    if (r == 0) {
        trace_event(ZT_TR_PARTITION, cpu,
                    to == PART_OFFLINE     ? ZT_PART_OFFLINE
                    : to == PART_DATAPLANE ? ZT_PART_DATAPLANE
                                           : ZT_PART_HOUSEKEEPING);
    }
    return r;
}

/* ---- the system call ---- */

static int mutex_lock(void)
{
    unsigned long flags = spin_lock_irqsave(&mutex_wq.lock);
    while (busy) {
        if (waitq_sleep_locked(&mutex_wq, flags, 0) == -EINTR) {
            return -EINTR;
        }
        flags = spin_lock_irqsave(&mutex_wq.lock);
    }
    busy = true;
    spin_unlock_irqrestore(&mutex_wq.lock, flags);
    return 0;
}

static void mutex_unlock(void)
{
    unsigned long flags = spin_lock_irqsave(&mutex_wq.lock);
    ASSERT(busy);
    busy = false;
    spin_unlock_irqrestore(&mutex_wq.lock, flags);
    waitq_wake_one(&mutex_wq);
}

static void isolated_cpus(struct partition_state *s)
{
    int pid;
    char name[ZT_NAME_LEN];
    for (unsigned c = 0; c < s->ncpus; c++) {
        if (isol_owner(c, &pid, name)) {
            cpumask_set(&s->isolated, c);
        }
    }
}

/* Check every CPU of `m` in turn against the partition as it will be; 0 with *todo the CPUs
 * that change, or the first refusal (its message printed unless quiet). */
static int check_all(cpumask_t m, unsigned op, unsigned flags, cpumask_t *todo)
{
    char msg[128];
    struct partition_state s = {
        .ncpus = ncpus,
        .online = cpumask_load(&cpus_online),
        .housekeeping = cpumask_load(&cpus_housekeeping),
        .dataplane = cpumask_load(&cpus_dataplane),
    };
    isolated_cpus(&s);
    *todo = CPUMASK_NONE;
    for_each_cpu(c, m) {
        int r = partition_step(&s, c, op, flags, msg, sizeof(msg));
        if (r < 0) {
            if (!(flags & ZT_PART_QUIET)) {
                hklog("%s", msg);
            }
            return r;
        }
        if (r == 0) {
            cpumask_set(todo, c);
        }
    }
    struct task_where w;
    if (op == ZT_PART_OFFLINE && !cpumask_empty(*todo) &&
        task_find_stranded(*todo, s.online, cpumask_and(s.housekeeping, s.online), &w)) {
        if (!(flags & ZT_PART_QUIET)) {
            hklog("partition: cpu %u left online: pid %d tid %d (%pE) runs there and %s", w.cpu,
                  w.pid, w.tid, w.name,
                  w.nowhere ? "may run on no other online CPU"
                            : "could move only to another dataplane CPU");
        }
        return -EBUSY;
    }
    return 0;
}

int repartition_request(cpumask_t m, unsigned op, unsigned flags)
{
    cpumask_t todo;
    int r = mutex_lock();
    if (r != 0) {
        return r;
    }
    r = check_all(m, op, flags, &todo);
    enum partition_role to = op == ZT_PART_OFFLINE ? PART_OFFLINE
                             : op == ZT_PART_DATAPLANE || (flags & ZT_PART_AS_DATAPLANE)
                                 ? PART_DATAPLANE
                                 : PART_HOUSEKEEPING;
    for (unsigned c = cpumask_first(todo); r == 0 && c < MAX_CPUS; c = cpumask_next(todo, c + 1)) {
        r = repartition_apply(c, to);
    }
    if (!cpumask_empty(todo) && !(flags & ZT_PART_QUIET)) {
        partition_print(true);
    }
    mutex_unlock();
    return r;
}

/* User text for a console line: at most 40 bytes, anything unprintable shown as '?'. */
static void printable(char *out, const char *in, size_t len)
{
    size_t n = MIN(len, (size_t)40);
    for (size_t i = 0; i < n; i++) {
        out[i] = in[i] >= 32 && in[i] < 127 ? in[i] : '?';
    }
    out[n] = 0;
}

long sys_zt_partition(struct trap_frame *f)
{
    uint64_t ulist = arch_frame_arg(f, 0), len = arch_frame_arg(f, 1);
    uint64_t op = arch_frame_arg(f, 2), flags = arch_frame_arg(f, 3);
    char text[ZT_PART_LIST_MAX], shown[41];
    if (op < ZT_PART_HOUSEKEEPING || op > ZT_PART_ONLINE || (flags & ~(uint64_t)ZT_PART_FLAGS) ||
        ((flags & ZT_PART_AS_DATAPLANE) && op != ZT_PART_ONLINE) || len == 0 ||
        len > sizeof(text)) {
        return -EINVAL;
    }
    if (copy_from_user(current_vm(), text, ulist, len)) {
        return -EFAULT;
    }
    cpumask_t m;
    unsigned bad = 0;
    int r = cpulist_parse(text, len, &m, &bad);
    if (r != 0 && !(flags & ZT_PART_QUIET)) {
        printable(shown, text, len);
        if (r == -ERANGE) {
            hklog("partition: cpu %u does not exist (this machine has %u CPUs)", bad, ncpus);
        } else {
            hklog("partition: malformed CPU list \"%s\"", shown);
        }
    }
    return r != 0 ? r : repartition_request(m, (unsigned)op, (unsigned)flags);
}
