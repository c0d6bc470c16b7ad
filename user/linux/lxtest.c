/* SPDX-License-Identifier: MIT */
/*
 * lxtest — ordinary Linux C, built unchanged against glibc (aarch64-linux-gnu-gcc -static) and,
 * when Debian's arm64 musl is at hand, against musl: the checks that static Linux programs
 * run on zerotick.  Nothing here knows about zerotick except the isolation prctl numbers.
 *
 *   lxtest CHECK...   run each check; one line "lxtest CHECK: ok" or "lxtest CHECK: FAILED: why"
 *   lxtest child N    exit with status N (what `forkexec` runs)
 *   lxtest isol CPU SECONDS   pin to CPU, isolate (strict) through the C library's prctl(),
 *                     spin SECONDS reading the counter, end isolation; prints the outcome.
 *                     The two prctl calls are bracketed by `svc #0x5a5a` / `svc #0xa5a5`
 *                     getpid calls so QEMU's log shows the window (tools/exclog).
 *
 * Checks: hello (printf, malloc, fopen, qsort), threads (mutex, condition variable, join,
 * on several CPUs), forkexec (fork, execve, waitpid), signals (sigaction, SA_RESTART, EINTR),
 * files (/tmp written, read back, listed, renamed, removed), badfd (EBADF), emfile (EMFILE),
 * badexec (ENOENT, EACCES, ENOEXEC from execve), pipes (pipe, poll), tmpfull (/tmp fills
 * up with ENOSPC, and every page comes back when the file is removed), threadexec (execve
 * from one thread of three ends the others).
 * Exit status: the number of failed checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PR_SET_TASK_ISOLATION    48
#define PR_TASK_ISOLATION_ENABLE 1
#define PR_TASK_ISOLATION_STRICT 2

static char fail_why[200];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int check_hello(void)
{
    int v[] = {5, 3, 9, 1, 7};
    char *p = malloc(1 << 20), line[128];
    CHECK(p != NULL, "malloc");
    memset(p, 1, 1 << 20);
    free(p);
    qsort(v, 5, sizeof(v[0]), cmp_int);
    CHECK(v[0] == 1 && v[4] == 9, "qsort");
    FILE *f = fopen("/etc/passwd", "r");
    CHECK(f != NULL, "fopen /etc/passwd: %s", strerror(errno));
    CHECK(fgets(line, sizeof(line), f) != NULL && strncmp(line, "root:", 5) == 0, "fgets");
    fclose(f);
    printf("lxtest hello: hello, world from pid %d\n", getpid());
    return 0;
}

#define NTHREADS 4
#define ROUNDS   200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, counter;

/* Threads take turns in order: each waits on the condition variable for its turn. */
static void *turn_taker(void *arg)
{
    int me = (int)(intptr_t)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(me % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    sched_setaffinity(0, sizeof(set), &set);
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&mu);
        while (turn % NTHREADS != me) {
            pthread_cond_wait(&cv, &mu);
        }
        counter++;
        turn++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return (void *)(intptr_t)(sched_getcpu() + 1);
}

static int check_threads(void)
{
    pthread_t t[NTHREADS];
    int cpus = 0;
    for (int i = 0; i < NTHREADS; i++) {
        CHECK(pthread_create(&t[i], NULL, turn_taker, (void *)(intptr_t)i) == 0, "create");
    }
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        CHECK(pthread_join(t[i], &r) == 0, "join");
        cpus |= 1 << ((int)(intptr_t)r - 1);
    }
    CHECK(counter == NTHREADS * ROUNDS, "counter %d", counter);
    printf("lxtest threads: %d increments, cpus mask 0x%x\n", counter, cpus);
    return 0;
}

static int check_forkexec(void)
{
    int status;
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        char *argv[] = {"lxtest", "child", "7", NULL};
        execve("/bin/lxtest", argv, environ);
        _exit(99);
    }
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status 0x%x", status);
    CHECK(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD, "ECHILD");
    return 0;
}

/* glibc's vfork is clone(CLONE_VM|CLONE_VFORK|SIGCHLD): the child runs on its parent's memory
 * until its execve or _exit (Linux's rule; zerotick shares the address space the same way,
 * counted), so the child's store is the parent's.  musl's aarch64 vfork is a plain fork
 * (clone(SIGCHLD)), where it is not, on Linux as here.  posix_spawn starts a program (glibc
 * builds it on CLONE_VM|CLONE_VFORK too). */
static volatile int vfork_shared;

static int check_vfork(void)
{
    int status;
    vfork_shared = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        vfork_shared = 42;
        _exit(7);
    }
    CHECK(pid > 0, "vfork: %s", strerror(errno));
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status 0x%x", status);
#ifdef __GLIBC__
    CHECK(vfork_shared == 42, "the vfork child's store is not in the parent (%d)", vfork_shared);
#else
    CHECK(vfork_shared == 0, "a forked child's store is in the parent (%d)", vfork_shared);
