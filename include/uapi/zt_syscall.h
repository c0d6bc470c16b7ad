/* SPDX-License-Identifier: MIT */
/*
 * zt_syscall.h — the system-call ABI, shared by the kernel and user space.
 *
 * Calling convention (Linux/aarch64): number in x8, arguments in x0-x5, `svc #0` (the
 * immediate is ignored, as on Linux; the test programs use #0x5a5a and #0xa5a5 to mark
 * measurement windows in QEMU's log), result or -errno (zt_errno.h) in x0.
 * Calls that exist in Linux keep Linux's number and semantics (the subset documented with
 * each); zerotick's own calls are numbered from 1024 so they can never collide.
 *
 * Processes are made by fork (clone) + execve as on Linux, or by zerotick's spawn(): with
 * no copy-on-write and no demand paging (a dataplane task must never take a page fault it
 * did not ask for), fork copies the whole address space, which execve then throws away.
 * spawn builds the new address space directly from the ELF, inherits the descriptors
 * (close-on-exec ones left out), directory, group and session as fork+execve would, and can
 * place the new process on its CPUs from its first instruction.
 */
#ifndef ZT_UAPI_SYSCALL_H
#define ZT_UAPI_SYSCALL_H

/* ---- Linux calls (asm-generic numbers; what each supports: docs/linux-abi.md) ---- */
#define SYS_getcwd                 17
#define SYS_dup                    23
#define SYS_dup3                   24
#define SYS_fcntl                  25
#define SYS_ioctl                  29
#define SYS_mkdirat                34
#define SYS_unlinkat               35
#define SYS_symlinkat              36
#define SYS_renameat               38
#define SYS_statfs                 43
#define SYS_fstatfs                44
#define SYS_ftruncate              46
#define SYS_faccessat              48
#define SYS_chdir                  49
#define SYS_fchdir                 50
#define SYS_fchmod                 52
#define SYS_fchmodat               53
#define SYS_fchownat               54
#define SYS_fchown                 55
#define SYS_openat                 56
#define SYS_close                  57
#define SYS_pipe2                  59
#define SYS_getdents64             61
#define SYS_lseek                  62
#define SYS_read                   63
#define SYS_write                  64
#define SYS_readv                  65
#define SYS_writev                 66
#define SYS_pread64                67
#define SYS_pwrite64               68
#define SYS_pselect6               72
#define SYS_ppoll                  73
#define SYS_readlinkat             78
#define SYS_newfstatat             79
#define SYS_fstat                  80
#define SYS_fsync                  82
#define SYS_fdatasync              83
#define SYS_utimensat              88
#define SYS_capget                 90
#define SYS_capset                 91
#define SYS_exit                   93 /* this thread */
#define SYS_exit_group             94 /* every thread of the process */
#define SYS_set_tid_address        96
#define SYS_futex                  98 /* FUTEX_WAIT, FUTEX_WAKE (private or not: same) */
#define SYS_set_robust_list        99
#define SYS_nanosleep              101
#define SYS_getitimer              102
#define SYS_setitimer              103
#define SYS_timer_create           107
#define SYS_timer_gettime          108
#define SYS_timer_getoverrun       109
#define SYS_timer_settime          110
#define SYS_timer_delete           111
#define SYS_clock_gettime          113 /* every Linux clock id: zt_clock.h */
#define SYS_clock_getres           114
#define SYS_clock_nanosleep        115 /* relative or TIMER_ABSTIME; which clocks: zt_clock.h */
#define SYS_sched_setparam         118
#define SYS_sched_setscheduler     119
#define SYS_sched_getscheduler     120
#define SYS_sched_getparam         121
#define SYS_sched_setaffinity      122
#define SYS_sched_getaffinity      123
#define SYS_sched_yield            124
#define SYS_sched_get_priority_max 125
#define SYS_sched_get_priority_min 126
#define SYS_sched_rr_get_interval  127
#define SYS_kill                   129
#define SYS_tkill                  130
#define SYS_tgkill                 131
#define SYS_sigaltstack            132
#define SYS_rt_sigsuspend          133
#define SYS_rt_sigaction           134
#define SYS_rt_sigprocmask         135
#define SYS_rt_sigpending          136
#define SYS_rt_sigqueueinfo        138
#define SYS_rt_sigreturn           139
#define SYS_setgid                 144
#define SYS_setuid                 146
#define SYS_getresuid              148
#define SYS_getresgid              150
#define SYS_times                  153
#define SYS_setpgid                154
#define SYS_getpgid                155
#define SYS_getsid                 156
#define SYS_setsid                 157
#define SYS_getgroups              158
#define SYS_uname                  160
#define SYS_getrlimit              163
#define SYS_setrlimit              164
#define SYS_getrusage              165
#define SYS_umask                  166
#define SYS_prctl                  167 /* PR_SET_NAME, PR_GET_NAME, task isolation (zt_prctl.h) */
#define SYS_getcpu                 168
#define SYS_gettimeofday           169
#define SYS_getpid                 172
#define SYS_getppid                173
#define SYS_getuid                 174
#define SYS_geteuid                175
#define SYS_getgid                 176
#define SYS_getegid                177
#define SYS_gettid                 178
#define SYS_sysinfo                179
#define SYS_brk                    214
#define SYS_munmap                 215
#define SYS_clone                  220 /* threads, fork and vfork */
#define SYS_execve                 221
#define SYS_mmap                   222 /* anonymous or a file's (private copies, shared pages) */
#define SYS_mprotect               226
#define SYS_msync                  227
#define SYS_mlock                  228
#define SYS_munlock                229
#define SYS_mlockall               230
#define SYS_munlockall             231
#define SYS_madvise                233
#define SYS_mbind                  235
#define SYS_get_mempolicy          236
#define SYS_set_mempolicy          237
#define SYS_rt_tgsigqueueinfo      240
#define SYS_wait4                  260
#define SYS_prlimit64              261
#define SYS_renameat2              276
#define SYS_getrandom              278
#define SYS_membarrier             283
#define SYS_mlock2                 284
#define SYS_statx                  291
#define SYS_faccessat2             439

