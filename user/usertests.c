/* SPDX-License-Identifier: MIT */
/*
 * usertests — the system-call test suite (xv6's usertests, for zerotick's ABI).
 *
 * The runner (user/lib/utest.h) runs each test in its own process and checks free pages and
 * kernel stacks before and after the suite; `usertests -l` lists the tests, `usertests NAME`
 * runs some.
 *
 * Expectations are Linux's where the call is Linux's (include/uapi/zt_syscall.h), plus
 * zerotick's own rules: every bad pointer is -EFAULT, memory is populated at once, a fault
 * kills only the faulting process, and nothing leaks a page.
 */
#include "utest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SELF       "/bin/usertests"
#define PAGE       UT_PAGE
#define MS         UT_MS
#define KADDR      UT_KADDR
#define BADADDR    UT_BADADDR
#define SPAWN_RUNS 1000

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* ---------------------------------------------------------------- helpers (children) */

static void helper_sleep_ms(const char *arg)
{
    zt_sleep_ns((arg ? strtoull(arg, NULL, 10) : 1000000ull) * MS);
    exit(0);
}

static long sleep_forever_fn(void *arg)
{
    zt_sleep_ns(1000000ull * 1000000000ull);
    return 0;
}

static void helper_threads_sleep(const char *arg)
{
    int n = zt_nr_cpus();

    for (int i = 0; i < 3; i++) {
        if (zt_thread_create(sleep_forever_fn, NULL, n > 1 ? (i + 1) % n : -1) == NULL) {
            exit(100 + i);
        }
    }
    sleep_forever_fn(NULL);
    exit(0);
}

static long exit_group_fn(void *arg)
{
    zt_exit_group(9);
}

static void helper_thread_exit_group(const char *arg)
{
    zt_thread_t *t = zt_thread_create(exit_group_fn, NULL, -1);

    if (t == NULL) {
        exit(100);
    }
    zt_thread_join(t); /* never returns: the thread ends the whole process */
    exit(101);
}

static void helper_cpu(const char *arg)
{
    exit(zt_cpu());
}

static void helper_orphan(const char *arg)
{
    /* The grandchild sleeps until test_orphan kills it: it outlives us, so pid 1 adopts it. */
    ut_spawn_helper("sleep-ms", "1000000", 0);
    exit(0);
}

static void helper_exit(const char *arg)
{
    exit(arg ? atoi(arg) : 0);
}

static void helper_nullderef(const char *arg)
{
    *(volatile int *)0 = 1;
    exit(0);
}

static void helper_kread(const char *arg)
{
    (void)*(volatile uint64_t *)KADDR;
    exit(0);
}

static void helper_undef(const char *arg)
{
    __asm__ volatile(".inst 0x00000000"); /* permanently undefined (UDF #0) */
    exit(0);
}

static void helper_sysreg(const char *arg)
{
    uint64_t v;

    __asm__ volatile("mrs %0, sctlr_el1" : "=r"(v)); /* EL1 register: undefined at EL0 */
    exit((int)(v & 1));
}

static void helper_brk_insn(const char *arg)
{
    __asm__ volatile("brk #0x7");
    exit(0);
}

static void helper_ldxr_align(const char *arg)
{
    static uint64_t words[2];
    uintptr_t odd = (uintptr_t)words + 1;
    uint64_t v;

    /* Exclusive loads must be naturally aligned, whatever SCTLR_EL1.A says (ARM ARM B2.5).
     * (A misaligned SP would be the other classic, but QEMU 7.2's TCG does not implement the
     * SCTLR_EL1.SA0 stack-alignment check, so that fault never happens under QEMU.) */
    __asm__ volatile("ldxr %0, [%1]" : "=r"(v) : "r"(odd) : "memory");
    exit((int)v);
}

static void helper_text_write(const char *arg)
{
    *(volatile uint32_t *)(uintptr_t)helper_text_write = 0xd503201f;
    exit(0);
}

static void helper_exec_data(const char *arg)
{
    static uint32_t code[2] = {0xd65f03c0, 0}; /* ret, in a writable (never executable) page */
    void (*fn)(void) = (void (*)(void))(uintptr_t)code;

    fn();
    exit(0);
}

static volatile bool recurse_forever = true;

static int recurse(volatile char *prev)
{
    volatile char frame[1024];

    frame[0] = prev ? prev[0] + 1 : 0;
    return recurse_forever ? recurse(frame) + frame[1] : 0;
}

static void helper_stack_overflow(const char *arg)
{
    exit(recurse(NULL));
}

static void helper_unmapped(const char *arg)
{
    volatile char *p = ut_map_pages(1);

    p[0] = 1;
    zt_munmap((void *)p, PAGE);
    p[0] = 2;
    exit(0);
}

static void helper_brk_shrunk(const char *arg)
{
    uintptr_t cur = (uintptr_t)zt_brk(NULL);
    uintptr_t start = (cur + PAGE - 1) & ~(PAGE - 1);
    volatile char *p = (volatile char *)start;

    if ((uintptr_t)zt_brk((void *)(start + 16 * PAGE)) != start + 16 * PAGE) {
        exit(100);
    }
    p[0] = 1;
    zt_brk((void *)start);
    p[0] = 2;
    exit(0);
}

static void helper_sigusr1_resethand(const char *arg);

static const struct utest_helper helpers[] = {
    {"sleep-ms", helper_sleep_ms},
    {"threads-sleep", helper_threads_sleep},
    {"thread-exit-group", helper_thread_exit_group},
    {"cpu", helper_cpu},
    {"orphan", helper_orphan},
    {"exit", helper_exit},
    {"nullderef", helper_nullderef},
    {"kread", helper_kread},
    {"undef", helper_undef},
    {"sysreg", helper_sysreg},
    {"brk-insn", helper_brk_insn},
    {"ldxr-align", helper_ldxr_align},
    {"text-write", helper_text_write},
    {"exec-data", helper_exec_data},
    {"stack-overflow", helper_stack_overflow},
    {"unmapped", helper_unmapped},
    {"brk-shrunk", helper_brk_shrunk},
    {"sigusr1-resethand", helper_sigusr1_resethand},
};

/* ---------------------------------------------------------------- tests: console I/O */

static void test_write(void)
{
    static const char out[] = "usertests: a line written to fd 1\n";
    static const char err[] = "usertests: a line written to fd 2\n";

    EXPECT(zt_write(1, out, sizeof(out) - 1), sizeof(out) - 1);
    EXPECT(zt_write(2, err, sizeof(err) - 1), sizeof(err) - 1);
    EXPECT(zt_write(1, out, 0), 0);
}

static void test_badfd(void)
{
    char c = 'x';

    EXPECT(zt_write(3, &c, 1), -EBADF);
    EXPECT(zt_write(-1, &c, 1), -EBADF);
    EXPECT(zt_write(1000, &c, 1), -EBADF);
    EXPECT(zt_read(3, &c, 1), -EBADF);
    EXPECT(zt_read(-1, &c, 1), -EBADF);
    EXPECT(zt_read(1 << 20, &c, 1), -EBADF);
}

static void test_badptr(void)
{
    char *page = ut_map_pages(2);

    EXPECT(zt_write(1, (void *)BADADDR, 5), -EFAULT);
    EXPECT(zt_write(2, (void *)BADADDR, 5), -EFAULT);
    EXPECT(zt_write(1, (void *)KADDR, 5), -EFAULT);
    EXPECT(zt_write(1, (void *)-1ul, 5), -EFAULT);
    EXPECT(zt_write(1, page, 1ul << 40), -EFAULT);
    EXPECT(zt_munmap(page + PAGE, PAGE), 0);
    memset(page, 'a', PAGE);
    /* The buffer starts in a mapped page and runs into the unmapped one. */
    EXPECT(zt_write(1, page + PAGE - 4, 16), -EFAULT);
    /* read must check before it waits for console input, or these would block. */
    EXPECT(zt_read(0, (void *)BADADDR, 1), -EFAULT);
    EXPECT(zt_read(0, (void *)KADDR, 1), -EFAULT);
    EXPECT(zt_read(0, page + PAGE, 1), -EFAULT);
    EXPECT(zt_read(0, (void *)helper_exit, 1), -EFAULT); /* read-only text */
}

/* ---------------------------------------------------------------- tests: identity */

static void test_getpid(void)
{
    long pid = zt_getpid();
    int tid;

    CHECK(pid > 1, "getpid returned %s", ut_rstr(pid));
    EXPECT(zt_gettid(), pid);
    EXPECT(zt_getppid(), ut_runner_pid);
    EXPECT(zt_getpid(), pid);
    EXPECT(zt_set_tid_address(&tid), pid);
}

static void test_yield(void)
{
    for (int i = 0; i < 1000; i++) {
        EXPECT(zt_sched_yield(), 0);
    }
}

/*
 * ut_svc_regs(nr, arg0, out): a raw `svc #0` with x8 = nr, x0 = arg0, x1 = 0 and every other
 * register x2-x30 (x8 aside) set to 0x5a00 + its number; then out[0..30] = x0-x30 and
 * out[31] = SP - the SP before the call (0 if kept), as the call left them.  The Linux ABI:
 * a system call changes x0 and nothing else, whichever kernel path it took.
 */
