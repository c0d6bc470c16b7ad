/* SPDX-License-Identifier: MIT */
/*
 * sysmisc.c — the Linux calls a C library makes at start-up and for its bookkeeping:
 * identity (a single user: root), resource limits, robust futex lists, randomness,
 * system and process times, memory protection and advice.
 *
 * Identity: every process runs as uid 0 / gid 0 with no supplementary groups; set*id to 0
 * succeeds, to anything else fails with -EPERM (there is nobody else to be).
 * Limits (prlimit64/getrlimit/setrlimit): kept per process and inherited; RLIMIT_NOFILE is
 * enforced by the descriptor table (fd.c), RLIMIT_STACK reports the stack the loader maps;
 * the others are recorded and reported, not enforced.
 * Syscall context; each call checks all of its arguments before changing anything.
 */
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cycles.h"
#include "kernel/fd.h"
#include "kernel/lib.h"
#include "kernel/mlock.h"
#include "kernel/page.h"
#include "kernel/random.h"
#include "kernel/synth.h"
#include "kernel/syscall.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_clock.h" /* the clock-id rules the vDSO shares */
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define RLIM_INFINITY  (~0ull)
#define CLOCK_TICKS_HZ 100 /* times() and AT_CLKTCK units */

/* ---- identity ---- */

long sys_getuid(struct trap_frame *f)
{
    return 0;
}

long sys_setid(struct trap_frame *f)
{
    return arch_frame_arg(f, 0) == 0 ? 0 : -EPERM;
}

long sys_getresid(struct trap_frame *f)
{
    uint32_t ids[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if (copy_to_user(current_vm(), arch_frame_arg(f, i), &ids[i], sizeof(ids[i]))) {
            return -EFAULT;
        }
    }
    return 0;
}

long sys_getgroups(struct trap_frame *f)
{
    return (int)arch_frame_arg(f, 0) < 0 ? -EINVAL : 0;
}

/* ---- capabilities: one root user holds them all; capset drops some, for the reports ---- */

#define CAP_V1      0x19980330u
#define CAP_V2      0x20071026u
#define CAP_V3      0x20080522u
#define CAP_ALL     ((1ull << 41) - 1) /* 0..CAP_LAST_CAP (40), as Linux 6.1 */
#define CAP_MAXDATA 2

struct cap_header {
    uint32_t version;
    int32_t pid;
};

struct cap_data {
    uint32_t effective, permitted, inheritable;
};

/* The header at uhdr: 0 and the words its version takes (1 or 2), or -errno (an unknown
 * version: Linux's preferred one written back, -EINVAL). */
static long cap_header(uint64_t uhdr, struct cap_header *h, int *words)
{
    if (copy_from_user(current_vm(), h, uhdr, sizeof(*h))) {
        return -EFAULT;
    }
    if (h->version != CAP_V1 && h->version != CAP_V2 && h->version != CAP_V3) {
        uint32_t v = CAP_V3;
        return copy_to_user(current_vm(), uhdr, &v, sizeof(v)) ? -EFAULT : -EINVAL;
    }
    *words = h->version == CAP_V1 ? 1 : 2;
    return h->pid < 0 ? -EINVAL : 0;
}

long sys_capget(struct trap_frame *f)
{
    struct cap_header h;
    struct cap_data d[CAP_MAXDATA];
    int words;
    long r = cap_header(arch_frame_arg(f, 0), &h, &words);
    if (r || !arch_frame_arg(f, 1)) {
        return r; /* a NULL data pointer: the version is asked for */
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = h.pid ? proc_of_id_locked(h.pid) : current()->proc;
    uint64_t eff = p ? CAP_ALL & ~p->cap_eff_dropped : 0;
    uint64_t perm = p ? CAP_ALL & ~p->cap_perm_dropped : 0, inh = p ? p->cap_inheritable : 0;
    spin_unlock_irqrestore(&proc_lock, flags);
    if (!p) {
        return -ESRCH;
    }
    for (int i = 0; i < words; i++) {
        d[i] = (struct cap_data){(uint32_t)(eff >> 32 * i), (uint32_t)(perm >> 32 * i),
                                 (uint32_t)(inh >> 32 * i)};
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), d, (size_t)words * sizeof(d[0]))
               ? -EFAULT
               : 0;
}

/* capset for the caller's own process: the permitted set may only shrink, the effective set
 * stay within it, and the inheritable set within what a root process may hold (every one). */
