/* SPDX-License-Identifier: MIT */
/*
 * fs_sys.c — the system calls that take a path or act on the file system: openat, stat
 * (newfstatat, fstat, statx), getdents64, faccessat, readlinkat, getcwd, chdir, fchdir,
 * umask, mkdirat, unlinkat, renameat(2), symlinkat, fchmod(at), ftruncate, utimensat, fsync.
 *
 * Paths are copied in whole (at most VFS_PATH_MAX - 1 bytes: -ENAMETOOLONG), then resolved
 * against the directory descriptor (AT_FDCWD: the process's working directory); absolute
 * paths ignore it.  A single user (root): permission bits never refuse anything but writing
 * the read-only initrd (-EROFS) and executing a file with no x bit (-EACCES).
 * Syscall context; every argument is checked before anything changes.
 */
#include "kernel/fs_sys.h"
#include "arch.h"
#include "kernel/cycles.h"
#include "kernel/fd.h"
#include "kernel/lib.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_REMOVEDIR        0x200
#define AT_EACCESS          0x200
#define AT_EMPTY_PATH       0x1000
#define RENAME_NOREPLACE    1
#define X_OK                1
#define W_OK                2
#define R_OK                4

static long get_path(uint64_t upath, char *buf)
{
    long r = strncpy_from_user(current_vm(), buf, upath, VFS_PATH_MAX);
    return r == -ENAMETOOLONG ? -ENAMETOOLONG : r;
}

/* The directory `dirfd` names for a relative path (referenced), or the working directory. */
static int base_dir(int dirfd, struct inode **out)
{
    if (dirfd == AT_FDCWD) {
        *out = proc_cwd_get(current()->proc);
        return 0;
    }
    struct file *file = fd_get(dirfd);
    if (!file) {
        return -EBADF;
    }
    int r = file->inode && S_ISDIR(file->inode->mode) ? 0 : -ENOTDIR;
    if (r == 0) {
        *out = file->inode;
        inode_get(*out);
    }
    file_put(file);
    return r;
}

/* Copy the path and find the base directory: the common start of every *at call. */
static int path_and_base(int dirfd, uint64_t upath, char *path, struct inode **base)
{
    long r = get_path(upath, path);
    if (r < 0) {
        return (int)r;
    }
    if (path[0] == '/') {
        *base = vfs_root;
        inode_get(*base);
        return 0;
    }
    return base_dir(dirfd, base);
}

long sys_openat(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *base;
    unsigned flags = (unsigned)arch_frame_arg(f, 2);
    int r = path_and_base((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), path, &base);
    if (r) {
        return r;
    }
    struct file *file;
    r = vfs_open(base, path, flags, (unsigned)arch_frame_arg(f, 3), &file);
    inode_put(base);
    if (r) {
        return r;
    }
    int fd = fd_install(file, 0, flags & O_CLOEXEC);
    if (fd < 0) {
        file_put(file);
    }
    return fd;
}

/* ---- stat ---- */

struct stat_k {
    uint64_t dev, ino;
    uint32_t mode, nlink, uid, gid;
    uint64_t rdev, pad1;
    int64_t size;
    int32_t blksize, pad2;
    int64_t blocks;
    int64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
    uint32_t unused[2];
};
_Static_assert(sizeof(struct stat_k) == 128, "Linux/aarch64's struct stat (asm-generic)");

static void fill_stat(const struct inode *ino, struct stat_k *st)
{
    memset(st, 0, sizeof(*st));
    st->dev = ino->dev;
    st->ino = ino->ino;
    st->mode = ino->mode;
    st->uid = ino->uid;
    st->gid = ino->gid;
    st->nlink = S_ISDIR(ino->mode) ? 2 : 1;
    st->rdev = ino->rdev;
    st->size = (int64_t)ino->size;
    st->blksize = PAGE_SIZE;
    st->blocks = (int64_t)((ino->size + 511) / 512);
    struct timespec_k mtime = timespec_from_ns(ino->mtime_ns);
    st->mtime = mtime.sec;
    st->mtime_ns = mtime.nsec;
    st->atime = st->ctime = st->mtime;
    st->atime_ns = st->ctime_ns = st->mtime_ns;
}

/* The inode of descriptor fd, referenced. */
static int fd_inode(int fd, struct inode **out)
{
    struct file *file = fd_get(fd);
    int r = file && file->inode ? 0 : file ? -EINVAL : -EBADF;
    if (r == 0) {
        *out = file->inode;
        inode_get(*out);
    }
    if (file) {
        file_put(file);
    }
    return r;
}

