/* SPDX-License-Identifier: MIT */
/*
 * fuzz — a seeded system-call fuzzer (issue 9, item 11).
 *
 *   fuzz -n COUNT -s SEED [-w WORKERS] [-l LIFE] [-L LETHAL] [-i]
 *       run at least COUNT fuzzed calls in WORKERS (default 4) worker processes, each a
 *       series of lives of at most LIFE calls (default 2000); -i steers workers onto the
 *       dataplane CPUs and into task isolation; a life-ending draw is taken 1 time in LETHAL
 *       (default 1024).  Exit 0 when the kernel survived: no worker stuck, no kernel fault
 *       (EL1 synchronous exception), and free pages and kernel stacks back at their baseline.
 *   fuzz -W WORKER -G LIFE -s SEED -n CALLS [-L LETHAL] [-i] [-C]
 *       one life, as the runner starts it (replays a life from the numbers it printed); -C
 *       logs each call (number, name, arguments) before it is made, and its result
 *   fuzz ... -c
 *       coverage-guided (the coverage kernel, make cover): lives mutate the programs of the
 *       corpus that reached new kernel code (worker.c, cover.c); at the end the runner prints
 *       what the run reached (tools/covreport makes the table by file)
 *   fuzz ... -x N
 *       collide mode: 1 program in N also runs in several threads of the life at once, on the
 *       same descriptors, paths and mappings (default 8; 0: never)
 *   fuzz -k
 *       one getpid recorded by zt_kcov, and the blocks it reached (COV-01)
 *   fuzz -v
 *       a victim: sits in short calls for 30-150 ms (the fuzzed spawn starts these)
 *   fuzz ... -T
 *       every life blocks for good instead of fuzzing: shows the watchdog at work
 *   fuzz ... -D
 *       every life removes FZ_TMP and makes it again instead of fuzzing (machine.c): what
 *       fuzzed lives sometimes do, shown not to upset the memory balance (FZ-08)
 *   fuzz ... -B
 *       the runner leaves a file of one page in /tmp after its baseline: a run that must
 *       fail its memory balance, and shows what the balance report names (FZ-09)
 *   fuzz ... -N
 *       the runner nests directories 250 deep in FZ_TMP after its baseline, as lives can
 *       leave it: removing them at the end must not upset the balance (FZ-10)
 *
 * The runner never makes a fuzzed call.  It records the partition and makes FZ_TMP
 * (machine.c), spawns lives, respawns a worker whose life ended (done, or killed by its own
 * draws), and is the watchdog: a life whose main thread used no CPU time for WATCHDOG_S
 * seconds of the watchdog's own clock (see watchdog()) is reported with what the kernel says
 * (stuck.c) and killed, and one that does not die within KILL_S seconds of SIGKILL fails
 * the run.  Each life prints its counts (worker.c); tools/fuzzsum adds them up.  At the end
 * the runner puts the CPUs back as they were and removes FZ_TMP, then prints how each life
 * that did not finish ended, the kernel's own counts (system calls, synchronous exceptions
 * taken at EL1) and the memory balance, and one last line: `fuzz: PASS` or `fuzz: FAIL
 * (why)`.
 */
#include "fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SELF        "/bin/fuzz"
#define MAX_W       16
#define WATCHDOG_S  10
#define KILL_S      10
#define SETTLE_S    30
#define WATCH_EVERY (NS_S / 2) /* a watchdog round */
#define WATCH_STEP  (NS_S)     /* the most one round adds to a life's stalled time */
#define NS_S        1000000000ull

struct slot {
    long pid; /* 0: idle */
    int gen;
    long calls;
    uint64_t cpu_ns;     /* the main thread's CPU time when it last moved */
    uint64_t stalled_ns; /* the watchdog's clock since then (or since SIGKILL) */
    bool killed;
};