void ut_svc_regs(long nr, long arg0, uint64_t *out);
__asm__(".text\n"
        ".global ut_svc_regs\n"
        "ut_svc_regs:\n"
        "  stp x29, x30, [sp, #-112]!\n"
        "  stp x19, x20, [sp, #16]\n"
        "  stp x21, x22, [sp, #32]\n"
        "  stp x23, x24, [sp, #48]\n"
        "  stp x25, x26, [sp, #64]\n"
        "  stp x27, x28, [sp, #80]\n"
        "  str x2, [sp, #96]\n"
        "  mov x8, x0\n"
        "  mov x0, x1\n"
        "  mov x1, #0\n"
        "  mov x2, #0x5a02\n  mov x3, #0x5a03\n  mov x4, #0x5a04\n  mov x5, #0x5a05\n"
        "  mov x6, #0x5a06\n  mov x7, #0x5a07\n  mov x9, #0x5a09\n  mov x10, #0x5a0a\n"
        "  mov x11, #0x5a0b\n  mov x12, #0x5a0c\n  mov x13, #0x5a0d\n  mov x14, #0x5a0e\n"
        "  mov x15, #0x5a0f\n  mov x16, #0x5a10\n  mov x17, #0x5a11\n  mov x18, #0x5a12\n"
        "  mov x19, #0x5a13\n  mov x20, #0x5a14\n  mov x21, #0x5a15\n  mov x22, #0x5a16\n"
        "  mov x23, #0x5a17\n  mov x24, #0x5a18\n  mov x25, #0x5a19\n  mov x26, #0x5a1a\n"
        "  mov x27, #0x5a1b\n  mov x28, #0x5a1c\n  mov x29, #0x5a1d\n  mov x30, #0x5a1e\n"
        "  svc #0\n"
        "  stp x0, x1, [sp, #-16]!\n"
        "  ldr x1, [sp, #16 + 96]\n"
        "  stp x2, x3, [x1, #16]\n  stp x4, x5, [x1, #32]\n  stp x6, x7, [x1, #48]\n"
        "  stp x8, x9, [x1, #64]\n  stp x10, x11, [x1, #80]\n  stp x12, x13, [x1, #96]\n"
        "  stp x14, x15, [x1, #112]\n  stp x16, x17, [x1, #128]\n  stp x18, x19, [x1, #144]\n"
        "  stp x20, x21, [x1, #160]\n  stp x22, x23, [x1, #176]\n  stp x24, x25, [x1, #192]\n"
        "  stp x26, x27, [x1, #208]\n  stp x28, x29, [x1, #224]\n  str x30, [x1, #240]\n"
        "  ldp x2, x3, [sp], #16\n"
        "  stp x2, x3, [x1]\n"
        "  mov x2, sp\n"
        "  ldp x19, x20, [sp, #16]\n"
        "  ldp x21, x22, [sp, #32]\n"
        "  ldp x23, x24, [sp, #48]\n"
        "  ldp x25, x26, [sp, #64]\n"
        "  ldp x27, x28, [sp, #80]\n"
        "  ldp x29, x30, [sp], #112\n"
        "  mov x3, sp\n"
        "  sub x2, x2, x3\n"
        "  add x2, x2, #112\n" /* SP after the call, relative to the entry SP: 0 if kept */
        "  str x2, [x1, #248]\n"
        "  ret\n");

/* Check what ut_svc_regs saw: x0 = want_x0, x1 = 0, x8 = nr, the rest their pattern. */
static void check_regs(const char *what, long nr, const uint64_t *r, uint64_t want_x0)
{
    CHECK(r[0] == want_x0, "%s: x0 0x%llx, want 0x%llx", what, (unsigned long long)r[0],
          (unsigned long long)want_x0);
    CHECK(r[1] == 0, "%s: x1 0x%llx", what, (unsigned long long)r[1]);
    for (int i = 2; i <= 30; i++) {
        uint64_t want = i == 8 ? (uint64_t)nr : 0x5a00u + (unsigned)i;
        CHECK(r[i] == want, "%s: x%d 0x%llx, want 0x%llx", what, i, (unsigned long long)r[i],
              (unsigned long long)want);
    }
    CHECK(r[31] == 0, "%s: SP moved by %lld", what, (long long)r[31]);
}

static long regs_spinner(void *arg)
{
    volatile int *stop = arg;
    while (!*stop) {
        zt_sched_yield();
    }
    return 0;
}

/* A system call keeps every register but x0: on the fast path (getpid), through a switch to
 * another task and back (yield with a second thread on this CPU; a sleep), and on the full
 * path (an unknown number, a call the fast path does not take). */
static void test_regs(void)
{
    static uint64_t r[32];
    static volatile int stop;
    struct timespec ts = {0, 2000000};
    long pid = zt_getpid();

    ut_svc_regs(SYS_getpid, 0, r);
    check_regs("getpid", SYS_getpid, r, (uint64_t)pid);
    ut_svc_regs(SYS_nanosleep, (long)&ts, r);
    check_regs("nanosleep", SYS_nanosleep, r, 0);
    ut_svc_regs(999, 0, r);
    check_regs("999", 999, r, (uint64_t)-ENOSYS);
    ut_svc_regs(SYS_zt_meminfo, 0, r);
    check_regs("zt_meminfo(NULL)", SYS_zt_meminfo, r, (uint64_t)-EFAULT);
    unsigned cpu = 0;
    EXPECT(zt_getcpu(&cpu, NULL), 0);
    stop = 0;
    zt_thread_t *t = zt_thread_create(regs_spinner, (void *)&stop, (int)cpu);
    CHECK(t != NULL, "thread_create failed");
    if (!t) {
        return;
    }
    for (int i = 0; i < 20; i++) {
        ut_svc_regs(SYS_sched_yield, 0, r);
        check_regs("sched_yield", SYS_sched_yield, r, 0);
    }
    stop = 1;
    zt_thread_join(t);
}

/* ---------------------------------------------------------------- tests: CPUs */

static void test_getcpu(void)
{
    unsigned cpu = 999, node = 999;
    int n = ut_nr_cpus();

    EXPECT(zt_getcpu(&cpu, &node), 0);
    CHECK(cpu < (unsigned)n, "getcpu said CPU %u of %d", cpu, n);
    EXPECT(node, 0);
    EXPECT(zt_getcpu(NULL, NULL), 0);
    EXPECT(zt_getcpu((unsigned *)BADADDR, NULL), -EFAULT);
    EXPECT(zt_getcpu(&cpu, (unsigned *)KADDR), -EFAULT);
}

static void test_affinity(void)
{
    int n = ut_nr_cpus();
    uint64_t all = n == 64 ? ~0ull : (1ull << n) - 1, mask = 0, orig;

    EXPECT(zt_sched_getaffinity(0, sizeof(mask), &mask), sizeof(mask));
    CHECK(mask != 0 && (mask & ~all) == 0, "affinity 0x%llx with %d CPUs", (unsigned long long)mask,
          n);
    orig = mask;
    for (int cpu = 0; cpu < n; cpu++) {
        EXPECT(zt_set_affinity(1ull << cpu), 0);
        EXPECT(zt_cpu(), cpu);
        zt_sched_yield();
        EXPECT(zt_cpu(), cpu);
        EXPECT(zt_get_affinity(&mask), 0);
        EXPECT(mask, 1ull << cpu);
    }
    EXPECT(zt_set_affinity(0), -EINVAL);
    if (n < 64) {
        EXPECT(zt_set_affinity(1ull << 63), -EINVAL);
    }
    EXPECT(zt_sched_setaffinity(0, sizeof(mask), (uint64_t *)BADADDR), -EFAULT);
    EXPECT(zt_sched_getaffinity(0, sizeof(mask), (uint64_t *)KADDR), -EFAULT);
    EXPECT(zt_sched_getaffinity(0, 0, &mask), -EINVAL);
    EXPECT(zt_sched_setaffinity(1000000, sizeof(orig), &orig), -ESRCH);
    EXPECT(zt_sched_setaffinity(0, sizeof(orig), &orig), 0);
}

/* ---------------------------------------------------------------- tests: time */

static void test_nanosleep(void)
{
    static const uint64_t delays_ms[] = {1, 10, 50};
    struct timespec bad[] = {{0, -1}, {0, 1000000000}, {-1, 0}};
    struct timespec zero = {0, 0};

    for (size_t i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
        struct timespec req = {0, (long)(delays_ms[i] * MS)};
        uint64_t t0 = zt_now_ns(), slept;

        EXPECT(zt_nanosleep(&req, NULL), 0);
        slept = zt_now_ns() - t0;
        CHECK(slept >= delays_ms[i] * MS, "nanosleep(%llu ms) returned after %llu ns",
              (unsigned long long)delays_ms[i], (unsigned long long)slept);
    }
    EXPECT(zt_nanosleep(&zero, NULL), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        EXPECT(zt_nanosleep(&bad[i], NULL), -EINVAL);
    }
    EXPECT(zt_nanosleep((struct timespec *)BADADDR, NULL), -EFAULT);
    EXPECT(zt_nanosleep((struct timespec *)KADDR, NULL), -EFAULT);
}

