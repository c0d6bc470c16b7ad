/*
 * zt_syscall.h — the system-call ABI, shared by the kernel and user space.
 *
 * Calling convention (Linux/aarch64): number in x8, arguments in x0-x5, `svc #0` (the
 * immediate is ignored, as on Linux; the test programs use #0x5a5a and #0xa5a5 to mark
 * measurement windows in QEMU's log), result or -errno (zt_errno.h) in x0.
 * Calls that exist in Linux keep Linux's number and semantics (the subset documented with
 * each); zerotick's own calls are numbered from 1024 so they can never collide.
 *
 * Process creation is spawn(), not fork+execve: with no copy-on-write and no demand
 * paging (a dataplane task must never take a page fault it did not ask for), fork would
 * copy the whole address space only for execve to throw it away.  spawn builds the new
 * address space directly from the ELF and can place the new process on its CPUs from its
 * first instruction.  clone() exists only for threads (CLONE_VM | CLONE_THREAD).
 */
#ifndef ZT_UAPI_SYSCALL_H
#define ZT_UAPI_SYSCALL_H

/* ---- Linux calls (asm-generic numbers) ---- */
#define SYS_ioctl           29 /* only TIOCSPGRP/TIOCGPGRP on fd 0: the foreground pid */
#define SYS_read            63 /* fd 0: console bytes, blocks until at least one */
#define SYS_write           64 /* fd 1, 2: console */
#define SYS_exit            93 /* this thread */
#define SYS_exit_group      94 /* every thread of the process */
#define SYS_set_tid_address 96
#define SYS_futex           98 /* FUTEX_WAIT, FUTEX_WAKE (private or not: same) */
#define SYS_nanosleep       101
#define SYS_clock_gettime                                                                          \
    113                           /* MONOTONIC, REALTIME (= monotonic since boot),                 \
                                     PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID */
#define SYS_clock_nanosleep   115 /* relative, or TIMER_ABSTIME on MONOTONIC */
#define SYS_sched_setaffinity 122
#define SYS_sched_getaffinity 123
#define SYS_sched_yield       124
#define SYS_kill              129
#define SYS_tgkill            131
#define SYS_rt_sigaction      134 /* handler, SA_RESTORER/SA_SIGINFO/SA_RESETHAND subset */
#define SYS_rt_sigprocmask    135
#define SYS_rt_sigreturn      139
#define SYS_uname             160
#define SYS_prctl             167 /* PR_SET_NAME, PR_GET_NAME, task isolation (zt_prctl.h) */
#define SYS_getcpu            168
#define SYS_getpid            172
#define SYS_getppid           173
#define SYS_gettid            178
#define SYS_brk               214
#define SYS_munmap            215
#define SYS_clone             220 /* threads only: flags must include CLONE_VM|CLONE_THREAD */
#define SYS_mmap              222 /* MAP_PRIVATE|MAP_ANONYMOUS (fd -1), populated at once */
#define SYS_wait4             260 /* pid > 0 or -1; WNOHANG; Linux status encoding */

/* ---- zerotick calls ---- */
#define SYS_zt_spawn    1024 /* spawn(path, argv, attr) -> pid (see struct zt_spawn_attr) */
#define SYS_zt_tasks    1025 /* zt_tasks(struct zt_task_info *buf, n) -> tasks in total */
#define SYS_zt_cpus     1026 /* zt_cpus(struct zt_cpu_info *buf, n) -> CPUs in total */
#define SYS_zt_poweroff 1027 /* zt_poweroff(status): power the machine off */
#define SYS_zt_meminfo  1028 /* zt_meminfo(struct zt_meminfo *) */
#define SYS_zt_isolstat 1029 /* zt_isolstat(cpu, struct zt_isol_audit *): what can reach cpu */
#define SYS_zt_trace                                                                               \
    1030 /* zt_trace(cpu, struct zt_trace_event *buf, n, flags): copy the                          \
            oldest min(n, 128) events of cpu's trace ring; returns how                             \
            many; with ZT_TRACE_CLEAR they are consumed, so calling until                          \
            0 drains the ring; -ENODATA when the kernel was booted                                 \
            without trace=1 */
/* 1031-1033: zt_devices, zt_claim, zt_release (devices for user-space drivers): zt_device.h */