#endif
    char *argv[] = {"lxtest", "child", "3", NULL};
    int r = posix_spawn(&pid, "/bin/lxtest", NULL, NULL, argv, environ);
    CHECK(r == 0, "posix_spawn: %s", strerror(r));
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "spawned status 0x%x", status);
    return 0;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(100); /* execve must end this thread wherever it is */
    }
    return NULL;
}

static void *spinner(void *arg)
{
    for (volatile unsigned long i = 0;; i++) {
        (void)arg;
    }
    return NULL;
}

static void *execer(void *arg)
{
    char *argv[] = {"lxtest", "child", "5", NULL};
    (void)arg;
    execve("/bin/lxtest", argv, environ);
    _exit(98);
}

/* execve from a thread of a process with three: the others end, the new image runs. */
static int check_threadexec(void)
{
    int status;
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        pthread_t a, b, c;
        pthread_create(&a, NULL, sleeper, NULL);
        pthread_create(&b, NULL, spinner, NULL);
        pthread_create(&c, NULL, execer, NULL);
        pthread_join(c, NULL);
        _exit(97);
    }
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5, "status 0x%x", status);
    return 0;
}

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
    got = sig;
}

/* The child signals the parent, blocked in read() on a pipe, then writes one byte. */
static int read_through_signal(int flags, long *n, int *err)
{
    int p[2];
    char c;
    struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = flags};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    if (pipe(p) != 0) {
        return -1;
    }
    got = 0;
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        kill(parent, SIGUSR1);
        nanosleep(&ts, NULL);
        if (write(p[1], "x", 1) != 1) {
            _exit(1);
        }
        _exit(0);
    }
    close(p[1]);
    *n = read(p[0], &c, 1);
    *err = errno;
    waitpid(pid, NULL, 0);
    close(p[0]);
    return 0;
}

static int check_signals(void)
{
    long n;
    int err;
    CHECK(read_through_signal(SA_RESTART, &n, &err) == 0, "pipe");
    CHECK(got == SIGUSR1 && n == 1, "SA_RESTART: handler %d, read %ld (%s)", got, n, strerror(err));
    CHECK(read_through_signal(0, &n, &err) == 0, "pipe");
    CHECK(got == SIGUSR1 && n == -1 && err == EINTR, "no SA_RESTART: read %ld (%s)", n,
          strerror(err));
    return 0;
}

static int check_files(void)
{
    const char *msg = "written to /tmp and read back\n";
    char buf[64] = {0};
    struct stat st;
    CHECK(mkdir("/tmp/lxdir", 0755) == 0 || errno == EEXIST, "mkdir: %s", strerror(errno));
    FILE *f = fopen("/tmp/lxdir/a.txt", "w");
    CHECK(f != NULL, "fopen w: %s", strerror(errno));
    fputs(msg, f);
    fclose(f);
    CHECK(stat("/tmp/lxdir/a.txt", &st) == 0 && st.st_size == (off_t)strlen(msg), "stat");
    CHECK(rename("/tmp/lxdir/a.txt", "/tmp/lxdir/b.txt") == 0, "rename: %s", strerror(errno));
    int fd = open("/tmp/lxdir/b.txt", O_RDONLY);
    CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode), "fstat: %s", strerror(errno));
    CHECK(read(fd, buf, sizeof(buf)) == (ssize_t)strlen(msg), "read back");
    close(fd);
    CHECK(strcmp(buf, msg) == 0, "contents");
    DIR *d = opendir("/tmp/lxdir");
    int seen = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        seen += strcmp(e->d_name, "b.txt") == 0;
    }
    CHECK(d && seen == 1, "readdir");
    closedir(d);
    CHECK(unlink("/tmp/lxdir/b.txt") == 0 && rmdir("/tmp/lxdir") == 0, "remove");
    CHECK(access("/tmp/lxdir", F_OK) == -1 && errno == ENOENT, "gone");
    CHECK(open("/bin/lxtest", O_WRONLY) == -1 && errno == EROFS, "initrd is read-only");
    return 0;
}

static unsigned long free_pages(void)
{
    struct sysinfo si;
    return sysinfo(&si) == 0 ? si.freeram : 0;
}

/* Fill /tmp until ENOSPC, then remove the file: every page comes back. */
static int fill_tmp(void)
{
    static char block[65536];
    int fd = open("/tmp/fill", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        return -1;
    }
    long n, total = 0;
    while ((n = write(fd, block, sizeof(block))) > 0) {
        total += n;
    }
    int err = errno;
    close(fd);
    unlink("/tmp/fill");
    errno = err;
    return n < 0 && (err == ENOSPC || err == EFBIG) ? (int)(total >> 10) : -1;
}

static int check_tmpfull(void)
{
    CHECK(fill_tmp() > 0, "warm-up: %s", strerror(errno)); /* kernel objects made once */
    unsigned long before = free_pages();
    int kib = fill_tmp();
    unsigned long after = free_pages();
    CHECK(kib > 0, "no ENOSPC/EFBIG: %s", strerror(errno));
    CHECK(before == after, "free pages %lu before, %lu after", before, after);
    printf("lxtest tmpfull: %d KiB written before the limit, %lu free pages before and after\n",
           kib, after);
    return 0;
}

