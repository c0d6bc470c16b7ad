/* SPDX-License-Identifier: MIT */
/*
 * fd.c — descriptor tables and the calls that act on an open descriptor (contract and locks
 * in include/kernel/fd.h).  Every call checks the descriptor, its access mode and the user
 * buffers before it does anything.
 *
 * Positioned files (initrd and tmpfs files, directories) read and write at the file's
 * position under the file's lock, so threads sharing one open file never both use the same
 * offset; pipes and devices have no position (pread/pwrite/lseek on them: -ESPIPE).
 */
#include "kernel/fd.h"
#include "arch.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define IOV_MAX         1024
#define SEEK_SET        0
#define SEEK_CUR        1
#define SEEK_END        2
#define F_DUPFD         0
#define F_GETFD         1
#define F_SETFD         2
#define F_GETFL         3
#define F_SETFL         4
#define F_DUPFD_CLOEXEC 1030
#define FD_CLOEXEC      1
#define FIONBIO         0x5421
#define FIONCLEX        0x5450
#define FIOCLEX         0x5451

static bool cloexec_bit(const struct fdtable *t, int fd)
{
    ASSERT(fd >= 0 && fd < FD_MAX);
    return t->cloexec[fd / 64] & (1ull << (fd % 64));
}

static void set_cloexec(struct fdtable *t, int fd, bool on)
{
    ASSERT(fd >= 0 && fd < FD_MAX);
    if (on) {
        t->cloexec[fd / 64] |= 1ull << (fd % 64);
    } else {
        t->cloexec[fd / 64] &= ~(1ull << (fd % 64));
    }
}

struct fdtable *fdtable_new(const struct fdtable *src, bool exec)
{
    struct fdtable *t = kmem_alloc(sizeof(*t));
    if (!t || !src) {
        if (t) {
            spin_lock_init(&t->lock, LOCK_LEAF);
        }
        return t;
    }
    spin_lock_init(&t->lock, LOCK_LEAF);
    ASSERT(t != src && t->end == 0); /* a fresh (zeroed) table */
    unsigned long flags = spin_lock_irqsave((spinlock_t *)&src->lock);
    for (int i = 0; i < src->end; i++) {
        if (src->fd[i] && !(exec && cloexec_bit(src, i))) {
            fdtable_set(t, i, src->fd[i]);
            file_get(t->fd[i]);
            set_cloexec(t, i, cloexec_bit(src, i));
        }
    }
    spin_unlock_irqrestore((spinlock_t *)&src->lock, flags);
    return t;
}

#define CLOSE_BATCH 16

/* Take out up to CLOSE_BATCH files of the descriptors selected, from *next on (lock held),
 * into out[]; *next moves past the descriptors looked at. */
static int take_files_locked(struct fdtable *t, bool only_cloexec, int *next, struct file **out)
{
    ASSERT_HELD(&t->lock);
    ASSERT(*next >= 0 && t->end <= FD_MAX);
    int n = 0;
    for (; *next < t->end && n < CLOSE_BATCH; (*next)++) {
        int i = *next;
        if (t->fd[i] && (!only_cloexec || cloexec_bit(t, i))) {
            out[n++] = t->fd[i];
            t->fd[i] = 0;
            set_cloexec(t, i, false);
        }
    }
    return n;
}

/* Close the descriptors `only_cloexec` selects, a batch at a time: the files are put outside
 * the lock (a put may free a pipe and wake its other end). */
static void close_some(struct fdtable *t, bool only_cloexec)
{
    struct file *gone[CLOSE_BATCH];
    int next = 0;
    for (bool more = true; more;) {
        unsigned long flags = spin_lock_irqsave(&t->lock);
        int n = take_files_locked(t, only_cloexec, &next, gone);
        more = next < t->end;
        spin_unlock_irqrestore(&t->lock, flags);
        for (int i = 0; i < n; i++) {
            file_put(gone[i]);
        }
    }
}