struct run {
    uint64_t seed;
    long count, life, assigned, done_calls;
    int workers;
    unsigned lethal;
    bool isolation;
    bool test_watchdog; /* -T: lives block for good, to show the watchdog works */
    bool replant;       /* -D: lives remove FZ_TMP and make it again (fz_replant_life) */
    bool test_balance;  /* -B: a page left in /tmp after the baseline (FZ-09) */
    bool test_nest;     /* -N: FZ_TMP nested deep, as lives can leave it (FZ-10) */
    bool cover;         /* -c: coverage-guided */
    unsigned collide;   /* -x: collide mode 1 program in this many (0: never) */
    struct slot slots[MAX_W];
    long lives, lives_done, lives_early, stuck, orphans;
    bool failed;
    char why[128];
};

/* ---------------------------------------------------------------- kernel counts */

struct kcounts {
    uint64_t syscalls, el1_sync;
};

static struct kcounts kernel_counts(void)
{
    struct kcounts k = {0, 0};
    int n = zt_nr_cpus();
    for (int c = 0; c < n; c++) {
        const volatile struct zt_cpu_counters *p = zt_counters_of((unsigned)c);
        uint64_t other = p->sync_other, sys = p->syscalls, faults = p->faults;
        k.syscalls += sys;
        k.el1_sync += other - faults; /* synchronous exceptions not from user space */
    }
    return k;
}

static struct zt_meminfo meminfo(void)
{
    struct zt_meminfo mi = {0, 0, 0, 0};
    zt_meminfo(&mi);
    return mi;
}

/* Free pages and kernel stacks once both stop moving (the kernel frees a reaped process's
 * memory a little after wait4 returns); at most `patience_s`, until they equal `want` if
 * given. */
static struct zt_meminfo settled(const struct zt_meminfo *want, unsigned patience_s)
{
    struct zt_meminfo prev = meminfo(), cur;
    uint64_t end = zt_now_ns() + patience_s * NS_S;
    int still = 0;
    while (zt_now_ns() < end) {
        zt_sleep_ns(20 * 1000000ull);
        cur = meminfo();
        if (want && cur.free_pages == want->free_pages && cur.kstacks_used == want->kstacks_used) {
            return cur;
        }
        still = (cur.free_pages == prev.free_pages && cur.kstacks_used == prev.kstacks_used)
                    ? still + 1
                    : 0;
        if (!want && still >= 10) {
            return cur;
        }
        prev = cur;
    }
    return prev;
}

/* ---------------------------------------------------------------- lives */

static void fail(struct run *r, const char *why)
{
    if (!r->failed) {
        snprintf(r->why, sizeof(r->why), "%s", why);
    }
    r->failed = true;
}

