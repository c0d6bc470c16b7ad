/* SPDX-License-Identifier: MIT */
/*
 * test_sched.c — host unit tests of kernel/sched.c: task placement and the "can this CPU
 * stop its tick" question.
 *
 * SCH-0n test sched_pick_cpu (pure).  SCH-2n use real run queues: tasks are placed with
 * sched_start_task and the IPIs the placement sends are read from the fake arch
 * (fake.ipi_sent[receiver][reason]).  Where a CPU must be running a task, the test sets
 * fake.switch_returns so schedule() completes its switch without a real context switch.
 *
 * Run queues are static in sched.c and a placed task cannot be taken off a queue without a
 * switch, so each SCH-2n test gets its own four fresh CPUs ("a world"): C(0), C(1) are
 * housekeeping, C(2), C(3) dataplane, all online, and the tasks are started from C(0) as a
 * housekeeping CPU would.  The first world is CPUs 0-3.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/isolate.h"
#include "kernel/lib.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "fake.h"
#include "masks.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define BIT(c) (1ull << (c)) /* CPU c < 64 in a word of CPUs */
#define NONE   MAX_CPUS

/* ------------------------------------------------------------------ sched_pick_cpu */

/* Loads for CPUs 0..7 (the rest idle). */
static unsigned nr8[MAX_CPUS];

/* The loads sched_pick_cpu asks for, and how many times it asked. */
static const unsigned *loads;
static unsigned loads_asked;

static unsigned load_of(unsigned cpu)
{
    loads_asked++;
    return loads[cpu];
}

/* sched_pick_cpu on sets of CPUs 0-63 given as words. */
static unsigned pick(uint64_t affinity, uint64_t online, uint64_t hk, const unsigned *nr,
                     unsigned prev)
{
    loads = nr;
    loads_asked = 0;
    return sched_pick_cpu(M64(affinity), M64(online), M64(hk), load_of, prev);
}

static const unsigned *load(unsigned c0, unsigned c1, unsigned c2, unsigned c3, unsigned c4,
                            unsigned c5, unsigned c6, unsigned c7)
{
    memset(nr8, 0, sizeof(nr8));
    nr8[0] = c0, nr8[1] = c1, nr8[2] = c2, nr8[3] = c3;
    nr8[4] = c4, nr8[5] = c5, nr8[6] = c6, nr8[7] = c7;
    return nr8;
}

#define ALL8 0xffull
#define HK03 0x0full /* housekeeping 0-3, dataplane 4-7 */

/* SCH-01: a mask mixing both kinds runs on housekeeping, even when dataplane is idler */
static void sch01_housekeeping_preferred(TEST_STATE)
{
    const unsigned *nr = load(5, 5, 5, 5, 0, 0, 0, 0);
    assert_int_equal(pick(ALL8, ALL8, HK03, nr, NONE), 0);
    assert_int_equal(pick(BIT(2) | BIT(6), ALL8, HK03, nr, NONE), 2);
    assert_int_equal(pick(BIT(3) | BIT(4) | BIT(5), ALL8, HK03, nr, 4), 3);
}

/* SCH-02: dataplane only when the mask has no online housekeeping CPU */
static void sch02_dataplane_when_no_housekeeping(TEST_STATE)
{
    const unsigned *nr = load(0, 0, 0, 0, 3, 1, 2, 2);
    assert_int_equal(pick(0xf0, ALL8, HK03, nr, NONE), 5);
    assert_int_equal(pick(BIT(6), ALL8, HK03, nr, NONE), 6);
    /* housekeeping CPU 1 is in the mask but offline: the dataplane CPU is used */
    assert_int_equal(pick(BIT(1) | BIT(4), ALL8 & ~BIT(1), HK03, nr, NONE), 4);
}

