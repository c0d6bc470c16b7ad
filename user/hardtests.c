/* SPDX-License-Identifier: MIT */
/*
 * hardtests — the outside audit's findings (issue 9) as regression tests, one per bug, plus
 * the hostile shapes it used: a moved isolated sleeper, timers left behind, PROT_NONE,
 * refused munmap, signals to init, thread bursts, long mmaps, brk page by page, futex on bad
 * addresses, affinity storms, zombies, a huge console write, the PMU, page tables.
 *
 * Run by tests/qemu/test_hardening.py with dataplane CPUs (most tests need one: they say so
 * and fail when there is none).  Same runner as usertests (user/lib/utest.h): one process
 * per test, free pages and kernel stacks checked around the suite.
 */
#include "utest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SELF "/bin/hardtests"

static const int iso_on = PR_TASK_ISOLATION_ENABLE;
static const int iso_strict = PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT;

/* A handler that does nothing: a signal that has one is taken (an ignored one reaches no
 * sleeper and interrupts no CPU, SIG-13), so it ends a nap and IPIs its target's CPU. */
static void noop_handler(int sig)
{
}

static int need_dataplane(int from)
{
    int cpu = ut_dataplane_cpu(from);

    CHECK(cpu > 0, "this test needs a dataplane CPU (boot with dataplane=...)");
    return cpu;
}

/* Isolate the calling thread (already pinned to its dataplane CPU) with `flags`. */
static long isolate(int flags)
{
    long r = -EAGAIN;

    for (int i = 0; i < 50 && r == -EAGAIN; i++) {
        r = zt_prctl(PR_SET_TASK_ISOLATION, (unsigned long)flags, 0, 0, 0);
        if (r == -EAGAIN) {
            zt_sleep_ns(2 * UT_MS);
        }
    }
    return r;
}

static struct zt_isol_audit audit(int cpu)
{
    struct zt_isol_audit a;

    EXPECT(zt_syscall2(SYS_zt_isolstat, cpu, &a), 0);
    return a;
}

/* The state letter zt_tasks shows for tid ('?' if it is not listed). */
static char task_state(int tid, struct zt_task_info *out)
{
    static struct zt_task_info tasks[256];
    long n = zt_tasks(tasks, 256);

    for (long i = 0; i < n && i < 256; i++) {
        if (tasks[i].tid == tid) {
            if (out) {
                *out = tasks[i];
            }
            return tasks[i].state;
        }
    }
    return '?';
}

static void wait_until_asleep(int tid)
{
    for (int i = 0; i < 5000 && task_state(tid, NULL) != 'S'; i++) {
        zt_sleep_ns(UT_MS);
    }
    CHECK(task_state(tid, NULL) == 'S', "tid %d never went to sleep (state %c)", tid,
          task_state(tid, NULL));
}

static long set_affinity_of(int tid, uint64_t mask)
{
    return zt_sched_setaffinity(tid, sizeof(mask), &mask);
}

/* ---------------------------------------------------------------- bugs 1 and 2 */

struct moved_sleeper {
    int cpu;
    int isolated; /* prctl result, published */
    int go;       /* futex: the sleeper waits for 1 */
    long get_after_move;
    long disable;
};

static long moved_sleeper_fn(void *p)
{
    struct moved_sleeper *m = p;

    __atomic_store_n(&m->isolated, (int)isolate(iso_on) + 1000, __ATOMIC_RELEASE);
    zt_futex_wake(&m->isolated, 1);
    while (__atomic_load_n(&m->go, __ATOMIC_ACQUIRE) == 0) {
        zt_futex_wait(&m->go, 0, NULL);
    }
    m->get_after_move = zt_prctl(PR_GET_TASK_ISOLATION, 0, 0, 0, 0);
    m->disable = zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    return zt_cpu();
}

static long isolate_once_fn(void *p)
{
    long r = isolate(iso_on);

    zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    return r;
}

/* An isolated task asleep on its CPU is moved by another thread: its CPU is free at once,
 * it no longer reports isolation, and after it exits nothing names it (the audit found a
 * use-after-free: isolstat read the freed task through the CPU's stale slot). */
static void test_iso_moved_sleeper(void)
{
    int cpu = need_dataplane(1);
    struct moved_sleeper m = {.cpu = cpu};
    zt_thread_t *t = zt_thread_create(moved_sleeper_fn, &m, cpu);
    int tid;

    CHECK(t != NULL, "thread on CPU %d: %s", cpu, zt_errno_name(errno));
    tid = zt_thread_tid(t);
    while (__atomic_load_n(&m.isolated, __ATOMIC_ACQUIRE) == 0) {
        zt_futex_wait(&m.isolated, 0, NULL);
    }
    EXPECT(m.isolated - 1000, 0);
    wait_until_asleep(tid);
    EXPECT(audit(cpu).isolated, 1);
    EXPECT(set_affinity_of(tid, 1), 0); /* to CPU 0, while it sleeps */
    struct zt_isol_audit a = audit(cpu);
    CHECK(!a.isolated, "CPU %d still isolated for tid %d after its task was moved away", cpu,
          a.tid);
    __atomic_store_n(&m.go, 1, __ATOMIC_RELEASE);
    zt_futex_wake(&m.go, 1);
    EXPECT(zt_thread_join(t), 0); /* it woke on CPU 0 */
    EXPECT(m.get_after_move, 0);  /* moved: no longer isolated */
    EXPECT(m.disable, 0);
    for (int i = 0; i < 20; i++) { /* its memory is reused: the audit must not read it */
        free(malloc(4096));
        a = audit(cpu);
        CHECK(!a.isolated, "CPU %d names tid %d after tid %d exited", cpu, a.tid, tid);
    }
    t = zt_thread_create(isolate_once_fn, NULL, cpu);
    CHECK(t != NULL, "second thread: %s", zt_errno_name(errno));
    EXPECT(zt_thread_join(t), 0); /* the CPU can be isolated again */
}

/* ---------------------------------------------------------------- bug 3 */

struct napper {
    uint64_t ns;
    long result;
};

static long napper_fn(void *p)
{
    struct napper *n = p;
    struct timespec ts = {(time_t)(n->ns / 1000000000ull), (long)(n->ns % 1000000000ull)};

    n->result = zt_nanosleep(&ts, NULL);
    return zt_cpu();
}

struct strict_spin {
    uint64_t spin_ns;
    long enable;
    long get_at_end;
};

static long strict_spin_fn(void *p)
{
    struct strict_spin *s = p;

    s->enable = isolate(iso_strict);
    if (s->enable == 0) {
        uint64_t end = zt_now_ns() + s->spin_ns;
        while (zt_now_ns() < end) {
        }
        s->get_at_end = zt_prctl(PR_GET_TASK_ISOLATION, 0, 0, 0, 0);
        zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    }
    return 0;
}

/* A thread sleeps on the dataplane CPU, then is moved away while asleep: its sleep timer
 * must go with it.  A strict isolated task admitted on that CPU afterwards is not killed by
 * the timer when it expires (the fuzzer's 962 kills by `interrupt 27 (local timer)`). */
static void test_iso_foreign_timer(void)
{
    int cpu = need_dataplane(1);
    struct napper n = {.ns = 300 * UT_MS};
    struct strict_spin s = {.spin_ns = 1000 * UT_MS};
    zt_thread_t *sleeper = zt_thread_create(napper_fn, &n, cpu), *spinner;

    CHECK(sleeper != NULL, "sleeper on CPU %d: %s", cpu, zt_errno_name(errno));
    wait_until_asleep(zt_thread_tid(sleeper));
    EXPECT(set_affinity_of(zt_thread_tid(sleeper), 1), 0);
    struct zt_isol_audit a = audit(cpu);
    CHECK(a.ntimers == 0, "%u timers still queued on CPU %d after their sleeper moved away",
          a.ntimers, cpu);
    spinner = zt_thread_create(strict_spin_fn, &s, cpu);
    CHECK(spinner != NULL, "spinner on CPU %d: %s", cpu, zt_errno_name(errno));
    EXPECT(zt_thread_join(spinner), 0);
    EXPECT(s.enable, 0);
    EXPECT(s.get_at_end, iso_strict); /* still isolated after 1 s: nothing interrupted it */
    EXPECT(zt_thread_join(sleeper), 0);
    EXPECT(n.result, 0);
}

/* Admission refuses (-EAGAIN) while another task's timer is queued on the CPU: a sleeper
 * pinned there will wake there. */
static void test_iso_admission_timer(void)
{
    int cpu = need_dataplane(1);
    struct napper n = {.ns = 400 * UT_MS};
    zt_thread_t *sleeper = zt_thread_create(napper_fn, &n, cpu);
    long r;

    CHECK(sleeper != NULL, "sleeper on CPU %d: %s", cpu, zt_errno_name(errno));
    wait_until_asleep(zt_thread_tid(sleeper));
    EXPECT(zt_set_affinity(1ull << cpu), 0);
    r = zt_prctl(PR_SET_TASK_ISOLATION, (unsigned long)iso_strict, 0, 0, 0);
    zt_prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    EXPECT(zt_set_affinity(1), 0);
    EXPECT(r, -EAGAIN);
    EXPECT(zt_thread_join(sleeper), cpu);
}

