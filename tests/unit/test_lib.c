/* SPDX-License-Identifier: MIT */
/*
 * test_lib.c — host unit tests of the kernel's formatted output (kernel/lib/lib.c): kvsnprintf
 * and ksnprintf, compared with the host C library's snprintf for every conversion, flag,
 * width, length modifier and precision the kernel documents (include/kernel/lib.h), and
 * kstrlcpy.  IDs: LIB-nn.
 *
 * Each comparison formats the same arguments with both and requires the same bytes and the
 * same return value; a failure prints the format, both outputs and both lengths.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "kernel/lib.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define BUF 256

static char kbuf[BUF], hbuf[BUF];

static void compare(int line, const char *fmt, int kn, int hn)
{
    size_t n = (size_t)(hn < BUF ? hn : BUF - 1);
    if (kn != hn || memcmp(kbuf, hbuf, n + 1) != 0) {
        fail_msg("line %d: format \"%s\": kernel \"%s\" (%d), libc \"%s\" (%d)", line, fmt, kbuf,
                 kn, hbuf, hn);
    }
}

/* Same output and length as the C library, into a full-size buffer. */
#define SAME(fmt, ...)                                                                             \
    do {                                                                                           \
        memset(kbuf, 0x55, sizeof(kbuf));                                                          \
        memset(hbuf, 0x55, sizeof(hbuf));                                                          \
        int kn_ = ksnprintf(kbuf, sizeof(kbuf), fmt, __VA_ARGS__);                                 \
        int hn_ = snprintf(hbuf, sizeof(hbuf), fmt, __VA_ARGS__);                                  \
        compare(__LINE__, fmt, kn_, hn_);                                                          \
    } while (0)

/* LIB-01: plain text and %% */
static void lib01_text_and_percent(TEST_STATE)
{
    SAME("%s", "");
    SAME("plain text%s", "");
    SAME("100%%%s", "");
    SAME("%%d%%%s%%", "x");
    SAME("%d%%", 50);
}

/* LIB-02: %d and %i over the int range */
static void lib02_signed_int(TEST_STATE)
{
    static const int vals[] = {0, 1, -1, 9, 10, -10, 42, 123456789, INT_MAX, INT_MIN, -2147483647};
    for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        SAME("%d", vals[i]);
        SAME("%i", vals[i]);
        SAME("[%d|%i]", vals[i], -vals[i] / 2);
    }
}

/* LIB-03: %u %x %X over the unsigned range, negative ints converted as unsigned */
static void lib03_unsigned_hex(TEST_STATE)
{
    static const unsigned vals[] = {0, 1, 9, 10, 15, 16, 255, 0xdeadbeef, 0x80000000, UINT_MAX};
    for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        SAME("%u", vals[i]);
        SAME("%x", vals[i]);
        SAME("%X", vals[i]);
    }
    SAME("%u %x %X", (unsigned)-1, (unsigned)-42, (unsigned)INT_MIN);
}

/* LIB-04: the l, ll and z modifiers, including INT64_MIN and the unsigned maxima */
static void lib04_length_modifiers(TEST_STATE)
{
    SAME("%ld", LONG_MIN);
    SAME("%ld", LONG_MAX);
    SAME("%li", -1L);
    SAME("%lu", ULONG_MAX);
    SAME("%lx", ULONG_MAX);
    SAME("%lX", 0xabcdef0123456789ul);
    SAME("%lld", (long long)INT64_MIN);
    SAME("%lld", (long long)INT64_MAX);
    SAME("%lli", -1234567890123ll);
    SAME("%llu", (unsigned long long)UINT64_MAX);
    SAME("%llx", (unsigned long long)UINT64_MAX);
    SAME("%llX", 0x8000000000000000ull);
    SAME("%zu", (size_t)SIZE_MAX);
    SAME("%zx", (size_t)0x123456789abcull);
    SAME("%zd", (ssize_t)-5);
    SAME("%zd", (ssize_t)SSIZE_MAX);
    SAME("%ld %d %lld %u", LONG_MIN, -7, (long long)INT64_MIN, 7u);
}

