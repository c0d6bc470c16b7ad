/* SPDX-License-Identifier: MIT */
/*
 * test_synth.c — host unit tests of the synthetic files (kernel/fs/synth.c, procfs.c,
 * sysfs.c): the page-by-page text buffer, names as numbers, and the tree /proc and /sys make
 * in the one vfs_init builds: lookups that exist only while an id is taken, listings and
 * their positions, and no page or inode left behind.
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

#include "kernel/pid.h"
#include "kernel/synth.h"
#include "kernel/vfs.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

static int group_setup(void **state)
{
    if (!fixture_pages_and_cpu0(512)) {
        return -1;
    }
    vfs_init();
    return vfs_root ? 0 : -1;
}

/* PROC-10: text across page boundaries reads back the same at any offset; a text too long
 * for SBUF_MAX_PAGES pages stops there with -EFBIG; every page is given back */
static void proc10_sbuf(TEST_STATE)
{
    size_t free0 = page_free_count();
    struct sbuf b;
    sbuf_init(&b);
    char line[64], back[200];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(line, sizeof(line), "line %d of a text longer than a page\n", i);
        sbuf_put(&b, line, (size_t)n);
    }
    sbuf_printf(&b, "%s %d\n", "end", 42);
    assert_int_equal(b.err, 0);
    assert_true(b.len > 2 * PAGE_SIZE);
    for (size_t off = PAGE_SIZE - 50; off < PAGE_SIZE + 50; off += 7) {
        size_t n = sbuf_read(&b, off, back, sizeof(back));
        assert_int_equal(n, sizeof(back));
        char *start = strstr(back, "line ");
        assert_non_null(start); /* the text runs on across the boundary */
    }
    assert_int_equal(sbuf_read(&b, b.len - 7, back, sizeof(back)), 7);
    assert_memory_equal(back, "end 42\n", 7);
    assert_int_equal(sbuf_read(&b, b.len, back, sizeof(back)), 0);
    sbuf_free(&b);
    assert_int_equal(page_free_count(), free0);
    static char big[PAGE_SIZE];
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < SBUF_MAX_PAGES + 3; i++) {
        sbuf_put(&b, big, sizeof(big));
    }
    assert_int_equal(b.err, -EFBIG);
    assert_int_equal(b.len, (size_t)SBUF_MAX_PAGES * PAGE_SIZE);
    sbuf_free(&b);
    assert_int_equal(page_free_count(), free0);
}

/* PROC-11: a name is a number only in its plain decimal form */
static void proc11_numbers(TEST_STATE)
{
    assert_int_equal(synth_number("0"), 0);
    assert_int_equal(synth_number("123"), 123);
    assert_int_equal(synth_number("32767"), 32767);
    const char *bad[] = {"", "01", "-1", "+1", "1a", "a1", " 1", "99999999999", "self"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(synth_number(bad[i]), -1);
    }
}

static int lookup(const char *path, struct inode **out)
{
    return vfs_lookup(vfs_root, path, false, out);
}

/* PROC-12: /proc/ID exists exactly while the id is taken; its cached directory goes when the
 * id is freed (pid.c tells procfs, whose work item prunes it; or the next lookup does); fixed
 * files and /sys are there from boot */
static void proc12_ids(TEST_STATE)
{
    struct inode *ino;
    char path[32];
    assert_int_equal(lookup("/proc/sys/kernel/ostype", &ino), 0);
    assert_true(S_ISREG(ino->mode) && ino->kind == INODE_SYNTH);
    inode_put(ino);
    assert_int_equal(lookup("/sys/devices/system/cpu/cpu0/online", &ino), 0);
    inode_put(ino);
    assert_int_equal(lookup("/sys/devices/system/cpu/cpu1", &ino), -ENOENT); /* 1 CPU */
    int id = pid_alloc();
    assert_true(id > 0);
    snprintf(path, sizeof(path), "/proc/%d/status", id);
    assert_int_equal(lookup(path, &ino), 0);
    struct inode *dir = ino->parent;
    assert_int_equal(ino->synth_a, id);
    inode_get(dir);
    inode_put(ino);
    assert_int_equal(lookup("/proc/0", &ino), -ENOENT);
    assert_int_equal(lookup("/proc/007", &ino), -ENOENT);
    pid_free(id); /* pid.c tells procfs, which queues the pruning */
    assert_true(dir->in_tree);
    while (work_run_next()) {
    }
    assert_false(dir->in_tree); /* pruned, children and all, with no lookup */
    assert_true(list_empty(&dir->children));
    inode_put(dir);
    id = pid_alloc();
    snprintf(path, sizeof(path), "/proc/%d/stat", id);
    assert_int_equal(lookup(path, &ino), 0);
    dir = ino->parent;
    inode_get(dir);
    inode_put(ino);
    pid_free(id);
    assert_int_equal(lookup(path, &ino), -ENOENT); /* a lookup prunes it too */
    assert_false(dir->in_tree);
    inode_put(dir);
    while (work_run_next()) {
    }
    assert_int_equal(lookup("/proc/sys/kernel", &ino), 0);
    assert_int_equal(vfs_mkdir(ino, "x", 0755), -EROFS);
    inode_put(ino);
}

