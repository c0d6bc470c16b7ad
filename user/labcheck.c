/* SPDX-License-Identifier: MIT */
/*
 * labcheck — the grader's own checks of the labs (labs/README.md), run in the guest by the
 * tests of tests/qemu/test_labgrade.py.
 *
 *   labcheck isolstat    lab syscall: the zt_isolstat call end to end
 *
 * Prints one line per check, `labcheck: GROUP NAME: ok` or `labcheck: GROUP NAME: FAIL (...)`,
 * and last `labcheck: N passed, M failed`; exit status 0 when nothing failed, 1 otherwise.
 * The groups of `isolstat`:
 *   dispatch  the raw system call (svc with x8 = SYS_zt_isolstat) reaches a handler
 *   raw       every argument case, through the raw call: the contract of zt.h
 *   wrapper   the same cases through the user wrapper zt_isolstat: what the raw call returns
 *   yours     the student's test (user/labcheck/isolstat_test.c) agrees with the raw checks on
 *             the real call (passes if it keeps the contract, fails if not) and fails on each
 *             mutant, a call broken on purpose
 */
#include <stdio.h>
#include <string.h>

#include "labcheck/labcheck.h"
#include "zt.h"

static int passed, failed;

static void result(const char *group, const char *name, int ok, const char *why)
{
    if (ok) {
        passed++;
        printf("labcheck: %s %s: ok\n", group, name);
    } else {
        failed++;
        printf("labcheck: %s %s: FAIL (%s)\n", group, name, why);
    }
}

static const char *rstr(long v, char *buf, size_t n)
{
    if (v < 0 && v > -4096) {
        snprintf(buf, n, "-%s", zt_errno_name((int)-v));
    } else {
        snprintf(buf, n, "%ld", v);
    }
    return buf;
}

/* ---------------------------------------------------------------- lab syscall */

static long raw_isolstat(unsigned cpu, struct zt_isol_audit *out)
{
    return zt_syscall2(SYS_zt_isolstat, cpu, out);
}

/* One argument case: the CPU, the buffer, what the contract says the call returns, and for a
 * 0 result whether the audit must say the CPU is a dataplane one. */
struct isol_case {
    const char *name;
    unsigned long cpu; /* passed in x0 as it is: the handler sees all 64 bits */
    struct zt_isol_audit *buf;
    long want;
    int dataplane;
};

static struct zt_isol_audit good;

/* An address the compiler cannot see through (so it does not warn about what it points to). */
static uintptr_t launder(uintptr_t v)
{
    __asm__("" : "+r"(v));
    return v;
}

/* The first dataplane CPU, or -1. */
static int dataplane_cpu(void)
{
    static struct zt_cpu_info ci[64];
    long got = zt_cpus(ci, 64);
    for (long k = 0; k < got && k < 64; k++) {
        if (ci[k].dataplane) {
            return (int)k;
        }
    }
    return -1;
}

static void isolstat_cases(struct isol_case *c, int *n)
{
    int ncpu = zt_nr_cpus(), dp = dataplane_cpu();
    static char *pages;
    if (!pages) { /* two pages, the second given back: a buffer can run off the first */
        pages = (char *)zt_mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                -1, 0);
        zt_munmap(pages + 4096, 4096);
    }
    int k = 0;
    c[k++] = (struct isol_case){"cpu-0", 0, &good, 0, 0};
    if (dp > 0) {
        c[k++] = (struct isol_case){"dataplane-cpu", (unsigned long)dp, &good, 0, 1};
    }
    c[k++] = (struct isol_case){"last-cpu", (unsigned long)ncpu - 1, &good, 0, -1};
    c[k++] = (struct isol_case){"cpu-past-the-last", (unsigned long)ncpu, &good, -EINVAL, 0};
    c[k++] = (struct isol_case){"cpu-0xffffffff", 0xfffffffful, &good, -EINVAL, 0};
    c[k++] = (struct isol_case){"buffer-null", 0, NULL, -EFAULT, 0};
    c[k++] = (struct isol_case){"buffer-first-page", 0, (void *)launder(0x10), -EFAULT, 0};
    c[k++] =
        (struct isol_case){"buffer-kernel", 0, (void *)launder(0xffffff8040200000ul), -EFAULT, 0};
    c[k++] =
        (struct isol_case){"buffer-read-only", 0, (void *)(uintptr_t)&isolstat_cases, -EFAULT, 0};
    c[k++] = (struct isol_case){"buffer-runs-off-its-page", 0,
                                (void *)(pages + 4096 - sizeof(good) / 2), -EFAULT, 0};
    *n = k;
}

/* Check one result against the contract: 1, or 0 with why filled in. */
static int as_contract_says(const struct isol_case *c, long r, char *why, size_t n)
{
    char a[24], b[24];
    if (r != c->want) {
        snprintf(why, n, "returned %s, expected %s", rstr(r, a, sizeof(a)),
                 rstr(c->want, b, sizeof(b)));
        return 0;
    }
    if (c->want == 0 && good.cpu != (uint32_t)c->cpu) {
        snprintf(why, n, "the audit names cpu %u, not %lu", good.cpu, c->cpu);
        return 0;
    }
    if (c->want == 0 && c->dataplane >= 0 && good.dataplane != c->dataplane) {
        snprintf(why, n, "the audit says dataplane=%u", good.dataplane);
        return 0;
    }
    return 1;
}

