/* SPDX-License-Identifier: MIT */
/*
 * machine.c — what the runner does to the machine around a run.
 *
 * Before the first life it records the partition (which CPUs are online, which are
 * dataplane) and, after the memory baseline is taken, makes FZ_TMP, the one directory where
 * lives may create files.  After the last life it puts every CPU back as it was and removes
 * FZ_TMP with everything in it, so that the memory balance compares like with like: fuzzed
 * zt_partition calls take CPUs offline (an offline CPU has given its trace ring and idle
 * stack back) or change their roles, and what lives created in FZ_TMP holds pages until it
 * is removed.  FZ_TMP itself is part of the run, not of the baseline: lives remove it and
 * make it again (with fuzzed modes, or a file in its place), and a directory made again
 * gets a new inode, a kernel object that may sit in another slab page than the old one,
 * whose page the kernel keeps for its other objects; left in place, that one page was the
 * dataplane round's "one free page short" (FZ-07, FZ-08).  FZ_TMP is emptied through directory
 * descriptors (openat, getdents64, unlinkat relative to the parent), so no path length
 * limits how deep lives nested their directories; links are removed, never followed.
 * Runner only.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#define AT_REMOVEDIR 0x200
#define O_NOFOLLOW   0100000
#define DT_DIR       4
#define MAX_DEPTH    256

static bool empty_dir(int dir, int depth);

static uint64_t mask_of(const struct zt_cpu_info *ci, long n, bool dataplane)
{
    uint64_t m = 0;
    for (long c = 0; c < n && c < 64; c++) {
        if (ci[c].online && (!dataplane || ci[c].dataplane)) {
            m |= 1ull << c;
        }
    }
    return m;
}

static struct zt_cpu_info cpuinfo[64];

void fz_machine_save(struct fz_machine *m)
{
    long n = zt_cpus(cpuinfo, 64);
    m->ncpus = n > 0 && n <= 64 ? (int)n : 1;
    m->online = mask_of(cpuinfo, n, false);
    m->dataplane = mask_of(cpuinfo, n, true);
}

static long partition(int cpu, long op, long flags)
{
    char list[8];
    int len = snprintf(list, sizeof(list), "%d", cpu);
    long r = -1;
    for (int tries = 0; tries < 20 && r < 0; tries++) { /* -EBUSY/-EAGAIN while it settles */
        r = zt_syscall4(SYS_zt_partition, list, len, op, flags | ZT_PART_QUIET);
        if (r < 0) {
            zt_sleep_ns(50 * 1000000ull);
        }
    }
    return r;
}

int fz_machine_restore(const struct fz_machine *m)
{
    struct fz_machine now;
    int wrong = 0;
    fz_machine_save(&now);
    for (int c = 0; c < m->ncpus; c++) {
        uint64_t bit = 1ull << c;
        bool on = m->online & bit, dp = m->dataplane & bit;
        long r = 0;
        if (on && !(now.online & bit)) {
            r = partition(c, ZT_PART_ONLINE, dp ? ZT_PART_AS_DATAPLANE : 0);
        } else if (on && dp != !!(now.dataplane & bit)) {
            r = partition(c, dp ? ZT_PART_DATAPLANE : ZT_PART_HOUSEKEEPING, 0);
        } else if (!on && (now.online & bit)) {
            r = partition(c, ZT_PART_OFFLINE, 0);
        }
        if (r < 0) {
            printf("fuzz: cpu %d could not be put back as it was: %s\n", c, zt_errno_name((int)-r));
            wrong++;
        }
    }
    return wrong;
}

void fz_tmp_make(void)
{
    zt_syscall3(SYS_mkdirat, AT_FDCWD, FZ_TMP, 0777);
}

void fz_stack_prefault(void)
{
    volatile char pad[FZ_RUNNER_STACK];
    for (size_t i = 0; i < sizeof(pad); i += FZ_PAGE) {
        pad[i] = 0;
    }
    pad[sizeof(pad) - 1] = 0;
}

/* One pass over the directory open as `dir`: remove every entry (a directory after its
 * contents).  How many entries it saw; *left counts those that could not be removed. */
