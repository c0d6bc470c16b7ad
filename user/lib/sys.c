/* SPDX-License-Identifier: MIT */
/*
 * sys.c — one zt_*() wrapper per system call of include/uapi/zt_syscall.h, plus the small
 * conveniences built only from them (spawn with an affinity, wait, affinity of self).
 *
 * Every wrapper returns the kernel's x0 unchanged (>= 0, or -E... in Linux numbering) and
 * never touches errno; posix.c builds the errno-setting calls on top of these.
 */
#include "zt.h"

#include <string.h>

long zt_ioctl(int fd, unsigned long req, void *arg)
{
    return zt_syscall3(SYS_ioctl, fd, req, arg);
}

long zt_read(int fd, void *buf, size_t n)
{
    return zt_syscall3(SYS_read, fd, buf, n);
}

long zt_write(int fd, const void *buf, size_t n)
{
    return zt_syscall3(SYS_write, fd, buf, n);
}

void zt_exit(int status)
{
    for (;;) {
        zt_syscall1(SYS_exit, status);
    }
}

void zt_exit_group(int status)
{
    for (;;) {
        zt_syscall1(SYS_exit_group, status);
    }
}

long zt_set_tid_address(int *tidptr)
{
    return zt_syscall1(SYS_set_tid_address, tidptr);
}

long zt_futex(int *uaddr, int op, int val, const struct timespec *timeout)
{
    return zt_syscall4(SYS_futex, uaddr, op, val, timeout);
}

long zt_futex_wait(int *uaddr, int expected, const struct timespec *timeout)
{
    return zt_futex(uaddr, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, timeout);
}

long zt_futex_wake(int *uaddr, int count)
{
    return zt_futex(uaddr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, count, NULL);
}

long zt_nanosleep(const struct timespec *req, struct timespec *rem)
{
    return zt_syscall2(SYS_nanosleep, req, rem);
}

long zt_clock_gettime(int clock, struct timespec *ts)
{
    return zt_syscall2(SYS_clock_gettime, clock, ts);
}

long zt_clock_nanosleep(int clock, int flags, const struct timespec *req, struct timespec *rem)
{
    return zt_syscall4(SYS_clock_nanosleep, clock, flags, req, rem);
}

long zt_sched_setaffinity(int tid, size_t size, const uint64_t *mask)
{
    return zt_syscall3(SYS_sched_setaffinity, tid, size, mask);
}

long zt_sched_getaffinity(int tid, size_t size, uint64_t *mask)
{
    return zt_syscall3(SYS_sched_getaffinity, tid, size, mask);
}

long zt_sched_yield(void)
{
    return zt_syscall0(SYS_sched_yield);
}

long zt_kill(int pid, int sig)
{
    return zt_syscall2(SYS_kill, pid, sig);
}

long zt_tgkill(int tgid, int tid, int sig)
{
    return zt_syscall3(SYS_tgkill, tgid, tid, sig);
}

long zt_rt_sigaction(int sig, const void *act, void *oldact, size_t sigsetsize)
{
    return zt_syscall4(SYS_rt_sigaction, sig, act, oldact, sigsetsize);
}

long zt_rt_sigprocmask(int how, const void *set, void *oldset, size_t sigsetsize)
{
    return zt_syscall4(SYS_rt_sigprocmask, how, set, oldset, sigsetsize);
}

long zt_uname(void *buf)
{
    return zt_syscall1(SYS_uname, buf);
}

long zt_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
    return zt_syscall6(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0);
}

long zt_getcpu(unsigned *cpu, unsigned *node)
{
    return zt_syscall3(SYS_getcpu, cpu, node, 0);
}

long zt_getpid(void)
{
    return zt_syscall0(SYS_getpid);
}

long zt_getppid(void)
{
    return zt_syscall0(SYS_getppid);
}

long zt_gettid(void)
{
    return zt_syscall0(SYS_gettid);
}

long zt_brk(void *addr)
{
    return zt_syscall1(SYS_brk, addr);
}

long zt_munmap(void *addr, size_t len)
{
    return zt_syscall2(SYS_munmap, addr, len);
}

long zt_mmap(void *addr, size_t len, int prot, int flags, int fd, long off)
{
    return zt_syscall6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
}

long zt_wait4(int pid, int *status, int options, void *rusage)
{
    return zt_syscall4(SYS_wait4, pid, status, options, rusage);
}

long zt_spawn_attr(const char *path, char *const argv[], const struct zt_spawn_attr *attr)
{
    extern char **environ;

    return zt_syscall4(SYS_zt_spawn, path, argv, attr, environ);
}

long zt_tasks(struct zt_task_info *buf, size_t n)
{
    return zt_syscall2(SYS_zt_tasks, buf, n);
}

long zt_cpus(struct zt_cpu_info *buf, size_t n)
{
    return zt_syscall2(SYS_zt_cpus, buf, n);
}

long zt_poweroff(int status)
{
    return zt_syscall1(SYS_zt_poweroff, status);
}

long zt_hwnoise(uint64_t duration_us, uint64_t threshold_us, struct zt_hwnoise *out)
{
    return zt_syscall4(SYS_zt_hwnoise, duration_us, threshold_us, out, sizeof(*out));
}

long zt_irqsoff(unsigned cpu, struct zt_irqsoff *out, unsigned flags)
{
    return zt_syscall4(SYS_zt_irqsoff, cpu, out, sizeof(*out), flags);
}

long zt_kcov(unsigned op, void *arg, size_t size)
{
    return zt_syscall3(SYS_zt_kcov, op, arg, size);
}

long zt_partition(const char *cpulist, unsigned op, unsigned flags)
{
    return zt_syscall4(SYS_zt_partition, cpulist, strlen(cpulist), op, flags);
}

