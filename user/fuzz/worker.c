/* SPDX-License-Identifier: MIT */
/*
 * worker.c — one life of a fuzz worker, and the victims it spawns.
 *
 * A life sets up its arena (pools.c), a SIGALRM no-op handler and a waker thread, then runs
 * programs (prog.h): short sequences of calls, each call shaped (shapes.c) from a random
 * stream of its own, made, counted.  A program is new (1..FZ_PROG_NEW calls drawn from the
 * kernel's table, calls.c) or, with -c, a mutation of one from the corpus: the programs
 * whose calls reached kernel code nobody had reached (the coverage kernel's zt_kcov says how
 * many blocks each run reached first).  Those join the corpus and its file (cover.c), which
 * every worker's lives read, so what one life found the others build on.
 *
 * Collide mode (syzkaller's): 1 program in `collide_den` runs once more at the same time in
 * FZ_COLLIDERS threads of the life, on the same descriptors, paths and mappings: each thread
 * makes its share of the calls, or all of them, at once with the others, to meet the races
 * a sequence never meets.  Calls that return twice, end a thread or the life, or start a
 * thread are left out of it.
 *
 * The waker, a raw thread on its own protected stack that uses no TLS, sends SIGALRM to any
 * thread of the life whose call has been blocked longer than KICK_NS (again every REKICK_NS
 * while it stays blocked), so no call the sandbox let through can block the life for good
 * (the call returns -EINTR); the report counts such calls as `kicks` (some were only slow,
 * and ended by themselves).  When it is done the life kills and reaps the children its calls
 * spawned, prints its report and exits with FZ_DONE_STATUS; a lethal draw prints the report
 * first, marked with the call that ends the life.
 *
 * The report (tools/fuzzsum adds them up) counts the calls since the previous report:
 *   fuzz: life W.G seed 0xS calls N ok N filtered N kicks N end done|NAME
 *   fuzz: life W.G errors E=N ...          (as many lines as needed, each < 256 bytes)
 *   fuzz: life W.G programs N collided N mutated N new-blocks N kept N
 * A lethal call NAME is counted in `calls` but has no result (it may not return).
 */
#include "uapi/zt_device.h"
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#define KICK_NS       (50 * 1000000ull)
#define REKICK_NS     (500 * 1000000ull)
#define WAKER_STACK   (16 * 1024)
#define CLONE_STACK   2048
#define MAP_CAP_BYTES (8ull << 20) /* mappings a life keeps before it unmaps the oldest */
#define COLLIDE_STACK (16 * 1024)