/* ---------------------------------------------------------------- bug 4 */

static void helper_touch_none(const char *arg)
{
    long r = zt_mmap(NULL, UT_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (r < 0) {
        exit(100);
    }
    if (arg && arg[0] == 'w') {
        *(volatile char *)r = 1;
    } else {
        (void)*(volatile char *)r;
    }
    exit(0);
}

/* PROT_NONE memory can be neither read nor written, from user space or through the
 * kernel's copies. */
static void test_prot_none(void)
{
    long r = zt_mmap(NULL, 2 * UT_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct timespec ts;

    CHECK(r > 0, "mmap PROT_NONE returned %s", ut_rstr(r));
    EXPECT(zt_write(1, (void *)r, 1), -EFAULT);
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, (struct timespec *)r), -EFAULT);
    EXPECT(zt_nanosleep((struct timespec *)r, NULL), -EFAULT);
    EXPECT(zt_futex_wait((int *)r, 0, NULL), -EFAULT);
    EXPECT(zt_clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    EXPECT(zt_munmap((void *)r, 2 * UT_PAGE), 0);
    int status = ut_run_helper("touch-none", "r");
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGSEGV,
          "reading PROT_NONE: wait status 0x%x, expected SIGSEGV", status);
    status = ut_run_helper("touch-none", "w");
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGSEGV,
          "writing PROT_NONE: wait status 0x%x, expected SIGSEGV", status);
}

/* ---------------------------------------------------------------- bug 5 */

/* A munmap or mmap(MAP_FIXED) over a range that reaches the kernel's counter pages is
 * refused, and changes nothing: the user page just below stays mapped with its data. */
static void test_munmap_refused(void)
{
    uint64_t below = ZT_COUNTERS_VA - UT_PAGE;
    long r = zt_mmap((void *)below, UT_PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

    EXPECT(r, (long)below);
    *(volatile uint64_t *)below = 0x5a5a;
    EXPECT(zt_munmap((void *)below, 2 * UT_PAGE), -EINVAL);
    EXPECT(zt_write(1, (void *)below, 0), 0);
    CHECK(*(volatile uint64_t *)below == 0x5a5a, "the page below changed");
    r = zt_mmap((void *)below, 2 * UT_PAGE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    EXPECT(r, -EINVAL);
    CHECK(*(volatile uint64_t *)below == 0x5a5a, "the page below changed after MAP_FIXED");
    EXPECT(zt_munmap((void *)below, UT_PAGE), 0);
}

/* ---------------------------------------------------------------- bug 6 */

/* Init gets only the signals it handles, whichever call sends them. */
static void test_tgkill_init(void)
{
    EXPECT(zt_tgkill(1, 1, SIGKILL), 0);
    EXPECT(zt_tgkill(1, 1, SIGTERM), 0);
    EXPECT(zt_kill(1, SIGKILL), 0);
    zt_sleep_ns(50 * UT_MS);
    EXPECT(task_state(1, NULL) != '?', 1); /* pid 1 is still there (else: power-off) */
}

/* ---------------------------------------------------------------- bug 7 */

#define BURST_STACK 4096

struct burst {
    int go;      /* futex: threads wait for 1 */
    int started; /* how many are running */
};

static void burst_thread(void *p)
{
    struct burst *b = p;

    __atomic_fetch_add(&b->started, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&b->go, __ATOMIC_ACQUIRE) == 0) {
        zt_syscall4(SYS_futex, &b->go, FUTEX_WAIT, 0, 0);
    }
    zt_syscall1(SYS_exit, 0);
    for (;;) {
    }
}

long zt_clone_thread(unsigned long flags, void *stack, int *ptid, void *tls, int *ctid,
                     void (*start)(void *), void *arg);

/* n raw threads (one page of stack each, no TLS of their own) that wait, then exit together.
 * Returns how many clone() started. */
static int burst(int n)
{
    const unsigned long flags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_CHILD_CLEARTID;
    char *stacks = ut_map_pages((size_t)n);
    int *ctids = ut_map_pages(((size_t)n * sizeof(int) + UT_PAGE - 1) / UT_PAGE);
    struct burst b = {0, 0};
    int made = 0;

    for (; made < n; made++) {
        ctids[made] = -1;
        long r = zt_clone_thread(flags, stacks + (size_t)(made + 1) * BURST_STACK, NULL, NULL,
                                 &ctids[made], burst_thread, &b);
        if (r < 0) {
            ctids[made] = 0;
            break;
        }
    }
    __atomic_store_n(&b.go, 1, __ATOMIC_RELEASE);
    zt_futex_wake(&b.go, 1 << 30);
    for (int i = 0; i < made; i++) {
        while (__atomic_load_n(&ctids[i], __ATOMIC_ACQUIRE) != 0) {
            zt_futex_wait(&ctids[i], -1, NULL);
        }
    }
    zt_munmap(stacks, (size_t)n * UT_PAGE);
    zt_munmap(ctids, ((size_t)n * sizeof(int) + UT_PAGE - 1) / UT_PAGE * UT_PAGE);
    return made;
}

/* Bursts of threads beyond every internal cache (the stack slot queue held 1,024) give every
 * kernel stack and page table back: free pages and stacks return to their baseline. */
static void test_thread_bursts(void)
{
    const int n = 1500;
    uint64_t pages0, stacks0;

    EXPECT(burst(n), n); /* warm: the process's own tables for the stacks' mapping */
    pages0 = ut_free_pages_settled();
    stacks0 = ut_kstacks_settled();
    for (int round = 0; round < 3; round++) {
        EXPECT(burst(n), n);
        uint64_t pages = ut_free_pages_settled(), stacks = ut_kstacks_settled();
        CHECK(pages == pages0 && stacks == stacks0,
              "after burst %d of %d threads: %llu free pages (%llu before), %llu kernel "
              "stacks (%llu before)",
              round + 1, n, (unsigned long long)pages, (unsigned long long)pages0,
              (unsigned long long)stacks, (unsigned long long)stacks0);
    }
}

/* ---------------------------------------------------------------- bug 8 */

struct mapper {
    size_t bytes;
    int busy; /* 1 while the mmap call is under way */
    long result;
};

static long mapper_fn(void *p)
{
    struct mapper *m = p;

    __atomic_store_n(&m->busy, 1, __ATOMIC_RELEASE);
    m->result = zt_mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    __atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
    if (m->result > 0) {
        zt_munmap((void *)m->result, m->bytes);
    }
    return 0;
}

static uint64_t cpu_irqs(int cpu)
{
    return zt_counters_of((unsigned)cpu)->exc_irq;
}

/* A long mmap (a third of free memory, populated at once) runs with interrupts enabled: the
 * CPU that makes it takes the IPIs sent to it meanwhile (the audit saw 4.6 s without one).
 * And a request larger than free memory fails at once, changing nothing. */
static void test_mmap_irqs(void)
{
    int n = ut_nr_cpus();
    uint64_t free0 = ut_free_pages_settled();
    struct mapper m = {.bytes = (size_t)(free0 / 3) * UT_PAGE};
    zt_thread_t *t;
    int taken = 0, sends = 0;

    CHECK(n >= 2, "needs 2 CPUs");
    EXPECT(zt_signal(SIGURG, noop_handler, 0), 0);
    EXPECT(zt_mmap(NULL, (size_t)(free0 + 1024) * UT_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
           -ENOMEM);
    EXPECT(ut_free_pages_settled(), free0);
    EXPECT(zt_set_affinity(1), 0);
    t = zt_thread_create(mapper_fn, &m, 1);
    CHECK(t != NULL, "mapper on CPU 1: %s", zt_errno_name(errno));
    while (__atomic_load_n(&m.busy, __ATOMIC_ACQUIRE) == 0 && m.result == 0) {
    }
    while (__atomic_load_n(&m.busy, __ATOMIC_ACQUIRE) && taken < 4) {
        uint64_t before = cpu_irqs(1);
        zt_tgkill((int)zt_getpid(), zt_thread_tid(t), SIGURG); /* handled: kicks CPU 1 */
        sends++;
        while (__atomic_load_n(&m.busy, __ATOMIC_ACQUIRE) && cpu_irqs(1) == before) {
        }
        taken += __atomic_load_n(&m.busy, __ATOMIC_ACQUIRE) ? 1 : 0;
    }
    EXPECT(zt_thread_join(t), 0);
    CHECK(m.result > 0, "mmap of %zu bytes returned %s", m.bytes, ut_rstr(m.result));
    CHECK(taken >= 4, "CPU 1 took %d of %d interrupts sent while it populated %zu MiB", taken,
          sends, m.bytes >> 20);
}

/* brk grown one page per call makes one heap region, not one region per call. */
static void test_brk_merge(void)
{
    struct zt_task_info me;
    uintptr_t start = ((uintptr_t)zt_brk(NULL) + UT_PAGE - 1) & ~(UT_PAGE - 1);
    uint32_t regions0;

    EXPECT(task_state((int)zt_gettid(), &me) != '?', 1);
    regions0 = me.vm_regions;
    for (int i = 1; i <= 2048; i++) {
        EXPECT(zt_brk((void *)(start + (uintptr_t)i * UT_PAGE)), start + (uintptr_t)i * UT_PAGE);
    }
    EXPECT(task_state((int)zt_gettid(), &me) != '?', 1);
    CHECK(me.vm_regions <= regions0 + 1, "2048 page-by-page brk calls: %u regions (%u before)",
          me.vm_regions, regions0);
    EXPECT(zt_brk((void *)start), start);
}

/* ---------------------------------------------------------------- bug 9 */

static void test_futex_wake_fault(void)
{
    char *p = ut_map_pages(1);

    EXPECT(zt_futex_wake((int *)UT_BADADDR, 1), -EFAULT);
    EXPECT(zt_futex_wake((int *)UT_KADDR, 1), -EFAULT);
    EXPECT(zt_munmap(p, UT_PAGE), 0);
    EXPECT(zt_futex_wake((int *)p, 1), -EFAULT);
    EXPECT(zt_futex_wake((int *)(p + 1), 1), -EINVAL);
}

/* ---------------------------------------------------------------- bug 10 */

#define PINGERS 4
#define ROUNDS  3000

struct storm {
    int word[PINGERS]; /* futex per pinger: its turn when word == 1 */
    int done;
    int tids[PINGERS];
    long outside; /* the self-mover found itself outside the mask it had just set */
    long moves;   /* affinity changes made by the movers */
    uint64_t seed;
};

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

struct pinger {
    struct storm *s;
    int i;
};

/* Pass the token around the ring: wait for my word, hand it to the next pinger. */
static long pinger_fn(void *p)
{
    struct pinger *pg = p;
    struct storm *s = pg->s;
    int next = (pg->i + 1) % PINGERS;

    for (int r = 0; r < ROUNDS; r++) {
        while (__atomic_exchange_n(&s->word[pg->i], 0, __ATOMIC_ACQ_REL) == 0) {
            zt_futex_wait(&s->word[pg->i], 0, NULL);
        }
        __atomic_store_n(&s->word[next], 1, __ATOMIC_RELEASE);
        zt_futex_wake(&s->word[next], 1);
    }
    return 0;
}

/* Move the pingers at random, as fast as it can. */
static long mover_fn(void *p)
{
    struct storm *s = p;
    uint64_t seed = s->seed ^ (uint64_t)zt_gettid() * 0x9e3779b97f4a7c15ull;
    int n = ut_nr_cpus();
    uint64_t all = (n == 64) ? ~0ull : (1ull << n) - 1;

    while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
        uint64_t mask = next_rand(&seed) & all;
        int who = s->tids[next_rand(&seed) % PINGERS];
        if (mask && who && set_affinity_of(who, mask) == 0) {
            __atomic_fetch_add(&s->moves, 1, __ATOMIC_RELAXED);
        }
    }
    return 0;
}

/* Move myself at random (nobody else moves me) and check where I run: right after the call,
 * and after a sleep (the wakeup places me). */
static long self_mover_fn(void *p)
{
    struct storm *s = p;
    uint64_t seed = s->seed * 31 + 7;
    int n = ut_nr_cpus();
    struct timespec nap = {0, 100000};

    while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
        int cpu = (int)(next_rand(&seed) % (uint64_t)n);
        if (zt_set_affinity(1ull << cpu) != 0) {
            continue;
        }
        s->outside += zt_cpu() != cpu;
        zt_nanosleep(&nap, NULL);
        s->outside += zt_cpu() != cpu;
    }
    return 0;
}