static int empty_pass(int dir, int depth, int *left)
{
    char buf[256]; /* small: MAX_DEPTH of these fit in what fz_stack_prefault touched */
    long got;
    int seen = 0;
    zt_syscall3(SYS_lseek, dir, 0, 0);
    while ((got = zt_syscall3(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < got;) { /* {ino, off, reclen (u16), type (u8), name} */
            uint16_t reclen;
            memcpy(&reclen, buf + off + 16, sizeof(reclen));
            unsigned char type = (unsigned char)buf[off + 18];
            const char *name = buf + off + 19;
            off += reclen;
            if (!strcmp(name, ".") || !strcmp(name, "..")) {
                continue;
            }
            seen++;
            if (type == DT_DIR && depth < MAX_DEPTH) {
                long sub = zt_syscall4(SYS_openat, dir, name, O_DIRECTORY | O_NOFOLLOW, 0);
                if (sub >= 0) {
                    empty_dir((int)sub, depth + 1);
                    zt_syscall1(SYS_close, sub);
                }
            }
            long r = zt_syscall3(SYS_unlinkat, dir, name, type == DT_DIR ? AT_REMOVEDIR : 0);
            if (r != 0) {
                printf("fuzz: %s: cannot remove \"%.60s\" (type %u, depth %d): %s\n", FZ_TMP, name,
                       type, depth, zt_errno_name((int)-r));
                (*left)++;
            }
        }
    }
    return seen;
}

/* Remove everything in the directory open as `dir`, reading it again after each pass (the
 * removals move the entries a reader has not reached yet); false if something stayed. */
static bool empty_dir(int dir, int depth)
{
    for (int pass = 0; pass < 8; pass++) {
        int left = 0;
        if (empty_pass(dir, depth, &left) == 0) {
            return true;
        }
        if (left) {
            return false;
        }
    }
    return false;
}

/* Remove FZ_TMP and everything in it, whatever lives made of it (emptied, removed, made
 * again with another mode, a file or a link put in its place); false if something stayed. */
bool fz_tmp_remove(void)
{
    long dir = zt_syscall4(SYS_openat, AT_FDCWD, FZ_TMP, O_DIRECTORY | O_NOFOLLOW, 0);
    if (dir == -ENOENT) {
        return true;
    }
    if (dir < 0) { /* not a directory: removed as a file or link, never followed */
        return zt_syscall3(SYS_unlinkat, AT_FDCWD, FZ_TMP, 0) == 0;
    }
    bool ok = empty_dir((int)dir, 0);
    zt_syscall1(SYS_close, dir);
    return ok && zt_syscall3(SYS_unlinkat, AT_FDCWD, FZ_TMP, AT_REMOVEDIR) == 0;
}

/* -D: a life that removes FZ_TMP and makes it again, as fuzzed lives sometimes do
 * (rmdir, then mkdirat with a fuzzed mode), with pipes opened in between: their inodes are
 * kernel objects of the directory's size class, so the new directory's inode is placed in
 * another slab page than the old one had, which stays in use by its other objects.  The
 * pipes are closed after; the new directory's page then holds it alone.  The runner's
 * memory balance must not depend on where that inode sits (FZ-08). */
#define REPLANT_PIPES 40
int fz_replant_life(void)
{
    static int fds[2 * REPLANT_PIPES];
    int n = 0;
    bool removed = fz_tmp_remove();
    while (n < REPLANT_PIPES && zt_syscall2(SYS_pipe2, &fds[2 * n], 0) == 0) {
        n++;
    }
    long m = zt_syscall3(SYS_mkdirat, AT_FDCWD, FZ_TMP, 0700);
    for (int i = 0; i < 2 * n; i++) {
        zt_syscall1(SYS_close, fds[i]);
    }
    printf("fuzz: replant: %s removed (%s), %d pipes, made again (%s)\n", FZ_TMP,
           removed ? "ok" : "failed", n, m ? zt_errno_name((int)-m) : "ok");
    return removed && m == 0 ? FZ_DONE_STATUS : 1;
}