/* Is every descriptor of t closed? */
static bool table_is_empty(const struct fdtable *t)
{
    for (int i = 0; i < FD_MAX; i++) {
        if (t->fd[i] || cloexec_bit(t, i)) {
            return false;
        }
    }
    return true;
}

void fdtable_free(struct fdtable *t)
{
    close_some(t, false);
    ASSERT(table_is_empty(t)); /* no one else installs into a table being freed */
    kmem_free(t, sizeof(*t));
}

void fdtable_close_on_exec(struct fdtable *t)
{
    close_some(t, true);
}

static struct fdtable *my_table(void)
{
    return current()->proc->files;
}

static int fd_limit(void)
{
    uint64_t lim = current()->proc->rlimits[RLIMIT_NOFILE].cur;
    return lim < FD_MAX ? (int)lim : FD_MAX;
}

int fd_install(struct file *file, int min, bool cloexec)
{
    struct fdtable *t = my_table();
    ASSERT(file && file->refs > 0);
    int limit = fd_limit(), fd = -EMFILE;
    unsigned long flags = spin_lock_irqsave(&t->lock);
    for (int i = min < 0 ? 0 : min; i < limit; i++) {
        if (!t->fd[i]) {
            fdtable_set(t, i, file);
            set_cloexec(t, i, cloexec);
            fd = i;
            ASSERT(t->end > fd); /* loops over the table reach it */
            break;
        }
    }
    spin_unlock_irqrestore(&t->lock, flags);
    return fd;
}

struct file *fd_get(int fd)
{
    struct fdtable *t = my_table();
    if (fd < 0 || fd >= FD_MAX) {
        return 0;
    }
    unsigned long flags = spin_lock_irqsave(&t->lock);
    struct file *file = t->fd[fd];
    if (file) {
        file_get(file);
    }
    spin_unlock_irqrestore(&t->lock, flags);
    return file;
}

/* ---- reading and writing ---- */

static bool has_position(const struct file *file)
{
    return file->inode &&
           (file->inode->kind == INODE_TMPFS_FILE || file->inode->kind == INODE_INITRD_FILE ||
            file->inode->kind == INODE_DIR || file->inode->kind == INODE_SYNTH);
}

/* One read or write through file's ops at its position (or `at` when at != NULL).  Checked
 * in Linux's order (vfs_read/vfs_write): the access mode (-EBADF), an operation to do it
 * (-EINVAL), then the buffer's range (-EFAULT: access_ok), so a length of 2^63 or SIZE_MAX
 * is -EFAULT as on Linux; the range check also stops every length rw_verify_area would
 * refuse as negative, since user space ends far below 2^63. */
static long file_io(struct file *file, bool write, uint64_t ubuf, size_t n, uint64_t *at)
{
    ASSERT(file->refs > 0 && file->ops); /* the caller's reference; a live end has ops */
    unsigned acc = file->flags & O_ACCMODE;
    if (write ? acc == O_RDONLY : acc == O_WRONLY) {
        return -EBADF;
    }
    long (*op)(struct file *, uint64_t, size_t, uint64_t *) =
        write ? file->ops->write : file->ops->read;
    if (!op) {
        return -EINVAL;
    }
    if (!vm_range_ok(ubuf, n)) {
        return -EFAULT;
    }
    if (!has_position(file)) {
        return at ? -ESPIPE : op(file, ubuf, n, 0);
    }
    if (at) {
        return op(file, ubuf, n, at);
    }
    spin_lock(&file->lock);
    uint64_t pos = file->pos;
    long r = op(file, ubuf, n, &pos);
    file->pos = pos;
    spin_unlock(&file->lock);
    return r;
}

static long fd_io(int fd, bool write, uint64_t ubuf, size_t n, uint64_t *at)
{
    struct file *file = fd_get(fd);
    if (!file) {
        return -EBADF;
    }
    long r = file_io(file, write, ubuf, n, at);
    file_put(file);
    return r;
}