static int check_badfd(void)
{
    char c;
    CHECK(read(200, &c, 1) == -1 && errno == EBADF, "read 200");
    CHECK(write(-1, &c, 1) == -1 && errno == EBADF, "write -1");
    CHECK(close(77) == -1 && errno == EBADF, "close 77");
    CHECK(dup2(0, 100000) == -1 && errno == EBADF, "dup2 100000");
    return 0;
}

static int check_emfile(void)
{
    int n = 0, fd, first = -1;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
        first = first < 0 ? fd : first;
        n++;
    }
    CHECK(errno == EMFILE, "after %d opens: %s", n, strerror(errno));
    for (int i = first; i < first + n; i++) {
        close(i);
    }
    CHECK(n > 100, "only %d descriptors", n);
    printf("lxtest emfile: %d descriptors, then EMFILE\n", n + 3);
    return 0;
}

static int exec_errno(const char *path)
{
    char *argv[] = {(char *)path, NULL};
    return execve(path, argv, environ) == -1 ? errno : 0;
}

static int check_badexec(void)
{
    CHECK(exec_errno("/no/such/program") == ENOENT, "missing");
    CHECK(exec_errno("/bin") == EACCES, "directory");
    CHECK(exec_errno("/bin/notelf") == ENOEXEC, "text file");
    CHECK(exec_errno("/bin/badelf") == ENOEXEC, "truncated ELF");
    CHECK(exec_errno("/bin/badphdr") == ENOEXEC, "program headers past the end");
    CHECK(exec_errno("/etc/passwd") == EACCES, "no x bit");
    return 0;
}

static int check_pipes(void)
{
    int p[2];
    char buf[8] = {0};
    CHECK(pipe(p) == 0, "pipe");
    struct pollfd pf = {p[0], POLLIN, 0};
    CHECK(poll(&pf, 1, 0) == 0, "poll empty");
    CHECK(write(p[1], "abc", 3) == 3, "write");
    CHECK(poll(&pf, 1, 1000) == 1 && (pf.revents & POLLIN), "poll ready");
    CHECK(read(p[0], buf, sizeof(buf)) == 3 && strcmp(buf, "abc") == 0, "read");
    close(p[1]);
    CHECK(read(p[0], buf, 1) == 0, "end of file");
    close(p[0]);
    return 0;
}

/* getpid issued with a marker immediate: QEMU's log shows it (tools/exclog windows). */
static void marker(int open)
{
    register long x8 __asm__("x8") = 172;
    register long x0 __asm__("x0") = 0;
    if (open) {
        __asm__ volatile("svc #0x5a5a" : "+r"(x0) : "r"(x8) : "memory");
    } else {
        __asm__ volatile("svc #0xa5a5" : "+r"(x0) : "r"(x8) : "memory");
    }
}

static uint64_t counter_now(void)
{
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

static int isol(int cpu, double seconds)
{
    cpu_set_t set;
    uint64_t freq;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        printf("lxtest isol: sched_setaffinity: %s\n", strerror(errno));
        return 1;
    }
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    marker(1);
    int r =
        prctl(PR_SET_TASK_ISOLATION, PR_TASK_ISOLATION_ENABLE | PR_TASK_ISOLATION_STRICT, 0, 0, 0);
    uint64_t end = counter_now() + (uint64_t)(seconds * (double)freq), spins = 0;
    while (r == 0 && counter_now() < end) {
        spins++;
    }
    int r2 = prctl(PR_SET_TASK_ISOLATION, 0, 0, 0, 0);
    marker(0);
    printf("lxtest isol: cpu %d prctl %d/%d, %llu spins\n", sched_getcpu(), r, r2,
           (unsigned long long)spins);
    return r || r2;
}

struct check {
    const char *name;
    int (*fn)(void);
};

static const struct check checks[] = {
    {"hello", check_hello},     {"threads", check_threads},       {"forkexec", check_forkexec},
    {"signals", check_signals}, {"files", check_files},           {"badfd", check_badfd},
    {"emfile", check_emfile},   {"badexec", check_badexec},       {"pipes", check_pipes},
    {"tmpfull", check_tmpfull}, {"threadexec", check_threadexec}, {"vfork", check_vfork},
};

int main(int argc, char **argv)
{
    int failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        return atoi(argv[2]);
    }
    if (argc == 4 && strcmp(argv[1], "isol") == 0) {
        return isol(atoi(argv[2]), atof(argv[3]));
    }
    for (int i = 1; i < argc; i++) {
        const struct check *c = NULL;
        for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++) {
            c = strcmp(argv[i], checks[k].name) == 0 ? &checks[k] : c;
        }
        if (c == NULL) {
            printf("lxtest %s: FAILED: no such check\n", argv[i]);
            failed++;
        } else if (c->fn() != 0) {
            printf("lxtest %s: FAILED: %s\n", argv[i], fail_why);
            failed++;
        } else {
            printf("lxtest %s: ok\n", argv[i]);
        }
    }
    return failed;
}