/* SCH-03: never a CPU outside the mask or offline, however idle it is */
static void sch03_never_outside_mask_or_offline(TEST_STATE)
{
    const unsigned *nr = load(9, 0, 9, 0, 9, 0, 9, 0);
    assert_int_equal(pick(BIT(0) | BIT(2), ALL8, HK03, nr, NONE), 0);
    assert_int_equal(pick(BIT(0) | BIT(1), ALL8 & ~BIT(1), HK03, nr, NONE), 0);
    assert_int_equal(pick(BIT(4) | BIT(5), ALL8 & ~BIT(5), HK03, nr, 5), 4);
    /* prev outside the mask or offline is not kept */
    assert_int_equal(pick(BIT(0) | BIT(2), ALL8, HK03, nr, 1), 0);
    assert_int_equal(pick(BIT(2) | BIT(3), ALL8 & ~BIT(3), HK03, nr, 3), 2);
}

/* SCH-04: the least loaded allowed CPU wins; ties go to the lowest number */
static void sch04_least_loaded(TEST_STATE)
{
    assert_int_equal(pick(HK03, ALL8, HK03, load(3, 2, 1, 4, 0, 0, 0, 0), NONE), 2);
    assert_int_equal(pick(HK03, ALL8, HK03, load(1, 0, 0, 1, 0, 0, 0, 0), NONE), 1);
    assert_int_equal(pick(0xf0, ALL8, HK03, load(0, 0, 0, 0, 2, 2, 1, 1), NONE), 6);
    assert_int_equal(pick(HK03, ALL8, HK03, load(7, 7, 7, 7, 0, 0, 0, 0), NONE), 0);
}

/* SCH-05: prev is kept when it is not busier than the best, left when it is */
static void sch05_prev_kept_when_not_busier(TEST_STATE)
{
    const unsigned *nr = load(1, 1, 1, 2, 0, 0, 0, 0);
    assert_int_equal(pick(HK03, ALL8, HK03, nr, 2), 2); /* tie: stay */
    assert_int_equal(pick(HK03, ALL8, HK03, nr, 1), 1);
    assert_int_equal(pick(HK03, ALL8, HK03, nr, 3), 0); /* busier: move */
    /* a dataplane prev is left when the mask also holds housekeeping */
    assert_int_equal(pick(BIT(1) | BIT(4), ALL8, HK03, nr, 4), 1);
    /* prev out of range is ignored */
    assert_int_equal(pick(HK03, ALL8, HK03, nr, 1000), 0);
}

/* SCH-06: MAX_CPUS when nothing is allowed */
static void sch06_nothing_allowed(TEST_STATE)
{
    const unsigned *nr = load(0, 0, 0, 0, 0, 0, 0, 0);
    assert_int_equal(pick(0, ALL8, HK03, nr, 0), MAX_CPUS);
    assert_int_equal(pick(BIT(3), ALL8 & ~BIT(3), HK03, nr, 3), MAX_CPUS);
    assert_int_equal(pick(0xf0, 0x0f, HK03, nr, NONE), MAX_CPUS);
    assert_int_equal(pick(ALL8, 0, HK03, nr, NONE), MAX_CPUS);
}

/* SCH-07: CPU 63, CPUs past 64 and full sets work (no shift past a word); an idle CPU ends
 * the search: on 512 CPUs with idle ones, only a few loads are read */