static uint64_t all_cpus(void)
{
    int n = zt_nr_cpus();
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static void start_life(struct run *r, int w)
{
    struct slot *s = &r->slots[w];
    char ws[12], gs[12], ss[24], ns[24], ls[12], xs[12];
    char *argv[] = {SELF, "-W", ws, "-G", gs, "-s", ss,   "-n",
                    ns,   "-L", ls, "-x", xs, NULL, NULL, NULL};
    long calls = r->count - r->done_calls - r->assigned;

    calls = calls < r->life ? calls : r->life;
    snprintf(ws, sizeof(ws), "%d", w);
    snprintf(gs, sizeof(gs), "%d", s->gen);
    snprintf(ss, sizeof(ss), "0x%llx", (unsigned long long)r->seed);
    snprintf(ns, sizeof(ns), "%ld", calls);
    snprintf(ls, sizeof(ls), "%u", r->lethal);
    snprintf(xs, sizeof(xs), "%u", r->collide);
    int a = 13;
    if (r->isolation || r->test_watchdog || r->replant) {
        argv[a++] = r->test_watchdog ? "-T" : r->replant ? "-D" : "-i";
    }
    if (r->cover) {
        argv[a++] = "-c";
    }
    long pid = zt_spawn(SELF, argv, r->isolation ? all_cpus() : 0);
    if (pid < 0) {
        return; /* no room right now (max_procs, memory): the next round tries again */
    }
    s->pid = pid;
    s->calls = calls;
    s->cpu_ns = 0;
    s->stalled_ns = 0;
    s->killed = false;
    r->assigned += calls;
    r->lives++;
}

static struct slot *slot_of(struct run *r, long pid)
{
    for (int w = 0; w < r->workers; w++) {
        if (r->slots[w].pid == pid) {
            return &r->slots[w];
        }
    }
    return NULL;
}

static void life_ended(struct run *r, struct slot *s, int status)
{
    int w = (int)(s - r->slots);
    r->assigned -= s->calls;
    if (zt_wifexited(status) && zt_wexitstatus(status) == FZ_DONE_STATUS) {
        r->done_calls += s->calls;
        r->lives_done++;
    } else {
        r->lives_early++;
        if (zt_wifsignaled(status)) {
            printf("fuzz: life %d.%d ended by %s\n", w, s->gen,
                   zt_signal_name(zt_wtermsig(status)));
        } else {
            printf("fuzz: life %d.%d ended with status %d\n", w, s->gen, zt_wexitstatus(status));
        }
    }
    s->pid = 0;
    s->gen++;
}

static void reap(struct run *r)
{
    int status;
    long pid;
    while ((pid = zt_wait4(-1, &status, WNOHANG, NULL)) > 0) {
        struct slot *s = slot_of(r, pid);
        if (s) {
            life_ended(r, s, status);
        } else {
            r->orphans++; /* a child of a life that ended, handed to us */
        }
    }
}

/* ---------------------------------------------------------------- the watchdog */

static struct zt_task_info tasks[512];

/* The main thread of life `pid`, or NULL: the life has exited and its teardown (the
 * kernel's) has not yet made it a zombie the runner can reap. */
static const struct zt_task_info *main_thread(long pid, long n)
{
    for (long i = 0; i < n && i < 512; i++) {
        if (tasks[i].tid == pid) {
            return &tasks[i];
        }
    }
    return NULL;
}

static void stuck(struct run *r, int w, const struct zt_task_info *ti)
{
    struct slot *s = &r->slots[w];
    unsigned long long seed = (unsigned long long)fz_life_seed(r->seed, w, s->gen);
    if (ti) {
        printf("fuzz: watchdog: life %d.%d (pid %ld, seed 0x%llx, state %c on cpu %d) made no "
               "progress for %d s: killed\n",
               w, s->gen, s->pid, seed, ti->state, ti->cpu, WATCHDOG_S);
    } else {
        printf("fuzz: watchdog: life %d.%d (pid %ld, seed 0x%llx) exited and was not torn down "
               "for %d s: killed\n",
               w, s->gen, s->pid, seed, WATCHDOG_S);
    }
    r->stuck++;
    fail(r, "a life was stuck");
    fz_stuck_report(s->pid);
    zt_kill((int)s->pid, SIGKILL);
    s->killed = true;
    s->stalled_ns = 0;
}

/*
 * A life makes progress while its main thread uses CPU time.  The watchdog's clock is the
 * runner's own: each round adds the time since the last one, but at most WATCH_STEP, so a
 * stretch in which QEMU as a whole got no CPU from the host (the runner did not run either,
 * while guest time went on) counts as one step, not as a stuck life.  A CPU that does not
 * run the life while others run the runner counts in full: that is what the watchdog is
 * for (the checked kernel's own watchdog says what such a CPU was doing).
 */
static void watchdog(struct run *r, uint64_t step_ns)
{
    long n = zt_tasks(tasks, 512);
    for (int w = 0; w < r->workers; w++) {
        struct slot *s = &r->slots[w];
        if (!s->pid) {
            continue;
        }
        const struct zt_task_info *ti = main_thread(s->pid, n);
        if (ti && ti->user_ns + ti->sys_ns != s->cpu_ns) {
            s->cpu_ns = ti->user_ns + ti->sys_ns;
            s->stalled_ns = 0;
            continue;
        }
        s->stalled_ns += step_ns;
        if (s->killed && s->stalled_ns > KILL_S * NS_S) {
            printf("fuzz: watchdog: life %d.%d (pid %ld) still there %d s after SIGKILL\n", w,
                   s->gen, s->pid, KILL_S);
            fail(r, "a stuck life could not be killed");
            s->stalled_ns = 0; /* say it once per KILL_S */
        } else if (!s->killed && s->stalled_ns > WATCHDOG_S * NS_S) {
            stuck(r, w, ti);
        }
    }
}

/* ---------------------------------------------------------------- the run */

/* The kernel's call table as the lives see it: how many calls have a shape (arguments of
 * the right kinds), and the names of any that get six mixed-pool values instead. */
static void show_table(void)
{
    static struct fz_call table[FZ_MAX_CALLS];
    int n = fz_calls_init(table, FZ_MAX_CALLS), shaped = 0;
    char line[200];
    int len = 0;
    for (int i = 0; i < n; i++) {
        shaped += table[i].shape != NULL;
    }
    printf("fuzz: %d calls in the kernel's table, %d with a shape\n", n, shaped);
    for (int i = 0; i < n; i++) {
        if (!table[i].shape) {
            len += snprintf(line + len, sizeof(line) - (size_t)len, " %s", table[i].name);
        }
        if (len && (len > 150 || i == n - 1)) {
            printf("fuzz: unshaped:%s\n", line);
            len = 0;
        }
    }
}

static bool busy(const struct run *r)
{
    for (int w = 0; w < r->workers; w++) {
        if (r->slots[w].pid) {
            return true;
        }
    }
    return false;
}

/* -N: FZ_TMP/d/d/... `depth` levels deep, made through directory descriptors as a life
 * can (no path length limits it). */
static void nest_deep(int depth)
{
    long dir = zt_syscall4(SYS_openat, AT_FDCWD, FZ_TMP, O_DIRECTORY, 0);
    for (int i = 0; i < depth && dir >= 0; i++) {
        zt_syscall3(SYS_mkdirat, dir, "d", 0777);
        long sub = zt_syscall4(SYS_openat, dir, "d", O_DIRECTORY, 0);
        zt_syscall1(SYS_close, dir);
        dir = sub;
    }
    if (dir >= 0) {
        zt_syscall1(SYS_close, dir);
    }
}

/* -B: a file of one page in /tmp, made after the baseline and kept (FZ-09). */
static void leave_a_page(void)
{
    static char page[4096];
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, "/tmp/fz-balance-test",
                          0101 /* O_WRONLY | O_CREAT */, 0644);
    if (fd >= 0) {
        memset(page, 'b', sizeof(page));
        zt_write((int)fd, page, sizeof(page));
        zt_syscall1(SYS_close, fd);
    }
}

