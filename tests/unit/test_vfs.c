/* SPDX-License-Identifier: MIT */
/*
 * test_vfs.c — host unit tests of the file tree (kernel/fs/): path lookup, /tmp changes,
 * symbolic links, and the RAM file system's page accounting.
 *
 * The tree is the one vfs_init builds (the fake arch's initrd is empty: /tmp, /dev, /proc and
 * /sys only).  Every test leaves /tmp empty and checks that no page leaked.
 * VFS-0n: lookup; VFS-1n: changes under /tmp; VFS-2n: links; VFS-3n: tmpfs pages.
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

#include "kernel/kmem.h"
#include "kernel/page.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

#define POOL_PAGES (TMPFS_MAX_PAGES + 600)

static size_t free0;

static void vfs10_create(void **state);
static void vfs11_directories(void **state);
static void vfs12_readdir_while_removing(void **state);
static void vfs13_rename_into_removed_directory(void **state);
static void vfs20_links(void **state);
static void vfs30_tmpfs_pages(void **state);

/* The tree, and one run of every test first: the kernel object allocator keeps the pages it
 * takes for inodes, files and tmpfs tables, so the leak checks start from there. */
static int group_setup(void **state)
{
    if (!fixture_pages_and_cpu0(POOL_PAGES)) {
        return -1;
    }
    vfs_init();
    if (!vfs_root) {
        return -1;
    }
    vfs10_create(state);
    vfs11_directories(state);
    vfs12_readdir_while_removing(state);
    vfs13_rename_into_removed_directory(state);
    vfs20_links(state);
    vfs30_tmpfs_pages(state);
    return 0;
}

static int test_setup(void **state)
{
    free0 = page_free_count();
    return 0;
}

static int test_teardown(void **state)
{
    if (tmpfs_pages_used() != 0 || page_free_count() != free0) {
        fprintf(stderr, "leak: %u tmpfs pages in use; %zu free pages, %zu at the start\n",
                tmpfs_pages_used(), page_free_count(), free0);
        return -1;
    }
    return 0;
}

/* Look `path` up from the root; the inode's number, or the negative error. */
static long lookup(const char *path, bool follow)
{
    struct inode *ino;
    int r = vfs_lookup(vfs_root, path, follow, &ino);
    if (r) {
        return r;
    }
    long n = (long)ino->ino;
    inode_put(ino);
    return n;
}

static long ino_of(const char *path)
{
    long n = lookup(path, true);
    assert_true(n > 0);
    return n;
}

/* VFS-01: ".", "..", repeated and trailing slashes, and the errors of a bad path */
static void vfs01_lookup(TEST_STATE)
{
    long root = ino_of("/"), tmp = ino_of("/tmp"), null = ino_of("/dev/null");
    assert_int_equal(ino_of("//tmp/"), tmp);
    assert_int_equal(ino_of("/tmp/../dev/./null"), null);
    assert_int_equal(ino_of("/.."), root);
    assert_int_equal(ino_of("/../../tmp"), tmp);
    assert_int_equal(lookup("/dev/null/", true), -ENOTDIR);
    assert_int_equal(lookup("/dev/null/x", true), -ENOTDIR);
    assert_int_equal(lookup("/nope", true), -ENOENT);
    assert_int_equal(lookup("", true), -ENOENT);
    char longname[VFS_NAME_MAX + 3] = "/";
    memset(longname + 1, 'a', VFS_NAME_MAX + 1);
    assert_int_equal(lookup(longname, true), -ENAMETOOLONG);
}

static struct file *create(const char *path, int expect)
{
    struct file *f = 0;
    assert_int_equal(vfs_open(vfs_root, path, O_CREAT | O_WRONLY, 0644, &f), expect);
    return f;
}

/* VFS-10: files are created under /tmp only; O_EXCL; opening directories for writing */
static void vfs10_create(TEST_STATE)
{
    struct file *f = create("/tmp/a", 0), *g;
    file_put(f);
    assert_int_equal(vfs_open(vfs_root, "/tmp/a", O_CREAT | O_EXCL | O_RDWR, 0644, &g), -EEXIST);
    create("/dev/new", -EROFS);
    create("/newfile", -EROFS);
    create("/tmp/missing/a", -ENOENT);
    create("/tmp/", -EISDIR);
    assert_int_equal(vfs_open(vfs_root, "/tmp", O_WRONLY, 0, &g), -EISDIR);
    assert_int_equal(vfs_open(vfs_root, "/tmp/a", O_RDONLY | O_DIRECTORY, 0, &g), -ENOTDIR);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/a", false), 0);
    assert_int_equal(lookup("/tmp/a", true), -ENOENT);
}