/* LIB-05: widths, and the '-' and '0' flags */
static void lib05_width_and_flags(TEST_STATE)
{
    SAME("[%5d]", 42);
    SAME("[%-5d]", 42);
    SAME("[%05d]", 42);
    SAME("[%5d]", -42);
    SAME("[%-5d]", -42);
    SAME("[%05d]", -42);
    SAME("[%1d]", 12345);
    SAME("[%0d]", 7);
    SAME("[%08x]", 0xbeefu);
    SAME("[%-8x]", 0xbeefu);
    SAME("[%08X]", 0xbeefu);
    SAME("[%10u]", 4000000000u);
    SAME("[%010u]", 12u);
    SAME("[%-10u]", 12u);
    SAME("[%20lld]", (long long)INT64_MIN);
    SAME("[%025lld]", (long long)INT64_MIN);
    SAME("[%-25lld]", (long long)INT64_MIN);
    SAME("[%016lx]", 0xfffful);
    SAME("[%3c]", 'x');
    SAME("[%-3c]", 'x');
    SAME("[%10s]", "abc");
    SAME("[%-10s]", "abc");
    SAME("[%2s]", "abcdef");
    SAME("[%5s]", "");
    SAME("[%-4d|%4d|%04d]", 1, 2, 3);
    SAME("[%99d]", 1);
}

/* LIB-06: precision on %s cuts the string and never reads past it */
static void lib06_string_precision(TEST_STATE)
{
    SAME("[%.3s]", "abcdef");
    SAME("[%.0s]", "abcdef");
    SAME("[%.10s]", "abc");
    SAME("[%10.3s]", "abcdef");
    SAME("[%-10.3s]", "abcdef");
    SAME("[%.6s]", "abcdef");
    SAME("[%.s]", "abc"); /* "." alone is precision 0 */
    /* an array without a NUL: only the precision's bytes may be read (ASan watches) */
    char *raw = malloc(3);
    assert_non_null(raw);
    memcpy(raw, "xyz", 3);
    SAME("[%.3s]", raw);
    SAME("[%.2s]", raw);
    free(raw);
}

/* LIB-07: %s with NULL prints "(null)", as the C library does */
static void lib07_null_string(TEST_STATE)
{
    const char *volatile nothing = NULL;
    assert_int_equal(ksnprintf(kbuf, sizeof(kbuf), "[%s]", nothing), 8);
    assert_string_equal(kbuf, "[(null)]");
    assert_int_equal(ksnprintf(kbuf, sizeof(kbuf), "[%8s]", nothing), 10);
    assert_string_equal(kbuf, "[  (null)]");
}

/* LIB-08: %c, including a NUL character counted in the length */
static void lib08_chars(TEST_STATE)
{
    SAME("%c", 'A');
    SAME("%c%c%c", 'a', ' ', '~');
    SAME("%c", 255);
    SAME("[%c]", 0);
    assert_int_equal(ksnprintf(kbuf, sizeof(kbuf), "a%cb", 0), 3);
    assert_memory_equal(kbuf, "a\0b", 4);
}

/* LIB-09: %p prints 0x and lowercase hex, like the C library for non-NULL pointers */
static void lib09_pointers(TEST_STATE)
{
    void *p = (void *)(uintptr_t)0xdeadbeef1234ull;
    SAME("%p", p);
    SAME("%p", (void *)(uintptr_t)0x1);
    SAME("%p", (void *)UINTPTR_MAX);
    SAME("[%-20p]", p);
    SAME("[%p %p]", p, (void *)kbuf);
}

/* LIB-10: a width on %p pads before the "0x", like the C library */
static void lib10_pointer_width(TEST_STATE)
{
    void *p = (void *)(uintptr_t)0xdeadbeef1234ull;
    SAME("[%20p]", p);
    SAME("[%15p]", (void *)(uintptr_t)0x1);
}

/* LIB-11: truncation at every buffer size: the same prefix, always NUL-terminated, nothing
 * written past the size, and the full length returned */
static void lib11_truncation(TEST_STATE)
{
    static const char fmt[] = "id=%d name=%-8s hex=%08lx end%%";
    char full[BUF];
    int len = snprintf(full, sizeof(full), fmt, -1234, "zt", 0xabcul);
    assert_true(len > 20);
    assert_int_equal(ksnprintf(NULL, 0, fmt, -1234, "zt", 0xabcul), len);
    for (size_t size = 0; size <= (size_t)len + 2; size++) {
        char k[BUF + 8], h[BUF + 8];
        memset(k, 0x55, sizeof(k));
        memset(h, 0x55, sizeof(h));
        int kn = ksnprintf(k, size, fmt, -1234, "zt", 0xabcul);
        int hn = snprintf(h, size, fmt, -1234, "zt", 0xabcul);
        if (kn != hn || memcmp(k, h, sizeof(k)) != 0) {
            fail_msg("size %zu: kernel returned %d \"%.*s\", libc %d \"%.*s\"", size, kn,
                     (int)(size ? size - 1 : 0), k, hn, (int)(size ? size - 1 : 0), h);
        }
        size_t nul = size - 1 < (size_t)len ? size - 1 : (size_t)len;
        if (size && k[nul] != 0) {
            fail_msg("size %zu: no NUL at %zu", size, nul);
        }
        if ((unsigned char)k[size] != 0x55 && size > 0 && size - 1 < (size_t)len) {
            fail_msg("size %zu: byte %zu written past the size", size, size);
        }
    }
}

