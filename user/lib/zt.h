/* SPDX-License-Identifier: MIT */
/*
 * zt.h — the user-space API of zerotick: raw system calls, one wrapper per call of
 * include/uapi/zt_syscall.h, process spawn/wait, threads, and time read straight from the
 * generic timer.
 *
 * Two families of calls:
 *   - zt_*():  return the kernel's answer unchanged: >= 0 on success, -E... (Linux numbers,
 *              uapi/zt_errno.h) on failure.  errno is never touched.  This is what the test
 *              programs use, because they check exact error codes.
 *   - POSIX-style read/write/getpid/mmap/...: return -1 and set errno on failure, for code
 *              written against the usual prototypes (and for picolibc itself).
 *
 * Numbering: picolibc numbers a few errno values, signals and clock ids differently from
 * Linux.  On zerotick the kernel's (Linux) numbers are the only ones that mean anything, so
 * this header includes picolibc's <errno.h>, <signal.h> and <time.h> first, drops their
 * conflicting definitions, and takes the uapi ones.  Include zt.h before any libc header that
 * defines errno values, signals or clocks.  errno set by the wrappers below holds Linux values
 * too (strerror() of the few values picolibc numbers differently prints the wrong text).
 *
 * Threads: every thread has its own TLS block (picolibc's errno and the stdio line buffers
 * live there); zt_thread_create() sets one up.  Nothing here takes a lock; the stdio line
 * buffers are per thread, so lines from different threads never interleave mid-line.
 */
#ifndef ZT_USER_ZT_H
#define ZT_USER_ZT_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* picolibc's numbers that differ from Linux: the uapi headers below define the Linux ones. */
#undef ENAMETOOLONG
#undef ENOSYS
#undef ETIMEDOUT
#undef ENOTEMPTY
#undef ELOOP
#undef EOVERFLOW
#undef EALREADY
#undef SIGBUS
#undef SIGUSR1
#undef SIGUSR2
#undef SIGCHLD
#undef SIGCLD
#undef SIGCONT
#undef SIGEMT
#undef SIGIO
#undef SIGLOST
#undef SIGPOLL
#undef SIGSTOP
#undef SIGSYS
#undef SIGTSTP
#undef SIGURG
#undef CLOCK_REALTIME
#undef CLOCK_MONOTONIC
#undef CLOCK_PROCESS_CPUTIME_ID
#undef CLOCK_THREAD_CPUTIME_ID
#undef CLOCK_MONOTONIC_RAW
#undef CLOCK_REALTIME_COARSE
#undef CLOCK_MONOTONIC_COARSE
#undef CLOCK_BOOTTIME
#undef TIMER_ABSTIME

#include "uapi/zt_debug.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_prctl.h"
#include "uapi/zt_syscall.h"

/* Linux signal numbers the uapi header does not list (picolibc's differ). */
#define SIGSTKFLT 16
#define SIGCONT   18
#define SIGSTOP   19
#define SIGTSTP   20
#define SIGURG    23
#define SIGIO     29
#define SIGPWR    30
#define SIGSYS    31

/*
 * Signal handlers: rt_sigaction with the Linux/aarch64 kernel layout (sigsetsize 8).  The
 * uapi header names the supported flags but does not define them yet; these are Linux's
 * values, prefixed so they cannot clash with picolibc's own SA_* numbering.
 */
#define ZT_SA_SIGINFO   0x00000004ul
#define ZT_SA_RESTORER  0x04000000ul
#define ZT_SA_NODEFER   0x40000000ul
#define ZT_SA_RESETHAND 0x80000000ul
#define ZT_SIG_BLOCK    0
#define ZT_SIG_UNBLOCK  1
#define ZT_SIG_SETMASK  2
#define ZT_SIGBIT(sig)  (1ull << ((sig)-1))

struct zt_sigaction {
    void (*handler)(int sig); /* or SIG_DFL (0) / SIG_IGN (1) */
    unsigned long flags;
    void (*restorer)(void); /* returns from the handler: rt_sigreturn */
    uint64_t mask;          /* signals blocked while the handler runs */
};

/* ---- raw calls (syscall.S) ---- */

/* svc #0 with number n and six arguments; returns x0 (a result or -errno). */
long zt_syscall6(long n, long a0, long a1, long a2, long a3, long a4, long a5);
/* The same call issued with `svc #0x5a5a` / `svc #0xa5a5`: QEMU's exception log shows the
 * immediate, so tools/exclog can cut a measurement window between the two.  The kernel
 * ignores the immediate: the call does what number n does. */
long zt_syscall6_mark_open(long n, long a0, long a1, long a2, long a3, long a4, long a5);
long zt_syscall6_mark_close(long n, long a0, long a1, long a2, long a3, long a4, long a5);