static uint8_t *collide_stacks; /* FZ_COLLIDERS + 1 stacks: the colliders', then a spare */

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
    uint64_t kicked_since[1 + FZ_COLLIDERS] = {0}, kicked_at[1 + FZ_COLLIDERS] = {0};

    while (!__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE)) {
        zt_syscall2(SYS_nanosleep, &nap, 0);
        for (int i = 0; i < 1 + FZ_COLLIDERS; i++) {
            uint64_t since = __atomic_load_n(&e->busy[i].since_ns, __ATOMIC_ACQUIRE);
            uint64_t now = zt_now_ns();
            int tid = __atomic_load_n(&e->busy[i].tid, __ATOMIC_RELAXED);
            if (!since || !tid || now - since <= KICK_NS) {
                continue;
            }
            if (since != kicked_since[i]) { /* a call blocked for KICK_NS: counted once */
                __atomic_fetch_add(&e->kicked, 1, __ATOMIC_RELAXED);
            } else if (now - kicked_at[i] < REKICK_NS) {
                continue; /* the last kick did not end it (yet): try again later */
            }
            zt_syscall3(SYS_tgkill, e->pid, tid, SIGALRM);
            kicked_since[i] = since, kicked_at[i] = now;
        }
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
    printf("fuzz: life %d.%d programs %llu collided %llu mutated %llu new-blocks %llu kept %llu\n",
           e->worker, e->gen, (unsigned long long)e->ps.progs, (unsigned long long)e->ps.collided,
           (unsigned long long)e->ps.mutated, (unsigned long long)e->ps.new_blocks,
           (unsigned long long)e->ps.kept);
    fflush(stdout);
    zt_stdio_flush();
    memset(&e->st, 0, sizeof(e->st)); /* each report is the counts since the previous one */
    memset(&e->ps, 0, sizeof(e->ps));
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
    } else if (!strcmp(n, "zt_kcov") && e->cover) {
        zt_kcov(ZT_KCOV_ENABLE, NULL, 0); /* a fuzzed DISABLE: this thread records again */
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

static void exec_thread(void *arg)
{
    for (;;) { /* until the execve ends every other thread of the process */
        struct timespec ts = {0, 10000000};
        zt_syscall2(SYS_nanosleep, &ts, 0);
    }
}

/* FZ_PLAN_EXEC_CHILD: a fork of the life makes the execve, after starting a thread of its own
 * when a[5] says so (the kernel then ends it at the exec); the life keeps the child to reap.
 * The child runs on its copy of the life's memory; it never returns from here. */
static long exec_in_child(struct fz_env *e, const struct fz_args *c)
{
    const unsigned long thread =
        CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    long pid = zt_syscall6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
    if (pid != 0) {
        if (pid > 0) {
            if (e->nchildren == FZ_MAX_CHILDREN) {
                end_child(e, 0);
            }
            e->children[e->nchildren++] = (int)pid;
        }
        return pid;
    }
    if (c->a[5] & 1) {
        zt_clone_thread(thread, collide_stacks + COLLIDE_STACK, NULL, NULL, NULL, exec_thread, 0);
    }
    long r = zt_syscall3(SYS_execve, (long)c->a[0], (long)c->a[1], (long)c->a[2]);
    zt_syscall1(SYS_exit_group, r < 0 ? 100 : 101);
    return 0;
}

static long make(struct fz_env *e, const struct fz_call *call, struct fz_args *c, enum fz_plan plan)
{
    const uint64_t *a = c->a;
    switch (plan) {
    case FZ_PLAN_EXEC_CHILD:
        return exec_in_child(e, c);
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

/* In isolation mode, a call that heads for the dataplane paths on purpose. */
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

/* Make one shaped call as its plan says; true if it made a system call (a filtered draw
 * makes none). */
static bool run_call(struct fz_env *e, const struct fz_call *call, struct fz_args *c,
                     enum fz_plan plan)
{
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
        log_call(e, call->name, c, e->made);
    }
    __atomic_store_n(&e->busy[0].since_ns, zt_now_ns(), __ATOMIC_RELEASE);
    long r = make(e, call, c, plan);
    __atomic_store_n(&e->busy[0].since_ns, 0, __ATOMIC_RELEASE);
    if (e->log_calls) {
        log_result(e, e->made, r);
    }
    if (plan == FZ_PLAN_LETHAL) {
        waker_start(e); /* it survived after all (refused, or the signal was ignored) */
        return true;
    }
    count(&e->st, r);
    after(e, call, c, r);
    return true;
}

/* ---------------------------------------------------------------- programs */

static const struct fz_call unknown = {-1, "unknown", NULL};

struct table {
    const struct fz_call *calls;
    int n;
};

static const struct fz_call *table_find(const struct table *t, long nr)
{
    for (int i = 0; i < t->n; i++) {
        if (t->calls[i].nr == nr) {
            return &t->calls[i];
        }
    }
    return &unknown;
}

/* The number of a new call: mostly one of the table, sometimes one outside it (calls.c). */
static int32_t pick_nr(struct fz_rng *r, void *ctx)
{
    const struct table *t = ctx;
    static struct fz_env tmp; /* fz_pick draws from an env's stream: lend it this one */
    struct fz_args c;
    tmp.rng = *r;
    fz_pick(&tmp, t->calls, t->n, &c);
    *r = tmp.rng;
    return (int32_t)c.nr;
}

/* Shape call pc of a program from its own stream (the life's is kept for the life's own
 * draws); records how many draws the shaping took, for mutations (prog.c). */
static const struct fz_call *shape_pcall(struct fz_env *e, const struct table *t,
                                         struct fz_pcall *pc, struct fz_args *c, enum fz_plan *plan)
{
    struct fz_rng life = e->rng;
    const struct fz_call *call = table_find(t, pc->nr);
    e->rng = fz_pcall_rng(pc);
    c->nr = pc->nr;
    *plan = fz_shape(e, call, c);
    pc->ndraws = (uint16_t)(e->rng.drawn < 65535 ? e->rng.drawn : 65535);
    e->rng = life;
    return call;
}

static void run_sequence(struct fz_env *e, const struct table *t, struct fz_prog *p, long calls)
{
    for (uint32_t i = 0; i < p->n && e->made < calls; i++) {
        struct fz_args c;
        enum fz_plan plan;
        const struct fz_call *call = shape_pcall(e, t, &p->c[i], &c, &plan);
        e->made += run_call(e, call, &c, plan);
    }
}

/* ---------------------------------------------------------------- collide mode */

struct collider {
    struct fz_env *e;
    int k;        /* which collider (busy[k + 1]) */
    int ctid;     /* cleared by the kernel when the thread has exited */
    int *go;      /* all start at once */
    int nthreads; /* share: call i is thread i % nthreads's; 0: every thread makes every call */
    uint32_t n;
    const struct fz_args *args;
    const bool *eligible;
    long result[FZ_PROG_CALLS];
    bool ran[FZ_PROG_CALLS];
};

/* A collider's body: no TLS, no libc; only raw calls (zt_clone_thread starts it). */
static void collider_main(void *arg)
{
    struct collider *t = arg;
    struct fz_busy *b = &t->e->busy[t->k + 1];
    __atomic_store_n(&b->tid, (int)zt_syscall0(SYS_gettid), __ATOMIC_RELEASE);
    while (!__atomic_load_n(t->go, __ATOMIC_ACQUIRE)) {
        zt_syscall0(SYS_sched_yield);
    }
    for (uint32_t i = 0; i < t->n; i++) {
        if (!t->eligible[i] || (t->nthreads && (int)(i % (uint32_t)t->nthreads) != t->k)) {
            continue;
        }
        const uint64_t *a = t->args[i].a;
        __atomic_store_n(&b->since_ns, zt_now_ns(), __ATOMIC_RELEASE);
        t->result[i] = zt_syscall6(t->args[i].nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3],
                                   (long)a[4], (long)a[5]);
        __atomic_store_n(&b->since_ns, 0, __ATOMIC_RELEASE);
        t->ran[i] = true;
        if (t->args[i].nr == SYS_rt_sigprocmask) { /* the waker's signal stays deliverable */
            uint64_t alrm = ZT_SIGBIT(SIGALRM);
            zt_syscall4(SYS_rt_sigprocmask, ZT_SIG_UNBLOCK, &alrm, 0, 8);
        }
    }
    __atomic_store_n(&b->tid, 0, __ATOMIC_RELEASE);
    zt_syscall1(SYS_exit, 0);
}

/* Wait for a collider's exit without a timeout: the life's main thread uses no CPU while a
 * collider is stuck, so the runner's watchdog sees a stuck life (the waker kicks the
 * collider's call first, as it does the main thread's). */
static void collider_join(struct collider *t)
{
    int v;
    while ((v = __atomic_load_n(&t->ctid, __ATOMIC_ACQUIRE)) != 0) {
        zt_futex_wait(&t->ctid, v, NULL);
    }
}

/* Calls a collider does not make: those that return twice, start or end a thread or the
 * life, or change how the collider's own exit is seen (set_tid_address: its join waits for
 * the kernel to clear the word it was started with); sigaltstack, whose one valid stack is
 * the main thread's (two threads taking signals on it at once would overwrite each other's
 * frames). */
static bool collidable(const char *name, long nr)
{
    return !fz_is_forkish(name) && nr != SYS_clone && nr != SYS_exit && nr != SYS_exit_group &&
           nr != SYS_set_tid_address && nr != SYS_sigaltstack;
}

/* Run p's calls in FZ_COLLIDERS threads at once: each its share (i % threads), or, one time
 * in three, every thread every call (the same arguments at the same moment). */
static void run_collide(struct fz_env *e, const struct table *t, struct fz_prog *p, long calls)
{
    static struct collider col[FZ_COLLIDERS];
    static struct fz_args args[FZ_PROG_CALLS];
    static const struct fz_call *which[FZ_PROG_CALLS];
    static bool eligible[FZ_PROG_CALLS];
    static int go;
    const unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
    int share = fz_chance(&e->rng, 2, 3) ? FZ_COLLIDERS : 0, started = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        enum fz_plan plan;
        which[i] = shape_pcall(e, t, &p->c[i], &args[i], &plan);
        eligible[i] = plan == FZ_PLAN_CALL && collidable(which[i]->name, args[i].nr);
        e->st.filtered += !eligible[i];
    }
    for (uint32_t i = 0; i < p->n; i++) { /* a later shaping must not have undone a mask */
        if (eligible[i] && (fz_temp_mask_of(e, &args[i]) & ZT_SIGBIT(SIGALRM))) {
            printf("fuzz: life %d.%d: collide: call %u (%s) would block SIGALRM: its mask was "
                   "overwritten after it was shaped\n",
                   e->worker, e->gen, i, which[i]->name);
        }
    }
    if (e->log_calls) { /* -C: what the colliders are about to make (share, or all of it) */
        for (uint32_t i = 0; i < p->n; i++) {
            if (eligible[i]) {
                log_call(e, share ? "collide" : "collide-all", &args[i], e->made);
            }
        }
    }
    __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
    for (int k = 0; k < FZ_COLLIDERS; k++) {
        struct collider *c = &col[k];
        memset(c, 0, sizeof(*c));
        *c = (struct collider){e, k, 1, &go, share, p->n, args, eligible, {0}, {0}};
        long tid = zt_clone_thread(flags, collide_stacks + (size_t)(k + 1) * COLLIDE_STACK, NULL,
                                   NULL, &c->ctid, collider_main, c);
        if (tid <= 0) {
            c->ctid = 0;
            break; /* no room for a thread now: the others collide */
        }
        started++;
    }
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < started; k++) {
        collider_join(&col[k]);
    }
    for (int k = 0; k < started; k++) {
        for (uint32_t i = 0; i < p->n; i++) {
            if (col[k].ran[i] && e->made < calls) {
                e->made++;
                count(&e->st, col[k].result[i]);
                after(e, which[i], &args[i], col[k].result[i]);
            }
        }
    }
    e->ps.collided += started > 0;
}

