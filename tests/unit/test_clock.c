/* SPDX-License-Identifier: MIT */
/*
 * test_clock.c — host unit tests of the clock rules (include/uapi/zt_clock.h) and of wall time
 * from the counter (kernel/lib/clock.c), at the fake arch's 62.5 MHz.
 *
 * CLK-02..05: every id 0..16 and the encoded CPU-clock ids classified as Linux does; the
 * errno clock_nanosleep gives for each; the wall offset from an RTC reading (and without one);
 * wall-time deadlines turned into counter values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/clock.h"
#include "kernel/cycles.h"
#include "uapi/zt_clock.h"
#include "fake.h"

#define TEST_STATE void **state __attribute__((unused))

/* CLK-02: ids 0..16 as Linux's table of clocks (kernel/time/posix-timers.c) has them. */
static void clk02_kinds(TEST_STATE)
{
    static const enum zt_clock_kind want[17] = {
        ZT_CLOCK_WALL, ZT_CLOCK_COUNTER, ZT_CLOCK_CPU,     ZT_CLOCK_CPU,   ZT_CLOCK_COUNTER,
        ZT_CLOCK_WALL, ZT_CLOCK_COUNTER, ZT_CLOCK_COUNTER, ZT_CLOCK_ALARM, ZT_CLOCK_ALARM,
        ZT_CLOCK_NONE, ZT_CLOCK_WALL,    ZT_CLOCK_NONE,    ZT_CLOCK_NONE,  ZT_CLOCK_NONE,
        ZT_CLOCK_NONE, ZT_CLOCK_NONE,
    };
    for (int id = 0; id <= 16; id++) {
        assert_int_equal(zt_clock_kind(id), want[id]);
        bool readable =
            want[id] == ZT_CLOCK_WALL || want[id] == ZT_CLOCK_COUNTER || want[id] == ZT_CLOCK_CPU;
        assert_int_equal(zt_clock_read_error(id), readable ? 0 : -EINVAL);
    }
    /* Encoded ids: kind 3 is a file-descriptor clock, kind 3 with the thread bit is nothing. */
    assert_int_equal(zt_clock_kind(ZT_MAKE_PROCESS_CPUCLOCK(0, ZT_CPUCLOCK_SCHED)), ZT_CLOCK_CPU);
    assert_int_equal(zt_clock_kind(ZT_MAKE_THREAD_CPUCLOCK(7, ZT_CPUCLOCK_VIRT)), ZT_CLOCK_CPU);
    assert_int_equal(zt_clock_kind(ZT_MAKE_PROCESS_CPUCLOCK(3, ZT_CPUCLOCK_FD)), ZT_CLOCK_FD);
    assert_int_equal(zt_clock_kind(ZT_MAKE_THREAD_CPUCLOCK(3, ZT_CPUCLOCK_FD)), ZT_CLOCK_NONE);
    assert_int_equal(zt_clock_kind(-1), ZT_CLOCK_NONE);
    assert_int_equal(ZT_CPUCLOCK_PID(ZT_MAKE_THREAD_CPUCLOCK(1234, ZT_CPUCLOCK_SCHED)), 1234);
    assert_true(ZT_CPUCLOCK_PERTHREAD(ZT_MAKE_THREAD_CPUCLOCK(1234, ZT_CPUCLOCK_SCHED)));
    assert_true(zt_clock_is_counter_time(ZT_CLOCK_TAI) && !zt_clock_is_counter_time(2));
}

/* CLK-03: clock_nanosleep's refusals: the clocks Linux gives no nsleep (-EOPNOTSUPP), the
 * calling thread's own CPU clock and unknown ids (-EINVAL). */
static void clk03_nanosleep_errors(TEST_STATE)
{
    static const int want[17] = {
        0,           0,       0,           -EINVAL,     -EOPNOTSUPP, -EOPNOTSUPP,
        -EOPNOTSUPP, 0,       -EOPNOTSUPP, -EOPNOTSUPP, -EINVAL,     0,
        -EINVAL,     -EINVAL, -EINVAL,     -EINVAL,     -EINVAL,
    };
    for (int id = 0; id <= 16; id++) {
        assert_int_equal(zt_clock_nanosleep_error(id, 42), want[id]);
    }
    assert_int_equal(zt_clock_nanosleep_error(ZT_MAKE_THREAD_CPUCLOCK(0, 2), 42), -EINVAL);
    assert_int_equal(zt_clock_nanosleep_error(ZT_MAKE_THREAD_CPUCLOCK(42, 2), 42), -EINVAL);
    assert_int_equal(zt_clock_nanosleep_error(ZT_MAKE_THREAD_CPUCLOCK(43, 2), 42), 0);
    assert_int_equal(zt_clock_nanosleep_error(ZT_MAKE_PROCESS_CPUCLOCK(42, 2), 42), 0);
    assert_int_equal(zt_clock_nanosleep_error(ZT_MAKE_PROCESS_CPUCLOCK(3, 3), 42), -EOPNOTSUPP);
}

/* CLK-04: wall time is the RTC's reading at boot plus the counter since; no RTC (0), or an
 * RTC behind the counter's own time, leaves wall time at the counter's time. */
static void clk04_wall_offset(TEST_STATE)
{
    fake_reset();
    fake_counter = 10 * FAKE_COUNTER_FREQ; /* 10 s after the counter started */
    clock_init(1700000000, fake_counter);
    assert_int_equal(clock_wall_offset_ns(), (1700000000ull - 10) * NS_PER_SEC);
    assert_int_equal(clock_realtime_ns(), 1700000000ull * NS_PER_SEC);
    fake_counter += FAKE_COUNTER_FREQ / 2;
    assert_int_equal(clock_realtime_ns(), 1700000000ull * NS_PER_SEC + NS_PER_SEC / 2);
    assert_int_equal(clock_monotonic_ns(), 10 * NS_PER_SEC + NS_PER_SEC / 2);
    assert_int_equal(zt_clock_counter_time_ns(ZT_CLOCK_REALTIME_COARSE, clock_monotonic_ns(),
                                              clock_wall_offset_ns()),
                     clock_realtime_ns());
    clock_init(0, fake_counter);
    assert_int_equal(clock_wall_offset_ns(), 0);
    clock_init(5, 10 * FAKE_COUNTER_FREQ); /* an RTC reading 5 s when the counter says 10 */
    assert_int_equal(clock_wall_offset_ns(), 0);
}

/* CLK-05: a wall-time deadline becomes the counter value of that instant; one before the
 * counter started is 0 (past). */
static void clk05_wall_to_counter(TEST_STATE)
{
    fake_reset();
    clock_init(1700000000, 10 * FAKE_COUNTER_FREQ);
    assert_int_equal(clock_wall_to_counter(1700000001ull * NS_PER_SEC), 11 * FAKE_COUNTER_FREQ);
    assert_int_equal(clock_wall_to_counter(1700000000ull * NS_PER_SEC - 10 * NS_PER_SEC), 0);
    assert_int_equal(clock_wall_to_counter(1), 0);
    clock_init(0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clk02_kinds),
        cmocka_unit_test(clk03_nanosleep_errors),
        cmocka_unit_test(clk04_wall_offset),
        cmocka_unit_test(clk05_wall_to_counter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
