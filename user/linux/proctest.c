/* SPDX-License-Identifier: MIT */
/*
 * proctest — ordinary Linux C (glibc, static) that reads /proc and /sys the way tools do, for
 * tests/qemu/test_procfs.py.  Nothing here knows about zerotick: the same file runs on Linux.
 *
 *   proctest dump [FILE...]   print each file between "@@@@ FILE" and "@@@@ end" lines, read
 *                             7 bytes at a time (a text must not depend on how it is read);
 *                             without FILEs the files tools read most, std_files below (what
 *                             tools/linux-fixtures captures from Linux with this same program);
 *                             "TID" in a path is the caller's thread id
 *   proctest loop SECONDS FILE...   open, read to the end and close every FILE in turn until
 *                             SECONDS of the clock have passed, once at least (a directory
 *                             is listed);
 *                             print how many reads, and the CPUs it ran on.  "@NAME" in a path is
 * the pid of the process called NAME (found in /proc/PID/comm, waiting up to 1 s) proctest CHECK...
 * run each check; one line "proctest CHECK: ok" or "proctest CHECK: FAILED: why"
 *
 * Checks: nprocs (glibc's sysconf and get_nprocs read /sys, and agree with the affinity),
 * self (/proc/self is the caller: stat's pid and comm, status's Pid and PPid, exe, cmdline),
 * listing (/proc lists this process and init, /proc/self/fd its descriptors, task/ its
 * threads), errors (writes refused, a free pid is ENOENT, a closed descriptor's link is gone),
 * reread (lseek to 0 and read again gives a new /proc/uptime; a kept-open pid file does not
 * change), stack (pthread_getattr_np on the main thread, which glibc answers from
 * /proc/self/maps), statfs (/tmp and /proc as df sees them), syscall (a thread blocked in
 * read shows the call's number and arguments in its task/TID/syscall, the caller "running").
 * Exit status: the number of failed checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char fail_why[240];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* The whole of `path` into buf (NUL-terminated), read n bytes at a time: its length or -1. */
static long slurp(const char *path, char *buf, size_t size, size_t n)
{
    int fd = open(path, O_RDONLY);
    long len = 0, r;
    if (fd < 0) {
        return -1;
    }
    while ((size_t)len + 1 < size &&
           (r = read(fd, buf + len, n < size - 1 - (size_t)len ? n : size - 1 - (size_t)len)) > 0) {
        len += r;
    }
    close(fd);
    buf[len] = 0;
    return len;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const std_files[] = {
    "/proc/self/stat",
    "/proc/self/status",
    "/proc/self/statm",
    "/proc/self/maps",
    "/proc/self/comm",
    "/proc/self/task/TID/stat",
    "/proc/cpuinfo",
    "/proc/stat",
    "/proc/meminfo",
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/mounts",
    "/proc/interrupts",
    "/proc/filesystems",
    "/proc/version",
    "/proc/sys/kernel/ostype",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/pid_max",
    "/proc/sys/kernel/sched_rt_runtime_us",
    "/proc/sys/kernel/random/boot_id",
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/offline",
    "/sys/devices/system/cpu/isolated",
    "/sys/devices/system/cpu/nohz_full",
    "/sys/devices/system/cpu/kernel_max",
    "/sys/devices/system/cpu/cpu1/online",
    "/sys/devices/system/cpu/cpu1/topology/core_siblings_list",
};

static int dump(int n, const char *const *files)
{
    static char buf[1 << 18];
    if (n == 0) {
        n = (int)(sizeof(std_files) / sizeof(std_files[0]));
        files = std_files;
    }
    for (int i = 0; i < n; i++) {
        char path[256];
        const char *tid = strstr(files[i], "TID");
        snprintf(path, sizeof(path), "%s", files[i]);
        if (tid) {
            snprintf(path + (tid - files[i]), sizeof(path) - (size_t)(tid - files[i]), "%d%s",
                     gettid(), tid + 3);
        }
        long len = slurp(path, buf, sizeof(buf), 7);
        printf("@@@@ %s\n", files[i]);
        if (len < 0) {
            printf("proctest: %s: %s\n", path, strerror(errno));
        } else {
            fwrite(buf, 1, (size_t)len, stdout);
        }
        printf("@@@@ end\n");
    }
    return 0;
}

/* The pid of the process whose comm is `name`, or -1. */
static int pid_of(const char *name)
{
    char path[64], comm[64];
    for (double end = now_s() + 1; now_s() < end;) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
                slurp(path, comm, sizeof(comm), 64) > 0 && strncmp(comm, name, strlen(name)) == 0 &&
                comm[strlen(name)] == '\n') {
                int pid = atoi(e->d_name);
                closedir(d);
                return pid;
            }
        }
        if (d) {
            closedir(d);
        }
    }
    return -1;
}

