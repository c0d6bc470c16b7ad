/* SPDX-License-Identifier: MIT */
/*
 * fd.h — per-process file descriptor tables and the descriptor system calls.
 *
 * A table maps descriptors 0..FD_MAX-1 to struct files (vfs.h), each with its close-on-exec
 * bit.  The threads of a process share its table (CLONE_FILES is the only way threads are
 * made); fork copies it (the files are shared, with their positions, as on Linux); execve
 * and spawn drop the close-on-exec ones.  A new descriptor is the lowest free one at or
 * above the asked minimum and below RLIMIT_NOFILE (at most FD_MAX): -EMFILE past it.
 *
 * Locks: the table's own lock (IRQs masked) guards its slots; a file found is returned with
 * a reference taken under that lock, so a concurrent close cannot free it while a call
 * uses it.  Never held while sleeping or while taking vfs_lock.
 */
#ifndef ZT_KERNEL_FD_H
#define ZT_KERNEL_FD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/spinlock.h"

#define FD_MAX 256

struct file;
struct process;
struct trap_frame;

struct fdtable {
    spinlock_t lock;
    int end; /* no descriptor at or above this is open (set by fdtable_set): loops stop here */
    struct file *fd[FD_MAX];
    uint64_t cloexec[FD_MAX / 64];
};

/* Put `file` at descriptor fd of t (t->lock held, or t not yet shared), keeping t->end. */
static inline void fdtable_set(struct fdtable *t, int fd, struct file *file)
{
    t->fd[fd] = file;
    if (file && fd >= t->end) {
        t->end = fd + 1;
    }
}

/* An empty table, or a copy of `src` (every file referenced once more); with `exec`, the
 * close-on-exec descriptors are left out.  NULL when out of memory. */
struct fdtable *fdtable_new(const struct fdtable *src, bool exec);
/* Close every descriptor and free the table. */
void fdtable_free(struct fdtable *t);
/* execve: close the close-on-exec descriptors. */
void fdtable_close_on_exec(struct fdtable *t);

/* Install f (its reference passes to the table) at the lowest free descriptor >= min in
 * the current process.  The descriptor, or -EMFILE (f is then not consumed). */
int fd_install(struct file *f, int min, bool cloexec);
/* The file of descriptor fd of the current process, referenced (file_put when done);
 * NULL for a bad descriptor. */
struct file *fd_get(int fd);
/* close(): 0 or -EBADF. */
int fd_close(int fd);

long sys_read(struct trap_frame *f);
long sys_write(struct trap_frame *f);
long sys_readv(struct trap_frame *f);
long sys_writev(struct trap_frame *f);
long sys_pread64(struct trap_frame *f);
long sys_pwrite64(struct trap_frame *f);
long sys_lseek(struct trap_frame *f);
long sys_close(struct trap_frame *f);
long sys_dup(struct trap_frame *f);
long sys_dup3(struct trap_frame *f);
long sys_fcntl(struct trap_frame *f);
long sys_ioctl(struct trap_frame *f);

#endif
