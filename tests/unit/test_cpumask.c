/* SPDX-License-Identifier: MIT */
/*
 * test_cpumask.c — host unit tests of kernel/lib/cpumask.c and cpumask.h: cpulist text <-> CPU
 * sets of MAX_CPUS (512) CPUs, and the set operations.
 *
 * Each test has a stable ID (CPL-nn) and proves one behaviour; loops report the mask or the
 * text they failed on.  Built with ASan/UBSan, so an out-of-bounds read or write fails too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpumask.h"
#include "uapi/zt_errno.h"
#include "masks.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define UNTOUCHED_MASK M64(0xdeadbeefcafef00dull)
#define UNTOUCHED_CPU  0x5a5a5a5au

/* cpulist_parse on a C string; *m and *bad start as sentinels so "untouched" is visible. */
static int parse(const char *s, cpumask_t *m, unsigned *bad)
{
    *m = UNTOUCHED_MASK;
    *bad = UNTOUCHED_CPU;
    return cpulist_parse(s, strlen(s), m, bad);
}

/* The set s parses to, against `want` (all MAX_CPUS CPUs). */
static void expect_set(const char *s, cpumask_t want)
{
    cpumask_t m;
    unsigned bad;
    int rc = parse(s, &m, &bad);

    if (rc != 0 || !cpumask_equal(m, want)) {
        fail_msg("\"%s\": rc %d, first CPUs %u/%u, weight %u/%u", s, rc, cpumask_first(m),
                 cpumask_first(want), cpumask_weight(m), cpumask_weight(want));
    }
    assert_int_equal(bad, UNTOUCHED_CPU);
}

/* The same for a set of CPUs 0-63 given as a word. */
static void expect_mask(const char *s, uint64_t want)
{
    expect_set(s, M64(want));
}

static void expect_einval(const char *s, size_t len)
{
    cpumask_t m = UNTOUCHED_MASK;
    unsigned bad = UNTOUCHED_CPU;
    int rc = cpulist_parse(s, len, &m, &bad);

    if (rc != -EINVAL || !cpumask_equal(m, UNTOUCHED_MASK) || bad != UNTOUCHED_CPU) {
        fail_msg("\"%.*s\" (len %zu): rc %d mask %#llx bad %u, want -EINVAL and both untouched",
                 (int)len, s, len, rc, (unsigned long long)m.w[0], bad);
    }
}

static void expect_erange(const char *s, unsigned want_bad)
{
    cpumask_t m;
    unsigned bad;
    int rc = parse(s, &m, &bad);

    if (rc != -ERANGE || bad != want_bad || !cpumask_equal(m, UNTOUCHED_MASK)) {
        fail_msg("\"%s\": rc %d bad %u mask %#llx, want -ERANGE bad %u, mask untouched", s, rc, bad,
                 (unsigned long long)m.w[0], want_bad);
    }
}

static void expect_format_set(cpumask_t m, const char *want)
{
    char buf[CPULIST_MAX_LEN];
    int n = cpulist_format(m, buf, sizeof(buf));

    if (strcmp(buf, want) != 0 || n != (int)strlen(want)) {
        fail_msg("mask %#llx...: \"%s\" (returned %d), want \"%s\"", (unsigned long long)m.w[0],
                 buf, n, want);
    }
}

static void expect_format(uint64_t m, const char *want)
{
    expect_format_set(M64(m), want);
}

/* Format, check the text, parse it back, check the mask. */
static void round_trip_set(cpumask_t m)
{
    char buf[CPULIST_MAX_LEN];
    cpumask_t back = UNTOUCHED_MASK;
    unsigned bad = UNTOUCHED_CPU;
    int n = cpulist_format(m, buf, sizeof(buf));
    int rc;

    if (n <= 0 || (size_t)n >= sizeof(buf) || strlen(buf) != (size_t)n) {
        fail_msg("mask %#llx...: format returned %d for \"%s\"", (unsigned long long)m.w[0], n,
                 buf);
    }
    rc = cpulist_parse(buf, (size_t)n, &back, &bad);
    if (rc != 0 || !cpumask_equal(back, m)) {
        fail_msg("mask %#llx... -> \"%s\" -> rc %d mask %#llx...", (unsigned long long)m.w[0], buf,
                 rc, (unsigned long long)back.w[0]);
    }
}

