/* SPDX-License-Identifier: MIT */
/*
 * test_mlock.c — host unit tests of memory locking (kernel/mm/mlock.c) in a real address space
 * over the fake arch: what a range must cover, the flags, and the stack populated in full.
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

#include "kernel/mlock.h"
#include "kernel/page.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"

#define TEST_STATE void **state __attribute__((unused))
#define P          PAGE_SIZE
#define BASE       0x10000000ull

/* ABI-10: mlock needs its whole range mapped (a gap, the end of user space or a wrapping
 * length are ENOMEM), takes MLOCK_ONFAULT only, and a range reaching into the stack populates
 * all of it, as mlockall(MCL_CURRENT) does; MCL_ONFAULT alone, 0 and unknown flags are
 * EINVAL; nothing is left behind */
static void abi10_mlock(TEST_STATE)
{
    struct vm vm;
    fake_reset();
    memset(&vm, 0, sizeof(vm));
    assert_int_equal(vm_init(&vm), 0);
    size_t free0 = page_free_count();
    assert_int_equal(vm_map_region(&vm, BASE, 4 * P, PROT_READ | PROT_WRITE, VMA_MMAP), 0);
    assert_int_equal(vm_map_region(&vm, BASE + 5 * P, 2 * P, PROT_NONE, VMA_MMAP), 0);
    assert_int_equal(vm_mlock(&vm, BASE + 100, 4 * P - 100, 0, true), 0);
    assert_int_equal(vm_mlock(&vm, BASE, 5 * P, 0, true), -ENOMEM); /* the gap at page 4 */
    assert_int_equal(vm_mlock(&vm, BASE + 5 * P, 2 * P, 1 /* MLOCK_ONFAULT */, true), 0);
    assert_int_equal(vm_mlock(&vm, BASE, P, 2, true), -EINVAL);
    assert_int_equal(vm_mlock(&vm, BASE, 0, 0, true), 0);
    assert_int_equal(vm_mlock(&vm, ~0ull - P, 2 * P, 0, true), -ENOMEM);
    assert_int_equal(vm_mlock(&vm, BASE, 4 * P, 0, false), 0);
    uint64_t top = USER_STACK_TOP, size = 64 * P;
    assert_int_equal(vm_map_stack(&vm, top, size, 2 * P), 0);
    size_t before = vm.pages;
    assert_int_equal(vm_mlock(&vm, top - P, P, 0, true), 0);
    assert_int_equal(vm.pages, before + 62); /* all of the stack now */
    assert_int_equal(vm_mlockall(&vm, 0), -EINVAL);
    assert_int_equal(vm_mlockall(&vm, 4 /* MCL_ONFAULT */), -EINVAL);
    assert_int_equal(vm_mlockall(&vm, 8), -EINVAL);
    assert_int_equal(vm_mlockall(&vm, 1 | 2), 0);
    assert_int_equal(vm.pages, before + 62);
    vm_destroy(&vm);
    assert_int_equal(page_free_count(), free0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(abi10_mlock),
    };
    if (!fixture_pages_and_cpu0(1024)) {
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