/* kvsnprintf through a variadic wrapper, as printk uses it. */
static int kformat(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int kformat(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* LIB-12: kvsnprintf with a va_list gives what vsnprintf gives */
static void lib12_kvsnprintf(TEST_STATE)
{
    memset(kbuf, 0x55, sizeof(kbuf));
    memset(hbuf, 0x55, sizeof(hbuf));
    int kn = kformat(kbuf, sizeof(kbuf), "%s:%d:%5u:%-3c|%lld|%zx|%.2s", "file", -3, 77u, 'q',
                     (long long)INT64_MIN, (size_t)4096, "xyz");
    int hn = snprintf(hbuf, sizeof(hbuf), "%s:%d:%5u:%-3c|%lld|%zx|%.2s", "file", -3, 77u, 'q',
                      (long long)INT64_MIN, (size_t)4096, "xyz");
    compare(__LINE__, "(mixed)", kn, hn);
    assert_int_equal(kformat(kbuf, 4, "%d", 123456), 6);
    assert_string_equal(kbuf, "123");
}

/* LIB-13: many conversions in one format keep their arguments in step */
static void lib13_many_arguments(TEST_STATE)
{
    SAME("%d %u %x %X %c %s %ld %lu %lld %llu %zu %p %i %%", -1, 2u, 3u, 0xabu, 'z', "str", -5L,
         6ul, -7ll, 8ull, (size_t)9, (void *)kbuf, 10);
}

/* HRD-27 (issue 20): %pE prints a string user space chose with every control character,
 * DEL and byte above 0x7f as \xHH and '\' doubled, printable text as is.  (Task names went to
 * the console raw through %s.) */
static void hrd27_escaped_strings(TEST_STATE)
{
    char out[64];
    assert_int_equal(ksnprintf(out, sizeof(out), "[%pE]", "plain name"), 12);
    assert_string_equal(out, "[plain name]");
    ksnprintf(out, sizeof(out), "(%pE)", "ev\x1b[2J\x07il\nX");
    assert_string_equal(out, "(ev\\x1b[2J\\x07il\\x0aX)");
    ksnprintf(out, sizeof(out), "%pE|%pE", "a\\b\x7f\xff", (const char *)NULL);
    assert_string_equal(out, "a\\\\b\\x7f\\xff|(null)");
    ksnprintf(out, sizeof(out), "%d %pE %s", 7, "\t", "x");
    assert_string_equal(out, "7 \\x09 x");
}

/* LIB-14: kstrlcpy copies at most size-1 bytes, always terminates, returns strlen(src) */
static void lib14_kstrlcpy(TEST_STATE)
{
    char d[8];
    memset(d, 'x', sizeof(d));
    assert_int_equal(kstrlcpy(d, "hello", sizeof(d)), 5);
    assert_string_equal(d, "hello");
    memset(d, 'x', sizeof(d));
    assert_int_equal(kstrlcpy(d, "truncated!", sizeof(d)), 10);
    assert_string_equal(d, "truncat");
    memset(d, 'x', sizeof(d));
    assert_int_equal(kstrlcpy(d, "abc", 1), 3);
    assert_int_equal(d[0], 0);
    assert_int_equal(d[1], 'x');
    assert_int_equal(kstrlcpy(d, "abc", 0), 3);
    assert_int_equal(d[0], 0);
    assert_int_equal(kstrlcpy(d, "", sizeof(d)), 0);
    assert_string_equal(d, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lib01_text_and_percent), cmocka_unit_test(lib02_signed_int),
        cmocka_unit_test(lib03_unsigned_hex),     cmocka_unit_test(lib04_length_modifiers),
        cmocka_unit_test(lib05_width_and_flags),  cmocka_unit_test(lib06_string_precision),
        cmocka_unit_test(lib07_null_string),      cmocka_unit_test(lib08_chars),
        cmocka_unit_test(lib09_pointers),         cmocka_unit_test(lib10_pointer_width),
        cmocka_unit_test(lib11_truncation),       cmocka_unit_test(lib12_kvsnprintf),
        cmocka_unit_test(lib13_many_arguments),   cmocka_unit_test(lib14_kstrlcpy),
        cmocka_unit_test(hrd27_escaped_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