static void round_trip(uint64_t m)
{
    round_trip_set(M64(m));
}

/* CPL-01: single CPUs parse to one bit, including the lowest and highest */
static void cpl01_single_cpus(TEST_STATE)
{
    expect_mask("0", 0x1);
    expect_mask("7", 0x80);
    expect_mask("63", 1ull << 63);
    expect_mask("007", 0x80);
}

/* CPL-02: ranges include both ends; a one-CPU range is that CPU */
static void cpl02_ranges(TEST_STATE)
{
    expect_mask("0-3", 0xf);
    expect_mask("2-5", 0x3c);
    expect_mask("5-5", 0x20);
    expect_mask("0-63", ~0ull);
    expect_mask("62-63", 3ull << 62);
}

/* CPL-03: "1,3-5" formats back identically */
static void cpl03_list_round_trip_text(TEST_STATE)
{
    expect_mask("1,3-5", 0x3a);
    expect_format(0x3a, "1,3-5");
}

/* CPL-04: stride form N-M:USED/GROUP takes the first USED of every GROUP CPUs */
static void cpl04_stride(TEST_STATE)
{
    expect_mask("0-7:2/4", 0x33);
    expect_mask("0-63:1/2", 0x5555555555555555ull);
    expect_mask("1-10:3/3", 0x7fe);
    expect_mask("0-3:1/100", 0x1);
    expect_mask("2-9:1/4,0", 0x45);
}

/* CPL-05: items may overlap and come in any order; the result is their union */
static void cpl05_union_any_order(TEST_STATE)
{
    expect_mask("5,1-3,2", 0x2e);
    expect_mask("3,3,3", 0x8);
    expect_mask("4-7,0-5", 0xff);
}

/* CPL-06: "none" is the empty set both ways */
static void cpl06_none(TEST_STATE)
{
    expect_mask("none", 0);
    expect_format(0, "none");
}

/* CPL-07: exactly len bytes are read; the text need not be NUL-terminated */
static void cpl07_len_bounds_the_text(TEST_STATE)
{
    static const char text[] = "1,2xyz";
    char exact[3] = {'1', '-', '3'}; /* no NUL anywhere: ASan catches a read past it */
    cpumask_t m = CPUMASK_NONE;

    assert_int_equal(cpulist_parse(text, 3, &m, NULL), 0);
    assert_int_equal(low64(m), 0x6);
    assert_int_equal(cpulist_parse("12", 1, &m, NULL), 0);
    assert_int_equal(low64(m), 0x2);
    assert_int_equal(cpulist_parse(exact, sizeof(exact), &m, NULL), 0);
    assert_int_equal(low64(m), 0xe);
    assert_int_equal(cpulist_parse("nonewline", 4, &m, NULL), 0);
    assert_int_equal(low64(m), 0);
}

/* CPL-08: every malformed form is -EINVAL and leaves *out and *bad_cpu untouched */
static void cpl08_malformed(TEST_STATE)
{
    /* One kind of mistake per row. */
    /* clang-format off */
    static const char *const bad[] = {
        "", ",", "1,", ",1", "1,,2",                                      /* empty items */
        "-1", "1-", "1--2", "1-2-3", "+1", "0x1", "1.5", "a", "1;2",      /* bad numbers */
        " 1", "1 ", "1, 2", "\t1", "1\n",                                 /* whitespace */
        "3-1", "2-1",                                                     /* backwards */
        "1-2:", "1-2:1", "1-2:1/", "1-2:/2", "1-2:0/2", "1-2:3/2",        /* bad stride */
        "1-2:1/0", "1:1/2", "1/2", "1-2/2", "1:2", "1-2:a/2", "1-2:1/b",  /* bad stride */
        "1-2:-1/2", "1-2:1/2/3", "1-2:1/99999999999999999999",            /* bad stride */
        "none,1", "None", "NONE", "non", "nonee",                         /* not "none" */
    };
    /* clang-format on */

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_einval(bad[i], strlen(bad[i]));
    }
    expect_einval("1\0", 2); /* a NUL inside len is a bad character, not the end */
    expect_einval("\0", 1);
}

