/*
 * test_cpumask.c — host unit tests of kernel/cpumask.c: cpulist text <-> 64-bit CPU sets.
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

/* cmocka passes every test a state pointer; these tests need none. */
#define TEST_STATE void **state __attribute__((unused))

#define UNTOUCHED_MASK 0xdeadbeefcafef00dull
#define UNTOUCHED_CPU  0x5a5a5a5au

/* cpulist_parse on a C string; *m and *bad start as sentinels so "untouched" is visible. */
static int parse(const char *s, cpumask_t *m, unsigned *bad)
{
    *m = UNTOUCHED_MASK;
    *bad = UNTOUCHED_CPU;
    return cpulist_parse(s, strlen(s), m, bad);
}

static void expect_mask(const char *s, cpumask_t want)
{
    cpumask_t m;
    unsigned bad;
    int rc = parse(s, &m, &bad);

    if (rc != 0 || m != want) {
        fail_msg("\"%s\": rc %d mask %#llx, want rc 0 mask %#llx", s, rc, (unsigned long long)m,
                 (unsigned long long)want);
    }
    assert_int_equal(bad, UNTOUCHED_CPU);
}

static void expect_einval(const char *s, size_t len)
{
    cpumask_t m = UNTOUCHED_MASK;
    unsigned bad = UNTOUCHED_CPU;
    int rc = cpulist_parse(s, len, &m, &bad);

    if (rc != -EINVAL || m != UNTOUCHED_MASK || bad != UNTOUCHED_CPU) {
        fail_msg("\"%.*s\" (len %zu): rc %d mask %#llx bad %u, want -EINVAL and both untouched",
                 (int)len, s, len, rc, (unsigned long long)m, bad);
    }
}

static void expect_erange(const char *s, unsigned want_bad)
{
    cpumask_t m;
    unsigned bad;
    int rc = parse(s, &m, &bad);

    if (rc != -ERANGE || bad != want_bad || m != UNTOUCHED_MASK) {
        fail_msg("\"%s\": rc %d bad %u mask %#llx, want -ERANGE bad %u, mask untouched", s, rc, bad,
                 (unsigned long long)m, want_bad);
    }
}

static void expect_format(cpumask_t m, const char *want)
{
    char buf[256];
    int n = cpulist_format(m, buf, sizeof(buf));

    if (strcmp(buf, want) != 0 || n != (int)strlen(want)) {
        fail_msg("mask %#llx: \"%s\" (returned %d), want \"%s\"", (unsigned long long)m, buf, n,
                 want);
    }
}

/* Format, check the text, parse it back, check the mask. */
static void round_trip(cpumask_t m)
{
    char buf[256];
    cpumask_t back = UNTOUCHED_MASK;
    unsigned bad = UNTOUCHED_CPU;
    int n = cpulist_format(m, buf, sizeof(buf));
    int rc;

    if (n <= 0 || (size_t)n >= sizeof(buf) || strlen(buf) != (size_t)n) {
        fail_msg("mask %#llx: format returned %d for \"%s\"", (unsigned long long)m, n, buf);
    }
    rc = cpulist_parse(buf, (size_t)n, &back, &bad);
    if (rc != 0 || back != m) {
        fail_msg("mask %#llx -> \"%s\" -> rc %d mask %#llx", (unsigned long long)m, buf, rc,
                 (unsigned long long)back);
    }
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
    cpumask_t m = 0;

    assert_int_equal(cpulist_parse(text, 3, &m, NULL), 0);
    assert_int_equal(m, 0x6);
    assert_int_equal(cpulist_parse("12", 1, &m, NULL), 0);
    assert_int_equal(m, 0x2);
    assert_int_equal(cpulist_parse(exact, sizeof(exact), &m, NULL), 0);
    assert_int_equal(m, 0xe);
    assert_int_equal(cpulist_parse("nonewline", 4, &m, NULL), 0);
    assert_int_equal(m, 0);
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

/* CPL-09: a CPU >= 64 is -ERANGE and bad_cpu names the first one, overflow saturating */
static void cpl09_out_of_range(TEST_STATE)
{
    expect_erange("64", 64);
    expect_erange("0-64", 64);
    expect_erange("99", 99);
    expect_erange("1,70,80", 70);
    expect_erange("63,64", 64);
    expect_erange("64-1", 64);
    expect_erange("0-100:1/2", 100);
    expect_erange("4294967295", 4294967295u);
    expect_erange("4294967296", ~0u);
    expect_erange("99999999999999999999", ~0u);
    expect_erange("0-99999999999999999999", ~0u);
}

/* CPL-10: bad_cpu may be NULL, and -EINVAL wins when a list has both problems */
static void cpl10_error_precedence(TEST_STATE)
{
    cpumask_t m = 0;

    assert_int_equal(cpulist_parse("64", 2, &m, NULL), -ERANGE);
    expect_einval("64,x", 4);
    expect_einval("99-", 3);
    expect_einval("1-99,", 5);
    expect_einval("64-1-2", 6);
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
    for (cpumask_t m = 0; m < 1024; m++) {
        round_trip(m);
    }
}

/* CPL-13: random and edge 64-bit masks survive format -> parse */
static void cpl13_round_trip_64_cpus(TEST_STATE)
{
    static const cpumask_t edges[] = {
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
    const cpumask_t m = 0x2d00000000000f0bull; /* "0-1,3,8-11,56,58-59,61" */
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
    assert_int_equal(cpulist_format(0, full, 3), 4); /* "none" into 3 bytes: "no" */
    assert_string_equal(full, "no");
}

/* CPL-16: the inline helpers agree with their definitions at the edges */
static void cpl16_inline_helpers(TEST_STATE)
{
    assert_int_equal(cpumask_weight(0), 0);
    assert_int_equal(cpumask_weight(~0ull), 64);
    assert_int_equal(cpumask_weight(0x8000000000000101ull), 3);
    assert_int_equal(cpumask_first(0), MAX_CPUS);
    assert_int_equal(cpumask_first(1ull << 63), 63);
    assert_int_equal(cpumask_first_n(0), 0);
    assert_int_equal(cpumask_first_n(4), 0xf);
    assert_int_equal(cpumask_first_n(64), ~0ull);
    assert_int_equal(cpumask_first_n(100), ~0ull);
    assert_false(cpumask_has(~0ull, 64));
    assert_true(cpumask_has(1ull << 63, 63));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpl01_single_cpus),          cmocka_unit_test(cpl02_ranges),
        cmocka_unit_test(cpl03_list_round_trip_text), cmocka_unit_test(cpl04_stride),
        cmocka_unit_test(cpl05_union_any_order),      cmocka_unit_test(cpl06_none),
        cmocka_unit_test(cpl07_len_bounds_the_text),  cmocka_unit_test(cpl08_malformed),
        cmocka_unit_test(cpl09_out_of_range),         cmocka_unit_test(cpl10_error_precedence),
        cmocka_unit_test(cpl11_null_and_empty),       cmocka_unit_test(cpl12_round_trip_10_cpus),
        cmocka_unit_test(cpl13_round_trip_64_cpus),   cmocka_unit_test(cpl14_format_examples),
        cmocka_unit_test(cpl15_format_truncation),    cmocka_unit_test(cpl16_inline_helpers),
    };

    return cmocka_run_group_tests_name("cpumask", tests, NULL, NULL);
}
