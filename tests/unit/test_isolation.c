/* SPDX-License-Identifier: MIT */
/*
 * test_isolation.c — host unit tests of the isolation rules, against the fake arch, which
 * records every IPI sent, every interrupt route and every timer written.
 *
 * The machine: CPUs 0-1 housekeeping, 2-3 dataplane, all online.  A "running" task is made
 * current on its CPU with fake.switch_returns (schedule completes without a real switch).
 *
 * ISR-01  ipi_call to a dataplane CPU is deferred, never sent; it runs at that CPU's next
 *         kernel entry.  To a housekeeping CPU it is sent.
 * ISR-02  irq_route refuses dataplane CPUs; irq_route_all_devices spreads every device
 *         interrupt over housekeeping CPUs only.
 * ISR-03  work queued on a dataplane CPU runs, and its timer is armed, on housekeeping only;
 *         the worker's step panics on a dataplane CPU.
 * ISR-04  strict isolation: a system call other than prctl/exit is refused (-EPERM), reported
 *         by the housekeeping worker, and the task is killed; not strict, the call runs.
 * ISR-05  admission (isol_enable): one dataplane CPU exactly, known flags, a free CPU
 *         (-EBUSY), no other runnable task (-EAGAIN after yielding).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "masks.h"

#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/entry.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/irq.h"
#include "kernel/isolate.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/vm.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

#define BIT(c) cpumask_of(c)

static void use_cpu(unsigned c)
{
    fake_cpu = &cpus[c];
}

static int group_setup(void **state)
{
    fake_reset();
    ncpus = 4;
    cpus_online = M64(0xf);
    cpus_housekeeping = cpumask_or(BIT(0), BIT(1));
    cpus_dataplane = cpumask_or(BIT(2), BIT(3));
    for (unsigned c = 0; c < 4; c++) {
        cpus[c].id = c;
        cpus[c].arch.id = c;
        cpus[c].online = true;
        cpus[c].dataplane = c >= 2;
        use_cpu(c);
        stats_init_cpu(c); /* its public counters, as at bring-up */
        sched_init_cpu(&cpus[c]);
        timer_init_cpu(c);
        ipi_init_cpu();
    }
    use_cpu(0);
    hklog_init();
    isol_init(false);
    return 0;
}

static unsigned ipis_to(unsigned cpu)
{
    unsigned n = 0;
    for (unsigned r = 0; r < 16; r++) {
        n += fake.ipi_sent[cpu][r];
    }
    return n;
}

/* ISR-01: ipi_call to a dataplane CPU is recorded and deferred, never sent as an IPI */
static void isr01_call_deferred(TEST_STATE)
{
    use_cpu(0);
    unsigned before2 = ipis_to(2), before1 = fake.ipi_sent[1][IPI_CALL];
    ipi_call(2, CALL_DRAIN_PAGES, page_drain_local);
    assert_int_equal(ipis_to(2), before2); /* nothing sent */
    assert_true(ipi_pending_calls(2) & (1ull << CALL_DRAIN_PAGES));
    assert_int_equal(ipi_deferred_calls(2), 1);
    ipi_call(1, CALL_DRAIN_PAGES, page_drain_local); /* housekeeping: sent */
    assert_int_equal(fake.ipi_sent[1][IPI_CALL], before1 + 1);
    assert_int_equal(ipi_deferred_calls(1), 0);
    use_cpu(2); /* the dataplane CPU's next kernel entry runs it */
    fake_irq_masked = 1;
    dataplane_kernel_entry();
    fake_irq_masked = 0;
    assert_int_equal(ipi_pending_calls(2), 0);
    use_cpu(0);
}

/* ISR-02: device interrupts go to housekeeping CPUs only */
static void isr02_routes_housekeeping_only(TEST_STATE)
{
    use_cpu(0);
    assert_int_equal(irq_route(40, 2), -EPERM);
    assert_int_equal(irq_route(41, 3), -EPERM);
    assert_int_equal(arch_irq_route_of(40), -1); /* refused before touching the controller */
    assert_int_equal(irq_route(40, 1), 0);
    assert_int_equal(arch_irq_route_of(40), 1);
    assert_int_equal(irq_route(ARCH_IRQ_FIRST_DEVICE - 1, 1), -EINVAL); /* not a device's */
    assert_int_equal(irq_route(ARCH_NR_IRQS, 1), -EINVAL);
    irq_route_all_devices();
    unsigned per_cpu[4] = {0};
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE; irq < ARCH_NR_IRQS; irq++) {
        int c = arch_irq_route_of(irq);
        assert_true(c == 0 || c == 1);
        per_cpu[c]++;
    }
    assert_true(per_cpu[0] > 0 && per_cpu[1] > 0); /* spread over both */
    assert_true(strstr(fake.console, "refused to route interrupt 40 to CPU 2"));
}