/* Every "@NAME" in path replaced by NAME's pid, into out. */
static void expand(const char *path, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    while (*path && len + 1 < size) {
        if (*path != '@') {
            out[len++] = *path++;
            out[len] = 0;
            continue;
        }
        char name[32];
        size_t n = strcspn(path + 1, "/");
        snprintf(name, sizeof(name), "%.*s", (int)n, path + 1);
        len += (size_t)snprintf(out + len, size - len, "%d", pid_of(name));
        path += 1 + n;
    }
}

/* Read a file to its end, or list a directory: -1 if it cannot be opened. */
static long read_any(const char *path, char *buf, size_t size)
{
    DIR *d = opendir(path);
    if (!d) {
        return errno == ENOTDIR ? slurp(path, buf, size, size) : -1;
    }
    long n = 0;
    while (readdir(d) != NULL) {
        n++;
    }
    closedir(d);
    return n;
}

static int loop(double seconds, int n, char **files)
{
    static char buf[1 << 16];
    static char paths[64][128];
    for (int i = 0; i < n && i < 64; i++) {
        expand(files[i], paths[i], sizeof(paths[i]));
        files[i] = paths[i];
    }
    unsigned long reads = 0, failed = 0;
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (double end = now_s() + seconds; reads == 0 || now_s() < end;) { /* once at least */
        for (int i = 0; i < n; i++) {
            failed += read_any(files[i], buf, sizeof(buf)) < 0;
            reads++;
        }
        CPU_SET(sched_getcpu(), &seen);
    }
    printf("proctest loop: %lu reads, %lu failed, on CPUs", reads, failed);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &seen)) {
            printf(" %d", c);
        }
    }
    printf("\n");
    return failed != 0;
}

/* ---- checks ---- */

static int check_nprocs(void)
{
    cpu_set_t set;
    char online[64];
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity: %s", strerror(errno));
    CHECK(slurp("/sys/devices/system/cpu/online", online, sizeof(online), 64) > 0,
          "/sys/devices/system/cpu/online: %s", strerror(errno));
    long onln = sysconf(_SC_NPROCESSORS_ONLN), conf = sysconf(_SC_NPROCESSORS_CONF);
    CHECK(onln == get_nprocs() && conf == get_nprocs_conf(), "sysconf %ld/%ld, get_nprocs %d/%d",
          onln, conf, get_nprocs(), get_nprocs_conf());
    CHECK(onln >= CPU_COUNT(&set) && conf >= onln, "online %ld, configured %ld, affinity %d", onln,
          conf, CPU_COUNT(&set));
    long count = 0;
    for (char *p = online; *p && *p != '\n';) { /* a cpulist: "0,2-3" */
        long first = strtol(p, &p, 10), last = *p == '-' ? strtol(p + 1, &p, 10) : first;
        count += last - first + 1;
        p += *p == ',';
    }
    CHECK(count == onln, "online '%s' is %ld CPUs but sysconf says %ld", online, count, onln);
    printf("proctest nprocs: %ld online, %ld configured\n", onln, conf);
    return 0;
}

