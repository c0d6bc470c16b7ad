/* SPDX-License-Identifier: MIT */
/*
 * test_checks.c — host unit tests that the checked invariants of include/kernel/panic.h and
 * spinlock.h hold and fire: spinlock owner tracking, the held-lock count, and ASSERTs at the
 * top of functions that state a contract ("proc_lock held", "IRQs masked").
 *
 * CHK-0n: owner tracking and counts.  CHK-1n: a broken contract panics (in a child process,
 * fixture_panics), naming the condition, file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/signal.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))

static spinlock_t a = SPINLOCK_INIT, b = SPINLOCK_INIT;

static void on_cpu(unsigned id)
{
    cpus[id].id = id;
    cpus[id].arch.id = id;
    fake_cpu = &cpus[id];
}

/* CHK-01: a lock is held by the CPU that took it, and by no other, until released */
static void chk01_owner(TEST_STATE)
{
    on_cpu(0);
    assert_false(spin_is_held(&a));
    spin_lock(&a);
    assert_true(spin_is_held(&a));
    on_cpu(1);
    assert_false(spin_is_held(&a)); /* CPU 1 does not hold it */
    on_cpu(0);
    spin_unlock(&a);
    assert_false(spin_is_held(&a));
    assert_false(spin_is_locked(&a));
}

/* CHK-02: each CPU's count of held locks follows nesting, per CPU */
static void chk02_count(TEST_STATE)
{
    on_cpu(0);
    assert_int_equal(spin_held_count(), 0);
    spin_lock(&a);
    spin_lock(&b);
    assert_int_equal(spin_held_count(), 2);
    on_cpu(1);
    assert_int_equal(spin_held_count(), 0);
    on_cpu(0);
    spin_unlock(&b);
    assert_int_equal(spin_held_count(), 1);
    spin_unlock(&a);
    assert_int_equal(spin_held_count(), 0);
}

static void expect_panic(void (*fn)(void), const char *needle)
{
    char why[400];
    if (!fixture_panics(fn, needle, why, sizeof(why))) {
        fail_msg("expected a panic mentioning \"%s\": %s", needle, why);
    }
}

static void lock_twice(void)
{
    on_cpu(0);
    spin_lock(&a);
    spin_lock(&a); /* would spin forever: the check panics first */
}

static void unlock_foreign(void)
{
    on_cpu(0);
    spin_lock(&a);
    on_cpu(1);
    spin_unlock(&a);
}

static void unlock_free(void)
{
    on_cpu(0);
    spin_unlock(&b);
}

/* CHK-10: taking a lock this CPU holds, releasing one it does not hold, panic */
static void chk10_lock_misuse_panics(TEST_STATE)
{
    expect_panic(lock_twice, "spin_lock: CPU 0 already holds lock");
    expect_panic(unlock_foreign, "spin_unlock: CPU 1 releases lock");
    expect_panic(unlock_free, "spin_unlock: CPU 0 releases lock");
}

static struct process proc;

static void send_without_proc_lock(void)
{
    on_cpu(0);
    signal_send_proc_locked(&proc, SIGUSR1, &signal_info_kernel);
}

static void find_without_proc_lock(void)
{
    on_cpu(0);
    task_find_locked(1);
}

/* CHK-11: a function whose contract is "proc_lock held" panics when called without it */
static void chk11_lock_contract_panics(TEST_STATE)
{
    expect_panic(send_without_proc_lock, "assertion failed: spin_is_held(&proc_lock)");
    expect_panic(find_without_proc_lock, "kernel/proc/task.c");
}

static void reprogram_with_irqs_on(void)
{
    on_cpu(0);
    fake_irq_masked = 0;
    timer_reprogram();
}

/* CHK-12: timer_reprogram with IRQs enabled (its contract: masked) panics */
static void chk12_irq_contract_panics(TEST_STATE)
{
    expect_panic(reprogram_with_irqs_on, "assertion failed: !arch_irqs_enabled() (kernel/timer.c");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chk01_owner),
        cmocka_unit_test(chk02_count),
        cmocka_unit_test(chk10_lock_misuse_panics),
        cmocka_unit_test(chk11_lock_contract_panics),
        cmocka_unit_test(chk12_irq_contract_panics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