static void test_clock_nanosleep(void)
{
    struct timespec rel = {0, (long)(20 * MS)}, now, target;
    uint64_t t0 = zt_now_ns();

    EXPECT(zt_clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL), 0);
    CHECK(zt_now_ns() - t0 >= 20 * MS, "relative clock_nanosleep(20 ms) slept %llu ns",
          (unsigned long long)(zt_now_ns() - t0));
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, &target), 0);
    target.tv_nsec += (long)(30 * MS);
    if (target.tv_nsec >= 1000000000) {
        target.tv_sec++;
        target.tv_nsec -= 1000000000;
    }
    EXPECT(zt_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, NULL), 0);
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, &now), 0);
    CHECK(ts_ns(&now) >= ts_ns(&target), "TIMER_ABSTIME sleep woke at %llu ns, before %llu",
          (unsigned long long)ts_ns(&now), (unsigned long long)ts_ns(&target));
    EXPECT(zt_clock_nanosleep(99, 0, &rel, NULL), -EINVAL);
    EXPECT(zt_clock_nanosleep(CLOCK_MONOTONIC, 0, (struct timespec *)BADADDR, NULL), -EFAULT);
}

/* One rule for every timespec a call takes (kernel/lib/cycles.c: Linux's timespec64_valid):
 * the same invalid ones are -EINVAL for nanosleep, clock_nanosleep, futex, ppoll, pselect6 and
 * utimensat, and a far one (2^40 s) is valid for each: it is taken as 2^32 s (utimensat's
 * mtime shows it), and a call that need not wait returns at once. */
static void test_timespec_rule(void)
{
    static const struct timespec bad[] = {{0, -1}, {0, 1000000000}, {-1, 0}, {INT64_MIN, 5}};
    const struct timespec far = {1ll << 40, 999999999};
    struct {
        int fd;
        short events, revents;
    } pfd;
    struct {
        uint64_t dev, ino;
        uint32_t mode, nlink, uid, gid;
        uint64_t rdev, pad1;
        int64_t size;
        int32_t blksize, pad2;
        int64_t blocks, atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
        uint32_t unused[2];
    } st;
    int word = 1, fds[2];
    uint64_t rset;
    int fd = (int)zt_syscall4(SYS_openat, -100, "/tmp/ts", 0101 /* WRONLY|CREAT */, 0644);

    CHECK(fd >= 0, "open /tmp/ts: %s", ut_rstr(fd));
    EXPECT(zt_syscall2(SYS_pipe2, fds, 0), 0);
    EXPECT(zt_write(fds[1], "x", 1), 1); /* readable: a poll need not wait */
    pfd.fd = fds[0], pfd.events = 1 /* POLLIN */;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct timespec times[2] = {bad[i], bad[i]};

        rset = 1ull << fds[0];
        EXPECT(zt_nanosleep(&bad[i], NULL), -EINVAL);
        EXPECT(zt_clock_nanosleep(CLOCK_MONOTONIC, 0, &bad[i], NULL), -EINVAL);
        EXPECT(zt_futex(&word, FUTEX_WAIT, 1, &bad[i]), -EINVAL);
        EXPECT(zt_syscall4(SYS_ppoll, &pfd, 1, &bad[i], 0), -EINVAL);
        EXPECT(zt_syscall6(SYS_pselect6, fds[0] + 1, (long)&rset, 0, 0, (long)&bad[i], 0), -EINVAL);
        EXPECT(zt_syscall4(SYS_utimensat, fd, 0, times, 0), -EINVAL);
    }
    struct timespec times[2] = {far, far};

    rset = 1ull << fds[0];
    EXPECT(zt_futex(&word, FUTEX_WAIT, 0, &far), -EAGAIN); /* valid: the word is not 0 */
    EXPECT(zt_syscall4(SYS_ppoll, &pfd, 1, &far, 0), 1);
    EXPECT(zt_syscall6(SYS_pselect6, fds[0] + 1, (long)&rset, 0, 0, (long)&far, 0), 1);
    EXPECT(zt_syscall4(SYS_utimensat, fd, 0, times, 0), 0);
    EXPECT(zt_syscall2(SYS_fstat, fd, &st), 0);
    CHECK(st.mtime == (1ll << 32) && st.mtime_ns == 999999999,
          "utimensat(2^40 s) gave mtime %lld.%09lld, not 2^32 s", (long long)st.mtime,
          (long long)st.mtime_ns);
    EXPECT(zt_syscall1(SYS_close, fds[0]), 0);
    EXPECT(zt_syscall1(SYS_close, fds[1]), 0);
    EXPECT(zt_syscall1(SYS_close, fd), 0);
    EXPECT(zt_syscall3(SYS_unlinkat, -100, "/tmp/ts", 0), 0);
}

/* zt_hwnoise's checks, on housekeeping CPU 0 (IRQs are never masked there): each bad
 * argument is refused with its error and the result buffer is left as it was; valid
 * arguments are refused with -EPERM (only a dataplane CPU may mask IRQs: OSN-09 runs it). */
static long hwnoise_checks(void *arg)
{
    static struct zt_hwnoise r;
    static const struct zt_hwnoise untouched_pattern = {.start = 0xa5a5a5a5a5a5a5a5ull};
    const long size = (long)sizeof(r);
    r = untouched_pattern;
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 5, &r, size - 1), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 5, &r, size + 8), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 0, 5, &r, size), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, ZT_HWNOISE_MAX_US + 1, 5, &r, size), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, -1L, 5, &r, size), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 0, &r, size), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 1000001, &r, size), -EINVAL);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 5, BADADDR, size), -EFAULT);
    EXPECT(zt_syscall4(SYS_zt_hwnoise, 1000, 5, KADDR, size), -EFAULT);
    EXPECT(zt_hwnoise(1000, 5, &r), -EPERM);
    CHECK(memcmp(&r, &untouched_pattern, sizeof(r)) == 0, "a refused zt_hwnoise wrote its result");
    return 0;
}

static void test_hwnoise(void)
{
    zt_thread_t *t = zt_thread_create(hwnoise_checks, NULL, 0);
    CHECK(t != NULL, "create failed: %s", zt_errno_name(errno));
    EXPECT(zt_thread_join(t), 0);
}

static void busy_ns(uint64_t ns)
{
    uint64_t t0 = zt_now_ns();

    while (zt_now_ns() - t0 < ns) {
    }
}

static void test_clock_gettime(void)
{
    static const int clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
                                 CLOCK_THREAD_CPUTIME_ID};
    struct timespec a, b, cpu0, cpu1;
    uint64_t c0, c1, c2, c3;

    for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
        EXPECT(zt_clock_gettime(clocks[i], &a), 0);
        EXPECT(zt_clock_gettime(clocks[i], &b), 0);
        CHECK(a.tv_nsec >= 0 && a.tv_nsec < 1000000000, "clock %d: tv_nsec %ld", clocks[i],
              a.tv_nsec);
        CHECK(ts_ns(&b) >= ts_ns(&a), "clock %d went back: %llu then %llu", clocks[i],
              (unsigned long long)ts_ns(&a), (unsigned long long)ts_ns(&b));
    }
    /* MONOTONIC runs at CNTVCT's rate: its interval lies between the bracketing reads. */
    c0 = zt_now_ns();
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, &a), 0);
    c1 = zt_now_ns();
    zt_sleep_ns(20 * MS);
    c2 = zt_now_ns();
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, &b), 0);
    c3 = zt_now_ns();
    CHECK(ts_ns(&b) - ts_ns(&a) + 1000 >= c2 - c1 && ts_ns(&b) - ts_ns(&a) <= c3 - c0 + 1000,
          "MONOTONIC advanced %llu ns while CNTVCT advanced between %llu and %llu ns",
          (unsigned long long)(ts_ns(&b) - ts_ns(&a)), (unsigned long long)(c2 - c1),
          (unsigned long long)(c3 - c0));
    /* CPU-time clocks advance while we compute. */
    EXPECT(zt_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0), 0);
    busy_ns(30 * MS);
    EXPECT(zt_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1), 0);
    CHECK(ts_ns(&cpu1) - ts_ns(&cpu0) >= 1 * MS,
          "THREAD_CPUTIME advanced %llu ns over 30 ms of computing",
          (unsigned long long)(ts_ns(&cpu1) - ts_ns(&cpu0)));
    EXPECT(zt_clock_gettime(99, &a), -EINVAL);
    EXPECT(zt_clock_gettime(-1, &a), -EINVAL);
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, (struct timespec *)BADADDR), -EFAULT);
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, (struct timespec *)KADDR), -EFAULT);
}

/* ---------------------------------------------------------------- tests: memory */

