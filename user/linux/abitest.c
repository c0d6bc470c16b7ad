/* SPDX-License-Identifier: MIT */
/*
 * abitest — ordinary Linux C (glibc, static) making the calls real-time programs and test
 * harnesses make, each check printing "abitest CHECK: ok", "abitest CHECK: FAILED: why" or
 * "abitest CHECK: skipped: why".  Nothing here knows about zerotick: it runs on Linux too.
 *
 * Checks:
 *   sched     sched_setscheduler/getscheduler/setparam/getparam, the priority range,
 *             sched_rr_get_interval, a thread created with an explicit SCHED_FIFO attribute,
 *             /proc/self/stat's policy and priority; bad policies and priorities refused
 *   mlock     mlockall/munlockall, mlock/munlock/mlock2, and their errors
 *   timers    clock_nanosleep with TIMER_ABSTIME, alarm(), a periodic ITIMER_REAL, a
 *             periodic POSIX timer with a real-time signal (signals counted, timer_gettime,
 *             timer_getoverrun, timer_delete stops it), bad arguments refused
 *   prctl     PR_SET/GET_NAME, _PDEATHSIG (a grandchild is signalled when its parent exits),
 *             _DUMPABLE, _TIMERSLACK, _NO_NEW_PRIVS, PR_CAPBSET_READ, an unknown option
 *   owners    umask; getpwnam/getgrnam for nobody and nogroup; chown, lchown, fchown and
 *             fchownat in a mkdtemp directory, as stat shows them; -1 keeps; EROFS on a
 *             read-only file system (its own program's, where statvfs says so), ENOENT
 *   harness   a test harness's run: mkdtemp and chown it to nobody, fork the test in its
 *             own process group, bound it with alarm(), kill the group when the alarm goes,
 *             reap it (killed by SIGKILL) and find its grandchild gone too
 *   shm       the results page a harness shares: a /dev/shm file mapped MAP_SHARED by the
 *             parent and a forked child, coherent with write/read (skipped, with the errno,
 *             where /dev/shm or file mappings are missing)
 *   misc      getrandom, prlimit64 of the caller's pid, membarrier's QUERY agreeing with its
 *             commands, rseq (ENOSYS is fine: glibc then goes without)
 *   caps      capget (root's set), capset dropping capabilities (in a child), /proc/self/status
 *             agreeing, no raising a dropped permitted one, an unknown version
 *   numa      get_mempolicy as libnuma asks it, the allowed nodes, set_mempolicy and mbind to
 *             node 0 (the one node), a node that does not exist refused
 *   anon      mmap(MAP_ANONYMOUS) whatever the descriptor (libnuma passes 0)
 * Exit status: the number of failed checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char why[240];
static int skipped;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(why, sizeof(why), __VA_ARGS__);                                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define SKIP(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, sizeof(why), __VA_ARGS__);                                                   \
        skipped = 1;                                                                               \
        return 0;                                                                                  \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- sched ---- */

static void *fifo_thread(void *arg)
{
    int policy;
    struct sched_param sp;
    pthread_getschedparam(pthread_self(), &policy, &sp);
    *(int *)arg = policy == SCHED_FIFO && sp.sched_priority == 80;
    return NULL;
}

/* Fields 40 and 41 (rt_priority, policy) of /proc/self/task/TID/stat. */
static int stat_policy(int *prio, int *policy)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", gettid());
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof(buf), f)) {
        return -1;
    }
    fclose(f);
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 40; field++) {
        p = strchr(p + 1, ' ');
    }
    return p && sscanf(p, " %d %d", prio, policy) == 2 ? 0 : -1;
}

