/* SPDX-License-Identifier: MIT */
/*
 * test_cpio.c — host unit tests of cpio_find (kernel/fs/initrd.c): looking up user programs in
 * a cpio "newc" archive.
 *
 * CPIO-0n search an archive written by the real cpio tool (`cpio -o -H newc`, as the
 * Makefile builds the initrd) from files this test creates in a temporary directory.
 * CPIO-1n use archives built here byte by byte, where every offset is known, to check
 * corrupted headers and truncation at every length.  The archive handed to cpio_find always
 * sits in a heap block of exactly its length, so ASan reports any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel/initrd.h"
#include "uapi/zt_errno.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define HDR_LEN 110

/* A copy of `len` bytes of `src` in a block of exactly that size (caller frees). */
static unsigned char *exact_copy(const void *src, size_t len)
{
    unsigned char *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, src, len);
    return p;
}

/* ------------------------------------------------------------------ archives from cpio(1) */

static const char hello_text[] = "#!/bin/hello: not really a program\n";
static const char x_text[] = "xx";

static unsigned char *tool_archive;
static size_t tool_len;

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

/* Group setup: bin/, bin/x, bin/hello, bin/xy, bin/empty, etc/, etc/motd, archived with
 * cpio -o -H newc. */
static int tool_setup(void **state)
{
    char dir[] = "/tmp/zt-cpio-XXXXXX";
    char cmd[1024], path[512];
    if (!mkdtemp(dir)) {
        return -1;
    }
    snprintf(path, sizeof(path), "%s/bin", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/etc", dir);
    mkdir(path, 0755);
    write_file(dir, "bin/x", x_text);
    write_file(dir, "bin/hello", hello_text);
    write_file(dir, "bin/xy", "a longer name");
    write_file(dir, "bin/empty", "");
    write_file(dir, "etc/motd", "welcome\n");
    snprintf(cmd, sizeof(cmd),
             "cd %s && printf 'bin\\nbin/x\\nbin/hello\\nbin/xy\\nbin/empty\\netc\\netc/motd\\n' "
             "| cpio -o -H newc --quiet > archive.cpio",
             dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cpio failed: %s\n", cmd);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/archive.cpio", dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return -1;
    }
    static unsigned char buf[65536];
    tool_len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    tool_archive = exact_copy(buf, tool_len);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 && tool_len > 0 ? 0 : -1;
}

static int tool_teardown(void **state)
{
    free(tool_archive);
    return 0;
}

static int find(const void *blob, size_t len, const char *path, const void **data, size_t *size)
{
    *data = (const void *)1;
    *size = 12345;
    return cpio_find(blob, len, path, data, size);
}

static void expect_file(const char *path, const char *text)
{
    const void *data;
    size_t size;
    int r = find(tool_archive, tool_len, path, &data, &size);
    if (r != 0) {
        fail_msg("cpio_find(\"%s\") = %d, want 0", path, r);
    }
    assert_int_equal(size, strlen(text));
    assert_true((const unsigned char *)data >= tool_archive &&
                (const unsigned char *)data + size <= tool_archive + tool_len);
    assert_memory_equal(data, text, size);
}

static void expect_missing(const char *path)
{
    const void *data;
    size_t size;
    int r = find(tool_archive, tool_len, path, &data, &size);
    if (r != -ENOENT) {
        fail_msg("cpio_find(\"%s\") = %d, want -ENOENT", path, r);
    }
    assert_ptr_equal(data, (const void *)1); /* outputs untouched */
    assert_int_equal(size, 12345);
}

/* CPIO-01: /bin/x and bin/x both find the file, with its exact bytes */
static void cpio01_find_both_spellings(TEST_STATE)
{
    expect_file("/bin/x", x_text);
    expect_file("bin/x", x_text);
    expect_file("//bin/x", x_text);
    expect_file("/bin/hello", hello_text);
    expect_file("etc/motd", "welcome\n");
}

/* CPIO-02: an empty file is found with size 0 */
static void cpio02_empty_file(TEST_STATE)
{
    expect_file("/bin/empty", "");
}

/* CPIO-03: names match whole, not by prefix */
static void cpio03_whole_names(TEST_STATE)
{
    expect_file("bin/xy", "a longer name");
    expect_missing("bin/");
    expect_missing("bin/x/");
    expect_missing("bin/xyz");
    expect_missing("in/x");
    expect_missing("bin/X");
}

/* CPIO-04: a missing name is -ENOENT, and so are "", "/" and the trailer's own name */
static void cpio04_missing(TEST_STATE)
{
    expect_missing("/bin/nothere");
    expect_missing("");
    expect_missing("/");
    expect_missing("TRAILER!!!");
}

/* ------------------------------------------------------------------ hand-built archives */

struct builder {
    unsigned char buf[4096];
    size_t len;
};

static void put_hex(unsigned char *p, uint32_t v, bool upper)
{
    char tmp[9];
    snprintf(tmp, sizeof(tmp), upper ? "%08X" : "%08x", v);
    memcpy(p, tmp, 8);
}

static void pad4(struct builder *b)
{
    while (b->len % 4) {
        b->buf[b->len++] = 0;
    }
}

/* Append a member; returns the offset of its header and sets *data_off to its data's. */
static size_t add_member(struct builder *b, const char *name, const void *data, uint32_t size,
                         bool upper, size_t *data_off)
{
    size_t off = b->len;
    uint32_t namesize = (uint32_t)strlen(name) + 1;
    uint32_t fields[13] = {1, 0100644, 0, 0, 1, 0, size, 0, 0, 0, 0, namesize, 0};
    memcpy(b->buf + off, "070701", 6);
    for (unsigned i = 0; i < 13; i++) {
        put_hex(b->buf + off + 6 + 8 * i, fields[i], upper);
    }
    b->len += HDR_LEN;
    memcpy(b->buf + b->len, name, namesize);
    b->len += namesize;
    pad4(b);
    *data_off = b->len;
    memcpy(b->buf + b->len, data, size);
    b->len += size;
    pad4(b);
    return off;
}

/* The archive: bin/a (5 bytes), bin/x (13 bytes), trailer.  Offsets of interest: */
static struct builder arc;
static size_t a_data, a_end, x_hdr, x_data, x_end, trailer_off;

static void build_archive(bool upper)
{
    size_t unused;
    memset(&arc, 0, sizeof(arc));
    assert_int_equal(add_member(&arc, "bin/a", "hello", 5, upper, &a_data), 0);
    assert_int_equal(a_data, 116); /* 110 + "bin/a\0", already a multiple of 4 */
    a_end = a_data + 5;
    x_hdr = add_member(&arc, "bin/x", "the x program", 13, upper, &x_data);
    assert_int_equal(x_hdr, 124); /* a_end rounded up to 4 */
    assert_int_equal(x_data, x_hdr + 116);
    x_end = x_data + 13;
    trailer_off = add_member(&arc, "TRAILER!!!", "", 0, upper, &unused);
    assert_int_equal(trailer_off, 256);           /* x_end rounded up to 4 */
    assert_int_equal(arc.len, trailer_off + 124); /* 110 + "TRAILER!!!\0", rounded up */
}

static int arc_find(const unsigned char *bytes, size_t len, const char *path, size_t *data_off,
                    size_t *size)
{
    unsigned char *blob = exact_copy(bytes, len);
    const void *data = NULL;
    *size = 0;
    int r = cpio_find(blob, len, path, &data, size);
    *data_off = r == 0 ? (size_t)((const unsigned char *)data - blob) : 0;
    free(blob);
    return r;
}

/* CPIO-10: the hand-built archive is read correctly (and its layout is what the tests assume) */
static void cpio10_hand_built(TEST_STATE)
{
    size_t off, size;
    build_archive(false);
    assert_int_equal(arc_find(arc.buf, arc.len, "/bin/a", &off, &size), 0);
    assert_int_equal(off, a_data);
    assert_int_equal(size, 5);
    assert_int_equal(arc_find(arc.buf, arc.len, "/bin/x", &off, &size), 0);
    assert_int_equal(off, x_data);
    assert_int_equal(size, 13);
    assert_int_equal(arc_find(arc.buf, arc.len, "bin/b", &off, &size), -ENOENT);
}

/* CPIO-11: upper-case hex digits in the header are accepted */
static void cpio11_upper_case_hex(TEST_STATE)
{
    size_t off, size;
    build_archive(true);
    assert_int_equal(arc_find(arc.buf, arc.len, "bin/x", &off, &size), 0);
    assert_int_equal(off, x_data);
    assert_int_equal(size, 13);
}

/* The first member's header, corrupted by `edit`, makes every lookup -EINVAL. */
static void expect_first_header_invalid(void (*edit)(unsigned char *hdr), const char *what)
{
    build_archive(false);
    edit(arc.buf);
    static const char *const paths[] = {"bin/a", "bin/x", "bin/missing"};
    for (unsigned i = 0; i < 3; i++) {
        size_t off, size;
        int r = arc_find(arc.buf, arc.len, paths[i], &off, &size);
        if (r != -EINVAL) {
            fail_msg("%s: cpio_find(\"%s\") = %d, want -EINVAL", what, paths[i], r);
        }
    }
}

static void bad_magic(unsigned char *h)
{
    memcpy(h, "070707", 6); /* the old binary-compatible ASCII format */
}

static void crc_magic(unsigned char *h)
{
    memcpy(h, "070702", 6); /* newc with checksums: not what the kernel reads */
}

static void filesize_not_hex(unsigned char *h)
{
    h[54 + 3] = 'g';
}

static void filesize_space(unsigned char *h)
{
    h[54] = ' ';
}

static void namesize_not_hex(unsigned char *h)
{
    h[94 + 7] = 'x';
}

static void namesize_zero(unsigned char *h)
{
    memcpy(h + 94, "00000000", 8);
}

static void namesize_huge(unsigned char *h)
{
    memcpy(h + 94, "ffffffff", 8);
}

static void namesize_past_end(unsigned char *h)
{
    put_hex(h + 94, (uint32_t)arc.len - HDR_LEN + 1, false);
}

static void name_not_terminated(unsigned char *h)
{
    memcpy(h + 94, "00000005", 8); /* "bin/a" without its NUL */
}

static void filesize_past_end(unsigned char *h)
{
    put_hex(h + 54, (uint32_t)(arc.len - a_data + 1), false);
}

static void filesize_huge(unsigned char *h)
{
    memcpy(h + 54, "FFFFFFFF", 8);
}

/* CPIO-12: bad magic, non-hex or impossible sizes, an unterminated name: -EINVAL */
static void cpio12_corrupted_header(TEST_STATE)
{
    expect_first_header_invalid(bad_magic, "magic 070707");
    expect_first_header_invalid(crc_magic, "magic 070702");
    expect_first_header_invalid(filesize_not_hex, "filesize with 'g'");
    expect_first_header_invalid(filesize_space, "filesize with ' '");
    expect_first_header_invalid(namesize_not_hex, "namesize with 'x'");
    expect_first_header_invalid(namesize_zero, "namesize 0");
    expect_first_header_invalid(namesize_huge, "namesize ffffffff");
    expect_first_header_invalid(namesize_past_end, "namesize past the end");
    expect_first_header_invalid(name_not_terminated, "name without NUL");
    expect_first_header_invalid(filesize_past_end, "filesize past the end");
    expect_first_header_invalid(filesize_huge, "filesize FFFFFFFF");
}

/* CPIO-13: a corrupted second member: the first is still found, the rest is -EINVAL */
static void cpio13_corruption_after_match(TEST_STATE)
{
    size_t off, size;
    build_archive(false);
    assert_memory_equal(arc.buf + x_hdr, "070701", 6);
    arc.buf[x_hdr + 5] = '2';
    assert_int_equal(arc_find(arc.buf, arc.len, "bin/a", &off, &size), 0);
    assert_int_equal(off, a_data);
    assert_int_equal(arc_find(arc.buf, arc.len, "bin/x", &off, &size), -EINVAL);
    assert_int_equal(arc_find(arc.buf, arc.len, "nothere", &off, &size), -EINVAL);
}

/* CPIO-14: without a trailer the archive is malformed: -EINVAL, not -ENOENT */
static void cpio14_missing_trailer(TEST_STATE)
{
    size_t off, size;
    build_archive(false);
    assert_int_equal(arc_find(arc.buf, trailer_off, "bin/x", &off, &size), 0);
    assert_int_equal(arc_find(arc.buf, trailer_off, "nothere", &off, &size), -EINVAL);
    assert_int_equal(arc_find(arc.buf, 0, "nothere", &off, &size), -EINVAL);
}

/* CPIO-15: truncation at every length: a member is found exactly when all its data is
 * there, a missing name is -ENOENT exactly when the whole trailer is there, else -EINVAL */
static void cpio15_truncation_every_length(TEST_STATE)
{
    build_archive(false);
    for (size_t len = 0; len <= arc.len; len++) {
        size_t off, size;
        int r = arc_find(arc.buf, len, "bin/a", &off, &size);
        int want = len >= a_end ? 0 : -EINVAL;
        if (r != want || (r == 0 && (off != a_data || size != 5))) {
            fail_msg("length %zu: bin/a gave %d (offset %zu, size %zu), want %d", len, r, off, size,
                     want);
        }
        r = arc_find(arc.buf, len, "/bin/x", &off, &size);
        want = len >= x_end ? 0 : -EINVAL;
        if (r != want || (r == 0 && (off != x_data || size != 13))) {
            fail_msg("length %zu: bin/x gave %d (offset %zu, size %zu), want %d", len, r, off, size,
                     want);
        }
        r = arc_find(arc.buf, len, "bin/missing", &off, &size);
        want = len >= trailer_off + 124 ? -ENOENT : -EINVAL;
        if (r != want) {
            fail_msg("length %zu: bin/missing gave %d, want %d", len, r, want);
        }
    }
}

/* CPIO-16: the real tool's archive truncated at every length never reads out of bounds,
 * and a found file always lies inside the given bytes */
static void cpio16_tool_archive_truncation(TEST_STATE)
{
    static const char *const paths[] = {"bin/x", "etc/motd", "missing"};
    for (size_t len = 0; len <= tool_len; len++) {
        for (unsigned i = 0; i < 3; i++) {
            size_t off, size;
            int r = arc_find(tool_archive, len, paths[i], &off, &size);
            if (r != 0 && r != -ENOENT && r != -EINVAL) {
                fail_msg("length %zu: %s gave %d", len, paths[i], r);
            }
            if (r == 0 && (off > len || size > len - off)) {
                fail_msg("length %zu: %s found outside the archive", len, paths[i]);
            }
            if (len == tool_len && r != (i < 2 ? 0 : -ENOENT)) {
                fail_msg("whole archive: %s gave %d", paths[i], r);
            }
        }
    }
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* CPIO-17: a fixed-seed random-corruption sweep never crashes; results stay in range */
static void cpio17_random_corruption(TEST_STATE)
{
    static const char digits[] = "0123456789abcdefABCDEF \xff";
    build_archive(false);
    for (unsigned iter = 0; iter < 20000; iter++) {
        unsigned char buf[sizeof(arc.buf)];
        memcpy(buf, arc.buf, arc.len);
        size_t len = arc.len;
        unsigned flips = 1 + (unsigned)(rng() % 4);
        for (unsigned f = 0; f < flips; f++) {
            size_t pos = (size_t)(rng() % len);
            buf[pos] = rng() % 2 ? (unsigned char)digits[rng() % (sizeof(digits) - 1)]
                                 : (unsigned char)rng();
        }
        if (rng() % 4 == 0) {
            len = (size_t)(rng() % (len + 1));
        }
        size_t off, size;
        int r = arc_find(buf, len, rng() % 2 ? "bin/x" : "bin/missing", &off, &size);
        if (r != 0 && r != -ENOENT && r != -EINVAL) {
            fail_msg("iteration %u: cpio_find returned %d", iter, r);
        }
        if (r == 0 && (off > len || size > len - off)) {
            fail_msg("iteration %u: data [%zu, +%zu) outside %zu bytes", iter, off, size, len);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpio01_find_both_spellings),
        cmocka_unit_test(cpio02_empty_file),
        cmocka_unit_test(cpio03_whole_names),
        cmocka_unit_test(cpio04_missing),
        cmocka_unit_test(cpio10_hand_built),
        cmocka_unit_test(cpio11_upper_case_hex),
        cmocka_unit_test(cpio12_corrupted_header),
        cmocka_unit_test(cpio13_corruption_after_match),
        cmocka_unit_test(cpio14_missing_trailer),
        cmocka_unit_test(cpio15_truncation_every_length),
        cmocka_unit_test(cpio16_tool_archive_truncation),
        cmocka_unit_test(cpio17_random_corruption),
    };
    return cmocka_run_group_tests(tests, tool_setup, tool_teardown);
}