static struct work item;
static unsigned item_runs, item_cpu;

static void item_fn(struct work *w)
{
    item_runs++;
    item_cpu = this_cpu_id();
}

static void run_on_dataplane(void)
{
    work_init(&item, "isr03", item_fn);
    use_cpu(0);
    work_queue(&item);
    use_cpu(2);
    work_run_next();
}

/* ISR-03: work never runs on a dataplane CPU, and its timers are not armed there */
static void isr03_work_on_housekeeping(TEST_STATE)
{
    struct timer found[4];
    work_init(&item, "isr03", item_fn);
    use_cpu(2); /* a dataplane CPU asks for work in 1000 cycles */
    fake_counter = 100;
    assert_true(work_queue_delayed(&item, 1000));
    assert_int_equal(timer_list(2, found, 4), 0); /* not armed on the dataplane CPU */
    use_cpu(0);                                   /* the worker on housekeeping arms it there */
    assert_true(work_run_next());
    assert_int_equal(timer_list(2, found, 4), 0);
    assert_int_equal(timer_list(0, found, 4), 1);
    assert_int_equal(found[0].deadline, 1100);
    timer_cancel(&item.timer);
    item.queued = false;
    use_cpu(2); /* queued from a dataplane CPU, run on housekeeping */
    assert_true(work_queue(&item));
    use_cpu(1);
    assert_true(work_run_next());
    assert_int_equal(item_runs, 1);
    assert_int_equal(item_cpu, 1);
    assert_false(work_run_next()); /* nothing left */
    assert_false(cpumask_intersects(work_cpus_used(), cpus_dataplane));
    char why[400];
    if (!fixture_panics(run_on_dataplane, "assertion failed: !cpu_is_dataplane", why,
                        sizeof(why))) {
        fail_msg("the worker's step ran on a dataplane CPU: %s", why);
    }
    use_cpu(0);
}

/* ---- isolated tasks ---- */

static struct process procs[4];
static struct task tasks[4];

/* Task i of process i (pid 40 + i), pinned to `affinity`, started from CPU 0. */
static struct task *new_task(unsigned i, cpumask_t affinity)
{
    struct process *p = &procs[i];
    struct task *t = &tasks[i];
    memset(p, 0, sizeof(*p));
    memset(t, 0, sizeof(*t));
    p->pid = 40 + (int)i;
    static struct vm empty_vm; /* what a switch to the task activates (no user memory) */
    p->vm = &empty_vm;
    list_init(&p->threads);
    list_init(&p->children);
    t->proc = p;
    t->tid = p->pid;
    list_init(&t->rq_link); /* as task_alloc prepares a task */
    list_init(&t->wait_link);
    timer_init(&t->sleep_timer, 0);
    waitq_init(&t->sleep_wq);
    ksnprintf(t->name, sizeof(t->name), "iso%u", i);
    list_add_tail(&p->threads, &t->thread_link);
    p->nthreads = 1;
    t->affinity = affinity;
    t->cpu = cpumask_first(affinity);
    use_cpu(0);
    sched_start_task(t);
    return t;
}

/* CPU `cpu` switches to the head of its run queue. */
static void switch_on(unsigned cpu)
{
    use_cpu(cpu);
    fake.switch_returns = true;
    schedule();
    fake.switch_returns = false;
}

static long prctl_isolate(unsigned long flags)
{
    return isol_prctl(PR_SET_TASK_ISOLATION, flags);
}

/* A system call `nr` from the current task's user space, through the real entry path. */
static uint64_t user_syscall(unsigned nr)
{
    struct trap_frame f;
    memset(&f, 0, sizeof(f));
    f.sysno = nr;
    fake_irq_masked = 1;
    kernel_exit_to_user(&f); /* back to user space first: isolation quiesces */
    kernel_entry_from_user(&f);
    syscall_dispatch(&f, 0);
    fake_irq_masked = 0;
    return f.result;
}

/* ISR-04: a strict isolated task's system call is refused, reported on housekeeping, and
 * the task is killed; a non-strict one's runs */