static void sch07_high_cpus(TEST_STATE)
{
    static unsigned nr[MAX_CPUS];
    cpumask_t all = cpumask_first_n(MAX_CPUS);
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        nr[c] = 5;
    }
    nr[63] = 0;
    assert_int_equal(pick(~0ull, ~0ull, ~0ull, nr, NONE), 63);
    assert_int_equal(pick(~0ull, ~0ull, BIT(0), nr, NONE), 0);
    assert_int_equal(pick(BIT(62) | BIT(63), ~0ull, BIT(0), nr, 62), 63);
    nr[63] = 5;
    nr[300] = 1;
    nr[511] = 0;
    loads = nr, loads_asked = 0;
    assert_int_equal(sched_pick_cpu(all, all, all, load_of, NONE), 511);
    loads_asked = 0;
    assert_int_equal(sched_pick_cpu(all, all, all, load_of, 511), 511); /* idle prev: kept */
    assert_int_equal(loads_asked, 1);
    nr[123] = 0;
    loads_asked = 0;
    assert_int_equal(sched_pick_cpu(all, all, all, load_of, 300), 123); /* the first idle */
    assert_int_equal(loads_asked, 1 + 124); /* prev, then CPUs 0..123: the scan stopped */
    assert_int_equal(sched_pick_cpu(all, cpumask_andnot(all, cpumask_first_n(500)), cpumask_of(0),
                                    load_of, NONE),
                     511);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The rule, written independently: which CPUs may win, and the best load among them. */
static bool bit(const uint64_t *w, unsigned c)
{
    return w[c / 64] >> (c % 64) & 1;
}

static unsigned oracle(const uint64_t *affinity, const uint64_t *online, const uint64_t *hk,
                       const unsigned *nr, unsigned prev)
{
    uint64_t allowed[CPUMASK_WORDS];
    bool any_hk = false;
    for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
        allowed[w] = affinity[w] & online[w];
        any_hk |= (allowed[w] & hk[w]) != 0;
    }
    if (any_hk) {
        for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
            allowed[w] &= hk[w];
        }
    }
    unsigned best = NONE;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        if (bit(allowed, c) && (best == NONE || nr[c] < nr[best])) {
            best = c;
        }
    }
    if (best != NONE && prev < MAX_CPUS && bit(allowed, prev) && nr[prev] <= nr[best]) {
        return prev;
    }
    return best;
}

/* SCH-08: a fixed-seed sweep of random sets of all 512 CPUs, loads and prevs agrees with
 * the rule */
static void sch08_random_sweep(TEST_STATE)
{
    static unsigned nr[MAX_CPUS];
    for (unsigned i = 0; i < 20000; i++) {
        cpumask_t affinity, online, hk;
        for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
            affinity.w[w] = i % 3 == 0 && w > 0 ? 0 : rng() & rng();
            online.w[w] = rng() | rng();
            hk.w[w] = w == 0 ? rng() & 0xffff : (i % 5 == 0 ? rng() & rng() : 0);
        }
        if (i % 7 == 0) {
            affinity.w[0] &= 0xff; /* dense small masks too */
            online.w[0] |= 0xff;
        }
        for (unsigned c = 0; c < MAX_CPUS; c++) {
            nr[c] = (unsigned)(rng() % 4);
        }
        unsigned prev = (unsigned)(rng() % (MAX_CPUS + 8));
        loads = nr;
        unsigned got = sched_pick_cpu(affinity, online, hk, load_of, prev);
        unsigned want = oracle(affinity.w, online.w, hk.w, nr, prev);
        if (got != want) {
            fail_msg("affinity %#llx... online %#llx... hk %#llx... prev %u: got %u, want %u",
                     (unsigned long long)affinity.w[0], (unsigned long long)online.w[0],
                     (unsigned long long)hk.w[0], prev, got, want);
        }
        if (got != NONE && !cpumask_has(cpumask_and(affinity, online), got)) {
            fail_msg("picked CPU %u outside affinity & online", got);
        }
    }
}

/* ------------------------------------------------------------------ real run queues */

static unsigned base; /* first CPU of this test's world */
static unsigned next_base;

#define C(i) (base + (i))

/* The CPUs base + i for each bit i of `bits`. */
static cpumask_t span(uint64_t bits)
{
    cpumask_t m = CPUMASK_NONE;
    for (unsigned i = 0; i < 64; i++) {
        if (bits >> i & 1) {
            cpumask_set(&m, base + i);
        }
    }
    return m;
}

static struct task tasks[8];