/* Four threads pass a token through futexes while two others move them at random and a
 * third moves itself: no wakeup is lost (the ring would stop: the time limit kills the test)
 * and the self-mover always runs where it has just asked to. */
static void test_affinity_storm(void)
{
    static struct storm s;
    struct pinger pg[PINGERS];
    zt_thread_t *pingers[PINGERS], *movers[3];

    s.seed = 0x1234567ull + (uint64_t)zt_now_ns();
    for (int i = 0; i < PINGERS; i++) {
        pg[i] = (struct pinger){&s, i};
        pingers[i] = zt_thread_create(pinger_fn, &pg[i], -1);
        CHECK(pingers[i] != NULL, "pinger %d: %s", i, zt_errno_name(errno));
        s.tids[i] = zt_thread_tid(pingers[i]);
    }
    for (int i = 0; i < 3; i++) {
        movers[i] = zt_thread_create(i < 2 ? mover_fn : self_mover_fn, &s, -1);
        CHECK(movers[i] != NULL, "mover %d: %s", i, zt_errno_name(errno));
    }
    __atomic_store_n(&s.word[0], 1, __ATOMIC_RELEASE);
    zt_futex_wake(&s.word[0], 1);
    for (int i = 0; i < PINGERS; i++) {
        EXPECT(zt_thread_join(pingers[i]), 0);
    }
    __atomic_store_n(&s.done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++) {
        EXPECT(zt_thread_join(movers[i]), 0);
    }
    CHECK(s.outside == 0, "%ld times the self-mover ran outside the mask it had just set",
          s.outside);
    printf("affinity_storm: %d token passes, %ld moves\n", PINGERS * ROUNDS, s.moves);
}

/* ---------------------------------------------------------------- the timer race */

#define NAPS 50000

struct napper_race {
    int done;
    int tid;
    long naps;
};

static long short_napper_fn(void *p)
{
    struct napper_race *r = p;
    struct timespec ts = {0, 20000};

    uint64_t end = zt_now_ns() + 60000 * UT_MS; /* a slow CPU model naps fewer times */

    r->tid = (int)zt_gettid();
    for (long i = 0; i < NAPS && zt_now_ns() < end; i++) {
        zt_nanosleep(&ts, NULL); /* -EINTR or 0: either is fine */
        r->naps++;
    }
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return 0;
}

/* A thread naps 50,000 times (or for 60 s) while another sends it signals as fast as it can: a
 * sender reaching the sleeper's wait queue just after its timer ended the nap must find a
 * wait queue there, not a dead stack frame (the checked kernel panicked on the sender's
 * unlock; the release kernel wrote into the sleeper's stack).  The signal has a handler that
 * does nothing: an ignored one no longer reaches a sleeper (SIG-13). */
static void test_sleep_signal_race(void)
{
    static struct napper_race r;
    EXPECT(zt_signal(SIGURG, noop_handler, 0), 0);
    zt_thread_t *t = zt_thread_create(short_napper_fn, &r, 1);
    long sent = 0;

    CHECK(t != NULL, "napper: %s", zt_errno_name(errno));
    while (!__atomic_load_n(&r.tid, __ATOMIC_ACQUIRE)) {
    }
    while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
        long k = zt_tgkill((int)zt_getpid(), r.tid, SIGURG);
        if (k == -ESRCH && __atomic_load_n(&r.done, __ATOMIC_ACQUIRE)) {
            break; /* it finished and exited between our look and the call */
        }
        EXPECT(k, 0);
        sent++;
    }
    EXPECT(zt_thread_join(t), 0);
    CHECK(r.naps >= 500, "only %ld naps in 60 s", r.naps); /* slow hosts nap less */
    CHECK(sent > 1000, "only %ld signals sent", sent);
}

/* ---------------------------------------------------------------- other findings */

static long spin_fn(void *p)
{
    int *stop = p;

    while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
    }
    return zt_cpu();
}

/* sched_setaffinity on another thread returns once that thread has left the CPUs it may no
 * longer use (as on Linux). */