static int check_sched(void)
{
    struct sched_param sp = {.sched_priority = 50};
    CHECK(sched_get_priority_max(SCHED_FIFO) == 99 && sched_get_priority_min(SCHED_FIFO) == 1 &&
              sched_get_priority_max(SCHED_OTHER) == 0,
          "priority range %d..%d", sched_get_priority_min(SCHED_FIFO),
          sched_get_priority_max(SCHED_FIFO));
    CHECK(sched_setscheduler(0, SCHED_FIFO, &sp) == 0, "setscheduler FIFO 50: %s", strerror(errno));
    int prio = -1, policy = -1;
    CHECK(sched_getscheduler(0) == SCHED_FIFO, "getscheduler %d", sched_getscheduler(0));
    CHECK(stat_policy(&prio, &policy) == 0 && prio == 50 && policy == SCHED_FIFO,
          "stat says priority %d policy %d", prio, policy);
    sp.sched_priority = 0;
    CHECK(sched_setscheduler(0, SCHED_FIFO, &sp) < 0 && errno == EINVAL, "FIFO 0 accepted");
    CHECK(sched_setscheduler(0, 6 /* SCHED_DEADLINE */, &sp) < 0 && errno == EINVAL,
          "DEADLINE accepted");
    CHECK(sched_setscheduler(32000, SCHED_OTHER, &sp) < 0 && errno == ESRCH, "pid 32000");
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, NULL) < 0 && errno == EINVAL,
          "NULL param accepted");
    sp.sched_priority = 70;
    CHECK(sched_setparam(0, &sp) == 0 && sched_getparam(0, &sp) == 0 && sp.sched_priority == 70,
          "setparam/getparam: %d", sp.sched_priority);
    struct timespec ts;
    CHECK(sched_rr_get_interval(0, &ts) == 0, "rr_get_interval: %s", strerror(errno));
    pthread_attr_t attr;
    pthread_t t;
    int ok = 0;
    pthread_attr_init(&attr);
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    sp.sched_priority = 80;
    pthread_attr_setschedparam(&attr, &sp);
    int r = pthread_create(&t, &attr, fifo_thread, &ok);
    CHECK(r == 0, "pthread_create with SCHED_FIFO 80: %s", strerror(r));
    pthread_join(t, NULL);
    CHECK(ok, "the thread is not SCHED_FIFO 80");
    sp.sched_priority = 0;
    CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == 0 && sched_getscheduler(0) == SCHED_OTHER,
          "back to SCHED_OTHER");
    return 0;
}

/* ---- mlock ---- */

static int check_mlock(void)
{
    char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(mlockall(MCL_CURRENT | MCL_FUTURE) == 0, "mlockall: %s", strerror(errno));
    CHECK(mlock(p, 1 << 20) == 0 && munlock(p, 1 << 20) == 0, "mlock/munlock: %s", strerror(errno));
    CHECK(mlock2(p + 4096, 4096, MLOCK_ONFAULT) == 0, "mlock2: %s", strerror(errno));
    CHECK(mlock2(p, 4096, 0x10) < 0 && errno == EINVAL, "mlock2 flags 0x10 accepted");
    CHECK(mlockall(0) < 0 && errno == EINVAL, "mlockall(0) accepted");
    CHECK(mlockall(MCL_ONFAULT) < 0 && errno == EINVAL, "mlockall(MCL_ONFAULT) accepted");
    munmap(p, 1 << 20);
    CHECK(mlock(p, 4096) < 0 && errno == ENOMEM, "mlock of an unmapped page: %s", strerror(errno));
    CHECK(munlockall() == 0, "munlockall: %s", strerror(errno));
    return 0;
}

/* ---- timers ---- */

static volatile sig_atomic_t alarms, rt_signals;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void on_rt(int sig)
{
    (void)sig;
    rt_signals++;
}

