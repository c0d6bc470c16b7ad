/* SPDX-License-Identifier: MIT */
/*
 * bench — micro-benchmarks of the kernel paths, each a loop that runs unchanged on Linux.
 *
 *   bench [-c CPU] [-w CPU] [-p CPU] [NAME[=N] ...]
 *
 * NAME is one of the loops below (default: every one this machine can run); N overrides its
 * iteration count.  -c is the CPU the benchmark runs on (default 0; for isol the first
 * dataplane CPU), -w the waiter's CPU of xcpu (default: the CPU after -c).  For each it
 * prints one line:
 *   bench: NAME iterations N guest_ns_per_op X instructions_per_op Y
 * N counts operations (the unit the per-op figures divide by), X is guest time read from
 * CNTVCT_EL0, Y is INST_RETIRED from PMU event counter 0 (EL0 and EL1 together, rounded to
 * an integer), or "n/a" where the counter reads 0: QEMU counts instructions only under
 * -icount (make ... REPRO=1).  `bench mem` instead prints the page allocator's counts:
 *   bench: mem cpus C total_pages T free_pages F page_size P
 *
 * The loops (docs/measuring.md describes each for a side-by-side run on Linux):
 *   null   getpid by a raw `svc #0` (x8 = 172), N times; one op = one system call
 *   yield  two threads pinned to one CPU call sched_yield N/2 times each; one op = one
 *          yield, i.e. one switch to the other thread
 *   futex  two threads pinned to one CPU pass a turn back and forth through one futex word
 *          (FUTEX_WAKE the other, FUTEX_WAIT for the turn to come back); one op = one round
 *          trip (two wakes, two sleeps, two switches)
 *   spawn  spawn /bin/true on this CPU and wait for it, N times; one op = spawn+exit+wait
 *          (zerotick's spawn call; under Linux, which has none, vfork + execve as vspawn)
 *   vspawn the same with vfork + execve + wait, the same code under both kernels (what
 *          Linux's posix_spawn does); the vfork child runs on its parent's address space
 *   fault  first touch of anonymous memory: mmap 64 private pages, write a byte in each,
 *          munmap, N/64 times; one op = one page, its share of the mmap and munmap included
 *          (Linux takes a page fault per page; zerotick populates the pages in mmap itself)
 *   xcpu   the futex round trip with the two threads on CPU -c and CPU -w; one op = one round
 *          trip (each wake crosses CPUs); instructions: see pingpong() below
 *   isol   on a dataplane CPU: prctl(PR_SET_TASK_ISOLATION, ENABLE) then prctl(..., 0), N
 *          times; one op = the enabling prctl, from the svc to its return (the disabling one
 *          is outside the measurement)
 *   part_dp, part_hk, part_off, part_on   (only when named) zt_partition on CPU -p (default
 *          2, a housekeeping CPU): N times the change and its reverse, quietly; one op = the
 *          named change from the svc to its return, i.e. from the request until the new role
 *          is in force: housekeeping -> dataplane, dataplane -> housekeeping, housekeeping ->
 *          offline (powered off, its memory freed), offline -> housekeeping (started, online)
 *
 * Under Linux (make compare boots this very file there, docs/measuring.md) EL0 cannot read
 * the event counter, so Y is "n/a": under -icount with one busy vCPU the guest time is the
 * instruction count anyway (2^shift ns per instruction), which tools/compare uses for both
 * kernels.  isol does not apply there (mainline Linux has no PR_SET_TASK_ISOLATION).
 *
 * Every benchmark first runs a short warm-up of the same loop (not reported).  Measurement
 * is by "laps": the loop reads the counter and PMEVCNTR0 at op (or chunk) boundaries and adds
 * the differences, so the 32-bit event counter may wrap between laps without harm.
 * Exit status 0, or 1 if a benchmark failed or could not run here (the line says why).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

#define NULL_CHUNK  1000 /* syscalls between two laps: far below 2^32 instructions */
#define MAX_WARM_UP 100

struct meter {
    uint64_t cycles; /* counter cycles inside the measured intervals */
    uint64_t insts;  /* instructions retired inside them, on this CPU */
    uint64_t t_last; /* counter and event counter at the last mark */
    uint32_t i_last;
};

struct bench {
    const char *name;
    long default_n;
    int (*run)(long n, struct meter *m); /* 0 or -errno; fills m */
};

static int opt_cpu = -1, opt_waiter = -1, opt_part = 2;
static bool have_pmu; /* EL0 may read the event counter: not under Linux (it traps there) */

/* PMU event counter 0, which the kernel programs to INST_RETIRED on every CPU. */
static inline uint32_t inst_read(void)
{
    uint64_t v;
    if (!have_pmu) {
        return 0;
    }
    /* isb: the read must not be hoisted above the work it measures. */
    __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(v)::"memory");
    return (uint32_t)v;
}

