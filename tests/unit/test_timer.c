/* SPDX-License-Identifier: MIT */
/*
 * test_timer.c — host unit tests of kernel/timer.c: the deadline decision and the single
 * writer of the hardware timer.
 *
 * TMR-0n test timer_compute_deadline (pure); TMR-1n drive timer_arm/timer_cancel/
 * timer_reprogram/timer_list against the fake arch, which records every hardware write
 * (fake.timer_deadline[cpu], fake.timer_writes).  TMR-2n cover the timer interrupt and the
 * research tick modes.
 *
 * Timer queues are static in timer.c and timer_init_cpu(0) registers the interrupt (it may
 * run only once per process), so CPU 0 is set up once for the whole group; each test leaves
 * its queue empty and the hardware disarmed, and checks that state on entry.  Tests that need
 * a fresh queue or a running task (periodic, residual, contention, owners) use CPUs 1..5.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "masks.h"

#include "kernel/cpu.h"
#include "kernel/entry.h"
#include "kernel/irq.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "fake.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define NS 0 /* "not set": an input of timer_compute_deadline that does not apply */

/* ------------------------------------------------------------------ the pure decision */

static uint64_t decide(uint64_t earliest, bool can_stop, uint64_t slice_end, uint64_t periodic,
                       uint64_t residual)
{
    struct timer_inputs in = {
        .earliest_timer = earliest,
        .can_stop_tick = can_stop,
        .slice_end = slice_end,
        .periodic_next = periodic,
        .residual_next = residual,
    };
    return timer_compute_deadline(&in);
}

/* TMR-01: nothing to wait for disarms (0), whatever the slice says when the tick can stop */
static void tmr01_nothing(TEST_STATE)
{
    assert_int_equal(decide(NS, true, NS, NS, NS), 0);
    assert_int_equal(decide(NS, false, NS, NS, NS), 0);
    assert_int_equal(decide(NS, true, 5000, NS, NS), 0);
}

/* TMR-02: each deadline alone is used when it applies */
static void tmr02_each_alone(TEST_STATE)
{
    assert_int_equal(decide(1234, true, NS, NS, NS), 1234);
    assert_int_equal(decide(1234, false, NS, NS, NS), 1234);
    assert_int_equal(decide(NS, false, 2345, NS, NS), 2345);
    assert_int_equal(decide(NS, true, NS, 3456, NS), 3456);
    assert_int_equal(decide(NS, false, NS, 3456, NS), 3456);
    assert_int_equal(decide(NS, true, NS, NS, 4567), 4567);
    assert_int_equal(decide(NS, false, NS, NS, 4567), 4567);
}

/* TMR-03: slice end ignored when the tick can stop */
static void tmr03_slice_ignored_when_tick_can_stop(TEST_STATE)
{
    assert_int_equal(decide(NS, true, 100, NS, NS), 0);
    assert_int_equal(decide(900, true, 100, NS, NS), 900);
    assert_int_equal(decide(NS, true, 100, 700, NS), 700);
    assert_int_equal(decide(NS, true, 100, NS, 800), 800);
    assert_int_equal(decide(900, true, 100, 700, 800), 700);
}

/* TMR-04: the earliest applicable deadline wins, whichever source it comes from */
static void tmr04_minimum_wins(TEST_STATE)
{
    assert_int_equal(decide(100, false, 200, 300, 400), 100);
    assert_int_equal(decide(200, false, 100, 300, 400), 100);
    assert_int_equal(decide(300, false, 200, 100, 400), 100);
    assert_int_equal(decide(400, false, 300, 200, 100), 100);
    assert_int_equal(decide(400, true, 100, 300, 200), 200);
    assert_int_equal(decide(NS, false, 500, NS, 499), 499);
    assert_int_equal(decide(501, false, 500, NS, NS), 500);
}

/* TMR-05: equal deadlines and the extremes of the counter are plain values */
static void tmr05_equal_and_extremes(TEST_STATE)
{
    assert_int_equal(decide(7, false, 7, 7, 7), 7);
    assert_int_equal(decide(1, false, UINT64_MAX, UINT64_MAX, UINT64_MAX), 1);
    assert_int_equal(decide(UINT64_MAX, true, 1, NS, NS), UINT64_MAX);
    assert_true(decide(UINT64_MAX, false, UINT64_MAX - 1, NS, NS) == UINT64_MAX - 1);
}