static void test_setaffinity_waits(void)
{
    int n = ut_nr_cpus(), stop = 0;
    zt_thread_t *t;
    struct zt_task_info ti;

    CHECK(n >= 3, "needs 3 CPUs");
    t = zt_thread_create(spin_fn, &stop, 1);
    CHECK(t != NULL, "spinner: %s", zt_errno_name(errno));
    for (int i = 0; i < 50; i++) {
        int to = 1 + (i + 1) % 2; /* 2, 1, 2, ... */
        EXPECT(set_affinity_of(zt_thread_tid(t), 1ull << to), 0);
        char st = task_state(zt_thread_tid(t), &ti);
        CHECK(ti.cpu == to || st != 'R', "move %d: spinner still running on CPU %d, asked %d", i,
              ti.cpu, to);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    EXPECT(zt_thread_join(t), 1);
}

/* Spawn children that exit at once, without reaping, until spawn refuses; returns how many. */
static long spawn_until_refused(void)
{
    char *argv[] = {SELF, "-h", "exit", NULL};
    long pid = 0, made = 0;

    while (made < 100000 && (pid = zt_spawn(SELF, argv, 0)) > 0) {
        made++;
    }
    EXPECT(pid, -EAGAIN);
    return made;
}

static void reap(long n)
{
    for (long i = 0; i < n; i++) {
        int status;
        EXPECT(zt_wait(-1, &status) > 0, 1);
    }
}

/* A process that never reaps its children cannot fill memory with zombies: spawn says
 * -EAGAIN at the limit (max_procs=), reaping gives everything back, and the limit is a
 * count of what exists, not of what was ever made. */
static void test_zombie_limit(void)
{
    uint64_t pages0 = ut_free_pages_settled();
    long made = spawn_until_refused();

    CHECK(made >= 8, "only %ld children before -EAGAIN", made);
    reap(made);
    EXPECT(ut_free_pages_settled(), pages0);
    EXPECT(spawn_until_refused(), made);
    reap(made);
    EXPECT(ut_free_pages_settled(), pages0);
}

static void helper_exit0(const char *arg)
{
    exit(0);
}

static void on_usr1(int sig)
{
}

static void helper_big_write(const char *arg)
{
    size_t n = 16ul << 20;
    char *buf = (char *)zt_mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    zt_signal(SIGUSR1, on_usr1, 0);
    /* NUL bytes: the console shows nothing, and the runner starts a new line after. */
    long r = zt_write(1, buf, n);
    exit(r > 0 && r < (long)n ? 0 : r == (long)n ? 3 : 4);
}

/* A huge console write (16 MiB: minutes of UART output) stops at a signal with a handler,
 * returning what it wrote, as a terminal write does on Linux; SIGKILL ends it too. */
static void test_write_interrupted(void)
{
    for (int sig = SIGUSR1; sig; sig = sig == SIGUSR1 ? SIGKILL : 0) {
        long pid = ut_spawn_helper("big-write", NULL, 0);
        zt_sleep_ns(1000 * UT_MS); /* it maps its buffer, then writes for minutes */
        EXPECT(zt_kill((int)pid, sig), 0);
        int status = ut_wait_status(pid);
        printf("\n");
        if (sig == SIGUSR1) {
            CHECK(zt_wifexited(status) && zt_wexitstatus(status) == 0,
                  "writer sent SIGUSR1: wait status 0x%x (exit 3: it wrote everything)", status);
        } else {
            CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL,
                  "writer sent SIGKILL: wait status 0x%x", status);
        }
    }
}

static void helper_pmu_write(const char *arg)
{
    __asm__ volatile("msr pmcr_el0, xzr; isb" ::: "memory"); /* would stop every counter */
    exit(0);
}

/* User space may read the PMU counters (bench does) but not reprogram them: they are shared
 * by every task on the CPU. */
static void test_pmu_readonly(void)
{
    uint64_t v;

    __asm__ volatile("mrs %0, pmevcntr0_el0" : "=r"(v));
    __asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
    ut_expect_killed("pmu-write", SIGILL);
}

/* Page tables of regions that are gone are freed at munmap, not only at exit. */
static void test_pagetables_freed(void)
{
    const uint64_t base = 0x4000000000ull, stride = 2ull << 20; /* one level-3 table each */
    uint64_t pages0 = ut_free_pages_settled();

    for (int i = 0; i < 64; i++) {
        void *want = (void *)(uintptr_t)(base + (uint64_t)i * stride);
        EXPECT(zt_mmap(want, UT_PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
               (long)(uintptr_t)want);
        EXPECT(zt_munmap(want, UT_PAGE), 0);
    }
    uint64_t pages = ut_free_pages_settled();
    CHECK(pages == pages0, "free pages %llu before 64 map/unmap at 2 MiB strides, %llu after",
          (unsigned long long)pages0, (unsigned long long)pages);
}

/* ---------------------------------------------------------------- issue 20 */

#define AT_FDCWD_ (-100)
#define BOMB      "/tmp/hb"

/* A file system call on a path from the working directory. */
static long path_call(long nr, const char *path, long a2, long a3)
{
    return zt_syscall4(nr, AT_FDCWD_, (long)path, a2, a3);
}

static long stat_path(const char *path)
{
    static char st[256];

    return path_call(SYS_newfstatat, path, (long)st, 0);
}

/* The link bomb of issue 20 in BOMB: l0 -> ".", lK -> "lJ/lJ/.../lJ" (J = K - 1, 84 times),
 * up to l7; `make` false removes it.  Following everything from l7 is 84^7 links. */
static void link_bomb(bool make)
{
    char path[32], target[256];

    for (int k = make ? 0 : 7; make ? k < 8 : k >= 0; k += make ? 1 : -1) {
        snprintf(path, sizeof(path), BOMB "/l%d", k);
        if (!make) {
            EXPECT(zt_syscall3(SYS_unlinkat, AT_FDCWD_, (long)path, 0), 0);
            continue;
        }
        size_t at = 0;
        strcpy(target, ".");
        for (int i = 0; k > 0 && i < 84; i++) {
            at += (size_t)snprintf(target + at, sizeof(target) - at, "%sl%d", i ? "/" : "", k - 1);
        }
        EXPECT(zt_syscall3(SYS_symlinkat, (long)target, AT_FDCWD_, (long)path), 0);
    }
    if (!make) {
        EXPECT(zt_syscall3(SYS_unlinkat, AT_FDCWD_, (long)BOMB, 0x200 /* AT_REMOVEDIR */), 0);
    }
}

/* Stat the bomb's top link for ever (each must be ELOOP); says it has started by making a
 * file after the first. */
static void helper_bomb_walker(const char *arg)
{
    for (long n = 0;; n++) {
        long r = stat_path(BOMB "/l7");
        if (r != -ELOOP) {
            exit(2);
        }
        if (n == 0) {
            long fd = path_call(SYS_openat, BOMB "/started", 0101 /* WRONLY|CREAT */, 0644);
            if (fd < 0) {
                exit(3);
            }
            zt_syscall1(SYS_close, fd);
        }
    }
}

/* HRD-20: the link bomb (issue 20, item 1): stat of its top link is ELOOP (after 40 links, as
 * on Linux), 40 links in one path are followed and the 41st is ELOOP, and a walker stat-ing
 * it in a loop dies of SIGKILL (before the fix one stat followed up to 84^7 links with the
 * file tree's lock held and interrupts masked: the killed walker lived on) */
static void test_link_bomb(void)
{
    char path[256];

    EXPECT(path_call(SYS_mkdirat, BOMB, 0755, 0), 0);
    link_bomb(true);
    EXPECT(stat_path(BOMB "/l0"), 0);
    for (int k = 1; k < 8; k++) {
        snprintf(path, sizeof(path), BOMB "/l%d", k);
        EXPECT(stat_path(path), -ELOOP);
    }
    for (int n = 40; n <= 41; n++) {
        size_t at = (size_t)snprintf(path, sizeof(path), BOMB);
        for (int i = 0; i < n; i++) {
            at += (size_t)snprintf(path + at, sizeof(path) - at, "/l0");
        }
        EXPECT(stat_path(path), n == 40 ? 0 : -ELOOP);
    }
    long pid = ut_spawn_helper("bomb-walker", NULL, 0);
    int polls = 0;
    while (stat_path(BOMB "/started") != 0 && polls < 20000) {
        zt_sleep_ns(UT_MS / 2);
        polls++;
    }
    CHECK(polls < 20000, "the walker never finished its first stat of the bomb");
    EXPECT(zt_kill((int)pid, SIGKILL), 0);
    int status = ut_wait_status(pid);
    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL,
          "bomb walker sent SIGKILL: wait status 0x%x", status);
    EXPECT(zt_syscall3(SYS_unlinkat, AT_FDCWD_, (long)BOMB "/started", 0), 0);
    link_bomb(false);
}

/* ---- interrupts during long calls (issue 20, item 6) ---- */

/* Interrupts `cpu` has acknowledged: its local timer's, and IPIs. */
static uint64_t timer_irqs(int cpu)
{
    return __atomic_load_n(&zt_counters_of((unsigned)cpu)->irq_timer, __ATOMIC_RELAXED);
}

static uint64_t ipi_irqs(int cpu)
{
    return __atomic_load_n(&zt_counters_of((unsigned)cpu)->irq_ipi, __ATOMIC_RELAXED);
}

/* A thread that sleeps 1 ms at a time on its CPU until `stop`: a local timer is due there at
 * most 1 ms after any moment it sleeps. */
struct ms_napper {
    int stop;
    long naps;
};

static long ms_napper_fn(void *p)
{
    struct ms_napper *n = p;

    while (!__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE)) {
        zt_sleep_ns(UT_MS);
        n->naps++;
    }
    return 0;
}

/* A long call made by thread `tid` on `cpu`, watched from another CPU: `progress` reads how
 * far it has got (it grows from `from` to `to` while the call does the work under test, and
 * only then); `busy` is set while the call runs. */
struct long_call {
    int cpu, tid;
    long (*progress)(void *arg);
    void *arg;
    long from, to;
    int *busy;
};

/* What irq_taken_mid_call saw: the progress at its two looks, and which interrupts rose. */
struct mid_call {
    long lo, hi;
    uint64_t timer, ipi;
};

static bool mid(const struct long_call *c, long p)
{
    return p > c->from && p < c->to;
}