static int check_timers(void)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timespec until = t0;
    until.tv_nsec += 30000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++, until.tv_nsec -= 1000000000;
    }
    int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(r == 0 && (t1.tv_sec > until.tv_sec ||
                     (t1.tv_sec == until.tv_sec && t1.tv_nsec >= until.tv_nsec)),
          "clock_nanosleep(TIMER_ABSTIME): %d, woke before the deadline", r);
    signal(SIGALRM, on_alarm);
    alarms = 0;
    alarm(5);
    CHECK(alarm(1) >= 4, "alarm: the first one's time left is not returned");
    pause();
    CHECK(alarms == 1, "alarm(): %d SIGALRM", alarms);
    struct itimerval it = {{0, 20000}, {0, 20000}}, cur;
    alarms = 0;
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer: %s", strerror(errno));
    CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_interval.tv_usec == 20000,
          "getitimer interval %ld us", (long)cur.it_interval.tv_usec);
    for (double end = now_s() + 0.5; now_s() < end && alarms < 5;) {
        pause();
    }
    memset(&it, 0, sizeof(it));
    setitimer(ITIMER_REAL, &it, NULL);
    CHECK(alarms >= 5, "periodic ITIMER_REAL: %d SIGALRM in 0.5 s", alarms);
    it.it_value.tv_usec = 1000000;
    CHECK(setitimer(ITIMER_REAL, &it, NULL) < 0 && errno == EINVAL, "tv_usec 1000000 accepted");
    signal(SIGRTMIN, on_rt);
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
    timer_t id;
    CHECK(timer_create(CLOCK_MONOTONIC, &ev, &id) == 0, "timer_create: %s", strerror(errno));
    struct itimerspec its = {{0, 10000000}, {0, 10000000}}, got;
    CHECK(timer_settime(id, 0, &its, NULL) == 0, "timer_settime: %s", strerror(errno));
    for (double end = now_s() + 0.5; now_s() < end && rt_signals < 10;) {
        pause();
    }
    CHECK(timer_gettime(id, &got) == 0 && got.it_interval.tv_nsec == 10000000,
          "timer_gettime interval %ld ns", (long)got.it_interval.tv_nsec);
    CHECK(timer_getoverrun(id) >= 0, "timer_getoverrun: %s", strerror(errno));
    CHECK(timer_delete(id) == 0, "timer_delete: %s", strerror(errno));
    int seen = rt_signals;
    usleep(50000);
    CHECK(seen >= 10 && rt_signals == seen, "POSIX timer: %d signals, %d after delete", seen,
          rt_signals - seen);
    CHECK(timer_settime(id, 0, &its, NULL) < 0 && errno == EINVAL, "a deleted timer is set");
    CHECK(timer_create(CLOCK_PROCESS_CPUTIME_ID + 100, &ev, &id) < 0 && errno == EINVAL,
          "clock 102 accepted");
    return 0;
}

/* ---- prctl ---- */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
    usr1 = sig == SIGUSR1;
}

static int check_prctl(void)
{
    char name[16];
    CHECK(prctl(PR_SET_NAME, "a-long-thread-name-here") == 0 && prctl(PR_GET_NAME, name) == 0 &&
              strcmp(name, "a-long-thread-n") == 0,
          "name '%s'", name);
    prctl(PR_SET_NAME, "abitest");
    CHECK(prctl(PR_SET_DUMPABLE, 0) == 0 && prctl(PR_GET_DUMPABLE) == 0 &&
              prctl(PR_SET_DUMPABLE, 1) == 0 && prctl(PR_GET_DUMPABLE) == 1,
          "dumpable");
    CHECK(prctl(PR_SET_DUMPABLE, 2) < 0 && errno == EINVAL, "dumpable 2 accepted");
    CHECK(prctl(PR_SET_TIMERSLACK, 1000) == 0 && prctl(PR_GET_TIMERSLACK) == 1000, "timerslack");
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
              prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1,
          "no_new_privs");
    CHECK(prctl(PR_CAPBSET_READ, 0) == 1 && prctl(PR_CAPBSET_READ, 1000) < 0, "capbset");
    CHECK(prctl(12345) < 0 && errno == EINVAL, "option 12345 accepted");
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) { /* the parent that dies, leaving a grandchild that asked to be told */
        if (fork() == 0) {
            signal(SIGUSR1, on_usr1);
            prctl(PR_SET_PDEATHSIG, SIGUSR1);
            write(fds[1], "r", 1); /* ready */
            for (double end = now_s() + 5; !usr1 && now_s() < end;) {
                usleep(1000);
            }
            write(fds[1], usr1 ? "s" : "x", 1);
            _exit(0);
        }
        char c;
        read(fds[0], &c, 1);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    char c = 0;
    CHECK(read(fds[0], &c, 1) == 1 && c == 's', "the grandchild got '%c', not SIGUSR1", c);
    close(fds[0]);
    close(fds[1]);
    return 0;
}

/* ---- owners ---- */

