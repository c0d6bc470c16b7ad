/* SPDX-License-Identifier: MIT */
/*
 * utest.h — the test runner shared by usertests and hardtests (xv6's usertests shape).
 *
 *   PROG                run every test; ends with `ALL TESTS PASSED` (exit 0) or
 *                       `SOME TESTS FAILED: name1 name2 ...` (exit 1)
 *   PROG NAME...        run only those tests
 *   PROG -l             list the tests
 *   PROG -t NAME PPID   (internal) run one test in this process
 *   PROG -h HELPER ...  (internal) a helper a test spawns: faults, sleepers, exits
 *
 * Each test runs in its own process (`PROG -t NAME`), so a test that crashes or hangs takes
 * only itself down: the runner kills it after its time limit.  The test process prints
 * exactly one line, `test NAME: OK` or `test NAME: FAILED (what, with the numbers seen)`,
 * and exits 0 or 1; the runner prints the line itself only when the process died without
 * printing (killed by a signal, timed out).  Free pages and kernel stacks (zt_meminfo) are
 * counted before and after the whole suite: a difference fails the pseudo-test `leaks`.
 */
#ifndef ZT_USER_UTEST_H
#define ZT_USER_UTEST_H

#include "zt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UT_PAGE 4096ul
#define UT_MS   1000000ull
/* Bad pointers, laundered so the compiler cannot see (and warn about) what they point to:
 * a kernel address (never accessible from EL0) and one in the unmapped first page. */
#define UT_KADDR_VAL   0xffffff8040200000ul
#define UT_BADADDR_VAL 0x10ul
#define UT_KADDR       ut_launder(UT_KADDR_VAL)
#define UT_BADADDR     ut_launder(UT_BADADDR_VAL)

struct utest {
    const char *name;
    void (*fn)(void);
    unsigned timeout_s;
};

struct utest_helper {
    const char *name;
    void (*fn)(const char *arg);
};

struct utest_suite {
    const char *self; /* path of the program, to spawn test processes and helpers */
    const struct utest *tests;
    size_t ntests;
    const struct utest_helper *helpers;
    size_t nhelpers;
    /* optional: a helper that needs the whole argument vector (argv[2] == name) */
    int (*raw_helper)(int argc, char **argv);
};

extern const char *ut_test_name; /* the test running in this process */
extern int ut_runner_pid;        /* pid of the runner (the test process's parent) */

static inline uintptr_t ut_launder(uintptr_t v)
{
    __asm__("" : "+r"(v));
    return v;
}

__attribute__((noreturn, format(printf, 2, 3))) void ut_fail(int line, const char *fmt, ...);
/* A result as text: "-EFAULT" for an error, the number otherwise (four rotating buffers). */
const char *ut_rstr(long v);

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ut_fail(__LINE__, __VA_ARGS__);                                                        \
        }                                                                                          \
    } while (0)

/* call must return exactly want (a count, 0, or -E...). */
#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        long got_ = (long)(call), want_ = (long)(want);                                            \
        if (got_ != want_) {                                                                       \
            ut_fail(__LINE__, "%s returned %s, expected %s", #call, ut_rstr(got_),                 \
                    ut_rstr(want_));                                                               \
        }                                                                                          \
    } while (0)

uint64_t ut_free_pages(void);
/* Free pages once the count stops moving: the kernel may finish freeing a reaped process's
 * memory a little after wait4 returns, so a comparison must not catch it half-way. */
uint64_t ut_free_pages_settled(void);
/* Kernel stacks in use (tasks alive or not yet freed), once the count stops moving. */
uint64_t ut_kstacks_settled(void);
void *ut_map_pages(size_t pages);
int ut_nr_cpus(void);
/* First dataplane CPU at or after `from`, or -1. */
int ut_dataplane_cpu(int from);

/* Spawn a helper of this program (`-h NAME ARG`) on `affinity` (0: default CPUs). */
long ut_spawn_helper(const char *helper, const char *arg, uint64_t affinity);
/* Reap pid and return its wait status (fails the test if wait4 does not return pid). */
int ut_wait_status(long pid);
int ut_run_helper(const char *helper, const char *arg);
void ut_expect_killed(const char *helper, int sig);
void ut_expect_exit(const char *helper, const char *arg, int code);

int utest_main(const struct utest_suite *s, int argc, char **argv);

#endif
