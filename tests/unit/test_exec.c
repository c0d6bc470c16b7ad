/* SPDX-License-Identifier: MIT */
/*
 * test_exec.c — host unit tests of the Linux initial stack (kernel/proc/exec.c): what a C
 * library's start-up code reads at SP, and the argument limits.
 *
 * Each test loads a minimal static ELF (one R+X segment holding the headers and the entry
 * point) into a fresh address space on the fake arch, then reads the stack back through
 * copy_from_user.  EXEC-0n: the layout; EXEC-1n: limits and bad arguments.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/exec.h"
#include "kernel/page.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "fixture.h"
#include "unit.h"

#define BASE 0x400000ull

static struct vm vm;
static unsigned char file[sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + 16];
static size_t free0;

static void make_elf(void)
{
    Elf64_Ehdr eh = {.e_type = ET_EXEC,
                     .e_machine = EM_AARCH64,
                     .e_version = EV_CURRENT,
                     .e_entry = BASE + sizeof(file) - 16,
                     .e_phoff = sizeof(Elf64_Ehdr),
                     .e_ehsize = sizeof(Elf64_Ehdr),
                     .e_phentsize = sizeof(Elf64_Phdr),
                     .e_phnum = 1};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    Elf64_Phdr ph = {.p_type = PT_LOAD,
                     .p_flags = PF_R | PF_X,
                     .p_vaddr = BASE,
                     .p_filesz = sizeof(file),
                     .p_memsz = sizeof(file),
                     .p_align = 4096};
    memcpy(file, &eh, sizeof(eh));
    memcpy(file + sizeof(eh), &ph, sizeof(ph));
}

static int group_setup(void **state)
{
    make_elf();
    return fixture_pages_and_cpu0(1024) ? 0 : -1;
}

static int test_setup(void **state)
{
    fake_reset();
    free0 = page_free_count();
    memset(&vm, 0, sizeof(vm));
    return vm_init(&vm);
}

static int test_teardown(void **state)
{
    vm_destroy(&vm);
    return page_free_count() == free0 ? 0 : -1;
}

static uint64_t word(uint64_t at)
{
    uint64_t v;
    assert_int_equal(copy_from_user(&vm, &v, at, sizeof(v)), 0);
    return v;
}

static void user_string_is(uint64_t at, const char *want)
{
    char buf[64];
    assert_true(strncpy_from_user(&vm, buf, at, sizeof(buf)) >= 0);
    assert_string_equal(buf, want);
}

/* The value of auxv key `key` (the vector starts at `at`); fails if absent. */
static uint64_t aux(uint64_t at, uint64_t key)
{
    for (;; at += 16) {
        uint64_t k = word(at);
        if (k == key) {
            return word(at + 8);
        }
        assert_true(k != AT_NULL);
    }
}

/* EXEC-01: argc, argv, envp and the auxiliary vector at a 16-byte aligned SP */
static void exec01_layout(TEST_STATE)
{
    char *const argv[] = {"prog", "a", "bc", 0}, *const envp[] = {"X=1", 0};
    struct exec_strv a = {0, 0, argv}, e = {0, 0, envp};
    struct exec_start st;
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "/bin/prog", &a, &e, &st), 0);
    assert_int_equal(st.sp % 16, 0);
    assert_true(st.sp < USER_STACK_TOP && st.sp > USER_STACK_TOP - USER_STACK_SIZE);
    assert_int_equal(st.pc, BASE + sizeof(file) - 16);
    assert_int_equal(word(st.sp), 3);
    for (int i = 0; i < 3; i++) {
        user_string_is(word(st.sp + 8 + 8 * (uint64_t)i), argv[i]);
    }
    assert_int_equal(word(st.sp + 32), 0);
    user_string_is(word(st.sp + 40), "X=1");
    assert_int_equal(word(st.sp + 48), 0);
    uint64_t av = st.sp + 56;
    assert_int_equal(aux(av, AT_PHDR), BASE + sizeof(Elf64_Ehdr));
    assert_int_equal(aux(av, AT_PHNUM), 1);
    assert_int_equal(aux(av, AT_PHENT), sizeof(Elf64_Phdr));
    assert_int_equal(aux(av, AT_PAGESZ), PAGE_SIZE);
    assert_int_equal(aux(av, AT_ENTRY), st.pc);
    assert_int_equal(aux(av, AT_UID), 0);
    assert_int_equal(aux(av, AT_SECURE), 0);
    assert_int_equal(aux(av, AT_MINSIGSTKSZ), ARCH_SIGFRAME_BYTES);
    user_string_is(aux(av, AT_EXECFN), "/bin/prog");
    user_string_is(aux(av, AT_PLATFORM), "aarch64");
    uint64_t rnd = aux(av, AT_RANDOM);
    assert_true(rnd > st.sp && rnd + 16 <= USER_STACK_TOP);
    assert_int_equal(aux(av, AT_HWCAP), arch_user_hwcap(1));
}