/* TMR-06: full truth table: every subset of sources present x can_stop_tick x every order
 * of the values; the result is the minimum of the applicable ones, 0 when none applies */
static void tmr06_full_truth_table(TEST_STATE)
{
    static const uint64_t vals[4] = {1000, 2000, 3000, 4000};
    static const int perms[24][4] = {
        {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {0, 3, 2, 1},
        {1, 0, 2, 3}, {1, 0, 3, 2}, {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
        {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0}, {2, 3, 0, 1}, {2, 3, 1, 0},
        {3, 0, 1, 2}, {3, 0, 2, 1}, {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0},
    };
    unsigned rows = 0;
    for (unsigned present = 0; present < 16; present++) {
        for (int can_stop = 0; can_stop <= 1; can_stop++) {
            for (unsigned p = 0; p < 24; p++) {
                uint64_t v[4];
                uint64_t want = 0;
                for (unsigned src = 0; src < 4; src++) {
                    v[src] = (present & (1u << src)) ? vals[perms[p][src]] : 0;
                    bool applies = v[src] && !(src == 1 && can_stop);
                    if (applies && (!want || v[src] < want)) {
                        want = v[src];
                    }
                }
                uint64_t got = decide(v[0], can_stop, v[1], v[2], v[3]);
                if (got != want) {
                    fail_msg("timer=%llu can_stop=%d slice=%llu periodic=%llu residual=%llu: "
                             "got %llu, want %llu",
                             (unsigned long long)v[0], can_stop, (unsigned long long)v[1],
                             (unsigned long long)v[2], (unsigned long long)v[3],
                             (unsigned long long)got, (unsigned long long)want);
                }
                rows++;
            }
        }
    }
    assert_int_equal(rows, 16 * 2 * 24);
}

/* ------------------------------------------------------------------ against the fake arch */

static unsigned fired[8]; /* callback runs, per test timer index */
static struct timer tm[8];

static void on_fire(struct timer *t)
{
    fired[t - tm]++;
}

/* Re-arms itself 100 cycles after the counter, once. */
static void on_fire_rearm(struct timer *t)
{
    fired[t - tm]++;
    if (fired[t - tm] == 1) {
        timer_arm(t, fake_counter + 100);
    }
}

static void use_cpu(unsigned id)
{
    fake_cpu = &cpus[id];
}

static void cpu_setup(unsigned id)
{
    memset(&cpus[id], 0, sizeof(cpus[id]));
    cpus[id].id = id;
    cpus[id].arch.id = id;
    use_cpu(id);
    stats_init_cpu(id); /* its public counters, as at bring-up */
    sched_init_cpu(&cpus[id]);
    timer_init_cpu(id);
    use_cpu(0);
}

static int group_setup(void **state)
{
    fake_reset();
    ncpus = 8;
    cpus_online = M64(0xff);
    cpus_housekeeping = M64(0xff);
    cpus_dataplane = M64(0);
    cpu_setup(0);
    return 0;
}

/* Every test starts on CPU 0 with an empty queue, the hardware in the state the last
 * reprogram left, and a clean record of writes. */
static int test_setup(void **state)
{
    fake_irq_masked = 1; /* as the kernel's callers: timer_reprogram's contract (checked) */
    use_cpu(0);
    memset(fired, 0, sizeof(fired));
    for (unsigned i = 0; i < 8; i++) {
        timer_init(&tm[i], on_fire);
    }
    timer_reprogram();
    fake.timer_writes = 0;
    assert_int_equal(timer_list(0, NULL, 0), 0);
    return 0;
}

static int test_teardown(void **state)
{
    use_cpu(0);
    for (unsigned i = 0; i < 8; i++) {
        timer_cancel(&tm[i]);
    }
    timer_reprogram();
    fake_counter = 0;
    return 0;
}

/* TMR-10: arming a timer programs the hardware once with that deadline */
static void tmr10_arm_programs_once(TEST_STATE)
{
    timer_arm(&tm[0], 5000);
    assert_int_equal(fake.timer_writes, 0); /* arming only changes state */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 5000);
    assert_int_equal(fake.timer_writes, 1);
    assert_int_equal(tm[0].cpu, 0);
    assert_int_equal(tm[0].deadline, 5000);
}

/* TMR-11: re-running timer_reprogram with nothing changed does not write the hardware */
static void tmr11_no_change_no_write(TEST_STATE)
{
    timer_arm(&tm[0], 5000);
    timer_reprogram();
    timer_reprogram();
    timer_reprogram();
    assert_int_equal(fake.timer_writes, 1);
    assert_int_equal(fake.timer_deadline[0], 5000);
}

/* TMR-12: cancelling the last timer disarms the hardware (deadline 0), once */
static void tmr12_cancel_last_disarms(TEST_STATE)
{
    timer_arm(&tm[0], 5000);
    timer_reprogram();
    assert_true(timer_cancel(&tm[0]));
    assert_int_equal(tm[0].cpu, -1);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 0);
    assert_int_equal(fake.timer_writes, 2);
    timer_reprogram();
    assert_int_equal(fake.timer_writes, 2);
}