/* raw: every case through the system call itself, judged by the contract.  Returns how many
 * cases broke it. */
static int run_raw(void)
{
    int broken = 0;
    struct isol_case cases[16];
    int n;
    isolstat_cases(cases, &n);
    for (int i = 0; i < n; i++) {
        char why[128];
        memset(&good, 0xa5, sizeof(good));
        long r = zt_syscall2(SYS_zt_isolstat, cases[i].cpu, cases[i].buf);
        int ok = as_contract_says(&cases[i], r, why, sizeof(why));
        broken += !ok;
        result("raw", cases[i].name, ok, why);
    }
    return broken;
}

/* wrapper: every case through zt_isolstat, judged by what the raw call returns for it (the
 * wrapper's job is to pass the arguments and the result through, whatever the kernel does);
 * a call that is not dispatched leaves nothing to compare with. */
static void run_wrapper(void)
{
    struct isol_case cases[16];
    int n;
    isolstat_cases(cases, &n);
    for (int i = 0; i < n; i++) {
        struct isol_case *c = &cases[i];
        char why[128], a[24], b[24];
        memset(&good, 0xa5, sizeof(good));
        long raw = zt_syscall2(SYS_zt_isolstat, c->cpu, c->buf);
        uint32_t raw_cpu = good.cpu;
        memset(&good, 0x5a, sizeof(good));
        long r = zt_isolstat((unsigned)c->cpu, c->buf);
        int ok = raw != -ENOSYS && r == raw && (r != 0 || c->buf != &good || good.cpu == raw_cpu);
        if (raw == -ENOSYS) {
            snprintf(why, sizeof(why),
                     "the raw call is not dispatched (-ENOSYS): nothing to "
                     "compare the wrapper with");
        } else if (r != raw) {
            snprintf(why, sizeof(why), "returned %s, the raw call %s", rstr(r, a, sizeof(a)),
                     rstr(raw, b, sizeof(b)));
        } else {
            snprintf(why, sizeof(why), "the audit names cpu %u, the raw call's %u", good.cpu,
                     raw_cpu);
        }
        result("wrapper", c->name, ok, why);
    }
}

/* The mutants: zt_isolstat broken in the ways a handler is most often broken. */
static long mutant_no_efault(unsigned cpu, struct zt_isol_audit *out)
{
    long r = raw_isolstat(cpu, out);
    return r == -EFAULT ? 0 : r; /* ignores copy_to_user's result */
}

static long mutant_no_einval(unsigned cpu, struct zt_isol_audit *out)
{
    long r = raw_isolstat(cpu, out);
    return r == -EINVAL ? 0 : r; /* never checks the CPU number */
}

static long mutant_wrong_cpu(unsigned cpu, struct zt_isol_audit *out)
{
    return raw_isolstat(cpu < (unsigned)zt_nr_cpus() ? 0 : cpu, out); /* audits CPU 0 */
}

/* yours: the student's test against the real call and each mutant.  On the real call a good
 * test passes if the call keeps the contract (raw_broken == 0) and fails if it does not: either
 * way it agrees with the raw checks. */
static void run_yours(int raw_broken)
{
    static const struct {
        const char *name;
        isolstat_fn call;
    } mutants[] = {
        {"mutant-no-efault", mutant_no_efault},
        {"mutant-no-einval", mutant_no_einval},
        {"mutant-wrong-cpu", mutant_wrong_cpu},
    };
    struct lab_run real = {0, 0};
    char why[128];
    printf("labcheck: yours: on the real call\n");
    isolstat_test(zt_isolstat, &real);
    if (raw_broken == 0) {
        snprintf(why, sizeof(why),
                 "%d checks, %d failed: on a call that keeps the contract it must make checks "
                 "and pass",
                 real.checks, real.failures);
        result("yours", "agrees-on-the-real-call", real.checks > 0 && real.failures == 0, why);
    } else {
        snprintf(why, sizeof(why),
                 "%d checks, none failed, but the raw checks found %d cases that break the "
                 "contract",
                 real.checks, raw_broken);
        result("yours", "agrees-on-the-real-call", real.failures > 0, why);
    }
    for (size_t i = 0; i < sizeof(mutants) / sizeof(mutants[0]); i++) {
        struct lab_run m = {0, 0};
        printf("labcheck: yours: on %s\n", mutants[i].name);
        isolstat_test(mutants[i].call, &m);
        snprintf(why, sizeof(why),
                 "%d checks, none failed: the test cannot tell this broken "
                 "call from a working one",
                 m.checks);
        result("yours", mutants[i].name, m.failures > 0, why);
    }
}

static void lab_isolstat(void)
{
    struct zt_isol_audit a;
    char why[96], s[24];
    long r = raw_isolstat(0, &a);
    snprintf(why, sizeof(why), "SYS_zt_isolstat for cpu 0 returned %s", rstr(r, s, sizeof(s)));
    result("dispatch", "reaches-a-handler", r != -ENOSYS, why);
    int raw_broken = run_raw();
    run_wrapper();
    run_yours(raw_broken);
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "isolstat") != 0) {
        fprintf(stderr, "usage: labcheck isolstat\n");
        return 2;
    }
    lab_isolstat();
    printf("labcheck: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