/*
 * Per-CPU counters, readable from user space without a system call: every process has each
 * CPU's struct zt_cpu_counters mapped read-only at ZT_COUNTERS_VA + cpu * 4096.  The kernel
 * updates them as things happen on that CPU (relaxed 64-bit stores: a reader sees each
 * value whole).  osnoise uses them to classify gaps; anything may read them.  A system call
 * moves one counter, `syscalls`, and nothing else (its whole cost is one increment): the
 * totals that include system calls are sums, zt_counters_sync() and zt_counters_from_user().
 */
#define ZT_COUNTERS_VA 0x0000007fe0000000ull

/* Signals (Linux numbers). */
#define SIGHUP  1
#define SIGINT  2
#define SIGQUIT 3
#define SIGILL  4
#define SIGTRAP 5
#define SIGABRT 6
#define SIGBUS  7
#define SIGFPE  8
#define SIGKILL 9
#define SIGUSR1 10
#define SIGSEGV 11
#define SIGUSR2 12
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGCHLD 17
#define ZT_NSIG 64

/* clone flags (Linux values) */
#define CLONE_VM             0x00000100
#define CLONE_FS             0x00000200
#define CLONE_FILES          0x00000400
#define CLONE_SIGHAND        0x00000800
#define CLONE_THREAD         0x00010000
#define CLONE_SYSVSEM        0x00040000
#define CLONE_SETTLS         0x00080000
#define CLONE_PARENT_SETTID  0x00100000
#define CLONE_CHILD_CLEARTID 0x00200000
#define CLONE_CHILD_SETTID   0x01000000

/* mmap */
#define PROT_NONE     0
#define PROT_READ     1
#define PROT_WRITE    2
#define PROT_EXEC     4
#define MAP_SHARED    0x01
#define MAP_PRIVATE   0x02
#define MAP_FIXED     0x10
#define MAP_ANONYMOUS 0x20
#define MAP_FAILED    ((void *)-1)

/* futex */
#define FUTEX_WAIT         0
#define FUTEX_WAKE         1
#define FUTEX_PRIVATE_FLAG 128

/* wait4 */
#define WNOHANG 1

/* clocks */
#define CLOCK_REALTIME           0
#define CLOCK_MONOTONIC          1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID  3
#define TIMER_ABSTIME            1

/* ioctl on the console */
#define TIOCGPGRP 0x540f
#define TIOCSPGRP 0x5410

#include "zt_events.h"

#ifndef __ASSEMBLY__
#include <stdint.h>

struct zt_spawn_attr {
    uint64_t affinity; /* CPUs the new process's first thread may run on; 0 = the default
                          (the housekeeping CPUs) */
    uint32_t flags;    /* none defined yet: must be 0 */
    uint32_t reserved;
};

#define ZT_NAME_LEN 16

/* One thread, as `ps` shows it. */
struct zt_task_info {
    int32_t pid; /* process id */
    int32_t tid; /* thread id (== pid for the main thread) */
    int32_t ppid;
    int32_t cpu;      /* CPU it runs on or last ran on */
    char state;       /* 'R' running, 'r' runnable (waiting for its CPU), 'S' sleeping,
                         'Z' exited, not yet reaped */
    uint8_t isolated; /* task isolation mode (0 = off; zt_prctl.h flags) */
    uint8_t pad[2];
    char name[ZT_NAME_LEN];
    uint64_t affinity;
    uint64_t user_ns;    /* time in user space */
    uint64_t sys_ns;     /* time in the kernel on its behalf */
    uint32_t vm_regions; /* regions (mappings) of its address space */
    uint32_t pad2;
    uint64_t vm_pages; /* pages mapped in its address space (all populated) */
};

/* One CPU, as `cpus` shows it.  Read from kernel counters without disturbing that CPU. */
struct zt_cpu_info {
    uint32_t cpu;
    uint8_t online;
    uint8_t dataplane;
    uint8_t pad[2];
    int32_t cur_pid; /* running task's process, 0 when idle or a kernel thread runs */
    int32_t cur_tid; /* running task, 0 when idle */
    char cur_name[ZT_NAME_LEN];
    uint32_t nr_running; /* runnable tasks on its run queue, the running one included */
    uint32_t pad2;
    uint64_t exc_sync; /* exceptions taken, by kind, from EL0 and EL1 together */
    uint64_t exc_irq;
    uint64_t exc_fiq;
    uint64_t exc_serror;
    uint64_t syscalls;  /* SVCs from EL0 */
    uint64_t irq_timer; /* interrupts by source */
    uint64_t irq_ipi;
    uint64_t irq_uart;
    uint64_t irq_other;
    uint64_t ctx_switches;
    uint64_t timer_arms;
    uint64_t timer_disarms;
    uint64_t user_ns; /* time in user space, in the kernel, idle */
    uint64_t sys_ns;
    uint64_t idle_ns;
    uint64_t exc_per_s; /* exceptions taken during the last full second (sampled on
                           housekeeping) */
};