/* Watch c until it ends: true if `cpu` acknowledged an interrupt between a look that saw the
 * call under way and a later one that saw it still under way (progress strictly between
 * from and to both times): an interrupt taken in the middle of the call's work, not before it
 * began or after it ended.  The first look reads the progress before the counts, the second
 * the counts before the progress, so both counts fall inside the work.  A local timer may be
 * due there (a napper); should none be taken in the first half of the work, the caller is
 * sent a signal (SIGURG, with a handler that does nothing: the caller installs it), whose
 * IPI its CPU takes as soon as its interrupts are unmasked. */
static bool irq_taken_mid_call(const struct long_call *c, struct mid_call *m)
{
    bool have_first = false, kicked = false;
    uint64_t t0 = 0, i0 = 0;

    m->lo = m->hi = -1;
    while (__atomic_load_n(c->busy, __ATOMIC_ACQUIRE)) {
        long p1 = c->progress(c->arg);
        uint64_t t = timer_irqs(c->cpu), i = ipi_irqs(c->cpu);
        long p2 = c->progress(c->arg);
        if (!have_first && mid(c, p1)) {
            have_first = true;
            t0 = t;
            i0 = i;
            m->lo = p1;
        } else if (have_first && !kicked && p2 > c->from + (c->to - c->from) / 2) {
            kicked = true;
            zt_tgkill((int)zt_getpid(), c->tid, SIGURG);
        }
        if (have_first && (t > t0 || i > i0) && mid(c, p2)) {
            m->hi = p2;
            m->timer = t - t0;
            m->ipi = i - i0;
            return true;
        }
    }
    return false;
}

#define BIGFILE       "/tmp/hw"
#define BIGFILE_BYTES (8ul << 20) /* all of /tmp (TMPFS_MAX_PAGES) */

struct writer {
    int fd;
    const char *buf;
    int busy, go, stop;
    long result;
};

static long writer_fn(void *p)
{
    struct writer *w = p;

    for (;;) {
        while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE)) {
            if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
                return 0;
            }
        }
        __atomic_store_n(&w->go, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w->busy, 1, __ATOMIC_RELEASE);
        w->result = zt_syscall4(SYS_pwrite64, w->fd, (long)w->buf, BIGFILE_BYTES, 0);
        __atomic_store_n(&w->busy, 0, __ATOMIC_RELEASE);
    }
}

static long file_size(void *arg)
{
    uint64_t st[16];

    return zt_syscall2(SYS_fstat, *(int *)arg, (long)st) == 0 ? (long)st[6] : -1;
}

/* HRD-21: an 8 MiB pwrite to /tmp (issue 20, item 6: the file tree's lock held with
 * interrupts masked for 30-48 ms) takes interrupts while it copies — the local timer a 1 ms
 * napper on its CPU keeps due, or the IPI of a signal sent to the writer once it is seen
 * under way: CPU 1 acknowledges one between two looks at the file's size that both see the
 * write under way.  Up to 5 writes; before the fix none took an interrupt before it had
 * copied everything. */
static void test_tmpfs_write_irqs(void)
{
    char *buf = ut_map_pages(BIGFILE_BYTES / UT_PAGE);
    struct ms_napper nap = {0, 0};
    int fd = (int)path_call(SYS_openat, BIGFILE, 0102 /* RDWR|CREAT */, 0644);
    struct writer w = {.fd = fd, .buf = buf};
    struct mid_call m = {-1, -1, 0, 0};
    bool taken = false;
    int round;

    CHECK(ut_nr_cpus() >= 2, "needs 2 CPUs");
    CHECK(fd >= 0, "open " BIGFILE ": %s", ut_rstr(fd));
    EXPECT(zt_signal(SIGURG, noop_handler, 0), 0); /* irq_taken_mid_call's kick */
    memset(buf, 'w', BIGFILE_BYTES);
    EXPECT(zt_set_affinity(1), 0);
    zt_thread_t *wt = zt_thread_create(writer_fn, &w, 1);
    zt_thread_t *nt = zt_thread_create(ms_napper_fn, &nap, 1);
    CHECK(wt && nt, "threads on CPU 1: %s", zt_errno_name(errno));
    struct long_call c = {1, zt_thread_tid(wt), file_size, &fd, 0, (long)BIGFILE_BYTES, &w.busy};
    for (round = 0; round < 5 && !taken; round++) {
        EXPECT(zt_syscall2(SYS_ftruncate, fd, 0), 0);
        __atomic_store_n(&w.go, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&w.go, __ATOMIC_ACQUIRE)) {
        }
        taken = irq_taken_mid_call(&c, &m);
        while (__atomic_load_n(&w.busy, __ATOMIC_ACQUIRE)) {
        }
        EXPECT(w.result, (long)BIGFILE_BYTES);
    }
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&nap.stop, 1, __ATOMIC_RELEASE);
    EXPECT(zt_thread_join(wt), 0);
    EXPECT(zt_thread_join(nt), 0);
    EXPECT(zt_syscall1(SYS_close, fd), 0);
    EXPECT(zt_syscall3(SYS_unlinkat, AT_FDCWD_, (long)BIGFILE, 0), 0);
    CHECK(taken,
          "in %d writes of %lu bytes CPU 1 took no interrupt while the write was under way "
          "(seen under way at %ld bytes)",
          round, BIGFILE_BYTES, m.lo);
    printf("tmpfs_write_irqs: CPU 1 took %llu timer and %llu IPI interrupts between %ld and %ld "
           "bytes written (write %d)\n",
           (unsigned long long)m.timer, (unsigned long long)m.ipi, m.lo, m.hi, round);
}

/* The pages mapped in this process's address space (zt_tasks' vm_pages of this thread). */
static long my_vm_pages(void *arg)
{
    struct zt_task_info me;

    return task_state((int)zt_gettid(), &me) != '?' ? (long)me.vm_pages : -1;
}

/* HRD-24: an anonymous mmap of a third of free memory (issue 20, item 6: 1 GiB wrote its
 * 262,144 page-table entries in one hold of the address-space lock, interrupts masked for
 * about 200 ms) takes interrupts while it maps — the local timer a 1 ms napper on its CPU
 * keeps due, or the IPI of a signal sent to the mapper once it is seen mapping: CPU 1
 * acknowledges one between two looks at the process's mapped pages that both see the
 * mapping under way.  Up to 5 mmaps; before the fix none took an interrupt between its
 * first entry and its last. */
static void test_mmap_map_irqs(void)
{
    uint64_t free0 = ut_free_pages_settled();
    struct mapper m = {.bytes = (size_t)(free0 / 3) * UT_PAGE};
    struct ms_napper nap = {0, 0};
    struct mid_call mc = {-1, -1, 0, 0};
    long base = 0;
    bool taken = false;
    int round;

    CHECK(ut_nr_cpus() >= 2, "needs 2 CPUs");
    EXPECT(zt_signal(SIGURG, noop_handler, 0), 0); /* irq_taken_mid_call's kick */
    EXPECT(zt_set_affinity(1), 0);
    zt_thread_t *nt = zt_thread_create(ms_napper_fn, &nap, 1);
    CHECK(nt != NULL, "napper on CPU 1: %s", zt_errno_name(errno));
    for (round = 0; round < 5 && !taken; round++) {
        m.busy = 0;
        m.result = 0;
        zt_thread_t *t = zt_thread_create(mapper_fn, &m, 1);
        CHECK(t != NULL, "mapper on CPU 1: %s", zt_errno_name(errno));
        while (__atomic_load_n(&m.busy, __ATOMIC_ACQUIRE) == 0 && m.result == 0) {
        }
        /* Every thread's stack is mapped by now: only the mmap moves the count, and only
         * once its pages are taken. */
        base = my_vm_pages(NULL);
        struct long_call c = {
            1,      zt_thread_tid(t), my_vm_pages, NULL, base, base + (long)(m.bytes / UT_PAGE),
            &m.busy};
        taken = irq_taken_mid_call(&c, &mc);
        EXPECT(zt_thread_join(t), 0);
        CHECK(m.result > 0, "mmap of %zu bytes returned %s", m.bytes, ut_rstr(m.result));
    }
    __atomic_store_n(&nap.stop, 1, __ATOMIC_RELEASE);
    EXPECT(zt_thread_join(nt), 0);
    CHECK(taken, "in %d mmaps of %zu MiB CPU 1 took no interrupt while the pages were being mapped",
          round, m.bytes >> 20);
    printf("mmap_map_irqs: CPU 1 took %llu timer and %llu IPI interrupts between %ld and %ld of "
           "%zu pages mapped (mmap %d)\n",
           (unsigned long long)mc.timer, (unsigned long long)mc.ipi, mc.lo - base, mc.hi - base,
           m.bytes / UT_PAGE, round);
}

/* ---- what a signal carries (issue 20: si_code, si_pid, si_uid) ---- */

#define SI_USER_  0
#define SI_QUEUE_ (-1)
#define SI_TKILL_ (-6)

/* An SA_SIGINFO handler where zt_signal takes a plain one (through void (*)(void), the cast
 * C allows between function types). */
#define INFO_HANDLER(h) ((void (*)(int))(void (*)(void))(h))

/* The last siginfo a handler got (as 32-bit words), and how many handlers ran. */
static volatile int32_t last_info[32];
static volatile long info_calls;