/* ---------------------------------------------------------------- the corpus (-c) */

static struct fz_corpus corpus;

/* The next program: with -c, three times in four a mutation of one of the corpus. */
static void next_prog(struct fz_env *e, const struct table *t, struct fz_prog *p)
{
    const struct fz_prog *from =
        e->cover && fz_chance(&e->rng, 3, 4) ? fz_corpus_pick(&corpus, &e->rng) : NULL;
    if (from) {
        *p = *from;
        fz_prog_mutate(p, &e->rng, &corpus, pick_nr, (void *)t, NULL);
        e->ps.mutated++;
    } else {
        fz_prog_generate(p, &e->rng, pick_nr, (void *)t);
    }
}

/* After a program's sequential run (-c): what did it reach first? */
static void learn(struct fz_env *e, const struct fz_prog *p)
{
    long gain = zt_kcov(ZT_KCOV_COLLECT, NULL, 0);
    if (gain <= 0) {
        return;
    }
    e->ps.new_blocks += (uint64_t)gain;
    if (fz_corpus_add(&corpus, p, (uint32_t)gain)) {
        e->ps.kept++;
        fz_corpus_save(e->worker, p, (uint32_t)gain);
    }
}

/* One program: its calls in sequence; then, one time in collide_den (or if it says so), all
 * at once in the colliders. */
