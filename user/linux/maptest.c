/* SPDX-License-Identifier: MIT */
/*
 * maptest — file mappings as a Linux program uses them: ordinary glibc C, built dynamically
 * with Debian's cross compiler.  Nothing here knows about zerotick.
 *
 *   maptest CHECK...   run each check; one line "maptest CHECK: ok" or "maptest CHECK: FAILED:
 *                      why"; the exit status is the number of failed checks
 *   maptest child N    exit with status N (what `execdrop` runs)
 *
 * Pages are counted with sysinfo()'s free memory, which zerotick keeps exact (every CPU's
 * cache included); a check that counts runs its work once first, so the kernel's own objects
 * (records, tables) exist before the count starts.
 *
 * Checks: shmfork (MAP_SHARED of a /dev/shm file: parent and forked child see each other's
 * stores, read and write agree with the mapping both ways, an atomic counter both processes
 * add to sums up), private (a MAP_PRIVATE store is not in the file, nor in a shared mapping;
 * the file's bytes are there), pages (every page of private, shared and anonymous mappings
 * comes back at munmap, and a file's at unlink), closed (a mapping outlives close and unlink of
 * its file), truncate (ftruncate of a mapped file: the mapping and read agree, a regrown part
 * reads as zeros), protect (mprotect: a shared mapping of a file opened read-only never becomes
 * writable, a private one may), sync (msync's checks), advise (MADV_DONTNEED keeps a file's
 * bytes, zeroes anonymous memory), exitdrop and execdrop (exit and execve drop every mapping:
 * all pages back), badmap (offset not page-aligned, past the end, PROT_WRITE on a shared
 * mapping of a file opened read-only, a write-only file, a pipe, a directory, a bad
 * descriptor: each refused with its errno, nothing kept).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#define PS 4096

static char fail_why[256];

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static unsigned long free_pages(void)
{
    struct sysinfo si;
    return sysinfo(&si) == 0 ? si.freeram : 0;
}

/* A new file at path holding `pages` pages, byte i = seed + i (mod 251); its descriptor
 * (O_RDWR), or -1. */
static int make_file(const char *path, int pages, int seed)
{
    static unsigned char buf[PS];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    for (int p = 0; fd >= 0 && p < pages; p++) {
        for (int i = 0; i < PS; i++) {
            buf[i] = (unsigned char)((seed + p * PS + i) % 251);
        }
        if (write(fd, buf, PS) != PS) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static int byte_at(int seed, long i)
{
    return (seed + i) % 251;
}

/* ---- shmfork ---- */

static int check_shmfork(void)
{
    const char *path = "/dev/shm/maptest-fork";
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
    CHECK(ftruncate(fd, 2 * PS) == 0, "ftruncate: %s", strerror(errno));
    volatile uint32_t *m = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
    int down[2], up[2];
    CHECK(pipe(down) == 0 && pipe(up) == 0, "pipe");
    enum { ADDS = 20000 };
    uint32_t *counter = (uint32_t *)&m[100];
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        if (read(down[0], &c, 1) != 1) {
            _exit(10);
        }
        int bad = 0;
        bad |= (m[0] != 0x1111) << 0; /* the parent's store through its mapping */
        bad |= (m[4] != 0x4444) << 1; /* the parent's pwrite */
        m[PS / 4] = 0x2222;           /* page 1, through the mapping */
        uint32_t v = 0x3333;
        bad |= (pwrite(fd, &v, 4, 8) != 4) << 2;
        for (int i = 0; i < ADDS; i++) {
            __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
        }
        c = (char)('0' + bad);
        _exit(write(up[1], &c, 1) == 1 ? 0 : 11);
    }
    CHECK(pid > 0, "fork: %s", strerror(errno));
    m[0] = 0x1111;
    uint32_t v = 0x4444;
    CHECK(pwrite(fd, &v, 4, 16) == 4, "pwrite");
    CHECK(write(down[1], "g", 1) == 1, "pipe write");
    for (int i = 0; i < ADDS; i++) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    char c = 0;
    CHECK(read(up[0], &c, 1) == 1, "pipe read");
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child status %#x", status);
    CHECK(c == '0', "the child did not see the parent's stores (bits %d)", c - '0');
    CHECK(m[PS / 4] == 0x2222, "the child's store: %#x", m[PS / 4]);
    CHECK(m[2] == 0x3333, "the child's pwrite in the mapping: %#x", m[2]);
    CHECK(pread(fd, &v, 4, PS) == 4 && v == 0x2222, "pread of the child's store: %#x", v);
    CHECK(*counter == 2 * ADDS, "counter %u, want %u", *counter, 2 * ADDS);
    printf("maptest shmfork: parent and child agree, counter %u\n", *counter);
    CHECK(munmap((void *)m, 2 * PS) == 0, "munmap");
    close(fd);
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    CHECK(unlink(path) == 0, "unlink");
    return 0;
}

/* ---- anonfork ---- */

/* MAP_SHARED|MAP_ANONYMOUS memory, 3 pages: a forked child's stores are the parent's to read,
 * and both add to one counter.  0, or a failure in fail_why. */
static int anon_round(void)
{
    volatile uint32_t *m =
        mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(m[0] == 0 && m[3 * PS / 4 - 1] == 0, "not zeroed");
    m[1] = 7;
    pid_t pid = fork();
    if (pid == 0) {
        m[2 * PS / 4] = m[1] + 1; /* page 2 */
        for (int i = 0; i < 10000; i++) {
            __atomic_fetch_add(&m[3], 1, __ATOMIC_RELAXED);
        }
        _exit(0);
    }
    for (int i = 0; i < 10000; i++) {
        __atomic_fetch_add(&m[3], 1, __ATOMIC_RELAXED);
    }
    int status;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0, "child status %#x", status);
    CHECK(m[2 * PS / 4] == 8, "the child's store: %u", m[2 * PS / 4]);
    CHECK(m[3] == 20000, "counter %u", m[3]);
    CHECK(munmap((void *)m, 3 * PS) == 0, "munmap");
    return 0;
}