static int check_owners(void)
{
    struct passwd *pw = getpwnam("nobody");
    struct group *gr = getgrnam("nogroup");
    CHECK(pw && gr && pw->pw_uid == 65534 && gr->gr_gid == 65534, "nobody %d nogroup %d",
          pw ? (int)pw->pw_uid : -1, gr ? (int)gr->gr_gid : -1);
    CHECK(getpwnam("daemon") && getpwuid(0) && strcmp(getpwuid(0)->pw_name, "root") == 0,
          "daemon or root missing");
    mode_t old = umask(077);
    CHECK(umask(old) == 077, "umask");
    char dir[] = "/tmp/ownersXXXXXX", file[64], link[64];
    CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    snprintf(file, sizeof(file), "%s/f", dir);
    snprintf(link, sizeof(link), "%s/l", dir);
    int fd = open(file, O_CREAT | O_RDWR, 04755);
    CHECK(fd >= 0 && symlink("f", link) == 0, "file and link: %s", strerror(errno));
    struct stat st;
    CHECK(chown(dir, 65534, 65534) == 0 && stat(dir, &st) == 0 && st.st_uid == 65534 &&
              st.st_gid == 65534,
          "chown dir: %s, now %d:%d", strerror(errno), (int)st.st_uid, (int)st.st_gid);
    CHECK(fchown(fd, 1, (gid_t)-1) == 0 && fstat(fd, &st) == 0 && st.st_uid == 1 &&
              st.st_gid == 0 && !(st.st_mode & S_ISUID),
          "fchown: %d:%d mode %o", (int)st.st_uid, (int)st.st_gid, st.st_mode);
    CHECK(lchown(link, 2, 2) == 0 && lstat(link, &st) == 0 && st.st_uid == 2 &&
              stat(link, &st) == 0 && st.st_uid == 1,
          "lchown changed the target");
    CHECK(fchownat(fd, "", 3, 3, AT_EMPTY_PATH) == 0 && fstat(fd, &st) == 0 && st.st_uid == 3,
          "fchownat AT_EMPTY_PATH: %s", strerror(errno));
    char exe[256];
    struct statvfs vfs;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(n > 0 && statvfs((exe[n] = 0, exe), &vfs) == 0, "my own program: %s", strerror(errno));
    CHECK(!(vfs.f_flag & ST_RDONLY) || (chown(exe, 1, 1) < 0 && errno == EROFS),
          "chown of %s on a read-only file system: %s", exe, strerror(errno));
    CHECK(chown("/tmp/no/such", 1, 1) < 0 && errno == ENOENT, "chown of nothing");
    CHECK(fchownat(AT_FDCWD, dir, 1, 1, 0x8000) < 0 && errno == EINVAL, "bad flags accepted");
    close(fd);
    unlink(link);
    unlink(file);
    CHECK(rmdir(dir) == 0, "rmdir: %s", strerror(errno));
    return 0;
}

/* ---- harness ---- */

static volatile sig_atomic_t timed_out;

static void on_timeout(int sig)
{
    (void)sig;
    timed_out = 1;
}