static void isr04_strict_refuses_and_reports(TEST_STATE)
{
    struct task *t = new_task(0, BIT(3));
    switch_on(3);
    assert_ptr_equal(current(), t);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), 0);
    assert_int_equal(user_syscall(SYS_getpid), 40); /* not strict: it runs */
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT), 0);
    struct zt_isol_audit a;
    assert_int_equal(isol_audit(3, &a), 0);
    assert_true(a.isolated && a.strict && a.tid == 40);
    use_cpu(3);
    assert_int_equal((long)user_syscall(SYS_getpid), -EPERM);
    assert_true(procs[0].sig_pending & (1ull << (SIGKILL - 1))); /* sentenced */
    assert_int_equal(t->isol_flags, 0);                          /* isolation ended */
    assert_int_equal(isol_audit(3, &a), 0);
    assert_false(a.isolated);
    use_cpu(0); /* the report is printed by the worker, on housekeeping */
    fake.console_len = 0;
    fake.console[0] = 0;
    while (work_run_next()) {
    }
    if (!strstr(fake.console, "isolation: pid 40 (iso0) on cpu 3: syscall 172 (getpid)")) {
        fail_msg("no report; console: %s", fake.console);
    }
}

/* ISR-05: admission */
static void isr05_admission(TEST_STATE)
{
    /* Two CPUs in the mask, a housekeeping CPU, unknown flags, a signal past 64. */
    struct task *wide = new_task(1, cpumask_or(BIT(2), BIT(3)));
    wide->cpu = 2;
    switch_on(2);
    assert_ptr_equal(current(), wide);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), -EINVAL);
    wide->affinity = BIT(2);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE | (1u << 5)), -EINVAL);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_SET_SIG(65)),
                     -EINVAL);
    struct task *hk = new_task(2, BIT(1));
    switch_on(1);
    assert_ptr_equal(current(), hk);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), -EINVAL);

    /* CPU 2: `wide` isolates; a second task pinned there is refused with -EBUSY. */
    use_cpu(2);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), 0);
    struct task *other = new_task(3, BIT(2));
    use_cpu(2);
    fake.switch_returns = true;
    sched_yield_current(); /* `other` runs now */
    fake.switch_returns = false;
    assert_ptr_equal(current(), other);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), -EBUSY);

    /* `wide` ends its isolation; `other` asks while `wide` is still runnable there: after
     * yielding it is still not alone, so -EAGAIN, and nothing owns the CPU. */
    fake.switch_returns = true;
    sched_yield_current(); /* back to `wide` */
    assert_ptr_equal(current(), wide);
    assert_int_equal(isol_prctl(PR_SET_TASK_ISOLATION, 0), 0);
    sched_yield_current(); /* `other` again */
    assert_ptr_equal(current(), other);
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), -EAGAIN);
    fake.switch_returns = false;
    struct zt_isol_audit a;
    assert_int_equal(isol_audit(2, &a), 0);
    assert_false(a.isolated);
    assert_int_equal(a.other_runnable, 2);
    use_cpu(0);
}

/* ISR-06: admission populates the whole stack first, so no page fault can interrupt the
 * isolated task later; its stack pages are all mapped once prctl returns */
static void isr06_admission_populates_the_stack(TEST_STATE)
{
    static char pool[32 * 4096] __attribute__((aligned(4096)));
    page_add_range((paddr_t)(uintptr_t)pool, sizeof(pool));
    use_cpu(3);
    sched_init_cpu(&cpus[3]); /* an empty CPU 3 again (ISR-04's task is done with) */
    struct task *t = new_task(0, BIT(3));
    procs[0].vm = vm_create();
    assert_non_null(procs[0].vm);
    assert_int_equal(vm_map_stack(procs[0].vm, USER_STACK_TOP, 8 * 4096, 4096), 0);
    assert_true(procs[0].vm->stack_partial);
    switch_on(3);
    assert_ptr_equal(current(), t);
    fake_irq_masked = 0; /* a system call runs with IRQs enabled */
    assert_int_equal(prctl_isolate(PR_TASK_ISOLATION_ENABLE), 0);
    assert_false(procs[0].vm->stack_partial);
    assert_int_equal(procs[0].vm->pages, 8);
    for (uint64_t va = USER_STACK_TOP - 8 * 4096; va < USER_STACK_TOP; va += 4096) {
        assert_true(arch_as_lookup(&procs[0].vm->as, va, 0) != 0);
    }
    assert_int_equal(isol_prctl(PR_SET_TASK_ISOLATION, 0), 0);
    fake_irq_masked = 1;
    vm_put(procs[0].vm);
    procs[0].vm = 0;
    use_cpu(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(isr01_call_deferred),
        cmocka_unit_test(isr02_routes_housekeeping_only),
        cmocka_unit_test(isr03_work_on_housekeeping),
        cmocka_unit_test(isr04_strict_refuses_and_reports),
        cmocka_unit_test(isr05_admission),
        cmocka_unit_test(isr06_admission_populates_the_stack),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