/* CPL-09: a CPU >= MAX_CPUS (512) is -ERANGE and bad_cpu names the first one, overflow
 * saturating */
static void cpl09_out_of_range(TEST_STATE)
{
    expect_erange("512", 512);
    expect_erange("0-512", 512);
    expect_erange("999", 999);
    expect_erange("1,700,800", 700);
    expect_erange("511,512", 512);
    expect_erange("512-1", 512);
    expect_erange("0-1000:1/2", 1000);
    expect_erange("4294967295", 4294967295u);
    expect_erange("4294967296", ~0u);
    expect_erange("99999999999999999999", ~0u);
    expect_erange("0-99999999999999999999", ~0u);
}

/* CPL-10: bad_cpu may be NULL, and -EINVAL wins when a list has both problems */
static void cpl10_error_precedence(TEST_STATE)
{
    cpumask_t m = CPUMASK_NONE;

    assert_int_equal(cpulist_parse("512", 3, &m, NULL), -ERANGE);
    expect_einval("512,x", 5);
    expect_einval("999-", 4);
    expect_einval("1-999,", 6);
    expect_einval("512-1-2", 7);
}

/* CPL-11: a NULL or empty text is -EINVAL */
static void cpl11_null_and_empty(TEST_STATE)
{
    expect_einval(NULL, 0);
    expect_einval(NULL, 5);
    expect_einval("1", 0);
}

/* CPL-12: all 2^10 masks of 10 CPUs survive format -> parse */
static void cpl12_round_trip_10_cpus(TEST_STATE)
{
    for (uint64_t m = 0; m < 1024; m++) {
        round_trip(m);
    }
}

/* CPL-13: random and edge 64-bit masks survive format -> parse */
static void cpl13_round_trip_64_cpus(TEST_STATE)
{
    static const uint64_t edges[] = {
        ~0ull,
        1ull << 63,
        0x5555555555555555ull,
        0xaaaaaaaaaaaaaaaaull,
        0x8000000000000001ull,
        0x6db6db6db6db6db6ull,
        0x7ffffffffffffffeull,
    };
    uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64: fixed seed, same masks every run */

    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        round_trip(edges[i]);
    }
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        round_trip(x & (i % 3 == 0 ? x >> 32 | x << 32 : ~0ull)); /* sparser every third */
    }
}

/* CPL-14: format collapses runs of two or more into N-M and separates with commas */
static void cpl14_format_examples(TEST_STATE)
{
    expect_format(0x1, "0");
    expect_format(0x3, "0-1");
    expect_format(0x5, "0,2");
    expect_format(0x2d, "0,2-3,5");
    expect_format(~0ull, "0-63");
    expect_format(1ull << 63, "63");
    expect_format(0xc000000000000001ull, "0,62-63");
    expect_format(0xaaaaaaaaaaaaaaaaull, "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,"
                                         "39,41,43,45,47,49,51,53,55,57,59,61,63");
}

/* CPL-15: format truncates like snprintf: full length returned, size-1 chars kept, NUL */
static void cpl15_format_truncation(TEST_STATE)
{
    const cpumask_t m = M64(0x2d00000000000f0bull); /* "0-1,3,8-11,56,58-59,61" */
    char full[64];
    int need = cpulist_format(m, full, sizeof(full));

    assert_string_equal(full, "0-1,3,8-11,56,58-59,61");
    assert_int_equal(cpulist_format(m, NULL, 0), need);
    for (size_t size = 1; size <= (size_t)need + 2; size++) {
        char buf[80];
        size_t keep = size - 1 < (size_t)need ? size - 1 : (size_t)need;

        memset(buf, '#', sizeof(buf));
        assert_int_equal(cpulist_format(m, buf, size), need);
        if (memcmp(buf, full, keep) != 0 || buf[keep] != '\0') {
            fail_msg("size %zu: got \"%.*s\"", size, (int)size, buf);
        }
        for (size_t i = size; i < sizeof(buf); i++) {
            if (buf[i] != '#') {
                fail_msg("size %zu: byte %zu written", size, i);
            }
        }
    }
    assert_int_equal(cpulist_format(CPUMASK_NONE, full, 3), 4); /* "none" into 3 bytes: "no" */
    assert_string_equal(full, "no");
}