long sys_read(struct trap_frame *f)
{
    return fd_io((int)arch_frame_arg(f, 0), false, arch_frame_arg(f, 1), arch_frame_arg(f, 2), 0);
}

long sys_write(struct trap_frame *f)
{
    return fd_io((int)arch_frame_arg(f, 0), true, arch_frame_arg(f, 1), arch_frame_arg(f, 2), 0);
}

long sys_pread64(struct trap_frame *f)
{
    uint64_t at = arch_frame_arg(f, 3);
    return (int64_t)at < 0 ? -EINVAL
                           : fd_io((int)arch_frame_arg(f, 0), false, arch_frame_arg(f, 1),
                                   arch_frame_arg(f, 2), &at);
}

long sys_pwrite64(struct trap_frame *f)
{
    uint64_t at = arch_frame_arg(f, 3);
    return (int64_t)at < 0 ? -EINVAL
                           : fd_io((int)arch_frame_arg(f, 0), true, arch_frame_arg(f, 1),
                                   arch_frame_arg(f, 2), &at);
}

struct iovec_k {
    uint64_t base, len;
};

/* readv/writev: the vectors are checked first; a short transfer ends the call. */
static long vector_io(struct trap_frame *f, bool write)
{
    int cnt = (int)arch_frame_arg(f, 2);
    struct iovec_k iov[16];
    if (cnt < 0 || cnt > IOV_MAX) {
        return -EINVAL;
    }
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    if (!file) {
        return -EBADF;
    }
    long total = 0, r = 0;
    for (int i = 0; i < cnt && r >= 0; i += 16) {
        int k = MIN(cnt - i, 16);
        if (copy_from_user(current_vm(), iov, arch_frame_arg(f, 1) + (uint64_t)i * sizeof(iov[0]),
                           (size_t)k * sizeof(iov[0]))) {
            r = -EFAULT;
            break;
        }
        for (int j = 0; j < k; j++) {
            if ((int64_t)iov[j].len < 0) {
                r = -EINVAL;
                break;
            }
            r = iov[j].len ? file_io(file, write, iov[j].base, iov[j].len, 0) : 0;
            if (r < 0) {
                break;
            }
            total += r;
            if ((uint64_t)r < iov[j].len) {
                i = cnt; /* short: stop here */
                break;
            }
        }
    }
    file_put(file);
    return total ? total : r;
}

long sys_readv(struct trap_frame *f)
{
    return vector_io(f, false);
}

long sys_writev(struct trap_frame *f)
{
    return vector_io(f, true);
}

long sys_lseek(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    int64_t off = (int64_t)arch_frame_arg(f, 1);
    int whence = (int)arch_frame_arg(f, 2);
    if (!file) {
        return -EBADF;
    }
    long r = -ESPIPE;
    if (has_position(file)) {
        spin_lock(&file->lock);
        int64_t base = whence == SEEK_SET   ? 0
                       : whence == SEEK_CUR ? (int64_t)file->pos
                       : whence == SEEK_END ? (int64_t)file->inode->size
                                            : -1;
        r = base < 0 ? -EINVAL : base + off < 0 ? -EINVAL : base + off;
        if (r >= 0) {
            file->pos = (uint64_t)r;
        }
        spin_unlock(&file->lock);
    }
    file_put(file);
    return r;
}

/* ---- descriptors ---- */

int fd_close(int fd)
{
    struct fdtable *t = my_table();
    if (fd < 0 || fd >= FD_MAX) {
        return -EBADF;
    }
    unsigned long flags = spin_lock_irqsave(&t->lock);
    struct file *file = t->fd[fd];
    t->fd[fd] = 0;
    set_cloexec(t, fd, false);
    spin_unlock_irqrestore(&t->lock, flags);
    if (!file) {
        return -EBADF;
    }
    file_put(file);
    return 0;
}

long sys_close(struct trap_frame *f)
{
    return fd_close((int)arch_frame_arg(f, 0));
}