static void world_new(void)
{
    assert_true(next_base + 4 <= MAX_CPUS);
    base = next_base;
    next_base += 4;
    fake_reset();
    ncpus = MAX_CPUS;
    cpus_online = span(0xf);
    cpus_housekeeping = span(0x3);
    cpus_dataplane = span(0xc);
    for (unsigned i = 0; i < 4; i++) {
        struct cpu *c = &cpus[C(i)];
        memset(c, 0, sizeof(*c));
        c->id = C(i);
        c->arch.id = C(i);
        c->online = true;
        c->dataplane = i >= 2;
        fake_cpu = c;
        stats_init_cpu(C(i)); /* its public counters, as at bring-up */
        sched_init_cpu(c);
        timer_init_cpu(C(i));
    }
    fake_cpu = &cpus[C(0)];
    memset(tasks, 0, sizeof(tasks));
}

static int world_setup(void **state)
{
    world_new();
    return 0;
}

/* A new task as task.c makes one: affinity set, first CPU of it as its last CPU. */
static struct task *start(unsigned i, cpumask_t affinity)
{
    struct task *t = &tasks[i];
    t->tid = 100 + (int)i;
    ksnprintf(t->name, sizeof(t->name), "t%u", i);
    t->affinity = affinity;
    t->cpu = cpumask_first(affinity);
    timer_init(&t->sleep_timer, 0);
    sched_start_task(t);
    return t;
}

/* Make CPU `cpu` switch to the head of its queue (fake.switch_returns), then come back. */
static void run_next_on(unsigned cpu)
{
    struct cpu *caller = fake_cpu;
    fake_cpu = &cpus[cpu];
    fake.switch_returns = true;
    schedule();
    fake.switch_returns = false;
    fake_cpu = caller;
}

static unsigned sgis_to(unsigned cpu)
{
    unsigned n = 0;
    for (unsigned r = 0; r < 16; r++) {
        n += fake.ipi_sent[cpu][r];
    }
    return n;
}

static unsigned sgis_total(void)
{
    unsigned n = 0;
    for (unsigned c = 0; c < 64; c++) {
        n += sgis_to(c);
    }
    return n;
}

/* Exactly one SGI was sent in all, `reason` to `cpu`. */
static void expect_one_sgi(unsigned cpu, unsigned reason)
{
    if (fake.ipi_sent[cpu][reason] != 1 || sgis_total() != 1) {
        fail_msg("want one %s to CPU %u; got %u of it, %u SGIs in all", ipi_reason_name(reason),
                 cpu, fake.ipi_sent[cpu][reason], sgis_total());
    }
}

static void expect_no_sgi(void)
{
    if (sgis_total() != 0) {
        fail_msg("want no SGI; got %u", sgis_total());
    }
}

/* SCH-20: with no task anywhere every CPU runs its idle task and can stop its tick */
static void sch20_empty(TEST_STATE)
{
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(sched_nr_running(C(i)), 0);
        assert_true(sched_can_stop_tick(C(i)));
        assert_true(sched_is_idle_task(sched_current(C(i))));
    }
    assert_int_equal(sched_nr_running(MAX_CPUS), 0);
}

/* SCH-21: the first task goes to the starting housekeeping CPU itself: no IPI, but that CPU
 * is told to reschedule; one runnable task can still stop the tick */
static void sch21_first_task_local(TEST_STATE)
{
    struct task *a = start(0, span(0xf));
    assert_int_equal(a->cpu, C(0));
    assert_int_equal(a->state, TASK_RUNNABLE);
    assert_int_equal(sched_nr_running(C(0)), 1);
    assert_true(sched_can_stop_tick(C(0)));
    assert_true(sched_need_resched());
    expect_no_sgi();
}

