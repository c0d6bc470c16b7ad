/* SPDX-License-Identifier: MIT */
/*
 * vfs.h — the file system tree, files and their operations.
 *
 * One tree of inodes in memory, built at boot:
 *   /            the initrd (read-only): directories, files whose bytes stay in the kernel
 *                image, symbolic links; every directory the archive names
 *   /tmp         a RAM file system (kernel/fs/tmpfs.c): files, directories, rename, unlink;
 *                bounded to TMPFS_MAX_PAGES pages in all (-ENOSPC past it), every page
 *                returned when a file is truncated or its last reference goes
 *   /dev         null, zero, console and tty (the console, kernel/fs/tty.c)
 *   /dev/shm     a RAM directory like /tmp, sharing its bound (POSIX shared memory)
 *   /proc/self/exe  a link to the calling process's program (busybox re-executes itself so)
 *   /proc, /sys  read-only synthetic files (INODE_SYNTH, kernel/fs/synth.h): processes,
 *                CPUs, memory and the kernel's counters as Linux formats them
 * No hard links, no mount table, a single user (root; permission bits are stored and shown,
 * changed by chmod under /tmp only; writing the initrd is refused, and running a file needs
 * an x bit).  Symbolic links come from the initrd or are made under /tmp.
 *
 * Lifetime: an inode is referenced by its place in the tree and by every open file and
 * lookup holding it (refs); it is freed, with its data, when it has left the tree and the
 * last reference is dropped.  A struct file is shared by every descriptor dup'ed or
 * inherited from the same open (refs) and holds one inode reference; a mapping of a file
 * holds one too (kernel/fs/filemap.c), whatever happens to the descriptor.
 *
 * Locks: vfs_lock (one spinlock) guards the tree (children lists, names, parents), tmpfs file
 * data and sizes; a file's `lock` guards its position across a positioned read or write.  Both
 * are taken with interrupts enabled: no interrupt handler takes them, and they rank below every
 * lock one does (lockrank.h), so the work under them — a lookup of up to VFS_WALK_MAX_STEPS
 * components, a scan of a directory, a copy of up to TMPFS_MAX_PAGES pages — never masks
 * interrupts, however large user input makes it.  Nothing sleeps while holding them.  Order:
 * file->lock -> vfs_lock -> proc_lock -> a vm's lock (user copies are made with it held, a
 * page at a time).  File operations on devices and pipes take their own locks instead and
 * never vfs_lock.
 */
#ifndef ZT_KERNEL_VFS_H
#define ZT_KERNEL_VFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/list.h"
#include "kernel/spinlock.h"
#include "kernel/vm.h"

#define VFS_NAME_MAX    63    /* bytes of one path component */
#define VFS_PATH_MAX    256   /* bytes of a path, NUL included */
#define VFS_LINK_MAX    8     /* symbolic links nested in one lookup (-ELOOP past) */
#define VFS_LINKS_MAX   40    /* symbolic links followed in one lookup, nested or not (-ELOOP) */
#define TMPFS_MAX_PAGES 2048u /* 8 MiB for all of /tmp */
#define VFS_WALK_MAX_STEPS                                                                         \
    ((VFS_LINKS_MAX + 1) * (VFS_PATH_MAX / 2)) /* components a lookup                              \
                                              may walk (5,248) */

/* st_mode type bits (Linux values). */
#define S_IFMT     0170000
#define S_IFIFO    0010000
#define S_IFCHR    0020000
#define S_IFDIR    0040000
#define S_IFREG    0100000
#define S_IFLNK    0120000
#define S_ISDIR(m) (((m)&S_IFMT) == S_IFDIR)
#define S_ISREG(m) (((m)&S_IFMT) == S_IFREG)
#define S_ISLNK(m) (((m)&S_IFMT) == S_IFLNK)

/* open flags (Linux/aarch64 values). */
#define O_ACCMODE   3
#define O_RDONLY    0
#define O_WRONLY    1
#define O_RDWR      2
#define O_CREAT     0100
#define O_EXCL      0200
#define O_NOCTTY    0400
#define O_TRUNC     01000
#define O_APPEND    02000
#define O_NONBLOCK  04000
#define O_DIRECTORY 040000
#define O_NOFOLLOW  0100000
#define O_LARGEFILE 0400000
#define O_CLOEXEC   02000000
#define O_PATH      010000000

/* poll bits */
#define POLLIN   0x001
#define POLLPRI  0x002
#define POLLOUT  0x004
#define POLLERR  0x008
#define POLLHUP  0x010
#define POLLNVAL 0x020

struct file;
struct inode;
struct synth_ops;