static long dup_from(int oldfd, int min, bool cloexec)
{
    struct file *file = fd_get(oldfd);
    if (!file) {
        return -EBADF;
    }
    if (min < 0 || min >= fd_limit()) {
        file_put(file);
        return -EINVAL;
    }
    int fd = fd_install(file, min, cloexec);
    if (fd < 0) {
        file_put(file);
    }
    return fd;
}

long sys_dup(struct trap_frame *f)
{
    return dup_from((int)arch_frame_arg(f, 0), 0, false);
}

long sys_dup3(struct trap_frame *f)
{
    int oldfd = (int)arch_frame_arg(f, 0), newfd = (int)arch_frame_arg(f, 1);
    unsigned flags = (unsigned)arch_frame_arg(f, 2);
    struct fdtable *t = my_table();
    if ((flags & ~(unsigned)O_CLOEXEC) || oldfd == newfd) {
        return -EINVAL;
    }
    if (newfd < 0 || newfd >= fd_limit()) {
        return -EBADF;
    }
    struct file *file = fd_get(oldfd);
    if (!file) {
        return -EBADF;
    }
    unsigned long irq = spin_lock_irqsave(&t->lock);
    struct file *old = t->fd[newfd];
    fdtable_set(t, newfd, file);
    set_cloexec(t, newfd, flags & O_CLOEXEC);
    spin_unlock_irqrestore(&t->lock, irq);
    if (old) {
        file_put(old);
    }
    return newfd;
}

static long fcntl_fd_flags(int fd, bool set, unsigned long arg)
{
    struct fdtable *t = my_table();
    long r = -EBADF;
    unsigned long irq = spin_lock_irqsave(&t->lock);
    if (fd >= 0 && fd < FD_MAX && t->fd[fd]) {
        r = cloexec_bit(t, fd) ? FD_CLOEXEC : 0;
        if (set) {
            set_cloexec(t, fd, arg & FD_CLOEXEC);
            r = 0;
        }
    }
    spin_unlock_irqrestore(&t->lock, irq);
    return r;
}

long sys_fcntl(struct trap_frame *f)
{
    int fd = (int)arch_frame_arg(f, 0), cmd = (int)arch_frame_arg(f, 1);
    unsigned long arg = arch_frame_arg(f, 2);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
        return dup_from(fd, (int)arg, cmd == F_DUPFD_CLOEXEC);
    }
    if (cmd == F_GETFD || cmd == F_SETFD) {
        return fcntl_fd_flags(fd, cmd == F_SETFD, arg);
    }
    struct file *file = fd_get(fd);
    if (!file) {
        return -EBADF;
    }
    long r = -EINVAL;
    if (cmd == F_GETFL) {
        r = file->flags;
    } else if (cmd == F_SETFL) {
        const unsigned changeable = O_APPEND | O_NONBLOCK;
        __atomic_store_n(&file->flags, (file->flags & ~changeable) | (arg & changeable),
                         __ATOMIC_RELAXED);
        r = 0;
    }
    file_put(file);
    return r;
}

long sys_ioctl(struct trap_frame *f)
{
    int fd = (int)arch_frame_arg(f, 0), on;
    unsigned long req = arch_frame_arg(f, 1);
    if (req == FIOCLEX || req == FIONCLEX) {
        return fcntl_fd_flags(fd, true, req == FIOCLEX ? FD_CLOEXEC : 0);
    }
    struct file *file = fd_get(fd);
    if (!file) {
        return -EBADF;
    }
    long r;
    if (req == FIONBIO) {
        r = copy_from_user(current_vm(), &on, arch_frame_arg(f, 2), sizeof(on)) ? -EFAULT : 0;
        if (r == 0) {
            unsigned fl = on ? file->flags | O_NONBLOCK : file->flags & ~(unsigned)O_NONBLOCK;
            __atomic_store_n(&file->flags, fl, __ATOMIC_RELAXED);
        }
    } else {
        r = file->ops->ioctl ? file->ops->ioctl(file, req, arch_frame_arg(f, 2)) : -ENOTTY;
    }
    file_put(file);
    return r;
}
