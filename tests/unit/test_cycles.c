/* SPDX-License-Identifier: MIT */
/*
 * test_cycles.c — host unit tests of kernel/lib/cycles.c: conversions between counter cycles and
 * ns/us at the fake arch's frequency (62.5 MHz, 16 ns per cycle, as QEMU virt).
 *
 * CYC-01..04: exact values, rounding down, no overflow near 2^64, and the round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/cycles.h"
#include "fake.h"

#define TEST_STATE void **state __attribute__((unused))

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
    uint64_t ns = 4294967296ull * NS_PER_SEC; /* 2^32 s, the largest a timespec may ask */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cyc01_exact_values),
        cmocka_unit_test(cyc02_round_down),
        cmocka_unit_test(cyc03_no_overflow),
        cmocka_unit_test(cyc04_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
