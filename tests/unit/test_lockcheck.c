/* SPDX-License-Identifier: MIT */
/*
 * test_lockcheck.c — host unit tests of kernel/lib/lockcheck.c: the lock-order rule and the
 * per-CPU record of held ranked locks that the checked kernel keeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/lockcheck.h"
#include "kernel/spinlock.h"
#include "fake.h"
#include "unit.h"

static spinlock_t proc = SPINLOCK_INIT_RANK(LOCK_PROC), waitq = SPINLOCK_INIT_RANK(LOCK_WAITQ);
static spinlock_t rq = SPINLOCK_INIT_RANK(LOCK_RQ), page = SPINLOCK_INIT_RANK(LOCK_PAGE);
static spinlock_t tq[2] = {SPINLOCK_INIT_RANK(LOCK_TIMERQ), SPINLOCK_INIT_RANK(LOCK_TIMERQ)};
static spinlock_t plain = SPINLOCK_INIT;

/* LCK-01: higher ranks after lower ones; equal ranks in address order; never backwards */
static void lck01_rule(TEST_STATE)
{
    assert_true(lockcheck_may_take(&proc, &waitq));
    assert_true(lockcheck_may_take(&waitq, &rq));
    assert_true(lockcheck_may_take(&proc, &page));
    assert_false(lockcheck_may_take(&rq, &waitq));
    assert_false(lockcheck_may_take(&page, &proc));
    assert_true(lockcheck_may_take(&tq[0], &tq[1]));
    assert_false(lockcheck_may_take(&tq[1], &tq[0]));
    assert_false(lockcheck_may_take(&rq, &rq));
}

/* LCK-02: taking locks in the documented order and releasing them in any order leaves
 * nothing recorded; unranked locks are not recorded at all */
static void lck02_record(TEST_STATE)
{
    cpus[0].id = 0;
    fake_cpu = &cpus[0];
    unsigned long f = spin_lock_irqsave(&proc);
    spin_lock(&waitq);
    spin_lock(&plain);
    spin_lock(&rq);
    spin_lock(&tq[0]);
    spin_lock(&tq[1]);
    assert_int_equal(lockcheck_held(0), 5);
    spin_unlock(&waitq); /* not the last one taken */
    spin_unlock(&tq[1]);
    spin_unlock(&plain);
    assert_int_equal(lockcheck_held(0), 3);
    spin_lock(&page);
    spin_unlock(&page);
    spin_unlock(&tq[0]);
    spin_unlock(&rq);
    spin_unlock_irqrestore(&proc, f);
    assert_int_equal(lockcheck_held(0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lck01_rule),
        cmocka_unit_test(lck02_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
