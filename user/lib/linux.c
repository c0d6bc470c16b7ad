/* SPDX-License-Identifier: MIT */
/*
 * linux.c — the same program under Linux.  `make compare` boots the very files of zerotick's
 * /bin (bench, osnoise, isol, spin, load, true, t0) on Debian's Linux kernel too, so the
 * library finds out once which kernel it runs on and, under Linux, replaces the few
 * zerotick-only things with ordinary Linux system calls:
 *
 *   zerotick only                     under Linux
 *   zt_spawn (syscall 1024)           clone(CLONE_VM|CLONE_VFORK|SIGCHLD) + execve, as glibc's
 *                                     posix_spawn does (zt_vfork_exec, also usable on zerotick)
 *   zt_cpus (1026) for the CPU count  /sys/devices/system/cpu/possible (sysfs mounted by the
 *                                     initramfs's /init), else the affinity mask's CPUs
 *   the counter page (ZT_COUNTERS_VA) absent: zt_counters_page() says NULL, callers do without
 *   the PMU's INST_RETIRED from EL0   absent (Linux traps the read): zt_have_el0_pmu() false
 *   an address space populated at     MAP_POPULATE on thread stacks (thread.c), so a sampling
 *   once                              thread on an isolated CPU does not fault on its stack
 *
 * Detection: uname's sysname, "zerotick" or "Linux", asked once (a system call) and cached.
 * Any other answer counts as zerotick.  Every zerotick call also simply fails with -ENOSYS on
 * Linux (its numbers are above Linux's table), so a program that forgets to check loses a
 * feature, never its memory.
 *
 * Threads: zt_on_linux() may be called from any thread; the first calls race benignly (each
 * stores the same answer).
 */
#include "zt.h"

#include <string.h>

#define SYSNAME_LEN 65
#define AT_FDCWD    -100

static volatile int kernel_kind; /* 0 not asked yet, 1 zerotick, 2 Linux */

bool zt_on_linux(void)
{
    if (kernel_kind == 0) {
        char u[6][SYSNAME_LEN];
        int kind = 1;
        if (zt_uname(u) == 0 && strcmp(u[0], "Linux") == 0) {
            kind = 2;
        }
        kernel_kind = kind;
    }
    return kernel_kind == 2;
}

const char *zt_kernel_release(void)
{
    static char u[6][SYSNAME_LEN];
    if (u[0][0] == 0 && zt_uname(u) != 0) {
        return "?";
    }
    return u[2];
}

const volatile struct zt_cpu_counters *zt_counters_page(int cpu)
{
    if (zt_on_linux() || cpu < 0) {
        return NULL;
    }
    return zt_counters_of((unsigned)cpu);
}

bool zt_have_el0_pmu(void)
{
    return !zt_on_linux();
}

/* "0-3" or "0" (the format of sysfs's possible list): the last CPU + 1, or -1. */
static int parse_possible(const char *s)
{
    const char *last = strrchr(s, '-');
    const char *p = last ? last + 1 : s;
    int n = 0, digits = 0;
    while (*p >= '0' && *p <= '9') {
        n = n * 10 + (*p++ - '0');
        digits++;
    }
    return digits ? n + 1 : -1;
}

int zt_linux_nr_cpus(void)
{
    char buf[64];
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, "/sys/devices/system/cpu/possible", 0, 0);
    if (fd >= 0) {
        long n = zt_read((int)fd, buf, sizeof(buf) - 1);
        zt_syscall1(SYS_close, fd);
        if (n > 0) {
            buf[n] = 0;
            int cpus = parse_possible(buf);
            if (cpus > 0) {
                return cpus;
            }
        }
    }
    uint64_t mask = 0; /* no sysfs: the CPUs this thread may use, at least 1 */
    zt_get_affinity(&mask);
    return mask ? 64 - __builtin_clzll(mask) : 1;
}

/* ---- vfork + execve ---- */

struct vfork_args {
    const char *path;
    char *const *argv;
    char *const *envp;
    uint64_t affinity;
};

extern char **environ;
long zt_clone_thread(unsigned long flags, void *stack, int *ptid, void *tls, int *ctid,
                     void (*start)(void *), void *arg);

/* The child, on its own stack: only raw system calls (it may share the parent's memory). */
static void vfork_child(void *p)
{
    const struct vfork_args *a = p;
    if (a->affinity) {
        zt_syscall3(SYS_sched_setaffinity, 0, sizeof(a->affinity), &a->affinity);
    }
    zt_syscall3(SYS_execve, a->path, a->argv, a->envp);
    zt_syscall1(SYS_exit_group, 127); /* execve failed: the shell's "not found" status */
    for (;;) {
    }
}

long zt_vfork_exec(const char *path, char *const argv[], uint64_t affinity)
{
    /* The parent waits (CLONE_VFORK) until the child has exec'd or exited, so the child's
     * stack and arguments may live in this frame. */
    char stack[4096] __attribute__((aligned(16)));
    struct vfork_args a = {path, argv, environ, affinity};
    const unsigned long flags = CLONE_VM | 0x4000 /* CLONE_VFORK */ | SIGCHLD;
    return zt_clone_thread(flags, stack + sizeof(stack), NULL, NULL, NULL, vfork_child, &a);
}