static int run(struct run *r)
{
    static struct fz_machine machine0;
    fz_machine_save(&machine0);
    fz_tmp_remove(); /* FZ_TMP is the run's (machine.c): made after the baseline */
    static struct fz_balance bal0, bal1;
    fz_stack_prefault();    /* its stack does not grow after the baseline */
    fz_balance_take(&bal0); /* first: what its reading leaves (/proc entries) is in the baseline */
    struct zt_meminfo m0 = settled(NULL, SETTLE_S), m1;
    if (r->test_balance) {
        leave_a_page();
    }
    fz_tmp_make();
    if (r->test_nest) {
        nest_deep(250);
    }
    if (r->cover) {
        fz_corpus_dir_make();
    }
    zt_irqsoff_reset(); /* the irqs-off records (checked kernel) start with the run */
    struct kcounts k0 = kernel_counts(), k1;
    uint64_t next_watch = 0, last_watch = zt_now_ns();

    printf("fuzz: seed 0x%llx, %ld calls, %d workers, lives of %ld calls, lethal 1/%u%s, "
           "collide 1/%u%s, %d CPUs\n",
           (unsigned long long)r->seed, r->count, r->workers, r->life, r->lethal,
           r->isolation ? ", isolation" : "", r->collide, r->cover ? ", coverage" : "",
           zt_nr_cpus());
    printf("fuzz: baseline %llu free pages, %llu kernel stacks\n",
           (unsigned long long)m0.free_pages, (unsigned long long)m0.kstacks_used);
    show_table();
    fflush(stdout);
    while (r->done_calls < r->count || busy(r)) {
        reap(r);
        for (int w = 0; w < r->workers && !r->failed; w++) {
            if (!r->slots[w].pid && r->count - r->done_calls - r->assigned > 0) {
                start_life(r, w);
            }
        }
        uint64_t now = zt_now_ns();
        if (now >= next_watch) {
            uint64_t step = now - last_watch;
            watchdog(r, step < WATCH_STEP ? step : WATCH_STEP);
            last_watch = now;
            next_watch = zt_now_ns() + WATCH_EVERY;
        }
        if (r->failed && !busy(r)) {
            break;
        }
        fflush(stdout);
        zt_sleep_ns(10 * 1000000ull);
    }
    if (fz_machine_restore(&machine0)) { /* fuzzed zt_partition calls moved CPUs */
        fail(r, "CPUs could not be put back as they were");
    }
    if (!fz_tmp_remove()) {
        fail(r, FZ_TMP " could not be removed");
    }
    if (r->cover) {
        fz_cover_dump(); /* what the run reached: before the corpus goes */
        if (!fz_corpus_dir_remove()) {
            fail(r, FZ_CORPUS_DIR " could not be removed");
        }
    }
    m1 = settled(&m0, SETTLE_S);
    k1 = kernel_counts();
    printf("fuzz: %ld lives: %ld done, %ld ended early; %ld stuck; %ld orphans reaped\n", r->lives,
           r->lives_done, r->lives_early, r->stuck, r->orphans);
    printf("fuzz: kernel: %llu system calls, %llu synchronous exceptions at EL1 (kernel faults)\n",
           (unsigned long long)(k1.syscalls - k0.syscalls),
           (unsigned long long)(k1.el1_sync - k0.el1_sync));
    printf("fuzz: free pages %llu -> %llu, kernel stacks %llu -> %llu\n",
           (unsigned long long)m0.free_pages, (unsigned long long)m1.free_pages,
           (unsigned long long)m0.kstacks_used, (unsigned long long)m1.kstacks_used);
    zt_irqsoff_print(0); /* the checked kernel's irqs-off records of the run (IRQO-01) */
    if (k1.el1_sync != k0.el1_sync) {
        fail(r, "the kernel took a synchronous exception at EL1");
    }
    if (m1.free_pages != m0.free_pages || m1.kstacks_used != m0.kstacks_used) {
        fz_balance_take(&bal1);
        fz_balance_show(&bal0, &bal1); /* what the difference is made of */
        fail(r, "free pages or kernel stacks not back at their baseline");
    }
    if (r->failed) {
        printf("fuzz: FAIL (%s); replay with: fuzz -n %ld -s 0x%llx -w %d -l %ld -L %u -x %u%s%s\n",
               r->why, r->count, (unsigned long long)r->seed, r->workers, r->life, r->lethal,
               r->collide, r->isolation ? " -i" : "", r->cover ? " -c" : "");
        return 1;
    }
    printf("fuzz: PASS\n");
    return 0;
}

