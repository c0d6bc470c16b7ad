/* SPDX-License-Identifier: MIT */
/*
 * test_partition.c — host unit tests of the partition state machine: the rules
 * (partition_step, pure) and the protocol (repartition_apply) on the fake arch, which
 * records every IPI, route and timer write.  The test plays the changed CPU: the fake's
 * ipi_hook runs that CPU's IPI handler at once, as that CPU, with IRQs masked, and its
 * cpu_start_hook brings a CPU up as secondary_main would.
 *
 * The machine: CPUs 0-2 housekeeping, 3-4 dataplane (3 is the bystander), all online.
 *
 * PST-01  refusals: unknown op or flags, no such CPU, CPU 0, moving an offline CPU, onlining
 *         an online CPU, offlining an offline one, an isolated CPU with REFUSE_ISOLATED;
 *         each with its errno and message, and the state untouched
 * PST-02  a list is checked against the state as it will be; same role is "nothing to do";
 *         the last-housekeeping guard (behind CPU 0's rule) holds on its own
 * PST-03  housekeeping -> dataplane: interrupts, kernel timers, tasks that may use
 *         housekeeping and the page cache leave; a pinned sleeper and its timer stay; only
 *         the changed CPU and housekeeping CPUs get IPIs
 * PST-04  dataplane -> housekeeping: an isolated task's isolation ends with a report,
 *         requests deferred for the CPU run, the watchdog gets it; the bystander gets nothing
 * PST-05  offline then online, three times: stack, trace ring and emergency stack are given
 *         back each time (free pages and stacks at their baseline), tasks and timers leave
 * PST-06  a task evicted in the middle of a system call that then sleeps with a timeout arms
 *         its timer on the CPU after the step: the timer still leaves it (to housekeeping)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/isolate.h"
#include "kernel/kstack.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/partition.h"
#include "kernel/repartition.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/wait.h"
#include "kernel/watchdog.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"
#include "masks.h"
#include "unit.h"

#define BIT(c)    (1ull << (c)) /* CPU c < 64 in a word of CPUs (masks.h: M64) */
#define NCPUS     5
#define BYSTANDER 3

static struct task tasks[4];
static struct vm empty_vm; /* what a switch to a task of proc activates */
static struct process proc = {.pid = 42, .vm = &empty_vm};

/* ---- the rules ---- */

static struct partition_state machine(void)
{
    return (struct partition_state){.ncpus = NCPUS,
                                    .online = M64(0x1f),
                                    .housekeeping = M64(0x07),
                                    .dataplane = M64(0x18),
                                    .isolated = M64(BIT(4))};
}

static void refused(unsigned cpu, unsigned op, unsigned flags, int err, const char *words)
{
    struct partition_state s = machine(), before = s;
    char msg[128];
    assert_int_equal(partition_step(&s, cpu, op, flags, msg, sizeof(msg)), err);
    if (!strstr(msg, words)) {
        fail_msg("cpu %u op %u: message \"%s\" lacks \"%s\"", cpu, op, msg, words);
    }
    assert_memory_equal(&s, &before, sizeof(s));
}