/* The inode a stat-like call names: the descriptor itself with AT_EMPTY_PATH and "". */
static int stat_target(int dirfd, uint64_t upath, unsigned flags, struct inode **out)
{
    char path[VFS_PATH_MAX];
    struct inode *base;
    if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | 0x6000 /* AT_STATX_* */)) {
        return -EINVAL;
    }
    long len = get_path(upath, path);
    if (len < 0) {
        return (int)len;
    }
    if (len == 0 && (flags & AT_EMPTY_PATH)) { /* the descriptor itself (glibc's fstat) */
        return dirfd == AT_FDCWD ? base_dir(dirfd, out) : fd_inode(dirfd, out);
    }
    int r = path[0] == '/' ? 0 : base_dir(dirfd, &base);
    if (r) {
        return r;
    }
    r = vfs_lookup(path[0] == '/' ? vfs_root : base, path, !(flags & AT_SYMLINK_NOFOLLOW), out);
    if (path[0] != '/') {
        inode_put(base);
    }
    return r;
}

static long stat_out(struct inode *ino, uint64_t ubuf)
{
    struct stat_k st;
    fill_stat(ino, &st);
    inode_put(ino);
    return copy_to_user(current_vm(), ubuf, &st, sizeof(st)) ? -EFAULT : 0;
}