#define zt_syscall0(n)          zt_syscall6((n), 0, 0, 0, 0, 0, 0)
#define zt_syscall1(n, a)       zt_syscall6((n), (long)(a), 0, 0, 0, 0, 0)
#define zt_syscall2(n, a, b)    zt_syscall6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define zt_syscall3(n, a, b, c) zt_syscall6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define zt_syscall4(n, a, b, c, d)                                                                 \
    zt_syscall6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* Open / close a measurement window on this CPU (a getpid with the marker immediate). */
static inline void zt_window_open(void)
{
    zt_syscall6_mark_open(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

static inline void zt_window_close(void)
{
    zt_syscall6_mark_close(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

/* ---- one wrapper per call: >= 0 or -errno ---- */
long zt_ioctl(int fd, unsigned long req, void *arg);
long zt_read(int fd, void *buf, size_t n);
long zt_write(int fd, const void *buf, size_t n);
__attribute__((noreturn)) void zt_exit(int status);       /* this thread only */
__attribute__((noreturn)) void zt_exit_group(int status); /* the whole process, no flush */
long zt_set_tid_address(int *tidptr);
long zt_futex(int *uaddr, int op, int val, const struct timespec *timeout);
long zt_futex_wait(int *uaddr, int expected, const struct timespec *timeout);
long zt_futex_wake(int *uaddr, int count);
long zt_nanosleep(const struct timespec *req, struct timespec *rem);
long zt_clock_gettime(int clock, struct timespec *ts);
long zt_clock_nanosleep(int clock, int flags, const struct timespec *req, struct timespec *rem);
long zt_sched_setaffinity(int tid, size_t size, const uint64_t *mask);
long zt_sched_getaffinity(int tid, size_t size, uint64_t *mask);
long zt_sched_yield(void);
long zt_kill(int pid, int sig);
long zt_tgkill(int tgid, int tid, int sig);
long zt_rt_sigaction(int sig, const void *act, void *oldact, size_t sigsetsize);
long zt_rt_sigprocmask(int how, const void *set, void *oldset, size_t sigsetsize);
long zt_uname(void *buf);
long zt_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
long zt_getcpu(unsigned *cpu, unsigned *node);
long zt_getpid(void);
long zt_getppid(void);
long zt_gettid(void);
long zt_brk(void *addr); /* Linux semantics: returns the break after the call */
long zt_munmap(void *addr, size_t len);
long zt_mmap(void *addr, size_t len, int prot, int flags, int fd, long off); /* address or -E */
long zt_wait4(int pid, int *status, int options, void *rusage);
long zt_spawn_attr(const char *path, char *const argv[], const struct zt_spawn_attr *attr);
long zt_tasks(struct zt_task_info *buf, size_t n);
long zt_cpus(struct zt_cpu_info *buf, size_t n);
long zt_poweroff(int status);
long zt_meminfo(struct zt_meminfo *mi);
/* The isolation audit of `cpu` (what can reach it) into *out: 0 or -errno (-EINVAL: no such
 * CPU, or offline; -EFAULT: out is not writable memory of this process). */
long zt_isolstat(unsigned cpu, struct zt_isol_audit *out);
/* Change the role of the CPUs in `cpulist` (op: ZT_PART_*; 0 or -errno). */
long zt_partition(const char *cpulist, unsigned op, unsigned flags);
/* Sample the counter with IRQs masked for duration_us (at most ZT_HWNOISE_MAX_US) on this
 * dataplane CPU; 0 or -errno (-EPERM on housekeeping, -ENOSYS under Linux). */
long zt_hwnoise(uint64_t duration_us, uint64_t threshold_us, struct zt_hwnoise *out);
/* The irqs-off check's record of `cpu` (uapi/zt_debug.h); -ENODEV on a release kernel. */
long zt_irqsoff(unsigned cpu, struct zt_irqsoff *out, unsigned flags);
/* Coverage (uapi/zt_debug.h): zt_kcov(ZT_KCOV_*, arg, size); -ENODEV without coverage. */
long zt_kcov(unsigned op, void *arg, size_t size);

/* Print every CPU's irqs-off record (irqsoff.c):
 *   irqsoff: cpu C ROLE spans N longest U.UUU us start 0xPC end 0xPC bt 0xPC ...
 *   irqsoff: cpu C hist <1us:N 1us:N 2us:N 4us:N ... 16384us:N
 *   irqsoff: cpu C place I longest U.UUU us count N start 0xPC end 0xPC   (longest first)
 * and, where zt_hwnoise windows were kept apart, `irqsoff: cpu C hwnoise windows N longest
 * U.UUU us`.  flags ZT_IRQSOFF_RESET starts new records.  Returns the longest span of the
 * housekeeping CPUs in ns, or -errno (-ENODEV: a release kernel, nothing printed). */
long zt_irqsoff_print(unsigned flags);
/* Start new irqs-off records on every CPU; 0 or -errno (-ENODEV: a release kernel). */
long zt_irqsoff_reset(void);

/* ---- conveniences ---- */

/* Install handler for sig (with SA_RESTORER and our rt_sigreturn trampoline added). */
long zt_signal(int sig, void (*handler)(int), unsigned long flags);
/* The trampoline a handler returns into: calls rt_sigreturn (syscall.S). */
void zt_sigreturn_trampoline(void);

/* Start path with argv (NULL-terminated) on the CPUs of affinity (0 = the default set).
 * The 64-bit forms below name CPUs 0-63 only; the zt_cpuset forms name any CPU. */
long zt_spawn(const char *path, char *const argv[], uint64_t affinity);
/* The same on the CPUs of `set` (NULL or empty: the default set). */
long zt_spawn_on(const char *path, char *const argv[], const struct zt_cpuset *set);
/* Wait for pid (-1: any child); retries on -EINTR.  Returns the pid reaped or -errno. */
long zt_wait(int pid, int *status);
long zt_set_affinity(uint64_t mask);             /* the calling thread, CPUs 0-63 */
long zt_get_affinity(uint64_t *mask);            /* its CPUs among 0-63 */
long zt_set_cpuset(const struct zt_cpuset *set); /* the calling thread, any CPUs */
long zt_get_cpuset(struct zt_cpuset *set);
long zt_pin(int cpu); /* the calling thread to one CPU (any number) */

/* ---- CPU sets (cpuset.c) ---- */

static inline void zt_cpuset_zero(struct zt_cpuset *s)
{
    for (int i = 0; i < ZT_CPUSET_WORDS; i++) {
        s->bits[i] = 0;
    }
}

static inline void zt_cpuset_add(struct zt_cpuset *s, int cpu)
{
    if (cpu >= 0 && cpu < ZT_MAX_CPUS) {
        s->bits[cpu / 64] |= 1ull << (cpu % 64);
    }
}

static inline bool zt_cpuset_has(const struct zt_cpuset *s, int cpu)
{
    return cpu >= 0 && cpu < ZT_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64) & 1);
}

/* CPUs in the set. */
int zt_cpuset_count(const struct zt_cpuset *s);
/* ---- the CPUs as `cpus` shows them (cpuview.c) ---- */

/* Above this many CPUs, `cpus` shows a summary unless asked for CPUs by -c or -a. */
#define ZT_CPUS_SUMMARY_ABOVE 16
/* Every CPU's zt_cpu_info in a calloc'd array (free it); *n their number, or -errno and NULL. */
struct zt_cpu_info *zt_cpus_all(long *n);
/* One CPU as a paragraph: role, task, exceptions, interrupts, switches, time. */
void zt_cpus_print_one(const struct zt_cpu_info *c);
/* One line per run of consecutive CPUs in the same role and state (idle or not), with the
 * run's totals and the highest rate of exceptions in the last second. */
void zt_cpus_print_summary(const struct zt_cpu_info *cpus, long n);
/* The shell's `cpus [-s | -a | -c LIST]`: its exit status. */
int zt_cpus_command(int argc, char *const argv[]);
/* Parse a Linux cpulist ("0-3,7", "0-15:2/4", "none") into *s.  0, -EINVAL (malformed) or
 * -ERANGE (a CPU >= ZT_MAX_CPUS); *s is untouched on error. */
int zt_cpulist_parse(const char *text, struct zt_cpuset *s);
/* A cpulist for a meter that runs a thread per CPU (osnoise, timerlat): parsed as above, at
 * most max CPUs, every one of them in this machine.  false on any other list. */
bool zt_cpulist_parse_machine(const char *text, struct zt_cpuset *s, int max);
/* The options of a meter (osnoise, timerlat): -c LIST into *cpus (zt_cpulist_parse_machine
 * with max_cpus), -t SECONDS into *seconds (more than 0, at most 3600), and its one numeric
 * option (any other letter) into *num, a whole number in lo..hi (num_bad says what is wrong
 * with one that is not). */
struct zt_meter_opts {
    struct zt_cpuset *cpus;
    int max_cpus;
    double *seconds;
    unsigned long *num, lo, hi;
    const char *num_bad;
};
/* Store the value v of option -opt: NULL when it is good, else the complaint for usage(). */
const char *zt_meter_option(const struct zt_meter_opts *o, char opt, const char *v);
/* Write *s as a cpulist ("none" when empty), like snprintf: the length the whole text
 * needs, so a return >= size means it was cut. */
int zt_cpulist_format(const struct zt_cpuset *s, char *buf, size_t size);
int zt_cpu(void);     /* the CPU this thread runs on (getcpu), or -errno */
int zt_nr_cpus(void); /* CPUs in the machine (zt_cpus), at least 1 */
void zt_sleep_ns(uint64_t ns);

/* Linux wait status: low 7 bits = terminating signal (0: exited), bits 8-15 = exit code. */
static inline bool zt_wifexited(int status)
{
    return (status & 0x7f) == 0;
}

static inline int zt_wexitstatus(int status)
{
    return (status >> 8) & 0xff;
}

static inline bool zt_wifsignaled(int status)
{
    return (status & 0x7f) != 0 && (status & 0x7f) != 0x7f;
}

static inline int zt_wtermsig(int status)
{
    return status & 0x7f;
}

/* The status a shell reports: the exit code, or 128 + signal. */
static inline int zt_status_code(int status)
{
    return zt_wifsignaled(status) ? 128 + zt_wtermsig(status) : zt_wexitstatus(status);
}

/* "SIGSEGV" etc., or "SIG?" for numbers without a name. */
const char *zt_signal_name(int sig);
/* "EFAULT" etc. for a positive Linux errno value, or "E?". */
const char *zt_errno_name(int err);

/* ---- time, read from EL0 without entering the kernel ---- */
static inline uint64_t zt_counter(void)
{
    uint64_t v;
    /* isb: the read must not be hoisted above earlier instructions (ARM ARM D11.2.2). */
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
}

static inline uint64_t zt_counter_freq(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
}

/* Counter cycles to ns without 64-bit overflow for any uptime. */
static inline uint64_t zt_counter_to_ns(uint64_t cycles)
{
    uint64_t freq = zt_counter_freq();
    return cycles / freq * 1000000000ull + cycles % freq * 1000000000ull / freq;
}

static inline uint64_t zt_now_ns(void)
{
    return zt_counter_to_ns(zt_counter());
}

/* ---- the same program under Linux (linux.c; make compare runs it there) ---- */

/* Is the kernel under this program Linux (uname says so)?  Asked once, then cached. */
bool zt_on_linux(void);
/* The kernel's release string (uname -r), e.g. "6.1.0-57-arm64" or zerotick's version. */
const char *zt_kernel_release(void);
/* CPU cpu's public counter page (ZT_COUNTERS_VA), or NULL under Linux (there is none). */
const volatile struct zt_cpu_counters *zt_counters_page(int cpu);
/* May EL0 read the PMU's event counter 0 (INST_RETIRED)?  Not under Linux (it traps). */
bool zt_have_el0_pmu(void);
/* The CPU count under Linux: sysfs's possible list, else the affinity mask. */
int zt_linux_nr_cpus(void);
/* vfork + execve, as Linux's posix_spawn: the child sets its affinity (0: leave it) and
 * execs path.  Works under both kernels; returns the child's pid or -errno (127 is the
 * child's exit status when execve failed). */
long zt_vfork_exec(const char *path, char *const argv[], uint64_t affinity);
/* The counter (CNTVCT_EL0) read by the very first instruction of this process (crt0). */
extern uint64_t zt_start_counter;

/* ---- threads (thread.c) ---- */
typedef struct zt_thread zt_thread_t;

/*
 * Start fn(arg) in a new thread of this process, pinned to cpu (or left on the default CPUs
 * when cpu < 0).  When this returns the thread is already on its CPU.  Returns NULL and
 * sets errno (Linux value) on failure: ENOMEM, EINVAL (cpu not usable), or what clone said.
 */
zt_thread_t *zt_thread_create(long (*fn)(void *arg), void *arg, int cpu);
/* Wait for the thread to end, free its stack and TLS, and return fn's result. */
long zt_thread_join(zt_thread_t *t);
int zt_thread_tid(const zt_thread_t *t);

/* ---- POSIX-style calls picolibc does not declare (errno set on failure) ---- */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int munmap(void *addr, size_t len);
int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
pid_t gettid(void);
pid_t wait4(pid_t pid, int *status, int options, void *rusage);
pid_t waitpid(pid_t pid, int *status, int options);
int sched_setaffinity(pid_t tid, size_t size, const void *mask);
int sched_getaffinity(pid_t tid, size_t size, void *mask);
int getcpu(unsigned *cpu, unsigned *node);
int brk(void *addr);

/* ---- stdio glue (stdio.c) ---- */
/* Write out this thread's buffered stdout/stderr bytes. */
void zt_stdio_flush(void);

#endif
