/* SPDX-License-Identifier: MIT */
/*
 * utest.c — the test runner shared by usertests and hardtests (contract in utest.h).
 */
#include "utest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ut_test_name = "?";
int ut_runner_pid;
static const struct utest_suite *suite;

void ut_fail(int line, const char *fmt, ...)
{
    va_list ap;

    printf("test %s: FAILED (line %d: ", ut_test_name, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(")\n");
    exit(1);
}

const char *ut_rstr(long v)
{
    static char bufs[4][32];
    static unsigned next;
    char *b = bufs[next++ % 4];

    if (v < 0 && v >= -4095) {
        snprintf(b, sizeof(bufs[0]), "-%s", zt_errno_name((int)-v));
    } else {
        snprintf(b, sizeof(bufs[0]), "%ld", v);
    }
    return b;
}

static struct zt_meminfo meminfo(void)
{
    struct zt_meminfo mi;
    long r = zt_meminfo(&mi);

    CHECK(r == 0, "zt_meminfo returned %s", ut_rstr(r));
    return mi;
}

uint64_t ut_free_pages(void)
{
    return meminfo().free_pages;
}

/* A meminfo field once it stops moving (100 looks, 10 ms apart at most). */
static uint64_t settled(uint64_t (*read)(void))
{
    uint64_t prev = read(), cur;

    for (int i = 0; i < 100; i++) {
        zt_sleep_ns(10 * UT_MS);
        cur = read();
        if (cur == prev) {
            return cur;
        }
        prev = cur;
    }
    return prev;
}

uint64_t ut_free_pages_settled(void)
{
    return settled(ut_free_pages);
}

static uint64_t kstacks(void)
{
    return meminfo().kstacks_used;
}

uint64_t ut_kstacks_settled(void)
{
    return settled(kstacks);
}

void *ut_map_pages(size_t pages)
{
    long r =
        zt_mmap(NULL, pages * UT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    CHECK(r > 0 && r % UT_PAGE == 0, "mmap of %zu pages returned %s", pages, ut_rstr(r));
    return (void *)r;
}

int ut_nr_cpus(void)
{
    long n = zt_cpus(NULL, 0);

    CHECK(n >= 1 && n <= ZT_MAX_CPUS, "zt_cpus(NULL, 0) returned %s", ut_rstr(n));
    return (int)n;
}

int ut_dataplane_cpu(int from)
{
    static struct zt_cpu_info ci[ZT_MAX_CPUS];
    long n = zt_cpus(ci, ZT_MAX_CPUS);

    CHECK(n >= 1 && n <= ZT_MAX_CPUS, "zt_cpus returned %s", ut_rstr(n));
    for (int c = from < 0 ? 0 : from; c < n; c++) {
        if (ci[c].dataplane && ci[c].online) {
            return c;
        }
    }
    return -1;
}

/* ---------------------------------------------------------------- helpers (children) */

long ut_spawn_helper(const char *helper, const char *arg, uint64_t affinity)
{
    char *argv[] = {(char *)suite->self, "-h", (char *)helper, (char *)arg, NULL};
    long pid = zt_spawn(suite->self, argv, affinity);

    CHECK(pid > 0, "spawn of helper %s returned %s", helper, ut_rstr(pid));
    return pid;
}

int ut_wait_status(long pid)
{
    int status = 0;
    long r = zt_wait((int)pid, &status);

    CHECK(r == pid, "wait4(%ld) returned %s", pid, ut_rstr(r));
    return status;
}

int ut_run_helper(const char *helper, const char *arg)
{
    return ut_wait_status(ut_spawn_helper(helper, arg, 0));
}

void ut_expect_killed(const char *helper, int sig)
{
    int status = ut_run_helper(helper, NULL);

    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == sig,
          "helper %s: wait status 0x%x (%s %d), expected killed by %s", helper, status,
          zt_wifsignaled(status) ? "signal" : "exit code",
          zt_wifsignaled(status) ? zt_wtermsig(status) : zt_wexitstatus(status),
          zt_signal_name(sig));
}

void ut_expect_exit(const char *helper, const char *arg, int code)
{
    int status = ut_run_helper(helper, arg);

    CHECK(zt_wifexited(status) && zt_wexitstatus(status) == code,
          "helper %s %s: wait status 0x%x, expected exit code %d", helper, arg ? arg : "", status,
          code);
}

/* ---------------------------------------------------------------- the runner */

static const struct utest *find_test(const char *name)
{
    for (size_t i = 0; i < suite->ntests; i++) {
        if (strcmp(suite->tests[i].name, name) == 0) {
            return &suite->tests[i];
        }
    }
    return NULL;
}

/* Wait for a test process, killing it after its time limit.  Returns its wait status. */
static int wait_with_timeout(long pid, unsigned timeout_s, bool *timed_out)
{
    uint64_t deadline = zt_now_ns() + (uint64_t)timeout_s * 1000000000ull, nap = UT_MS / 2;
    int status = 0;
    long r;

    *timed_out = false;
    while ((r = zt_wait4((int)pid, &status, WNOHANG, NULL)) == 0) {
        if (zt_now_ns() > deadline) {
            *timed_out = true;
            zt_kill((int)pid, SIGKILL);
            zt_wait((int)pid, &status);
            return status;
        }
        zt_sleep_ns(nap);
        nap = nap < 64 * UT_MS ? nap * 2 : nap;
    }
    return r == pid ? status : -1;
}

/* Run one test in its own process; true if it passed. */
static bool run_test(const struct utest *t)
{
    char ppid[16];
    char *argv[] = {(char *)suite->self, "-t", (char *)t->name, ppid, NULL};
    bool timed_out;
    int status;
    long pid;

    snprintf(ppid, sizeof(ppid), "%ld", zt_getpid());
    fflush(stdout);
    pid = zt_spawn(suite->self, argv, 0);
    if (pid < 0) {
        printf("test %s: FAILED (spawn of the test process returned %s)\n", t->name, ut_rstr(pid));
        return false;
    }
    status = wait_with_timeout(pid, t->timeout_s, &timed_out);
    if (timed_out) {
        printf("test %s: FAILED (no result after %u s: killed)\n", t->name, t->timeout_s);
        return false;
    }
    if (status == -1) {
        printf("test %s: FAILED (wait4 on the test process failed)\n", t->name);
        return false;
    }
    if (zt_wifsignaled(status)) {
        printf("test %s: FAILED (test process killed by signal %d (%s))\n", t->name,
               zt_wtermsig(status), zt_signal_name(zt_wtermsig(status)));
        return false;
    }
    if (zt_wexitstatus(status) > 1) {
        printf("test %s: FAILED (test process exited with status %d)\n", t->name,
               zt_wexitstatus(status));
    }
    return zt_wexitstatus(status) == 0;
}

static bool selected(const char *name, int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], name) == 0) {
            return true;
        }
    }
    return argc == 1;
}