/* SCH-22: a second task goes to the other, idle housekeeping CPU, which gets IPI_WAKEUP */
static void sch22_second_task_wakes_idle_cpu(TEST_STATE)
{
    start(0, span(0xf));
    fake_reset();
    struct task *b = start(1, span(0xf));
    assert_int_equal(b->cpu, C(1));
    expect_one_sgi(C(1), IPI_WAKEUP);
    assert_int_equal(sched_nr_running(C(1)), 1);
    assert_true(sched_can_stop_tick(C(1)));
    assert_int_equal(sched_nr_running(C(2)), 0); /* dataplane untouched */
    assert_int_equal(sched_nr_running(C(3)), 0);
}

/* SCH-23: two runnable tasks on a CPU: it cannot stop the tick */
static void sch23_two_tasks_need_tick(TEST_STATE)
{
    start(0, span(0xf));
    start(1, span(0xf));
    struct task *c = start(2, span(0xf));
    assert_int_equal(c->cpu, C(0)); /* 1:1, prev C(0) not busier */
    assert_int_equal(sched_nr_running(C(0)), 2);
    assert_false(sched_can_stop_tick(C(0)));
    assert_true(sched_can_stop_tick(C(1)));
    struct task *d = start(3, cpumask_of(C(1)));
    assert_int_equal(d->cpu, C(1));
    assert_int_equal(sched_nr_running(C(1)), 2);
    assert_false(sched_can_stop_tick(C(1)));
}

/* SCH-24: a dataplane-only task goes to the idlest dataplane CPU of its mask, with a wakeup
 * to it and nothing to anyone else */
static void sch24_dataplane_placement(TEST_STATE)
{
    struct task *a = start(0, span(0xc));
    assert_int_equal(a->cpu, C(2));
    expect_one_sgi(C(2), IPI_WAKEUP);
    fake_reset();
    struct task *b = start(1, span(0xc));
    assert_int_equal(b->cpu, C(3));
    expect_one_sgi(C(3), IPI_WAKEUP);
    fake_reset();
    struct task *c = start(2, cpumask_of(C(3)));
    assert_int_equal(c->cpu, C(3));
    expect_one_sgi(C(3), IPI_WAKEUP); /* still running its idle task here */
    assert_false(sched_can_stop_tick(C(3)));
    assert_true(sched_can_stop_tick(C(2)));
}

/* SCH-25: a CPU running one task that gets a second is kicked (IPI_KICK, no wakeup); a third
 * sends nothing */
static void sch25_busy_cpu_kicked_once(TEST_STATE)
{
    struct task *a = start(0, cpumask_of(C(2)));
    run_next_on(C(2));
    assert_ptr_equal(sched_current(C(2)), a);
    assert_int_equal(sched_nr_running(C(2)), 1);
    assert_true(sched_can_stop_tick(C(2)));

    fake_reset();
    start(1, cpumask_of(C(2)));
    expect_one_sgi(C(2), IPI_KICK);
    assert_int_equal(sched_nr_running(C(2)), 2);
    assert_false(sched_can_stop_tick(C(2)));

    fake_reset();
    start(2, cpumask_of(C(2)));
    expect_no_sgi();
    assert_int_equal(sched_nr_running(C(2)), 3);
}

/* SCH-26: no IPI ever reaches a CPU outside the task's affinity */
static void sch26_no_ipi_outside_affinity(TEST_STATE)
{
    static const unsigned masks[] = {0x2, 0x6, 0x8, 0xc, 0xa, 0x2, 0x4, 0x8};
    for (unsigned i = 0; i < 8; i++) {
        cpumask_t m = span(masks[i]);
        fake_reset();
        struct task *t = start(i, m);
        assert_true(cpumask_has(m, t->cpu));
        for (unsigned c = 0; c < MAX_CPUS; c++) {
            if (!cpumask_has(m, c) && sgis_to(c)) {
                fail_msg("task %u (mask %#x << %u) placed on CPU %u: %u SGIs to CPU %u", i,
                         masks[i], base, t->cpu, sgis_to(c), c);
            }
        }
        assert_true(sgis_total() <= 1);
    }
}

