/* SPDX-License-Identifier: MIT */
/*
 * test_cycles.c — host unit tests of kernel/lib/cycles.c: conversions between counter cycles and
 * ns/us at the fake arch's frequency (62.5 MHz, 16 ns per cycle, as QEMU virt).
 *
 * CYC-01..04: exact values, rounding down, no overflow near 2^64, and the round trip.
 * HLP-01..03: the one timespec rule every system call applies (cycles.h: Linux's
 * timespec64_valid) and its conversions, the far ones clamped at TIMESPEC_SEC_MAX.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/cycles.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

/* CYC-01: one cycle is 16 ns; one second of cycles is 10^9 ns and 10^6 us. */
static void cyc01_exact_values(TEST_STATE)
{
    assert_int_equal(cycles_per_second(), FAKE_COUNTER_FREQ);
    assert_int_equal(cycles_to_ns(1), 16);
    assert_int_equal(cycles_to_ns(FAKE_COUNTER_FREQ), NS_PER_SEC);
    assert_int_equal(cycles_to_us(FAKE_COUNTER_FREQ), US_PER_SEC);
    assert_int_equal(cycles_from_ns(NS_PER_SEC), FAKE_COUNTER_FREQ);
    assert_int_equal(cycles_from_ns(16), 1);
}

/* CYC-02: partial units round down. */
static void cyc02_round_down(TEST_STATE)
{
    assert_int_equal(cycles_to_us(62), 0); /* 992 ns */
    assert_int_equal(cycles_to_us(63), 1); /* 1008 ns */
    assert_int_equal(cycles_from_ns(15), 0);
    assert_int_equal(cycles_from_ns(31), 1);
}

/* CYC-03: values whose naive product would overflow 64 bits convert exactly. */
static void cyc03_no_overflow(TEST_STATE)
{
    uint64_t big = UINT64_MAX / 16; /* cycles: 16 * big fits, big * 10^9 does not */
    assert_int_equal(cycles_to_ns(big), big * 16);
    uint64_t ns = TIMESPEC_SEC_MAX * NS_PER_SEC; /* the most a timespec converts as */
    assert_int_equal(cycles_from_ns(ns), 4294967296ull * FAKE_COUNTER_FREQ);
}

/* CYC-04: ns -> cycles -> ns loses less than one cycle. */
static void cyc04_round_trip(TEST_STATE)
{
    for (uint64_t ns = 0; ns < 100000; ns += 7) {
        uint64_t back = cycles_to_ns(cycles_from_ns(ns));
        assert_true(back <= ns && ns - back < 16);
    }
}

/* HLP-01: valid means seconds >= 0 and nanoseconds in [0, 10^9), any number of seconds
 * (Linux's timespec64_valid): the edges on each side */
static void hlp01_timespec_rule(TEST_STATE)
{
    static const struct timespec_k valid[] = {
        {0, 0},         {0, 999999999},       {1, 0},
        {1ll << 32, 0}, {(1ll << 32) + 1, 5}, {INT64_MAX, 999999999},
    };
    static const struct timespec_k invalid[] = {
        {0, -1}, {0, 1000000000}, {-1, 0}, {INT64_MIN, 0}, {0, INT64_MIN}, {5, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        assert_true(timespec_is_valid(&valid[i]));
    }
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        assert_false(timespec_is_valid(&invalid[i]));
    }
}

/* HLP-02: a valid timespec converts exactly up to TIMESPEC_SEC_MAX seconds and as that many
 * beyond (no product wraps); ns -> timespec splits at whole seconds */
static void hlp02_timespec_conversions(TEST_STATE)
{
    const struct timespec_k half = {0, 500000000}, one = {1, 16}, edge = {1ll << 32, 7};
    const struct timespec_k past = {(1ll << 32) + 1, 7}, far = {INT64_MAX, 999999999};
    assert_int_equal(timespec_to_ns(&half), 500000000);
    assert_int_equal(timespec_to_cycles(&half), FAKE_COUNTER_FREQ / 2);
    assert_int_equal(timespec_to_cycles(&one), FAKE_COUNTER_FREQ + 1);
    assert_int_equal(timespec_to_ns(&edge), TIMESPEC_SEC_MAX * NS_PER_SEC + 7);
    assert_int_equal(timespec_to_ns(&past), TIMESPEC_SEC_MAX * NS_PER_SEC + 7); /* clamped */
    assert_int_equal(timespec_to_ns(&far), TIMESPEC_SEC_MAX * NS_PER_SEC + 999999999);
    assert_int_equal(timespec_to_cycles(&far), cycles_from_ns(timespec_to_ns(&far)));
    struct timespec_k t = timespec_from_ns(3 * NS_PER_SEC + 42);
    assert_int_equal(t.sec, 3);
    assert_int_equal(t.nsec, 42);
    t = timespec_from_ns(timespec_to_ns(&edge));
    assert_int_equal(t.sec, 1ll << 32);
    assert_int_equal(t.nsec, 7);
}

static void convert_invalid(void)
{
    const struct timespec_k bad = {0, 1000000000};
    timespec_to_ns(&bad);
}

/* HLP-03: converting a timespec nobody checked breaks the contract and panics */
static void hlp03_unchecked_timespec_panics(TEST_STATE)
{
    char why[400];
    if (!fixture_panics(convert_invalid,
                        "assertion failed: timespec_is_valid(ts) (kernel/lib/cycles.c", why,
                        sizeof(why))) {
        fail_msg("expected a panic: %s", why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cyc01_exact_values),
        cmocka_unit_test(cyc02_round_down),
        cmocka_unit_test(cyc03_no_overflow),
        cmocka_unit_test(cyc04_round_trip),
        cmocka_unit_test(hlp01_timespec_rule),
        cmocka_unit_test(hlp02_timespec_conversions),
        cmocka_unit_test(hlp03_unchecked_timespec_panics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