static void info_handler(int sig, void *info, void *uc)
{
    memcpy((void *)last_info, info, sizeof(last_info));
    info_calls++;
}

static void catch_with_info(int sig)
{
    EXPECT(zt_signal(sig, INFO_HANDLER(info_handler), ZT_SA_SIGINFO), 0);
}

/* Run `send` (which sends SIGUSR1 to this thread or process); the handler must have run once
 * with si_code `code`, si_pid `pid`, si_uid 0, si_value `value` and zeros past it: the words
 * from 8 on (offset 32) were the user stack's stale contents before the fix. */
static void expect_info(const char *what, long r, int code, int pid, uint64_t value)
{
    CHECK(r == 0, "%s returned %s", what, ut_rstr(r));
    CHECK(info_calls == 1, "%s: %ld handler calls", what, info_calls);
    uint64_t v = (uint32_t)last_info[6] | (uint64_t)(uint32_t)last_info[7] << 32;
    CHECK(last_info[0] == SIGUSR1 && last_info[2] == code && last_info[4] == pid &&
              last_info[5] == 0 && v == value,
          "%s: si_signo %d si_code %d si_pid %d si_uid %d si_value 0x%llx (want %d %d %d 0 0x%llx)",
          what, last_info[0], last_info[2], last_info[4], last_info[5], (unsigned long long)v,
          SIGUSR1, code, pid, (unsigned long long)value);
    for (int i = 8; i < 32; i++) {
        CHECK(last_info[i] == 0, "%s: siginfo word %d is 0x%x", what, i, last_info[i]);
    }
    info_calls = 0;
}

/* Fill the stack below us with a pattern, where the next signal frame goes. */
static __attribute__((noinline)) void dirty_stack(void)
{
    volatile char junk[4096];
    memset((char *)junk, 0x5a, sizeof(junk));
}

/* SIG-01: kill gives si_code SI_USER, tgkill and tkill (raise) SI_TKILL, each with the
 * sender's pid and uid 0 and nothing else set (before: si_code 0 for all, si_pid never
 * written: 0, -1, the stack's leftovers) */
static void test_siginfo_kill(void)
{
    int me = (int)zt_getpid();

    catch_with_info(SIGUSR1);
    dirty_stack();
    expect_info("kill", zt_kill(me, SIGUSR1), SI_USER_, me, 0);
    dirty_stack();
    expect_info("tgkill", zt_tgkill(me, (int)zt_gettid(), SIGUSR1), SI_TKILL_, me, 0);
    dirty_stack();
    expect_info("tkill", zt_syscall2(SYS_tkill, zt_gettid(), SIGUSR1), SI_TKILL_, me, 0);
    EXPECT(zt_syscall2(SYS_tkill, 0, SIGUSR1), -EINVAL);
    EXPECT(zt_syscall2(SYS_tkill, 99999, SIGUSR1), -ESRCH);
    EXPECT(zt_syscall2(SYS_tkill, zt_gettid(), 65), -EINVAL);
}

/* SIG-02: rt_sigqueueinfo and rt_tgsigqueueinfo deliver the caller's si_code, si_pid and
 * si_value; a code of the kernel's (>= 0) or SI_TKILL only to itself (-EPERM to another
 * process, as on Linux); -EFAULT, -EINVAL and -ESRCH in Linux's order (before: -ENOSYS) */
static void test_siginfo_queue(void)
{
    int me = (int)zt_getpid();
    int32_t info[32] = {0};

    catch_with_info(SIGUSR1);
    info[2] = SI_QUEUE_;
    info[4] = 1234;
    info[6] = 0x55667788;
    info[7] = 0x11223344;
    expect_info("rt_sigqueueinfo", zt_syscall3(SYS_rt_sigqueueinfo, me, SIGUSR1, (long)info),
                SI_QUEUE_, 1234, 0x1122334455667788ull);
    expect_info("rt_tgsigqueueinfo",
                zt_syscall4(SYS_rt_tgsigqueueinfo, me, zt_gettid(), SIGUSR1, (long)info), SI_QUEUE_,
                1234, 0x1122334455667788ull);
    info[2] = SI_USER_; /* to itself: allowed (the rest as given: Linux copies it too) */
    expect_info("rt_sigqueueinfo SI_USER to itself",
                zt_syscall3(SYS_rt_sigqueueinfo, me, SIGUSR1, (long)info), SI_USER_, 1234,
                0x1122334455667788ull);
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, 1, SIGUSR1, (long)info), -EPERM);
    info[2] = SI_TKILL_;
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, 1, SIGUSR1, (long)info), -EPERM);
    info[2] = SI_QUEUE_;
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, 1, 0, (long)info), 0); /* sig 0: checks only */
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, 99999, SIGUSR1, (long)info), -ESRCH);
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, me, 65, (long)info), -EINVAL);
    EXPECT(zt_syscall3(SYS_rt_sigqueueinfo, me, SIGUSR1, (long)UT_BADADDR), -EFAULT);
    EXPECT(zt_syscall4(SYS_rt_tgsigqueueinfo, me, 0, SIGUSR1, (long)info), -EINVAL);
    EXPECT(zt_syscall4(SYS_rt_tgsigqueueinfo, me, zt_gettid(), SIGUSR1, (long)UT_KADDR), -EFAULT);
    EXPECT(zt_syscall4(SYS_rt_tgsigqueueinfo, me, 99999, SIGUSR1, (long)info), -ESRCH);
    EXPECT(zt_syscall4(SYS_rt_tgsigqueueinfo, 1, zt_gettid(), SIGUSR1, (long)info), -ESRCH);
    CHECK(info_calls == 0, "%ld handler calls for refused sends", info_calls);
}

static volatile int32_t chld_info[32];

static void chld_handler(int sig, void *info, void *uc)
{
    memcpy((void *)chld_info, info, sizeof(chld_info));
}

static void helper_exit7(const char *arg)
{
    exit(7);
}

/* SIG-03: SIGCHLD says CLD_EXITED, the child's pid and its exit code */
static void test_siginfo_child(void)
{
    EXPECT(zt_signal(SIGCHLD, INFO_HANDLER(chld_handler), ZT_SA_SIGINFO), 0);
    long pid = ut_spawn_helper("exit7", NULL, 0);
    int status = ut_wait_status(pid);
    for (int i = 0; i < 1000 && chld_info[0] == 0; i++) {
        zt_sleep_ns(UT_MS); /* the teardown sends it on housekeeping, maybe after wait4 */
    }
    CHECK(zt_wifexited(status) && zt_wexitstatus(status) == 7, "wait status 0x%x", status);
    CHECK(chld_info[0] == SIGCHLD && chld_info[2] == 1 /* CLD_EXITED */ && chld_info[4] == pid &&
              chld_info[6] == 7,
          "SIGCHLD si_code %d si_pid %d si_status %d (want 1 %ld 7)", chld_info[2], chld_info[4],
          chld_info[6], pid);
}

/* A SIGSEGV handler that exits with 0 if si_code and si_addr are as the argument expects. */
static long fault_want_code;
static uint64_t fault_want_addr;

static void segv_handler(int sig, void *info, void *uc)
{
    const int32_t *w = info;
    uint64_t addr = (uint32_t)w[4] | (uint64_t)(uint32_t)w[5] << 32;
    exit(sig == SIGSEGV && w[2] == fault_want_code && addr == fault_want_addr ? 0 : 3);
}

static void helper_fault_info(const char *arg)
{
    char *p = arg && arg[0] == 'a' ? ut_map_pages(1) : (char *)UT_BADADDR;
    if (arg && arg[0] == 'a') {
        EXPECT(zt_syscall3(SYS_mprotect, (long)p, UT_PAGE, PROT_NONE), 0);
    }
    fault_want_code = arg && arg[0] == 'a' ? 2 /* SEGV_ACCERR */ : 1 /* SEGV_MAPERR */;
    fault_want_addr = (uint64_t)(uintptr_t)(p + 8);
    EXPECT(zt_signal(SIGSEGV, INFO_HANDLER(segv_handler), ZT_SA_SIGINFO), 0);
    *(volatile char *)(p + 8) = 1;
    exit(4);
}

/* SIG-04: a fault's siginfo has SEGV_MAPERR or SEGV_ACCERR and the faulting address */
static void test_siginfo_fault(void)
{
    ut_expect_exit("fault-info", "m", 0);
    ut_expect_exit("fault-info", "a", 0);
}

/* The spinner for SIG-05: x0 holds -512 (-ERESTARTSYS) across a loop of branches (so that
 * TCG, which takes interrupts between translated blocks, may interrupt it there), and must
 * still hold it after. */
struct x0_spin {
    int tid, stop;
    long loops, bad, hits;
};

static volatile long x0_hits;

static void x0_handler(int sig, void *info, void *uc)
{
    /* struct ucontext: the mcontext at 176, its x0 at 8 (arch/aarch64/context.c) */
    if (*(int64_t *)((char *)uc + 176 + 8) == -512) {
        x0_hits++;
    }
}

