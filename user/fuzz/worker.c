/* SPDX-License-Identifier: MIT */
/*
 * worker.c — one life of a fuzz worker, and the victims it spawns.
 *
 * A life sets up its arena (pools.c), a SIGALRM no-op handler and a waker thread, then makes
 * its calls: draw (calls.c), shape (shapes.c), make, count.  The waker, a raw thread on its
 * own protected stack that uses no TLS, sends SIGALRM to the main thread when one call has
 * been blocked longer than KICK_NS (again every REKICK_NS while it stays blocked), so no
 * call the sandbox let through can block the life for good (the call returns -EINTR); the
 * report counts such calls as `kicks` (some were only slow, and ended by themselves).  When it is
 * done the life kills and reaps the children its calls spawned, prints its report and exits with
 * FZ_DONE_STATUS; a lethal draw prints the report first, marked with the call that ends the life.
 *
 * The report (tools/fuzzsum adds them up) counts the calls since the previous report:
 *   fuzz: life W.G seed 0xS calls N ok N filtered N kicks N end done|NAME
 *   fuzz: life W.G errors E=N ...          (as many lines as needed, each < 256 bytes)
 * A lethal call NAME is counted in `calls` but has no result (it may not return).
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#define KICK_NS       (50 * 1000000ull)
#define REKICK_NS     (500 * 1000000ull)
#define WAKER_STACK   (16 * 1024)
#define CLONE_STACK   2048
#define MAP_CAP_BYTES (8ull << 20) /* mappings a life keeps before it unmaps the oldest */

long zt_clone_thread(unsigned long flags, void *stack, int *ptid, void *tls, int *ctid,
                     void (*start)(void *), void *arg);
void fz_child_exit(void *slot);
long fz_forkish(long nr, long a0, long a1, long a2, long a3, long a4, long a5);

void fz_noop_handler(int sig)
{
}

/* ---------------------------------------------------------------- the waker */

static int waker_ctid;

static void waker_main(void *arg)
{
    struct fz_env *e = arg;
    struct timespec nap = {0, 5 * 1000000};

    uint64_t kicked_since = 0, kicked_at = 0;

    while (!__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE)) {
        zt_syscall2(SYS_nanosleep, &nap, 0);
        uint64_t since = __atomic_load_n(&e->call_since_ns, __ATOMIC_ACQUIRE), now = zt_now_ns();
        if (!since || now - since <= KICK_NS) {
            continue;
        }
        if (since != kicked_since) { /* a call blocked for KICK_NS: counted once */
            __atomic_fetch_add(&e->kicked, 1, __ATOMIC_RELAXED);
        } else if (now - kicked_at < REKICK_NS) {
            continue; /* the last kick did not end it (yet): try again later */
        }
        zt_syscall3(SYS_tgkill, e->pid, e->pid, SIGALRM);
        kicked_since = since, kicked_at = now;
    }
    zt_syscall1(SYS_exit, 0);
}

static void waker_start(struct fz_env *e)
{
    const unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
    static long m;
    if (!m) {
        m = zt_mmap(NULL, WAKER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m < 0) {
            zt_exit_group(3);
        }
        e->prot[e->nprot++] = (struct fz_range){(uint64_t)m, (uint64_t)m + WAKER_STACK};
    }
    e->stop = 0;
    waker_ctid = 1;
    long tid =
        zt_clone_thread(flags, (void *)(m + WAKER_STACK), NULL, NULL, &waker_ctid, waker_main, e);
    if (tid < 0) {
        zt_exit_group(3);
    }
    e->waker_tid = (int)tid;
}

static void waker_stop(struct fz_env *e)
{
    __atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&waker_ctid, __ATOMIC_ACQUIRE) != 0) {
        struct timespec ts = {0, 1000000};
        zt_futex_wait(&waker_ctid, waker_ctid, &ts);
    }
}

/* ---------------------------------------------------------------- counting */

static void count(struct fz_stats *st, long r)
{
    st->calls++;
    if (r >= 0 || r < -4095) {
        st->ok++; /* addresses from mmap are large positive; nothing returns below -4095 */
    } else if (-r < FZ_NERR) {
        st->err[-r]++;
    } else {
        st->err_other++;
    }
}

/* The counts since the last report, in lines of fewer than 256 bytes: the kernel writes a
 * console write of up to 256 bytes in one piece, so other CPUs' output cannot cut them. */