static int run_suite(int argc, char **argv)
{
    char failed[64][32];
    int nfailed = 0, nrun = 0, nbad = 0;
    const char *prog = strrchr(suite->self, '/') ? strrchr(suite->self, '/') + 1 : suite->self;
    uint64_t before = ut_free_pages_settled(), stacks_before = ut_kstacks_settled();

    printf("%s: %zu tests, %d CPUs, %llu free pages, %llu kernel stacks\n", prog,
           argc > 1 ? (size_t)argc - 1 : suite->ntests, ut_nr_cpus(), (unsigned long long)before,
           (unsigned long long)stacks_before);
    for (size_t i = 0; i < suite->ntests; i++) {
        if (!selected(suite->tests[i].name, argc, argv)) {
            continue;
        }
        nrun++;
        if (!run_test(&suite->tests[i])) {
            nbad++;
            if (nfailed < 63) {
                snprintf(failed[nfailed++], sizeof(failed[0]), "%s", suite->tests[i].name);
            }
        }
    }
    uint64_t after = ut_free_pages_settled(), stacks_after = ut_kstacks_settled();
    if (after != before || stacks_after != stacks_before) {
        printf("test leaks: FAILED (free pages %llu before the suite, %llu after; kernel stacks "
               "%llu before, %llu after)\n",
               (unsigned long long)before, (unsigned long long)after,
               (unsigned long long)stacks_before, (unsigned long long)stacks_after);
        nbad++;
        snprintf(failed[nfailed++], sizeof(failed[0]), "leaks");
    }
    if (nrun == 0) {
        printf("%s: no such test\n", prog);
        return 2;
    }
    if (nbad == 0) {
        printf("ALL TESTS PASSED\n");
        return 0;
    }
    printf("SOME TESTS FAILED:");
    for (int i = 0; i < nfailed; i++) {
        printf(" %s", failed[i]);
    }
    printf("\n");
    return 1;
}

static int run_helper_named(int argc, char **argv)
{
    ut_test_name = argv[2];
    if (suite->raw_helper) {
        int r = suite->raw_helper(argc, argv);
        if (r >= 0) {
            return r;
        }
    }
    for (size_t i = 0; i < suite->nhelpers; i++) {
        if (strcmp(suite->helpers[i].name, argv[2]) == 0) {
            suite->helpers[i].fn(argc > 3 ? argv[3] : NULL);
            return 0;
        }
    }
    printf("%s: no helper %s\n", suite->self, argv[2]);
    return 99;
}

int utest_main(const struct utest_suite *s, int argc, char **argv)
{
    suite = s;
    if (argc >= 4 && strcmp(argv[1], "-t") == 0) {
        const struct utest *t = find_test(argv[2]);

        if (t == NULL) {
            printf("test %s: FAILED (no such test)\n", argv[2]);
            return 1;
        }
        ut_test_name = t->name;
        ut_runner_pid = atoi(argv[3]);
        t->fn();
        printf("test %s: OK\n", t->name);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "-h") == 0) {
        return run_helper_named(argc, argv);
    }
    if (argc == 2 && strcmp(argv[1], "-l") == 0) {
        for (size_t i = 0; i < s->ntests; i++) {
            printf("%s\n", s->tests[i].name);
        }
        return 0;
    }
    return run_suite(argc, argv);
}