static void test_mmap(void)
{
    const size_t pages = 64;
    uint64_t before = ut_free_pages(), after;
    uint8_t *p = ut_map_pages(pages);
    long r;

    /* Populated at once: the pages are gone from the free list before we touch them. */
    after = ut_free_pages();
    CHECK(before - after >= pages, "mmap of %zu pages took only %lld pages from the free list",
          pages, (long long)(before - after));
    for (size_t i = 0; i < pages * PAGE; i++) {
        CHECK(p[i] == 0, "fresh page byte %zu is 0x%x", i, p[i]);
    }
    for (size_t i = 0; i < pages * PAGE; i++) {
        p[i] = (uint8_t)(i * 7 + 3);
    }
    for (size_t i = 0; i < pages * PAGE; i++) {
        CHECK(p[i] == (uint8_t)(i * 7 + 3), "byte %zu reads 0x%x", i, p[i]);
    }
    /* Unmapping the middle leaves both ends usable. */
    EXPECT(zt_munmap(p + PAGE, (pages - 2) * PAGE), 0);
    p[0] = 1;
    p[(pages - 1) * PAGE] = 2;
    EXPECT(zt_munmap(p, PAGE), 0);
    EXPECT(zt_munmap(p + (pages - 1) * PAGE, PAGE), 0);

    EXPECT(zt_mmap(NULL, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -EINVAL);
    EXPECT(zt_mmap(NULL, PAGE, PROT_READ | PROT_WRITE, 0, -1, 0), -EINVAL);
    EXPECT(zt_mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_ANONYMOUS, -1, 0), -EINVAL);
    r = zt_mmap(NULL, 1ul << 46, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r == -ENOMEM || r == -EINVAL, "mmap of 64 TiB returned %s", ut_rstr(r));
    p = ut_map_pages(1);
    EXPECT(zt_munmap(p + 1, PAGE), -EINVAL);
    EXPECT(zt_munmap(p, 0), -EINVAL);
    EXPECT(zt_munmap(p, PAGE), 0);
}

static void test_mmap_fault(void)
{
    ut_expect_killed("unmapped", SIGSEGV);
}

static void test_mmap_cycles(void)
{
    uint64_t before = 0, after;

    for (int i = 0; i <= 100; i++) {
        uint8_t *p;

        if (i == 1) {
            before = ut_free_pages_settled(); /* after one warm-up cycle (page tables stay) */
        }
        p = ut_map_pages(8);
        p[0] = p[8 * PAGE - 1] = (uint8_t)i;
        EXPECT(zt_munmap(p, 8 * PAGE), 0);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before 100 mmap/munmap cycles, %llu after",
          (unsigned long long)before, (unsigned long long)after);
}

static void test_brk(void)
{
    uintptr_t cur = (uintptr_t)zt_brk(NULL), want = cur + 64 * 1024;
    uintptr_t first_page = (cur + PAGE - 1) & ~(PAGE - 1);
    volatile uint8_t *p = (volatile uint8_t *)cur;

    CHECK(cur > 0x400000 && cur < (1ul << 48), "brk(0) returned 0x%lx", (unsigned long)cur);
    EXPECT(zt_brk((void *)want), want);
    for (size_t i = 0; i < want - cur; i++) {
        p[i] = (uint8_t)i;
    }
    for (size_t i = 0; i < want - cur; i++) {
        CHECK(p[i] == (uint8_t)i, "heap byte %zu reads 0x%x", i, p[i]);
    }
    EXPECT(zt_brk((void *)cur), cur);
    EXPECT(zt_brk((void *)want), want);
    for (uintptr_t a = first_page; a < want; a++) {
        CHECK(*(volatile uint8_t *)a == 0, "regrown heap at 0x%lx reads 0x%x", (unsigned long)a,
              *(volatile uint8_t *)a);
    }
    EXPECT(zt_brk((void *)cur), cur);
    /* Failures leave the break where it was (Linux semantics). */
    EXPECT(zt_brk((void *)(cur + (1ul << 46))), cur);
    EXPECT(zt_brk((void *)0x1000), cur);
}

static void test_brk_fault(void)
{
    ut_expect_killed("brk-shrunk", SIGSEGV);
}

static void test_malloc(void)
{
    enum { N = 200 };
    static uint8_t *blocks[N];
    uint8_t *big = malloc(1 << 20);

    CHECK(big != NULL, "malloc(1 MiB) failed");
    memset(big, 0x5a, 1 << 20);
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc((size_t)(i * 37 + 1));
        CHECK(blocks[i] != NULL, "malloc(%d) failed", i * 37 + 1);
        memset(blocks[i], i, (size_t)(i * 37 + 1));
    }
    for (int i = 0; i < N; i++) {
        CHECK(blocks[i][i * 37] == (uint8_t)i, "block %d corrupted", i);
        free(blocks[i]);
    }
    CHECK(big[12345] == 0x5a, "big block corrupted");
    free(big);
}

/* ---------------------------------------------------------------- tests: threads */

struct thread_arg {
    int index;
    int cpu_wanted;
    int cpu_seen;
    int tid;
    int pid;
    int *counter;
};

static long counting_fn(void *p)
{
    struct thread_arg *a = p;

    a->tid = (int)zt_gettid();
    a->pid = (int)zt_getpid();
    a->cpu_seen = zt_cpu();
    for (int i = 0; i < 10000; i++) {
        __atomic_fetch_add(a->counter, 1, __ATOMIC_RELAXED);
    }
    return 1000 + a->index;
}

static void test_threads(void)
{
    enum { N = 4 };
    struct thread_arg args[N];
    zt_thread_t *threads[N];
    int counter = 0, n = ut_nr_cpus();
    long pid = zt_getpid();

    for (int i = 0; i < N; i++) {
        args[i] = (struct thread_arg){.index = i, .counter = &counter};
        args[i].cpu_wanted = n > 1 ? i % n : -1;
        threads[i] = zt_thread_create(counting_fn, &args[i], args[i].cpu_wanted);
        CHECK(threads[i] != NULL, "thread %d (CPU %d): create failed: %s", i, args[i].cpu_wanted,
              zt_errno_name(errno));
    }
    for (int i = 0; i < N; i++) {
        EXPECT(zt_thread_join(threads[i]), 1000 + i);
    }
    EXPECT(counter, N * 10000);
    for (int i = 0; i < N; i++) {
        EXPECT(args[i].pid, pid);
        CHECK(args[i].tid > 0 && args[i].tid != pid, "thread %d has tid %d (pid %ld)", i,
              args[i].tid, pid);
        for (int j = 0; j < i; j++) {
            CHECK(args[i].tid != args[j].tid, "threads %d and %d share tid %d", j, i, args[i].tid);
        }
        if (args[i].cpu_wanted >= 0) {
            CHECK(args[i].cpu_seen == args[i].cpu_wanted, "thread %d ran on CPU %d, not %d", i,
                  args[i].cpu_seen, args[i].cpu_wanted);
        }
    }
}

static __thread int tls_value = 42; /* in .tdata: each thread starts with its own 42 */

static long tls_fn(void *p)
{
    int mine = (int)(uintptr_t)p;

    if (tls_value != 42) {
        return -1;
    }
    tls_value = mine;
    errno = mine;
    for (int i = 0; i < 100; i++) {
        zt_sched_yield();
        if (tls_value != mine || errno != mine) {
            return -2;
        }
    }
    return mine;
}

static void test_thread_tls(void)
{
    zt_thread_t *threads[4];
    int n = ut_nr_cpus();

    tls_value = 7;
    errno = 7;
    for (int i = 0; i < 4; i++) {
        threads[i] = zt_thread_create(tls_fn, (void *)(uintptr_t)(100 + i), n > 1 ? i % n : -1);
        CHECK(threads[i] != NULL, "create failed: %s", zt_errno_name(errno));
    }
    for (int i = 0; i < 4; i++) {
        EXPECT(zt_thread_join(threads[i]), 100 + i);
    }
    EXPECT(tls_value, 7);
    EXPECT(errno, 7);
}

static long nop_fn(void *p)
{
    return (long)(uintptr_t)p;
}

static void test_thread_cycles(void)
{
    uint64_t before = 0, after;
    int n = ut_nr_cpus();

    for (int i = 0; i <= 50; i++) {
        zt_thread_t *t;

        if (i == 1) {
            before = ut_free_pages_settled();
        }
        t = zt_thread_create(nop_fn, (void *)(uintptr_t)i, n > 1 ? i % n : -1);
        CHECK(t != NULL, "create %d failed: %s", i, zt_errno_name(errno));
        EXPECT(zt_thread_join(t), i);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before 50 thread create/join cycles, %llu after",
          (unsigned long long)before, (unsigned long long)after);
}

static void test_thread_exit_group(void)
{
    ut_expect_exit("thread-exit-group", NULL, 9);
}

/* ---------------------------------------------------------------- tests: futex */

static int futex_word;

static long futex_waiter_fn(void *p)
{
    long waits = 0;

    while (__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE) == 0) {
        long r = zt_futex_wait(&futex_word, 0, NULL);

        if (r != 0 && r != -EAGAIN && r != -EINTR) {
            return r;
        }
        waits++;
    }
    return waits;
}