/* TMR-13: cancelling a timer that is not armed reports false and changes nothing */
static void tmr13_cancel_unarmed(TEST_STATE)
{
    assert_false(timer_cancel(&tm[0]));
    timer_arm(&tm[0], 5000);
    assert_true(timer_cancel(&tm[0]));
    assert_false(timer_cancel(&tm[0]));
    timer_reprogram();
    assert_int_equal(fake.timer_writes, 0); /* armed and gone before any reprogram */
    assert_int_equal(fake.timer_deadline[0], 0);
}

/* TMR-14: two timers program the earlier, in either arming order */
static void tmr14_two_timers_earlier_wins(TEST_STATE)
{
    timer_arm(&tm[0], 9000);
    timer_arm(&tm[1], 4000);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 4000);
    assert_int_equal(fake.timer_writes, 1);

    timer_arm(&tm[2], 3000);
    timer_arm(&tm[3], 9500);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 3000);
    assert_int_equal(fake.timer_writes, 2);
}

/* TMR-15: a later timer does not touch the hardware; cancelling the head moves it to the next */
static void tmr15_head_changes_only(TEST_STATE)
{
    timer_arm(&tm[0], 4000);
    timer_reprogram();
    timer_arm(&tm[1], 6000);
    timer_reprogram();
    assert_int_equal(fake.timer_writes, 1);
    assert_int_equal(fake.timer_deadline[0], 4000);

    assert_true(timer_cancel(&tm[1])); /* not the head: hardware unchanged */
    timer_reprogram();
    assert_int_equal(fake.timer_writes, 1);

    timer_arm(&tm[1], 6000);
    assert_true(timer_cancel(&tm[0])); /* the head: the next one is programmed */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 6000);
    assert_int_equal(fake.timer_writes, 2);
}

/* TMR-16: re-arming an armed timer moves it (one queue entry, new deadline programmed) */
static void tmr16_rearm_moves(TEST_STATE)
{
    timer_arm(&tm[0], 4000);
    timer_arm(&tm[1], 6000);
    timer_reprogram();
    timer_arm(&tm[0], 8000);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[0], 6000);
    struct timer out[4];
    assert_int_equal(timer_list(0, out, 4), 2);
    assert_int_equal(out[0].deadline, 6000);
    assert_int_equal(out[1].deadline, 8000);
    assert_ptr_equal(out[1].fn, on_fire);
}

/* Arms from a known function, so armed_by can be checked against its address. */
static __attribute__((noinline)) void arm_from_helper(struct timer *t, uint64_t deadline)
{
    timer_arm(t, deadline);
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
}

static struct task owner_task;