/* PST-01: each refusal with its errno and its message, and the state untouched */
static void pst01_refusals(TEST_STATE)
{
    refused(1, 0, 0, -EINVAL, "unknown request");
    refused(1, 5, 0, -EINVAL, "unknown request");
    refused(1, ZT_PART_DATAPLANE, 0x100, -EINVAL, "unknown request");
    refused(1, ZT_PART_DATAPLANE, ZT_PART_AS_DATAPLANE, -EINVAL, "unknown request");
    refused(5, ZT_PART_DATAPLANE, 0, -ERANGE, "cpu 5 does not exist (this machine has 5 CPUs)");
    refused(63, ZT_PART_ONLINE, 0, -ERANGE, "does not exist");
    refused(0, ZT_PART_DATAPLANE, 0, -EPERM, "cpu 0 is always housekeeping");
    refused(0, ZT_PART_OFFLINE, 0, -EPERM, "cpu 0 is always housekeeping");
    refused(2, ZT_PART_ONLINE, 0, -EALREADY, "cpu 2 is already online (housekeeping)");
    refused(4, ZT_PART_HOUSEKEEPING, ZT_PART_REFUSE_ISOLATED, -EBUSY, "an isolated task owns it");
    refused(4, ZT_PART_OFFLINE, ZT_PART_REFUSE_ISOLATED, -EBUSY, "an isolated task owns it");
    struct partition_state s = machine();
    char msg[128];
    assert_int_equal(partition_step(&s, 2, ZT_PART_OFFLINE, 0, msg, sizeof(msg)), 0);
    assert_int_equal(partition_step(&s, 2, ZT_PART_DATAPLANE, 0, msg, sizeof(msg)), -ENODEV);
    assert_non_null(strstr(msg, "cpu 2 is offline: bring it online first"));
    assert_int_equal(partition_step(&s, 2, ZT_PART_OFFLINE, 0, msg, sizeof(msg)), -EALREADY);
    assert_non_null(strstr(msg, "cpu 2 is offline already"));
}

/* PST-02: a list is checked in order against the state as it will be; a CPU that already has
 * the role is "nothing to do" (1); the last-housekeeping guard holds without CPU 0's rule */
static void pst02_transitions(TEST_STATE)
{
    struct partition_state s = machine();
    char msg[128];
    assert_int_equal(partition_step(&s, 1, ZT_PART_DATAPLANE, 0, msg, sizeof(msg)), 0);
    assert_int_equal(partition_step(&s, 2, ZT_PART_DATAPLANE, 0, msg, sizeof(msg)), 0);
    assert_int_equal(low64(s.housekeeping), BIT(0));
    assert_int_equal(low64(s.dataplane), 0x1e);
    assert_int_equal(partition_step(&s, 3, ZT_PART_DATAPLANE, 0, msg, sizeof(msg)), 1);
    assert_int_equal(partition_step(&s, 4, ZT_PART_HOUSEKEEPING, 0, msg, sizeof(msg)), 0);
    assert_int_equal(low64(s.isolated), 0); /* its isolation ends with the move */
    assert_int_equal(partition_step(&s, 4, ZT_PART_OFFLINE, 0, msg, sizeof(msg)), 0);
    assert_int_equal(low64(s.online), 0x0f);
    assert_int_equal(low64(s.housekeeping) & low64(s.online), BIT(0));
    assert_int_equal(partition_step(&s, 4, ZT_PART_ONLINE, ZT_PART_AS_DATAPLANE, msg, sizeof(msg)),
                     0);
    assert_true(cpumask_has(cpumask_and(s.dataplane, s.online), 4));
    /* A machine where CPU 1 is the only housekeeping CPU (CPU 0's rule makes it unreachable
     * from zt_partition, so this guard is proven here): it may not leave. */
    struct partition_state odd = {.ncpus = 3,
                                  .online = M64(0x7),
                                  .housekeeping = M64(BIT(1)),
                                  .dataplane = M64(BIT(0) | BIT(2))};
    assert_int_equal(partition_step(&odd, 1, ZT_PART_DATAPLANE, 0, msg, sizeof(msg)), -EPERM);
    assert_non_null(strstr(msg, "cpu 1 is the last housekeeping CPU"));
    assert_int_equal(partition_step(&odd, 1, ZT_PART_OFFLINE, 0, msg, sizeof(msg)), -EPERM);
}

/* ---- the protocol on the fake arch ---- */

static unsigned ipis_to(unsigned cpu)
{
    unsigned n = 0;
    for (unsigned r = 0; r < 16; r++) {
        n += fake.ipi_sent[cpu][r];
    }
    return n;
}

/* The receiving CPU takes the IPI now: its handler runs as that CPU, IRQs masked.  A CPU
 * told to stop then "powers off" as smp_stop_this would have it (the fake cannot really). */
static struct task *sleeps_after_step; /* running, it sleeps after the step (the sixth test) */

