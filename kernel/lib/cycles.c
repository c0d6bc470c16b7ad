/* SPDX-License-Identifier: MIT */
/*
 * cycles.c — conversions between counter cycles and ns/us (contract in
 * include/kernel/cycles.h).
 *
 * Each conversion splits whole seconds from the remainder, so no product wraps for any input
 * whose result fits 64 bits: x / f * S + x % f * S / f, where x / f * S is at most the result
 * and x % f * S < f * S < 2^64 (f and S below 2^32: rescale checks it).
 */
#include "kernel/cycles.h"
#include "arch.h"
#include "kernel/panic.h"

uint64_t cycles_per_second(void)
{
    return arch_counter_freq();
}

/* x units of rate `from` per second, in units of rate `to` per second. */
static uint64_t rescale(uint64_t x, uint64_t from, uint64_t to)
{
    ASSERT(from && from < (1ull << 32) && to < (1ull << 32)); /* no product reaches 2^64 */
    return x / from * to + x % from * to / from;
}

uint64_t cycles_to_ns(uint64_t cycles)
{
    return rescale(cycles, arch_counter_freq(), NS_PER_SEC);
}

uint64_t cycles_to_us(uint64_t cycles)
{
    return rescale(cycles, arch_counter_freq(), US_PER_SEC);
}

uint64_t cycles_from_ns(uint64_t ns)
{
    return rescale(ns, NS_PER_SEC, arch_counter_freq());
}

_Static_assert(sizeof(struct timespec_k) == 16, "Linux/aarch64's struct timespec");

bool timespec_is_valid(const struct timespec_k *ts)
{
    return ts->sec >= 0 && ts->nsec >= 0 && (uint64_t)ts->nsec < NS_PER_SEC;
}

uint64_t timespec_to_ns(const struct timespec_k *ts)
{
    ASSERT(timespec_is_valid(ts)); /* the caller checked it first */
    uint64_t sec = (uint64_t)ts->sec < TIMESPEC_SEC_MAX ? (uint64_t)ts->sec : TIMESPEC_SEC_MAX;
    return sec * NS_PER_SEC + (uint64_t)ts->nsec;
}

uint64_t timespec_to_cycles(const struct timespec_k *ts)
{
    return cycles_from_ns(timespec_to_ns(ts));
}

struct timespec_k timespec_from_ns(uint64_t ns)
{
    return (struct timespec_k){(int64_t)(ns / NS_PER_SEC), (int64_t)(ns % NS_PER_SEC)};
}
