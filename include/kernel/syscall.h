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
long sys_clock_getres(struct trap_frame *f);
long sys_gettimeofday(struct trap_frame *f);
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
/* fs/fs_sys.c */
long sys_openat(struct trap_frame *f);
long sys_newfstatat(struct trap_frame *f);
long sys_fstat(struct trap_frame *f);
long sys_statx(struct trap_frame *f);
long sys_getdents64(struct trap_frame *f);
long sys_getcwd(struct trap_frame *f);
long sys_chdir(struct trap_frame *f);
long sys_fchdir(struct trap_frame *f);
long sys_umask(struct trap_frame *f);
long sys_mkdirat(struct trap_frame *f);
long sys_unlinkat(struct trap_frame *f);
long sys_renameat(struct trap_frame *f);
long sys_renameat2(struct trap_frame *f);
long sys_readlinkat(struct trap_frame *f);
long sys_faccessat(struct trap_frame *f);
long sys_faccessat2(struct trap_frame *f);
long sys_ftruncate(struct trap_frame *f);
long sys_fsync(struct trap_frame *f);
long sys_utimensat(struct trap_frame *f);
long sys_symlinkat(struct trap_frame *f);
long sys_fchmodat(struct trap_frame *f);
long sys_fchmod(struct trap_frame *f);
/* pipe.c */
long sys_pipe2(struct trap_frame *f);
/* fork.c */
long sys_setpgid(struct trap_frame *f);
long sys_getpgid(struct trap_frame *f);
long sys_getsid(struct trap_frame *f);
long sys_setsid(struct trap_frame *f);

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