/* Every entry of the directory at path through its readdir, from position pos. */
static int list_from(const char *path, uint64_t pos, char names[][VFS_NAME_MAX + 1], int max,
                     uint64_t *positions)
{
    struct inode *dir;
    struct file *f;
    assert_int_equal(lookup(path, &dir), 0);
    assert_int_equal(vfs_open_inode(dir, O_RDONLY | O_DIRECTORY, &f), 0);
    inode_put(dir);
    assert_non_null(f->ops->readdir);
    int n = 0;
    uint64_t ino;
    unsigned type;
    while (n < max && f->ops->readdir(f, &pos, names[n], &ino, &type)) {
        positions[n++] = pos;
    }
    file_put(f);
    return n;
}

/* PROC-13: a listing is "." and "..", then its entries in order, and a position handed back
 * (telldir/seekdir) continues where it was; writes are refused */
static void proc13_listing(TEST_STATE)
{
    char names[64][VFS_NAME_MAX + 1];
    uint64_t pos[64];
    size_t free0 = page_free_count();
    int n = list_from("/sys/devices/system/cpu", 0, names, 64, pos);
    assert_true(n >= 9);
    assert_string_equal(names[0], ".");
    assert_string_equal(names[1], "..");
    bool online = false, cpu0 = false;
    for (int i = 2; i < n; i++) {
        online |= strcmp(names[i], "online") == 0;
        cpu0 |= strcmp(names[i], "cpu0") == 0;
    }
    assert_true(online && cpu0);
    char again[64][VFS_NAME_MAX + 1];
    uint64_t pos2[64];
    int m = list_from("/sys/devices/system/cpu", pos[3], again, 64, pos2);
    assert_int_equal(m, n - 4);
    assert_string_equal(again[0], names[4]);
    int k = list_from("/proc", 0, names, 64, pos);
    bool self = false;
    for (int i = 0; i < k; i++) {
        self |= strcmp(names[i], "self") == 0;
    }
    assert_true(self);
    struct inode *ino;
    struct file *f;
    assert_int_equal(lookup("/proc/cpuinfo", &ino), 0);
    assert_int_equal(vfs_open_inode(ino, O_WRONLY, &f), -EACCES);
    assert_int_equal(vfs_open_inode(ino, O_RDONLY | O_DIRECTORY, &f), -ENOTDIR);
    inode_put(ino);
    assert_int_equal(lookup("/proc", &ino), 0);
    assert_int_equal(vfs_open_inode(ino, O_RDWR, &f), -EISDIR);
    inode_put(ino);
    assert_int_equal(page_free_count(), free0); /* the listings' pages are back */
}

/* PROC-14: a file's text is what its show writes: the sysfs sets from the live masks */
static void proc14_texts(TEST_STATE)
{
    struct inode *ino;
    struct sbuf b;
    char text[64] = "";
    assert_int_equal(lookup("/sys/devices/system/cpu/online", &ino), 0);
    sbuf_init(&b);
    assert_int_equal(ino->synth->show(ino, &b), 0);
    sbuf_read(&b, 0, text, sizeof(text) - 1);
    assert_string_equal(text, "0\n");
    sbuf_free(&b);
    inode_put(ino);
    assert_int_equal(lookup("/sys/devices/system/cpu/nohz_full", &ino), 0);
    sbuf_init(&b);
    assert_int_equal(ino->synth->show(ino, &b), 0);
    memset(text, 0, sizeof(text));
    sbuf_read(&b, 0, text, sizeof(text) - 1);
    assert_string_equal(text, "(null)\n"); /* no dataplane CPU: Linux's text */
    sbuf_free(&b);
    inode_put(ino);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(proc10_sbuf),  cmocka_unit_test(proc11_numbers),
        cmocka_unit_test(proc12_ids),   cmocka_unit_test(proc13_listing),
        cmocka_unit_test(proc14_texts),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