/* Start an interval. */
static inline void meter_mark(struct meter *m)
{
    m->i_last = inst_read();
    m->t_last = zt_counter();
}

/* End the interval begun at the last mark and start the next one. */
static inline void meter_add(struct meter *m)
{
    uint64_t t = zt_counter();
    uint32_t i = inst_read();
    m->cycles += t - m->t_last;
    m->insts += (uint32_t)(i - m->i_last); /* modulo 2^32: one wrap per lap is fine */
    m->t_last = t;
    m->i_last = i;
}

/* getpid as a bare svc: no libc wrapper, no cache, exactly what Linux's syscall(2) does. */
static inline long raw_getpid(void)
{
    register long x8 __asm__("x8") = SYS_getpid;
    register long x0 __asm__("x0");
    __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
    return x0;
}

static inline long raw_prctl(long option, long arg2)
{
    register long x8 __asm__("x8") = SYS_prctl;
    register long x0 __asm__("x0") = option;
    register long x1 __asm__("x1") = arg2;
    register long x2 __asm__("x2") = 0;
    register long x3 __asm__("x3") = 0;
    register long x4 __asm__("x4") = 0;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
}

static int bench_cpu(void)
{
    return opt_cpu < 0 ? 0 : opt_cpu;
}

/* ---- null: getpid ---- */

static int run_null(long n, struct meter *m)
{
    meter_mark(m);
    for (long done = 0; done < n; done += NULL_CHUNK) {
        long chunk = n - done < NULL_CHUNK ? n - done : NULL_CHUNK;
        for (long i = 0; i < chunk; i++) {
            raw_getpid();
        }
        meter_add(m);
    }
    return 0;
}

/* ---- yield: two threads on one CPU ---- */

static volatile int yield_go;

static long yield_partner(void *arg)
{
    long rounds = (long)arg;
    while (!yield_go) {
        zt_sched_yield();
    }
    for (long i = 0; i < rounds; i++) {
        zt_sched_yield();
    }
    return 0;
}

/* The partner's first yields run before go; from go on each of our yields is answered by
 * one of its: our window holds exactly 2 * rounds yields (see the sequence in measuring.md). */
static int run_yield(long n, struct meter *m)
{
    long rounds = n / 2;
    yield_go = 0;
    zt_thread_t *t = zt_thread_create(yield_partner, (void *)rounds, bench_cpu());
    if (!t) {
        return -errno;
    }
    yield_go = 1;
    meter_mark(m);
    for (long i = 0; i < rounds; i++) {
        zt_sched_yield();
        meter_add(m);
    }
    zt_thread_join(t);
    return 0;
}

/* ---- futex ping-pong (one CPU) and cross-CPU round trip ---- */

struct pingpong {
    int turn; /* 0: the pinger's turn, 1: the ponger's */
    int done; /* the pinger has stopped measuring */
    long rounds;
};

static void wait_until(int *word, int want)
{
    int v;
    while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) != want) {
        zt_futex_wait(word, v, NULL);
    }
}

static void hand_over(int *word, int value)
{
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    zt_futex_wake(word, 1);
}

/* After its last hand-over the ponger goes to sleep on `done`, just as it slept on `turn`
 * in every round before, so the last round costs what the others do. */
static long ponger(void *arg)
{
    struct pingpong *p = arg;
    for (long i = 0; i < p->rounds; i++) {
        wait_until(&p->turn, 1);
        hand_over(&p->turn, 0);
    }
    wait_until(&p->done, 1);
    return 0;
}

/*
 * The pinger (this thread, on its CPU since run_one) measures alone.  Its window spans every round
 * trip from start to end, so its guest time is the answer.  Its instruction count is too under
 * QEMU: QEMU 7.2 derives INST_RETIRED from the machine-wide icount, so the event counter of every
 * vCPU counts the instructions of all of them (the ponger's CPU included).  On hardware with
 * per-CPU counters, xcpu would have to add the ponger's CPU's count (see docs/measuring.md).
 */
static int pingpong(long n, struct meter *m, int pong_cpu)
{
    static struct pingpong p;
    memset(&p, 0, sizeof(p));
    p.rounds = n;
    zt_thread_t *t = zt_thread_create(ponger, &p, pong_cpu);
    if (!t) {
        return -errno;
    }
    meter_mark(m);
    for (long i = 0; i < n; i++) {
        hand_over(&p.turn, 1);
        wait_until(&p.turn, 0);
        meter_add(m);
    }
    hand_over(&p.done, 1);
    zt_thread_join(t);
    return 0;
}

static int run_futex(long n, struct meter *m)
{
    return pingpong(n, m, bench_cpu());
}