/* What a file does.  read/write copy to/from user memory of the current process and return
 * bytes or -errno; *pos is the file position to use and advance (NULL: the object has none,
 * pipes and devices).  poll returns POLL* bits without sleeping.  Any may be NULL. */
struct file_ops {
    long (*read)(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos);
    long (*write)(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos);
    long (*ioctl)(struct file *f, unsigned long req, uint64_t arg);
    unsigned (*poll)(struct file *f);
    void (*release)(struct file *f); /* the last reference is gone */
    /* Directories that list themselves (synthetic ones): as vfs_dir_entry, from the file. */
    int (*readdir)(struct file *f, uint64_t *pos, char *name, uint64_t *ino, unsigned *type);
};

enum inode_kind {
    INODE_INITRD_FILE, /* bytes at `data` in the kernel image */
    INODE_TMPFS_FILE,  /* bytes in `pages` */
    INODE_DIR,
    INODE_SYMLINK, /* target in `data` */
    INODE_SYNTH,   /* /proc and /sys: file, directory or link as `synth` says (synth.h) */
    INODE_DEVICE,  /* fops from devfs */
    INODE_PIPE,    /* not in the tree: pipe2's ends */
};

struct inode {
    enum inode_kind kind;
    unsigned mode; /* S_IF* | permission bits */
    uint64_t ino;
    int refs;          /* the tree's link + lookups and open files (atomic) */
    bool in_tree;      /* linked under parent */
    bool writable_dir; /* a directory of /tmp: entries may be created and removed */
    uint32_t rdev;     /* devices: major << 8 | minor */
    uint32_t dev;      /* the file system it is on (st_dev; mounts.c), its directory's */
    uint32_t uid, gid; /* owner (0, root, unless chown gave /tmp files others: owner.c) */
    uint64_t size;
    uint64_t mtime_ns; /* wall time (CLOCK_REALTIME) */
    char name[VFS_NAME_MAX + 1];
    struct inode *parent;
    struct list children; /* directories: entries in creation order, so in dir_pos order */
    struct list sibling;  /* in parent->children */
    uint64_t dir_pos;     /* its position in parent (getdents64), never reused there */
    uint64_t next_pos;    /* directories: the position the next entry gets (from 2) */
    const struct file_ops *fops;
    const void *data;       /* initrd files and symlinks */
    void *pages;            /* tmpfs files: the top table of their data pages (tmpfs.c) */
    uint64_t pages_end;     /* tmpfs files: one past the highest data page that exists */
    bool anon;              /* tmpfs files: anonymous shared memory, not in /tmp's bound */
    int maps;               /* tmpfs files: shared mappings of its pages (vfs_lock: 0 <-> 1) */
    struct vm_object vmobj; /* what a mapping of this file holds (filemap.c) */
    const struct synth_ops *synth; /* synthetic inodes: what they do, and their */
    int synth_a, synth_b;          /* numbers (a pid and a tid, a CPU, ...: synth.h) */
};

struct file {
    int refs;        /* descriptors and in-flight calls (atomic) */
    unsigned flags;  /* O_ACCMODE | O_APPEND | O_NONBLOCK */
    spinlock_t lock; /* pos */
    uint64_t pos;
    struct inode *inode;
    const struct file_ops *ops;
    void *priv; /* pipes: the pipe */
};

extern spinlock_t vfs_lock;

/* Boot: build the tree from the initrd, /tmp, /dev and /proc. */
void vfs_init(void);

/* Resolve `path` relative to `cwd` (absolute paths from the root).  follow: follow a final
 * symbolic link.  Returns 0 with a referenced inode in *out, or -ENOENT, -ENOTDIR, -ELOOP,
 * -ENAMETOOLONG, -EINVAL (empty path), -EINTR (the caller has a fatal signal: it dies on its
 * way out).  Bounded: at most VFS_LINKS_MAX links, so at most (VFS_LINKS_MAX + 1) paths of
 * VFS_PATH_MAX / 2 components each (VFS_WALK_MAX_STEPS), with a look for a fatal signal
 * before every component. */
int vfs_lookup(struct inode *cwd, const char *path, bool follow, struct inode **out);
/* Resolve all but the last component: the referenced parent directory and the last name
 * (copied to last[VFS_NAME_MAX + 1]; "" for "/").  Trailing slashes are dropped, and
 * *must_be_dir says one was there. */
int vfs_lookup_parent(struct inode *cwd, const char *path, struct inode **dir, char *last,
                      bool *must_be_dir);

void inode_get(struct inode *ino);
void inode_put(struct inode *ino);