long zt_meminfo(struct zt_meminfo *mi)
{
    return zt_syscall1(SYS_zt_meminfo, mi);
}

long zt_isolstat(unsigned cpu, struct zt_isol_audit *out)
{
    return zt_syscall2(SYS_zt_isolstat, cpu, out);
}

/* ---- conveniences ---- */

/* Under Linux (make compare) there is no spawn call: vfork + execve does the same (linux.c). */
long zt_spawn(const char *path, char *const argv[], uint64_t affinity)
{
    struct zt_cpuset set;

    if (zt_on_linux()) {
        return zt_vfork_exec(path, argv, affinity);
    }
    zt_cpuset_zero(&set);
    set.bits[0] = affinity;
    return zt_spawn_on(path, argv, &set);
}

long zt_spawn_on(const char *path, char *const argv[], const struct zt_cpuset *set)
{
    struct zt_spawn_attr attr;

    if (zt_on_linux()) {
        return zt_vfork_exec(path, argv, set ? set->bits[0] : 0); /* Linux: 64 CPUs here */
    }
    memset(&attr, 0, sizeof(attr));
    if (set != NULL) {
        attr.affinity = *set;
    }
    return zt_spawn_attr(path, argv, &attr);
}

long zt_signal(int sig, void (*handler)(int), unsigned long flags)
{
    struct zt_sigaction act = {
        .handler = handler,
        .flags = flags | ZT_SA_RESTORER,
        .restorer = zt_sigreturn_trampoline,
        .mask = 0,
    };

    return zt_rt_sigaction(sig, &act, NULL, sizeof(act.mask));
}

long zt_wait(int pid, int *status)
{
    long r;

    do {
        r = zt_wait4(pid, status, 0, NULL);
    } while (r == -EINTR);
    return r;
}

long zt_set_affinity(uint64_t mask)
{
    return zt_sched_setaffinity(0, sizeof(mask), &mask);
}

long zt_get_affinity(uint64_t *mask)
{
    struct zt_cpuset set;
    long r = zt_get_cpuset(&set);

    *mask = r < 0 ? 0 : set.bits[0];
    return r;
}

long zt_set_cpuset(const struct zt_cpuset *set)
{
    return zt_sched_setaffinity(0, sizeof(*set), set->bits);
}

long zt_get_cpuset(struct zt_cpuset *set)
{
    long r;

    zt_cpuset_zero(set);
    r = zt_sched_getaffinity(0, sizeof(*set), set->bits);
    return r < 0 ? r : 0;
}

long zt_pin(int cpu)
{
    struct zt_cpuset set;

    if (cpu < 0 || cpu >= ZT_MAX_CPUS) {
        return -EINVAL;
    }
    zt_cpuset_zero(&set);
    zt_cpuset_add(&set, cpu);
    return zt_set_cpuset(&set);
}

int zt_cpu(void)
{
    unsigned cpu = 0;
    long r = zt_getcpu(&cpu, NULL);

    return r < 0 ? (int)r : (int)cpu;
}

int zt_nr_cpus(void)
{
    if (zt_on_linux()) {
        return zt_linux_nr_cpus();
    }
    long n = zt_cpus(NULL, 0);

    return n > 0 ? (int)n : 1;
}

void zt_sleep_ns(uint64_t ns)
{
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000ull),
                           .tv_nsec = (long)(ns % 1000000000ull)};
    struct timespec rem;

    while (zt_nanosleep(&req, &rem) == -EINTR) {
        req = rem;
    }
}

static const char *const signal_names[] = {
    [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
    [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
    [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT",
    [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP",
    [SIGURG] = "SIGURG",   [SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",   [SIGSYS] = "SIGSYS",
};

const char *zt_signal_name(int sig)
{
    if (sig > 0 && (size_t)sig < sizeof(signal_names) / sizeof(signal_names[0]) &&
        signal_names[sig] != NULL) {
        return signal_names[sig];
    }
    return "SIG?";
}

static const char *const errno_names[] = {
    [EPERM] = "EPERM",       [ENOENT] = "ENOENT",
    [ESRCH] = "ESRCH",       [EINTR] = "EINTR",
    [EIO] = "EIO",           [E2BIG] = "E2BIG",
    [ENOEXEC] = "ENOEXEC",   [EBADF] = "EBADF",
    [ECHILD] = "ECHILD",     [EAGAIN] = "EAGAIN",
    [ENOMEM] = "ENOMEM",     [EFAULT] = "EFAULT",
    [EBUSY] = "EBUSY",       [EEXIST] = "EEXIST",
    [ENODEV] = "ENODEV",     [EINVAL] = "EINVAL",
    [EMFILE] = "EMFILE",     [ENOTTY] = "ENOTTY",
    [ENOSPC] = "ENOSPC",     [ESPIPE] = "ESPIPE",
    [ERANGE] = "ERANGE",     [ENAMETOOLONG] = "ENAMETOOLONG",
    [ENOSYS] = "ENOSYS",     [ETIMEDOUT] = "ETIMEDOUT",
    [EACCES] = "EACCES",     [ENOTDIR] = "ENOTDIR",
    [EISDIR] = "EISDIR",     [EROFS] = "EROFS",
    [EALREADY] = "EALREADY", [ENODATA] = "ENODATA",
    [ELOOP] = "ELOOP",       [ENOTEMPTY] = "ENOTEMPTY",
};

const char *zt_errno_name(int err)
{
    if (err > 0 && (size_t)err < sizeof(errno_names) / sizeof(errno_names[0]) &&
        errno_names[err] != NULL) {
        return errno_names[err];
    }
    return "E?";
}