/* EXEC-02: no arguments at all: argc 0 and both arrays just their NULL */
static void exec02_empty(TEST_STATE)
{
    struct exec_strv none = {0, 0, 0};
    struct exec_start st;
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &none, &none, &st), 0);
    assert_int_equal(word(st.sp), 0);
    assert_int_equal(word(st.sp + 8), 0);
    assert_int_equal(word(st.sp + 16), 0);
    assert_int_equal(word(st.sp + 24), AT_PHDR);
}

/* EXEC-03: the layout is the same whether the initial stack is assembled in the kernel and
 * written at once (small) or written piece by piece (larger than the kernel's buffer, and
 * across a page boundary): argument lengths that take the stack from below to above the
 * kernel's 1,024-byte buffer, and one of 5,000 bytes */
static void exec03_layout_any_size(TEST_STATE)
{
    static char arg[5001];
    for (size_t len = 500; len <= 5000; len = len < 700 ? len + 10 : 5000 + (len == 5000)) {
        vm_destroy(&vm);
        assert_int_equal(vm_init(&vm), 0);
        memset(arg, 'a' + (int)(len % 26), len);
        arg[len] = 0;
        char *const argv[] = {"prog", arg, "end", 0}, *const envp[] = {"Y=2", 0};
        struct exec_strv a = {0, 0, argv}, e = {0, 0, envp};
        struct exec_start st;
        assert_int_equal(exec_load_image(&vm, file, sizeof(file), "/bin/p", &a, &e, &st), 0);
        assert_int_equal(st.sp % 16, 0);
        assert_int_equal(word(st.sp), 3);
        user_string_is(word(st.sp + 8), "prog");
        uint64_t at = word(st.sp + 16);
        for (size_t i = 0; i < len; i += 1 + i / 7) { /* the long one, sampled */
            char c;
            assert_int_equal(copy_from_user(&vm, &c, at + i, 1), 0);
            assert_int_equal(c, arg[i]);
        }
        char nul = 1;
        assert_int_equal(copy_from_user(&vm, &nul, at + len, 1), 0);
        assert_int_equal(nul, 0);
        user_string_is(word(st.sp + 24), "end");
        assert_int_equal(word(st.sp + 32), 0);
        user_string_is(word(st.sp + 40), "Y=2");
        assert_int_equal(word(st.sp + 48), 0);
        uint64_t av = st.sp + 56;
        assert_int_equal(aux(av, AT_ENTRY), st.pc);
        user_string_is(aux(av, AT_EXECFN), "/bin/p");
        user_string_is(aux(av, AT_PLATFORM), "aarch64");
        assert_true(aux(av, AT_RANDOM) > st.sp);
    }
}

/* EXEC-10: more than EXEC_ARG_COUNT strings, or more than EXEC_ARG_BYTES, is E2BIG */
static void exec10_limits(TEST_STATE)
{
    static char *many[EXEC_ARG_COUNT + 2];
    static char big[EXEC_ARG_BYTES + 1]; /* with its NUL, one byte past the limit */
    struct exec_start st;
    for (int i = 0; i <= EXEC_ARG_COUNT; i++) {
        many[i] = "x";
    }
    struct exec_strv a = {0, 0, many}, none = {0, 0, 0};
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &a, &none, &st), -E2BIG);
    memset(big, 'b', EXEC_ARG_BYTES);
    char *const one[] = {big, 0};
    struct exec_strv b = {0, 0, one};
    vm_destroy(&vm);
    assert_int_equal(vm_init(&vm), 0);
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &none, &b, &st), -E2BIG);
}

/* EXEC-11: user arrays with a bad pointer, or a pointer to an unmapped string, are EFAULT */
static void exec11_bad_user_arrays(TEST_STATE)
{
    struct vm src;
    struct exec_start st;
    assert_int_equal(vm_init(&src), 0);
    const uint64_t at = 0x10000000ull;
    assert_int_equal(vm_map_region(&src, at, PAGE_SIZE, PROT_READ | PROT_WRITE, VMA_MMAP), 0);
    uint64_t arr[3] = {at + 64, 0xdead0000ull, 0};
    assert_int_equal(vm_write_initial(&src, at, arr, sizeof(arr)), 0);
    assert_int_equal(vm_write_initial(&src, at + 64, "ok", 3), 0);
    struct exec_strv a = {&src, at, 0}, none = {0, 0, 0}, wild = {&src, 0x20000000ull, 0};
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &a, &none, &st), -EFAULT);
    vm_destroy(&vm);
    assert_int_equal(vm_init(&vm), 0);
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &none, &wild, &st), -EFAULT);
    arr[1] = 0; /* now a valid one-string array */
    assert_int_equal(vm_write_initial(&src, at, arr, sizeof(arr)), 0);
    vm_destroy(&vm);
    assert_int_equal(vm_init(&vm), 0);
    assert_int_equal(exec_load_image(&vm, file, sizeof(file), "p", &a, &none, &st), 0);
    user_string_is(word(st.sp + 8), "ok");
    vm_destroy(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(exec01_layout, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(exec02_empty, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(exec03_layout_any_size, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(exec10_limits, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(exec11_bad_user_arrays, test_setup, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