/* ---------------------------------------------------------------- command line */

static int usage(void)
{
    fprintf(
        stderr,
        "usage: fuzz -n COUNT -s SEED [-w WORKERS] [-l LIFE] [-L LETHAL] [-x COLLIDE] [-i] [-c]\n"
        "            [-T] [-D] [-B] [-N]\n"
        "       fuzz -W WORKER -G LIFE -s SEED -n CALLS [-L LETHAL] [-x COLLIDE] [-i] [-c] [-C]\n"
        "       fuzz -k\n"
        "       fuzz -v\n");
    return 2;
}

/* -T: a life that blocks for good (SIGALRM blocked, a futex wait with no timeout), so the
 * test suite can show that the watchdog notices and kills it. */
__attribute__((noreturn)) static int stuck_life(void)
{
    static int word;
    uint64_t alrm = ZT_SIGBIT(SIGALRM);
    zt_rt_sigprocmask(ZT_SIG_BLOCK, &alrm, NULL, 8);
    for (;;) {
        zt_futex_wait(&word, 0, NULL);
    }
}

static bool number(const char *s, long lo, long hi, long *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || v < (unsigned long long)lo || v > (unsigned long long)hi) {
        return false;
    }
    *out = (long)v;
    return true;
}

static uint64_t parse_seed(const char *s, bool *ok)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    *ok = *s && !*end;
    return v;
}