long sys_newfstatat(struct trap_frame *f)
{
    struct inode *ino;
    int r = stat_target((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                        (unsigned)arch_frame_arg(f, 3), &ino);
    return r ? r : stat_out(ino, arch_frame_arg(f, 2));
}

long sys_fstat(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    if (!file) {
        return -EBADF;
    }
    struct stat_k st;
    memset(&st, 0, sizeof(st));
    if (file->inode) {
        fill_stat(file->inode, &st);
    }
    file_put(file);
    return copy_to_user(current_vm(), arch_frame_arg(f, 1), &st, sizeof(st)) ? -EFAULT : 0;
}

struct statx_ts {
    int64_t sec;
    uint32_t nsec;
    int32_t reserved;
};

struct statx_k {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, spare0;
    uint64_t ino, size, blocks, attributes_mask;
    struct statx_ts atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};
_Static_assert(sizeof(struct statx_k) == 256, "Linux's struct statx");

#define STATX_BASIC_STATS 0x7ff

long sys_statx(struct trap_frame *f)
{
    struct inode *ino;
    int r = stat_target((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                        (unsigned)arch_frame_arg(f, 2), &ino);
    if (r) {
        return r;
    }
    struct stat_k st;
    fill_stat(ino, &st);
    inode_put(ino);
    struct statx_k sx;
    memset(&sx, 0, sizeof(sx));
    sx.mask = STATX_BASIC_STATS;
    sx.blksize = (uint32_t)st.blksize;
    sx.nlink = st.nlink;
    sx.uid = st.uid;
    sx.gid = st.gid;
    sx.mode = (uint16_t)st.mode;
    sx.ino = st.ino;
    sx.size = (uint64_t)st.size;
    sx.blocks = (uint64_t)st.blocks;
    sx.atime = sx.ctime = sx.mtime = (struct statx_ts){st.mtime, (uint32_t)st.mtime_ns, 0};
    sx.rdev_major = (uint32_t)(st.rdev >> 8);
    sx.rdev_minor = (uint32_t)(st.rdev & 0xff);
    sx.dev_minor = (uint32_t)st.dev;
    return copy_to_user(current_vm(), arch_frame_arg(f, 4), &sx, sizeof(sx)) ? -EFAULT : 0;
}

/* ---- directories ---- */

long sys_getdents64(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    uint64_t ubuf = arch_frame_arg(f, 1), room = arch_frame_arg(f, 2), used = 0;
    if (!file) {
        return -EBADF;
    }
    if (!file->inode || !S_ISDIR(file->inode->mode)) {
        file_put(file);
        return -ENOTDIR;
    }
    long r = 0;
    spin_lock(&file->lock);
    for (;;) {
        char rec[24 + VFS_NAME_MAX + 1 + 8];
        uint64_t ino;
        unsigned type;
        uint64_t next = file->pos;
        if (!(file->ops->readdir ? file->ops->readdir(file, &next, rec + 19, &ino, &type)
                                 : vfs_dir_entry(file->inode, &next, rec + 19, &ino, &type))) {
            break;
        }
        uint16_t reclen = (uint16_t)((19 + strlen(rec + 19) + 1 + 7) & ~7u);
        ASSERT(reclen <= sizeof(rec)); /* a name is at most VFS_NAME_MAX bytes */
        if (used + reclen > room) {
            r = used ? 0 : -EINVAL; /* the buffer cannot take even one entry */
            break;
        }
        memcpy(rec, &ino, 8);
        memcpy(rec + 8, &next, 8);
        memcpy(rec + 16, &reclen, 2);
        rec[18] = (char)type;
        memset(rec + 19 + strlen(rec + 19), 0, reclen - 19 - strlen(rec + 19));
        if (copy_to_user(current_vm(), ubuf + used, rec, reclen)) {
            r = -EFAULT;
            break;
        }
        used += reclen;
        file->pos = next;
    }
    spin_unlock(&file->lock);
    file_put(file);
    return r < 0 ? r : (long)used;
}

long sys_getcwd(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *cwd = proc_cwd_get(current()->proc);
    long len = vfs_path_of(cwd, path, sizeof(path));
    inode_put(cwd);
    if (len < 0) {
        return len;
    }
    if ((uint64_t)len + 1 > arch_frame_arg(f, 1)) {
        return -ERANGE;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 0), path, (size_t)len + 1) ? -EFAULT
                                                                                   : len + 1;
}

static long set_cwd(struct inode *dir)
{
    if (!S_ISDIR(dir->mode)) {
        inode_put(dir);
        return -ENOTDIR;
    }
    proc_set_cwd(current()->proc, dir);
    return 0;
}

long sys_chdir(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *dir;
    long r = get_path(arch_frame_arg(f, 0), path);
    if (r < 0) {
        return r;
    }
    struct inode *cwd = proc_cwd_get(current()->proc);
    r = vfs_lookup(cwd, path, true, &dir);
    inode_put(cwd);
    return r ? r : set_cwd(dir);
}

long sys_fchdir(struct trap_frame *f)
{
    struct inode *dir;
    int r = base_dir((int)arch_frame_arg(f, 0), &dir);
    return r ? r : set_cwd(dir);
}

long sys_umask(struct trap_frame *f)
{
    return (long)__atomic_exchange_n(&current()->proc->umask, (unsigned)arch_frame_arg(f, 0) & 0777,
                                     __ATOMIC_RELAXED);
}

long sys_mkdirat(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *base;
    int r = path_and_base((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), path, &base);
    if (r) {
        return r;
    }
    r = vfs_mkdir(base, path, (unsigned)arch_frame_arg(f, 2));
    inode_put(base);
    return r;
}

long sys_unlinkat(struct trap_frame *f)
{
    char path[VFS_PATH_MAX];
    struct inode *base;
    unsigned flags = (unsigned)arch_frame_arg(f, 2);
    if (flags & ~(unsigned)AT_REMOVEDIR) {
        return -EINVAL;
    }
    int r = path_and_base((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), path, &base);
    if (r) {
        return r;
    }
    r = vfs_unlink(base, path, flags & AT_REMOVEDIR);
    inode_put(base);
    return r;
}

static long do_rename(int olddir, uint64_t uold, int newdir, uint64_t unew, unsigned flags)
{
    char from[VFS_PATH_MAX], to[VFS_PATH_MAX];
    struct inode *fb, *tb, *exists;
    if (flags & ~(unsigned)RENAME_NOREPLACE) {
        return -EINVAL;
    }
    int r = path_and_base(olddir, uold, from, &fb);
    if (r) {
        return r;
    }
    r = path_and_base(newdir, unew, to, &tb);
    if (r) {
        inode_put(fb);
        return r;
    }
    if ((flags & RENAME_NOREPLACE) && vfs_lookup(tb, to, false, &exists) == 0) {
        inode_put(exists);
        r = -EEXIST;
    }
    if (r == 0) {
        r = vfs_rename(fb, from, tb, to);
    }
    inode_put(fb);
    inode_put(tb);
    return r;
}

long sys_renameat(struct trap_frame *f)
{
    return do_rename((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), (int)arch_frame_arg(f, 2),
                     arch_frame_arg(f, 3), 0);
}

long sys_renameat2(struct trap_frame *f)
{
    return do_rename((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), (int)arch_frame_arg(f, 2),
                     arch_frame_arg(f, 3), (unsigned)arch_frame_arg(f, 4));
}

long sys_readlinkat(struct trap_frame *f)
{
    char path[VFS_PATH_MAX], target[VFS_PATH_MAX];
    struct inode *base, *ino;
    if ((int64_t)arch_frame_arg(f, 3) <= 0) {
        return -EINVAL;
    }
    int r = path_and_base((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), path, &base);
    if (r) {
        return r;
    }
    r = vfs_lookup(base, path, false, &ino);
    inode_put(base);
    if (r) {
        return r;
    }
    long n = vfs_readlink(ino, target, MIN(sizeof(target), arch_frame_arg(f, 3)));
    inode_put(ino);
    if (n < 0) {
        return n;
    }
    return copy_to_user(current_vm(), arch_frame_arg(f, 2), target, (size_t)n) ? -EFAULT : n;
}

static long access_check(struct inode *ino, int mode)
{
    if ((mode & W_OK) &&
        (ino->kind == INODE_INITRD_FILE || (S_ISDIR(ino->mode) && !ino->writable_dir))) {
        return -EROFS;
    }
    if ((mode & X_OK) && !S_ISDIR(ino->mode) && !(ino->mode & 0111)) {
        return -EACCES;
    }
    return 0;
}

static long do_faccessat(int dirfd, uint64_t upath, int mode, unsigned flags)
{
    struct inode *ino;
    if ((mode & ~7) || (flags & ~(unsigned)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))) {
        return -EINVAL;
    }
    int r = stat_target(dirfd, upath, flags & ~(unsigned)AT_EACCESS, &ino);
    if (r) {
        return r;
    }
    r = (int)access_check(ino, mode);
    inode_put(ino);
    return r;
}