/* TMR-17: timer_list reports armed timers in deadline order with owner and armed_by */
static void tmr17_list_reports_owner(TEST_STATE)
{
    /* CPU 5 runs a task with tid 42; CPU 0 runs nothing (its idle task). */
    cpu_setup(5);
    memset(&owner_task, 0, sizeof(owner_task));
    owner_task.tid = 42;
    owner_task.affinity = cpumask_of(5);
    owner_task.cpu = 5;
    timer_init(&owner_task.sleep_timer, 0); /* as task_alloc does */
    sched_start_task(&owner_task);
    use_cpu(5);
    fake.switch_returns = true;
    schedule();
    fake.switch_returns = false;
    assert_ptr_equal(current(), &owner_task);

    arm_from_helper(&tm[0], 7000); /* by task 42, on CPU 5 */
    timer_arm(&tm[1], 3000);
    use_cpu(0);
    timer_arm(&tm[2], 5000); /* by the kernel (idle), on CPU 0 */

    struct timer out[4];
    memset(out, 0, sizeof(out));
    assert_int_equal(timer_list(5, out, 4), 2);
    assert_int_equal(out[0].deadline, 3000);
    assert_int_equal(out[0].owner_tid, 42);
    assert_int_equal(out[0].cpu, 5);
    assert_int_equal(out[1].deadline, 7000);
    assert_int_equal(out[1].owner_tid, 42);
    assert_int_equal(out[1].cpu, 5);
    uintptr_t helper = (uintptr_t)arm_from_helper;
    if (out[1].armed_by <= helper || out[1].armed_by >= helper + 512) {
        fail_msg("armed_by %#llx is not inside arm_from_helper (%#llx)",
                 (unsigned long long)out[1].armed_by, (unsigned long long)helper);
    }
    assert_true(out[0].armed_by != out[1].armed_by);

    memset(out, 0, sizeof(out));
    assert_int_equal(timer_list(0, out, 4), 1); /* each CPU's queue is separate */
    assert_int_equal(out[0].deadline, 5000);
    assert_int_equal(out[0].owner_tid, 0);
    assert_int_equal(out[0].cpu, 0);
}

/* TMR-18: timer_list fills at most n entries but counts them all */
static void tmr18_list_truncates(TEST_STATE)
{
    for (unsigned i = 0; i < 5; i++) {
        timer_arm(&tm[i], 1000 * (5 - i));
    }
    struct timer out[3];
    memset(out, 0, sizeof(out));
    assert_int_equal(timer_list(0, out, 2), 5);
    assert_int_equal(out[0].deadline, 1000);
    assert_int_equal(out[1].deadline, 2000);
    assert_int_equal(out[2].deadline, 0); /* untouched */
    assert_int_equal(timer_list(0, NULL, 0), 5);
}

/* TMR-19: timers with equal deadlines keep the order they were armed in */
static void tmr19_equal_deadlines_fifo(TEST_STATE)
{
    timer_init(&tm[0], on_fire);
    timer_init(&tm[1], on_fire_rearm);
    timer_arm(&tm[0], 2000);
    timer_arm(&tm[1], 2000);
    struct timer out[2];
    assert_int_equal(timer_list(0, out, 2), 2);
    assert_ptr_equal(out[0].fn, on_fire);
    assert_ptr_equal(out[1].fn, on_fire_rearm);
}

/* Taking the timer interrupt in the kernel: the handler, then the way back, which
 * reprograms (from user space kernel_exit_to_user does the same, once). */
static void take_timer_interrupt(void)
{
    irq_dispatch(IRQ_CLASS_TIMER, arch_timer_irq());
    kernel_exit_irq();
}

/* TMR-20: the interrupt runs every expired callback once, keeps later timers, and the way
 * out programs the next deadline */
static void tmr20_interrupt_runs_expired(TEST_STATE)
{
    timer_arm(&tm[0], 100);
    timer_arm(&tm[1], 150);
    timer_arm(&tm[2], 300);
    timer_reprogram();
    fake_counter = 150;
    take_timer_interrupt();
    assert_int_equal(fired[0], 1);
    assert_int_equal(fired[1], 1);
    assert_int_equal(fired[2], 0);
    assert_int_equal(tm[0].cpu, -1);
    assert_int_equal(tm[1].cpu, -1);
    assert_int_equal(tm[2].cpu, 0);
    assert_int_equal(timer_list(0, NULL, 0), 1);
    assert_int_equal(fake.timer_deadline[0], 300);
    assert_int_equal(fake.timer_writes, 2);
}

/* TMR-21: after an interrupt the compare value has passed, so the next deadline is written
 * even when it equals the old one (an early interrupt) */
static void tmr21_interrupt_always_rewrites(TEST_STATE)
{
    timer_arm(&tm[0], 500);
    timer_reprogram();
    fake_counter = 400; /* spurious or early: nothing expires */
    take_timer_interrupt();
    assert_int_equal(fired[0], 0);
    assert_int_equal(fake.timer_deadline[0], 500);
    assert_int_equal(fake.timer_writes, 2);
}

