/* SPDX-License-Identifier: MIT */
/*
 * test_initrd.c — host unit tests of the archive a boot loader hands over (kernel/fs/initrd.c,
 * the layering in dir.c): the fake arch's boot info points at an archive built here, byte by
 * byte, in a heap block of exactly its length (ASan sees any read past it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/initrd.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

extern struct arch_boot_info fake_boot_info;

/* An archive being built: newc members, then the trailer. */
struct archive {
    char buf[8192];
    size_t len;
};

static void member(struct archive *a, const char *name, unsigned mode, const char *data)
{
    size_t n = strlen(name) + 1, size = data ? strlen(data) : 0;
    a->len += (size_t)sprintf(
        a->buf + a->len, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 1u, mode, 0u,
        0u, 1u, 0u, (unsigned)size, 0u, 0u, 0u, 0u, (unsigned)n, 0u);
    memcpy(a->buf + a->len, name, n);
    a->len = (a->len + n + 3) & ~(size_t)3;
    memcpy(a->buf + a->len, data ? data : "", size);
    a->len = (a->len + size + 3) & ~(size_t)3;
}

/* The archive in a block of exactly its length, handed over as the boot loader's. */
static char *hand_over(struct archive *a, bool trailer)
{
    if (trailer) {
        member(a, "TRAILER!!!", 0, 0);
    }
    char *copy = malloc(a->len);
    assert_non_null(copy);
    memcpy(copy, a->buf, a->len);
    fake_boot_info.initrd_pa = (paddr_t)(uintptr_t)copy;
    fake_boot_info.initrd_size = a->len;
    return copy;
}

static struct {
    char names[16][64];
    int n;
    bool all_over;
} seen;

static void record(const char *name, unsigned mode, const void *data, size_t size, bool over)
{
    if (seen.n < 16) {
        snprintf(seen.names[seen.n], sizeof(seen.names[0]), "%s", name);
    }
    seen.n++;
    seen.all_over &= over;
}

/* IRD-03: the boot loader's members are walked after the built-in ones, marked as layered
 * over them; a compressed archive is not walked; a malformed one is walked up to the damage */
static void ird03_walk(TEST_STATE)
{
    struct archive a = {.len = 0};
    member(&a, "./bin", 040755, 0);
    member(&a, "./bin/x", 0100755, "one");
    member(&a, "etc/y", 0100644, "two");
    char *blob = hand_over(&a, true);
    memset(&seen, 0, sizeof(seen));
    seen.all_over = true;
    initrd_walk(record);
    assert_int_equal(seen.n, 3);
    assert_true(seen.all_over);
    assert_string_equal(seen.names[1], "bin/x"); /* "./" dropped */
    assert_int_equal(initrd_bytes(), a.len);     /* the fake arch has no built-in archive */
    blob[0] = 0x1f, blob[1] = (char)0x8b;        /* gzip's magic */
    memset(&seen, 0, sizeof(seen));
    initrd_walk(record);
    assert_int_equal(seen.n, 0);
    free(blob);
    a.len = 0;
    member(&a, "a", 0100644, "x");
    member(&a, "b", 0100644, "y");
    blob = hand_over(&a, false);
    fake_boot_info.initrd_size -= 4; /* the second member without its data, no trailer */
    memset(&seen, 0, sizeof(seen));
    initrd_walk(record);
    assert_int_equal(seen.n, 1);
    fake_boot_info.initrd_size = 0;
    free(blob);
}

static long read_file(const char *path, char *out, size_t n)
{
    struct inode *ino;
    const void *data;
    uint64_t size;
    int r = vfs_lookup(vfs_root, path, true, &ino);
    if (r) {
        return r;
    }
    r = vfs_file_bytes(ino, &data, &size);
    inode_put(ino);
    if (r) {
        return r;
    }
    memcpy(out, data, size < n ? size : n);
    return (long)size;
}

/* IRD-04: the tree from a boot loader's archive: a later member of a path replaces the earlier
 * file, directories merge, a file cannot replace a directory, links are links, and the files
 * are read in place from the archive */
static void ird04_tree(TEST_STATE)
{
    struct archive a = {.len = 0};
    member(&a, "usr/bin/p", 0100755, "first");
    member(&a, "usr/bin/p", 0100755, "second");
    member(&a, "usr/lib", 040755, 0);
    member(&a, "usr/lib/q", 0100644, "qq");
    member(&a, "usr", 0100644, "a file over a directory");
    member(&a, "usr/bin/l", 0120777, "p");
    static char *blob; /* the tree reads it for good, as the kernel does the boot loader's */
    blob = hand_over(&a, true);
    assert_non_null(fixture_pages_and_cpu0(512));
    vfs_init();
    char buf[32] = "";
    assert_int_equal(read_file("/usr/bin/p", buf, sizeof(buf)), 6);
    assert_memory_equal(buf, "second", 6);
    assert_int_equal(read_file("/usr/bin/l", buf, sizeof(buf)), 6); /* through the link */
    assert_int_equal(read_file("/usr/lib/q", buf, sizeof(buf)), 2);
    struct inode *ino;
    assert_int_equal(vfs_lookup(vfs_root, "/usr", true, &ino), 0);
    assert_true(S_ISDIR(ino->mode));
    inode_put(ino);
    assert_int_equal(vfs_lookup(vfs_root, "/usr/lib/q", true, &ino), 0);
    const void *data;
    uint64_t size;
    assert_int_equal(vfs_file_bytes(ino, &data, &size), 0);
    assert_true((const char *)data >= blob && (const char *)data < blob + a.len); /* in place */
    inode_put(ino);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ird03_walk),
        cmocka_unit_test(ird04_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