static int check_self(void)
{
    char buf[4096], path[64], exe[256], comm[64];
    int pid = -1, ppid = -1;
    char state;
    CHECK(slurp("/proc/self/stat", buf, sizeof(buf), 5) > 0, "/proc/self/stat: %s",
          strerror(errno));
    CHECK(sscanf(buf, "%d (%63[^)]) %c %d", &pid, comm, &state, &ppid) == 4, "stat '%s'", buf);
    CHECK(pid == getpid() && ppid == getppid() && state == 'R',
          "stat pid %d ppid %d state %c, getpid %d getppid %d", pid, ppid, state, getpid(),
          getppid());
    CHECK(strcmp(comm, "proctest") == 0, "comm '%s'", comm);
    snprintf(path, sizeof(path), "/proc/%d/status", getpid());
    CHECK(slurp(path, buf, sizeof(buf), 100) > 0, "%s: %s", path, strerror(errno));
    char *p = strstr(buf, "\nPid:\t"), *pp = strstr(buf, "\nPPid:\t");
    CHECK(p && pp && atoi(p + 6) == getpid() && atoi(pp + 7) == getppid(), "status:\n%s", buf);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
    exe[n] = 0;
    CHECK(strstr(exe, "proctest") != NULL, "exe -> %s", exe);
    long len = slurp("/proc/self/cmdline", buf, sizeof(buf), 3), words = 0;
    int has_self = 0; /* "self" is one of the arguments, since this check runs */
    for (long at = 0; at < len; at += (long)strlen(buf + at) + 1, words++) {
        has_self |= strcmp(buf + at, "self") == 0;
    }
    CHECK(len > 0 && buf[len - 1] == 0 && strstr(buf, "proctest") && has_self,
          "cmdline '%s' (%ld bytes, %ld words)", buf, len, words);
    struct stat st, st2;
    CHECK(stat("/proc/self/exe", &st) == 0 && stat(exe, &st2) == 0 && st.st_ino == st2.st_ino,
          "/proc/self/exe does not lead to %s", exe);
    return 0;
}

/* Is `name` among the entries of directory `dir`? */
static int dir_has(const char *dir, const char *name, int *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    *count = 0;
    if (!d) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        found |= strcmp(e->d_name, name) == 0;
        *count += e->d_name[0] != '.';
    }
    closedir(d);
    return found;
}

static void *sleeper(void *arg)
{
    pthread_mutex_lock(arg);
    pthread_mutex_unlock(arg);
    return NULL;
}

static int check_listing(void)
{
    char me[16], tid[16], dir[64];
    int n, fd = open("/proc/cpuinfo", O_RDONLY);
    snprintf(me, sizeof(me), "%d", getpid());
    CHECK(dir_has("/proc", me, &n) == 1 && dir_has("/proc", "1", &n) == 1,
          "/proc lists neither %s nor 1", me);
    CHECK(dir_has("/proc", "cpuinfo", &n) == 1 && dir_has("/proc", "self", &n) == 1,
          "/proc lacks cpuinfo or self");
    snprintf(tid, sizeof(tid), "%d", fd);
    CHECK(dir_has("/proc/self/fd", tid, &n) == 1, "/proc/self/fd lacks %d", fd);
    CHECK(n >= 4, "/proc/self/fd lists %d descriptors", n);
    close(fd);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_t t[2];
    pthread_mutex_lock(&m);
    for (int i = 0; i < 2; i++) {
        pthread_create(&t[i], NULL, sleeper, &m);
    }
    snprintf(dir, sizeof(dir), "/proc/%d/task", getpid());
    int has_main = dir_has(dir, me, &n);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK(has_main == 1 && n == 3, "%s: main thread %d, %d threads", dir, has_main, n);
    return 0;
}

struct blocked_reader {
    int fd;
    volatile int tid;
    volatile uintptr_t stack; /* an address on the reader's stack */
    char buf[8];
};

static void *blocked_reader(void *arg)
{
    struct blocked_reader *r = arg;
    char here;
    r->stack = (uintptr_t)&here;
    r->tid = gettid();
    return (void *)(intptr_t)read(r->fd, r->buf, sizeof(r->buf));
}

