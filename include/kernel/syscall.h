/* SPDX-License-Identifier: MIT */
/*
 * syscall.h — system-call dispatch (kernel/sys/syscall.c): the entry point the arch trap code
 * calls for a system call from user space, and the names of every call.
 */
#ifndef ZT_KERNEL_SYSCALL_H
#define ZT_KERNEL_SYSCALL_H

struct trap_frame;

#include <stdint.h>

/* Linux/aarch64 system call names by number (kernel/sys/linux_names.c, generated); NULL for
 * numbers Linux does not use. */
#define LINUX_NR_SYSCALLS 451
extern const char *const linux_syscall_names[LINUX_NR_SYSCALLS];

/* The name of system call `nr` ("write", "zt_trace"), or "unknown": from the dispatch
 * table itself, so a new call is never missing from reports. */
const char *syscall_name(uint64_t nr);

/* prctl.c */
long sys_prctl(struct trap_frame *f);

/* sysmisc.c */
long sys_getuid(struct trap_frame *f);
long sys_setid(struct trap_frame *f);
long sys_getresid(struct trap_frame *f);
long sys_getgroups(struct trap_frame *f);
long sys_prlimit64(struct trap_frame *f);
long sys_getrlimit(struct trap_frame *f);
long sys_setrlimit(struct trap_frame *f);
long sys_set_robust_list(struct trap_frame *f);
long sys_getrandom(struct trap_frame *f);
long sys_times(struct trap_frame *f);
long sys_getrusage(struct trap_frame *f);
long sys_sysinfo(struct trap_frame *f);
long sys_mprotect(struct trap_frame *f);
long sys_mlock(struct trap_frame *f);
long sys_mlock2(struct trap_frame *f);
long sys_munlock(struct trap_frame *f);
long sys_mlockall(struct trap_frame *f);
long sys_munlockall(struct trap_frame *f);
long sys_membarrier(struct trap_frame *f);
long sys_get_mempolicy(struct trap_frame *f);
long sys_set_mempolicy(struct trap_frame *f);
long sys_mbind(struct trap_frame *f);
long sys_capget(struct trap_frame *f);
long sys_capset(struct trap_frame *f);
long sys_madvise(struct trap_frame *f);
/* systime.c */
long sys_nanosleep(struct trap_frame *f);
long sys_clock_gettime(struct trap_frame *f);
long sys_clock_getres(struct trap_frame *f);
long sys_clock_nanosleep(struct trap_frame *f);
long sys_gettimeofday(struct trap_frame *f);
/* Linux's struct rusage (two timevals, 14 longs) with these user and system times and the rest
 * 0, written to user memory at uaddr (getrusage, wait4): 0 or -EFAULT. */
#define RUSAGE_BYTES 144
int rusage_put(uint64_t uaddr, uint64_t user_cycles, uint64_t sys_cycles);

typedef long (*syscall_fn)(struct trap_frame *f);

/* The calls the system-call fast path may run with a partial frame, by number (NULL: the full
 * path; numbers from SYSCALL_FAST_NR on always take it).  syscall.c says which and why. */
#define SYSCALL_FAST_NR 512
extern const syscall_fn syscall_fast_table[SYSCALL_FAST_NR];

/* Called with IRQs masked; classifies the call for task isolation first, then runs it with
 * IRQs enabled and returns with them masked.  svc_imm: the SVC instruction's immediate
 * (ignored for dispatch, as on Linux; the window markers 0x5a5a/0xa5a5 are traced). */
/* Trace the call, apply isolation's strict mode, then syscall_run. */
void syscall_dispatch(struct trap_frame *f, unsigned svc_imm);
/* Run the call the frame names, IRQs enabled while it runs; its result in the frame. */
void syscall_run(struct trap_frame *f);

#endif