static void deliver(unsigned cpu, unsigned ipi)
{
    if (ipi != IPI_PARTITION) {
        return; /* the others only set flags the test does not need */
    }
    struct cpu *caller = fake_cpu;
    unsigned long masked = fake_irq_masked;
    fake_cpu = &cpus[cpu];
    fake_irq_masked = 1;
    irq_dispatch(IRQ_CLASS_IPI, ipi);
    struct task *t = sleeps_after_step;
    if (t && sched_current(cpu) == t) { /* back in its system call, it goes to sleep */
        sleeps_after_step = 0;
        sched_prepare_sleep(t);
        waitq_arm_sleep_timer(t, fake_counter + 100000);
        fake.switch_returns = true;
        schedule(); /* to idle: a sleeping task is not migrated, its timer stays here */
        fake.switch_returns = false;
    }
    if (cpus[cpu].stopping && sched_cpu_is_empty(cpu)) {
        ipi_run_calls();
        page_drain_local();
        cpus[cpu].stopping = false;
        cpus[cpu].online = false;
        fake.cpu_off[cpu] = true;
    }
    fake_irq_masked = masked;
    fake_cpu = caller;
}

/* CPU `id` comes up as secondary_main brings it: its queues, its IPIs, online. */
static void come_up(unsigned id)
{
    struct cpu *caller = fake_cpu;
    fake_cpu = &cpus[id];
    stats_init_cpu(id);
    sched_init_cpu(&cpus[id]);
    timer_init_cpu(id);
    ipi_init_cpu();
    fake.cpu_off[id] = false;
    cpus[id].online = true;
    cpumask_set_atomic(&cpus_online, id);
    fake_cpu = caller;
}

static int world(void **state)
{
    static void *pool;
    bool first = !pool;
    fake_reset();
    if (first) {
        pool = fixture_pages_and_cpu0(4096);
        kstack_init();
    }
    ncpus = NCPUS;
    cpus_online = M64(0x1f);
    cpus_housekeeping = M64(0x07);
    cpus_dataplane = M64(0x18);
    for (unsigned c = 0; c < NCPUS; c++) {
        struct cpu *p = &cpus[c];
        memset(p, 0, sizeof(*p));
        p->id = c;
        p->arch.id = c;
        p->online = true;
        p->dataplane = c >= 3;
        fake_cpu = p;
        stats_init_cpu(c); /* its public counters, as at bring-up */
        sched_init_cpu(p);
        if (c != 0 || first) { /* CPU 0's registers the timer interrupt: once */
            timer_init_cpu(c);
        }
        ipi_init_cpu();
    }
    fake_cpu = &cpus[0];
    hklog_init();
    isol_init(false);
    repartition_init();
    fake.ipi_hook = deliver;
    fake.cpu_start_hook = come_up;
    memset(tasks, 0, sizeof(tasks));
    return 0;
}

static struct task *start(unsigned i, cpumask_t affinity)
{
    struct task *t = &tasks[i];
    t->tid = 100 + (int)i;
    ksnprintf(t->name, sizeof(t->name), "t%u", i);
    t->proc = &proc;
    t->affinity = affinity;
    t->cpu = cpumask_first(affinity);
    timer_init(&t->sleep_timer, 0);
    sched_start_task(t);
    return t;
}

static void as_cpu(unsigned cpu, void (*fn)(void *), void *arg)
{
    struct cpu *caller = fake_cpu;
    fake_cpu = &cpus[cpu];
    fn(arg);
    fake_cpu = caller;
}

/* t runs on its CPU, then sleeps there with its sleep timer armed. */
static void sleep_there(void *arg)
{
    struct task *t = arg;
    fake.switch_returns = true;
    schedule(); /* t becomes current */
    /* masked until it sleeps, as waitq_sleep_locked does */
    unsigned long flags = arch_irq_save();
    sched_prepare_sleep(t);
    waitq_arm_sleep_timer(t, fake_counter + 100000);
    schedule(); /* to idle */
    arch_irq_restore(flags);
    fake.switch_returns = false;
}

static void kernel_timer_fn(struct timer *t)
{
}