static int check_anonfork(void)
{
    if (anon_round() != 0) { /* warm-up */
        return 1;
    }
    unsigned long before = free_pages();
    if (anon_round() != 0) {
        return 1;
    }
    unsigned long after = free_pages();
    CHECK(before == after, "free pages %lu before, %lu after", before, after);
    return 0;
}

/* ---- private ---- */

static int check_private(void)
{
    const char *path = "/dev/shm/maptest-private";
    int fd = make_file(path, 3, 7);
    CHECK(fd >= 0, "make %s", path);
    unsigned char *p = mmap(NULL, 3 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    unsigned char *s = mmap(NULL, 3 * PS, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED && s != MAP_FAILED, "mmap: %s", strerror(errno));
    for (long i = 0; i < 3 * PS; i += 509) {
        CHECK(p[i] == byte_at(7, i) && s[i] == byte_at(7, i), "byte %ld: %d %d", i, p[i], s[i]);
    }
    p[5] = 0xee;
    p[PS + 1] = 0xee;
    unsigned char b = 0;
    CHECK(pread(fd, &b, 1, 5) == 1 && b == byte_at(7, 5), "the file saw the private store");
    CHECK(s[5] == byte_at(7, 5) && s[PS + 1] == byte_at(7, PS + 1),
          "a shared mapping saw the private store");
    /* a private mapping of an offset: page 2 of the file */
    unsigned char *q = mmap(NULL, PS, PROT_READ, MAP_PRIVATE, fd, 2 * PS);
    CHECK(q != MAP_FAILED && q[0] == byte_at(7, 2 * PS), "offset mapping");
    CHECK(munmap(p, 3 * PS) == 0 && munmap(s, 3 * PS) == 0 && munmap(q, PS) == 0, "munmap");
    close(fd);
    CHECK(unlink(path) == 0, "unlink");
    return 0;
}

/* ---- pages ---- */

/* Map a 16-page file privately and shared, 16 anonymous pages, and 4 pages of a 1-page file
 * (3 pages past its end); touch them all; unmap; remove the files.  Returns the lowest free
 * page count seen while mapped, or 0 on failure. */
static unsigned long map_and_unmap(void)
{
    int fd = make_file("/dev/shm/maptest-pages", 16, 3);
    int small = make_file("/tmp/maptest-small", 1, 5);
    if (fd < 0 || small < 0) {
        return 0;
    }
    volatile char *p = mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    volatile char *s = mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    volatile char *a =
        mmap(NULL, 16 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    volatile char *t = mmap(NULL, 4 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, small, 0);
    if (p == MAP_FAILED || s == MAP_FAILED || a == MAP_FAILED || t == MAP_FAILED) {
        return 0;
    }
    for (int i = 0; i < 16; i++) {
        p[i * PS] = s[i * PS] = a[i * PS] = 1;
    }
    t[3 * PS] = 1; /* a page past the small file's end: in the file's pages, not its size */
    unsigned long low = free_pages();
    int bad = munmap((void *)p, 16 * PS) | munmap((void *)s, 16 * PS) | munmap((void *)a, 16 * PS) |
              munmap((void *)t, 4 * PS);
    close(fd);
    close(small);
    bad |= unlink("/dev/shm/maptest-pages") | unlink("/tmp/maptest-small");
    return bad ? 0 : low;
}

static int check_pages(void)
{
    CHECK(map_and_unmap() != 0, "warm-up: %s", strerror(errno));
    unsigned long before = free_pages();
    unsigned long low = map_and_unmap();
    unsigned long after = free_pages();
    CHECK(low != 0, "mapping: %s", strerror(errno));
    /* 16 file pages + 16 private copies + 16 anonymous + 1 + 3 pages of the small file */
    CHECK(before - low >= 52, "only %lu pages taken while mapped", before - low);
    CHECK(before == after, "free pages %lu before, %lu after (%ld)", before, after,
          (long)after - (long)before);
    printf("maptest pages: %lu pages taken while mapped, all %lu free again\n", before - low,
           after);
    return 0;
}

/* ---- closed ---- */

static int check_closed(void)
{
    const char *path = "/tmp/maptest-closed";
    unsigned long before = free_pages();
    int fd = make_file(path, 2, 9);
    CHECK(fd >= 0, "make");
    unsigned char *s = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(close(fd) == 0 && unlink(path) == 0, "close, unlink");
    CHECK(access(path, F_OK) == -1 && errno == ENOENT, "still there");
    CHECK(s[PS + 3] == byte_at(9, PS + 3), "a byte after close and unlink");
    s[PS + 3] = 0x55;
    CHECK(s[PS + 3] == 0x55, "a store after close and unlink");
    CHECK(munmap(s, 2 * PS) == 0, "munmap");
    CHECK(free_pages() == before, "free pages %lu before, %lu after the last unmap", before,
          free_pages());
    return 0;
}

/* ---- truncate ---- */

static int check_truncate(void)
{
    const char *path = "/dev/shm/maptest-trunc";
    int fd = make_file(path, 2, 11);
    CHECK(fd >= 0, "make");
    volatile unsigned char *s = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED, "mmap: %s", strerror(errno));
    s[10] = 0xaa;
    CHECK(ftruncate(fd, PS + 100) == 0, "ftruncate down: %s", strerror(errno));
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == PS + 100, "size %ld", (long)st.st_size);
    unsigned char b = 0;
    CHECK(pread(fd, &b, 1, 10) == 1 && b == 0xaa, "read of a mapped store: %#x", b);
    CHECK(pread(fd, &b, 1, PS + 200) == 0, "read past the new end");
    CHECK(ftruncate(fd, 2 * PS) == 0, "ftruncate up: %s", strerror(errno));
    CHECK(s[PS + 200] == 0 && s[2 * PS - 1] == 0, "the regrown part reads %#x %#x in the mapping",
          s[PS + 200], s[2 * PS - 1]);
    CHECK(pread(fd, &b, 1, PS + 50) == 1 && b == byte_at(11, PS + 50), "a kept byte: %#x", b);
    s[2 * PS - 1] = 0x77;
    CHECK(pread(fd, &b, 1, 2 * PS - 1) == 1 && b == 0x77, "read of the last byte: %#x", b);
    CHECK(munmap((void *)s, 2 * PS) == 0, "munmap");
    close(fd);
    CHECK(unlink(path) == 0, "unlink");
    return 0;
}