/* ---- zerotick calls ---- */
#define SYS_zt_spawn    1024 /* spawn(path, argv, attr, envp) -> pid (struct zt_spawn_attr) */
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
#define SYS_zt_hwnoise                                                                             \
    1034 /* zt_hwnoise(duration_us, threshold_us, struct zt_hwnoise *out, size): sample the        \
            counter in the kernel with IRQs masked on the caller's dataplane CPU (rtla             \
            hwnoise's measurement); 0 or -errno (kernel/sys/hwnoise.c) */
/* 1035-1036: zt_kcov, zt_irqsoff (the coverage and checked kernels' views): zt_debug.h */
/* 1037-1049: free for other zerotick calls. */
#define SYS_zt_partition                                                                           \
    1050 /* zt_partition(const char *cpulist, size_t len, op, flags): change the role of the       \
            CPUs in the list (ZT_PART_* below); 0 or -errno (docs/partition.md) */

/*
 * Per-CPU counters, readable from user space without a system call: every process has each
 * CPU's struct zt_cpu_counters mapped read-only at ZT_COUNTERS_VA + cpu * ZT_COUNTERS_STRIDE
 * (zt_counters_of below; 32 CPUs a page).  The kernel
 * updates them as things happen on that CPU (relaxed 64-bit stores: a reader sees each
 * value whole).  osnoise uses them to classify gaps; anything may read them.  A system call
 * moves one counter, `syscalls`, and nothing else (its whole cost is one increment): the
 * totals that include system calls are sums, zt_counters_sync() and zt_counters_from_user().
 */
#define ZT_COUNTERS_VA     0x0000007fe0000000ull
#define ZT_COUNTERS_STRIDE 128

/*
 * The signal-return page: every process has it mapped read-only and executable here.  It
 * holds `mov x8, #139; svc #0` (rt_sigreturn), where a handler installed without
 * SA_RESTORER returns to (glibc relies on the kernel for this, as on Linux's vDSO).
 */
#define ZT_SIGTRAMP_VA 0x0000007fdfff0000ull

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
#define CLONE_DETACHED       0x00400000 /* ignored, as on Linux (musl passes it) */
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

/* futex: the operations zerotick knows (Linux's numbers, include/uapi/linux/futex.h) */
#define FUTEX_WAIT             0
#define FUTEX_WAKE             1
#define FUTEX_REQUEUE          3
#define FUTEX_CMP_REQUEUE      4
#define FUTEX_WAIT_BITSET      9
#define FUTEX_WAKE_BITSET      10
#define FUTEX_PRIVATE_FLAG     128
#define FUTEX_CLOCK_REALTIME   256
#define FUTEX_BITSET_MATCH_ANY 0xffffffffu

/* wait4 */
#define WNOHANG     1
#define WUNTRACED   2
#define WCONTINUED  8
#define __WNOTHREAD 0x20000000
#define __WALL      0x40000000
#define __WCLONE    0x80000000