static int check_syscall(void)
{
    char path[64], buf[256] = "";
    int pfd[2];
    unsigned long a[8];
    long nr = -2;
    pthread_t t;
    CHECK(pipe(pfd) == 0, "pipe: %s", strerror(errno));
    struct blocked_reader r = {.fd = pfd[0]};
    CHECK(pthread_create(&t, NULL, blocked_reader, &r) == 0, "pthread_create");
    while (r.tid == 0) {
        sched_yield();
    }
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", r.tid);
    for (int i = 0; i < 5000; i++) { /* until the reader sleeps in read (5 s at most) */
        if (slurp(path, buf, sizeof(buf), 9) > 0 && strncmp(buf, "running", 7) != 0) {
            break;
        }
        usleep(1000);
    }
    int got = sscanf(buf, "%ld 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx", &nr, &a[0], &a[1],
                     &a[2], &a[3], &a[4], &a[5], &a[6], &a[7]);
    char own[64] = "";
    slurp("/proc/self/syscall", own, sizeof(own), 4);
    CHECK(write(pfd[1], "x", 1) == 1, "write: %s", strerror(errno));
    pthread_join(t, NULL);
    close(pfd[0]);
    close(pfd[1]);
    /* SP within 64 KiB below the reader's local, PC within 64 KiB of read() (static glibc) */
    unsigned long sp_off = r.stack - a[6], pc_off = a[7] - (unsigned long)(uintptr_t)read;
    CHECK(got == 9 && nr == SYS_read && a[0] == (unsigned long)pfd[0] &&
              a[1] == (unsigned long)r.buf && a[2] == sizeof(r.buf) && sp_off < 65536 &&
              pc_off < 65536,
          "%s: '%s' (read is %d, fd %d, buffer %p, stack near %#lx, read() at %p)", path, buf,
          SYS_read, pfd[0], r.buf, (unsigned long)r.stack, (void *)read);
    CHECK(strcmp(own, "running\n") == 0, "/proc/self/syscall: '%s'", own);
    return 0;
}

static int check_exact(void)
{
    char path[64];
    struct stat st;
    int pfd[2];
    CHECK(pipe(pfd) == 0, "pipe: %s", strerror(errno));
    pid_t child = fork();
    if (child == 0) { /* waits for its parent's word with descriptors 0-2 and the pipe */
        char c;
        read(pfd[0], &c, 1);
        _exit(0);
    }
    CHECK(child > 0, "fork: %s", strerror(errno));
    const char *const absent[] = {"/proc/%d/task/%d", "/proc/%d/task/%d", "/proc/%d/fd/200"};
    const int ids[][2] = {{child, getpid()}, {getpid(), child}, {child, 0}};
    int bad = -1, err = 0;
    for (int i = 0; i < 3 && bad < 0; i++) {
        snprintf(path, sizeof(path), absent[i], ids[i][0], ids[i][1]);
        if (lstat(path, &st) == 0 || errno != ENOENT) {
            bad = i, err = errno;
        }
    }
    char open_path[64];
    snprintf(open_path, sizeof(open_path), "/proc/%d/fd/%d", child, pfd[0]);
    int open_ok = lstat(open_path, &st) == 0, open_err = errno;
    CHECK(write(pfd[1], "x", 1) == 1, "write: %s", strerror(errno));
    waitpid(child, NULL, 0);
    close(pfd[0]);
    close(pfd[1]);
    CHECK(bad < 0, "%s exists (or not ENOENT: %s)", path, strerror(err));
    CHECK(open_ok, "%s: %s", open_path, strerror(open_err));
    return 0;
}

