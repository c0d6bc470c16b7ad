/* SPDX-License-Identifier: MIT */
/*
 * lxclock — the clocks as a glibc program sees them: every clock id Linux defines, through
 * glibc's own calls (time, gettimeofday, clock_gettime, clock_getres, clock_nanosleep,
 * clock_getcpuclockid, pthread_getcpuclockid, pthread_cond_timedwait) and through raw system
 * calls where glibc answers by itself.  Ordinary Linux C, built unchanged against glibc
 * (aarch64-linux-gnu-gcc -static); nothing here knows zerotick.  What each id must do is
 * written below from Linux's own rules (kernel/time/posix-timers.c, posix-cpu-timers.c,
 * alarmtimer.c; include/uapi/linux/time.h), on purpose not taken from zerotick's header.
 *
 *   lxclock CHECK...   one line per check: "lxclock CHECK: ok" or "lxclock CHECK: FAILED: why"
 *
 * Checks: ids (gettime/getres/nanosleep's errno for ids -8..16 and encoded CPU-clock ids),
 * time (time() and gettimeofday() agree with CLOCK_REALTIME and say a date after 2020: QEMU's
 * RTC), order (the clocks that read the same time read it in order), sleep (a relative and an
 * absolute sleep on each clock that sleeps last at least what was asked), cpu (process and
 * thread CPU clocks, clock_getcpuclockid/pthread_getcpuclockid ids, another process's clock,
 * a foreign thread's clock refused), cpusleep (clock_nanosleep on the process CPU clock while
 * a sibling thread computes), condwait (a CLOCK_REALTIME deadline in pthread_cond_timedwait),
 * mtime (a new file's modification time is wall time), arena (a new thread's first malloc
 * reserves glibc's 64 MiB heap without the kernel populating it: the pages, and the system
 * time spent zeroing them, are only those it uses).
 * Exit status: the number of failed checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS       1000000000ll
#define Y2020    1577836800ll /* 2020-01-01 00:00:00 UTC */
#define NO_CLOCK (-1)         /* not tried: a sleep that only another thread could end */

static char fail_why[240];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static long long ts_ns(const struct timespec *t)
{
    return (long long)t->tv_sec * NS + t->tv_nsec;
}

/* The raw system calls: 0 or the errno. */
static int raw_gettime(clockid_t id, struct timespec *t)
{
    return syscall(SYS_clock_gettime, id, t) == 0 ? 0 : errno;
}

static int raw_getres(clockid_t id, struct timespec *t)
{
    return syscall(SYS_clock_getres, id, t) == 0 ? 0 : errno;
}

static int raw_nanosleep(clockid_t id, int flags, const struct timespec *t)
{
    return syscall(SYS_clock_nanosleep, id, flags, t, NULL) == 0 ? 0 : errno;
}