static struct timer ktimer;

static void arm_kernel_timer(void *arg)
{
    timer_init(&ktimer, kernel_timer_fn);
    timer_arm(&ktimer, fake_counter + 5000);
}

static void cache_a_page(void *arg)
{
    page_free(page_alloc()); /* pages parked in this CPU's cache (a refill takes a batch) */
}

/* PST-03: housekeeping -> dataplane of CPU 2 */
static void pst03_to_dataplane(TEST_STATE)
{
    struct task *pinned = start(0, M64(BIT(2)));
    as_cpu(2, sleep_there, pinned);
    struct task *roams = start(1, M64(BIT(1) | BIT(2))); /* queued on 1 (least loaded, prev 1) */
    struct task *mover = start(2, M64(BIT(2)));          /* queued on 2 */
    mover->affinity = M64(BIT(1) | BIT(2));              /* may now use housekeeping CPU 1 */
    as_cpu(2, arm_kernel_timer, 0);
    as_cpu(2, cache_a_page, 0);
    assert_int_equal(irq_route(40, 2), 0);
    assert_int_equal(irq_route(41, 1), 0);
    assert_true(page_cached_on(2) >= 1);
    memset(fake.ipi_sent, 0, sizeof(fake.ipi_sent));

    assert_int_equal(repartition_apply(2, PART_DATAPLANE), 0);

    assert_true(cpus[2].dataplane);
    assert_true(cpumask_has(cpus_dataplane, 2) && !cpumask_has(cpus_housekeeping, 2));
    assert_int_equal(fake.ipi_sent[2][IPI_PARTITION], 1);
    assert_int_equal(ipis_to(BYSTANDER) + ipis_to(4), 0);
    assert_int_equal(arch_irq_route_of(40), 0); /* to the remaining housekeeping CPUs */
    assert_int_equal(arch_irq_route_of(41), 1);
    assert_int_equal(timer_cpu(&ktimer), 0);
    assert_int_equal(timer_cpu(&pinned->sleep_timer), 2); /* a dataplane task-to-be's own */
    assert_int_equal(mover->cpu, 1);
    assert_int_equal(roams->cpu, 1);
    assert_int_equal(page_cached_on(2), 0);
    assert_true(timer_cancel(&ktimer));
    assert_true(timer_cancel(&pinned->sleep_timer));
}

static void isolate_here(void *arg)
{
    fake.switch_returns = true;
    schedule(); /* t becomes current */
    fake.switch_returns = false;
    assert_int_equal(isol_prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE), 0);
}

static void drain_call(void)
{
    page_drain_local();
}

/* PST-04: dataplane -> housekeeping of CPU 4, which an isolated task owns */
static void pst04_to_housekeeping(TEST_STATE)
{
    struct task *iso = start(0, M64(BIT(4)));
    as_cpu(4, isolate_here, iso);
    assert_true(cpus[4].isol_owned);
    ipi_call(4, CALL_DRAIN_PAGES, drain_call); /* deferred: not sent */
    assert_int_equal(ipi_pending_calls(4), 1);
    watchdog_start(100); /* on CPUs 0-2 */
    assert_int_equal(low64(watchdog_cpus()), 0x07);
    memset(fake.ipi_sent, 0, sizeof(fake.ipi_sent));

    assert_int_equal(repartition_apply(4, PART_HOUSEKEEPING), 0);

    assert_false(cpus[4].dataplane);
    assert_true(cpumask_has(cpus_housekeeping, 4) && !cpumask_has(cpus_dataplane, 4));
    assert_int_equal(iso->isol_flags, 0);
    assert_false(cpus[4].isol_owned);
    assert_int_equal(ipi_pending_calls(4), 0);
    assert_int_equal(low64(watchdog_cpus()), 0x17);
    assert_int_equal(ipis_to(BYSTANDER), 0);
    hklog_flush();
    assert_non_null(strstr(fake.console, "isolation: pid 42 (t0) on cpu 4: isolation ended: "
                                         "the cpu becomes housekeeping [not strict"));
    /* and back: the watchdog leaves it, still nothing for the bystander */
    assert_int_equal(repartition_apply(4, PART_DATAPLANE), 0);
    assert_int_equal(low64(watchdog_cpus()), 0x07);
    assert_int_equal(ipis_to(BYSTANDER), 0);
    watchdog_start(0); /* off again: the next tests do not want it */
    assert_int_equal(low64(watchdog_cpus()), 0);
}

