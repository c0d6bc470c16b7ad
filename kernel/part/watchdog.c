/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c — the housekeeping watchdog (contract in include/kernel/watchdog.h).
 *
 * State per CPU, indexed by CPU: its timer (armed on that CPU only), whether it should run
 * there (`want`, written by whoever starts or stops it there: boot, or a partition change),
 * its heartbeat (written by that CPU's timer callback, read by the others'; 0 while it is not
 * watched), and the heartbeat value last reported stale (written by whichever CPU reported
 * it; a race only repeats a report).  `running` is the set whose timers run; it changes only
 * in watchdog_update, whose callers are serialised (boot, then partition changes).
 *
 * Each watched CPU looks at one other: the next in `running` (the last looks at the first),
 * so the watched CPUs form a ring and every one of them is seen by its predecessor.  A tick
 * costs the same on 2 housekeeping CPUs as on 512.
 */
#include "kernel/watchdog.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/lockcheck.h"
#include "kernel/spinlock.h"
#include "kernel/timer.h"

static struct timer timers[MAX_CPUS];
PERCPU_ARRAY(timers);
static bool want[MAX_CPUS];
PERCPU_ARRAY(want);
static uint64_t beat[MAX_CPUS];
PERCPU_ARRAY(beat);
static uint64_t reported[MAX_CPUS];
PERCPU_ARRAY(reported);
static uint64_t period_cycles, bound_cycles;
static cpumask_t running; /* CPUs whose timer runs (written by watchdog_update's caller) */

/* CPU c has taken no interrupt for `stale` cycles: say so, and, in checked builds, which
 * lock it is waiting for if it spins on one (its rank, the CPU holding it, and the return
 * address of the function that waits: tools/symbolize or addr2line turn it into a name). */
static void report(unsigned c, unsigned me, uint64_t stale)
{
    unsigned long ms = (unsigned long)cycles_to_us(stale) / 1000;
    const spinlock_t *l = ZT_CHECKS_ON ? __atomic_load_n(&spin_waiting[c], __ATOMIC_ACQUIRE) : 0;
    if (!l) {
        hklog("watchdog: cpu %u has taken no interrupt for %lu ms (interrupts masked too long?), "
              "seen from cpu %u",
              c, ms, me);
        return;
    }
    hklog("watchdog: cpu %u has taken no interrupt for %lu ms, spinning on %s (%p, held by cpu "
          "%d) from %lx, seen from cpu %u",
          c, ms, lockcheck_rank_name(l->rank), (const void *)l,
          (int)__atomic_load_n(&l->holder, __ATOMIC_RELAXED) - 1,
          (unsigned long)__atomic_load_n(&spin_waiting_pc[c], __ATOMIC_RELAXED), me);
}

/* Look at the heartbeat of the next watched CPU after this one (ring order). */
static void check_next(unsigned me, uint64_t now)
{
    cpumask_t watched = cpumask_load(&running);
    unsigned c = cpumask_next(watched, me + 1);
    c = c < MAX_CPUS ? c : cpumask_first(watched);
    if (c >= MAX_CPUS || c == me) {
        return;
    }
    uint64_t b = __atomic_load_n(&beat[c], __ATOMIC_RELAXED);
    if (b && now > b && now - b > bound_cycles &&
        __atomic_exchange_n(&reported[c], b, __ATOMIC_RELAXED) != b) {
        report(c, me, now - b);
    }
}

static void tick(struct timer *t)
{
    unsigned me = this_cpu_id();
    uint64_t now = arch_counter_read();
    if (!__atomic_load_n(&want[me], __ATOMIC_ACQUIRE)) {
        return; /* stopped here meanwhile: do not re-arm */
    }
    __atomic_store_n(&beat[me], now, __ATOMIC_RELAXED);
    check_next(me, now);
    timer_arm(t, now + period_cycles);
}

/* Start CPU c's timer from this (housekeeping) CPU: armed here, then handed to c, which is
 * kicked only if it must reprogram (it is housekeeping, or the CPU being changed). */
static void start_on(unsigned c)
{
    ASSERT(c < ncpus && !__atomic_load_n(&want[c], __ATOMIC_ACQUIRE)); /* not running there */
    uint64_t now = arch_counter_read();
    __atomic_store_n(&beat[c], now, __ATOMIC_RELAXED);
    __atomic_store_n(&want[c], true, __ATOMIC_RELEASE);
    timer_init(&timers[c], tick);
    timer_arm(&timers[c], now + period_cycles);
    if (c != this_cpu_id() && timer_move(&timers[c], c)) {
        ipi_send(c, IPI_KICK);
    }
}

/* Stop CPU c's timer from any CPU.  A callback already past its `want` check may re-arm
 * once while the first cancel waits for it; the second cancel removes that. */
static void stop_on(unsigned c)
{
    ASSERT(c < ncpus && __atomic_load_n(&want[c], __ATOMIC_ACQUIRE)); /* running there */
    __atomic_store_n(&want[c], false, __ATOMIC_RELEASE);
    __atomic_store_n(&beat[c], 0, __ATOMIC_RELAXED); /* nobody reports it stale now */
    timer_cancel(&timers[c]);
    timer_cancel(&timers[c]);
}

void watchdog_start(unsigned period_ms)
{
    if (period_ms < 4) {
        watchdog_update(CPUMASK_NONE); /* off: every timer stopped, and none started again */
        period_cycles = 0;
        return;
    }
    bound_cycles = cycles_from_ns((uint64_t)period_ms * 1000000);
    period_cycles = bound_cycles / 4;
    watchdog_update(cpumask_and(cpumask_load(&cpus_housekeeping), cpumask_load(&cpus_online)));
}

void watchdog_update(cpumask_t housekeeping)
{
    if (!period_cycles) {
        return; /* off */
    }
    cpumask_t should = cpumask_weight(housekeeping) >= 2 ? housekeeping : CPUMASK_NONE;
    cpumask_t now = cpumask_load(&running);
    cpumask_t stop = cpumask_andnot(now, should), start = cpumask_andnot(should, now);
    for_each_cpu(c, stop) {
        stop_on(c);
    }
    cpumask_store(&running, should);
    for_each_cpu(c, start) {
        start_on(c);
    }
}

cpumask_t watchdog_cpus(void)
{
    return cpumask_load(&running);
}