/* SCH-27: an offline CPU gets no task and no IPI, even when its mask allows it */
static void sch27_offline_cpu_skipped(TEST_STATE)
{
    cpumask_clear(&cpus_online, C(1));
    start(0, span(0xf)); /* C(0) */
    fake_reset();
    struct task *b = start(1, cpumask_or(cpumask_of(C(0)), cpumask_of(C(1))));
    assert_int_equal(b->cpu, C(0));
    expect_no_sgi();
    assert_int_equal(sched_nr_running(C(1)), 0);
}

/* SCH-28: a task that sleeps and is woken returns to its last CPU when that is not busier,
 * which gets IPI_WAKEUP once it is idle again */
static void sch28_wakeup_returns_to_last_cpu(TEST_STATE)
{
    struct task *a = start(0, span(0xf));
    struct task *b = start(1, span(0xf));
    assert_int_equal(b->cpu, C(1));
    run_next_on(C(1));
    assert_ptr_equal(sched_current(C(1)), b);

    fake_cpu = &cpus[C(1)]; /* b blocks on C(1) */
    /* masked until it has switched away, as waitq_sleep_locked does */
    unsigned long flags = arch_irq_save();
    sched_prepare_sleep(b);
    assert_int_equal(sched_nr_running(C(1)), 0);
    fake.switch_returns = true;
    schedule();
    fake.switch_returns = false;
    arch_irq_restore(flags);
    assert_true(sched_is_idle_task(sched_current(C(1))));
    assert_false(b->on_cpu);
    fake_cpu = &cpus[C(0)];

    fake_reset();
    sched_wakeup(b); /* C(0) has a, C(1) nothing: b's last CPU wins */
    assert_int_equal(b->cpu, C(1));
    assert_int_equal(b->state, TASK_RUNNABLE);
    expect_one_sgi(C(1), IPI_WAKEUP);
    assert_int_equal(sched_nr_running(C(0)), 1);
    assert_int_equal(sched_nr_running(C(1)), 1);
    (void)a;
}

/* SCH-29: waking a task that is not asleep changes nothing */
static void sch29_wakeup_runnable_noop(TEST_STATE)
{
    struct task *a = start(0, cpumask_of(C(1)));
    fake_reset();
    sched_wakeup(a);
    expect_no_sgi();
    assert_int_equal(a->cpu, C(1));
    assert_int_equal(sched_nr_running(C(1)), 1);
}

/* SCH-30: moving a queued task's affinity elsewhere moves it now; a running one is told to
 * reschedule (IPI_RESCHEDULE); a mask with no online CPU is refused */
static void sch30_set_affinity(TEST_STATE)
{
    struct task *a = start(0, cpumask_of(C(1)));
    struct sched_move move;
    fake_reset();
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(2)), &move), 0);
    assert_int_equal(move.cpu, -1); /* not running: moved at once, nothing to wait for */
    assert_int_equal(a->cpu, C(2));
    assert_int_equal(sched_nr_running(C(1)), 0);
    assert_int_equal(sched_nr_running(C(2)), 1);
    expect_one_sgi(C(2), IPI_WAKEUP);

    run_next_on(C(2));
    assert_ptr_equal(sched_current(C(2)), a);
    fake_reset();
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(3)), &move), 0);
    expect_one_sgi(C(2), IPI_RESCHEDULE);
    assert_true(cpumask_equal(a->affinity, cpumask_of(C(3))));
    assert_int_equal(move.cpu, C(2)); /* the caller waits for C(2) to switch it away */
    assert_ptr_equal(move.task, a);

    cpumask_t before = a->affinity;
    assert_int_equal(sched_set_affinity(a, cpumask_andnot(cpumask_of(511), cpus_online), &move),
                     -EINVAL);
    assert_int_equal(sched_set_affinity(a, CPUMASK_NONE, &move), -EINVAL);
    assert_true(cpumask_equal(a->affinity, before));
}

static void no_op_timer(struct timer *t)
{
}