/* TMR-22: the last expiry disarms; a callback that re-arms itself is programmed */
static void tmr22_interrupt_disarm_and_rearm(TEST_STATE)
{
    timer_arm(&tm[0], 100);
    timer_reprogram();
    fake_counter = 100;
    take_timer_interrupt();
    assert_int_equal(fired[0], 1);
    assert_int_equal(fake.timer_deadline[0], 0);
    assert_int_equal(fake.timer_writes, 2);

    timer_init(&tm[1], on_fire_rearm);
    timer_arm(&tm[1], 200);
    timer_reprogram();
    fake_counter = 250;
    take_timer_interrupt();
    assert_int_equal(fired[1], 1);
    assert_int_equal(tm[1].cpu, 0);
    assert_int_equal(tm[1].deadline, 350);
    assert_int_equal(fake.timer_deadline[0], 350);
    fake_counter = 350;
    take_timer_interrupt();
    assert_int_equal(fired[1], 2);
    assert_int_equal(fake.timer_deadline[0], 0);
}

/* ------------------------------------------------------------------ two CPUs as two threads */

static int slow_in, slow_release, slow_done, cancel_returned, done_when_cancel_returned;

/* A callback that takes its time: it runs until the test releases it. */
static void slow_fire(struct timer *t)
{
    __atomic_store_n(&slow_in, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&slow_release, __ATOMIC_SEQ_CST)) {
        sched_yield();
    }
    __atomic_store_n(&slow_done, 1, __ATOMIC_SEQ_CST);
}

static void *cpu1_takes_interrupt(void *arg)
{
    use_cpu(1);
    fake_irq_masked = 1; /* this thread's CPU is in its interrupt handler */
    take_timer_interrupt();
    return NULL;
}