/* PST-05: offline and online, three times; nothing kept, nothing left behind */
static void pst05_offline_online(TEST_STATE)
{
    cpus[2].kstack_top = kstack_alloc(); /* what CPU 2 got at boot */
    assert_int_equal(trace_init_cpu(2), 0);
    size_t pages = page_free_count();
    unsigned stacks = kstack_used_count();
    for (int round = 0; round < 3; round++) {
        struct task *t = start((unsigned)round, M64(BIT(2))); /* queued on CPU 2 */
        t->affinity = M64(BIT(1) | BIT(2));
        assert_int_equal(sched_nr_running(2), 1);
        as_cpu(2, arm_kernel_timer, 0);
        memset(fake.ipi_sent, 0, sizeof(fake.ipi_sent));
        assert_int_equal(repartition_apply(2, PART_OFFLINE), 0);
        assert_false(
            cpumask_has(cpumask_or(cpumask_or(cpus_online, cpus_housekeeping), cpus_dataplane), 2));
        assert_int_equal(timer_cpu(&ktimer), 0);
        assert_int_equal(t->cpu, 1); /* it left */
        assert_int_equal(ipis_to(BYSTANDER) + ipis_to(4), 0);
        assert_int_equal(fake.cpu_releases, (unsigned)round + 1);
        assert_int_equal(kstack_used_count(), stacks - 1); /* its stack is back */
        assert_true(timer_cancel(&ktimer));
        assert_int_equal(repartition_apply(2, PART_HOUSEKEEPING), 0);
        assert_true(cpumask_has(cpumask_and(cpus_online, cpus_housekeeping), 2));
        assert_int_equal(kstack_used_count(), stacks);
        /* the task ran elsewhere meanwhile: take it off its queue for the next round */
        as_cpu(t->cpu, sleep_there, t);
        assert_true(timer_cancel(&t->sleep_timer));
        assert_int_equal(page_free_count(), pages);
    }
}

static void run_it(void *arg)
{
    fake.switch_returns = true;
    schedule(); /* the task becomes current */
    fake.switch_returns = false;
}

/* PST-06: a task evicted in the middle of a system call that then sleeps with a timeout arms
 * its timer on the CPU after the step: the timer still leaves it (to housekeeping) */
static void pst06_timer_armed_after_the_step(TEST_STATE)
{
    struct task *t = start(0, M64(BIT(2)));
    as_cpu(2, run_it, 0);
    assert_ptr_equal(sched_current(2), t);
    t->affinity = M64(BIT(1) | BIT(2)); /* it may use housekeeping CPU 1: it must leave */
    sleeps_after_step = t;
    memset(fake.ipi_sent, 0, sizeof(fake.ipi_sent));

    assert_int_equal(repartition_apply(2, PART_DATAPLANE), 0);

    assert_null(sleeps_after_step);                  /* the hook did put it to sleep */
    assert_int_equal(timer_cpu(&t->sleep_timer), 0); /* not left on the dataplane CPU */
    assert_int_equal(fake.ipi_sent[2][IPI_KICK], 1); /* CPU 2 reprograms for its loss */
    assert_int_equal(ipis_to(BYSTANDER) + ipis_to(4), 0);
    assert_true(timer_cancel(&t->sleep_timer));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pst01_refusals),
        cmocka_unit_test(pst02_transitions),
        cmocka_unit_test_setup(pst03_to_dataplane, world),
        cmocka_unit_test_setup(pst04_to_housekeeping, world),
        cmocka_unit_test_setup(pst05_offline_online, world),
        cmocka_unit_test_setup(pst06_timer_armed_after_the_step, world),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