static long x0_spin_fn(void *p)
{
    struct x0_spin *s = p;

    s->tid = (int)zt_gettid();
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        long x;
        __asm__ volatile("mov x0, #-512\n\t"
                         "mov x3, #200\n\t"
                         "1: subs x3, x3, #1\n\t"
                         "b.ne 1b\n\t"
                         "mov %0, x0"
                         : "=r"(x)
                         :
                         : "x0", "x3", "cc");
        s->loops++;
        s->bad += x != -512;
    }
    return 0;
}

/* SIG-05: a handler that interrupted code holding -512 (-ERESTARTSYS) in x0 returns to it
 * intact.  Before the fix rt_sigreturn's return value (the restored x0) was taken for a
 * call to restart: the PC went back one instruction and x0 was replaced, after every such
 * handler (62 of 62 in the reproduction) */
static void test_sigreturn_keeps_x0(void)
{
    struct x0_spin s = {0, 0, 0, 0, 0};

    CHECK(ut_nr_cpus() >= 2, "needs 2 CPUs");
    EXPECT(zt_signal(SIGUSR2, INFO_HANDLER(x0_handler), ZT_SA_SIGINFO), 0);
    x0_hits = 0;
    zt_thread_t *t = zt_thread_create(x0_spin_fn, &s, 1);
    CHECK(t != NULL, "spinner: %s", zt_errno_name(errno));
    while (__atomic_load_n(&s.tid, __ATOMIC_ACQUIRE) == 0) {
    }
    for (int i = 0; i < 20000 && x0_hits < 20; i++) {
        zt_tgkill((int)zt_getpid(), s.tid, SIGUSR2);
        zt_sleep_ns(UT_MS / 10);
    }
    __atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
    EXPECT(zt_thread_join(t), 0);
    CHECK(x0_hits > 0, "no handler interrupted the spinner while x0 held -512");
    CHECK(s.bad == 0, "x0 changed under %ld of %ld loops (%ld handlers saw x0 = -512)", s.bad,
          s.loops, x0_hits);
    printf("sigreturn_keeps_x0: %ld handlers interrupted x0 = -512, %ld loops, %ld changed\n",
           x0_hits, s.loops, s.bad);
}

/* FD-20 (issue 20): lengths of 2^63 and SIZE_MAX are -EFAULT for read, write, pread64 and
 * pwrite64, as on Linux, whose vfs_read/vfs_write check the buffer's range (access_ok) before
 * the length's sign (before the fix: -EINVAL); the descriptor and its mode come first
 * (-EBADF); a buffer outside user space is -EFAULT even for 0 bytes; a vector whose length
 * is negative is -EINVAL (Linux's import_iovec) */
static void test_huge_lengths(void)
{
    static char buf[64];
    const uint64_t huge[] = {1ull << 63, ~0ull, (1ull << 63) + 4096};
    int fd = (int)path_call(SYS_openat, "/tmp/hl", 0102 /* RDWR|CREAT */, 0644);
    int rd = (int)path_call(SYS_openat, "/tmp/hl", 0 /* RDONLY */, 0);

    CHECK(fd >= 0 && rd >= 0, "open /tmp/hl: %s %s", ut_rstr(fd), ut_rstr(rd));
    for (int i = 0; i < 3; i++) {
        EXPECT(zt_syscall3(SYS_write, 1, (long)buf, (long)huge[i]), -EFAULT);
        EXPECT(zt_syscall3(SYS_write, fd, (long)buf, (long)huge[i]), -EFAULT);
        EXPECT(zt_syscall3(SYS_read, fd, (long)buf, (long)huge[i]), -EFAULT);
        EXPECT(zt_syscall4(SYS_pwrite64, fd, (long)buf, (long)huge[i], 0), -EFAULT);
        EXPECT(zt_syscall4(SYS_pread64, fd, (long)buf, (long)huge[i], 0), -EFAULT);
        EXPECT(zt_syscall3(SYS_write, rd, (long)buf, (long)huge[i]), -EBADF);
        EXPECT(zt_syscall3(SYS_write, 999, (long)buf, (long)huge[i]), -EBADF);
    }
    EXPECT(zt_syscall3(SYS_write, fd, (long)UT_KADDR, 0), -EFAULT);
    EXPECT(zt_syscall3(SYS_write, fd, (long)buf, 0), 0);
    EXPECT(zt_syscall3(SYS_write, fd, (long)buf, sizeof(buf)), sizeof(buf));
    uint64_t iov[2] = {(uint64_t)(uintptr_t)buf, 1ull << 63};
    EXPECT(zt_syscall3(SYS_writev, fd, (long)iov, 1), -EINVAL);
    EXPECT(zt_syscall1(SYS_close, fd), 0);
    EXPECT(zt_syscall1(SYS_close, rd), 0);
    EXPECT(zt_syscall3(SYS_unlinkat, AT_FDCWD_, (long)"/tmp/hl", 0), 0);
}

/* A strict isolated task named with control characters (ESC [2J clears a terminal, BEL
 * rings it, a newline would forge a line) breaks its isolation with a system call: the
 * kernel's report names it. */
static void helper_evil_name(const char *arg)
{
    static const char name[] = "ev\x1b[2J\x07il\nX"; /* 12 bytes: fits ZT_NAME_LEN */

    EXPECT(zt_prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0), 0);
    EXPECT(isolate(iso_strict), 0);
    zt_getpid(); /* a violation: killed, and reported */
    exit(5);
}

/* HRD-26 (issue 20): an isolation report prints a task's name with its control characters
 * escaped (pytest checks the console: the escaped name, and no raw ESC or BEL byte) */
static void test_isol_report_name(void)
{
    int cpu = need_dataplane(1);
    long pid = ut_spawn_helper("evil-name", NULL, 1ull << cpu);
    int status = ut_wait_status(pid);

    CHECK(zt_wifsignaled(status) && zt_wtermsig(status) == SIGKILL,
          "strict task's violation: wait status 0x%x", status);
    printf("isol_report_name: pid %ld\n", pid);
}

/* ---------------------------------------------------------------- signals that wait */

static volatile long usr1_handled;

static void count_usr1(int sig)
{
    usr1_handled++;
}

static uint64_t pending_set(void)
{
    uint64_t set = 0;

    EXPECT(zt_syscall2(SYS_rt_sigpending, &set, 8), 0);
    return set;
}

struct sender {
    int tid; /* whom to signal */
    int sig;
    long gap_ns;
};

static long send_after_fn(void *p)
{
    struct sender *s = p;

    zt_sleep_ns((uint64_t)s->gap_ns);
    return zt_tgkill((int)zt_getpid(), s->tid, s->sig);
}

/* One nap of 100 ms while another thread sends `sig` to the napper 10 ms in: 0 (slept it all)
 * or -EINTR. */
static long nap_while_signalled(int sig)
{
    struct sender s = {(int)zt_gettid(), sig, 10 * (long)UT_MS};
    struct timespec ts = {0, 100 * 1000000};
    zt_thread_t *t = zt_thread_create(send_after_fn, &s, -1);

    CHECK(t != NULL, "sender: %s", zt_errno_name(errno));
    long r = zt_nanosleep(&ts, NULL);
    EXPECT(zt_thread_join(t), 0);
    return r;
}

/* SIG-13 (issue 20, the fuzzer's stuck life): a signal the sleeper blocks, or one whose action
 * is to ignore it, does not end its sleep (Linux wakes a thread only for a signal it will take).
 * A blocked SIGUSR1 stays pending and is taken when unblocked; a handled one still ends the
 * nap with -EINTR. Before: every signal sent ended every wait of its target. */
static void test_blocked_signal_sleeps(void)
{
    uint64_t usr1 = ZT_SIGBIT(SIGUSR1), old = 0;

    EXPECT(zt_signal(SIGUSR1, count_usr1, 0), 0);
    EXPECT(zt_rt_sigprocmask(ZT_SIG_BLOCK, &usr1, &old, 8), 0);
    long r = nap_while_signalled(SIGUSR1);
    CHECK(r == 0, "nap with SIGUSR1 blocked: %s, want 0", ut_rstr(r));
    CHECK(pending_set() & usr1, "the blocked SIGUSR1 is not pending");
    CHECK(usr1_handled == 0, "SIGUSR1 handled while blocked");
    EXPECT(zt_rt_sigprocmask(ZT_SIG_SETMASK, &old, NULL, 8), 0);
    CHECK(usr1_handled == 1, "SIGUSR1 handled %ld times once unblocked, want 1", usr1_handled);

    r = nap_while_signalled(SIGURG); /* default action: ignore */
    CHECK(r == 0, "nap with SIGURG (ignored) sent: %s, want 0", ut_rstr(r));
    EXPECT(zt_signal(SIGWINCH, (void (*)(int))1 /* SIG_IGN */, 0), 0);
    r = nap_while_signalled(SIGWINCH);
    CHECK(r == 0, "nap with SIGWINCH (SIG_IGN) sent: %s, want 0", ut_rstr(r));

    r = nap_while_signalled(SIGUSR1); /* handled, not blocked: it ends the nap */
    CHECK(r == -EINTR, "nap with SIGUSR1 handled: %s, want EINTR", ut_rstr(r));
    CHECK(usr1_handled == 2, "SIGUSR1 handled %ld times, want 2", usr1_handled);
    printf("blocked_signal_sleeps: blocked and ignored signals left 3 naps whole\n");
}