/* ---- protect ---- */

static int check_protect(void)
{
    const char *path = "/tmp/maptest-protect";
    int fd = make_file(path, 1, 1);
    CHECK(fd >= 0, "make");
    int ro = open(path, O_RDONLY);
    CHECK(ro >= 0, "open read-only");
    void *s = mmap(NULL, PS, PROT_READ, MAP_SHARED, ro, 0);
    void *p = mmap(NULL, PS, PROT_READ, MAP_PRIVATE, ro, 0);
    void *w = mmap(NULL, PS, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED && p != MAP_FAILED && w != MAP_FAILED, "mmap: %s", strerror(errno));
    CHECK(mprotect(s, PS, PROT_READ | PROT_WRITE) == -1 && errno == EACCES,
          "a shared read-only mapping made writable");
    CHECK(mprotect(p, PS, PROT_READ | PROT_WRITE) == 0, "private: %s", strerror(errno));
    ((char *)p)[0] = 1;
    CHECK(mprotect(w, PS, PROT_READ | PROT_WRITE) == 0, "shared read-write: %s", strerror(errno));
    ((char *)w)[1] = 0x42;
    CHECK(((char *)s)[1] == 0x42, "the shared store seen through the read-only mapping");
    CHECK(mprotect(w, PS, PROT_READ | PROT_EXEC) == 0 && mprotect(w, PS, PROT_NONE) == 0,
          "exec, none: %s", strerror(errno));
    CHECK(munmap(s, PS) == 0 && munmap(p, PS) == 0 && munmap(w, PS) == 0, "munmap");
    close(ro);
    close(fd);
    CHECK(unlink(path) == 0, "unlink");
    return 0;
}