/* ioctl on the console */
#define TIOCGPGRP 0x540f
#define TIOCSPGRP 0x5410

#include "zt_events.h"

#ifndef __ASSEMBLY__
#include <stdint.h>

#include "zt_clock.h" /* the clock ids (CLOCK_*) and what each one reads */

/* The most CPUs zerotick supports (QEMU virt with GICv3 offers 512).  tools/percpu builds
 * the kernel's objects a second time with ZT_MAX_CPUS_BUILD set lower, to measure what each
 * CPU costs in static memory. */
#ifdef ZT_MAX_CPUS_BUILD
#define ZT_MAX_CPUS ZT_MAX_CPUS_BUILD
#else
#define ZT_MAX_CPUS 512
#endif
#define ZT_CPUSET_WORDS (ZT_MAX_CPUS / 64)

/* A set of CPUs: CPU N is bit N % 64 of bits[N / 64] (the layout of Linux's cpu_set_t, and
 * of the mask sched_setaffinity takes). */
struct zt_cpuset {
    uint64_t bits[ZT_CPUSET_WORDS];
};

struct zt_spawn_attr {
    struct zt_cpuset affinity; /* CPUs the new process's first thread may run on; empty = the
                                  default (the housekeeping CPUs) */
    uint32_t flags;            /* none defined yet: must be 0 */
    uint32_t reserved;
};

#define ZT_NAME_LEN 16

/* uname's sysname and release (also /proc/sys/kernel/ostype and osrelease, /proc/version). */
#define ZT_SYSNAME "zerotick"
#define ZT_RELEASE "0.1"

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
    struct zt_cpuset affinity;
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
    /* The last local timer interrupt: the deadline that was in the hardware and the counter
     * when the handler ran (its IRQ latency is the difference; timerlat reads both). */
    uint64_t timer_irq_deadline;
    uint64_t timer_irq_at;
    uint64_t reserved[2];
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

/* CPU `cpu`'s counters as every process sees them. */
static inline const volatile struct zt_cpu_counters *zt_counters_of(unsigned cpu)
{
    return (const volatile struct zt_cpu_counters *)(uintptr_t)(ZT_COUNTERS_VA +
                                                                cpu * ZT_COUNTERS_STRIDE);
}

/* zt_hwnoise's result: one sampling pass of duration_us with IRQs masked.  Every gap is
 * between two consecutive counter reads; a gap over the threshold is a noise sample, counted
 * by whole microseconds in us[] (us[ZT_HWNOISE_BUCKETS]: that long or longer). */
#define ZT_HWNOISE_MAX_US  100000 /* one call masks IRQs for at most 100 ms */
#define ZT_HWNOISE_BUCKETS 512
struct zt_hwnoise {
    uint64_t start, end; /* counter at the first and the last read */
    uint64_t samples;    /* reads after the first (gaps) */
    uint64_t count;      /* gaps over the threshold */
    uint64_t noise;      /* their total length, counter cycles */
    uint64_t max_gap;    /* the longest gap, counter cycles */
    uint32_t us[ZT_HWNOISE_BUCKETS + 1];
    uint32_t pad;
};

struct zt_trace_event {
    uint64_t ts; /* counter value (CNTVCT) */
    uint32_t cpu;
    uint32_t type; /* enum zt_trace_type (zt_events.h) */
    uint64_t a, b;
};

#define ZT_TRACE_CLEAR 1

/* zt_partition: what to do with each CPU of the list (op), and how (flags). */
#define ZT_PART_HOUSEKEEPING 1 /* an online CPU becomes housekeeping */
#define ZT_PART_DATAPLANE    2 /* an online CPU becomes dataplane */
#define ZT_PART_OFFLINE      3 /* an online CPU is powered off (PSCI CPU_OFF) */
#define ZT_PART_ONLINE                                                                             \
    4 /* an offline CPU is started again (PSCI CPU_ON), as housekeeping                            \
         unless ZT_PART_AS_DATAPLANE */
#define ZT_PART_REFUSE_ISOLATED 0x1 /* -EBUSY instead of ending an isolated task's isolation */
#define ZT_PART_QUIET           0x2 /* no "partition:" line on the console */
#define ZT_PART_AS_DATAPLANE    0x4 /* with ZT_PART_ONLINE: join as a dataplane CPU */
#define ZT_PART_FLAGS           0x7 /* every flag defined; others are -EINVAL */
#define ZT_PART_LIST_MAX                                                                           \
    1536 /* longest CPU list text accepted (bytes): any set of 512 CPUs fits (the longest,         \
            two CPUs of every three, is 1293 characters) */

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