/* Start task i pinned to `cpu`, run it there, and put it to sleep there with its sleep
 * timer armed `delay` counter units from now (what waitq_sleep_locked does). */
static struct task *asleep_on(unsigned i, unsigned cpu, uint64_t delay, bool isolate)
{
    struct task *t = start(i, cpumask_of(cpu));
    run_next_on(cpu);
    struct cpu *caller = fake_cpu;
    fake_cpu = &cpus[cpu];
    if (isolate) {
        assert_int_equal(isol_prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE), 0);
    }
    timer_init(&t->sleep_timer, no_op_timer);
    unsigned long flags = arch_irq_save(); /* masked until it has switched away */
    sched_prepare_sleep(t);
    timer_arm(&t->sleep_timer, fake_counter + delay);
    fake.switch_returns = true;
    schedule(); /* to idle */
    fake.switch_returns = false;
    arch_irq_restore(flags);
    fake_cpu = caller;
    assert_true(sched_is_idle_task(sched_current(cpu)));
    return t;
}

/* SCH-31: a sleeper moved by another task's sched_setaffinity takes its sleep timer along,
 * and the CPU it goes to is kicked when that timer is earlier than what it has programmed
 * (issue 9, bug 3: a timer left behind fired on a CPU another task had isolated) */
static void sch31_sleep_timer_follows_the_task(TEST_STATE)
{
    struct task *a = asleep_on(0, C(2), 1000, false);
    struct sched_move move;
    assert_int_equal(timer_cpu(&a->sleep_timer), C(2));
    fake_reset();
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(1)), &move), 0);
    assert_int_equal(timer_cpu(&a->sleep_timer), C(1));
    struct timer none[1];
    assert_int_equal(timer_list(C(2), none, 0), 0);
    assert_int_equal(move.cpu, -1);
    expect_one_sgi(C(1), IPI_KICK); /* C(1) had nothing programmed */
    assert_true(timer_cancel(&a->sleep_timer));
}

/* SCH-32: an isolated task moved away while it sleeps loses its isolation at once: its
 * CPU's slot is empty, it no longer reports isolation (issue 9, bugs 1 and 2) */
static void sch32_isolated_sleeper_moved(TEST_STATE)
{
    static struct vm empty_vm;
    static struct process proc = {.pid = 42, .vm = &empty_vm};
    struct task *a = asleep_on(0, C(2), 1000, true);
    struct zt_isol_audit au;
    struct sched_move move;
    a->proc = &proc; /* the audit names the process; nothing else here looks at it */
    assert_int_equal(isol_audit(C(2), &au), 0);
    assert_int_equal(au.isolated, 1);
    assert_int_equal(au.tid, a->tid);
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(0)), &move), 0);
    assert_int_equal(a->isol_flags, 0);
    assert_int_equal(isol_audit(C(2), &au), 0);
    assert_int_equal(au.isolated, 0);
    assert_false(cpus[C(2)].isol_owned);
    timer_cancel(&a->sleep_timer);
    a->proc = NULL;
}

/* SCH-33: a mask that keeps the sleeper's CPU leaves its timer where it is */
static void sch33_timer_stays_when_allowed(TEST_STATE)
{
    struct task *a = asleep_on(0, C(2), 1000, false);
    struct sched_move move;
    fake_reset();
    assert_int_equal(sched_set_affinity(a, cpumask_or(cpumask_of(C(2)), cpumask_of(C(3))), &move),
                     0);
    assert_int_equal(timer_cpu(&a->sleep_timer), C(2));
    expect_no_sgi();
    timer_cancel(&a->sleep_timer);
}

/* SCH-34: a setter that locked a waking task's old queue does not act there once the waker has
 * placed the task on another CPU: it follows the task to its new queue (a setter that read
 * the settled state under the old queue's lock dequeued the task from a queue it was not on:
 * a checked kernel's panic in HRD-04's affinity storm, a corrupted queue otherwise) */
