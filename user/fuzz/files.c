/* SPDX-License-Identifier: MIT */
/*
 * files.c — arguments for the calls on descriptors, paths and the file tree (the Linux
 * process model's VFS: openat, stat, getdents64, pipes, ppoll...), and the sandbox rules
 * for them.
 *
 * Descriptors come from a small pool (the console's 0-2, the low numbers the life's own
 * opens and pipes get, the files it opened (e->files: what mmap maps), AT_FDCWD, the table's
 * edges); paths from a pool of real and unreal names (programs, /dev, the read-only initrd,
 * /proc and /sys, names too long or running into a hole) and of names under FZ_TMP, the one
 * directory where a life may create things
 * (no name in the pool leads into /tmp itself: a life that made it its working directory
 * would create there).
 * The runner makes FZ_TMP before the run and removes it after, so what lives create is
 * given back before the memory balance is taken.  Symbolic links point inside FZ_TMP or at
 * the read-only tree, never above it, so no path a life resolves creates anything outside.
 *
 * The rules: the console's output descriptors 1 and 2 (the life's reports) are never
 * closed or replaced (dup3 onto them); console output is NUL bytes only, and a read from the
 * console gets a buffer that fails first (as shapes.c does for read and write), through any
 * descriptor that is the console (a dup, an open of /dev/console: fz_file_after keeps the
 * set); a temporary signal
 * mask (ppoll, pselect6) never blocks SIGALRM, so the waker can end the wait.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#define AT_REMOVEDIR 0x200
#define O_CREAT      0100
#define O_EXCL       0200
#define O_TRUNC      01000
#define O_APPEND     02000
#define O_NONBLOCK   04000
#define O_CLOEXEC    02000000
#define O_PATH       010000000
#define POLLIN       1
#define POLLOUT      4

int64_t fz_file_fd(struct fz_env *e)
{
    return e->nfiles ? e->files[fz_below(&e->rng, (uint64_t)e->nfiles)] : -1;
}

/* A descriptor: mostly ones that exist (the console, what the life opened, a file it opened
 * above all), sometimes not. */
uint64_t fz_fd(struct fz_env *e)
{
    static const int64_t edges[] = {-1, AT_FDCWD, 255, 256, 1000, 0x7fffffff, -2147483648ll};
    struct fz_rng *r = &e->rng;
    if (e->nfiles && fz_chance(r, 1, 4)) {
        return (uint64_t)fz_file_fd(e);
    }
    if (fz_chance(r, 3, 4)) {
        return fz_below(r, 10);
    }
    return fz_chance(r, 3, 4) ? (uint64_t)edges[fz_below(r, 7)] : fz_int(e);
}

static bool is_console_out(uint64_t fd)
{
    return (uint32_t)fd == 1 || (uint32_t)fd == 2; /* the kernel reads an int */
}

bool fz_is_console(const struct fz_env *e, uint64_t fd)
{
    fd = (uint32_t)fd; /* the kernel reads a descriptor as an int */
    return fd < 256 && (e->console_fds[fd / 64] >> (fd % 64) & 1);
}

/* Is descriptor fd (just opened) a character device: the console, or another device? */
static bool is_char_device(long fd)
{
    uint8_t st[128];
    uint32_t mode;
    if (zt_syscall2(SYS_fstat, fd, st) != 0) {
        return false;
    }
    memcpy(&mode, st + 16, sizeof(mode)); /* struct stat: dev, ino, then mode */
    return (mode & 0170000) == 0020000;
}

static void mark(struct fz_env *e, long fd, bool console)
{
    fd = (uint32_t)fd;
    if (fd < 256) {
        uint64_t *w = &e->console_fds[fd / 64], bit = 1ull << (fd % 64);
        *w = console ? *w | bit : *w & ~bit;
    }
}

/* The file descriptors: the newest FZ_MAX_FILES an openat gave, less those closed or replaced. */
static void forget_file(struct fz_env *e, long fd)
{
    for (int i = 0; i < e->nfiles; i++) {
        if (e->files[i] == (int)fd) {
            memmove(&e->files[i], &e->files[i + 1],
                    sizeof(e->files[0]) * (size_t)(--e->nfiles - i));
            return;
        }
    }
}