/* VFS-11: mkdir, rmdir of a full directory, rename within /tmp, a directory into itself */
static void vfs11_directories(TEST_STATE)
{
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/d", 0755), 0);
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/d", 0755), -EEXIST);
    assert_int_equal(vfs_mkdir(vfs_root, "/dev/d", 0755), -EROFS);
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/d/e", 0755), 0);
    file_put(create("/tmp/d/e/f", 0));
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/d", true), -ENOTEMPTY);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/d/e/f", true), -ENOTDIR);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/d/e", false), -EISDIR);
    assert_int_equal(vfs_rename(vfs_root, "/tmp/d", vfs_root, "/tmp/d/e/x"), -EINVAL);
    assert_int_equal(vfs_rename(vfs_root, "/tmp/d/e/f", vfs_root, "/tmp/g"), 0);
    assert_int_equal(lookup("/tmp/d/e/f", true), -ENOENT);
    assert_true(lookup("/tmp/g", true) > 0);
    assert_int_equal(vfs_rename(vfs_root, "/tmp/g", vfs_root, "/dev/g"), -EROFS);
    char path[VFS_PATH_MAX];
    struct inode *e;
    assert_int_equal(vfs_lookup(vfs_root, "/tmp/d/e", true, &e), 0);
    assert_int_equal(vfs_path_of(e, path, sizeof(path)), 8);
    assert_string_equal(path, "/tmp/d/e");
    assert_int_equal(vfs_path_of(e, path, 5), -ERANGE);
    inode_put(e);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/d/e", true), 0);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/d", true), 0);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/g", false), 0);
}

/* VFS-13: nothing moves into a removed directory: a working directory that was removed can
 * be renamed into no more than created in, so every directory in the tree has a path (a
 * rename into it made a detached directory look in the tree, and getcwd in it walked its
 * parents into NULL: a kernel panic, found by /bin/fuzz) */
static void vfs13_rename_into_removed_directory(TEST_STATE)
{
    struct inode *gone, *x;
    char path[VFS_PATH_MAX];
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/gone", 0755), 0);
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/x", 0755), 0);
    assert_int_equal(vfs_lookup(vfs_root, "/tmp/gone", true, &gone), 0); /* a cwd, say */
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/gone", true), 0);
    assert_int_equal(vfs_mkdir(gone, "y", 0755), -ENOENT);
    assert_int_equal(vfs_rename(vfs_root, "/tmp/x", gone, "x"), -ENOENT);
    assert_int_equal(vfs_lookup(vfs_root, "/tmp/x", true, &x), 0); /* still where it was */
    assert_int_equal(vfs_path_of(x, path, sizeof(path)), 6);
    assert_int_equal(vfs_path_of(gone, path, sizeof(path)), -ENOENT);
    inode_put(x);
    inode_put(gone);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/x", true), 0);
}

/* A symbolic link `name` in /tmp pointing at `target` (made the way the initrd's are). */
static void add_link(const char *name, const char *target)
{
    struct inode *tmp, *l = inode_new(INODE_SYMLINK, S_IFLNK | 0777);
    char *t = kmem_alloc(VFS_PATH_MAX);
    assert_non_null(l);
    assert_non_null(t);
    strcpy(t, target);
    l->data = t;
    l->size = strlen(target);
    assert_int_equal(vfs_lookup(vfs_root, "/tmp", true, &tmp), 0);
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    vfs_link_locked(tmp, l, name);
    spin_unlock_irqrestore(&vfs_lock, flags);
    inode_put(tmp);
}

/* VFS-20: links are followed in the middle of a path and, when asked, at its end; relative
 * targets from the link's directory; loops end with ELOOP */
/* VFS-12: entries removed while a directory is being read do not make the reader skip
 * others (`rm -r` reads a batch, removes it, reads on): every entry is seen exactly once,
 * and a position handed out stays good.  The positions were list indices before, so the
 * second batch started past entries that had moved down. */
