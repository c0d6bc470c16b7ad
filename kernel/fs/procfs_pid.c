/* SPDX-License-Identifier: MIT */
/*
 * procfs_pid.c — the texts of a process's files in /proc/ID (and a thread's in
 * /proc/ID/task/TID): stat, status, statm, maps, cmdline, comm, syscall, in the formats of
 * Linux's fs/proc/array.c, base.c and task_mmu.c, field for field, so ps, top and
 * pthread_getattr_np parse them unchanged (tests/qemu/test_procfs.py compares them with Linux's
 * own).
 *
 * Each text is written at open, from a struct view taken under proc_lock (and the address
 * space's lock for the memory figures), so the fields agree with each other.  What zerotick
 * does not have reads as Linux shows its absence: no page faults to count (every page is
 * populated when mapped), no swap, no controlling-terminal number (tty_nr 0), nice 0; the
 * capabilities are root's (all), less what capset dropped.  Times are the tick-free accounting
 * (acct.h) in Linux's USER_HZ (100) units.
 */
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/fd.h"
#include "kernel/lib.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define USER_HZ     100
#define SIGBIT(sig) (1ull << ((sig)-1))
#define CAP_ALL     ((1ull << 41) - 1) /* capabilities 0..40, Linux 6.1's */

struct view {
    int id, pid, tid, ppid, pgid, sid, nthreads, exit_signal, fdsize;
    char comm[ZT_NAME_LEN];
    char state;
    unsigned cpu, policy, rt_priority, umask;
    uint64_t user, sys, cuser, csys, start;
    uint64_t sig_pending, sig_shared, sig_blocked, sig_ignored, sig_caught;
    uint64_t cap_eff, cap_perm, cap_inh;
    cpumask_t affinity;
    bool asleep;      /* in a system call, sleeping: its registers below */
    uint64_t regs[9]; /* the call's number, its 6 arguments, the user SP and PC */
    bool has_vm;      /* the figures below are there (not a zombie) */
    uint64_t vsize, rss_pages, code_start, code_end, code_bytes, data_bytes, stack_bytes;
    uint64_t stack_top, brk_start, brk, arg_start, arg_end;
};

static char task_state(const struct task *t)
{
    switch (t->state) {
    case TASK_RUNNABLE:
    case TASK_WAKING:
        return 'R';
    case TASK_SLEEPING:
        return 'S';
    default:
        return 'Z';
    }
}

/* The memory figures of p (proc_lock held: p is alive and has threads, so its address space
 * stays while its lock is taken). */
static void view_memory(struct view *v, struct vm *vm)
{
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    v->code_start = ~0ull;
    list_for_each(pos, &vm->vmas) {
        const struct vma *a = container_of(pos, struct vma, link);
        uint64_t len = a->end - a->start;
        v->vsize += len;
        if (a->kind == VMA_IMAGE && (a->prot & PROT_EXEC)) {
            v->code_start = MIN(v->code_start, a->start);
            v->code_end = MAX(v->code_end, a->end);
            v->code_bytes += len;
        } else if (a->kind == VMA_STACK) {
            v->stack_bytes += len;
            v->stack_top = a->end;
        } else if ((a->prot & PROT_WRITE) && a->kind != VMA_DEVICE) {
            v->data_bytes += len;
        }
    }
    v->code_start = v->code_end ? v->code_start : 0;
    v->rss_pages = vm->pages;
    v->brk_start = vm->brk_start;
    v->brk = vm->brk;
    v->arg_start = vm->arg_start;
    v->arg_end = vm->arg_end;
    spin_unlock_irqrestore(&vm->lock, flags);
}

/* Times, state and identity of thread t, or of the whole process when t is NULL (proc_lock
 * held). */
static void view_times(struct view *v, const struct process *p, const struct task *t)
{
    uint64_t user, sys;
    if (t) {
        acct_task_read(t, &v->user, &v->sys);
        return;
    }
    v->user = p->dead_user_cycles;
    v->sys = p->dead_sys_cycles;
    list_for_each(pos, &p->threads) {
        acct_task_read(container_of(pos, struct task, thread_link), &user, &sys);
        v->user += user;
        v->sys += sys;
    }
}