struct vfork_child {
    int parent;
    int sig;
    int done; /* set by the child just before it exits: the parent must see it */
};

static uint8_t vfork_stack[16 * 1024] __attribute__((aligned(16)));

static void vfork_child_fn(void *p)
{
    struct vfork_child *c = p;
    struct timespec ts = {0, 50 * 1000000};

    zt_syscall2(SYS_kill, c->parent, c->sig);
    zt_syscall2(SYS_nanosleep, (long)&ts, 0); /* the parent must still wait */
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    zt_syscall1(SYS_exit_group, 0);
}

/* One vfork whose child signals its parent, naps, and exits: did the parent wait for it? */
static void vfork_signalled(int sig, const char *what)
{
    static struct vfork_child c;
    const unsigned long flags = CLONE_VM | 0x4000 /* CLONE_VFORK */ | SIGCHLD;
    int status = 0;

    c = (struct vfork_child){(int)zt_getpid(), sig, 0};
    long pid = zt_clone_thread(flags, vfork_stack + sizeof(vfork_stack), NULL, NULL, NULL,
                               vfork_child_fn, &c);
    CHECK(pid > 0, "vfork: %s", ut_rstr(pid));
    int done = __atomic_load_n(&c.done, __ATOMIC_ACQUIRE);
    EXPECT(zt_wait4((int)pid, &status, 0, NULL), pid);
    CHECK(done == 1, "vfork returned before its child exited (%s sent to the parent)", what);
}

/* SIG-14 (issue 20): a vfork parent waits until its child has exec'd or exited, whatever
 * signal comes meanwhile (Linux: a killable wait); the signal is taken afterwards. Before: any
 * signal ended the wait, and the parent ran on beside a child using its memory. */
static void test_vfork_waits(void)
{
    uint64_t usr2 = ZT_SIGBIT(SIGUSR2);

    usr1_handled = 0;
    EXPECT(zt_signal(SIGUSR1, count_usr1, 0), 0);
    vfork_signalled(SIGUSR1, "a handled SIGUSR1");
    CHECK(usr1_handled == 1, "SIGUSR1 handled %ld times after the vfork, want 1", usr1_handled);
    EXPECT(zt_rt_sigprocmask(ZT_SIG_BLOCK, &usr2, NULL, 8), 0);
    vfork_signalled(SIGUSR2, "a blocked SIGUSR2");
    CHECK(pending_set() & usr2, "the blocked SIGUSR2 is not pending");
    printf("vfork_waits: 2 vforks waited for their child\n");
}

static long sleep_forever_fn(void *p)
{
    for (;;) {
        zt_sleep_ns(1000 * UT_MS);
    }
    return 0;
}

/* execve from a process of two threads, with SIGURG blocked while the test sends it: the
 * exec must succeed (/bin/true exits 0); an execve that returns exits 100 + its errno. */
static void helper_exec_signalled(const char *arg)
{
    uint64_t urg = ZT_SIGBIT(SIGURG);
    char *argv[] = {"/bin/true", NULL};

    EXPECT(zt_rt_sigprocmask(ZT_SIG_BLOCK, &urg, NULL, 8), 0);
    zt_thread_t *t = zt_thread_create(sleep_forever_fn, NULL, -1);
    CHECK(t != NULL, "thread: %s", zt_errno_name(errno));
    while (!(pending_set() & urg)) { /* the test's signals are coming */
    }
    long r = zt_syscall3(SYS_execve, (long)argv[0], (long)argv, 0);
    exit(100 + (int)-r);
}

/* SIG-15 (issue 20, what left the fuzzer's life without its waker thread): an execve that has
 * told its other threads to exit waits for them with every signal blocked but SIGKILL;
 * signals that arrive then stay pending. Before: any signal sent to the process ended that
 * wait, execve returned -EINTR (Linux never does there), and the process went on with its
 * other threads gone. 40 execs, each under a stream of signals. */
static void test_exec_signalled(void)
{
    int failed = 0, bad = 0;
    long signals = 0;

    for (int i = 0; i < 40; i++) {
        long pid = ut_spawn_helper("exec-signalled", NULL, 0);
        int status = 0;
        long w;
        while ((w = zt_wait4((int)pid, &status, 1 /* WNOHANG */, NULL)) == 0) {
            long k = zt_kill((int)pid, SIGURG); /* -ESRCH once it has exited (a zombie) */
            CHECK(k == 0 || k == -ESRCH, "kill: %s", ut_rstr(k));
            signals += k == 0;
        }
        EXPECT(w, pid);
        if (!zt_wifexited(status) || zt_wexitstatus(status) != 0) {
            failed++;
            bad = status;
        }
    }
    CHECK(failed == 0, "%d of 40 execs failed (last wait status 0x%x: exit 100 + errno)", failed,
          bad);
    printf("exec_signalled: 40 execs under %ld signals, none failed\n", signals);
}

static volatile int chld_seen;

static void note_chld(int sig)
{
    chld_seen = 1;
}

/* SIG-16 (issue 20): kill of a zombie (exited, not yet reaped) succeeds and changes nothing, as
 * on Linux; once reaped the pid is -ESRCH. Before: -ESRCH at once (a harness that kills a
 * child and then reaps it saw an error). */
static void test_kill_zombie(void)
{
    chld_seen = 0;
    EXPECT(zt_signal(SIGCHLD, note_chld, 0), 0);
    long pid = ut_spawn_helper("exit7", NULL, 0);
    for (int i = 0; i < 5000 && !chld_seen; i++) {
        zt_sleep_ns(UT_MS); /* SIGCHLD comes once it is a zombie */
    }
    CHECK(chld_seen, "no SIGCHLD from the helper in 5 s");
    EXPECT(zt_kill((int)pid, 0), 0);
    EXPECT(zt_kill((int)pid, SIGKILL), 0);
    int status = ut_wait_status(pid);
    CHECK(zt_wifexited(status) && zt_wexitstatus(status) == 7, "wait status 0x%x, want exit 7",
          status);
    EXPECT(zt_kill((int)pid, 0), -ESRCH);
}

/* ---------------------------------------------------------------- the suite */

static const struct utest_helper helpers[] = {
    {"touch-none", helper_touch_none},         {"exit", helper_exit0},
    {"big-write", helper_big_write},           {"pmu-write", helper_pmu_write},
    {"bomb-walker", helper_bomb_walker},       {"exit7", helper_exit7},
    {"fault-info", helper_fault_info},         {"evil-name", helper_evil_name},
    {"exec-signalled", helper_exec_signalled},
};

static const struct utest tests[] = {
    {"iso_moved_sleeper", test_iso_moved_sleeper, 60},
    {"iso_foreign_timer", test_iso_foreign_timer, 60},
    {"iso_admission_timer", test_iso_admission_timer, 60},
    {"prot_none", test_prot_none, 60},
    {"munmap_refused", test_munmap_refused, 60},
    {"tgkill_init", test_tgkill_init, 60},
    {"thread_bursts", test_thread_bursts, 300},
    {"mmap_irqs", test_mmap_irqs, 120},
    {"brk_merge", test_brk_merge, 120},
    {"futex_wake_fault", test_futex_wake_fault, 60},
    {"affinity_storm", test_affinity_storm, 120},
    {"sleep_signal_race", test_sleep_signal_race, 120},
    {"setaffinity_waits", test_setaffinity_waits, 60},
    {"zombie_limit", test_zombie_limit, 600},
    {"write_interrupted", test_write_interrupted, 60},
    {"pmu_readonly", test_pmu_readonly, 60},
    {"pagetables_freed", test_pagetables_freed, 60},
    {"link_bomb", test_link_bomb, 60},
    {"tmpfs_write_irqs", test_tmpfs_write_irqs, 120},
    {"mmap_map_irqs", test_mmap_map_irqs, 300},
    {"siginfo_kill", test_siginfo_kill, 60},
    {"siginfo_queue", test_siginfo_queue, 60},
    {"siginfo_child", test_siginfo_child, 60},
    {"siginfo_fault", test_siginfo_fault, 60},
    {"sigreturn_keeps_x0", test_sigreturn_keeps_x0, 120},
    {"huge_lengths", test_huge_lengths, 60},
    {"isol_report_name", test_isol_report_name, 60},
    {"blocked_signal_sleeps", test_blocked_signal_sleeps, 60},
    {"vfork_waits", test_vfork_waits, 60},
    {"exec_signalled", test_exec_signalled, 120},
    {"kill_zombie", test_kill_zombie, 60},
};

int main(int argc, char **argv)
{
    static const struct utest_suite suite = {
        .self = SELF,
        .tests = tests,
        .ntests = sizeof(tests) / sizeof(tests[0]),
        .helpers = helpers,
        .nhelpers = sizeof(helpers) / sizeof(helpers[0]),
    };

    return utest_main(&suite, argc, argv);
}