static void one_prog(struct fz_env *e, const struct table *t, long calls)
{
    struct fz_prog p;
    if (e->isolation && e->dataplane && fz_chance(&e->rng, 1, 3)) {
        struct fz_args c; /* now and then a draw heads for the dataplane paths on purpose */
        const struct fz_call *call = steer_isolation(e, t->calls, t->n, &c);
        e->made += run_call(e, call, &c, FZ_PLAN_CALL);
    }
    next_prog(e, t, &p);
    run_sequence(e, t, &p, calls);
    e->ps.progs++;
    if (e->cover) {
        learn(e, &p);
    }
    bool collide =
        (p.flags & FZ_PROG_COLLIDE) || (e->collide_den && fz_chance(&e->rng, 1, e->collide_den));
    if (collide && e->made < calls) {
        run_collide(e, t, &p, calls);
    }
}

/* The kernel populates only the top 16 KiB of a stack at exec and the rest a page at a time,
 * at its first touch (vm_fault): a life's own calls stay in that first part, so it goes
 * 64 KiB deep once, writing every page, to take those faults. */
static void __attribute__((noinline)) deep_stack(void)
{
    volatile uint8_t deep[64 * 1024];
    for (size_t i = sizeof(deep); i >= FZ_PAGE; i -= FZ_PAGE) {
        deep[i - 1] = 1;
    }
}