static int run_xcpu(long n, struct meter *m)
{
    int waiter = opt_waiter >= 0 ? opt_waiter : bench_cpu() + 1;
    if (waiter >= zt_nr_cpus() || waiter == bench_cpu()) {
        return -ENODEV;
    }
    return pingpong(n, m, waiter);
}

/* ---- spawn + exit + wait; vfork + execve + wait (the same code under both kernels) ---- */

typedef long (*start_fn)(const char *path, char *const argv[], uint64_t affinity);

static int start_wait_loop(long n, struct meter *m, start_fn start)
{
    char *argv[] = {"/bin/true", NULL};
    uint64_t here = bench_cpu() < 64 ? 1ull << bench_cpu() : 0; /* 0: anywhere */
    meter_mark(m);
    for (long i = 0; i < n; i++) {
        int status;
        long pid = start("/bin/true", argv, here);
        if (pid < 0) {
            return (int)pid;
        }
        if (zt_wait((int)pid, &status) != pid || status != 0) {
            return -ECHILD;
        }
        meter_add(m);
    }
    return 0;
}

static int run_spawn(long n, struct meter *m)
{
    return start_wait_loop(n, m, zt_spawn);
}

static int run_vspawn(long n, struct meter *m)
{
    return start_wait_loop(n, m, zt_vfork_exec);
}

/* ---- first touch of anonymous memory ---- */

#define FAULT_PAGES 64

static int run_fault(long n, struct meter *m)
{
    const long page = 4096;
    meter_mark(m);
    for (long done = 0; done < n; done += FAULT_PAGES) {
        long chunk = n - done < FAULT_PAGES ? n - done : FAULT_PAGES;
        char *p = mmap(NULL, (size_t)(chunk * page), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            return -ENOMEM;
        }
        for (long i = 0; i < chunk; i++) {
            p[i * page] = 1; /* the first touch */
        }
        munmap(p, (size_t)(chunk * page));
        meter_add(m);
    }
    return 0;
}

/* ---- isolation entry ---- */

static int first_dataplane_cpu(void)
{
    static struct zt_cpu_info info[ZT_MAX_CPUS];
    if (zt_on_linux()) {
        return -1; /* and mainline Linux has no PR_SET_TASK_ISOLATION anyway */
    }
    long n = zt_cpus(info, ZT_MAX_CPUS);
    for (long i = 0; i < n && i < ZT_MAX_CPUS; i++) {
        if (info[i].online && info[i].dataplane) {
            return (int)info[i].cpu;
        }
    }
    return -1;
}

static int run_isol(long n, struct meter *m)
{
    long r = 0;
    for (long i = 0; i < n && r == 0; i++) {
        meter_mark(m);
        r = raw_prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE);
        meter_add(m);
        long r2 = raw_prctl(PR_SET_TASK_ISOLATION, 0);
        r = r ? r : r2;
    }
    return (int)r;
}

/* ---- partition changes ---- */

/* One loop for the four kinds: `op` (measured) and its reverse (not) each time; a change
 * that comes back first (dp, off) measures the first of the pair, the others the second. */
static int part_loop(long n, struct meter *m, unsigned first, unsigned second, bool measure_first)
{
    char cpu[16];
    if (opt_part < 0 || opt_part >= zt_nr_cpus()) {
        return -ENODEV;
    }
    snprintf(cpu, sizeof(cpu), "%d", opt_part);
    for (long i = 0; i < n; i++) {
        if (measure_first) {
            meter_mark(m);
        }
        long r = zt_partition(cpu, first, ZT_PART_QUIET);
        if (measure_first) {
            meter_add(m);
        } else {
            meter_mark(m);
        }
        long r2 = r ? 0 : zt_partition(cpu, second, ZT_PART_QUIET);
        if (!measure_first) {
            meter_add(m);
        }
        if (r || r2) {
            return (int)(r ? r : r2);
        }
    }
    return 0;
}

static int run_part_dp(long n, struct meter *m)
{
    return part_loop(n, m, ZT_PART_DATAPLANE, ZT_PART_HOUSEKEEPING, true);
}

static int run_part_hk(long n, struct meter *m)
{
    return part_loop(n, m, ZT_PART_DATAPLANE, ZT_PART_HOUSEKEEPING, false);
}

static int run_part_off(long n, struct meter *m)
{
    return part_loop(n, m, ZT_PART_OFFLINE, ZT_PART_ONLINE, true);
}

static int run_part_on(long n, struct meter *m)
{
    return part_loop(n, m, ZT_PART_OFFLINE, ZT_PART_ONLINE, false);
}

/* ---- driver ---- */