static void keep_file(struct fz_env *e, long fd)
{
    forget_file(e, fd);
    if (e->nfiles == FZ_MAX_FILES) {
        forget_file(e, e->files[0]);
    }
    e->files[e->nfiles++] = (int)fd;
}

void fz_file_after(struct fz_env *e, const char *name, const struct fz_args *c, long r)
{
    if (r < 0) {
        return;
    }
    uint32_t cmd = (uint32_t)c->a[1];
    if (!strcmp(name, "dup") || (!strcmp(name, "fcntl") && (cmd == 0 || cmd == 1030))) {
        mark(e, r, fz_is_console(e, c->a[0]));
    } else if (!strcmp(name, "dup3")) { /* fcntl above: F_DUPFD and F_DUPFD_CLOEXEC */
        mark(e, (long)c->a[1], fz_is_console(e, c->a[0]));
        forget_file(e, (long)c->a[1]);
    } else if (!strcmp(name, "close")) {
        mark(e, (long)c->a[0], false);
        forget_file(e, (long)c->a[0]);
    } else if (!strcmp(name, "openat")) {
        bool dev = is_char_device(r);
        mark(e, r, dev);
        if (!dev) {
            keep_file(e, r);
        }
    } else if (!strcmp(name, "pipe2") && fz_in_scratch(e, c->a[0], 8)) {
        const int *fds = (const int *)(uintptr_t)c->a[0];
        mark(e, fds[0], false);
        mark(e, fds[1], false);
    }
}

static uint64_t str_at(struct fz_env *e, const char *s)
{
    uint64_t p = fz_buf(e, strlen(s) + 1, 0);
    strcpy((char *)(uintptr_t)p, s);
    return p;
}

/* /proc and /sys: synthetic files and directories, read-only (an open for writing, a create,
 * a removal, a rename, a change of mode or times there must be refused), some absent. */
static const char *const synth_paths[] = {
    "/proc",
    "/proc/self",
    "/proc/self/stat",
    "/proc/self/status",
    "/proc/self/statm",
    "/proc/self/maps",
    "/proc/self/cmdline",
    "/proc/self/comm",
    "/proc/self/syscall",
    "/proc/self/mounts",
    "/proc/self/fd",
    "/proc/self/fd/0",
    "/proc/self/fd/3",
    "/proc/self/fd/4",
    "/proc/self/task",
    "/proc/self/cwd",
    "/proc/self/root",
    "/proc/thread-self",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/interrupts",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/mounts",
    "/proc/filesystems",
    "/proc/stat",
    "/proc/version",
    "/proc/cmdline",
    "/proc/nope",
    "/proc/sys",
    "/proc/sys/kernel",
    "/proc/sys/kernel/pid_max",
    "/proc/sys/kernel/osrelease",
    "/proc/sys/kernel/random/uuid",
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/vm/overcommit_memory",
    "/proc/sys/fs/nr_open",
    "/proc/sys/nope",
    "/sys",
    "/sys/devices/system/cpu",
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/possible",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/offline",
    "/sys/devices/system/cpu/isolated",
    "/sys/devices/system/cpu/nohz_full",
    "/sys/devices/system/cpu/kernel_max",
    "/sys/devices/system/cpu/cpu0/online",
    "/sys/devices/system/cpu/cpu2/online",
    "/sys/devices/system/cpu/cpu1/topology",
    "/sys/devices/system/cpu/cpu1/topology/core_id",
    "/sys/devices/system/cpu/cpu3/topology/thread_siblings_list",
    "/sys/devices/system/cpu/cpu3/topology/package_cpus",
    "/sys/devices/system/cpu/cpu63/online",
    "/sys/devices/system/node/node0/cpulist",
    "/sys/devices/system/node/node0/cpumap",
    "/sys/devices/system/node/online",
    "/sys/kernel/mm/transparent_hugepage/enabled",
};

/* What /proc/PID/ and /proc/PID/task/TID/ hold, and a name they do not. */
static const char *const pid_leaves[] = {
    "",    "stat", "status", "statm", "maps", "cmdline", "comm",   "syscall", "exe",
    "cwd", "root", "fd",     "fd/0",  "fd/3", "task",    "mounts", "nope",    "fd/999",
};