long sys_capset(struct trap_frame *f)
{
    struct cap_header h;
    struct cap_data d[CAP_MAXDATA] = {{0, 0, 0}, {0, 0, 0}};
    int words;
    long r = cap_header(arch_frame_arg(f, 0), &h, &words);
    if (r) {
        return r;
    }
    struct process *p = current()->proc;
    if (h.pid != 0 && h.pid != p->pid) {
        return -EPERM; /* Linux 6.1: only one's own */
    }
    if (copy_from_user(current_vm(), d, arch_frame_arg(f, 1), (size_t)words * sizeof(d[0]))) {
        return -EFAULT;
    }
    uint64_t eff = 0, perm = 0, inh = 0;
    for (int i = 0; i < words; i++) {
        eff |= (uint64_t)d[i].effective << 32 * i;
        perm |= (uint64_t)d[i].permitted << 32 * i;
        inh |= (uint64_t)d[i].inheritable << 32 * i;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    uint64_t held = CAP_ALL & ~p->cap_perm_dropped;
    r = (perm & ~held) || (eff & ~perm) || (inh & ~CAP_ALL) ? -EPERM : 0;
    if (r == 0) {
        p->cap_perm_dropped = CAP_ALL & ~perm;
        p->cap_eff_dropped = CAP_ALL & ~eff;
        p->cap_inheritable = inh;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

/* ---- limits ---- */

void rlimit_init_defaults(struct rlimit_k *lim)
{
    for (int i = 0; i < RLIM_NLIMITS; i++) {
        lim[i].cur = lim[i].max = RLIM_INFINITY;
    }
    lim[RLIMIT_STACK].cur = lim[RLIMIT_STACK].max = USER_STACK_SIZE;
    lim[RLIMIT_NOFILE].cur = lim[RLIMIT_NOFILE].max = FD_MAX;
}

/* prlimit64(pid, resource, new, old): pid 0 or the caller's own. */
static long do_prlimit(int pid, unsigned res, uint64_t unew, uint64_t uold)
{
    struct process *p = current()->proc;
    struct rlimit_k nl, old;
    if (pid != 0 && pid != p->pid) {
        return pid < 0 ? -EINVAL : -EPERM; /* only one's own limits */
    }
    if (res >= RLIM_NLIMITS) {
        return -EINVAL;
    }
    if (unew && copy_from_user(current_vm(), &nl, unew, sizeof(nl))) {
        return -EFAULT;
    }
    if (unew && (nl.cur > nl.max || (res == RLIMIT_NOFILE && nl.max > FD_MAX) ||
                 (res == RLIMIT_STACK && nl.cur != USER_STACK_SIZE))) {
        return -EINVAL; /* NOFILE cannot grow past the table; the stack is fixed */
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    old = p->rlimits[res];
    if (unew) {
        p->rlimits[res] = nl;
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return uold && copy_to_user(current_vm(), uold, &old, sizeof(old)) ? -EFAULT : 0;
}

long sys_prlimit64(struct trap_frame *f)
{
    return do_prlimit((int)arch_frame_arg(f, 0), (unsigned)arch_frame_arg(f, 1),
                      arch_frame_arg(f, 2), arch_frame_arg(f, 3));
}

long sys_getrlimit(struct trap_frame *f)
{
    return do_prlimit(0, (unsigned)arch_frame_arg(f, 0), 0, arch_frame_arg(f, 1));
}

long sys_setrlimit(struct trap_frame *f)
{
    return do_prlimit(0, (unsigned)arch_frame_arg(f, 0), arch_frame_arg(f, 1), 0);
}

/* ---- robust futexes: recorded for get_robust_list; the kernel does not walk them ---- */

#define ROBUST_LIST_HEAD_BYTES 24

long sys_set_robust_list(struct trap_frame *f)
{
    if (arch_frame_arg(f, 1) != ROBUST_LIST_HEAD_BYTES) {
        return -EINVAL;
    }
    current()->robust_list = arch_frame_arg(f, 0);
    return 0;
}

/* ---- membarrier ---- */

#define MEMBARRIER_CMD_QUERY 0

/* membarrier: QUERY reports no command.  Each of them makes every CPU that runs a thread (of
 * this process, or of any) execute a barrier before the call returns, which takes an
 * interrupt of those CPUs: dataplane CPUs included, which zerotick interrupts only for work
 * their own task asked for.  So none is offered, and each is -EINVAL, as Linux says for a
 * command QUERY does not list; glibc never calls membarrier, and liburcu falls back to its
 * signal-based flavour. */
long sys_membarrier(struct trap_frame *f)
{
    if (arch_frame_arg(f, 1) != 0) {
        return -EINVAL; /* no flags without the commands they go with */
    }
    return arch_frame_arg(f, 0) == MEMBARRIER_CMD_QUERY ? 0 : -EINVAL;
}

/* ---- randomness ---- */

#define GRND_NONBLOCK 1
#define GRND_RANDOM   2
#define GRND_INSECURE 4

long sys_getrandom(struct trap_frame *f)
{
    uint64_t ubuf = arch_frame_arg(f, 0), n = MIN(arch_frame_arg(f, 1), 1u << 20);
    unsigned flags = (unsigned)arch_frame_arg(f, 2);
    if ((flags & ~(unsigned)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) ||
        ((flags & GRND_RANDOM) && (flags & GRND_INSECURE))) {
        return -EINVAL;
    }
    if (vm_check_range(current_vm(), ubuf, n, PROT_WRITE)) {
        return -EFAULT;
    }
    uint8_t buf[128];
    for (uint64_t done = 0; done < n;) {
        size_t chunk = MIN(sizeof(buf), n - done);
        random_bytes(buf, chunk);
        if (copy_to_user(current_vm(), ubuf + done, buf, chunk)) {
            return done ? (long)done : -EFAULT;
        }
        done += chunk;
    }
    return (long)n;
}

/* ---- time ---- */

static uint64_t ticks_to_clock(uint64_t counter_ticks)
{
    return cycles_to_ns(counter_ticks) / (NS_PER_SEC / CLOCK_TICKS_HZ);
}

/* User and system counter ticks of p's threads, alive and dead (proc_lock held). */
static void proc_times_locked(struct process *p, uint64_t *user, uint64_t *sys)
{
    ASSERT_HELD(&proc_lock); /* the thread list, and each task's life */
    *user = p->dead_user_cycles;
    *sys = p->dead_sys_cycles;
    list_for_each(pos, &p->threads) {
        uint64_t u, s;
        acct_task_read(container_of(pos, struct task, thread_link), &u, &s);
        *user += u;
        *sys += s;
    }
}

long sys_times(struct trap_frame *f)
{
    struct process *p = current()->proc;
    uint64_t t[4];
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    proc_times_locked(p, &t[0], &t[1]);
    t[2] = p->child_user_cycles;
    t[3] = p->child_sys_cycles;
    spin_unlock_irqrestore(&proc_lock, flags);
    for (int i = 0; i < 4; i++) {
        t[i] = ticks_to_clock(t[i]);
    }
    if (arch_frame_arg(f, 0) && copy_to_user(current_vm(), arch_frame_arg(f, 0), t, sizeof(t))) {
        return -EFAULT;
    }
    return (long)ticks_to_clock(arch_counter_read());
}

struct timeval_k {
    int64_t sec, usec;
};

struct rusage_k {
    struct timeval_k utime, stime;
    int64_t rest[14]; /* maxrss ... nivcsw: not counted, reported as 0 */
};

_Static_assert(sizeof(struct rusage_k) == RUSAGE_BYTES, "Linux/aarch64's struct rusage");

static struct timeval_k to_timeval(uint64_t ticks)
{
    uint64_t us = cycles_to_us(ticks);
    return (struct timeval_k){(int64_t)(us / US_PER_SEC), (int64_t)(us % US_PER_SEC)};
}

int rusage_put(uint64_t uaddr, uint64_t user_cycles, uint64_t sys_cycles)
{
    struct rusage_k ru;
    memset(&ru, 0, sizeof(ru));
    ru.utime = to_timeval(user_cycles);
    ru.stime = to_timeval(sys_cycles);
    return copy_to_user(current_vm(), uaddr, &ru, sizeof(ru)) ? -EFAULT : 0;
}

#define RUSAGE_SELF     0
#define RUSAGE_CHILDREN (-1)
#define RUSAGE_THREAD   1

long sys_getrusage(struct trap_frame *f)
{
    struct process *p = current()->proc;
    int who = (int)arch_frame_arg(f, 0);
    uint64_t user = 0, sys = 0;
    if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN && who != RUSAGE_THREAD) {
        return -EINVAL;
    }
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    if (who == RUSAGE_SELF) {
        proc_times_locked(p, &user, &sys);
    } else if (who == RUSAGE_CHILDREN) {
        user = p->child_user_cycles;
        sys = p->child_sys_cycles;
    } else {
        acct_task_read(current(), &user, &sys);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return rusage_put(arch_frame_arg(f, 1), user, sys);
}

struct sysinfo_k {
    int64_t uptime;
    uint64_t loads[3];
    uint64_t totalram, freeram, sharedram, bufferram, totalswap, freeswap;
    uint16_t procs, pad;
    uint32_t pad2;
    uint64_t totalhigh, freehigh;
    uint32_t mem_unit;
    uint32_t pad3;
};
_Static_assert(sizeof(struct sysinfo_k) == 112, "Linux/aarch64's struct sysinfo");

long sys_sysinfo(struct trap_frame *f)
{
    struct sysinfo_k si;
    memset(&si, 0, sizeof(si));
    si.uptime = (int64_t)(cycles_to_ns(arch_counter_read()) / NS_PER_SEC);
    si.totalram = page_total_count();
    si.freeram = page_free_count();
    si.sharedram = tmpfs_pages_used();
    procfs_loadavg(si.loads);
    si.procs = (uint16_t)MIN(proc_count(), 0xffff);
    si.mem_unit = PAGE_SIZE;
    return copy_to_user(current_vm(), arch_frame_arg(f, 0), &si, sizeof(si)) ? -EFAULT : 0;
}

/* ---- memory ---- */

/* ---- memory policy: one node, 0, holds all memory ----
 * What libnuma (rt-tests links it) asks first: get_mempolicy(0, 0, 0, 0, 0) tells it NUMA is
 * there.  The policies a program sets are checked as Linux checks them, kept and reported;
 * every one of them names node 0 or none, and all memory is node 0's. */

#define MPOL_DEFAULT        0
#define MPOL_PREFERRED      1
#define MPOL_BIND           2
#define MPOL_INTERLEAVE     3
#define MPOL_LOCAL          4
#define MPOL_PREFERRED_MANY 5
#define MPOL_MODE_FLAGS                                                                            \
    ((1u << 15) | (1u << 14) | (1u << 13)) /* STATIC, RELATIVE, NUMA_BALANCING */
#define MPOL_F_NODE         1
#define MPOL_F_ADDR         2
#define MPOL_F_MEMS_ALLOWED 4
#define MPOL_MF_VALID       7 /* STRICT, MOVE, MOVE_ALL */
#define NODES_MAX           (PAGE_SIZE * 8)

/* The node mask a caller gave (maxnode bits at unodes): only node 0 exists, so a bit past
 * it in the first word names no node (-EINVAL), and the rest of the mask is not read. */
static long read_nodes(uint64_t unodes, uint64_t maxnode, uint64_t *nodes)
{
    *nodes = 0;
    if (maxnode > NODES_MAX) {
        return -EINVAL;
    }
    if (!unodes || maxnode <= 1) {
        return 0; /* Linux reads maxnode - 1 bits: none */
    }
    if (copy_from_user(current_vm(), nodes, unodes, sizeof(*nodes))) {
        return -EFAULT;
    }
    if (maxnode - 1 < 64) {
        *nodes &= (1ull << (maxnode - 1)) - 1;
    }
    return *nodes & ~1ull ? -EINVAL : 0;
}

/* May `mode` (flags stripped) go with `nodes`?  Linux's rules for one node. */
static bool mode_fits(unsigned mode, uint64_t nodes)
{
    switch (mode) {
    case MPOL_DEFAULT:
    case MPOL_LOCAL:
        return nodes == 0;
    case MPOL_PREFERRED:
        return true;
    case MPOL_BIND:
    case MPOL_INTERLEAVE:
    case MPOL_PREFERRED_MANY:
        return nodes != 0;
    default:
        return false;
    }
}

long sys_set_mempolicy(struct trap_frame *f)
{
    unsigned mode = (unsigned)arch_frame_arg(f, 0) & ~MPOL_MODE_FLAGS;
    uint64_t nodes;
    long r = read_nodes(arch_frame_arg(f, 1), arch_frame_arg(f, 2), &nodes);
    if (r) {
        return r;
    }
    if (!mode_fits(mode, nodes)) {
        return -EINVAL;
    }
    struct process *p = current()->proc;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    p->mempolicy_mode = (int)mode;
    p->mempolicy_nodes = nodes;
    spin_unlock_irqrestore(&proc_lock, flags);
    return 0;
}

/* Write `nodes` as a mask of maxnode bits at unodes (as Linux: whole 64-bit words). */
static long write_nodes(uint64_t unodes, uint64_t maxnode, uint64_t nodes)
{
    if (!unodes) {
        return 0;
    }
    if (maxnode < 2 || maxnode > NODES_MAX) {
        return -EINVAL; /* fewer bits than the one node needs */
    }
    uint64_t words = (maxnode - 1 + 63) / 64, zero = 0;
    for (uint64_t i = 0; i < words; i++) {
        if (copy_to_user(current_vm(), unodes + i * 8, i ? &zero : &nodes, 8)) {
            return -EFAULT;
        }
    }
    return 0;
}

long sys_get_mempolicy(struct trap_frame *f)
{
    unsigned flags = (unsigned)arch_frame_arg(f, 4);
    struct process *p = current()->proc;
    int mode;
    uint64_t nodes;
    if (flags & ~(unsigned)(MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED) ||
        ((flags & MPOL_F_MEMS_ALLOWED) && (flags & (MPOL_F_NODE | MPOL_F_ADDR))) ||
        (!(flags & MPOL_F_ADDR) && arch_frame_arg(f, 3))) {
        return -EINVAL;
    }
    if ((flags & MPOL_F_ADDR) && vm_check_range(current_vm(), arch_frame_arg(f, 3), 1, 0)) {
        return -EFAULT;
    }
    unsigned long irq = spin_lock_irqsave(&proc_lock);
    mode = p->mempolicy_mode;
    nodes = p->mempolicy_nodes;
    spin_unlock_irqrestore(&proc_lock, irq);
    if (flags & MPOL_F_MEMS_ALLOWED) {
        mode = 0;
        nodes = 1; /* node 0 */
    } else if (flags & MPOL_F_NODE) {
        if (!(flags & MPOL_F_ADDR) && mode != MPOL_INTERLEAVE) {
            return -EINVAL;
        }
        mode = 0; /* the node the page (or the next interleaved page) is on */
    }
    long r = write_nodes(arch_frame_arg(f, 1), arch_frame_arg(f, 2), nodes);
    if (r == 0 && arch_frame_arg(f, 0) &&
        copy_to_user(current_vm(), arch_frame_arg(f, 0), &mode, sizeof(mode))) {
        r = -EFAULT;
    }
    return r;
}

long sys_mbind(struct trap_frame *f)
{
    unsigned mode = (unsigned)arch_frame_arg(f, 2) & ~MPOL_MODE_FLAGS;
    uint64_t nodes;
    if ((arch_frame_arg(f, 0) & (PAGE_SIZE - 1)) ||
        (arch_frame_arg(f, 5) & ~(uint64_t)MPOL_MF_VALID)) {
        return -EINVAL;
    }
    long r = read_nodes(arch_frame_arg(f, 3), arch_frame_arg(f, 4), &nodes);
    if (r) {
        return r;
    }
    if (!mode_fits(mode, nodes)) {
        return -EINVAL;
    }
    return vm_mapped(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1))
               ? -EFAULT
               : 0; /* already on node 0 */
}

/* Memory is never paged out: kernel/mm/mlock.c. */
long sys_mlock(struct trap_frame *f)
{
    return vm_mlock(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1), 0, true);
}

long sys_mlock2(struct trap_frame *f)
{
    return vm_mlock(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                    (unsigned)arch_frame_arg(f, 2), true);
}

long sys_munlock(struct trap_frame *f)
{
    return vm_mlock(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1), 0, false);
}

long sys_mlockall(struct trap_frame *f)
{
    return vm_mlockall(current_vm(), (unsigned)arch_frame_arg(f, 0));
}

long sys_munlockall(struct trap_frame *f)
{
    return 0;
}

long sys_mprotect(struct trap_frame *f)
{
    return vm_mprotect(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                       (unsigned)arch_frame_arg(f, 2));
}

#define MADV_NORMAL     0
#define MADV_RANDOM     1
#define MADV_SEQUENTIAL 2
#define MADV_WILLNEED   3
#define MADV_DONTNEED   4
#define MADV_FREE       8

long sys_madvise(struct trap_frame *f)
{
    switch ((int)arch_frame_arg(f, 2)) {
    case MADV_DONTNEED:
        return vm_madvise_dontneed(current_vm(), arch_frame_arg(f, 0), arch_frame_arg(f, 1));
    case MADV_NORMAL:
    case MADV_RANDOM:
    case MADV_SEQUENTIAL:
    case MADV_WILLNEED:
    case MADV_FREE: /* a hint: the pages may keep their contents */
        return (arch_frame_arg(f, 0) & (PAGE_SIZE - 1)) ? -EINVAL : 0;
    default:
        return -EINVAL; /* hugepage, merge, ... advice has nothing to act on here */
    }
}