/* Open an inode: a new file with one reference.  Checks the access mode against the inode
 * (directories read-only, initrd files read-only: -EISDIR/-EROFS/-EACCES); O_TRUNC empties
 * a tmpfs file.  -ENOMEM. */
int vfs_open_inode(struct inode *ino, unsigned flags, struct file **out);
/* open(at cwd, path, flags, mode) with O_CREAT/O_EXCL/O_DIRECTORY/O_NOFOLLOW. */
int vfs_open(struct inode *cwd, const char *path, unsigned flags, unsigned mode, struct file **out);
/* A file over a pipe end or another object outside the tree. */
struct file *file_alloc(struct inode *ino, const struct file_ops *ops, unsigned flags, void *priv);
void file_get(struct file *f);
void file_put(struct file *f);

/* Directory changes (tmpfs directories only; -EROFS elsewhere). */
int vfs_mkdir(struct inode *cwd, const char *path, unsigned mode);
int vfs_unlink(struct inode *cwd, const char *path, bool dir);
int vfs_rename(struct inode *fcwd, const char *from, struct inode *tcwd, const char *to);
/* A symbolic link at `path` to `target` (in a /tmp directory). */
int vfs_symlink(struct inode *cwd, const char *target, const char *path);
/* Set the permission bits of a /tmp file or directory (-EROFS elsewhere). */
int vfs_chmod(struct inode *ino, unsigned mode);

/* Read a symbolic link's target into buf (not NUL-terminated); the length or -EINVAL. */
long vfs_readlink(struct inode *ino, char *buf, size_t n);
/* The entry of dir at position *pos or the first after it ("." and ".." first, at 0 and 1):
 * 1, its name/ino/type, and *pos moved past it; or 0 past the end.  Positions stay good
 * while entries come and go (getdents64's d_off and the file offset are positions). */
int vfs_dir_entry(struct inode *dir, uint64_t *pos, char *name, uint64_t *ino, unsigned *type);
/* The absolute path of a directory into buf[n]; length or -ERANGE. */
long vfs_path_of(struct inode *dir, char *buf, size_t n);
/* The bytes of a regular initrd file, for exec: 0 and *data and *size, or -EACCES. */
int vfs_file_bytes(struct inode *ino, const void **data, uint64_t *size);
/* Copy n bytes at off of a regular file (the initrd's or /tmp's) into the kernel buffer buf:
 * 0, -EIO if they are not all inside the file (now), -EACCES for anything else.  A /tmp file
 * is read a page at a time, vfs_lock taken for each. */
int vfs_read_kernel(struct inode *ino, uint64_t off, void *buf, size_t n);

/* Internal to kernel/fs: a new detached inode (one reference) and linking it into dir. */
struct inode *inode_new(enum inode_kind kind, unsigned mode);
void vfs_link_locked(struct inode *dir, struct inode *child, const char *name);
struct inode *vfs_child_locked(struct inode *dir, const char *name);
extern struct inode *vfs_root;
extern const struct file_ops ro_file_ops, dir_ops;
uint64_t vfs_now_ns(void);
/* The caller's file-creation mask (022 outside a process). */
unsigned vfs_umask(void);
/* The start of every *at call (fs_sys.c): the user's path copied into path[VFS_PATH_MAX] and
 * the directory it is relative to (dirfd, AT_FDCWD, or the root for an absolute path),
 * referenced.  0, -EFAULT, -ENAMETOOLONG, -EBADF, -ENOTDIR. */
int fs_at_path(int dirfd, uint64_t upath, char *path, struct inode **base);

/* tmpfs (kernel/fs/tmpfs.c) */
extern const struct file_ops tmpfs_file_ops;
int tmpfs_truncate_locked(struct inode *ino, uint64_t size);
int tmpfs_read_kernel(struct inode *ino, uint64_t off, void *buf, size_t n);
/* Page i of ino for a shared mapping, made (zeroed) if it does not exist yet, even past the
 * size: 0 and *pa, or -ENOSPC (lock held; ino->maps already counts the mapping). */
int tmpfs_map_page_locked(struct inode *ino, uint64_t i, paddr_t *pa);
/* The last shared mapping of ino is gone: the pages past its size go back (lock held). */
void tmpfs_unmapped_locked(struct inode *ino);
void tmpfs_free_data(struct inode *ino);
unsigned tmpfs_pages_used(void);

/* devfs (kernel/fs/devfs.c): populate /dev. */
void devfs_init(struct inode *dev);
/* The console file every first process gets as 0, 1 and 2. */
int devfs_open_console(struct file **out);

#endif
