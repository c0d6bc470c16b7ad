/* SPDX-License-Identifier: MIT */
/*
 * test_fd.c — host unit tests of descriptor tables (kernel/fs/fd.c): the copy fork and execve
 * make, and closing every descriptor, wherever the descriptors sit in the table.
 *
 * FD-01: a copy holds the same files at the same numbers, each referenced once more, up to
 * the highest descriptor; FD-02: the copy for execve leaves the close-on-exec ones out, and
 * closing them in place does the same; FD-03: freeing a table with more descriptors than one
 * batch puts every file once.  Files are file_alloc'd without an inode or operations, so
 * their reference counts are the whole story.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/fd.h"
#include "kernel/vfs.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

#define NFILES 40

static struct file *files[NFILES];
static const int where[NFILES] = {0,   1,   2,   3,   5,   8,   13,  21,  34,  55,
                                  63,  64,  65,  89,  100, 120, 127, 128, 129, 144,
                                  150, 160, 170, 180, 190, 200, 210, 220, 230, 233,
                                  240, 241, 242, 243, 244, 245, 250, 253, 254, 255};

static int group_setup(void **state)
{
    return fixture_pages_and_cpu0(64) ? 0 : -1;
}

/* A table with files[i] at descriptor where[i]; every third one close-on-exec. */
static struct fdtable *filled(void)
{
    struct fdtable *t = fdtable_new(0, false);
    assert_non_null(t);
    for (int i = 0; i < NFILES; i++) {
        files[i] = file_alloc(0, 0, 0, 0);
        assert_non_null(files[i]);
        fdtable_set(t, where[i], files[i]);
        if (i % 3 == 0) {
            t->cloexec[where[i] / 64] |= 1ull << (where[i] % 64);
        }
    }
    assert_int_equal(t->end, 256);
    return t;
}

/* FD-01: fork's copy: every file at its number, one reference more each */
static void fd01_copy_keeps_every_descriptor(TEST_STATE)
{
    struct fdtable *t = filled();
    struct fdtable *c = fdtable_new(t, false);
    assert_non_null(c);
    for (int i = 0; i < NFILES; i++) {
        assert_ptr_equal(c->fd[where[i]], files[i]);
        assert_int_equal(files[i]->refs, 2);
    }
    fdtable_free(c);
    for (int i = 0; i < NFILES; i++) {
        assert_int_equal(files[i]->refs, 1);
    }
    fdtable_free(t); /* the last references: the files are freed */
}

/* FD-02: execve's copy leaves out the close-on-exec descriptors; closing them in place too */
static void fd02_exec_drops_cloexec(TEST_STATE)
{
    struct fdtable *t = filled();
    for (int i = 0; i < NFILES; i++) {
        file_get(files[i]); /* keep them alive to look at */
    }
    struct fdtable *c = fdtable_new(t, true);
    assert_non_null(c);
    for (int i = 0; i < NFILES; i++) {
        assert_ptr_equal(c->fd[where[i]], i % 3 ? files[i] : NULL);
    }
    fdtable_close_on_exec(t);
    for (int i = 0; i < NFILES; i++) {
        assert_ptr_equal(t->fd[where[i]], i % 3 ? files[i] : NULL);
        assert_int_equal(files[i]->refs, i % 3 ? 3 : 1);
    }
    fdtable_free(c);
    fdtable_free(t);
    for (int i = 0; i < NFILES; i++) {
        assert_int_equal(files[i]->refs, 1);
        file_put(files[i]);
    }
}

/* FD-03: freeing puts each file exactly once, past several batches */
static void fd03_free_puts_each_once(TEST_STATE)
{
    struct fdtable *t = filled();
    for (int i = 0; i < NFILES; i++) {
        file_get(files[i]);
    }
    fdtable_free(t);
    for (int i = 0; i < NFILES; i++) {
        assert_int_equal(files[i]->refs, 1);
        file_put(files[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fd01_copy_keeps_every_descriptor),
        cmocka_unit_test(fd02_exec_drops_cloexec),
        cmocka_unit_test(fd03_free_puts_each_once),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
