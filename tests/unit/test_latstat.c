/* SPDX-License-Identifier: MIT */
/*
 * test_latstat.c — host unit tests of the noise meters' arithmetic: user/lib/latstat.c (the
 * latency series and percentiles of osnoise -P and timerlat) and kernel/sys/hwnoise.c's gap
 * accounting (zt_hwnoise, osnoise -w), at the fake arch's 62.5 MHz (16 ns per cycle).
 *
 * LAT-01..04: min/avg/max and buckets, early values, percentile ranks, the overflow bucket.
 * HWN-01..02: gaps over the threshold only are noise, bucketed by whole us; the longest gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/hwnoise.h"
#include "latstat.h"
#include "unit.h"

#define FREQ 62500000ull

/* LAT-01: n, sum, min, max, mean and whole-microsecond buckets of a few latencies. */
static void lat01_series(TEST_STATE)
{
    static struct latstat s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(latstat_avg_ns(&s), 0);
    latstat_add(&s, 3888);
    latstat_add(&s, 999);
    latstat_add(&s, 27728);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.min_ns, 999);
    assert_int_equal(s.max_ns, 27728);
    assert_int_equal(latstat_avg_ns(&s), (3888 + 999 + 27728) / 3);
    assert_int_equal(s.us[0], 1);
    assert_int_equal(s.us[3], 1);
    assert_int_equal(s.us[27], 1);
    assert_int_equal(s.early, 0);
}

/* LAT-02: a negative latency (the event before it was due) counts as 0 and as early. */
static void lat02_early(TEST_STATE)
{
    static struct latstat s;
    memset(&s, 0, sizeof(s));
    latstat_add(&s, 5000);
    latstat_add(&s, -16);
    assert_int_equal(s.early, 1);
    assert_int_equal(s.min_ns, 0);
    assert_int_equal(s.us[0], 1);
    assert_int_equal(s.sum_ns, 5000);
}

/* LAT-03: the percentile is the bucket holding the value at rank ceil(n * p): with 400
 * values 1..400 us, p50 is 200, p90 360, p99 396, p99.9 400; an empty series says 0. */
static void lat03_percentile_ranks(TEST_STATE)
{
    static uint64_t b[LATSTAT_BUCKETS + 1];
    memset(b, 0, sizeof(b));
    for (unsigned i = 1; i <= 400; i++) {
        b[i]++;
    }
    assert_int_equal(latstat_percentile(b, 400, 50, 100), 200);
    assert_int_equal(latstat_percentile(b, 400, 90, 100), 360);
    assert_int_equal(latstat_percentile(b, 400, 99, 100), 396);
    assert_int_equal(latstat_percentile(b, 400, 999, 1000), 400); /* rank 399.6 -> 400 */
    assert_int_equal(latstat_percentile(b, 400, 1, 400), 1);      /* rank 1: the smallest */
    assert_int_equal(latstat_percentile(b, 0, 50, 100), 0);       /* empty: 0 */
    /* one value: every percentile is its bucket */
    memset(b, 0, sizeof(b));
    b[7] = 1;
    for (int k = 0; k < LATSTAT_NPCT; k++) {
        assert_int_equal(latstat_percentile(b, 1, latstat_pct[k][0], latstat_pct[k][1]), 7);
    }
}

/* LAT-04: 512 us and longer land in the overflow bucket, which is what a high percentile
 * then says; 511.999 us is still bucket 511. */
static void lat04_overflow(TEST_STATE)
{
    static struct latstat s;
    memset(&s, 0, sizeof(s));
    latstat_add(&s, 511999);
    latstat_add(&s, 512000);
    latstat_add(&s, 9000000);
    assert_int_equal(s.us[511], 1);
    assert_int_equal(s.us[LATSTAT_BUCKETS], 2);
    assert_int_equal(latstat_percentile(s.us, s.n, 50, 100), LATSTAT_BUCKETS);
    assert_int_equal(latstat_percentile(s.us, s.n, 1, 3), 511);
    assert_int_equal(s.max_ns, 9000000);
}

/* HWN-01: only gaps over the threshold are noise; each is bucketed by whole microseconds
 * (62 cycles = 992 ns -> 0 us, 63 cycles = 1008 ns -> 1 us); every gap is a sample. */
static void hwn01_threshold_and_buckets(TEST_STATE)
{
    static struct zt_hwnoise r;
    memset(&r, 0, sizeof(r));
    uint64_t thr = 5 * FREQ / 1000000; /* 5 us: 312 cycles */
    hwnoise_account(&r, 1, thr, FREQ);
    hwnoise_account(&r, 312, thr, FREQ);   /* exactly the threshold: not noise */
    hwnoise_account(&r, 313, thr, FREQ);   /* 5.008 us */
    hwnoise_account(&r, 62500, thr, FREQ); /* 1 ms */
    assert_int_equal(r.samples, 4);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.noise, 313 + 62500);
    assert_int_equal(r.us[5], 1);
    assert_int_equal(r.us[1000 < ZT_HWNOISE_BUCKETS ? 1000 : ZT_HWNOISE_BUCKETS], 1);
    memset(&r, 0, sizeof(r));
    hwnoise_account(&r, 62, 0, FREQ);
    hwnoise_account(&r, 63, 0, FREQ);
    assert_int_equal(r.us[0], 1);
    assert_int_equal(r.us[1], 1);
}

/* HWN-02: the longest gap is kept whether or not it was noise. */
static void hwn02_longest_gap(TEST_STATE)
{
    static struct zt_hwnoise r;
    memset(&r, 0, sizeof(r));
    hwnoise_account(&r, 100, 1000, FREQ);
    hwnoise_account(&r, 50, 1000, FREQ);
    assert_int_equal(r.max_gap, 100);
    assert_int_equal(r.count, 0);
    hwnoise_account(&r, 5000, 1000, FREQ);
    assert_int_equal(r.max_gap, 5000);
    assert_int_equal(r.count, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lat01_series),
        cmocka_unit_test(lat02_early),
        cmocka_unit_test(lat03_percentile_ranks),
        cmocka_unit_test(lat04_overflow),
        cmocka_unit_test(hwn01_threshold_and_buckets),
        cmocka_unit_test(hwn02_longest_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