static void *cpu2_cancels(void *arg)
{
    use_cpu(2);
    timer_cancel(&tm[0]);
    __atomic_store_n(&done_when_cancel_returned, __atomic_load_n(&slow_done, __ATOMIC_SEQ_CST),
                     __ATOMIC_SEQ_CST);
    __atomic_store_n(&cancel_returned, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* TMR-27: timer_cancel waits for a callback already running on another CPU, so memory the
 * callback uses (a sleeper's wait queue on its stack) stays valid until it has finished
 * (issue 9: the callback locked freed stack memory after cancel had returned) */
static void tmr27_cancel_waits_for_running_callback(TEST_STATE)
{
    pthread_t irq, canceller;
    cpu_setup(1);
    cpu_setup(2);
    slow_in = slow_release = slow_done = cancel_returned = done_when_cancel_returned = 0;
    timer_init(&tm[0], slow_fire);
    use_cpu(1);
    timer_arm(&tm[0], 100);
    use_cpu(0);
    fake_counter = 200;
    assert_int_equal(pthread_create(&irq, NULL, cpu1_takes_interrupt, NULL), 0);
    while (!__atomic_load_n(&slow_in, __ATOMIC_SEQ_CST)) {
        sched_yield();
    }
    assert_int_equal(pthread_create(&canceller, NULL, cpu2_cancels, NULL), 0);
    usleep(50 * 1000); /* ample time for a cancel that does not wait to return */
    assert_int_equal(__atomic_load_n(&cancel_returned, __ATOMIC_SEQ_CST), 0);
    __atomic_store_n(&slow_release, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(pthread_join(canceller, NULL), 0);
    assert_int_equal(pthread_join(irq, NULL), 0);
    assert_int_equal(cancel_returned, 1);
    assert_int_equal(done_when_cancel_returned, 1);
    assert_int_equal(tm[0].running_on, -1);
}

/* TMR-28: cancelling a timer from its own callback does not wait for itself */
static int self_cancel_result = -1;

static void cancels_itself(struct timer *t)
{
    self_cancel_result = timer_cancel(t);
}

static void tmr28_cancel_from_own_callback(TEST_STATE)
{
    timer_init(&tm[0], cancels_itself);
    timer_arm(&tm[0], 100);
    fake_counter = 100;
    take_timer_interrupt();
    assert_int_equal(self_cancel_result, 0);
}

/* TMR-29: timer_move takes an armed timer to another CPU's queue with its deadline, says
 * when that CPU must reprogram, and leaves an unarmed timer alone */
static void tmr29_move(TEST_STATE)
{
    struct timer out[2];
    cpu_setup(1);
    timer_arm(&tm[0], 500);
    assert_true(timer_move(&tm[0], 1)); /* CPU 1 had nothing programmed */
    assert_int_equal(timer_cpu(&tm[0]), 1);
    assert_int_equal(timer_list(0, out, 2), 0);
    assert_int_equal(timer_list(1, out, 2), 1);
    assert_int_equal(out[0].deadline, 500);
    assert_false(timer_move(&tm[0], 1)); /* already there */
    assert_false(timer_move(&tm[1], 1)); /* not armed */
    assert_int_equal(timer_cpu(&tm[1]), -1);
    assert_true(timer_cancel(&tm[0]));
}

/* TMR-23: a deadline of UINT64_MAX is written like any other value */
static void tmr23_max_deadline_written(TEST_STATE)
{
    /* Make the hardware state "unknown" the way the interrupt does. */
    timer_arm(&tm[0], 10);
    timer_reprogram();
    fake_counter = 10;
    take_timer_interrupt();
    assert_int_equal(fake.timer_deadline[0], 0);

    timer_arm(&tm[1], 20);
    timer_arm(&tm[2], UINT64_MAX);
    timer_reprogram();
    fake_counter = 20;
    unsigned before = fake.timer_writes;
    take_timer_interrupt(); /* tm[1] expires; tm[2] is the new head */
    assert_int_equal(fake.timer_writes, before + 1);
    assert_true(fake.timer_deadline[0] == UINT64_MAX);
}

/* TMR-24: tick=periodic arms the period on a CPU with nothing else to wait for */
static void tmr24_periodic_mode(TEST_STATE)
{
    timer_configure(&(struct timer_config){.hz = 100, .periodic = true});
    fake_counter = 1000;
    cpu_setup(1);
    timer_configure(&(struct timer_config){.hz = 100});
    use_cpu(1);
    timer_reprogram();
    uint64_t period = FAKE_COUNTER_FREQ / 100; /* hz=100 by default */
    assert_int_equal(timer_slice_cycles(), period);
    assert_int_equal(fake.timer_deadline[1], 1000 + period);
    assert_int_equal(fake.timer_writes, 1);

    timer_arm(&tm[0], 1000 + period - 1); /* an earlier timer wins */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[1], 1000 + period - 1);
    timer_cancel(&tm[0]);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[1], 1000 + period);
    use_cpu(0);
}

/* TMR-25: the residual tick applies on a dataplane CPU while a task runs, never when idle */
static struct task resident;

static void tmr25_residual_on_dataplane_only(TEST_STATE)
{
    timer_configure(&(struct timer_config){.hz = 100, .residual = true});
    cpus_dataplane = cpumask_of(2);
    fake_counter = 5000;
    cpu_setup(2);
    cpu_setup(3);
    timer_configure(&(struct timer_config){.hz = 100});

    use_cpu(2); /* idle: Linux's residual tick ran only while a task did, and so does ours */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[2], 0);

    memset(&resident, 0, sizeof(resident));
    resident.tid = 77;
    resident.affinity = cpumask_of(2);
    resident.cpu = 2;
    timer_init(&resident.sleep_timer, 0);
    sched_start_task(&resident);
    fake.switch_returns = true; /* CPU 2 now runs `resident` */
    schedule();
    fake.switch_returns = false;
    assert_ptr_equal(sched_current(2), &resident);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[2], 5000 + FAKE_COUNTER_FREQ);
    cpus_dataplane = M64(0);

    use_cpu(3); /* housekeeping: never a residual tick */
    unsigned before = fake.timer_writes;
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[3], 0);
    assert_int_equal(fake.timer_writes, before + 1); /* its first reprogram writes "disarmed" */
    use_cpu(0);
}

static struct task contenders[2];

/* TMR-26: the time slice is armed only while a CPU has two runnable tasks */
static void tmr26_slice_only_under_contention(TEST_STATE)
{
    cpu_setup(4); /* a fresh nohz queue */
    use_cpu(4);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[4], 0);
    use_cpu(0);

    for (unsigned i = 0; i < 2; i++) {
        memset(&contenders[i], 0, sizeof(contenders[i]));
        contenders[i].tid = 100 + (int)i;
        contenders[i].affinity = cpumask_of(4);
        contenders[i].cpu = 4;
        timer_init(&contenders[i].sleep_timer, 0);
        sched_start_task(&contenders[i]);
    }
    fake_counter = 7000;
    use_cpu(4);
    unsigned switches = fake.switches;
    fake.switch_returns = true; /* CPU 4 runs contenders[0]; contenders[1] waits */
    schedule();
    fake.switch_returns = false;
    assert_ptr_equal(sched_current(4), &contenders[0]);
    assert_int_equal(fake.switches, switches + 1);
    assert_false(sched_can_stop_tick(4));

    unsigned before = fake.timer_writes;
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[4], 7000 + timer_slice_cycles());
    assert_int_equal(fake.timer_writes, before + 1);
    use_cpu(0);
}