static int check_errors(void)
{
    char path[64], buf[64];
    int fd = open("/proc/cpuinfo", O_WRONLY);
    CHECK(fd < 0 && errno == EACCES, "open(cpuinfo, O_WRONLY): %d (%s)", fd, strerror(errno));
    CHECK(mkdir("/proc/x", 0755) < 0, "mkdir in /proc succeeded");
    CHECK(open("/proc/new", O_CREAT | O_WRONLY, 0644) < 0, "creating in /proc succeeded");
    struct stat st;
    CHECK(stat("/proc/32000", &st) < 0 && errno == ENOENT, "stat /proc/32000: %s", strerror(errno));
    CHECK(open("/proc/32000/stat", O_RDONLY) < 0 && errno == ENOENT, "open /proc/32000/stat: %s",
          strerror(errno));
    CHECK(stat("/sys/devices/system/cpu/cpu4096", &st) < 0 && errno == ENOENT, "cpu4096 exists");
    fd = open("/proc/self/stat", O_RDONLY);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    close(fd);
    CHECK(readlink(path, buf, sizeof(buf)) < 0 && errno == ENOENT, "%s after close: %s", path,
          strerror(errno));
    return 0;
}

static int check_reread(void)
{
    char a[128], b[128];
    int fd = open("/proc/uptime", O_RDONLY);
    CHECK(fd >= 0, "/proc/uptime: %s", strerror(errno));
    ssize_t n = read(fd, a, sizeof(a) - 1);
    CHECK(n > 0, "read: %s", strerror(errno));
    a[n] = 0;
    for (double end = now_s() + 0.05; now_s() < end;) {
    }
    CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek: %s", strerror(errno));
    n = read(fd, b, sizeof(b) - 1);
    b[n > 0 ? n : 0] = 0;
    close(fd);
    CHECK(n > 0 && strcmp(a, b) != 0, "uptime '%s' then '%s' after 50 ms", a, b);
    CHECK(atof(b) > atof(a), "uptime went from %s to %s", a, b);
    return 0;
}

static int check_stack(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int here;
    int r = pthread_getattr_np(pthread_self(), &attr);
    CHECK(r == 0, "pthread_getattr_np: %s", strerror(r));
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    CHECK((char *)&here >= (char *)addr && (char *)&here < (char *)addr + size,
          "the stack [%p, +%zu) does not hold %p", addr, size, (void *)&here);
    return 0;
}

static int check_statfs(void)
{
    struct statfs t, p;
    CHECK(statfs("/tmp", &t) == 0 && statfs("/proc", &p) == 0, "statfs: %s", strerror(errno));
    CHECK(t.f_type == 0x01021994 && p.f_type == 0x9fa0, "types %lx %lx", (long)t.f_type,
          (long)p.f_type);
    CHECK(t.f_blocks > 0 && t.f_bfree <= t.f_blocks && p.f_blocks == 0, "/tmp %lu/%lu, /proc %lu",
          (unsigned long)t.f_bfree, (unsigned long)t.f_blocks, (unsigned long)p.f_blocks);
    struct stat a, b;
    CHECK(stat("/tmp", &a) == 0 && stat("/proc", &b) == 0 && a.st_dev != b.st_dev,
          "/tmp and /proc share st_dev");
    return 0;
}

struct check {
    const char *name;
    int (*fn)(void);
};

static const struct check checks[] = {
    {"nprocs", check_nprocs}, {"self", check_self},       {"listing", check_listing},
    {"errors", check_errors}, {"reread", check_reread},   {"stack", check_stack},
    {"statfs", check_statfs}, {"syscall", check_syscall}, {"exact", check_exact},
};

int main(int argc, char **argv)
{
    int failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "dump") == 0) {
        return dump(argc - 2, (const char *const *)argv + 2);
    }
    if (argc >= 3 && strcmp(argv[1], "loop") == 0) {
        return loop(atof(argv[2]), argc - 3, argv + 3);
    }
    for (int i = 1; i < argc; i++) {
        const struct check *c = NULL;
        for (size_t k = 0; k < sizeof(checks) / sizeof(checks[0]); k++) {
            c = strcmp(argv[i], checks[k].name) == 0 ? &checks[k] : c;
        }
        if (c == NULL) {
            printf("proctest %s: FAILED: no such check\n", argv[i]);
            failed++;
        } else if (c->fn() != 0) {
            printf("proctest %s: FAILED: %s\n", argv[i], fail_why);
            failed++;
        } else {
            printf("proctest %s: ok\n", argv[i]);
        }
    }
    return failed;
}