static void report(struct fz_env *e, const char *end)
{
    char line[256];
    int n = 0;

    printf("fuzz: life %d.%d seed 0x%llx calls %llu ok %llu filtered %llu kicks %ld end %s\n",
           e->worker, e->gen, (unsigned long long)e->seed, (unsigned long long)e->st.calls,
           (unsigned long long)e->st.ok, (unsigned long long)e->st.filtered, e->kicked, end);
    fflush(stdout);
    for (int i = 1; i <= FZ_NERR; i++) {
        bool last = i == FZ_NERR;
        uint64_t v = last ? e->st.err_other : e->st.err[i];
        if (v) {
            if (n == 0) {
                n = snprintf(line, sizeof(line), "fuzz: life %d.%d errors", e->worker, e->gen);
            }
            n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%llu",
                          last ? "other" : zt_errno_name(i), (unsigned long long)v);
        }
        if (n && (n > 200 || last)) {
            printf("%s\n", line);
            fflush(stdout);
            n = 0;
        }
    }
    zt_stdio_flush();
    memset(&e->st, 0, sizeof(e->st)); /* each report is the counts since the previous one */
    e->kicked = 0;
}

/* ---------------------------------------------------------------- after a call */

static void track_map(struct fz_env *e, uint64_t addr, uint64_t len)
{
    uint64_t total = len;
    if (addr >= 0x0000008000000000ull || len == 0 || len > (1ull << 32)) {
        return;
    }
    len = (len + FZ_PAGE - 1) & ~(FZ_PAGE - 1);
    for (int i = 0; i < e->nmaps; i++) {
        total += e->maps[i].hi - e->maps[i].lo;
    }
    while (e->nmaps && (e->nmaps == FZ_MAX_MAPS || total > MAP_CAP_BYTES)) {
        struct fz_range old = e->maps[0]; /* the oldest goes (memory stays bounded) */
        zt_munmap((void *)(uintptr_t)old.lo, old.hi - old.lo);
        total -= old.hi - old.lo;
        memmove(&e->maps[0], &e->maps[1], sizeof(e->maps[0]) * (size_t)--e->nmaps);
    }
    e->maps[e->nmaps++] = (struct fz_range){addr, addr + len};
}

static void end_child(struct fz_env *e, int i)
{
    int status;
    zt_kill(e->children[i], SIGKILL);
    zt_wait4(e->children[i], &status, 0, NULL);
    e->children[i] = e->children[--e->nchildren];
}

static void forget_child(struct fz_env *e, long pid)
{
    for (int i = 0; i < e->nchildren; i++) {
        if (e->children[i] == pid) {
            e->children[i] = e->children[--e->nchildren];
            return;
        }
    }
}

static void after(struct fz_env *e, const struct fz_call *call, const struct fz_args *c, long r)
{
    const char *n = call->name;
    fz_file_after(e, n, c, r);
    if (!strcmp(n, "mmap") && r > 0) {
        track_map(e, (uint64_t)r, c->a[1]);
    } else if (!strcmp(n, "zt_spawn") && r > 0) {
        if (e->nchildren == FZ_MAX_CHILDREN) {
            end_child(e, 0);
        }
        e->children[e->nchildren++] = (int)r;
    } else if (!strcmp(n, "wait4") && r > 0) {
        forget_child(e, r);
    } else if (!strcmp(n, "rt_sigprocmask")) {
        uint64_t alrm = ZT_SIGBIT(SIGALRM); /* the waker's signal stays deliverable */
        zt_rt_sigprocmask(ZT_SIG_UNBLOCK, &alrm, NULL, 8);
    }
}

/* ---------------------------------------------------------------- the call log */

/* -C: one console line before each call is made (so the last line of a stuck life names the
 * call it is in) and one with its result.  Each is a single write of fewer than 256 bytes,
 * which other CPUs' output cannot cut. */
static void log_call(struct fz_env *e, const char *name, const struct fz_args *c, long made)
{
    char line[256];
    int n = snprintf(
        line, sizeof(line), "fuzz: %d.%d call %ld %s(%ld) %llx %llx %llx %llx %llx %llx\n",
        e->worker, e->gen, made, name, c->nr, (unsigned long long)c->a[0],
        (unsigned long long)c->a[1], (unsigned long long)c->a[2], (unsigned long long)c->a[3],
        (unsigned long long)c->a[4], (unsigned long long)c->a[5]);
    zt_write(1, line, (size_t)n);
}

