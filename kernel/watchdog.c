/*
 * watchdog.c — the housekeeping watchdog (contract in include/kernel/watchdog.h).
 *
 * State per CPU, indexed by CPU: its timer (armed on that CPU only), whether it should run
 * there (`want`, written by whoever starts or stops it there: boot, or a partition change),
 * its heartbeat (written by that CPU's timer callback, read by the others'; 0 while it is not
 * watched), and the heartbeat value last reported stale (written by whichever CPU reported
 * it; a race only repeats a report).  `running` is the set whose timers run; it changes only
 * in watchdog_update, whose callers are serialised (boot, then partition changes).
 */
#include "kernel/watchdog.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/timer.h"

static struct timer timers[MAX_CPUS];
static bool want[MAX_CPUS];
static uint64_t beat[MAX_CPUS];
static uint64_t reported[MAX_CPUS];
static uint64_t period_cycles, bound_cycles;
static uint64_t nreports;
static cpumask_t running; /* CPUs whose timer runs (written by watchdog_update's caller) */

/* Look at every other housekeeping CPU's heartbeat. */
static void check_others(unsigned me, uint64_t now)
{
    cpumask_t watched = __atomic_load_n(&running, __ATOMIC_ACQUIRE);
    for (unsigned c = 0; c < ncpus; c++) {
        if (c == me || !cpumask_has(watched, c)) {
            continue;
        }
        uint64_t b = __atomic_load_n(&beat[c], __ATOMIC_RELAXED);
        if (b && now > b && now - b > bound_cycles &&
            __atomic_exchange_n(&reported[c], b, __ATOMIC_RELAXED) != b) {
            __atomic_fetch_add(&nreports, 1, __ATOMIC_RELAXED);
            hklog("watchdog: cpu %u has taken no interrupt for %lu ms (interrupts masked too "
                  "long?), seen from cpu %u",
                  c, (unsigned long)cycles_to_us(now - b) / 1000, me);
        }
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
    check_others(me, now);
    timer_arm(t, now + period_cycles);
}

/* Start CPU c's timer from this (housekeeping) CPU: armed here, then handed to c, which is
 * kicked only if it must reprogram (it is housekeeping, or the CPU being changed). */
static void start_on(unsigned c)
{
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
    __atomic_store_n(&want[c], false, __ATOMIC_RELEASE);
    __atomic_store_n(&beat[c], 0, __ATOMIC_RELAXED); /* nobody reports it stale now */
    timer_cancel(&timers[c]);
    timer_cancel(&timers[c]);
}

void watchdog_start(unsigned period_ms)
{
    if (period_ms < 4) {
        watchdog_update(0); /* off: every timer stopped, and none started again */
        period_cycles = 0;
        return;
    }
    bound_cycles = cycles_from_ns((uint64_t)period_ms * 1000000);
    period_cycles = bound_cycles / 4;
    watchdog_update(__atomic_load_n(&cpus_housekeeping, __ATOMIC_ACQUIRE) &
                    __atomic_load_n(&cpus_online, __ATOMIC_ACQUIRE));
}

void watchdog_update(cpumask_t housekeeping)
{
    if (!period_cycles) {
        return; /* off */
    }
    cpumask_t should = cpumask_weight(housekeeping) >= 2 ? housekeeping : 0;
    cpumask_t now = __atomic_load_n(&running, __ATOMIC_ACQUIRE);
    for (unsigned c = 0; c < ncpus; c++) {
        if (cpumask_has(now, c) && !cpumask_has(should, c)) {
            stop_on(c);
        }
    }
    __atomic_store_n(&running, should, __ATOMIC_RELEASE);
    for (unsigned c = 0; c < ncpus; c++) {
        if (cpumask_has(should, c) && !cpumask_has(now, c)) {
            start_on(c);
        }
    }
}

uint64_t watchdog_reports(void)
{
    return __atomic_load_n(&nreports, __ATOMIC_RELAXED);
}

cpumask_t watchdog_cpus(void)
{
    return __atomic_load_n(&running, __ATOMIC_ACQUIRE);
}