/* ---- sync ---- */

static int check_sync(void)
{
    int fd = make_file("/tmp/maptest-sync", 2, 2);
    CHECK(fd >= 0, "make");
    char *s = mmap(NULL, 2 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED, "mmap");
    s[0] = 9;
    CHECK(msync(s, 2 * PS, MS_SYNC) == 0 && msync(s, PS, MS_ASYNC | MS_INVALIDATE) == 0,
          "msync: %s", strerror(errno));
    char b = 0;
    CHECK(pread(fd, &b, 1, 0) == 1 && b == 9, "read after msync");
    CHECK(msync(s + 1, PS, MS_SYNC) == -1 && errno == EINVAL, "unaligned");
    CHECK(msync(s, PS, MS_SYNC | MS_ASYNC) == -1 && errno == EINVAL, "ASYNC|SYNC");
    CHECK(msync(s, PS, 64) == -1 && errno == EINVAL, "unknown flag");
    CHECK(munmap(s + PS, PS) == 0, "munmap");
    CHECK(msync(s, 2 * PS, MS_SYNC) == -1 && errno == ENOMEM, "a range with a hole");
    CHECK(munmap(s, PS) == 0, "munmap");
    close(fd);
    CHECK(unlink("/tmp/maptest-sync") == 0, "unlink");
    return 0;
}

/* ---- advise ---- */

static int check_advise(void)
{
    int fd = make_file("/dev/shm/maptest-advise", 1, 4);
    CHECK(fd >= 0, "make");
    unsigned char *s = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unsigned char *a = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED && a != MAP_FAILED, "mmap");
    s[0] = 0x99;
    a[0] = 0x99;
    CHECK(madvise(s, PS, MADV_DONTNEED) == 0 && madvise(a, PS, MADV_DONTNEED) == 0, "madvise: %s",
          strerror(errno));
    CHECK(s[0] == 0x99 && s[1] == byte_at(4, 1), "the file's bytes: %#x %#x", s[0], s[1]);
    CHECK(a[0] == 0, "anonymous memory after DONTNEED: %#x", a[0]);
    CHECK(madvise(s, PS, MADV_WILLNEED) == 0 && madvise(s, PS, MADV_SEQUENTIAL) == 0, "hints");
    CHECK(munmap(s, PS) == 0 && munmap(a, PS) == 0, "munmap");
    close(fd);
    CHECK(unlink("/dev/shm/maptest-advise") == 0, "unlink");
    return 0;
}

/* ---- exitdrop, execdrop ---- */

/* A child maps a /dev/shm file shared and privately and 32 anonymous pages, then exits
 * (or execs `maptest child 0`) without unmapping; 0 once it is reaped. */
