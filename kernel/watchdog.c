/*
 * watchdog.c — the housekeeping watchdog (contract in include/kernel/watchdog.h).
 *
 * State per CPU, indexed by CPU: its timer (armed on that CPU only), its heartbeat (written
 * by that CPU's timer callback, read by the others'), and the heartbeat value last reported
 * stale (written by whichever CPU reported it; a race only repeats a report).
 */
#include "kernel/watchdog.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/hklog.h"
#include "kernel/ipi.h"
#include "kernel/timer.h"

static struct timer timers[MAX_CPUS];
static uint64_t beat[MAX_CPUS];
static uint64_t reported[MAX_CPUS];
static uint64_t period_cycles, bound_cycles;
static uint64_t nreports;

/* Look at every other housekeeping CPU's heartbeat. */
static void check_others(unsigned me, uint64_t now)
{
    for (unsigned c = 0; c < ncpus; c++) {
        if (c == me || !cpumask_has(cpus_online, c) || cpu_is_dataplane(c)) {
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
    __atomic_store_n(&beat[me], now, __ATOMIC_RELAXED);
    check_others(me, now);
    timer_arm(t, now + period_cycles);
}

void watchdog_start(unsigned period_ms)
{
    if (period_ms < 4 || cpumask_weight(cpus_online & cpus_housekeeping) < 2) {
        return;
    }
    bound_cycles = cycles_from_ns((uint64_t)period_ms * 1000000);
    period_cycles = bound_cycles / 4;
    uint64_t now = arch_counter_read();
    for (unsigned c = 0; c < ncpus; c++) {
        if (!cpumask_has(cpus_online, c) || cpu_is_dataplane(c)) {
            continue;
        }
        timer_init(&timers[c], tick);
        __atomic_store_n(&beat[c], now, __ATOMIC_RELAXED);
        timer_arm(&timers[c], now + period_cycles); /* here, then to its CPU */
        if (c != this_cpu_id() && timer_move(&timers[c], c)) {
            ipi_send(c, IPI_KICK); /* an idle CPU reprograms for it */
        }
    }
}

uint64_t watchdog_reports(void)
{
    return __atomic_load_n(&nreports, __ATOMIC_RELAXED);
}