static void log_result(struct fz_env *e, long made, long r)
{
    char line[64];
    int n =
        snprintf(line, sizeof(line), "fuzz: %d.%d call %ld = %ld\n", e->worker, e->gen, made, r);
    zt_write(1, line, (size_t)n);
}

/* ---------------------------------------------------------------- making a call */

struct clone_slot {
    int done;
    int status;
};
static struct clone_slot slots[FZ_MAX_STACKS];

/* A free clone stack (the thread that used it marked it done), or -1. */
static int free_stack(struct fz_env *e)
{
    for (int i = 0; i < FZ_MAX_STACKS; i++) {
        if (__atomic_load_n(&slots[i].done, __ATOMIC_ACQUIRE)) {
            return i;
        }
    }
    return -1;
}

static long do_clone(struct fz_env *e, struct fz_args *c, int status, bool thread_only)
{
    int i = free_stack(e);
    uint64_t stack;
    if (c->a[1] && !thread_only) {
        /* a stack the shaper chose: no child can run on it (zt_clone_thread would store on
         * it first), so the raw call, which ends any child at once */
        return fz_forkish(SYS_clone, (long)c->a[0], (long)c->a[1], (long)c->a[2], (long)c->a[3],
                          (long)c->a[4], 0);
    }
    if (i < 0) {
        return -EAGAIN; /* every stack still in use: not a call */
    }
    stack = (uint64_t)(uintptr_t)e->stacks[i] + CLONE_STACK;
    if (thread_only) {
        c->a[0] = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    }
    slots[i].status = status;
    __atomic_store_n(&slots[i].done, 0, __ATOMIC_RELEASE);
    long r = zt_clone_thread(c->a[0], (void *)(uintptr_t)stack, (int *)(uintptr_t)c->a[2],
                             (void *)(uintptr_t)c->a[3], (int *)(uintptr_t)c->a[4], fz_child_exit,
                             &slots[i]);
    if (r <= 0 || !(c->a[0] & CLONE_VM)) {
        __atomic_store_n(&slots[i].done, 1, __ATOMIC_RELEASE); /* no thread shares it */
    }
    return r;
}

static long make(struct fz_env *e, const struct fz_call *call, struct fz_args *c, enum fz_plan plan)
{
    const uint64_t *a = c->a;
    switch (plan) {
    case FZ_PLAN_CLONE:
        return do_clone(e, c, 0, false);
    case FZ_PLAN_EXIT_THR:
        return do_clone(e, c, (int)a[0], true) > 0 ? 0 : -EAGAIN;
    default:
        if (plan == FZ_PLAN_LETHAL && c->nr == SYS_clone && !(a[0] & CLONE_THREAD)) {
            return do_clone(e, c, 0, false); /* a child whose exit signal ends the life */
        }
        if (fz_is_forkish(call->name)) {
            return fz_forkish(c->nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4],
                              (long)a[5]);
        }
        return zt_syscall6(c->nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4],
                           (long)a[5]);
    }
}

/* In isolation mode, now and then a draw heads for the dataplane paths on purpose. */
static const struct fz_call *steer_isolation(struct fz_env *e, const struct fz_call *table, int n,
                                             struct fz_args *c)
{
    static const struct fz_call setaff = {SYS_sched_setaffinity, "sched_setaffinity", NULL};
    static const struct fz_call prctl = {SYS_prctl, "prctl", NULL};
    struct fz_rng *r = &e->rng;
    uint64_t *mask = (uint64_t *)(uintptr_t)fz_buf(e, 8, 0);
    int cpu;

    memset(c->a, 0, sizeof(c->a));
    switch (fz_below(r, 4)) {
    case 0: /* onto one dataplane CPU */
        for (cpu = (int)fz_below(r, 64); !(e->dataplane >> cpu & 1); cpu = (cpu + 1) % 64) {
        }
        *mask = 1ull << cpu;
        c->nr = SYS_sched_setaffinity, c->a[1] = 8, c->a[2] = (uint64_t)(uintptr_t)mask;
        return &setaff;
    case 1: /* back to every CPU */
        *mask = e->online;
        c->nr = SYS_sched_setaffinity, c->a[1] = 8, c->a[2] = (uint64_t)(uintptr_t)mask;
        return &setaff;
    case 2: /* isolate, strict (SIGALRM: handled) half of the time */
        c->nr = SYS_prctl, c->a[0] = PR_SET_TASK_ISOLATION;
        c->a[1] =
            PR_TASK_ISOLATION_ENABLE |
            (fz_chance(r, 1, 2) ? PR_TASK_ISOLATION_STRICT | PR_TASK_ISOLATION_SET_SIG(SIGALRM)
                                : 0);
        return &prctl;
    default:
        c->nr = SYS_prctl, c->a[0] = PR_SET_TASK_ISOLATION, c->a[1] = 0;
        return &prctl;
    }
}