static void view_signals(struct view *v, const struct process *p, const struct task *t)
{
    v->sig_shared = p->sig_pending;
    for (int sig = 1; sig <= ZT_NSIG; sig++) {
        uint64_t h = p->sigactions[sig - 1].handler;
        v->sig_ignored |= h == 1 ? SIGBIT(sig) : 0;
        v->sig_caught |= h > 1 ? SIGBIT(sig) : 0;
    }
    if (t) {
        v->sig_pending = t->sig_pending;
        v->sig_blocked = t->sig_blocked;
    }
}

/* The system call t sleeps in (proc_lock held).  Only a system call sleeps, and its user
 * registers stay in its frame until it returns; a wake-up between this look and the copy can
 * mix two calls' registers, as Linux's own reading can, which only a monitor cares about. */
static void view_syscall(struct view *v, const struct task *t)
{
    v->asleep = t && t->frame && __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == TASK_SLEEPING;
    if (v->asleep) {
        v->regs[0] = arch_frame_sysno(t->frame);
        for (unsigned i = 0; i < 6; i++) {
            v->regs[1 + i] = arch_frame_arg(t->frame, i);
        }
        v->regs[7] = arch_context_user_sp(&t->ctx, t->frame);
        v->regs[8] = arch_frame_pc(t->frame);
    }
}

