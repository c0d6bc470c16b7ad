/* SPDX-License-Identifier: MIT */
/*
 * test_pid.c — host unit tests of kernel/proc/pid.c: ids handed out in order, reused once freed
 * after a wrap (issue 9: ids were never reused), never twice at once, init's 1 kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/pid.h"
#include "uapi/zt_errno.h"
#include "unit.h"

static struct pid_map m;

/* PID-01: ids start at 1 and go up; freeing one does not make it the next id */
static void pid01_increasing(TEST_STATE)
{
    pid_map_init(&m);
    for (int i = 1; i <= 100; i++) {
        assert_int_equal(pid_map_alloc(&m), i);
    }
    pid_map_free(&m, 50);
    assert_false(pid_map_is_taken(&m, 50));
    assert_int_equal(pid_map_alloc(&m), 101);
    assert_int_equal(m.nused, 100);
}

/* PID-02: at the top the search wraps to the lowest free id above 1 */
static void pid02_wraps_and_reuses(TEST_STATE)
{
    pid_map_init(&m);
    for (int i = 1; i < PID_MAX; i++) {
        assert_int_equal(pid_map_alloc(&m), i);
    }
    assert_int_equal(pid_map_alloc(&m), -EAGAIN); /* every id taken */
    pid_map_free(&m, 1);
    pid_map_free(&m, 7);
    pid_map_free(&m, 30000);
    assert_int_equal(pid_map_alloc(&m), 7); /* 1 stays init's */
    assert_int_equal(pid_map_alloc(&m), 30000);
    assert_int_equal(pid_map_alloc(&m), -EAGAIN);
}

/* PID-03: random alloc/free never hands out a taken id, and the count matches */
static void pid03_random_never_twice(TEST_STATE)
{
    static int live[5000];
    int n = 0;
    uint64_t x = 88172645463325252ull;
    pid_map_init(&m);
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (n < 5000 && (n == 0 || x % 3)) {
            int id = pid_map_alloc(&m);
            assert_true(id > 0 && id < PID_MAX);
            for (int i = 0; i < n; i++) {
                assert_int_not_equal(live[i], id);
            }
            live[n++] = id;
        } else {
            int i = (int)(x % (uint64_t)n);
            pid_map_free(&m, live[i]);
            live[i] = live[--n];
        }
        assert_int_equal(m.nused, (unsigned)n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pid01_increasing),
        cmocka_unit_test(pid02_wraps_and_reuses),
        cmocka_unit_test(pid03_random_never_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