int fz_life(struct fz_env *e, long calls)
{
    static struct fz_call calls_table[FZ_MAX_CALLS];
    struct table t = {calls_table, fz_calls_init(calls_table, FZ_MAX_CALLS)};

    e->rng.s = e->seed;
    e->pid = (int)zt_getpid();
    e->runner_pid = (int)zt_syscall0(SYS_getppid); /* lives are the runner's children */
    static struct zt_task_info tasks[256];
    long ntasks = zt_tasks(tasks, 256);
    for (long i = 0; i < ntasks && i < 256; i++) { /* kernel threads (pid 0) and the runner's */
        if (tasks[i].pid <= e->runner_pid && tasks[i].tid > e->long_ids) {
            e->long_ids = tasks[i].tid;
        }
    }
    deep_stack();
    e->busy[0].tid = e->pid;
    e->console_fds[0] = 7; /* 0, 1, 2 */
    zt_signal(SIGALRM, fz_noop_handler, 0);
    zt_signal(SIGPIPE, SIG_IGN, 0); /* a write to a pipe nobody reads: -EPIPE, not death */
    fz_arena_init(e);
    for (int i = 0; i < FZ_MAX_STACKS; i++) {
        e->stacks[i] = (uint8_t *)e->scratch; /* replaced just below */
    }
    long m = zt_mmap(NULL, FZ_MAX_STACKS * CLONE_STACK, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* the colliders' stacks, a spare, then the signal stack a fuzzed sigaltstack may set */
    long cm = zt_mmap(NULL, (FZ_COLLIDERS + 1) * COLLIDE_STACK + FZ_ALTSTACK,
                      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0 || cm < 0) {
        return 3;
    }
    e->prot[e->nprot++] = (struct fz_range){(uint64_t)m, (uint64_t)m + FZ_MAX_STACKS * CLONE_STACK};
    e->prot[e->nprot++] = (struct fz_range){
        (uint64_t)cm, (uint64_t)cm + (FZ_COLLIDERS + 1) * COLLIDE_STACK + FZ_ALTSTACK};
    collide_stacks = (uint8_t *)(uintptr_t)cm;
    e->altstack = (uint64_t)cm + (FZ_COLLIDERS + 1) * COLLIDE_STACK;
    for (int i = 0; i < FZ_MAX_STACKS; i++) {
        e->stacks[i] = (uint8_t *)(uintptr_t)m + i * CLONE_STACK;
        slots[i].done = 1;
    }
    static struct zt_device_info devs[32];
    long ndevs = zt_syscall2(SYS_zt_devices, devs, 32);
    for (long i = 0; i < ndevs && i < 32; i++) {
        e->device_slots |= devs[i].device_id && devs[i].slot < 64 ? 1ull << devs[i].slot : 0;
    }
    if (e->cover) {
        if (!fz_corpus_alloc(&corpus)) {
            return 3;
        }
        fz_corpus_load(&corpus);
        if (zt_kcov(ZT_KCOV_ENABLE, NULL, 0) < 0) {
            printf("fuzz: life %d.%d: zt_kcov cannot record (not the coverage kernel?)\n",
                   e->worker, e->gen);
            return 3;
        }
    }
    waker_start(e);
    for (long progs = 0; e->made < calls; progs++) {
        if ((progs & 15) == 15) {
            fz_scratch_refill(e);
        }
        if (e->cover && (progs & 31) == 31) {
            fz_corpus_load(&corpus); /* what the other workers found meanwhile */
        }
        one_prog(e, &t, calls);
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
    struct fz_rng r = {.s = seed ^ (uint64_t)zt_getpid()};
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