extern void (*sched_settle_hook)(struct task *t);
static pthread_t sch34_waker;
static unsigned sch34_waker_cpu;

static void *sch34_wake(void *arg)
{
    fake_cpu = &cpus[sch34_waker_cpu];
    sched_wakeup(arg); /* WAKING, then waits for the task to be off its CPU, then places it */
    return NULL;
}

/* Runs once, with the setter holding the queue it found the task on: the task's switch-out
 * ends, and the waker places it on the CPU of its new mask. */
static void sch34_place_meanwhile(struct task *t)
{
    sched_settle_hook = NULL;
    __atomic_store_n(&t->on_cpu, false, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(sch34_waker, NULL), 0);
}

static void sch34_setter_follows_a_task_placed_meanwhile(TEST_STATE)
{
    struct task *a = asleep_on(0, C(0), 1000, false);
    struct sched_move move;
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(1)), &move), 0); /* a sleeper: its
                                                                           wakeup places it */
    assert_int_equal(a->cpu, C(0));
    a->on_cpu = true; /* still switching out on C(0): the waker waits for it */
    sch34_waker_cpu = C(3);
    assert_int_equal(pthread_create(&sch34_waker, NULL, sch34_wake, a), 0);
    while (__atomic_load_n(&a->state, __ATOMIC_ACQUIRE) != TASK_WAKING) {
        sched_yield();
    }
    sched_settle_hook = sch34_place_meanwhile;
    fake_cpu = &cpus[C(2)];
    assert_int_equal(sched_set_affinity(a, cpumask_of(C(0)), &move), 0);
    fake_cpu = &cpus[C(0)];
    assert_null(sched_settle_hook); /* the setter did meet the waker */
    assert_int_equal(a->state, TASK_RUNNABLE);
    assert_int_equal(a->cpu, C(0));
    assert_int_equal(sched_nr_running(C(0)), 1);
    assert_int_equal(sched_nr_running(C(1)), 0);
    run_next_on(C(0));
    assert_ptr_equal(sched_current(C(0)), a);
    timer_cancel(&a->sleep_timer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sch01_housekeeping_preferred),
        cmocka_unit_test(sch02_dataplane_when_no_housekeeping),
        cmocka_unit_test(sch03_never_outside_mask_or_offline),
        cmocka_unit_test(sch04_least_loaded),
        cmocka_unit_test(sch05_prev_kept_when_not_busier),
        cmocka_unit_test(sch06_nothing_allowed),
        cmocka_unit_test(sch07_high_cpus),
        cmocka_unit_test(sch08_random_sweep),
        cmocka_unit_test_setup(sch20_empty, world_setup),
        cmocka_unit_test_setup(sch21_first_task_local, world_setup),
        cmocka_unit_test_setup(sch22_second_task_wakes_idle_cpu, world_setup),
        cmocka_unit_test_setup(sch23_two_tasks_need_tick, world_setup),
        cmocka_unit_test_setup(sch24_dataplane_placement, world_setup),
        cmocka_unit_test_setup(sch25_busy_cpu_kicked_once, world_setup),
        cmocka_unit_test_setup(sch26_no_ipi_outside_affinity, world_setup),
        cmocka_unit_test_setup(sch27_offline_cpu_skipped, world_setup),
        cmocka_unit_test_setup(sch28_wakeup_returns_to_last_cpu, world_setup),
        cmocka_unit_test_setup(sch29_wakeup_runnable_noop, world_setup),
        cmocka_unit_test_setup(sch30_set_affinity, world_setup),
        cmocka_unit_test_setup(sch31_sleep_timer_follows_the_task, world_setup),
        cmocka_unit_test_setup(sch32_isolated_sleeper_moved, world_setup),
        cmocka_unit_test_setup(sch33_timer_stays_when_allowed, world_setup),
        cmocka_unit_test_setup(sch34_setter_follows_a_task_placed_meanwhile, world_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