/* CPL-16: the inline helpers agree with their definitions at the edges */
static void cpl16_inline_helpers(TEST_STATE)
{
    cpumask_t all = cpumask_first_n(MAX_CPUS);

    assert_int_equal(cpumask_weight(CPUMASK_NONE), 0);
    assert_int_equal(cpumask_weight(M64(~0ull)), 64);
    assert_int_equal(cpumask_weight(all), MAX_CPUS);
    assert_int_equal(cpumask_weight(M64(0x8000000000000101ull)), 3);
    assert_int_equal(cpumask_first(CPUMASK_NONE), MAX_CPUS);
    assert_int_equal(cpumask_first(M64(1ull << 63)), 63);
    assert_int_equal(cpumask_first(cpumask_of(511)), 511);
    assert_int_equal(low64(cpumask_first_n(0)), 0);
    assert_int_equal(low64(cpumask_first_n(4)), 0xf);
    assert_int_equal(low64(cpumask_first_n(64)), ~0ull);
    assert_int_equal(cpumask_weight(cpumask_first_n(65)), 65);
    assert_int_equal(cpumask_weight(cpumask_first_n(100000)), MAX_CPUS);
    assert_false(cpumask_has(all, MAX_CPUS));
    assert_true(cpumask_has(all, MAX_CPUS - 1));
    assert_true(cpumask_has(M64(1ull << 63), 63));
    assert_true(cpumask_empty(cpumask_of(MAX_CPUS))); /* no such CPU: the empty set */
    assert_true(cpumask_is_single(cpumask_of(200)));
    assert_false(cpumask_is_single(CPUMASK_NONE));
    assert_false(cpumask_is_single(cpumask_or(cpumask_of(3), cpumask_of(300))));
}

/* CPL-17: lists past 64 CPUs: every word of the set, ranges across word boundaries, the
 * stride form across them, and the hidden-edge CPUs of QEMU's GICv3 (122: last in the first
 * redistributor region, 123: first in the second) */
static void cpl17_past_64(TEST_STATE)
{
    cpumask_t m = CPUMASK_NONE;

    cpumask_set(&m, 64);
    expect_set("64", m);
    expect_set("511", cpumask_of(511));
    expect_set("0-511", cpumask_first_n(MAX_CPUS));
    expect_set("1-511", cpumask_andnot(cpumask_first_n(MAX_CPUS), cpumask_of(0)));
    m = cpumask_or(cpumask_of(63), cpumask_of(64));
    expect_set("63-64", m);
    m = cpumask_or(cpumask_of(122), cpumask_of(123));
    expect_set("122-123", m);
    expect_set("123,122", m);
    m = CPUMASK_NONE;
    for (unsigned c = 60; c <= 200; c += 10) {
        cpumask_set(&m, c);
    }
    expect_set("60-200:1/10", m);
    expect_format_set(m, "60,70,80,90,100,110,120,130,140,150,160,170,180,190,200");
    expect_format_set(cpumask_andnot(cpumask_first_n(MAX_CPUS), cpumask_of(0)), "1-511");
    expect_format_set(cpumask_or(cpumask_of(0), cpumask_of(511)), "0,511");
    expect_format_set(cpumask_andnot(cpumask_first_n(130), cpumask_first_n(127)), "127-129");
}

/* CPL-18: random and edge sets of all 512 CPUs survive format -> parse, and no text is
 * longer than CPULIST_MAX_LEN (the worst, two of every three, is 1293 characters) */