/*
 * A pid or thread id for /proc: the life, its waker, a child, or an id near the life's own
 * (another life, a child of one).  Never an id that outlives the lives (init, which is the
 * runner, or what took ids before the first life): the kernel keeps the directories a lookup
 * makes under /proc/ID until ID is freed (procfs.c), so a directory of a long-lived id would
 * hold its pages past the run's memory balance.  Any id goes where the entry lives under one
 * of those directories (task/TID).
 */
static int proc_id(struct fz_env *e, bool any)
{
    struct fz_rng *r = &e->rng;
    switch (fz_below(r, any ? 6 : 5)) {
    case 0:
    case 1:
        return e->pid;
    case 2:
        return e->waker_tid;
    case 3:
        return e->nchildren ? e->children[fz_below(r, (uint64_t)e->nchildren)] : e->pid;
    case 4: {
        int id = e->pid - 8 + (int)fz_below(r, 17);
        return id > e->long_ids ? id : e->pid;
    }
    default:
        return fz_chance(r, 1, 2) ? 1 : (int)fz_below(r, 400);
    }
}

/* /proc/PID/LEAF, /proc/self/task/TID/LEAF or /proc/PID/task/TID/LEAF, of someone. */
static uint64_t proc_pid_path(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    uint64_t p = fz_buf(e, 96, 0);
    const char *leaf = pid_leaves[fz_below(r, sizeof(pid_leaves) / sizeof(pid_leaves[0]))];
    int pid = proc_id(e, false);
    switch (fz_below(r, 4)) {
    case 0:
        snprintf((char *)(uintptr_t)p, 96, "/proc/self/task/%d/%s", proc_id(e, true), leaf);
        break;
    case 1:
        snprintf((char *)(uintptr_t)p, 96, "/proc/%d/task/%d/%s", pid, proc_id(e, true), leaf);
        break;
    default:
        snprintf((char *)(uintptr_t)p, 96, "/proc/%d/%s", pid, leaf);
    }
    return p;
}

/* A path: under FZ_TMP (created things go there), elsewhere (read-only, devices, /proc and
 * /sys, absent), relative, too long, running into a hole, or a hostile pointer.  *pool is the
 * index of the name in the pool (0: FZ_TMP itself), FZ_POOL_SYNTH for /proc and /sys, or -1. */
#define FZ_POOL_SYNTH (-2)
static uint64_t path_from_pool(struct fz_env *e, int *pool)
{
    static const char *const paths[] = {
        FZ_TMP,
        FZ_TMP "/a",
        FZ_TMP "/b",
        FZ_TMP "/a/x",
        FZ_TMP "/l",
        FZ_TMP "/b/c/d",
        FZ_TMP "/a/.",
        FZ_TMP "/l/x",
        "/",
        "/bin",
        "/bin/true",
        "/dev",
        "/dev/console",
        "/dev/null",
        "/dev/zero",
        "/dev/tty",
        "/proc/self/exe",
        "/nope/x",
        "/nope",
        "a",
        ".",
        "",
        "/bin/true/x",
    };
    struct fz_rng *r = &e->rng;
    *pool = -1;
    switch (fz_below(r, 16)) {
    case 0: {
        uint64_t p = fz_buf(e, 400, 0);
        memset((void *)(uintptr_t)p, 'n', 399); /* longer than a path may be */
        ((char *)(uintptr_t)p)[399] = 0;
        return p;
    }
    case 1: {
        uint64_t p = (uint64_t)(uintptr_t)e->scratch + FZ_SCRATCH - 6;
        memcpy((void *)(uintptr_t)p, "/tmp/f", 6); /* no NUL before the hole */
        return p;
    }
    case 2:
        return fz_ptr(e, FZ_IN);
    case 3:
    case 4:
        *pool = FZ_POOL_SYNTH;
        return str_at(e, synth_paths[fz_below(r, sizeof(synth_paths) / sizeof(synth_paths[0]))]);
    case 5:
        *pool = FZ_POOL_SYNTH;
        return proc_pid_path(e);
    default:
        *pool = (int)fz_below(r, sizeof(paths) / sizeof(paths[0]));
        return str_at(e, paths[*pool]);
    }
}

uint64_t fz_path(struct fz_env *e)
{
    int pool;
    return path_from_pool(e, &pool);
}

/* Where a symbolic link may point: inside FZ_TMP or at the read-only tree, never above
 * (a link made in FZ_TMP's own place points at an absolute name: shape_symlinkat). */