/* TMR-30: a switch between two contending tasks moves the slice later and leaves the armed
 * timer alone (no write, the way out stays fast); the interrupt then comes early, preempts
 * nobody, and the exact deadline is written */
static void tmr30_switch_leaves_early_timer(TEST_STATE)
{
    cpu_setup(5);
    for (unsigned i = 0; i < 2; i++) {
        memset(&contenders[i], 0, sizeof(contenders[i]));
        contenders[i].tid = 200 + (int)i;
        contenders[i].affinity = cpumask_of(5);
        contenders[i].cpu = 5;
        timer_init(&contenders[i].sleep_timer, 0);
        sched_start_task(&contenders[i]);
    }
    fake_counter = 7000;
    use_cpu(5);
    fake.switch_returns = true;
    schedule(); /* contenders[0] runs, its slice ends at 7000 + S */
    timer_reprogram();
    uint64_t first_end = 7000 + timer_slice_cycles();
    assert_int_equal(fake.timer_deadline[5], first_end);
    unsigned before = fake.timer_writes;
    fake_counter = 7100;
    schedule(); /* a yield: contenders[1] runs until 7100 + S */
    assert_ptr_equal(sched_current(5), &contenders[1]);
    assert_false(cpus[5].timer_dirty); /* nothing for the way out to do */
    assert_int_equal(cpus[5].slow_work, 0);
    timer_reprogram();
    assert_int_equal(fake.timer_writes, before);
    fake_counter = first_end; /* early for contenders[1] */
    take_timer_interrupt();
    fake.switch_returns = false;
    assert_false(cpus[5].need_resched);
    assert_int_equal(fake.timer_deadline[5], 7100 + timer_slice_cycles());
    assert_int_equal(fake.timer_writes, before + 1);
    use_cpu(0);
}

/* Is a reprogram pending on `cpu` (any of the timer's bytes of slow_work)? */
static bool reprogram_pending(unsigned cpu)
{
    return cpus[cpu].timer_dirty || cpus[cpu].timer_stale || cpus[cpu].timer_quick;
}

/* TMR-31: timer_note_slice asks the way out for a write only when the hardware would fire
 * later than the slice needs (or not at all), and always on a dataplane CPU whose contention
 * ended */
static void tmr31_note_slice_decisions(TEST_STATE)
{
    cpu_setup(6);
    use_cpu(6);
    timer_arm(&tm[0], 5000);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[6], 5000);
    timer_note_slice(0); /* no slice needed: an armed timer is only early */
    timer_note_slice(5000);
    timer_note_slice(9000);
    assert_false(reprogram_pending(6));
    timer_note_slice(4999); /* the slice ends before the timer fires */
    assert_true(reprogram_pending(6));
    timer_reprogram();
    assert_false(reprogram_pending(6));
    timer_cancel(&tm[0]);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[6], 0);
    timer_note_slice(9000); /* disarmed, a slice to end */
    assert_true(reprogram_pending(6));
    timer_reprogram();
    cpus[6].dataplane = true; /* exact when contention ends */
    timer_note_slice(0);
    assert_true(reprogram_pending(6));
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[6], 0); /* disarmed: a lone task is not interrupted */
    cpus[6].dataplane = false;
    use_cpu(0);
}

/* TMR-32: on a dataplane CPU a note carries its exact deadline to the way out (withdrawn
 * when a later note finds the hardware right, a due switch needs no slice, a queue change
 * wins); and in a futex-style ping-pong of two tasks there, each wake starts
 * contention and its way out arms the waker's slice end, each sleep ends it and its way out
 * disarms, one write each, and nothing is left pending after any way out */