/* One draw; true if it made a system call (a filtered draw makes none). */
static bool one_call(struct fz_env *e, const struct fz_call *table, int n)
{
    struct fz_args c;
    const struct fz_call *call;
    enum fz_plan plan;

    if (e->isolation && e->dataplane && fz_chance(&e->rng, 1, 12)) {
        call = steer_isolation(e, table, n, &c);
        plan = FZ_PLAN_CALL;
    } else {
        call = fz_pick(e, table, n, &c);
        plan = fz_shape(e, call, &c);
    }
    if (plan == FZ_PLAN_FILTER) {
        e->st.filtered++;
        return false;
    }
    if (plan == FZ_PLAN_LETHAL) {
        e->st.calls++; /* counted now, with no result: there may be no after */
        report(e, call->name);
        waker_stop(e); /* nothing may outlive the life: an exit() leaves only the waker */
    }
    if (e->log_calls) {
        log_call(e, call->name, &c, e->made);
    }
    __atomic_store_n(&e->call_since_ns, zt_now_ns(), __ATOMIC_RELEASE);
    long r = make(e, call, &c, plan);
    __atomic_store_n(&e->call_since_ns, 0, __ATOMIC_RELEASE);
    if (e->log_calls) {
        log_result(e, e->made, r);
    }
    if (plan == FZ_PLAN_LETHAL) {
        waker_start(e); /* it survived after all (refused, or the signal was ignored) */
        return true;
    }
    count(&e->st, r);
    after(e, call, &c, r);
    return true;
}

int fz_life(struct fz_env *e, long calls)
{
    static struct fz_call table[FZ_MAX_CALLS];
    int n = fz_calls_init(table, FZ_MAX_CALLS);

    e->rng.s = e->seed;
    e->pid = (int)zt_getpid();
    e->console_fds[0] = 7; /* 0, 1, 2 */
    zt_signal(SIGALRM, fz_noop_handler, 0);
    zt_signal(SIGPIPE, SIG_IGN, 0); /* a write to a pipe nobody reads: -EPIPE, not death */
    fz_arena_init(e);
    for (int i = 0; i < FZ_MAX_STACKS; i++) {
        e->stacks[i] = (uint8_t *)e->scratch; /* replaced just below */
    }
    long m = zt_mmap(NULL, FZ_MAX_STACKS * CLONE_STACK, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0) {
        return 3;
    }
    e->prot[e->nprot++] = (struct fz_range){(uint64_t)m, (uint64_t)m + FZ_MAX_STACKS * CLONE_STACK};
    for (int i = 0; i < FZ_MAX_STACKS; i++) {
        e->stacks[i] = (uint8_t *)(uintptr_t)m + i * CLONE_STACK;
        slots[i].done = 1;
    }
    waker_start(e);
    for (long draws = 0; e->made < calls; draws++) {
        if ((draws & 63) == 63) {
            fz_scratch_refill(e);
        }
        e->made += one_call(e, table, n);
    }
    waker_stop(e);
    while (e->nchildren) {
        end_child(e, 0);
    }
    report(e, "done");
    return FZ_DONE_STATUS;
}

/* ---------------------------------------------------------------- victims */

/* `fuzz -v`: a process the fuzzer spawns to have something to signal, move and wait for.
 * It sits in short system calls for 30 to 150 ms, then exits. */
int fz_victim(uint64_t seed)
{
    struct fz_rng r = {seed ^ (uint64_t)zt_getpid()};
    uint64_t end = zt_now_ns() + (30 + fz_below(&r, 120)) * 1000000ull;
    static int word;

    while (zt_now_ns() < end) {
        struct timespec ts = {0, (long)(1000000 + fz_below(&r, 4000000))};
        switch (fz_below(&r, 5)) {
        case 0:
            zt_nanosleep(&ts, NULL);
            break;
        case 1:
            zt_futex_wait(&word, 0, &ts);
            break;
        case 2:
            zt_sched_yield();
            break;
        case 3: {
            long m = zt_mmap(NULL, 16 * FZ_PAGE, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m > 0) {
                zt_munmap((void *)m, 16 * FZ_PAGE);
            }
            break;
        }
        default:
            zt_getpid();
        }
    }
    return 0;
}