static void vfs12_readdir_while_removing(TEST_STATE)
{
    enum { N = 12 };
    char path[32], name[VFS_NAME_MAX + 1];
    bool seen[N] = {false};
    uint64_t ino, pos = 0;
    unsigned type;
    assert_int_equal(vfs_mkdir(vfs_root, "/tmp/r", 0755), 0);
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof(path), "/tmp/r/f%d", i);
        file_put(create(path, 0));
    }
    struct inode *dir;
    assert_int_equal(vfs_lookup(vfs_root, "/tmp/r", true, &dir), 0);
    int got = 0;
    for (;;) { /* batches of 3: read them, then remove them */
        char batch[3][VFS_NAME_MAX + 1];
        int n = 0;
        while (n < 3 && vfs_dir_entry(dir, &pos, name, &ino, &type)) {
            if (strcmp(name, ".") && strcmp(name, "..")) {
                strcpy(batch[n++], name);
            }
        }
        if (n == 0) {
            break;
        }
        for (int i = 0; i < n; i++) {
            int k = atoi(batch[i] + 1);
            assert_false(seen[k]);
            seen[k] = true;
            got++;
            snprintf(path, sizeof(path), "/tmp/r/%s", batch[i]);
            assert_int_equal(vfs_unlink(vfs_root, path, false), 0);
        }
    }
    assert_int_equal(got, N);
    inode_put(dir);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/r", true), 0);
}

static void vfs20_links(TEST_STATE)
{
    add_link("todev", "../dev");
    add_link("tonull", "/tmp/todev/null");
    add_link("loop1", "loop2");
    add_link("loop2", "loop1");
    long null = ino_of("/dev/null");
    assert_int_equal(ino_of("/tmp/todev/null"), null);
    assert_int_equal(ino_of("/tmp/tonull"), null);
    assert_true(lookup("/tmp/tonull", false) != null); /* the link itself */
    assert_int_equal(lookup("/tmp/loop1", true), -ELOOP);
    assert_true(lookup("/tmp/loop1", false) > 0);
    struct inode *l;
    char buf[VFS_PATH_MAX];
    assert_int_equal(vfs_lookup(vfs_root, "/tmp/todev", false, &l), 0);
    assert_int_equal(vfs_readlink(l, buf, sizeof(buf)), 6);
    assert_memory_equal(buf, "../dev", 6);
    inode_put(l);
    const char *names[] = {"/tmp/todev", "/tmp/tonull", "/tmp/loop1", "/tmp/loop2"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(vfs_unlink(vfs_root, names[i], false), 0);
    }
}

static struct inode *new_tmp_file(const char *path)
{
    struct file *f = create(path, 0);
    struct inode *ino = f->inode;
    inode_get(ino);
    file_put(f);
    return ino;
}

/* VFS-30: growing a file takes pages up to the bound of /tmp, then ENOSPC; shrinking and
 * removing give every page back (also when the removed file was still open) */
static void vfs30_tmpfs_pages(TEST_STATE)
{
    struct inode *a = new_tmp_file("/tmp/a");
    unsigned long flags = spin_lock_irqsave(&vfs_lock);
    assert_int_equal(tmpfs_truncate_locked(a, 10 * PAGE_SIZE + 1), 0);
    assert_int_equal(tmpfs_pages_used(), 11);
    assert_int_equal(tmpfs_truncate_locked(a, (uint64_t)TMPFS_MAX_PAGES * PAGE_SIZE), 0);
    assert_int_equal(tmpfs_pages_used(), TMPFS_MAX_PAGES);
    spin_unlock_irqrestore(&vfs_lock, flags);
    struct inode *b = new_tmp_file("/tmp/b");
    flags = spin_lock_irqsave(&vfs_lock);
    assert_int_equal(tmpfs_truncate_locked(b, PAGE_SIZE), -ENOSPC);
    assert_int_equal(tmpfs_truncate_locked(a, 3), 0);
    assert_int_equal(tmpfs_pages_used(), 1);
    assert_int_equal(tmpfs_truncate_locked(b, 5 * PAGE_SIZE), 0);
    assert_int_equal(tmpfs_pages_used(), 6);
    spin_unlock_irqrestore(&vfs_lock, flags);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/a", false), 0);
    assert_int_equal(tmpfs_pages_used(), 6); /* still referenced: still there */
    inode_put(a);
    assert_int_equal(tmpfs_pages_used(), 5);
    assert_int_equal(vfs_unlink(vfs_root, "/tmp/b", false), 0);
    inode_put(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(vfs01_lookup, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(vfs10_create, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(vfs11_directories, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(vfs12_readdir_while_removing, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(vfs13_rename_into_removed_directory, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(vfs20_links, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(vfs30_tmpfs_pages, test_setup, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