static int check_harness(void)
{
    char dir[] = "/tmp/harnessXXXXXX";
    CHECK(mkdtemp(dir) && chown(dir, getpwnam("nobody")->pw_uid, getgrnam("nogroup")->gr_gid) == 0,
          "mkdtemp + chown: %s", strerror(errno));
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t test = fork();
    if (test == 0) { /* the test: a helper of its own, then a hang */
        setpgid(0, 0);
        pid_t helper = fork();
        if (helper == 0) {
            for (;;) {
                pause();
            }
        }
        write(fds[1], &helper, sizeof(helper));
        for (;;) {
            pause();
        }
    }
    setpgid(test, test); /* both sides, as shells do: whichever runs first */
    pid_t helper;
    CHECK(read(fds[0], &helper, sizeof(helper)) == sizeof(helper), "no helper");
    struct sigaction sa = {.sa_handler = on_timeout};
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    int status;
    pid_t r = waitpid(test, &status, 0); /* interrupted by the alarm: EINTR */
    CHECK(r < 0 && errno == EINTR && timed_out, "waitpid: %d (%s), timed out %d", r,
          strerror(errno), timed_out);
    CHECK(kill(-test, SIGKILL) == 0, "kill(-%d): %s", test, strerror(errno));
    CHECK(waitpid(test, &status, 0) == test && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
          "the test's status %x", status);
    int gone = 0;
    for (double end = now_s() + 2; now_s() < end && !gone;) {
        if (getpid() == 1) { /* booted as init: the orphan is ours to reap */
            while (waitpid(-1, NULL, WNOHANG) > 0) {
            }
        }
        gone = kill(helper, 0) < 0 && errno == ESRCH; /* init reaps it once it is an orphan */
        usleep(10000);
    }
    CHECK(gone, "the helper %d outlived its process group's SIGKILL", helper);
    CHECK(rmdir(dir) == 0, "rmdir: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return 0;
}

/* ---- shm ---- */

static int check_shm(void)
{
    int fd = open("/dev/shm/abitest-results", O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (fd < 0) {
        SKIP("/dev/shm/abitest-results: %s (no /dev/shm)", strerror(errno));
    }
    CHECK(ftruncate(fd, 4096) == 0, "ftruncate: %s", strerror(errno));
    volatile int *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
        int e = errno;
        close(fd);
        unlink("/dev/shm/abitest-results");
        SKIP("mmap(MAP_SHARED) of a /dev/shm file: %s (no file mappings)", strerror(e));
    }
    pid_t child = fork();
    if (child == 0) {
        page[0] = 42; /* the result, where the harness reads it */
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    int via_read = 0;
    pread(fd, &via_read, sizeof(via_read), 0);
    munmap((void *)page, 4096);
    close(fd);
    unlink("/dev/shm/abitest-results");
    CHECK(page != MAP_FAILED && via_read == 42, "the child's result reads %d", via_read);
    return 0;
}

/* ---- caps, numa ---- */

struct cap_hdr {
    uint32_t version;
    int pid;
};
struct cap_set {
    uint32_t effective, permitted, inheritable;
};
#define CAP_V3 0x20080522

/* In a child (what it drops stays with it): capget of root's full set, capset dropping from
 * the effective and permitted sets, /proc/self/status agreeing, no way back for permitted. */
static int caps_child(void)
{
    struct cap_hdr h = {CAP_V3, 0};
    struct cap_set d[2];
    if (syscall(SYS_capget, &h, d) != 0 || !(d[0].effective & 1) || d[1].effective != 0x1ff) {
        return 1;
    }
    d[0].effective &= ~(1u << 23); /* CAP_SYS_NICE */
    d[0].permitted &= ~(1u << 22); /* CAP_SYS_RESOURCE */
    d[0].effective &= ~(1u << 22);
    if (syscall(SYS_capset, &h, d) != 0) {
        return 2;
    }
    char buf[4096], *p;
    FILE *f = fopen("/proc/self/status", "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    buf[n] = 0;
    if (f) {
        fclose(f);
    }
    p = strstr(buf, "CapEff:\t");
    if (!p || strtoull(p + 8, NULL, 16) != 0x1ffffffffffull - (1ull << 23) - (1ull << 22)) {
        return 3;
    }
    d[0].permitted |= 1u << 22; /* raising permitted again: refused */
    if (syscall(SYS_capset, &h, d) == 0 || errno != EPERM) {
        return 4;
    }
    h.version = 1;
    if (syscall(SYS_capget, &h, d) == 0 || errno != EINVAL || h.version != CAP_V3) {
        return 5; /* an unknown version: the preferred one written back */
    }
    return 0;
}

static int check_caps(void)
{
    pid_t child = fork();
    if (child == 0) {
        _exit(caps_child());
    }
    int status;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "capabilities: step %d failed",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

static int check_numa(void)
{
    int mode = -1;
    unsigned long mask[2] = {0, 0};
    CHECK(syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0) == 0, "get_mempolicy: %s",
          strerror(errno)); /* what libnuma's numa_available asks */
    CHECK(syscall(SYS_get_mempolicy, &mode, mask, 128, NULL, 4 /* MEMS_ALLOWED */) == 0 &&
              mask[0] == 1,
          "allowed nodes %lx", mask[0]);
    mask[0] = 1;
    CHECK(syscall(SYS_set_mempolicy, 2 /* BIND */, mask, 64) == 0, "bind to node 0: %s",
          strerror(errno));
    CHECK(syscall(SYS_get_mempolicy, &mode, mask, 64, NULL, 0) == 0 && mode == 2 && mask[0] == 1,
          "get: mode %d nodes %lx", mode, mask[0]);
    mask[0] = 2;
    CHECK(syscall(SYS_set_mempolicy, 2, mask, 64) < 0 && errno == EINVAL, "node 1 accepted");
    mask[0] = 1;
    CHECK(syscall(SYS_set_mempolicy, 0 /* DEFAULT */, mask, 64) < 0 && errno == EINVAL,
          "DEFAULT with nodes accepted");
    CHECK(syscall(SYS_set_mempolicy, 0, NULL, 0) == 0, "back to DEFAULT: %s", strerror(errno));
    char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(syscall(SYS_mbind, p, 8192, 1 /* PREFERRED */, mask, 64, 0) == 0, "mbind: %s",
          strerror(errno));
    CHECK(syscall(SYS_mbind, p + 1, 4096, 1, mask, 64, 0) < 0 && errno == EINVAL,
          "an unaligned mbind accepted");
    CHECK(syscall(SYS_get_mempolicy, &mode, NULL, 0, p, 3 /* NODE | ADDR */) == 0 && mode == 0,
          "the node of a page: %d", mode);
    munmap(p, 8192);
    return 0;
}

/* ---- anon ---- */

/* An anonymous mapping whatever its fd says: Linux ignores the descriptor with MAP_ANONYMOUS,
 * and libnuma's numa_alloc_onnode passes 0 (cyclictest -a allocates its threads' memory so). */
static int check_anon(void)
{
    char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, 0, 0);
    CHECK(p != MAP_FAILED, "mmap(MAP_ANONYMOUS, fd 0): %s", strerror(errno));
    p[4096] = 1;
    munmap(p, 8192);
    p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, 1000, 0);
    CHECK(p != MAP_FAILED, "mmap(MAP_ANONYMOUS, fd 1000): %s", strerror(errno));
    munmap(p, 4096);
    return 0;
}

/* ---- misc ---- */

static int check_misc(void)
{
    unsigned char buf[64] = {0};
    CHECK(getrandom(buf, sizeof(buf), 0) == sizeof(buf), "getrandom: %s", strerror(errno));
    struct rlimit rl;
    CHECK(prlimit(getpid(), RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_cur > 0,
          "prlimit of my own pid: %s", strerror(errno));
    long q = syscall(SYS_membarrier, 0 /* QUERY */, 0, 0);
    CHECK(q >= 0, "membarrier QUERY: %s", strerror(errno));
    for (int cmd = 1; cmd < 1 << 9; cmd <<= 1) {
        long r = syscall(SYS_membarrier, cmd, 0, 0);
        CHECK((q & cmd) ? r >= 0 || errno == EPERM : r < 0 && errno == EINVAL,
              "membarrier %d: %ld (%s) while QUERY says %lx", cmd, r, strerror(errno), q);
    }
    long r = syscall(SYS_rseq, NULL, 0, 0, 0);
    CHECK(r < 0 && (errno == ENOSYS || errno == EINVAL), "rseq(NULL): %ld (%s)", r,
          strerror(errno));
    return 0;
}

struct check {
    const char *name;
    int (*fn)(void);
};

static const struct check checks[] = {
    {"sched", check_sched}, {"mlock", check_mlock},   {"timers", check_timers},
    {"prctl", check_prctl}, {"owners", check_owners}, {"harness", check_harness},
    {"shm", check_shm},     {"misc", check_misc},     {"caps", check_caps},
    {"numa", check_numa},   {"anon", check_anon},
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
        skipped = 0;
        if (c == NULL) {
            printf("abitest %s: FAILED: no such check\n", argv[i]);
            failed++;
        } else if (c->fn() != 0) {
            printf("abitest %s: FAILED: %s\n", argv[i], why);
            failed++;
        } else if (skipped) {
            printf("abitest %s: skipped: %s\n", argv[i], why);
        } else {
            printf("abitest %s: ok\n", argv[i]);
        }
    }
    return failed;
}
