/* SPDX-License-Identifier: MIT */
/*
 * fs_sys.h — the system calls that take a path or act on the file tree (kernel/fs/fs_sys.c):
 * openat, the stat family, getdents64, the working directory, umask, the directory changes,
 * links, modes, times, ftruncate, fsync.  Each takes the caller's trap frame and returns the
 * result or -errno; the dispatch table is kernel/sys/syscall.c's.
 */
#ifndef ZT_KERNEL_FS_SYS_H
#define ZT_KERNEL_FS_SYS_H

struct trap_frame;

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

#endif