long sys_faccessat(struct trap_frame *f)
{
    return do_faccessat((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), (int)arch_frame_arg(f, 2),
                        0);
}

long sys_faccessat2(struct trap_frame *f)
{
    return do_faccessat((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), (int)arch_frame_arg(f, 2),
                        (unsigned)arch_frame_arg(f, 3));
}

long sys_ftruncate(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    int64_t len = (int64_t)arch_frame_arg(f, 1);
    if (!file) {
        return -EBADF;
    }
    long r = len < 0                                                 ? -EINVAL
             : !file->inode || file->inode->kind != INODE_TMPFS_FILE ? -EINVAL
             : (file->flags & O_ACCMODE) == O_RDONLY                 ? -EBADF
                                                                     : 0;
    if (r == 0) {
        spin_lock(&vfs_lock);
        r = tmpfs_truncate_locked(file->inode, (uint64_t)len);
        spin_unlock(&vfs_lock);
    }
    file_put(file);
    return r;
}

#define UTIME_NOW  ((1l << 30) - 1l)
#define UTIME_OMIT ((1l << 30) - 2l)

/* utimensat: only the modification time is kept (atime reads as mtime). */
long sys_utimensat(struct trap_frame *f)
{
    struct timespec_k ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    struct inode *ino;
    if (arch_frame_arg(f, 2) &&
        copy_from_user(current_vm(), ts, arch_frame_arg(f, 2), sizeof(ts))) {
        return -EFAULT;
    }
    for (int i = 0; i < 2; i++) {
        bool special = ts[i].nsec == UTIME_NOW || ts[i].nsec == UTIME_OMIT;
        if (!special && !timespec_is_valid(&ts[i])) {
            return -EINVAL; /* the one rule (cycles.h); times before boot cannot be kept */
        }
    }
    int r = arch_frame_arg(f, 1) ? stat_target((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1),
                                               (unsigned)arch_frame_arg(f, 3), &ino)
                                 : fd_inode((int)arch_frame_arg(f, 0), &ino);
    if (r) {
        return r;
    }
    if (ino->kind == INODE_INITRD_FILE || (S_ISDIR(ino->mode) && !ino->writable_dir)) {
        r = -EROFS;
    } else if (ts[1].nsec != UTIME_OMIT) {
        ino->mtime_ns = ts[1].nsec == UTIME_NOW ? vfs_now_ns() : timespec_to_ns(&ts[1]);
    }
    inode_put(ino);
    return r;
}

long sys_symlinkat(struct trap_frame *f)
{
    char target[VFS_PATH_MAX], path[VFS_PATH_MAX];
    struct inode *base;
    long r = get_path(arch_frame_arg(f, 0), target);
    if (r < 0) {
        return r;
    }
    r = path_and_base((int)arch_frame_arg(f, 1), arch_frame_arg(f, 2), path, &base);
    if (r) {
        return r;
    }
    r = vfs_symlink(base, target, path);
    inode_put(base);
    return r;
}

long sys_fchmodat(struct trap_frame *f)
{
    struct inode *ino;
    int r = stat_target((int)arch_frame_arg(f, 0), arch_frame_arg(f, 1), 0, &ino);
    if (r) {
        return r;
    }
    r = vfs_chmod(ino, (unsigned)arch_frame_arg(f, 2));
    inode_put(ino);
    return r;
}

long sys_fchmod(struct trap_frame *f)
{
    struct inode *ino;
    int r = fd_inode((int)arch_frame_arg(f, 0), &ino);
    if (r) {
        return r;
    }
    r = vfs_chmod(ino, (unsigned)arch_frame_arg(f, 1));
    inode_put(ino);
    return r;
}

long sys_fsync(struct trap_frame *f)
{
    struct file *file = fd_get((int)arch_frame_arg(f, 0));
    if (!file) {
        return -EBADF;
    }
    file_put(file);
    return 0; /* everything is in memory already */
}

int fs_at_path(int dirfd, uint64_t upath, char *path, struct inode **base)
{
    return path_and_base(dirfd, upath, path, base);
}