static const struct bench benches[] = {
    {"null", 1000000, run_null},    {"yield", 100000, run_yield},    {"futex", 50000, run_futex},
    {"spawn", 500, run_spawn},      {"vspawn", 500, run_vspawn},     {"xcpu", 20000, run_xcpu},
    {"fault", 64000, run_fault},    {"isol", 10000, run_isol},       {"part_dp", 1000, run_part_dp},
    {"part_hk", 1000, run_part_hk}, {"part_off", 200, run_part_off}, {"part_on", 200, run_part_on},
};
#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static void report(const struct bench *b, long n, const struct meter *m)
{
    double ns = (double)zt_counter_to_ns(m->cycles) / (double)n;
    if (m->insts) {
        printf("bench: %s iterations %ld guest_ns_per_op %.1f instructions_per_op %llu\n", b->name,
               n, ns, (unsigned long long)((m->insts + (uint64_t)n / 2) / (uint64_t)n));
    } else {
        printf("bench: %s iterations %ld guest_ns_per_op %.1f instructions_per_op n/a\n", b->name,
               n, ns);
    }
}

/* The CPU b runs on: -c, else 0, else (isol) the first dataplane CPU; -1 if none. */
static int home_cpu(const struct bench *b)
{
    if (b->run == run_isol && opt_cpu < 0) {
        return first_dataplane_cpu();
    }
    return bench_cpu();
}

static int run_one(const struct bench *b, long n)
{
    struct meter warm = {0}, m = {0};
    long warm_n = n / 100 < 2 ? 2 : n / 100 > MAX_WARM_UP ? MAX_WARM_UP : n / 100;
    struct zt_cpuset saved;
    int cpu = home_cpu(b), r = (int)zt_get_cpuset(&saved);
    if (cpu < 0) {
        r = -ENODEV;
    } else if (r == 0) {
        r = (int)zt_pin(cpu); /* every loop starts on its CPU */
    }
    if (r == 0) {
        r = b->run(warm_n, &warm);
    }
    if (r == 0) {
        r = b->run(n, &m);
    }
    zt_set_cpuset(&saved);
    if (r < 0) {
        printf("bench: %s failed: -%s%s\n", b->name, zt_errno_name(-r),
               r == -ENODEV ? " (needs a second CPU, or dataplane= for isol)" : "");
        return 1;
    }
    report(b, n, &m);
    fflush(stdout);
    return 0;
}

static int print_mem(void)
{
    struct zt_meminfo mi;
    long r = zt_meminfo(&mi);
    if (r < 0) {
        printf("bench: mem failed: -%s\n", zt_errno_name((int)-r));
        return 1;
    }
    printf("bench: mem cpus %d total_pages %llu free_pages %llu page_size %llu\n", zt_nr_cpus(),
           (unsigned long long)mi.total_pages, (unsigned long long)mi.free_pages,
           (unsigned long long)mi.page_size);
    return 0;
}

/* Can this machine run b at all?  (Only asked when no benchmark was named.) */
static bool applies(const struct bench *b)
{
    if (!strncmp(b->name, "part_", 5)) {
        return false; /* they change the machine: only when named */
    }
    if (b->run == run_xcpu) {
        return zt_nr_cpus() > 1;
    }
    if (b->run == run_isol) {
        return !zt_on_linux() && (opt_cpu >= 0 || first_dataplane_cpu() >= 0);
    }
    return true;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench [-c CPU] [-w CPU] [-p CPU] [NAME[=N] ...]   NAME: ");
    for (size_t i = 0; i < NBENCH; i++) {
        fprintf(stderr, "%s ", benches[i].name);
    }
    fprintf(stderr, "mem\n");
    exit(2);
}

static int run_named(const char *arg)
{
    char name[16];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof(name)) {
        usage();
    }
    memcpy(name, arg, len);
    name[len] = 0;
    if (!strcmp(name, "mem")) {
        return print_mem();
    }
    for (size_t i = 0; i < NBENCH; i++) {
        if (!strcmp(name, benches[i].name)) {
            long n = eq ? atol(eq + 1) : benches[i].default_n;
            if (n < 1) {
                usage();
            }
            return run_one(&benches[i], n);
        }
    }
    usage();
    return 2;
}

int main(int argc, char **argv)
{
    int i = 1, failed = 0;
    have_pmu = zt_have_el0_pmu();
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-c")) {
            opt_cpu = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "-w")) {
            opt_waiter = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "-p")) {
            opt_part = atoi(argv[i + 1]);
        } else {
            usage();
        }
    }
    if (opt_cpu >= zt_nr_cpus() || opt_waiter >= zt_nr_cpus()) {
        usage();
    }
    if (i == argc) {
        for (size_t k = 0; k < NBENCH; k++) {
            if (applies(&benches[k])) {
                failed |= run_one(&benches[k], benches[k].default_n);
            }
        }
        return failed;
    }
    for (; i < argc; i++) {
        if (argv[i][0] == '-') {
            usage();
        }
        failed |= run_named(argv[i]);
    }
    return failed;
}