static int child_maps(int exec)
{
    int fd = make_file("/dev/shm/maptest-drop", 8, 6);
    if (fd < 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char *s = mmap(NULL, 8 * PS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        char *p = mmap(NULL, 8 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        char *a = mmap(NULL, 32 * PS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s == MAP_FAILED || p == MAP_FAILED || a == MAP_FAILED) {
            _exit(3);
        }
        s[0] = p[0] = a[0] = 1;
        close(fd);
        if (exec) {
            execl("/proc/self/exe", "maptest", "child", "0", (char *)NULL);
            _exit(4);
        }
        _exit(0);
    }
    close(fd);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        return -1;
    }
    return unlink("/dev/shm/maptest-drop");
}

static int check_drop(int exec)
{
    CHECK(child_maps(exec) == 0, "warm-up");
    unsigned long before = free_pages();
    CHECK(child_maps(exec) == 0, "the child failed");
    unsigned long after = free_pages();
    CHECK(before == after, "free pages %lu before, %lu after the child", before, after);
    return 0;
}

/* ---- badmap ---- */

struct bad {
    const char *what;
    void *addr;
    size_t len;
    int prot, flags, fd;
    off_t off;
    int err;
};

static int refusals(int rw, int ro, int wo, int dir, int pipefd, int quiet)
{
    const struct bad bad[] = {
        {"unaligned offset", NULL, PS, PROT_READ, MAP_PRIVATE, rw, 100, EINVAL},
        {"offset past the end", NULL, PS, PROT_READ, MAP_SHARED, rw, 2 * PS, ENXIO},
        {"offset far past the end", NULL, PS, PROT_READ, MAP_PRIVATE, rw, 1L << 40, ENXIO},
        {"offset + length wraps", NULL, 2 * PS, PROT_READ, MAP_PRIVATE, rw, -(off_t)PS, EOVERFLOW},
        {"shared writable, file read-only", NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0,
         EACCES},
        {"shared writable, initrd file", NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, -2, 0,
         EACCES},
        {"file write-only", NULL, PS, PROT_READ, MAP_PRIVATE, wo, 0, EACCES},
        {"a pipe", NULL, PS, PROT_READ, MAP_SHARED, pipefd, 0, ENODEV},
        {"a directory", NULL, PS, PROT_READ, MAP_PRIVATE, dir, 0, ENODEV},
        {"a bad descriptor", NULL, PS, PROT_READ, MAP_PRIVATE, 999, 0, EBADF},
        {"neither shared nor private", NULL, PS, PROT_READ, 0, rw, 0, EINVAL},
        {"writable and executable", NULL, PS, PROT_WRITE | PROT_EXEC, MAP_PRIVATE, rw, 0, EINVAL},
        {"length 0", NULL, 0, PROT_READ, MAP_SHARED, rw, 0, EINVAL},
    };
    int initrd = open("/bin/maptest", O_RDONLY);
    if (initrd < 0) {
        snprintf(fail_why, sizeof(fail_why), "open /bin/maptest: %s", strerror(errno));
        return 1;
    }
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const struct bad *b = &bad[i];
        void *m = mmap(b->addr, b->len, b->prot, b->flags, b->fd == -2 ? initrd : b->fd, b->off);
        int err = errno;
        if (m != MAP_FAILED) {
            munmap(m, b->len);
        }
        if (m != MAP_FAILED || err != b->err) {
            snprintf(fail_why, sizeof(fail_why), "%s: %s, want %s", b->what,
                     m == MAP_FAILED ? strerror(err) : "mapped", strerror(b->err));
            close(initrd);
            return 1;
        }
        if (!quiet) {
            printf("maptest badmap: %s: %s\n", b->what, strerror(b->err));
        }
    }
    close(initrd);
    return 0;
}

static int check_badmap(void)
{
    int rw = make_file("/tmp/maptest-bad", 2, 0);
    int ro = open("/tmp/maptest-bad", O_RDONLY), wo = open("/tmp/maptest-bad", O_WRONLY);
    int dir = open("/tmp", O_RDONLY | O_DIRECTORY), p[2];
    CHECK(rw >= 0 && ro >= 0 && wo >= 0 && dir >= 0 && pipe(p) == 0, "setup: %s", strerror(errno));
    if (refusals(rw, ro, wo, dir, p[0], 1) != 0) { /* warm-up; fail_why says what */
        return 1;
    }
    unsigned long before = free_pages();
    if (refusals(rw, ro, wo, dir, p[0], 1) != 0) {
        return 1;
    }
    unsigned long after = free_pages();
    CHECK(after == before, "free pages %lu before, %lu after", before, after);
    if (refusals(rw, ro, wo, dir, p[0], 0) != 0) { /* once more, saying what was refused */
        return 1;
    }
    close(rw), close(ro), close(wo), close(dir), close(p[0]), close(p[1]);
    CHECK(unlink("/tmp/maptest-bad") == 0, "unlink");
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} checks[] = {
    {"shmfork", check_shmfork}, {"anonfork", check_anonfork}, {"private", check_private},
    {"pages", check_pages},     {"closed", check_closed},     {"truncate", check_truncate},
    {"protect", check_protect}, {"sync", check_sync},         {"advise", check_advise},
    {"badmap", check_badmap},
};

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        return atoi(argv[2]);
    }
    int failed = 0;
    for (int a = 1; a < argc; a++) {
        int r = -1;
        if (strcmp(argv[a], "exitdrop") == 0 || strcmp(argv[a], "execdrop") == 0) {
            r = check_drop(argv[a][1] == 'x' && argv[a][2] == 'e');
        }
        for (unsigned i = 0; r < 0 && i < sizeof(checks) / sizeof(checks[0]); i++) {
            if (strcmp(argv[a], checks[i].name) == 0) {
                r = checks[i].fn();
            }
        }
        if (r < 0) {
            snprintf(fail_why, sizeof(fail_why), "no such check");
        }
        printf("maptest %s: %s%s\n", argv[a], r ? "FAILED: " : "ok", r ? fail_why : "");
        failed += r != 0;
    }
    return failed;
}