/* Fill v for the process (or thread) ino names: 0 or -ESRCH. */
static int view_take(const struct inode *ino, struct view *v)
{
    memset(v, 0, sizeof(*v));
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(ino->synth_a);
    const struct task *t = 0, *main = 0;
    if (p) {
        list_for_each(pos, &p->threads) {
            const struct task *x = container_of(pos, struct task, thread_link);
            main = main ? main : x;
            t = x->tid == ino->synth_b ? x : t;
        }
    }
    if (!p || (ino->synth_b && !t)) {
        spin_unlock_irqrestore(&proc_lock, flags);
        return -ESRCH;
    }
    const struct task *shown = t ? t : main; /* a process is shown as its first thread */
    v->id = ino->synth_b ? ino->synth_b : ino->synth_a;
    v->pid = p->pid;
    v->tid = shown ? shown->tid : p->pid;
    v->ppid = p->parent ? p->parent->pid : 0;
    v->pgid = p->pgid;
    v->sid = p->sid;
    v->nthreads = (int)p->nthreads;
    v->exit_signal = p->exit_signal;
    v->umask = p->umask;
    v->start = p->start_cycles;
    v->cuser = p->child_user_cycles;
    v->csys = p->child_sys_cycles;
    v->fdsize = p->files ? FD_MAX : 0;
    v->cap_eff = CAP_ALL & ~p->cap_eff_dropped;
    v->cap_perm = CAP_ALL & ~p->cap_perm_dropped;
    v->cap_inh = p->cap_inheritable;
    kstrlcpy(v->comm, shown ? shown->name : p->name, sizeof(v->comm));
    v->state = shown && p->state == PROC_ALIVE ? task_state(shown) : 'Z';
    if (shown) {
        v->cpu = shown->cpu;
        v->policy = shown->sched_policy;
        v->rt_priority = shown->rt_priority;
        v->affinity = cpumask_load(&shown->affinity);
    }
    view_times(v, p, t);
    view_signals(v, p, shown);
    view_syscall(v, shown);
    v->has_vm = p->state == PROC_ALIVE && p->nthreads > 0 && p->vm;
    if (v->has_vm) {
        view_memory(v, p->vm);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return 0;
}

static uint64_t ticks(uint64_t cycles)
{
    return cycles_to_ns(cycles) / (NS_PER_SEC / USER_HZ);
}

/* ---- stat, statm ---- */

static int show_stat(const struct inode *ino, struct sbuf *b)
{
    struct view v;
    int r = view_take(ino, &v);
    if (r) {
        return r;
    }
    long prio = v.policy == 1 || v.policy == 2 ? -1 - (long)v.rt_priority : 20;
    uint64_t rss = v.has_vm ? v.rss_pages : 0;
    /* 1-13: identity, terminal (none), flags and page faults (none: nothing is demand paged) */
    sbuf_printf(b, "%d (%s) %c %d %d %d 0 -1 %u 0 0 0 0 ", v.id, v.comm, v.state, v.ppid, v.pgid,
                v.sid, 0x400040u /* PF_FORKNOEXEC-like flags Linux shows for user tasks */);
    /* 14-22: times, priority, nice, threads, itrealvalue, start time */
    sbuf_printf(b, "%lu %lu %lu %lu %ld 0 %d 0 %lu ", (unsigned long)ticks(v.user),
                (unsigned long)ticks(v.sys), (unsigned long)ticks(v.cuser),
                (unsigned long)ticks(v.csys), prio, v.nthreads, (unsigned long)ticks(v.start));
    /* 23-30: memory, code, stack; kernel stack pointer and pc (0, as Linux shows them) */
    sbuf_printf(b, "%lu %lu 18446744073709551615 %lu %lu %lu 0 0 ", (unsigned long)v.vsize,
                (unsigned long)rss, (unsigned long)v.code_start, (unsigned long)v.code_end,
                (unsigned long)v.stack_top);
    /* 31-37: signals (pending, blocked, ignored, caught), wchan, swap */
    sbuf_printf(b, "%lu %lu %lu %lu 0 0 0 ", (unsigned long)(v.sig_pending | v.sig_shared),
                (unsigned long)v.sig_blocked, (unsigned long)v.sig_ignored,
                (unsigned long)v.sig_caught);
    /* 38-44: exit signal, CPU, real-time priority, policy, block I/O and guest times */
    sbuf_printf(b, "%d %u %u %u 0 0 0 ", v.exit_signal, v.cpu, v.rt_priority, v.policy);
    /* 45-52: data, heap and argument addresses; environment (not kept); exit code */
    sbuf_printf(b, "0 0 %lu %lu %lu 0 0 0\n", (unsigned long)v.brk_start,
                (unsigned long)v.arg_start, (unsigned long)v.arg_end);
    return 0;
}

static int show_statm(const struct inode *ino, struct sbuf *b)
{
    struct view v;
    int r = view_take(ino, &v);
    if (r) {
        return r;
    }
    sbuf_printf(b, "%lu %lu 0 %lu 0 %lu 0\n", (unsigned long)(v.vsize / PAGE_SIZE),
                (unsigned long)v.rss_pages, (unsigned long)(v.code_bytes / PAGE_SIZE),
                (unsigned long)((v.data_bytes + v.stack_bytes) / PAGE_SIZE));
    return 0;
}

/* ---- status ---- */

static const char *state_name(char s)
{
    return s == 'R' ? "R (running)" : s == 'S' ? "S (sleeping)" : "Z (zombie)";
}

static void status_memory(struct sbuf *b, const struct view *v)
{
    unsigned long kb = (unsigned long)(v->vsize >> 10), rss = (unsigned long)(v->rss_pages * 4);
    sbuf_printf(b, "VmPeak:\t%8lu kB\nVmSize:\t%8lu kB\nVmLck:\t%8lu kB\nVmPin:\t%8lu kB\n", kb, kb,
                0ul, 0ul);
    sbuf_printf(b, "VmHWM:\t%8lu kB\nVmRSS:\t%8lu kB\nRssAnon:\t%8lu kB\n", rss, rss, rss);
    sbuf_printf(b, "RssFile:\t%8lu kB\nRssShmem:\t%8lu kB\n", 0ul, 0ul);
    sbuf_printf(b, "VmData:\t%8lu kB\nVmStk:\t%8lu kB\nVmExe:\t%8lu kB\n",
                (unsigned long)(v->data_bytes >> 10), (unsigned long)(v->stack_bytes >> 10),
                (unsigned long)(v->code_bytes >> 10));
    sbuf_printf(b, "VmLib:\t%8lu kB\nVmPTE:\t%8lu kB\nVmSwap:\t%8lu kB\n", 0ul,
                (unsigned long)((v->rss_pages / 512 + 1) * 4), 0ul);
    sbuf_printf(b, "HugetlbPages:\t%8lu kB\n", 0ul);
}

static int show_status(const struct inode *ino, struct sbuf *b)
{
    struct view v;
    int r = view_take(ino, &v);
    if (r) {
        return r;
    }
    sbuf_printf(b, "Name:\t%s\nUmask:\t0%u%u%u\nState:\t%s\n", v.comm, (v.umask >> 6) & 7,
                (v.umask >> 3) & 7, v.umask & 7, state_name(v.state)); /* %o: octal digits */
    sbuf_printf(b, "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n", v.pid, v.id,
                v.ppid);
    sbuf_printf(b, "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t%d\nGroups:\t \n", v.fdsize);
    sbuf_printf(b, "NStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n", v.pid, v.id, v.pgid,
                v.sid);
    if (v.has_vm) {
        status_memory(b, &v);
    }
    sbuf_printf(b, "CoreDumping:\t0\nTHP_enabled:\t0\nThreads:\t%d\nSigQ:\t0/%d\n", v.nthreads,
                ZT_NSIG);
    sbuf_printf(b, "SigPnd:\t%016lx\nShdPnd:\t%016lx\nSigBlk:\t%016lx\n",
                (unsigned long)v.sig_pending, (unsigned long)v.sig_shared,
                (unsigned long)v.sig_blocked);
    sbuf_printf(b, "SigIgn:\t%016lx\nSigCgt:\t%016lx\n", (unsigned long)v.sig_ignored,
                (unsigned long)v.sig_caught);
    sbuf_printf(b, "CapInh:\t%016lx\nCapPrm:\t%016lx\nCapEff:\t%016lx\n", (unsigned long)v.cap_inh,
                (unsigned long)v.cap_perm, (unsigned long)v.cap_eff);
    sbuf_printf(b, "CapBnd:\t%016lx\nCapAmb:\t0000000000000000\n", (unsigned long)CAP_ALL);
    sbuf_printf(b, "NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n"
                   "Speculation_Store_Bypass:\tunknown\n"
                   "SpeculationIndirectBranch:\tunknown\n");
    sbuf_printf(b, "Cpus_allowed:\t");
    sbuf_cpumask(b, v.affinity);
    char list[MAX_CPUS / 2];
    cpulist_format(v.affinity, list, sizeof(list));
    sbuf_printf(b, "\nCpus_allowed_list:\t%s\nMems_allowed:\t0001\nMems_allowed_list:\t0\n",
                cpumask_empty(v.affinity) ? "" : list);
    sbuf_printf(b, "voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n");
    return 0;
}

/* ---- maps ---- */

/* The name maps shows for a region. */
static const char *region_name(const struct vma *a, const char *exe)
{
    switch (a->kind) {
    case VMA_IMAGE:
        return exe;
    case VMA_STACK:
        return "[stack]";
    case VMA_HEAP:
        return "[heap]";
    case VMA_KERNEL:
        return a->start == ZT_SIGTRAMP_VA ? "[sigpage]" : "[zt_counters]";
    case VMA_DEVICE:
        return "[zt_device]";
    default:
        return "";
    }
}

static void maps_line(struct sbuf *b, const struct vma *a, const char *exe, uint64_t exe_ino,
                      unsigned exe_dev)
{
    char dev[8];
    ksnprintf(dev, sizeof(dev), "00:%02x", exe_dev);
    char line[128];
    bool file = a->kind == VMA_IMAGE && exe[0];
    int n = ksnprintf(line, sizeof(line), "%08lx-%08lx %c%c%c%c %08x %s %lu",
                      (unsigned long)a->start, (unsigned long)a->end,
                      (a->prot & PROT_READ) ? 'r' : '-', (a->prot & PROT_WRITE) ? 'w' : '-',
                      (a->prot & PROT_EXEC) ? 'x' : '-', a->kind == VMA_DEVICE ? 's' : 'p', 0,
                      file ? dev : "00:00", file ? (unsigned long)exe_ino : 0ul);
    const char *name = region_name(a, exe);
    sbuf_put(b, line, (size_t)n);
    for (; name[0] && n < 72; n++) {
        sbuf_put(b, " ", 1); /* names start in column 74, as Linux pads them */
    }
    sbuf_printf(b, " %s\n", name); /* a space even without a name, as Linux writes it */
}

static int show_maps(const struct inode *ino, struct sbuf *b)
{
    char exe[VFS_PATH_MAX] = "";
    uint64_t exe_ino = 0;
    unsigned exe_dev = 0;
    /* The program's path first, with no lock held but a reference (vfs_lock ranks before
     * proc_lock: lockrank.h); then the regions under proc_lock, the process looked up again. */
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(ino->synth_a);
    struct inode *prog = p ? p->exe : 0;
    if (prog) {
        inode_get(prog);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    if (prog && vfs_path_of(prog, exe, sizeof(exe)) > 0) {
        exe_ino = prog->ino;
        exe_dev = prog->dev;
    }
    if (prog) {
        inode_put(prog);
    }
    flags = spin_lock_irqsave(&proc_lock);
    p = proc_of_id_locked(ino->synth_a);
    if (!p) {
        spin_unlock_irqrestore(&proc_lock, flags);
        return -ESRCH;
    }
    if (p->state == PROC_ALIVE && p->nthreads > 0 && p->vm) { /* it stays meanwhile */
        spin_lock(&p->vm->lock);
        list_for_each(pos, &p->vm->vmas) {
            maps_line(b, container_of(pos, struct vma, link), exe, exe_ino, exe_dev);
        }
        spin_unlock(&p->vm->lock);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return 0;
}

/* ---- cmdline, comm ---- */

static int show_cmdline(const struct inode *ino, struct sbuf *b)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(ino->synth_a);
    if (p && p->state == PROC_ALIVE && p->nthreads > 0 && p->vm) { /* a zombie has none */
        char chunk[256];
        for (uint64_t at = p->vm->arg_start; at < p->vm->arg_end;) {
            size_t k = (size_t)MIN(sizeof(chunk), p->vm->arg_end - at);
            if (copy_from_user(p->vm, chunk, at, k)) {
                break; /* the program unmapped its own stack: what was read so far */
            }
            sbuf_put(b, chunk, k);
            at += k;
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return p ? 0 : -ESRCH;
}

static int show_comm(const struct inode *ino, struct sbuf *b)
{
    struct view v;
    int r = view_take(ino, &v);
    if (r == 0) {
        sbuf_printf(b, "%s\n", v.comm);
    }
    return r;
}

/* syscall: what a sleeping thread waits in (Linux's format: the number, the six arguments,
 * SP and PC in hex), "running" for one that runs or may run. */
static int show_syscall(const struct inode *ino, struct sbuf *b)
{
    struct view v;
    int r = view_take(ino, &v);
    if (r == 0 && !v.asleep) {
        sbuf_printf(b, "running\n");
    } else if (r == 0) {
        sbuf_printf(b, "%ld", (long)v.regs[0]);
        for (unsigned i = 1; i < 9; i++) {
            sbuf_printf(b, " 0x%lx", (unsigned long)v.regs[i]);
        }
        sbuf_printf(b, "\n");
    }
    return r;
}

const struct synth_ops procfs_stat_ops = {.show = show_stat};
const struct synth_ops procfs_syscall_ops = {.show = show_syscall};
const struct synth_ops procfs_statm_ops = {.show = show_statm};
const struct synth_ops procfs_status_ops = {.show = show_status};
const struct synth_ops procfs_maps_ops = {.show = show_maps};
const struct synth_ops procfs_cmdline_ops = {.show = show_cmdline};
const struct synth_ops procfs_comm_ops = {.show = show_comm};