static void cpl18_round_trip_512_cpus(TEST_STATE)
{
    uint64_t x = 0x243f6a8885a308d3ull;
    cpumask_t worst = CPUMASK_NONE;

    for (unsigned c = 0; c < MAX_CPUS; c++) {
        if (c % 3 != 2) {
            cpumask_set(&worst, c);
        }
    }
    assert_int_equal(cpulist_format(worst, NULL, 0), 1293);
    assert_true(1293 < CPULIST_MAX_LEN);
    round_trip_set(worst);
    round_trip_set(cpumask_first_n(MAX_CPUS));
    for (int i = 0; i < 20000; i++) {
        cpumask_t m;
        for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            m.w[w] = i % 3 == 0 ? x & (x >> 7) : x; /* sparser every third */
        }
        if (cpulist_format(m, NULL, 0) >= CPULIST_MAX_LEN) {
            fail_msg("a text of %d characters", cpulist_format(m, NULL, 0));
        }
        round_trip_set(m);
    }
}

/* CPL-19: set operations and iteration agree with a bit-by-bit model on random sets */
static void cpl19_set_operations(TEST_STATE)
{
    uint64_t x = 0x13198a2e03707344ull;

    for (int i = 0; i < 2000; i++) {
        cpumask_t a, b;
        for (unsigned w = 0; w < CPUMASK_WORDS; w++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a.w[w] = x & (i & 1 ? x >> 3 : ~0ull);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b.w[w] = i % 5 == 0 ? 0 : x;
        }
        cpumask_t and_ = cpumask_and(a, b), or_ = cpumask_or(a, b), not_ = cpumask_andnot(a, b);
        unsigned weight = 0, seen = 0, prev = 0;
        bool intersect = false;
        for (unsigned c = 0; c < MAX_CPUS; c++) {
            bool ia = cpumask_has(a, c), ib = cpumask_has(b, c);
            assert_int_equal(cpumask_has(and_, c), ia && ib);
            assert_int_equal(cpumask_has(or_, c), ia || ib);
            assert_int_equal(cpumask_has(not_, c), ia && !ib);
            weight += ia;
            intersect |= ia && ib;
        }
        assert_int_equal(cpumask_weight(a), weight);
        assert_int_equal(cpumask_intersects(a, b), intersect);
        for_each_cpu(c, a) {
            assert_true(cpumask_has(a, c) && (seen == 0 || c > prev));
            prev = c;
            seen++;
        }
        assert_int_equal(seen, weight);
    }
}

/* CPL-20: the shared-set operations change one CPU's bit and read every word */
static void cpl20_atomic_helpers(TEST_STATE)
{
    cpumask_t s = CPUMASK_NONE;

    cpumask_set_atomic(&s, 0);
    cpumask_set_atomic(&s, 123);
    cpumask_set_atomic(&s, 511);
    cpumask_set_atomic(&s, 512); /* no such CPU: nothing */
    assert_int_equal(cpumask_weight(cpumask_load(&s)), 3);
    assert_true(cpumask_test_atomic(&s, 123) && !cpumask_test_atomic(&s, 122));
    cpumask_clear_atomic(&s, 123);
    assert_false(cpumask_test_atomic(&s, 123));
    cpumask_store(&s, cpumask_of(300));
    assert_true(cpumask_equal(cpumask_load(&s), cpumask_of(300)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpl01_single_cpus),
        cmocka_unit_test(cpl02_ranges),
        cmocka_unit_test(cpl03_list_round_trip_text),
        cmocka_unit_test(cpl04_stride),
        cmocka_unit_test(cpl05_union_any_order),
        cmocka_unit_test(cpl06_none),
        cmocka_unit_test(cpl07_len_bounds_the_text),
        cmocka_unit_test(cpl08_malformed),
        cmocka_unit_test(cpl09_out_of_range),
        cmocka_unit_test(cpl10_error_precedence),
        cmocka_unit_test(cpl11_null_and_empty),
        cmocka_unit_test(cpl12_round_trip_10_cpus),
        cmocka_unit_test(cpl13_round_trip_64_cpus),
        cmocka_unit_test(cpl14_format_examples),
        cmocka_unit_test(cpl15_format_truncation),
        cmocka_unit_test(cpl16_inline_helpers),
        cmocka_unit_test(cpl17_past_64),
        cmocka_unit_test(cpl18_round_trip_512_cpus),
        cmocka_unit_test(cpl19_set_operations),
        cmocka_unit_test(cpl20_atomic_helpers),
    };

    return cmocka_run_group_tests_name("cpumask", tests, NULL, NULL);
}