static void test_futex(void)
{
    int word = 0;
    struct timespec ts = {0, (long)(20 * MS)};
    uint64_t t0;
    zt_thread_t *t;
    long r;

    EXPECT(zt_futex_wait(&word, 1, NULL), -EAGAIN);
    EXPECT(zt_futex_wake(&word, 1), 0);
    t0 = zt_now_ns();
    EXPECT(zt_futex_wait(&word, 0, &ts), -ETIMEDOUT);
    CHECK(zt_now_ns() - t0 >= 20 * MS, "futex timeout of 20 ms returned after %llu ns",
          (unsigned long long)(zt_now_ns() - t0));
    EXPECT(zt_futex_wait((int *)BADADDR, 0, NULL), -EFAULT);
    EXPECT(zt_futex_wait((int *)KADDR, 0, NULL), -EFAULT);
    EXPECT(zt_futex_wait((int *)((uintptr_t)&word + 1), 0, NULL), -EINVAL);
    r = zt_futex(&word, 99, 0, NULL);
    CHECK(r == -ENOSYS || r == -EINVAL, "futex op 99 returned %s", ut_rstr(r));

    /* A real wait and wake between two threads (the join would hang if the wake were lost). */
    futex_word = 0;
    t = zt_thread_create(futex_waiter_fn, NULL, ut_nr_cpus() > 1 ? 1 : -1);
    CHECK(t != NULL, "create failed: %s", zt_errno_name(errno));
    zt_sleep_ns(20 * MS);
    __atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
    r = zt_futex_wake(&futex_word, 1);
    CHECK(r == 0 || r == 1, "futex_wake(1) returned %s", ut_rstr(r));
    r = zt_thread_join(t);
    CHECK(r >= 0, "waiter's futex_wait returned %s", ut_rstr(r));
}

/* ---------------------------------------------------------------- tests: processes */

static void test_kill(void)
{
    long pid = ut_spawn_helper("sleep-ms", "1000000", 0);
    int status;

    zt_sleep_ns(10 * MS);
    EXPECT(zt_kill((int)pid, SIGKILL), 0);
    status = ut_wait_status(pid);
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL,
          "sleeper killed with SIGKILL: wait status 0x%x", status);
    EXPECT(zt_kill((int)pid, SIGKILL), -ESRCH); /* reaped: gone */

    pid = ut_spawn_helper("sleep-ms", "1000000", 0);
    EXPECT(zt_kill((int)pid, SIGTERM), 0);
    status = ut_wait_status(pid);
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGTERM,
          "sleeper killed with SIGTERM: wait status 0x%x", status);

    EXPECT(zt_kill(1000000, SIGKILL), -ESRCH);
    EXPECT(zt_kill((int)zt_getpid(), 999), -EINVAL);
    EXPECT(zt_kill((int)zt_getpid(), -1), -EINVAL);
}

static void test_kill_threads(void)
{
    uint64_t before = 0, after;

    for (int round = 0; round < 3; round++) {
        long pid;
        int status;

        if (round == 1) {
            before = ut_free_pages_settled();
        }
        pid = ut_spawn_helper("threads-sleep", NULL, 0);
        zt_sleep_ns(50 * MS);
        EXPECT(zt_kill((int)pid, SIGKILL), 0);
        status = ut_wait_status(pid);
        CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL,
              "4-thread sleeper killed with SIGKILL: wait status 0x%x", status);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before killing a 4-thread process, %llu after",
          (unsigned long long)before, (unsigned long long)after);
}

static void test_wait(void)
{
    static const int codes[] = {0, 1, 42, 255};
    char arg[8];
    int status = -1;
    long pid;

    EXPECT(zt_wait4(-1, &status, 0, NULL), -ECHILD);
    EXPECT(zt_wait4(-1, &status, WNOHANG, NULL), -ECHILD);
    EXPECT(zt_wait4(1, &status, 0, NULL), -ECHILD);
    EXPECT(zt_wait4(1000000, &status, 0, NULL), -ECHILD);

    pid = ut_spawn_helper("sleep-ms", "1000000", 0);
    EXPECT(zt_wait4((int)pid, &status, WNOHANG, NULL), 0);
    EXPECT(zt_kill((int)pid, SIGKILL), 0);
    EXPECT(zt_wait4((int)pid, &status, 0, NULL), pid);
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL, "wait status 0x%x", status);

    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        snprintf(arg, sizeof(arg), "%d", codes[i]);
        ut_expect_exit("exit", arg, codes[i]);
    }

    pid = ut_spawn_helper("exit", "3", 0);
    EXPECT(zt_wait4((int)pid, (int *)BADADDR, 0, NULL), -EFAULT);
    EXPECT(zt_wait4((int)pid, NULL, 0, NULL), pid); /* still there after the -EFAULT */

    pid = ut_spawn_helper("exit", "0", 0);
    EXPECT(zt_wait4((int)pid, &status, 0x1000, NULL), -EINVAL);
    EXPECT(zt_wait4(-1, &status, 0, NULL), pid);
}

/* Pid of a live orphaned usertests task (ppid 1, not the runner, not us), or 0. */
static int find_orphan(void)
{
    struct zt_task_info tasks[64];
    long n = zt_tasks(tasks, 64);

    CHECK(n > 0, "zt_tasks returned %s", ut_rstr(n));
    for (long i = 0; i < n && i < 64; i++) {
        if (tasks[i].pid != ut_runner_pid && tasks[i].pid != zt_getpid() && tasks[i].ppid == 1 &&
            strcmp(tasks[i].name, "usertests") == 0) {
            return tasks[i].pid;
        }
    }
    return 0;
}

static void test_orphan(void)
{
    uint64_t deadline;
    int orphan;

    /* The grandchild sleeps on after its parent exited: it must now belong to pid 1... */
    ut_expect_exit("orphan", NULL, 0);
    orphan = find_orphan();
    CHECK(orphan > 0, "no orphaned usertests task with ppid 1");
    /* ...which reaps it once it is killed (so it does not outlive this test either). */
    EXPECT(zt_kill(orphan, SIGKILL), 0);
    deadline = zt_now_ns() + 30000 * MS;
    while (find_orphan() == orphan) {
        CHECK(zt_now_ns() < deadline, "killed orphan pid %d still listed after 30 s", orphan);
        zt_sleep_ns(10 * MS);
    }
}

static void test_prctl(void)
{
    char name[ZT_NAME_LEN + 8];
    struct zt_task_info tasks[64];
    long n, pid = zt_getpid();
    bool seen = false;

    EXPECT(zt_prctl(9999, 0, 0, 0, 0), -EINVAL);
    EXPECT(zt_prctl(PR_SET_NAME, (unsigned long)"ut-renamed", 0, 0, 0), 0);
    memset(name, 'x', sizeof(name));
    EXPECT(zt_prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0), 0);
    CHECK(strcmp(name, "ut-renamed") == 0, "PR_GET_NAME gave \"%.16s\"", name);
    n = zt_tasks(tasks, 64);
    for (long i = 0; i < n && i < 64; i++) {
        if (tasks[i].tid == pid) {
            seen = strncmp(tasks[i].name, "ut-renamed", ZT_NAME_LEN) == 0;
        }
    }
    CHECK(seen, "zt_tasks does not show the new name for tid %ld", pid);
    EXPECT(zt_prctl(PR_SET_NAME, (unsigned long)"abcdefghijklmnopqrstuvwxyz", 0, 0, 0), 0);
    EXPECT(zt_prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0), 0);
    CHECK(strcmp(name, "abcdefghijklmno") == 0, "long name came back as \"%.24s\"", name);
    EXPECT(zt_prctl(PR_SET_NAME, BADADDR, 0, 0, 0), -EFAULT);
    EXPECT(zt_prctl(PR_GET_NAME, KADDR, 0, 0, 0), -EFAULT);
}

static void test_nosys(void)
{
    static const long numbers[] = {999, 1023, 2000, 100000, -1};

    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
        long r = zt_syscall6(numbers[i], 1, 2, 3, 4, 5, 6);

        CHECK(r == -ENOSYS, "syscall %ld returned %s, expected -ENOSYS", numbers[i], ut_rstr(r));
    }
}

static void test_markers(void)
{
    long pid = zt_getpid();

    EXPECT(zt_syscall6_mark_open(SYS_getpid, 0, 0, 0, 0, 0, 0), pid);
    EXPECT(zt_syscall6_mark_close(SYS_getpid, 0, 0, 0, 0, 0, 0), pid);
}

/* ---------------------------------------------------------------- tests: faults */

static void test_fault_null(void)
{
    ut_expect_killed("nullderef", SIGSEGV);
}

static void test_fault_kaddr(void)
{
    ut_expect_killed("kread", SIGSEGV);
}

static void test_fault_undef(void)
{
    ut_expect_killed("undef", SIGILL);
}

static void test_fault_sysreg(void)
{
    ut_expect_killed("sysreg", SIGILL);
}