static uint64_t link_target(struct fz_env *e)
{
    static const char *const targets[] = {FZ_TMP "/a",    "a", ".",          "/bin", "/", "/nope",
                                          "/dev/console", "l", "/proc/self", ""};
    if (fz_chance(&e->rng, 1, 8)) {
        return fz_ptr(e, FZ_IN);
    }
    return str_at(e, targets[fz_below(&e->rng, sizeof(targets) / sizeof(targets[0]))]);
}

static uint64_t open_flags(struct fz_env *e)
{
    static const uint64_t v[] = {0,
                                 1,
                                 2,
                                 1 | O_CREAT,
                                 2 | O_CREAT | O_TRUNC,
                                 2 | O_CREAT | O_EXCL,
                                 O_DIRECTORY,
                                 O_PATH,
                                 1 | O_APPEND | O_CREAT,
                                 O_NONBLOCK | O_CLOEXEC};
    return fz_chance(&e->rng, 7, 8) ? v[fz_below(&e->rng, 10)] : fz_flags(e, 037777777);
}

static uint64_t mode_arg(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 010000) : fz_int(e);
}

static uint64_t out_buf(struct fz_env *e, uint64_t bytes)
{
    return fz_chance(&e->rng, 2, 3) ? fz_buf(e, bytes, 0) : fz_ptr(e, FZ_OUT);
}

static uint64_t small_len(struct fz_env *e)
{
    return fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 600) : fz_len(e);
}

/* ---------------------------------------------------------------- descriptors */