struct zt_meminfo {
    uint64_t page_size;
    uint64_t total_pages;
    uint64_t free_pages;
    uint64_t kstacks_used; /* kernel stacks in use: tasks alive or not yet freed */
};

struct zt_cpu_counters {
    uint64_t sync_other; /* synchronous exceptions taken (from EL0 and EL1), system calls not
                            included */
    uint64_t exc_irq;    /* IRQ exceptions taken */
    uint64_t exc_fiq;
    uint64_t exc_serror;
    uint64_t user_other;   /* exceptions taken from user space (EL0) other than system calls:
                              every interruption and fault of user code */
    uint64_t syscalls;     /* SVCs from user space */
    uint64_t faults;       /* other synchronous exceptions from user space */
    uint64_t irq_timer;    /* acknowledged interrupts: the local timer */
    uint64_t irq_ipi;      /* SGIs (IPIs) */
    uint64_t irq_device;   /* SPIs and other PPIs */
    uint64_t ctx_switches; /* context switches on this CPU */
    uint64_t timer_arms;   /* local timer programmed */
    uint64_t reserved[4];
};

/* Synchronous exceptions taken, system calls included. */
static inline uint64_t zt_counters_sync(const volatile struct zt_cpu_counters *c)
{
    return c->sync_other + c->syscalls;
}

/* Exceptions taken from user space, system calls included. */
static inline uint64_t zt_counters_from_user(const volatile struct zt_cpu_counters *c)
{
    return c->user_other + c->syscalls;
}

/* Every exception taken. */
static inline uint64_t zt_counters_exceptions(const volatile struct zt_cpu_counters *c)
{
    return zt_counters_sync(c) + c->exc_irq + c->exc_fiq + c->exc_serror;
}

struct zt_trace_event {
    uint64_t ts; /* counter value (CNTVCT) */
    uint32_t cpu;
    uint32_t type; /* enum zt_trace_type (zt_events.h) */
    uint64_t a, b;
};

#define ZT_TRACE_CLEAR 1

#define ZT_AUDIT_MAX_TIMERS 8
#define ZT_AUDIT_MAX_SPIS   32

/* Everything that could still interrupt a CPU, read from its state without disturbing it. */
struct zt_isol_audit {
    uint32_t cpu;
    uint8_t dataplane;
    uint8_t isolated; /* an isolated task owns the CPU */
    uint8_t strict;
    uint8_t in_user;  /* that task is in user space right now */
    int32_t pid, tid; /* the isolated task */
    char name[ZT_NAME_LEN];
    uint64_t isolated_ns;   /* how long it has been isolated */
    uint64_t interruptions; /* kernel entries it did not ask for, since isolation began */
    uint32_t sgis_enabled;  /* bit n: SGI n enabled (IPIs) */
    uint32_t ppis_enabled;  /* bit n: PPI INTID 16+n enabled */
    uint32_t timer_intid;   /* the local timer's PPI */
    uint32_t nspis;         /* SPIs routed to this CPU (device interrupts) */
    uint16_t spis[ZT_AUDIT_MAX_SPIS];
    uint64_t timer_programmed_ns; /* local timer: ns from now until it fires, 0 = disarmed */
    uint32_t timer_armed;         /* 1 if the local timer is armed */
    uint32_t ntimers;             /* timers queued on the CPU (first ZT_AUDIT_MAX_TIMERS below) */
    struct {
        uint64_t due_ns;   /* ns from now */
        int32_t owner_tid; /* who armed it (0: the kernel) */
        uint32_t pad;
        uint64_t armed_by; /* kernel address of the code that armed it */
    } timers[ZT_AUDIT_MAX_TIMERS];
    uint64_t pending_calls;  /* cross-CPU requests deferred until its next kernel entry */
    uint64_t deferred_total; /* requests deferred instead of sent as IPIs, since boot */
    uint32_t other_runnable; /* runnable tasks besides the isolated one */
    uint32_t cached_pages;   /* free pages parked in its per-CPU cache */
};
#endif

#endif