static void test_fault_brk_insn(void)
{
    ut_expect_killed("brk-insn", SIGTRAP);
}

static void test_fault_ldxr_align(void)
{
    ut_expect_killed("ldxr-align", SIGBUS);
}

static void test_fault_text_write(void)
{
    ut_expect_killed("text-write", SIGSEGV);
}

static void test_fault_exec_data(void)
{
    ut_expect_killed("exec-data", SIGSEGV);
}

static void test_fault_stack_overflow(void)
{
    ut_expect_killed("stack-overflow", SIGSEGV);
}

/* ---------------------------------------------------------------- tests: spawn */

static void test_spawn_errors(void)
{
    char *argv[] = {"x", NULL};
    char *bad_argv[] = {"x", (char *)BADADDR, NULL};
    struct zt_spawn_attr attr = {{{0}}, 0, 0};
    static char long_path[5000];

    EXPECT(zt_spawn("/bin/does-not-exist", argv, 0), -ENOENT);
    EXPECT(zt_spawn("", argv, 0), -ENOENT);
    EXPECT(zt_spawn("/bin", argv, 0), -EACCES); /* a directory, as execve says */
    EXPECT(zt_spawn((char *)BADADDR, argv, 0), -EFAULT);
    EXPECT(zt_spawn((char *)KADDR, argv, 0), -EFAULT);
    EXPECT(zt_spawn(SELF, (char **)BADADDR, 0), -EFAULT);
    EXPECT(zt_spawn(SELF, bad_argv, 0), -EFAULT);
    EXPECT(zt_spawn_attr(SELF, argv, (struct zt_spawn_attr *)BADADDR), -EFAULT);
    attr.flags = 1;
    EXPECT(zt_spawn_attr(SELF, argv, &attr), -EINVAL);
    if (ut_nr_cpus() < 64) {
        EXPECT(zt_spawn(SELF, argv, 1ull << 63), -EINVAL);
    }
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[0] = '/';
    EXPECT(zt_spawn(long_path, argv, 0), -ENAMETOOLONG);
}

static void test_spawn_noexec(void)
{
    char *argv[] = {"x", NULL};

    /* Both files are put in the archive by the Makefile (initrd rule). */
    EXPECT(zt_spawn("/bin/notelf", argv, 0), -ENOEXEC);
    EXPECT(zt_spawn("/bin/badelf", argv, 0), -ENOEXEC);
}

#define ARGS_MANY 100

static void test_spawn_args(void)
{
    static char *argv[ARGS_MANY + 8];
    static char words[ARGS_MANY][8];
    int argc = 0;

    argv[argc++] = SELF;
    argv[argc++] = "-h";
    argv[argc++] = "args";
    argv[argc++] = "one";
    argv[argc++] = "two words";
    argv[argc++] = "";
    for (int i = 0; i < ARGS_MANY; i++) {
        snprintf(words[i], sizeof(words[i]), "w%d", i);
        argv[argc++] = words[i];
    }
    argv[argc] = NULL;
    /* main() of the child checks the vector and exits 0 only if it arrived intact. */
    EXPECT(ut_wait_status(zt_spawn(SELF, argv, 0)), 0);
}

static bool args_intact(int argc, char **argv)
{
    if (argc != ARGS_MANY + 6 || strcmp(argv[3], "one") != 0 || strcmp(argv[4], "two words") != 0 ||
        argv[5][0] != '\0' || argv[argc] != NULL) {
        return false;
    }
    for (int i = 0; i < ARGS_MANY; i++) {
        char w[8];

        snprintf(w, sizeof(w), "w%d", i);
        if (strcmp(argv[6 + i], w) != 0) {
            return false;
        }
    }
    return true;
}

static void test_spawn_affinity(void)
{
    int n = ut_nr_cpus();

    for (int cpu = 0; cpu < n; cpu++) {
        int status = ut_wait_status(ut_spawn_helper("cpu", NULL, 1ull << cpu));

        CHECK(zt_wifexited(status) && zt_wexitstatus(status) == cpu,
              "child spawned with affinity {%d}: wait status 0x%x", cpu, status);
    }
}

static void test_spawn_cycles(void)
{
    char *argv[] = {SELF, "-h", "exit", "0", NULL};
    uint64_t before, after;

    ut_expect_exit("exit", "0", 0); /* warm-up */
    before = ut_free_pages_settled();
    for (int i = 0; i < SPAWN_RUNS; i++) {
        long pid = zt_spawn(SELF, argv, 0);
        int status = -1;

        CHECK(pid > 0, "spawn %d returned %s", i, ut_rstr(pid));
        EXPECT(zt_wait((int)pid, &status), pid);
        CHECK(status == 0, "spawn %d: wait status 0x%x", i, status);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before %d spawn/exit/wait cycles, %llu after",
          (unsigned long long)before, SPAWN_RUNS, (unsigned long long)after);
}

/* ---------------------------------------------------------------- tests: Linux process model */

#define LX_RUNS 50

/* fork(): clone with only SIGCHLD; the child exits at once with status i. */
static void fork_exit_wait(int i)
{
    long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    int status = -1;

    if (pid == 0) {
        zt_exit_group(i & 0x7f);
    }
    CHECK(pid > 0, "fork %d returned %s", i, ut_rstr(pid));
    EXPECT(zt_wait((int)pid, &status), pid);
    CHECK(zt_wexitstatus(status) == (i & 0x7f), "fork %d: status 0x%x", i, status);
}

static void test_fork_cycles(void)
{
    uint64_t before, after;

    fork_exit_wait(0); /* warm-up */
    before = ut_free_pages_settled();
    for (int i = 0; i < LX_RUNS; i++) {
        fork_exit_wait(i);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before %d fork/exit/wait cycles, %llu after",
          (unsigned long long)before, LX_RUNS, (unsigned long long)after);
}

/* A child that maps one page in each of `n` 2 MiB regions spread over several GiB (each a
 * page table of its own, beyond what the kernel lists per address space when n is large),
 * unmaps every other one (their tables are given back at once), forks once, and exits. */
static void scattered_tables_child(int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t va =
            0x1000000000ull + (uint64_t)(i % 6) * (1ull << 30) + (uint64_t)i * (4ull << 20);
        long r = zt_mmap((void *)va, PAGE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (r != (long)va) {
            zt_exit_group(1);
        }
        *(volatile uint64_t *)va = va;
        if (i % 2 && zt_munmap((void *)va, PAGE) != 0) {
            zt_exit_group(2);
        }
    }
    fork_exit_wait(0);
    zt_exit_group(0);
}

/* Page tables of an address space are all given back, whether the kernel kept their list
 * (a few tables) or had to walk the tree (many), with some freed early by munmap. */
static void test_page_tables(void)
{
    static const int counts[] = {3, 40};
    uint64_t before, after;

    fork_exit_wait(0); /* warm-up */
    before = ut_free_pages_settled();
    for (unsigned k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
        int status = -1;

        if (pid == 0) {
            scattered_tables_child(counts[k]);
        }
        CHECK(pid > 0, "fork returned %s", ut_rstr(pid));
        EXPECT(zt_wait((int)pid, &status), pid);
        CHECK(status == 0, "child with %d scattered pages: status 0x%x", counts[k], status);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before, %llu after the scattered mappings",
          (unsigned long long)before, (unsigned long long)after);
}

/* A pipe with bytes still in it, both ends closed; a pipe2 with a bad pointer. */
static void pipe_cycle(void)
{
    int fds[2];

    EXPECT(zt_syscall2(SYS_pipe2, fds, 0), 0);
    EXPECT(zt_write(fds[1], "abc", 3), 3);
    EXPECT(zt_syscall1(SYS_close, fds[0]), 0);
    EXPECT(zt_write(fds[1], "x", 1), -EPIPE); /* SIGPIPE is ignored here (see below) */
    EXPECT(zt_syscall1(SYS_close, fds[1]), 0);
    EXPECT(zt_syscall2(SYS_pipe2, BADADDR, 0), -EFAULT);
    EXPECT(zt_syscall2(SYS_pipe2, fds, 0x7fff), -EINVAL);
}

static void test_pipe_cycles(void)
{
    uint64_t before, after;
    struct zt_sigaction ign = {(void (*)(int))1, 0, NULL, 0}; /* SIG_IGN */

    EXPECT(zt_rt_sigaction(SIGPIPE, &ign, NULL, 8), 0);
    pipe_cycle();
    before = ut_free_pages_settled();
    for (int i = 0; i < LX_RUNS; i++) {
        pipe_cycle();
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before %d pipe cycles, %llu after",
          (unsigned long long)before, LX_RUNS, (unsigned long long)after);
}