static enum fz_plan shape_close(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    if (is_console_out(c->a[0])) {
        c->a[0] += 200; /* the life's reports go there: a closed number instead */
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_dup(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_dup3(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = fz_fd(e);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) * O_CLOEXEC : fz_flags(e, O_CLOEXEC);
    if (is_console_out(c->a[1])) {
        c->a[1] += 3; /* never over the life's reports */
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fcntl(struct fz_env *e, struct fz_args *c)
{
    static const uint64_t cmds[] = {0, 1, 2, 3, 4, 1030, 5, 1031};
    c->a[0] = fz_fd(e);
    c->a[1] = fz_chance(&e->rng, 7, 8) ? cmds[fz_below(&e->rng, 8)] : fz_int(e);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 300) : fz_int(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_pipe2(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = out_buf(e, 8);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? (fz_next(&e->rng) & (O_CLOEXEC | O_NONBLOCK))
                                       : fz_flags(e, O_CLOEXEC | O_NONBLOCK);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_lseek(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 9000) : fz_len(e);
    c->a[2] = fz_chance(&e->rng, 7, 8) ? fz_below(&e->rng, 5) : fz_int(e);
    return FZ_PLAN_CALL;
}

/* An iovec array in scratch: for the console's output only NUL bytes, for a console read a
 * first buffer that fails (a valid one would wait for input). */
static uint64_t iov_arg(struct fz_env *e, uint64_t fd, bool out, uint64_t *count)
{
    struct fz_rng *r = &e->rng;
    *count = fz_chance(r, 7, 8) || fz_is_console(e, fd) ? fz_below(r, 5) : fz_len(e);
    if (fz_chance(r, 1, 8)) {
        return fz_ptr(e, FZ_IN);
    }
    uint64_t p = fz_buf(e, 4 * 16, 0), *v = (uint64_t *)(uintptr_t)p;
    for (int i = 0; i < 4; i++) {
        v[2 * i] = fz_chance(r, 3, 4) ? fz_buf(e, 256, 0) : fz_ptr(e, out ? FZ_IN : FZ_OUT);
        v[2 * i + 1] = small_len(e);
        if (fz_is_console(e, fd) && out) {
            v[2 * i] = e->zeros + fz_below(r, 64), v[2 * i + 1] = fz_below(r, 16);
        } else if (fz_is_console(e, fd) && i == 0) {
            v[0] = e->hole, v[1] = 1 + fz_below(r, 64);
        }
    }
    return p;
}

static enum fz_plan shape_readv(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = iov_arg(e, c->a[0], false, &c->a[2]);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_writev(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = iov_arg(e, c->a[0], true, &c->a[2]);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_pread64(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = fz_is_console(e, c->a[0]) ? e->hole : out_buf(e, 512);
    c->a[2] = small_len(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 9000) : fz_len(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_pwrite64(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e);
    c->a[1] = fz_chance(&e->rng, 3, 4) ? fz_buf(e, 512, 0) : fz_ptr(e, FZ_IN);
    c->a[2] = small_len(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 9000) : fz_len(e);
    if (fz_is_console(e, c->a[0])) {
        c->a[1] = e->zeros + fz_below(&e->rng, 64), c->a[2] = fz_below(&e->rng, 16);
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fd_only(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e); /* fsync, fdatasync, fchdir */
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fd_buf(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e); /* fstat, getdents64 */
    c->a[1] = out_buf(e, 512);
    c->a[2] = small_len(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_fd_int(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_fd(e); /* fchmod, ftruncate */
    c->a[1] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 20000) : fz_len(e);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- paths */

static enum fz_plan shape_openat(struct fz_env *e, struct fz_args *c)
{
    int pool;
    c->a[0] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e);
    c->a[1] = path_from_pool(e, &pool);
    c->a[2] = open_flags(e);
    if (pool == FZ_POOL_SYNTH && fz_chance(&e->rng, 2, 3)) {
        /* /proc and /sys: read them mostly (their texts are made at open); else the refusals */
        c->a[2] = fz_chance(&e->rng, 3, 4) ? 0 : O_DIRECTORY;
    }
    c->a[3] = mode_arg(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_at_path_buf(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e); /* newfstatat, */
    c->a[1] = fz_path(e);                                               /* readlinkat */
    c->a[2] = out_buf(e, 512);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? small_len(e) : fz_flags(e, 0x1100);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_statx(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e);
    c->a[1] = fz_path(e);
    c->a[2] = fz_chance(&e->rng, 1, 2) ? 0 : fz_flags(e, 0x1100);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? 0x7ff : fz_int(e);
    c->a[4] = out_buf(e, 256);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_at_path_mode(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e); /* faccessat(2), */
    c->a[1] = fz_path(e);                                               /* mkdirat, fchmodat */
    c->a[2] = mode_arg(e);
    c->a[3] = fz_chance(&e->rng, 1, 2) ? fz_below(&e->rng, 2) * AT_REMOVEDIR : fz_flags(e, 0x1300);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_unlinkat(struct fz_env *e, struct fz_args *c)
{
    shape_at_path_mode(e, c);
    c->a[2] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) * AT_REMOVEDIR : fz_flags(e, 0x200);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_utimensat(struct fz_env *e, struct fz_args *c)
{
    shape_at_path_mode(e, c);
    c->a[2] = fz_chance(&e->rng, 1, 3)   ? 0
              : fz_chance(&e->rng, 1, 2) ? fz_buf(e, 32, 0)
                                         : fz_ptr(e, FZ_IN);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_renameat(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e); /* and renameat2 */
    c->a[1] = fz_path(e);
    c->a[2] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e);
    c->a[3] = fz_path(e);
    c->a[4] = fz_chance(&e->rng, 3, 4) ? fz_below(&e->rng, 2) : fz_flags(e, 7);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_symlinkat(struct fz_env *e, struct fz_args *c)
{
    int pool;
    c->a[0] = link_target(e);
    c->a[1] = fz_chance(&e->rng, 2, 3) ? (uint64_t)AT_FDCWD : fz_fd(e);
    c->a[2] = path_from_pool(e, &pool);
    /* A link in FZ_TMP's own place (a life removed it) would resolve a relative target in
     * /tmp, and lives would create there through it: that one gets an absolute target. */
    if (pool == 0) {
        c->a[0] = str_at(e, FZ_TMP "/a");
    }
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_path_only(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = fz_path(e); /* chdir */
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_getcwd(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = out_buf(e, 512);
    c->a[1] = small_len(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_umask(struct fz_env *e, struct fz_args *c)
{
    c->a[0] = mode_arg(e);
    return FZ_PLAN_CALL;
}

/* ---------------------------------------------------------------- waiting on descriptors */

/* A signal mask for the call's duration: never with SIGALRM (the waker's) blocked. */
static uint64_t temp_mask(struct fz_env *e)
{
    if (fz_chance(&e->rng, 1, 3)) {
        return 0;
    }
    return fz_temp_mask(e, 6);
}

/* A short timeout, none (the waker ends the wait), or a bad one. */
static uint64_t poll_timeout(struct fz_env *e)
{
    struct fz_rng *r = &e->rng;
    if (fz_chance(r, 1, 4)) {
        return 0;
    }
    uint64_t p = fz_buf(e, 16, 6);
    if (fz_in_scratch(e, p, 16)) {
        int64_t *ts = (int64_t *)(uintptr_t)p;
        ts[0] = fz_chance(r, 7, 8) ? 0 : -1;
        ts[1] = fz_chance(r, 7, 8) ? (int64_t)fz_below(r, 20000000) : 1000000000;
    }
    return p;
}

static enum fz_plan shape_ppoll(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    uint64_t p = fz_buf(e, 8 * 8, 8);
    if (fz_in_scratch(e, p, 64)) {
        for (int i = 0; i < 8; i++) {
            uint32_t *pfd = (uint32_t *)(uintptr_t)(p + 8 * i);
            pfd[0] = (uint32_t)fz_fd(e);
            pfd[1] = fz_chance(r, 3, 4) ? (uint32_t)fz_below(r, 2) * POLLIN | POLLOUT
                                        : (uint32_t)fz_next(r);
        }
    }
    c->a[0] = p;
    c->a[1] = fz_chance(r, 7, 8) ? fz_below(r, 9) : fz_len(e);
    c->a[2] = poll_timeout(e);
    c->a[3] = temp_mask(e);
    c->a[4] = fz_chance(r, 7, 8) ? 8 : fz_len(e);
    return FZ_PLAN_CALL;
}

static enum fz_plan shape_pselect6(struct fz_env *e, struct fz_args *c)
{
    struct fz_rng *r = &e->rng;
    c->a[0] = fz_chance(r, 7, 8) ? fz_below(r, 12) : fz_int(e);
    for (int k = 1; k <= 3; k++) {
        c->a[k] = fz_chance(r, 1, 3) ? 0 : out_buf(e, 16);
    }
    c->a[4] = poll_timeout(e);
    c->a[5] = 0;
    if (fz_chance(r, 1, 2)) { /* {const sigset_t *ss, size_t ss_len} */
        uint64_t p = fz_buf(e, 16, 8);
        if (fz_in_scratch(e, p, 16)) {
            uint64_t *v = (uint64_t *)(uintptr_t)p;
            v[0] = temp_mask(e);
            v[1] = fz_chance(r, 7, 8) ? 8 : fz_len(e);
        }
        c->a[5] = p;
    }
    return FZ_PLAN_CALL;
}

static const struct {
    const char *name;
    fz_shape_fn fn;
} file_shapers[] = {
    {"close", shape_close},
    {"dup", shape_dup},
    {"dup3", shape_dup3},
    {"fcntl", shape_fcntl},
    {"pipe2", shape_pipe2},
    {"lseek", shape_lseek},
    {"readv", shape_readv},
    {"writev", shape_writev},
    {"pread64", shape_pread64},
    {"pwrite64", shape_pwrite64},
    {"fsync", shape_fd_only},
    {"fdatasync", shape_fd_only},
    {"fchdir", shape_fd_only},
    {"fstat", shape_fd_buf},
    {"getdents64", shape_fd_buf},
    {"fchmod", shape_fd_int},
    {"ftruncate", shape_fd_int},
    {"openat", shape_openat},
    {"newfstatat", shape_at_path_buf},
    {"readlinkat", shape_at_path_buf},
    {"statx", shape_statx},
    {"faccessat", shape_at_path_mode},
    {"faccessat2", shape_at_path_mode},
    {"mkdirat", shape_at_path_mode},
    {"fchmodat", shape_at_path_mode},
    {"unlinkat", shape_unlinkat},
    {"utimensat", shape_utimensat},
    {"renameat", shape_renameat},
    {"renameat2", shape_renameat},
    {"symlinkat", shape_symlinkat},
    {"chdir", shape_path_only},
    {"getcwd", shape_getcwd},
    {"umask", shape_umask},
    {"ppoll", shape_ppoll},
    {"pselect6", shape_pselect6},
};

fz_shape_fn fz_file_shaper(const char *name)
{
    for (size_t i = 0; i < sizeof(file_shapers) / sizeof(file_shapers[0]); i++) {
        if (!strcmp(file_shapers[i].name, name)) {
            return file_shapers[i].fn;
        }
    }
    return NULL;
}