/* Linux's answers for ids 0..15: clock_gettime/getres, then clock_nanosleep. */
static const struct {
    clockid_t id;
    const char *name;
    int read, sleep;
} linux_ids[] = {
    {CLOCK_REALTIME, "REALTIME", 0, 0},
    {CLOCK_MONOTONIC, "MONOTONIC", 0, 0},
    {CLOCK_PROCESS_CPUTIME_ID, "PROCESS_CPUTIME_ID", 0, 0},
    {CLOCK_THREAD_CPUTIME_ID, "THREAD_CPUTIME_ID", 0, EINVAL},
    {CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW", 0, EOPNOTSUPP},
    {CLOCK_REALTIME_COARSE, "REALTIME_COARSE", 0, EOPNOTSUPP},
    {CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE", 0, EOPNOTSUPP},
    {CLOCK_BOOTTIME, "BOOTTIME", 0, 0},
    {CLOCK_REALTIME_ALARM, "REALTIME_ALARM", EINVAL, EOPNOTSUPP}, /* no wake-up RTC */
    {CLOCK_BOOTTIME_ALARM, "BOOTTIME_ALARM", EINVAL, EOPNOTSUPP},
    {10, "SGI_CYCLE (removed)", EINVAL, EINVAL},
    {CLOCK_TAI, "TAI", 0, 0},
    {12, "12", EINVAL, EINVAL},
    {13, "13", EINVAL, EINVAL},
    {15, "15", EINVAL, EINVAL},
    {16, "16", EINVAL, EINVAL},
    {1 << 20, "2^20", EINVAL, EINVAL},
};

/* Encoded CPU-clock ids (include/linux/posix-timers.h): ~pid << 3 | per-thread << 2 | kind. */
static clockid_t cpu_clock_id(pid_t pid, int thread, int kind)
{
    return (clockid_t)((~(unsigned)pid << 3) | (thread ? 4u : 0u) | (unsigned)kind);
}

static int check_ids(void)
{
    const struct timespec short_sleep = {0, 1000};
    struct timespec t;
    for (size_t i = 0; i < sizeof(linux_ids) / sizeof(linux_ids[0]); i++) {
        clockid_t id = linux_ids[i].id;
        int g = raw_gettime(id, &t), r = raw_getres(id, &t), s = raw_nanosleep(id, 0, &short_sleep);
        CHECK(g == linux_ids[i].read && r == linux_ids[i].read && s == linux_ids[i].sleep,
              "clock %d (%s): gettime %s, getres %s, nanosleep %s; Linux: %s, %s, %s", id,
              linux_ids[i].name, strerrorname_np(g) ?: "0", strerrorname_np(r) ?: "0",
              strerrorname_np(s) ?: "0", strerrorname_np(linux_ids[i].read) ?: "0",
              strerrorname_np(linux_ids[i].read) ?: "0",
              strerrorname_np(linux_ids[i].sleep) ?: "0");
        if (g == 0) {
            CHECK(t.tv_sec == 0 && t.tv_nsec > 0 && t.tv_nsec < 1000000,
                  "clock %d: resolution %lld ns", id, ts_ns(&t));
        }
    }
    /* Negative ids: CPU clocks, and the file-descriptor clocks (kind 3) no fd backs here. */
    const struct {
        clockid_t id;
        const char *name;
        int read, sleep;
    } neg[] = {
        {cpu_clock_id(0, 0, 2), "own process SCHED", 0, 0},
        {cpu_clock_id(0, 0, 0), "own process PROF", 0, 0},
        {cpu_clock_id(0, 0, 1), "own process VIRT", 0, NO_CLOCK}, /* user time: would not move */
        {cpu_clock_id(0, 1, 2), "own thread SCHED", 0, EINVAL},
        {cpu_clock_id(gettid(), 1, 2), "own thread by tid", 0, EINVAL},
        {cpu_clock_id(0, 1, 3), "kind 3 per thread", EINVAL, EINVAL},
        {cpu_clock_id(30000, 0, 2), "no such process", EINVAL, EINVAL},
        {cpu_clock_id(30000, 1, 2), "no such thread", EINVAL, EINVAL},
        {(clockid_t)((~3u << 3) | 3), "fd 3 clock", EINVAL, EOPNOTSUPP},
        {-1, "-1", EINVAL, EINVAL},
    };
    for (size_t i = 0; i < sizeof(neg) / sizeof(neg[0]); i++) {
        int g = raw_gettime(neg[i].id, &t), r = raw_getres(neg[i].id, &t);
        int s = neg[i].sleep == NO_CLOCK ? NO_CLOCK : raw_nanosleep(neg[i].id, 0, &short_sleep);
        CHECK(g == neg[i].read && r == neg[i].read && s == neg[i].sleep,
              "id %d (%s): gettime %s getres %s nanosleep %s; Linux: %s, %s, %s", neg[i].id,
              neg[i].name, strerrorname_np(g) ?: "0", strerrorname_np(r) ?: "0",
              strerrorname_np(s) ?: "0", strerrorname_np(neg[i].read) ?: "0",
              strerrorname_np(neg[i].read) ?: "0", strerrorname_np(neg[i].sleep) ?: "0");
    }
    /* Bad pointers after a good id; a NULL resolution pointer is allowed. */
    CHECK(raw_gettime(CLOCK_MONOTONIC_RAW, (struct timespec *)16) == EFAULT, "gettime to 16");
    CHECK(raw_getres(CLOCK_BOOTTIME, NULL) == 0, "getres with NULL");
    CHECK(raw_nanosleep(CLOCK_BOOTTIME, 0, (struct timespec *)16) == EFAULT, "nanosleep from 16");
    return 0;
}

static int check_time(void)
{
    struct timespec a, b;
    struct timeval tv;
    CHECK(clock_gettime(CLOCK_REALTIME, &a) == 0, "REALTIME: %s", strerror(errno));
    time_t t = time(NULL);
    CHECK(gettimeofday(&tv, NULL) == 0, "gettimeofday: %s", strerror(errno));
    CHECK(clock_gettime(CLOCK_REALTIME, &b) == 0, "REALTIME: %s", strerror(errno));
    CHECK(a.tv_sec >= Y2020, "CLOCK_REALTIME says %lld s since 1970: no wall clock",
          (long long)a.tv_sec);
    CHECK(t >= a.tv_sec && t <= b.tv_sec, "time() %lld outside the REALTIME reads %lld..%lld",
          (long long)t, (long long)a.tv_sec, (long long)b.tv_sec);
    CHECK(tv.tv_sec >= a.tv_sec && tv.tv_sec <= b.tv_sec,
          "gettimeofday %lld outside the REALTIME reads %lld..%lld", (long long)tv.tv_sec,
          (long long)a.tv_sec, (long long)b.tv_sec);
    struct tm tm;
    char text[64];
    gmtime_r(&t, &tm);
    strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
    printf("lxclock time: time() %lld, %s\n", (long long)t, text);
    return 0;
}

/* Clocks that read the same time: each read of `id` lies between two reads of `base`. */
static int in_order(clockid_t base, clockid_t id, const char *name)
{
    struct timespec a, m, b;
    for (int i = 0; i < 100; i++) {
        CHECK(clock_gettime(base, &a) == 0 && clock_gettime(id, &m) == 0 &&
                  clock_gettime(base, &b) == 0,
              "%s: %s", name, strerror(errno));
        CHECK(ts_ns(&a) <= ts_ns(&m) && ts_ns(&m) <= ts_ns(&b),
              "%s read %lld between %lld and %lld", name, ts_ns(&m), ts_ns(&a), ts_ns(&b));
    }
    return 0;
}

static int check_order(void)
{
    return in_order(CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW") ||
           in_order(CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE") ||
           in_order(CLOCK_MONOTONIC, CLOCK_BOOTTIME, "BOOTTIME") ||
           in_order(CLOCK_REALTIME, CLOCK_REALTIME_COARSE, "REALTIME_COARSE") ||
           in_order(CLOCK_REALTIME, CLOCK_TAI, "TAI");
}

/* A relative 5 ms sleep and an absolute one 5 ms ahead on `id`, each checked on `id` itself. */
static int sleeps_long_enough(clockid_t id, const char *name)
{
    struct timespec t0, t1, rel = {0, 5000000}, abs;
    CHECK(clock_gettime(id, &t0) == 0, "%s: %s", name, strerror(errno));
    int r = clock_nanosleep(id, 0, &rel, NULL);
    CHECK(r == 0, "%s: relative sleep: %s", name, strerror(r));
    CHECK(clock_gettime(id, &t1) == 0 && ts_ns(&t1) - ts_ns(&t0) >= 5000000,
          "%s: a 5 ms sleep lasted %lld ns", name, ts_ns(&t1) - ts_ns(&t0));
    abs.tv_sec = t1.tv_sec + (t1.tv_nsec + 5000000) / NS;
    abs.tv_nsec = (t1.tv_nsec + 5000000) % NS;
    r = clock_nanosleep(id, TIMER_ABSTIME, &abs, NULL);
    CHECK(r == 0, "%s: absolute sleep: %s", name, strerror(r));
    CHECK(clock_gettime(id, &t1) == 0 && ts_ns(&t1) >= ts_ns(&abs),
          "%s: woke at %lld before the deadline %lld", name, ts_ns(&t1), ts_ns(&abs));
    /* An absolute deadline in the past returns at once. */
    abs.tv_sec = 0;
    abs.tv_nsec = 1;
    r = clock_nanosleep(id, TIMER_ABSTIME, &abs, NULL);
    CHECK(r == 0, "%s: past deadline: %s", name, strerror(r));
    return 0;
}

static int check_sleep(void)
{
    return sleeps_long_enough(CLOCK_REALTIME, "REALTIME") ||
           sleeps_long_enough(CLOCK_MONOTONIC, "MONOTONIC") ||
           sleeps_long_enough(CLOCK_BOOTTIME, "BOOTTIME") || sleeps_long_enough(CLOCK_TAI, "TAI");
}

static volatile int stop_spinning;

static void *spinner(void *arg)
{
    (void)arg;
    while (!stop_spinning) {
    }
    return NULL;
}

static void burn(long long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while (ts_ns(&t) - ts_ns(&t0) < ns);
}

static int check_cpu(void)
{
    clockid_t pid_clock, thr_clock;
    struct timespec p, t, prof, virt;
    pthread_t th;
    CHECK(clock_getcpuclockid(getpid(), &pid_clock) == 0, "clock_getcpuclockid(self)");
    CHECK(pid_clock == cpu_clock_id(getpid(), 0, 2), "clock_getcpuclockid gave %d", pid_clock);
    CHECK(clock_getcpuclockid(30000, &pid_clock) == ESRCH, "clock_getcpuclockid(30000): not ESRCH");
    burn(20000000);
    /* The thread's clock first: the process's, read after, holds all of it (read the other
     * way round, the time between the two reads counts for the thread only). */
    CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 && ts_ns(&t) >= 20000000,
          "thread CPU time %lld after 20 ms of computing", ts_ns(&t));
    CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p) == 0 && ts_ns(&p) >= ts_ns(&t),
          "process CPU time %lld, its thread's read before %lld", ts_ns(&p), ts_ns(&t));
    CHECK(clock_gettime(cpu_clock_id(0, 0, 0), &prof) == 0 &&
              clock_gettime(cpu_clock_id(0, 0, 1), &virt) == 0 && ts_ns(&virt) <= ts_ns(&prof),
          "VIRT %lld above PROF %lld", ts_ns(&virt), ts_ns(&prof));
    /* A thread's clock, read from another thread of the process. */
    stop_spinning = 0;
    CHECK(pthread_create(&th, NULL, spinner, NULL) == 0, "pthread_create");
    CHECK(pthread_getcpuclockid(th, &thr_clock) == 0, "pthread_getcpuclockid");
    CHECK(thr_clock < 0 && (thr_clock & 7) == 6, "pthread_getcpuclockid gave %d", thr_clock);
    struct timespec t1, t2;
    CHECK(clock_gettime(thr_clock, &t1) == 0, "sibling's clock: %s", strerror(errno));
    burn(10000000);
    CHECK(clock_gettime(thr_clock, &t2) == 0 && ts_ns(&t2) >= ts_ns(&t1),
          "sibling's clock went from %lld to %lld", ts_ns(&t1), ts_ns(&t2));
    stop_spinning = 1;
    pthread_join(th, NULL);
    /* Another process: its process clock is readable, its thread clock is not. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        char c;
        close(pipefd[1]);
        burn(5000000);
        read(pipefd[0], &c, 1);
        _exit(0);
    }
    close(pipefd[0]);
    int g = raw_gettime(cpu_clock_id(child, 0, 2), &t);
    int gt = raw_gettime(cpu_clock_id(child, 1, 2), &t);
    write(pipefd[1], "x", 1);
    close(pipefd[1]);
    waitpid(child, NULL, 0);
    CHECK(g == 0, "the child's process clock: %s", strerrorname_np(g) ?: "0");
    CHECK(gt == EINVAL, "the child's thread clock from another process: %s (Linux: EINVAL)",
          strerrorname_np(gt) ?: "0");
    return 0;
}

static int check_cpusleep(void)
{
    pthread_t th;
    struct timespec before, after, want = {0, 50000000};
    stop_spinning = 0;
    CHECK(pthread_create(&th, NULL, spinner, NULL) == 0, "pthread_create");
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &before);
    int r = clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &want, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &after);
    stop_spinning = 1;
    pthread_join(th, NULL);
    CHECK(r == 0, "clock_nanosleep(PROCESS_CPUTIME_ID): %s", strerror(r));
    CHECK(ts_ns(&after) - ts_ns(&before) >= 50000000,
          "woke after the process used %lld ns of CPU, 50 ms asked",
          ts_ns(&after) - ts_ns(&before));
    r = clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &want, NULL);
    CHECK(r == EINVAL, "clock_nanosleep(THREAD_CPUTIME_ID): %s", strerror(r));
    return 0;
}

static int check_condwait(void)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    struct timespec deadline, now;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 30000000;
    if (deadline.tv_nsec >= NS) {
        deadline.tv_sec++, deadline.tv_nsec -= NS;
    }
    pthread_mutex_lock(&mu);
    int r = pthread_cond_timedwait(&cv, &mu, &deadline);
    pthread_mutex_unlock(&mu);
    clock_gettime(CLOCK_REALTIME, &now);
    CHECK(r == ETIMEDOUT, "pthread_cond_timedwait: %s", strerror(r));
    CHECK(ts_ns(&now) >= ts_ns(&deadline), "timed out at %lld, before the deadline %lld",
          ts_ns(&now), ts_ns(&deadline));
    return 0;
}

static int check_mtime(void)
{
    struct stat st;
    time_t t0 = time(NULL);
    int fd = open("/tmp/lxclock.mtime", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0, "open: %s", strerror(errno));
    CHECK(write(fd, "x", 1) == 1, "write");
    close(fd);
    CHECK(stat("/tmp/lxclock.mtime", &st) == 0, "stat: %s", strerror(errno));
    time_t t1 = time(NULL);
    unlink("/tmp/lxclock.mtime");
    CHECK(st.st_mtime >= t0 && st.st_mtime <= t1, "mtime %lld outside %lld..%lld",
          (long long)st.st_mtime, (long long)t0, (long long)t1);
    return 0;
}

/* The memory a thread's first malloc costs: glibc reserves a new heap of 64 MiB (an mmap of
 * twice that with PROT_NONE, trimmed to an aligned half) and makes only what it uses
 * accessible.  A reservation costs no page; populating all of it cost 16,384 pages and most
 * of a second of system time under QEMU (issue 21, item 3). */
static long long arena_bytes;

static long long free_bytes(void)
{
    struct sysinfo si;
    return sysinfo(&si) == 0 ? (long long)si.freeram * si.mem_unit : -1;
}

static void *first_malloc(void *arg)
{
    (void)arg;
    long long before = free_bytes();
    char *p = malloc(100);
    long long after = free_bytes();
    arena_bytes = p && before >= 0 && after >= 0 ? before - after : -1;
    free(p);
    return NULL;
}

static int check_arena(void)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, first_malloc, NULL) == 0, "pthread_create");
    pthread_join(th, NULL);
    CHECK(arena_bytes >= 0, "malloc in a new thread failed");
    printf("lxclock arena: a new thread's first malloc took %lld KiB\n", arena_bytes / 1024);
    CHECK(arena_bytes < 4 << 20,
          "a new thread's first malloc took %lld KiB: its 64 MiB heap "
          "reservation was populated",
          arena_bytes / 1024);
    return 0;
}

struct check {
    const char *name;
    int (*fn)(void);
};

static const struct check checks[] = {
    {"ids", check_ids},           {"time", check_time},   {"order", check_order},
    {"sleep", check_sleep},       {"cpu", check_cpu},     {"cpusleep", check_cpusleep},
    {"condwait", check_condwait}, {"mtime", check_mtime}, {"arena", check_arena},
};

int main(int argc, char **argv)
{
    int failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const struct check *c = NULL;
        for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++) {
            c = strcmp(argv[i], checks[k].name) == 0 ? &checks[k] : c;
        }
        if (c == NULL) {
            printf("lxclock %s: FAILED: no such check\n", argv[i]);
            failed++;
        } else if (c->fn() != 0) {
            printf("lxclock %s: FAILED: %s\n", argv[i], fail_why);
            failed++;
        } else {
            printf("lxclock %s: ok\n", argv[i]);
        }
    }
    return failed;
}