/* execve failures: each returns its error and leaves the calling process as it was. */
static void exec_failures(void)
{
    static const struct {
        const char *path;
        long err;
    } cases[] = {
        {"/no/such/file", -ENOENT}, {"/bin", -EACCES},         {"/etc/passwd", -EACCES},
        {"/bin/notelf", -ENOEXEC},  {"/bin/badelf", -ENOEXEC}, {"/dev/null", -EACCES},
        {"/bin/badphdr", -ENOEXEC},
    };
    char *argv[] = {"x", NULL};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        EXPECT(zt_syscall3(SYS_execve, cases[i].path, argv, NULL), cases[i].err);
    }
    EXPECT(zt_syscall3(SYS_execve, BADADDR, argv, NULL), -EFAULT);
    EXPECT(zt_syscall3(SYS_execve, SELF, BADADDR, NULL), -EFAULT);
}

static void test_exec_errors(void)
{
    uint64_t before, after;

    exec_failures();
    before = ut_free_pages_settled();
    for (int i = 0; i < 10; i++) {
        exec_failures();
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before failed execs, %llu after",
          (unsigned long long)before, (unsigned long long)after);
}

/* A file in /tmp written past a page, read, then removed while still open. */
static void tmp_cycle(void)
{
    static char buf[6000];
    int fd =
        (int)zt_syscall4(SYS_openat, -100, "/tmp/ut", 0101 | 01000 /* WRONLY|CREAT|TRUNC */, 0644);

    CHECK(fd >= 0, "open /tmp/ut: %s", ut_rstr(fd));
    EXPECT(zt_write(fd, buf, sizeof(buf)), (long)sizeof(buf));
    EXPECT(zt_syscall3(SYS_unlinkat, -100, "/tmp/ut", 0), 0);
    EXPECT(zt_write(fd, buf, 10), 10); /* still open: still writable */
    EXPECT(zt_syscall1(SYS_close, fd), 0);
    EXPECT(zt_syscall3(SYS_unlinkat, -100, "/tmp/ut", 0), -ENOENT);
    EXPECT(zt_syscall4(SYS_openat, -100, BADADDR, 0, 0), -EFAULT);
    EXPECT(zt_syscall4(SYS_openat, -100, "/bin/sh", 1 /* WRONLY */, 0), -EROFS);
    EXPECT(zt_syscall4(SYS_openat, -100, "/bin/sh/x", 0, 0), -ENOTDIR);
}

static void test_tmp_cycles(void)
{
    uint64_t before, after;

    tmp_cycle();
    before = ut_free_pages_settled();
    for (int i = 0; i < LX_RUNS; i++) {
        tmp_cycle();
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before %d /tmp cycles, %llu after",
          (unsigned long long)before, LX_RUNS, (unsigned long long)after);
}

/* ---------------------------------------------------------------- tests: zerotick calls */

static void test_tasks(void)
{
    struct zt_task_info tasks[64], one[2];
    long n = zt_tasks(NULL, 0), got, pid = zt_getpid();
    bool me = false, runner = false;

    CHECK(n >= 2, "zt_tasks(NULL, 0) returned %s", ut_rstr(n));
    EXPECT(zt_set_affinity(1ull << zt_cpu()), 0); /* so the CPU we compare with stays ours */
    got = zt_tasks(tasks, 64);
    CHECK(got >= 2, "zt_tasks returned %s", ut_rstr(got));
    for (long i = 0; i < got && i < 64; i++) {
        struct zt_task_info *t = &tasks[i];

        if (t->tid == pid) {
            me = true;
            CHECK(t->pid == pid && t->ppid == ut_runner_pid && t->state == 'R' &&
                      t->cpu == zt_cpu() && strcmp(t->name, "usertests") == 0,
                  "own entry: pid %d ppid %d state '%c' cpu %d name \"%.16s\"", t->pid, t->ppid,
                  t->state, t->cpu, t->name);
        }
        if (t->tid == ut_runner_pid) {
            runner = true;
            /* The runner polls wait4 between naps: any live state is possible. */
            CHECK(t->state != 0 && strchr("RrS", t->state) != NULL, "runner has state '%c'",
                  t->state);
        }
    }
    CHECK(me && runner, "own task %s, runner %s in the list of %ld", me ? "found" : "missing",
          runner ? "found" : "missing", got);
    memset(one, 0xa5, sizeof(one));
    got = zt_tasks(one, 1);
    CHECK(got >= 2, "zt_tasks(buf, 1) returned %s", ut_rstr(got));
    CHECK(((uint8_t *)&one[1])[0] == 0xa5, "zt_tasks(buf, 1) wrote past the first entry");
    EXPECT(zt_tasks((struct zt_task_info *)BADADDR, 4), -EFAULT);
    EXPECT(zt_tasks((struct zt_task_info *)KADDR, 4), -EFAULT);
}

static void test_cpus(void)
{
    struct zt_cpu_info cpus[64], one[2];
    int n = ut_nr_cpus(), me;
    long got;
    uint64_t syscalls0;

    zt_set_affinity(1ull << (n - 1)); /* stay on one CPU so its counters are ours to watch */
    me = zt_cpu();
    got = zt_cpus(cpus, 64);
    EXPECT(got, n);
    for (int i = 0; i < n; i++) {
        CHECK(cpus[i].cpu == (uint32_t)i, "entry %d is CPU %u", i, cpus[i].cpu);
    }
    CHECK(cpus[0].online && !cpus[0].dataplane, "CPU 0: online %d dataplane %d", cpus[0].online,
          cpus[0].dataplane);
    CHECK(cpus[me].cur_pid == zt_getpid() && cpus[me].nr_running >= 1,
          "our CPU %d shows pid %d running, nr_running %u", me, cpus[me].cur_pid,
          cpus[me].nr_running);
    syscalls0 = cpus[me].syscalls;
    for (int i = 0; i < 10; i++) {
        zt_getpid();
    }
    EXPECT(zt_cpus(cpus, 64), n);
    CHECK(cpus[me].syscalls >= syscalls0 + 11, "CPU %d syscalls %llu, then %llu after 11 more", me,
          (unsigned long long)syscalls0, (unsigned long long)cpus[me].syscalls);
    memset(one, 0xa5, sizeof(one));
    EXPECT(zt_cpus(one, 1), n);
    CHECK(n == 1 || ((uint8_t *)&one[1])[0] == 0xa5, "zt_cpus(buf, 1) wrote past the entry");
    EXPECT(zt_cpus((struct zt_cpu_info *)BADADDR, 4), -EFAULT);
    EXPECT(zt_cpus((struct zt_cpu_info *)KADDR, 4), -EFAULT);
}

static void test_meminfo(void)
{
    struct zt_meminfo mi;

    EXPECT(zt_meminfo(&mi), 0);
    EXPECT(mi.page_size, PAGE);
    CHECK(mi.free_pages > 0 && mi.free_pages < mi.total_pages, "free %llu of %llu pages",
          (unsigned long long)mi.free_pages, (unsigned long long)mi.total_pages);
    EXPECT(zt_meminfo((struct zt_meminfo *)BADADDR), -EFAULT);
    EXPECT(zt_meminfo((struct zt_meminfo *)KADDR), -EFAULT);
}

static void test_uname(void)
{
    char buf[6 * 65];

    memset(buf, 0, sizeof(buf));
    EXPECT(zt_uname(buf), 0);
    CHECK(buf[0] != '\0', "uname: empty sysname");
    EXPECT(zt_uname((void *)BADADDR), -EFAULT);
}

static void test_ioctl(void)
{
    int pgrp = -1;
    long r;

    EXPECT(zt_ioctl(0, TIOCGPGRP, &pgrp), 0);
    CHECK(pgrp >= 0, "TIOCGPGRP gave %d", pgrp);
    EXPECT(zt_ioctl(5, TIOCGPGRP, &pgrp), -EBADF);
    EXPECT(zt_ioctl(0, TIOCGPGRP, (void *)BADADDR), -EFAULT);
    EXPECT(zt_ioctl(0, TIOCSPGRP, (void *)KADDR), -EFAULT);
    r = zt_ioctl(0, 0x1234, &pgrp);
    CHECK(r == -EINVAL || r == -ENOTTY, "ioctl 0x1234 returned %s", ut_rstr(r));
}

/* ---------------------------------------------------------------- tests: signals */

static volatile int last_signal;
static volatile int handler_tid;

static void record_signal(int sig)
{
    last_signal = sig;
    handler_tid = (int)zt_gettid();
}

static void helper_sigusr1_resethand(const char *arg)
{
    if (zt_signal(SIGUSR1, record_signal, ZT_SA_RESETHAND) != 0) {
        exit(100);
    }
    zt_kill((int)zt_getpid(), SIGUSR1); /* handled, and the handler is reset */
    if (last_signal != SIGUSR1) {
        exit(101);
    }
    zt_kill((int)zt_getpid(), SIGUSR1); /* default action now: terminate */
    exit(102);
}

#define DEEP_STACK (200 * 1024)

/* Deep in a stack frame of DEEP_STACK bytes whose pages the child has not touched: the kernel
 * copies into its lowest page, a signal frame is pushed below it, then every page is written
 * and read back by the task itself.  Exit status: 0, or which step failed. */