/* The CPUs the fuzzer aims at: the first 64 (its masks are one word; the kernel's CPU sets,
 * of 512, get the other words from the shapes). */
static void life_machine(struct fz_env *e)
{
    static struct zt_cpu_info ci[ZT_MAX_CPUS];
    long n = zt_cpus(ci, ZT_MAX_CPUS);
    e->ncpus = n <= 0 ? 1 : n > 64 ? 64 : (int)n;
    for (int c = 0; c < e->ncpus; c++) {
        e->online |= ci[c].online ? 1ull << c : 0;
        e->dataplane |= ci[c].online && ci[c].dataplane ? 1ull << c : 0;
    }
}

int main(int argc, char **argv)
{
    static struct run r = {.workers = 4, .life = 2000, .lethal = 1024, .count = -1, .collide = 8};
    static struct fz_env e;
    long v, worker = -1, gen = -1;
    bool have_seed = false;
    static const struct {
        const char *opt;
        bool *flag;
    } switches[] = {{"-i", &r.isolation},    {"-T", &r.test_watchdog}, {"-D", &r.replant},
                    {"-B", &r.test_balance}, {"-N", &r.test_nest},     {"-C", &e.log_calls},
                    {"-c", &r.cover}}; /* the options without a value */

    if (argc == 2 && !strcmp(argv[1], "-v")) {
        return fz_victim(zt_now_ns());
    }
    if (argc == 2 && !strcmp(argv[1], "-k")) {
        return fz_cover_probe();
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
        bool *flag = 0;
        for (size_t k = 0; k < sizeof(switches) / sizeof(switches[0]); k++) {
            flag = !strcmp(o, switches[k].opt) ? switches[k].flag : flag;
        }
        if (flag) {
            *flag = true;
            continue;
        }
        if (!a) {
            return usage();
        }
        i++;
        if (!strcmp(o, "-s")) {
            r.seed = parse_seed(a, &have_seed);
        } else if (!strcmp(o, "-n") && number(a, 1, 1l << 40, &v)) {
            r.count = v;
        } else if (!strcmp(o, "-w") && number(a, 1, MAX_W, &v)) {
            r.workers = (int)v;
        } else if (!strcmp(o, "-l") && number(a, 1, 1l << 30, &v)) {
            r.life = v;
        } else if (!strcmp(o, "-L") && number(a, 1, 1l << 30, &v)) {
            r.lethal = (unsigned)v;
        } else if (!strcmp(o, "-x") && number(a, 0, 1l << 30, &v)) {
            r.collide = (unsigned)v;
        } else if (!strcmp(o, "-W") && number(a, 0, MAX_W - 1, &v)) {
            worker = v;
        } else if (!strcmp(o, "-G") && number(a, 0, 1l << 30, &v)) {
            gen = v;
        } else {
            return usage();
        }
    }
    if (!have_seed || r.count < 1 || (worker < 0) != (gen < 0)) {
        return usage();
    }
    struct zt_kcov_info info;
    if (worker < 0 && r.cover && zt_kcov(ZT_KCOV_INFO, &info, sizeof(info)) < 0) {
        printf("fuzz: -c needs the coverage kernel (make cover: build/cover/kernel.elf)\n");
        return 2;
    }
    if (worker >= 0 && r.test_watchdog) {
        return stuck_life();
    }
    if (worker >= 0 && r.replant) {
        return fz_replant_life();
    }
    if (worker >= 0) {
        e.worker = (int)worker, e.gen = (int)gen;
        e.seed = fz_life_seed(r.seed, e.worker, e.gen);
        e.isolation = r.isolation;
        e.lethal_den = r.lethal;
        e.cover = r.cover;
        e.collide_den = r.collide;
        life_machine(&e);
        return fz_life(&e, r.count);
    }
    return run(&r);
}
