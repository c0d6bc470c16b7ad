/* SPDX-License-Identifier: MIT */
/*
 * test_fastexit.c — host unit tests of the system-call fast path on a dataplane CPU
 * (kernel/entry.c, include/kernel/dataplane.h): a dataplane CPU with nothing to quiesce
 * enters and leaves a call the way a housekeeping CPU does, and everything that must be given
 * back before user space runs again (a deferred request, a page in its cache) sends the exit
 * down the slow path, which gives it back before returning.  A timer that only needs
 * reprogramming is reprogrammed by the fast exit itself.
 *
 * CPU 0 runs (fake_cpu) with the page allocator fixture; the system call's task is `t` of
 * process `p`.  CPU 1 plays the other CPU that defers a request to CPU 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/entry.h"
#include "kernel/ipi.h"
#include "kernel/page.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"

static struct task t;
static struct process p;
static struct trap_frame frame;
static void *pool;

static int setup(void **state)
{
    if (!pool) {
        pool = fixture_pages_and_cpu0(256);
    }
    memset(&t, 0, sizeof(t));
    memset(&p, 0, sizeof(p));
    memset(&frame, 0, sizeof(frame));
    t.proc = &p;
    t.frame = &frame;
    ncpus = 2;
    cpus[1].id = 1;
    cpus_online = cpumask_or(cpumask_of(0), cpumask_of(1));
    cpus_housekeeping = cpumask_of(1);
    cpus_dataplane = cpumask_of(0);
    fake_cpu = &cpus[0];
    fake_irq_masked = 1; /* the entry paths run with IRQs masked */
    stats_init_cpu(0);
    stats_init_cpu(1);
    acct_init_cpu(0);
    cpus[0].current_task = &t;
    page_drain_local();
    cpus[0].slow_work = 0;
    dataplane_set_role(&cpus[0], true); /* a dataplane CPU: quiesce at its first exit */
    return 0;
}

/* A system call from user space on CPU 0, up to the point where its exit is decided: the
 * fast entry is taken (the test asserts it) and `during` runs as the call's body. */
static bool fast_call(void (*during)(void))
{
    frame.sysno = SYS_getpid;
    if (!kernel_syscall_enter(frame.sysno)) {
        return false;
    }
    if (during) {
        during();
    }
    return true;
}

static bool ran;
static void note_ran(void)
{
    ran = true;
}

/* CPU 1 asks CPU 0 (dataplane) to run note_ran: deferred, never sent as an IPI. */
static void defer_from_cpu1(void)
{
    fake_cpu = &cpus[1];
    ipi_call(0, CALL_DRAIN_PAGES, note_ran);
    fake_cpu = &cpus[0];
}

/* FAST-01: a dataplane CPU with nothing to quiesce takes the fast entry and the fast exit */
static void fast01_nothing_to_quiesce(void **state)
{
    kernel_exit_to_user(&frame); /* the first exit after the role began quiesces */
    assert_false(cpus[0].quiesce);
    assert_int_equal(cpus[0].slow_work, 0);
    assert_true(fast_call(NULL));
    assert_true(kernel_syscall_exit());
}

/* FAST-02: a request deferred to the dataplane CPU while its call runs sends the exit down
 * the slow path, and the request runs there, before the return to user space */
static void fast02_deferred_request_runs_before_return(void **state)
{
    kernel_exit_to_user(&frame);
    ran = false;
    unsigned ipis = fake.ipi_sent[0][IPI_CALL];
    assert_true(fast_call(defer_from_cpu1));
    assert_int_equal(fake.ipi_sent[0][IPI_CALL], ipis); /* never interrupted for it */
    assert_true(cpus[0].quiesce);
    assert_false(kernel_syscall_exit()); /* must not return to user space yet */
    assert_false(ran);
    kernel_syscall_exit_slow(&frame);
    assert_true(ran);
    assert_false(cpus[0].quiesce);
    assert_true(fast_call(NULL)); /* and the next call is fast again */
    assert_true(kernel_syscall_exit());
}

/* FAST-03: a request deferred before the call sends its entry down the slow path, which runs
 * it at once */
static void fast03_deferred_request_runs_at_entry(void **state)
{
    kernel_exit_to_user(&frame);
    ran = false;
    defer_from_cpu1(); /* while CPU 0 ran user code */
    frame.sysno = SYS_getpid;
    assert_null(kernel_syscall_enter(frame.sysno));
    kernel_entry_from_user(&frame); /* the slow path's entry */
    assert_true(ran);
}

static paddr_t freed;
static void free_one_page(void)
{
    page_free(freed);
}

/* FAST-04: a page the call left in the dataplane CPU's cache sends the exit down the slow
 * path, which gives it back: nothing stays parked on the CPU while its task runs */
static void fast04_cached_page_given_back(void **state)
{
    kernel_exit_to_user(&frame);
    freed = page_alloc();
    assert_true(freed != 0);
    kernel_exit_to_user(&frame); /* the allocation's refill left pages cached: given back */
    assert_int_equal(page_cached_on(0), 0);
    assert_true(fast_call(free_one_page));
    assert_int_equal(page_cached_on(0), 1);
    assert_false(kernel_syscall_exit());
    kernel_syscall_exit_slow(&frame);
    assert_int_equal(page_cached_on(0), 0);
    assert_false(cpus[0].quiesce);
}

/* FAST-05: on a housekeeping CPU the same page stays cached and the exit stays fast */
static void fast05_housekeeping_keeps_its_cache(void **state)
{
    dataplane_set_role(&cpus[0], false);
    cpus_dataplane = CPUMASK_NONE;
    cpus_housekeeping = cpus_online;
    freed = page_alloc();
    assert_true(freed != 0);
    cpus[0].slow_work = 0;
    assert_true(fast_call(free_one_page));
    assert_true(page_cached_on(0) > 0);
    assert_false(cpus[0].quiesce);
    assert_true(kernel_syscall_exit());
    page_drain_local();
}

/* FAST-06: a timer that only needs reprogramming is reprogrammed by the fast exit, which
 * still returns to user space (the slow path's other work is not needed) */
static void fast06_timer_alone_stays_fast(void **state)
{
    kernel_exit_to_user(&frame);
    assert_true(fast_call(NULL));
    unsigned writes = fake.timer_writes;
    timer_note_change(0);
    cpus[0].timer_stale = true; /* the compare register is unknown: it must be written */
    assert_true(kernel_syscall_exit());
    assert_false(cpus[0].timer_dirty);
    assert_false(cpus[0].timer_stale);
    assert_int_equal(fake.timer_writes, writes + 1);
    /* with anything else besides, it is the slow path's */
    assert_true(fast_call(NULL));
    timer_note_change(0);
    cpus[0].need_resched = true;
    assert_false(kernel_syscall_exit());
    cpus[0].need_resched = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fast01_nothing_to_quiesce, setup),
        cmocka_unit_test_setup(fast02_deferred_request_runs_before_return, setup),
        cmocka_unit_test_setup(fast03_deferred_request_runs_at_entry, setup),
        cmocka_unit_test_setup(fast04_cached_page_given_back, setup),
        cmocka_unit_test_setup(fast05_housekeeping_keeps_its_cache, setup),
        cmocka_unit_test_setup(fast06_timer_alone_stays_fast, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