static void tmr32_dataplane_ping_pong_exact(TEST_STATE)
{
    cpu_setup(7);
    cpus_dataplane = M64(0x80);
    use_cpu(7);
    cpus[7].dataplane = true;
    timer_reprogram(); /* its first reprogram writes "disarmed" */
    assert_int_equal(fake.timer_deadline[7], 0);
    for (unsigned i = 0; i < 2; i++) {
        memset(&contenders[i], 0, sizeof(contenders[i]));
        contenders[i].tid = 300 + (int)i;
        contenders[i].affinity = cpumask_of(7);
        contenders[i].cpu = 7;
        timer_init(&contenders[i].sleep_timer, 0);
    }
    /* The note's own answer (timer_quick): exact values, and a request withdrawn by a later
     * note that finds the hardware right again. */
    timer_note_slice(9000); /* contention: arm the slice */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 9000);
    unsigned w0 = fake.timer_writes;
    timer_note_slice(0); /* contention ends ... */
    assert_true(reprogram_pending(7));
    timer_note_slice(9500); /* ... and is back before the way out: 9000 is early enough */
    assert_false(reprogram_pending(7));
    timer_reprogram();
    assert_int_equal(fake.timer_writes, w0);
    timer_note_slice(4000); /* the slice ends before the timer fires: exactly the slice */
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 4000);
    timer_note_slice(0);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 0);
    assert_int_equal(fake.timer_writes, w0 + 2);
    timer_note_slice(0); /* already what the hardware holds: nothing to write */
    assert_false(reprogram_pending(7));
    cpus[7].need_resched = true; /* a due switch needs no slice timer */
    timer_note_slice(9000);
    assert_false(reprogram_pending(7));
    cpus[7].need_resched = false;
    timer_arm(&tm[1], 7000); /* a queue change is recomputed, whatever a note asked */
    timer_note_slice(0);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 7000);
    timer_cancel(&tm[1]);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 0);

    struct task *a = &contenders[0], *b = &contenders[1];
    fake.switch_returns = true;
    fake_counter = 1000;
    sched_start_task(a);
    schedule(); /* a runs alone */
    assert_ptr_equal(sched_current(7), a);
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 0);
    unsigned writes = fake.timer_writes;
    uint64_t slice = timer_slice_cycles();

    fake_counter = 2000;
    sched_start_task(b); /* a wakes b: two runnable */
    assert_true(reprogram_pending(7));
    timer_reprogram();
    assert_int_equal(fake.timer_deadline[7], 1000 + slice); /* a's slice */
    for (unsigned round = 0; round < 3; round++) {
        struct task *waker = round % 2 ? b : a, *other = round % 2 ? a : b;
        fake_counter = 3000 + 1000 * round;
        sched_prepare_sleep(waker); /* the waker waits */
        schedule();
        assert_ptr_equal(sched_current(7), other);
        assert_true(sched_can_stop_tick(7));
        timer_reprogram();
        assert_int_equal(fake.timer_deadline[7], 0); /* other alone: disarmed */
        assert_false(reprogram_pending(7));
        fake_counter += 500;
        sched_wakeup(waker); /* other wakes it */
        assert_false(sched_can_stop_tick(7));
        timer_reprogram();
        assert_int_equal(fake.timer_deadline[7], 3000 + 1000 * round + slice); /* other's */
        assert_false(reprogram_pending(7));
        timer_reprogram(); /* nothing changed: no write */
    }
    assert_int_equal(fake.timer_writes, writes + 1 + 3 * 2);
    fake.switch_returns = false;
    cpus[7].dataplane = false;
    cpus_dataplane = M64(0);
    use_cpu(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tmr01_nothing),
        cmocka_unit_test(tmr02_each_alone),
        cmocka_unit_test(tmr03_slice_ignored_when_tick_can_stop),
        cmocka_unit_test(tmr04_minimum_wins),
        cmocka_unit_test(tmr05_equal_and_extremes),
        cmocka_unit_test(tmr06_full_truth_table),
        cmocka_unit_test_setup_teardown(tmr10_arm_programs_once, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr11_no_change_no_write, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr12_cancel_last_disarms, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr13_cancel_unarmed, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr14_two_timers_earlier_wins, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr15_head_changes_only, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr16_rearm_moves, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr17_list_reports_owner, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr18_list_truncates, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr19_equal_deadlines_fifo, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr20_interrupt_runs_expired, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr21_interrupt_always_rewrites, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr22_interrupt_disarm_and_rearm, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(tmr23_max_deadline_written, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr24_periodic_mode, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr25_residual_on_dataplane_only, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(tmr27_cancel_waits_for_running_callback, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(tmr28_cancel_from_own_callback, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr29_move, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr26_slice_only_under_contention, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(tmr30_switch_leaves_early_timer, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr31_note_slice_decisions, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(tmr32_dataplane_ping_pong_exact, test_setup, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