static __attribute__((noinline)) int deep_stack_child(void)
{
    volatile char deep[DEEP_STACK];
    int fds[2];

    if (zt_syscall2(SYS_pipe2, fds, 0) != 0 || zt_write(fds[1], "abc", 3) != 3 ||
        zt_read(fds[0], (char *)&deep[0], 3) != 3 || deep[0] != 'a' || deep[2] != 'c') {
        return 1; /* the kernel's copy into a stack page not yet populated */
    }
    last_signal = 0;
    if (zt_signal(SIGUSR1, record_signal, 0) != 0 || zt_kill((int)zt_getpid(), SIGUSR1) != 0 ||
        last_signal != SIGUSR1) {
        return 2; /* a signal frame pushed below a deep SP */
    }
    for (size_t i = DEEP_STACK; i >= PAGE; i -= PAGE) {
        deep[i - 1] = (char)(i / PAGE);
    }
    for (size_t i = DEEP_STACK; i >= PAGE; i -= PAGE) {
        if (deep[i - 1] != (char)(i / PAGE)) {
            return 3;
        }
    }
    return deep[1] == 'b' ? 0 : 4;
}

/* The main stack is populated at its top only and grows as it is touched (by the task, by the
 * kernel's copies, by signal frames), and a grown stack gives every page back at exit. */
static void test_stack_growth(void)
{
    uint64_t before, after;

    fork_exit_wait(0); /* warm-up */
    before = ut_free_pages_settled();
    for (int round = 0; round < 2; round++) {
        long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
        int status = -1;

        if (pid == 0) {
            zt_exit_group(deep_stack_child());
        }
        CHECK(pid > 0, "fork returned %s", ut_rstr(pid));
        EXPECT(zt_wait((int)pid, &status), pid);
        CHECK(status == 0, "deep stack child: status 0x%x (see deep_stack_child)", status);
    }
    after = ut_free_pages_settled();
    CHECK(after == before, "free pages %llu before, %llu after two grown stacks",
          (unsigned long long)before, (unsigned long long)after);
}

static void test_signal_handler(void)
{
    struct zt_sigaction old;

    EXPECT(zt_signal(SIGUSR1, record_signal, 0), 0);
    EXPECT(zt_kill((int)zt_getpid(), SIGUSR1), 0);
    EXPECT(last_signal, SIGUSR1);
    last_signal = 0;
    EXPECT(zt_tgkill((int)zt_getpid(), (int)zt_gettid(), SIGUSR1), 0);
    EXPECT(last_signal, SIGUSR1);
    EXPECT(zt_rt_sigaction(SIGUSR1, NULL, &old, 8), 0);
    CHECK(old.handler == record_signal, "old handler %p", (void *)(uintptr_t)old.handler);
    EXPECT(zt_signal(SIGKILL, record_signal, 0), -EINVAL);
    EXPECT(zt_signal(0, record_signal, 0), -EINVAL);
    EXPECT(zt_signal(65, record_signal, 0), -EINVAL);
    EXPECT(zt_rt_sigaction(SIGUSR1, (void *)BADADDR, NULL, 8), -EFAULT);
    EXPECT(zt_tgkill((int)zt_getpid(), 1000000, SIGUSR1), -ESRCH);
    ut_expect_killed("sigusr1-resethand", SIGUSR1);
    /* SIG_IGN: the signal is dropped. */
    EXPECT(zt_signal(SIGTERM, SIG_IGN, 0), 0);
    EXPECT(zt_kill((int)zt_getpid(), SIGTERM), 0);
}

static void test_signal_mask(void)
{
    uint64_t set = ZT_SIGBIT(SIGUSR2), old = ~0ull;

    EXPECT(zt_signal(SIGUSR2, record_signal, 0), 0);
    last_signal = 0;
    EXPECT(zt_rt_sigprocmask(ZT_SIG_BLOCK, &set, &old, 8), 0);
    EXPECT(old, 0);
    EXPECT(zt_kill((int)zt_getpid(), SIGUSR2), 0);
    EXPECT(last_signal, 0); /* blocked: pending */
    EXPECT(zt_rt_sigprocmask(ZT_SIG_UNBLOCK, &set, &old, 8), 0);
    EXPECT(old, set);
    EXPECT(last_signal, SIGUSR2); /* delivered on the way out of sigprocmask */
    EXPECT(zt_rt_sigprocmask(99, &set, NULL, 8), -EINVAL);
    EXPECT(zt_rt_sigprocmask(ZT_SIG_BLOCK, (void *)BADADDR, NULL, 8), -EFAULT);
}

static volatile int spin_until_signal;

static long spin_fn(void *p)
{
    *(volatile int *)p = (int)zt_gettid();
    while (spin_until_signal == 0) {
        zt_sched_yield();
    }
    return handler_tid;
}

static void test_signal_thread(void)
{
    volatile int tid = 0;
    zt_thread_t *t;

    EXPECT(zt_signal(SIGUSR1, record_signal, 0), 0);
    handler_tid = 0;
    t = zt_thread_create(spin_fn, (void *)&tid, ut_nr_cpus() > 1 ? 1 : -1);
    CHECK(t != NULL, "create failed: %s", zt_errno_name(errno));
    while (tid == 0) {
        zt_sched_yield();
    }
    EXPECT(zt_tgkill((int)zt_getpid(), tid, SIGUSR1), 0);
    while (handler_tid == 0) {
        zt_sched_yield();
    }
    spin_until_signal = 1;
    EXPECT(zt_thread_join(t), tid); /* the handler ran on the thread it was sent to */
}

/* ---------------------------------------------------------------- the suite */

static const struct utest tests[] = {
    {"write", test_write, 60},
    {"badfd", test_badfd, 60},
    {"badptr", test_badptr, 60},
    {"getpid", test_getpid, 60},
    {"regs", test_regs, 60},
    {"yield", test_yield, 60},
    {"getcpu", test_getcpu, 60},
    {"affinity", test_affinity, 60},
    {"nanosleep", test_nanosleep, 60},
    {"clock_nanosleep", test_clock_nanosleep, 60},
    {"clock_gettime", test_clock_gettime, 60},
    {"timespec_rule", test_timespec_rule, 60},
    {"hwnoise", test_hwnoise, 60},
    {"mmap", test_mmap, 60},
    {"mmap_fault", test_mmap_fault, 60},
    {"mmap_cycles", test_mmap_cycles, 120},
    {"brk", test_brk, 60},
    {"brk_fault", test_brk_fault, 60},
    {"malloc", test_malloc, 60},
    {"threads", test_threads, 60},
    {"thread_tls", test_thread_tls, 60},
    {"thread_cycles", test_thread_cycles, 120},
    {"thread_exit_group", test_thread_exit_group, 60},
    {"futex", test_futex, 60},
    {"kill", test_kill, 60},
    {"kill_threads", test_kill_threads, 60},
    {"wait", test_wait, 60},
    {"orphan", test_orphan, 60},
    {"prctl", test_prctl, 60},
    {"nosys", test_nosys, 60},
    {"markers", test_markers, 60},
    {"fault_null", test_fault_null, 60},
    {"fault_kaddr", test_fault_kaddr, 60},
    {"fault_undef", test_fault_undef, 60},
    {"fault_sysreg", test_fault_sysreg, 60},
    {"fault_brk_insn", test_fault_brk_insn, 60},
    {"fault_ldxr_align", test_fault_ldxr_align, 60},
    {"fault_text_write", test_fault_text_write, 60},
    {"fault_exec_data", test_fault_exec_data, 60},
    {"fault_stack_overflow", test_fault_stack_overflow, 60},
    {"spawn_errors", test_spawn_errors, 60},
    {"spawn_noexec", test_spawn_noexec, 60},
    {"spawn_args", test_spawn_args, 60},
    {"spawn_affinity", test_spawn_affinity, 60},
    {"spawn_cycles", test_spawn_cycles, 1200},
    {"fork_cycles", test_fork_cycles, 300},
    {"page_tables", test_page_tables, 60},
    {"stack_growth", test_stack_growth, 60},
    {"pipe_cycles", test_pipe_cycles, 60},
    {"exec_errors", test_exec_errors, 60},
    {"tmp_cycles", test_tmp_cycles, 60},
    {"tasks", test_tasks, 60},
    {"cpus", test_cpus, 60},
    {"meminfo", test_meminfo, 60},
    {"uname", test_uname, 60},
    {"ioctl", test_ioctl, 60},
    {"signal_handler", test_signal_handler, 60},
    {"signal_mask", test_signal_mask, 60},
    {"signal_thread", test_signal_thread, 60},
};

static int raw_helper(int argc, char **argv)
{
    if (strcmp(argv[2], "args") == 0) { /* needs the whole vector: not in helpers[] */
        return args_intact(argc, argv) ? 0 : 1;
    }
    return -1;
}

int main(int argc, char **argv)
{
    static const struct utest_suite suite = {
        .self = SELF,
        .tests = tests,
        .ntests = sizeof(tests) / sizeof(tests[0]),
        .helpers = helpers,
        .nhelpers = sizeof(helpers) / sizeof(helpers[0]),
        .raw_helper = raw_helper,
    };

    return utest_main(&suite, argc, argv);
}
